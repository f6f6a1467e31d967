package providers

import (
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
)

func TestCheckOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []Option
		want string
	}{
		{"fine", []Option{{Name: "profiles", Default: []string{}}, {Name: "timeout", Default: time.Second}}, ""},
		{"dashes", []Option{{Name: "role-arns", Default: []string{}}}, "snake_case"},
		{"upper case", []Option{{Name: "Profiles", Default: ""}}, "snake_case"},
		{"empty", []Option{{Default: ""}}, "snake_case"},
		{"twice", []Option{{Name: "x", Default: ""}, {Name: "x", Default: 1}}, "declared twice"},
		{"shadows a common option", []Option{{Name: OptRegions, Default: []string{}}}, "declared twice"},
		{"no type", []Option{{Name: "x"}}, "default of type <nil>"},
		{"unsupported type", []Option{{Name: "x", Default: 1.5}}, "default of type float64"},
	} {
		err := (&RegInfo{Name: "t", Options: tc.opts}).checkOptions()
		if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestDefaultsAndValidate(t *testing.T) {
	ri := &RegInfo{Name: "acme", Options: []Option{{Name: "profiles", Default: []string{"default"}}, {Name: "namespace", Default: "Agent"}}}
	d := ri.Defaults()
	want := Values{OptEndpoint: "", OptRegions: []string{}, OptConcurrency: 8, "profiles": []string{"default"}, "namespace": "Agent"}
	if !reflect.DeepEqual(d, want) {
		t.Fatalf("defaults %v, want %v", d, want)
	}
	d.Strings("profiles")[0] = "changed"
	if ri.Options[0].Default.([]string)[0] != "default" {
		t.Error("Defaults shares the declared list")
	}
	if err := ri.ValidateOptions(Values{OptConcurrency: 0}); err == nil || err.Error() != "providers.acme.concurrency: 0 is outside 1–64" {
		t.Errorf("concurrency 0: %v", err)
	}
	if err := ri.ValidateOptions(Values{"namespace": 3}); err == nil || !strings.Contains(err.Error(), "providers.acme.namespace: 3 is not a string") {
		t.Errorf("wrong type: %v", err)
	}
	if err := ri.ValidateOptions(ri.Defaults()); err != nil {
		t.Errorf("defaults: %v", err)
	}
	if v := (Values{}); v.String("x") != "" || v.Strings("x") != nil || v.Int("x") != 0 || v.Bool("x") || v.Duration("x") != 0 {
		t.Error("unset values are not zero")
	}
}

func TestFlagsOf(t *testing.T) {
	a := &RegInfo{Name: "a", Options: []Option{{Name: "profiles", Flag: "profile", Default: []string{}}, {Name: "quiet", Default: false}}}
	b := &RegInfo{Name: "b", Options: []Option{{Name: "accounts", Flag: "profile", Default: []string{}}, {Name: "tenant", Flag: "tenant", Default: ""}}}
	flags, err := flagsOf([]*RegInfo{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if len(flags) != 2 || flags[0].Option.Flag != "profile" || !reflect.DeepEqual(flags[0].Clouds, []string{"a", "b"}) || flags[1].Option.Flag != "tenant" {
		t.Errorf("flags %+v", flags)
	}
	c := &RegInfo{Name: "c", Options: []Option{{Name: "profile", Flag: "profile", Default: ""}}}
	if _, err := flagsOf([]*RegInfo{a, c}); err == nil || err.Error() != "--profile: a reads a strings, c a string" {
		t.Errorf("conflicting types: %v", err)
	}
}

func TestPurchasesOf(t *testing.T) {
	plans, payments, names := PurchasesOf([]*RegInfo{
		{Name: "a", Purchase: &Purchase{Plan: pricing.ComputeSavingsPlan, Payment: pricing.PayNoUpfront, Name: "plan"}},
		{Name: "b", Purchase: &Purchase{Plan: pricing.Reservation}},
		{Name: "c"},
	})
	if !reflect.DeepEqual(plans, map[string]string{"a": "compute-savings-plan", "b": "reservation"}) ||
		!reflect.DeepEqual(payments, map[string]string{"a": "no-upfront"}) || !reflect.DeepEqual(names, map[string]string{"a": "plan"}) {
		t.Errorf("plans %v, payments %v, names %v", plans, payments, names)
	}
}

// A registered cloud's owner rules reach fleet.DetectOwner, and a cloud
// without New is listed but cannot scan.
// registerRegtest registers the data-only cloud "regtest" once per process:
// the registry is global, and under -count=N the test runs N times.
var registerRegtest = sync.OnceFunc(func() {
	Register(&RegInfo{Name: "regtest", OwnerRules: []fleet.OwnerRule{{Provider: "regtest", Key: "regtest:pool", Kind: fleet.OwnerMIG}}})
})

func TestRegisterDataOnlyCloud(t *testing.T) {
	registerRegtest()
	if got := fleet.DetectOwner("i-1", map[string]string{"RegTest:Pool": "p1"}); got == nil || got.Kind != fleet.OwnerMIG || got.Name != "p1" {
		t.Errorf("owner %+v", got)
	}
	ri, ok := Find("regtest")
	if !ok || ri.CanScan() {
		t.Errorf("found %v, can scan %v", ok, ok && ri.CanScan())
	}
	for _, n := range Scannable() {
		if n == "regtest" {
			t.Error("a cloud without an adapter is scannable")
		}
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "declared twice") {
			t.Errorf("bad options: recovered %v", r)
		}
	}()
	Register(&RegInfo{Name: "regbad", Options: []Option{{Name: "x", Default: ""}, {Name: "x", Default: ""}}})
}
