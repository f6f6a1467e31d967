package aws

import (
	"context"
	"strings"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers/aws/sim"
)

// Through the real SDK: Placement.GroupId becomes placementGroups, and a
// spot instance's request (DescribeSpotInstanceRequests) its
// spotInterruption: a persistent request's instance is stoppable and the
// simulator stops it; a one-time request's is not, and EC2 refuses to stop
// it.
func TestSimPlacementGroupsAndSpotRequests(t *testing.T) {
	mk := func(id string, lc fleet.Lifecycle, spot fleet.SpotInterruption, pgs ...string) fleet.Instance {
		return fleet.Instance{ID: id, Provider: fleet.AWS, Region: "us-east-1", InstanceType: "p4d.24xlarge", Lifecycle: lc, State: fleet.Running,
			SpotInterruption: spot, PlacementGroups: pgs}
	}
	f := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind, Instances: []fleet.Instance{
		mk("i-pg1", fleet.OnDemand, "", "hpc-cluster"),
		mk("i-pg2", fleet.OnDemand, "", "hpc-cluster"),
		mk("i-none", fleet.OnDemand, ""),
		mk("i-persistent", fleet.Spot, fleet.SpotStop, "spot-pg"),
		mk("i-onetime", fleet.Spot, fleet.SpotTerminate),
		mk("i-unknown", fleet.Spot, ""),
	}}
	srv, _ := scanSim(t, f, sim.Options{})
	p := scanProvider(t, srv.URL, "us-east-1")
	scope := scopeOf(t, p, "us-east-1")
	got, err := p.ListGPUInstances(context.Background(), scope)
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]fleet.Instance{}
	for _, in := range got {
		by[in.ID] = in
	}
	hpc := sim.PlacementGroupID("us-east-1", "hpc-cluster")
	want := map[string]struct {
		pg   string
		spot fleet.SpotInterruption
	}{
		"i-pg1": {hpc, ""}, "i-pg2": {hpc, ""}, "i-none": {"", ""},
		"i-persistent": {sim.PlacementGroupID("us-east-1", "spot-pg"), fleet.SpotStop}, "i-onetime": {"", fleet.SpotTerminate}, "i-unknown": {"", fleet.SpotTerminate},
	}
	for id, w := range want {
		in, ok := by[id]
		if !ok {
			t.Fatalf("%s not listed", id)
		}
		pg := ""
		if len(in.PlacementGroups) > 0 {
			pg = in.PlacementGroups[0]
		}
		if pg != w.pg || len(in.PlacementGroups) > 1 || in.SpotInterruption != w.spot {
			t.Errorf("%s: placement %v, spot %q; want %q, %q", id, in.PlacementGroups, in.SpotInterruption, w.pg, w.spot)
		}
	}
	if len(p.TakeScanNotes()) != 0 {
		t.Error("notes on a clean scan")
	}
	if _, err := p.Stop(context.Background(), scope, "i-persistent", false); err != nil {
		t.Errorf("a persistent request's spot instance: %v", err)
	}
	if _, err := p.Stop(context.Background(), scope, "i-onetime", false); err == nil {
		t.Error("EC2 stopped a one-time request's spot instance")
	}
}

// TestSimPlacementGroupIDIsTheKey: hosts of one placement group, one shown
// with its name and ID (the owner's view), one with its ID only (a group
// shared from another account), and one of a namesake group in another
// region: the first two get one key, the group's ID, so protect sees one
// group; the namesake another.
func TestSimPlacementGroupIDIsTheKey(t *testing.T) {
	id := sim.PlacementGroupID("us-east-1", "train-job")
	mk := func(id, region string, pgs ...string) fleet.Instance {
		return fleet.Instance{ID: id, Provider: fleet.AWS, Region: region, InstanceType: "p4d.24xlarge", Lifecycle: fleet.OnDemand, State: fleet.Running, PlacementGroups: pgs}
	}
	f := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind, Instances: []fleet.Instance{
		mk("i-named", "us-east-1", "train-job"),
		mk("i-shared", "us-east-1", " "+id+" "),
		mk("i-namesake", "us-west-2", "train-job"),
	}}
	srv, _ := scanSim(t, f, sim.Options{})
	p := scanProvider(t, srv.URL, "us-east-1", "us-west-2")
	keys := map[string]string{}
	for _, region := range []string{"us-east-1", "us-west-2"} {
		got, err := p.ListGPUInstances(context.Background(), scopeOf(t, p, region))
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range got {
			if len(in.PlacementGroups) != 1 {
				t.Fatalf("%s: placement %v", in.ID, in.PlacementGroups)
			}
			keys[in.ID] = in.PlacementGroups[0]
		}
	}
	if keys["i-named"] != id || keys["i-shared"] != id {
		t.Errorf("one group, keys %q and %q, want %q", keys["i-named"], keys["i-shared"], id)
	}
	if k := keys["i-namesake"]; k == id || !strings.HasPrefix(k, "pg-") {
		t.Errorf("namesake group in another region: key %q", k)
	}
}
