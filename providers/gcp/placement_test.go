package gcp

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/protect"
	"github.com/gpufinops/gpufinops/providers"
	"github.com/gpufinops/gpufinops/providers/gcp/sim"
)

// TestPoliciesOf: a resource policy is its projects/… path whatever URL
// (v1, beta, a bare path) names it; blank entries are dropped.
func TestPoliciesOf(t *testing.T) {
	want := "projects/p/regions/us-east1/resourcePolicies/compact-1"
	for _, u := range []string{
		"https://www.googleapis.com/compute/v1/" + want,
		"https://compute.googleapis.com/compute/beta/" + want,
		want,
	} {
		if got := policiesOf([]string{u, " "}); !slices.Equal(got, []string{want}) {
			t.Errorf("%q: %v", u, got)
		}
	}
	if got := policiesOf(nil); got != nil {
		t.Errorf("no policies: %v", got)
	}
}

// TestResourcePoliciesListed: through the simulator, the resource policies
// attached to a VM are sorted by the kind resourcePolicies.aggregatedList
// gives them: a compact placement policy is a placementGroups entry, the
// same path on every host; an instance schedule beside it on one VM is a
// resourcePolicies entry. The project's policies are read once however
// many VMs name them.
func TestResourcePoliciesListed(t *testing.T) {
	f := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind, Instances: []fleet.Instance{
		policyVM("host-a", []string{"compact-a3"}, nil), policyVM("host-b", []string{"compact-a3"}, []string{"nightly"}), policyVM("alone", nil, nil),
	}}
	s := sim.New(f, simOptions(t, f))
	p := newProvider(t, startSim(t, s), []string{"us-east1"})
	got, err := p.ListGPUInstances(context.Background(), providers.Scope{Provider: fleet.GCP, Account: testProject, Region: "us-east1"})
	if err != nil {
		t.Fatal(err)
	}
	pol := func(n string) string { return "projects/" + testProject + "/regions/us-east1/resourcePolicies/" + n }
	want := map[string][2][]string{"host-a": {{pol("compact-a3")}, nil}, "host-b": {{pol("compact-a3")}, {pol("nightly")}}, "alone": {nil, nil}}
	for _, in := range got {
		if w, ok := want[in.ID]; !ok || !slices.Equal(in.PlacementGroups, w[0]) || !slices.Equal(in.ResourcePolicies, w[1]) {
			t.Errorf("%s: placement %v, other %v; want %v", in.ID, in.PlacementGroups, in.ResourcePolicies, w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("listed %d VMs, want %d", len(got), len(want))
	}
	if n := p.TakeScanNotes(); len(n) != 0 {
		t.Errorf("notes on a clean scan: %q", n)
	}
}

// policyVM is a T4 VM of the test project in us-east1 with the placement
// and other resource policies named.
func policyVM(id string, placement, other []string) fleet.Instance {
	return fleet.Instance{ID: id, Provider: fleet.GCP, Account: testProject, Region: "us-east1", Zone: "us-east1-c", InstanceType: "n1-standard-8",
		GPU: fleet.GPU{Model: "T4", Count: 1}, Lifecycle: fleet.OnDemand, State: fleet.Running, PlacementGroups: placement, ResourcePolicies: other}
}

// TestPolicyKindsProtect: an idle VM whose peer works, listed through the
// simulator and judged by protect: a shared compact placement policy keeps
// it (one multi-host group); a shared instance schedule does not (policies
// named in either spelling: a bare name, a projects/… path, a v1 URL).
// When resourcePolicies.aggregatedList is denied, every attached policy
// groups (fail-safe: the schedule's idle VM is kept) and the scan says so
// in one note for the project.
func TestPolicyKindsProtect(t *testing.T) {
	path := "projects/" + testProject + "/regions/us-east1/resourcePolicies/"
	for _, spelling := range []func(string) string{
		func(n string) string { return n },
		func(n string) string { return path + n },
		func(n string) string { return "https://www.googleapis.com/compute/v1/" + path + n },
	} {
		f := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind, Instances: []fleet.Instance{
			policyVM("sched-idle", nil, []string{spelling("nightly-stop")}), policyVM("sched-busy", nil, []string{spelling("nightly-stop")}),
			policyVM("compact-idle", []string{spelling("compact-a3")}, nil), policyVM("compact-busy", []string{spelling("compact-a3")}, []string{spelling("nightly-stop")}),
		}}
		for _, denied := range []bool{false, true} {
			opts := simOptions(t, f)
			if denied {
				opts.Fault = func(service, op, scope string) (int, string) {
					if op == "resourcePolicies.aggregatedList" {
						return http.StatusForbidden, "forbidden"
					}
					return 0, ""
				}
			}
			p := newProvider(t, startSim(t, sim.New(f, opts)), []string{"us-east1"})
			got, err := p.ListGPUInstances(context.Background(), providers.Scope{Provider: fleet.GCP, Account: testProject, Region: "us-east1"})
			if err != nil {
				t.Fatal(err)
			}
			kept := map[string]bool{}
			for _, pair := range [][2]string{{"sched-idle", "sched-busy"}, {"compact-idle", "compact-busy"}} {
				var insts []*fleet.Instance
				for _, id := range pair {
					for i := range got {
						if got[i].ID == id {
							insts = append(insts, &got[i])
						}
					}
				}
				if len(insts) != 2 {
					t.Fatalf("%v not listed", pair)
				}
				g := protect.NewPeers(insts, func(i int) bool { return i == 1 }, protect.DefaultPolicy())
				kept[pair[0]] = g.Check(0) != nil
			}
			if !kept["compact-idle"] {
				t.Errorf("%s, denied %v: the idle host of a working compact placement policy is not kept", spelling("x"), denied)
			}
			if kept["sched-idle"] != denied {
				t.Errorf("%s, denied %v: the idle VM of a shared instance schedule kept %v", spelling("x"), denied, kept["sched-idle"])
			}
			notes := p.TakeScanNotes()
			if denied && (len(notes) != 1 || !strings.Contains(notes[0], "resourcePolicies.aggregatedList")) {
				t.Errorf("denied: notes %q, want one naming resourcePolicies.aggregatedList", notes)
			}
			if !denied && len(notes) != 0 {
				t.Errorf("notes on a clean scan: %q", notes)
			}
		}
	}
}

