package gcp

import (
	"context"
	"slices"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/fleet"
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
// attached to a VM (a compact placement policy, with an instance schedule
// beside it on one VM) are listed as its placementGroups, the same path on
// every host of the policy.
func TestResourcePoliciesListed(t *testing.T) {
	mk := func(id string, pgs ...string) fleet.Instance {
		return fleet.Instance{ID: id, Provider: fleet.GCP, Account: testProject, Region: "us-east1", Zone: "us-east1-c", InstanceType: "n1-standard-8",
			GPU: fleet.GPU{Model: "T4", Count: 1}, Lifecycle: fleet.OnDemand, State: fleet.Running, PlacementGroups: pgs}
	}
	f := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind, Instances: []fleet.Instance{
		mk("host-a", "compact-a3"), mk("host-b", "nightly", "compact-a3"), mk("alone"),
	}}
	s := sim.New(f, simOptions(t, f))
	p := newProvider(t, startSim(t, s), []string{"us-east1"})
	got, err := p.ListGPUInstances(context.Background(), providers.Scope{Provider: fleet.GCP, Account: testProject, Region: "us-east1"})
	if err != nil {
		t.Fatal(err)
	}
	pol := func(n string) string { return "projects/" + testProject + "/regions/us-east1/resourcePolicies/" + n }
	want := map[string][]string{"host-a": {pol("compact-a3")}, "host-b": {pol("nightly"), pol("compact-a3")}, "alone": nil}
	for _, in := range got {
		if w, ok := want[in.ID]; !ok || !slices.Equal(in.PlacementGroups, w) {
			t.Errorf("%s: placement %v, want %v", in.ID, in.PlacementGroups, w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("listed %d VMs, want %d", len(got), len(want))
	}
}
