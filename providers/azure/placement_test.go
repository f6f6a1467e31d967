package azure

import (
	"context"
	"math"
	"net/http"
	"strings"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers"
	"github.com/gpufinops/gpufinops/providers/azure/sim"
)

// TestProximityPlacementGroupsAndNVMe: through the simulator (Resource
// Graph and the ARM listing alike), a VM's
// properties.proximityPlacementGroup.id is its placementGroups, and its
// size's NvmeDiskSizeInMiB capability (Resource SKUs) its instanceStoreGB,
// a size the catalog has included. When Resource SKUs fail and the catalog
// has every size, the VMs are listed without NVMe and the scan notes it.
func TestProximityPlacementGroupsAndNVMe(t *testing.T) {
	mk := func(id, size string, nvme float64, pgs ...string) fleet.Instance {
		return fleet.Instance{ID: id, Name: id, Provider: fleet.Azure, Account: subA, Region: "eastus", InstanceType: size,
			Lifecycle: fleet.OnDemand, State: fleet.Running, InstanceStoreGB: nvme, PlacementGroups: pgs}
	}
	f := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind, Instances: []fleet.Instance{
		mk("nd-a", "Standard_ND96isr_H100_v5", 28000, "ppg-train"),
		mk("nd-b", "Standard_ND96isr_H100_v5", 28000, "ppg-train"),
		mk("t4", "Standard_NC4as_T4_v3", 0),
	}}
	ppg := "/subscriptions/" + subA + "/resourceGroups/"
	for _, arm := range []bool{false, true} {
		var fault func(service, op, scope string) (int, string)
		if arm {
			fault = func(service, op, scope string) (int, string) {
				if service == "resourcegraph" {
					return http.StatusForbidden, "AuthorizationFailed"
				}
				return 0, ""
			}
		}
		srv, _ := testSim(t, f, sim.Options{Fault: fault})
		p := testProvider(t, srv.URL, providers.Options{Regions: []string{"eastus"}})
		got, err := p.ListGPUInstances(context.Background(), providers.Scope{Provider: fleet.Azure, Account: subA, Region: "eastus"})
		if err != nil {
			t.Fatalf("arm %v: %v", arm, err)
		}
		by := map[string]fleet.Instance{}
		for _, in := range got {
			by[in.ID] = in
		}
		for _, id := range []string{"nd-a", "nd-b"} {
			in := by[id]
			if len(in.PlacementGroups) != 1 || !strings.HasPrefix(in.PlacementGroups[0], ppg) || !strings.HasSuffix(in.PlacementGroups[0], "/providers/Microsoft.Compute/proximityPlacementGroups/ppg-train") {
				t.Errorf("arm %v: %s placement %v", arm, id, in.PlacementGroups)
			}
			if math.Abs(in.InstanceStoreGB-28000) > 1 {
				t.Errorf("arm %v: %s instanceStoreGB %v, want 28000", arm, id, in.InstanceStoreGB)
			}
		}
		if in := by["t4"]; in.PlacementGroups != nil || in.InstanceStoreGB != 0 {
			t.Errorf("arm %v: t4 %v, %v", arm, in.PlacementGroups, in.InstanceStoreGB)
		}
	}

	srv, _ := testSim(t, f, sim.Options{Fault: func(service, op, scope string) (int, string) {
		if op == "ListSKUs" {
			return http.StatusForbidden, "AuthorizationFailed"
		}
		return 0, ""
	}})
	p := testProvider(t, srv.URL, providers.Options{Regions: []string{"eastus"}})
	got, err := p.ListGPUInstances(context.Background(), providers.Scope{Provider: fleet.Azure, Account: subA, Region: "eastus"})
	if err != nil || len(got) != 3 {
		t.Fatalf("Resource SKUs failing: %d VMs, %v", len(got), err)
	}
	for _, in := range got {
		if in.InstanceStoreGB != 0 {
			t.Errorf("%s: instanceStoreGB %v without Resource SKUs", in.ID, in.InstanceStoreGB)
		}
	}
	if notes := p.TakeScanNotes(); len(notes) != 1 || !strings.Contains(notes[0], "NVMe") {
		t.Errorf("notes %q", notes)
	}
}
