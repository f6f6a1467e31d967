package simcat

import (
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers/simkit"
)

func TestAccounts(t *testing.T) {
	mk := func(accounts ...string) *fleet.Fleet {
		f := &fleet.Fleet{}
		for i, a := range accounts {
			f.Instances = append(f.Instances, fleet.Instance{ID: strconv.Itoa(i), Provider: fleet.AWS, Account: a})
		}
		f.Instances = append(f.Instances, fleet.Instance{ID: "gcp", Provider: fleet.GCP, Account: "my-project"})
		return f
	}
	for _, tc := range []struct {
		name         string
		fleet        *fleet.Fleet
		flag, caller string
		others       []string
	}{
		{"none named", mk("", ""), "", DefaultAccount, nil},
		{"one", mk("111122223333", ""), "", "111122223333", nil},
		{"most common", mk("444455556666", "111122223333", "444455556666"), "", "444455556666", []string{"111122223333"}},
		{"tie: smallest", mk("444455556666", "111122223333"), "", "111122223333", []string{"444455556666"}},
		{"flag wins", mk("444455556666", "111122223333"), "999999999999", "999999999999", []string{"111122223333", "444455556666"}},
	} {
		caller, others := Accounts(tc.fleet, tc.flag)
		if caller != tc.caller || !reflect.DeepEqual(others, tc.others) {
			t.Errorf("%s: %s %v, want %s %v", tc.name, caller, others, tc.caller, tc.others)
		}
	}
}

func TestRegisteredSimulator(t *testing.T) {
	var reg *simkit.Simulator
	for _, s := range simkit.Registered() {
		if s.Name == "aws" {
			reg = &s
		}
	}
	if reg == nil || reg.Provider != fleet.AWS || reg.EndpointEnv != "AWS_ENDPOINT_URL" {
		t.Fatalf("the AWS simulator is not registered: %+v", reg)
	}
	kit, err := simkit.New(simkit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := &fleet.Fleet{Instances: []fleet.Instance{
		{ID: "i-1", Provider: fleet.AWS, Account: "111122223333", Region: "us-east-1", InstanceType: "g5.xlarge", State: fleet.Running},
		{ID: "i-2", Provider: fleet.AWS, Account: "444455556666", Region: "us-east-1", InstanceType: "g5.xlarge", State: fleet.Running},
	}}
	s, err := reg.Build(f, simkit.Env{Kit: kit})
	if err != nil {
		t.Fatal(err)
	}
	if st := s.State(); len(st) != 2 {
		t.Errorf("state %v", st)
	}
	if notes := s.Notes(); len(notes) != 1 || !strings.Contains(notes[0], "account 111122223333") || !strings.Contains(notes[0], "444455556666") {
		t.Errorf("notes %q", notes)
	}
	ec2 := httptest.NewRequest("POST", "/", strings.NewReader(""))
	if !s.Claims(ec2, []byte("Action=DescribeInstances&Version=2016-11-15")) {
		t.Error("an EC2 request is not claimed")
	}
	if s.Claims(httptest.NewRequest("GET", "/subscriptions/x/providers/Microsoft.Compute/virtualMachines", nil), nil) {
		t.Error("an Azure request is claimed")
	}
	// Its requests go through the shared kit.
	w := httptest.NewRecorder()
	s.ServeHTTP(w, httptest.NewRequest("POST", "/", strings.NewReader("Action=DescribeRegions&Version=2016-11-15")))
	if kit.Counts()["ec2"]["DescribeRegions"] != 1 {
		t.Errorf("the kit counted %v (status %d)", kit.Counts(), w.Code)
	}
}