// TestDoctorResourcePolicies: doctor checks compute.resourcePolicies.list
// with one call per project: ok when the listing answers, missing with the
// role's fix when it is denied.
func TestDoctorResourcePolicies(t *testing.T) {
	f := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind, Instances: []fleet.Instance{policyVM("host-a", []string{"compact-a3"}, nil)}}
	for _, denied := range []bool{false, true} {
		opts := simOptions(t, f)
		if denied {
			opts.Fault = func(service, op, scope string) (int, string) {
				if op == "resourcePolicies.aggregatedList" {
					return http.StatusForbidden, "forbidden"
				}
				return 0, ""
			}
		}
		p := newProvider(t, startSim(t, sim.New(f, opts)), nil)
		var got *providers.Check
		for _, c := range p.CheckPermissions(context.Background(), providers.Scope{Provider: fleet.GCP, Account: testProject}) {
			if c.Action == "compute.resourcePolicies.list" {
				got = &c
			}
		}
		switch {
		case got == nil:
			t.Fatalf("denied %v: no compute.resourcePolicies.list check", denied)
		case !denied && got.Status != providers.CheckOK:
			t.Errorf("check %+v, want ok", *got)
		case denied && (got.Status != providers.CheckMissing || got.Fix == ""):
			t.Errorf("denied: check %+v, want missing with a fix", *got)
		}
	}
}

// TestPlacementProperty: over random policy sets, kinds and spellings,
// placement keeps every attached policy exactly once, in order; a policy
// leaves placementGroups only when the project's listing was read and
// says it places nothing; a failed read keeps them all as placements.
func TestPlacementProperty(t *testing.T) {
	const project = "p1"
	prefixes := []string{"", "https://www.googleapis.com/compute/v1/", "https://compute.googleapis.com/compute/beta/"}
	for seed := range 500 {
		rng := rand.New(rand.NewPCG(uint64(seed), 34))
		kinds := policyKinds{}
		var urls, paths []string
		for i := range rng.IntN(6) {
			path := fmt.Sprintf("projects/%s/regions/r%d/resourcePolicies/pol-%d", project, rng.IntN(2), i)
			switch rng.IntN(3) {
			case 0:
				kinds[path] = true
			case 1:
				kinds[path] = false
			} // 2: the listing does not show it
			urls = append(urls, prefixes[rng.IntN(len(prefixes))]+path)
			paths = append(paths, path)
		}
		failed := rng.IntN(4) == 0
		p := &Provider{scan: newScan()}
		f := newFlight[policyKinds]()
		if failed {
			f.err = errors.New("denied")
		} else {
			f.val = kinds
		}
		close(f.done)
		p.scan.policies[project] = f
		groups, other, err := p.placement(context.Background(), project, urls)
		if err != nil {
			t.Fatal(err)
		}
		gi, oi := 0, 0
		for _, path := range paths {
			switch places, known := kinds[path]; {
			case failed || !known || places:
				if gi >= len(groups) || groups[gi] != path {
					t.Fatalf("seed %d: %s (known %v, places %v, failed %v) not next in placementGroups %v", seed, path, known, places, failed, groups)
				}
				gi++
			default:
				if oi >= len(other) || other[oi] != path {
					t.Fatalf("seed %d: schedule %s not next in resourcePolicies %v", seed, path, other)
				}
				oi++
			}
		}
		if gi != len(groups) || oi != len(other) {
			t.Fatalf("seed %d: extra entries: %v / %v", seed, groups, other)
		}
	}
}
