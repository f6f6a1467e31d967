package aws

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers"
	"github.com/gpufinops/gpufinops/providers/aws/sim"
	"github.com/gpufinops/gpufinops/providers/providertest"
)

// commitmentsFleet is testdata/fleets/commitments.yaml.
func commitmentsFleet(t testing.TB) *fleet.Fleet {
	return providertest.ReadFleet(t, "../../testdata/fleets/commitments.yaml")
}

// activeHeld is what a scan of cloud must read back from f: its
// commitments in force at simNow, with the API each is read from, sorted
// as Collect sorts them.
func activeHeld(f *fleet.Fleet, cloud fleet.Provider, source func(fleet.Held) string) []fleet.Held {
	var out []fleet.Held
	for _, h := range f.Commitments {
		if h.Provider != cloud || (h.End != nil && !simNow.Before(*h.End)) || (h.Start != nil && simNow.Before(*h.Start)) {
			continue
		}
		h.Source = source(h)
		out = append(out, h)
	}
	return providers.SortHeld(out)
}

func awsSource(h fleet.Held) string {
	switch {
	case strings.HasSuffix(h.Kind, "reserved-instance"):
		return apiReservedInstances
	case strings.HasSuffix(h.Kind, "savings-plan"):
		return apiSavingsPlans
	}
	return apiCapacityReservations
}

// sameHeld fails t unless got and want are the same commitments, field by
// field (compared as JSON: decimals by value, times in UTC).
func sameHeld(t *testing.T, got, want []fleet.Held) {
	t.Helper()
	enc := func(hs []fleet.Held) []string {
		var out []string
		for _, h := range hs {
			b, _ := json.Marshal(h)
			out = append(out, string(b))
		}
		return out
	}
	g, w := enc(got), enc(want)
	for i := range max(len(g), len(w)) {
		switch {
		case i >= len(g):
			t.Errorf("missing %s", w[i])
		case i >= len(w):
			t.Errorf("extra %s", g[i])
		case g[i] != w[i]:
			t.Errorf("commitment %d:\n got %s\nwant %s", i, g[i], w[i])
		}
	}
}

// TestSimCommitments: the commitments of a fleet file, served by the
// simulator through EC2 and Savings Plans, are read back by a scan
// through the real SDK exactly (kinds, scope, counts, effective rates,
// dates), more than one page of Savings Plans and Capacity Reservations
// included, and the expired ones are not.
func TestSimCommitments(t *testing.T) {
	defer func(n int32) { commitmentPage = n }(commitmentPage)
	commitmentPage = 1 // every plan and reservation a page of its own
	f := commitmentsFleet(t)
	srv, s := scanSim(t, f, sim.Options{})
	p := scanProvider(t, srv.URL, "us-east-1", "us-west-2")
	res, err := providers.Collect(context.Background(), p, providers.CollectOptions{SkipPrices: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Failures) > 0 {
		t.Fatalf("failures: %v", res.Failures)
	}
	want := activeHeld(f, fleet.AWS, awsSource)
	if len(want) != 8 {
		t.Fatalf("the fixture has %d active AWS commitments, want 8", len(want))
	}
	sameHeld(t, res.Fleet.Commitments, want)
	counts := s.Counts()
	if n := counts["savingsplans"]["DescribeSavingsPlans"]; n < 3 {
		t.Errorf("DescribeSavingsPlans called %d times, want a page per active plan (3)", n)
	}
	if n := counts["ec2"]["DescribeCapacityReservations"]; n < 3 {
		t.Errorf("DescribeCapacityReservations called %d times, want more than one page in us-east-1", n)
	}
	if n := counts["ec2"]["DescribeReservedInstances"]; n != 2 {
		t.Errorf("DescribeReservedInstances called %d times, want one per region", n)
	}
}

// TestSimCommitmentsDenied: a commitment API the credentials may not call
// is a failure of that API alone: the instances and the other
// commitments are kept.
func TestSimCommitmentsDenied(t *testing.T) {
	f := commitmentsFleet(t)
	srv, _ := scanSim(t, f, sim.Options{Fault: func(service, op, region string) (int, string) {
		switch {
		case op == "DescribeSavingsPlans":
			return http.StatusBadRequest, "AccessDeniedException"
		case op == "DescribeReservedInstances" && region == "us-west-2":
			return http.StatusForbidden, "UnauthorizedOperation"
		}
		return 0, ""
	}})
	p := scanProvider(t, srv.URL, "us-east-1", "us-west-2")
	apis, kinds := providertest.CollectDenied(t, p, 2)
	if strings.Join(apis, ",") != " savingsplans:DescribeSavingsPlans,us-west-2 ec2:DescribeReservedInstances" {
		t.Errorf("failed APIs %v", apis)
	}
	if strings.Join(kinds, ",") != "us-east-1 capacity-block,us-east-1 capacity-reservation,us-east-1 standard-reserved-instance,us-west-2 convertible-reserved-instance" &&
		strings.Join(kinds, ",") != "us-east-1 capacity-block,us-east-1 capacity-reservation,us-east-1 standard-reserved-instance" {
		t.Errorf("kept commitments %v", kinds)
	}
}

// TestDoctorCommitments: doctor checks the three commitment permissions,
// with dry runs where EC2 has them, and names the one a role lacks.
func TestDoctorCommitments(t *testing.T) {
	f := commitmentsFleet(t)
	_, s := scanSim(t, f, sim.Options{Fault: func(service, op, region string) (int, string) {
		if op == "DescribeSavingsPlans" {
			return http.StatusBadRequest, "AccessDeniedException"
		}
		return 0, ""
	}})
	deny := httptest.NewServer(denyHandler(s, "DescribeCapacityReservations"))
	t.Cleanup(deny.Close)
	p := scanProvider(t, deny.URL, "us-east-1")
	want := map[string]providers.CheckStatus{
		apiReservedInstances: providers.CheckOK, apiCapacityReservations: providers.CheckMissing, apiSavingsPlans: providers.CheckMissing,
	}
	got := map[string]providers.Check{}
	for _, sc := range doctorScopes(t, p) {
		for a, c := range checksBy(p.CheckPermissions(context.Background(), sc)) {
			if _, ok := want[a]; ok {
				got[a] = c
			}
		}
	}
	for a, st := range want {
		c, ok := got[a]
		switch {
		case !ok:
			t.Errorf("%s not checked", a)
		case c.Status != st:
			t.Errorf("%s: %s (%s), want %s", a, c.Status, c.Detail, st)
		case st == providers.CheckMissing && !strings.Contains(c.Fix, a):
			t.Errorf("%s: fix %q does not name the permission", a, c.Fix)
		}
	}
	if got[apiReservedInstances].Method != "DryRun" {
		t.Errorf("DescribeReservedInstances checked by %q, want DryRun", got[apiReservedInstances].Method)
	}
}
