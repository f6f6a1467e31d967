package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// placementFleet: on each cloud, an idle host of a placement construct
// (AWS placement group, Azure proximity placement group, GCP resource
// policy) whose other host works, and an idle host whose namesake group is
// in another region; AWS spot instances of a persistent request and of a
// one-time one; an Azure VM with local NVMe. Only ids starting "idle-" may
// be stopped.
func placementFleet() *fleet.Fleet {
	w := fleet.TimeRange{Start: demoEnd.Add(-7 * 24 * time.Hour), End: demoEnd}
	flat := func(gpu, mem, cpu float64) *fleet.Utilization {
		return &fleet.Utilization{Window: &w,
			GPU: &fleet.Stats{Avg: gpu, P95: gpu, Max: gpu}, GPUMemory: &fleet.Stats{Avg: mem, P95: mem, Max: mem},
			CPU: &fleet.Stats{Avg: cpu, P95: cpu, Max: cpu}, Memory: &fleet.Stats{Avg: 20, P95: 20, Max: 20}}
	}
	launched := demoEnd.Add(-30 * 24 * time.Hour)
	var out []fleet.Instance
	add := func(p fleet.Provider, account, id, typ string, busy bool, edit func(*fleet.Instance)) {
		in := fleet.Instance{ID: id, Provider: p, Account: account, InstanceType: typ, Lifecycle: fleet.OnDemand, State: fleet.Running,
			LaunchTime: &launched, Tags: map[string]string{"Environment": "dev"}, Utilization: flat(2, 5, 3)}
		switch p {
		case fleet.AWS:
			in.Region, in.Zone = "us-east-1", "us-east-1a"
		case fleet.Azure:
			in.Region = "eastus"
		case fleet.GCP:
			in.Region, in.Zone = "us-central1", "us-central1-a"
		}
		if busy {
			in.Utilization = flat(85, 60, 40)
		}
		if edit != nil {
			edit(&in)
		}
		out = append(out, in)
	}
	pg := func(g string) func(*fleet.Instance) {
		return func(in *fleet.Instance) { in.PlacementGroups = []string{g} }
	}
	const awsA = "111122223333"
	const sub = "0b1f6471-1bf0-4dda-aec3-cb9272f09590"
	const project = "ml-platform-prod"
	// Hosts of a placement construct whose other host works: kept.
	add(fleet.AWS, awsA, "pg-idle-aws", "p3.2xlarge", false, pg("hpc-cluster"))
	add(fleet.AWS, awsA, "pg-busy-aws", "p3.2xlarge", true, pg("hpc-cluster"))
	add(fleet.Azure, sub, "pg-idle-azure", "Standard_NC4as_T4_v3", false, pg("ppg-train"))
	add(fleet.Azure, sub, "pg-busy-azure", "Standard_NC4as_T4_v3", true, pg("ppg-train"))
	add(fleet.GCP, project, "pg-idle-gcp", "g2-standard-8", false, pg("compact-l4"))
	add(fleet.GCP, project, "pg-busy-gcp", "g2-standard-8", true, pg("compact-l4"))
	// The same group name in another region is another group: stopped.
	add(fleet.AWS, awsA, "idle-aws-other-region", "p3.2xlarge", false, func(in *fleet.Instance) {
		in.PlacementGroups, in.Region, in.Zone = []string{"hpc-cluster"}, "us-west-2", "us-west-2a"
	})
	// AWS spot: a persistent request's instance is stopped, a one-time
	// one's is not.
	add(fleet.AWS, awsA, "idle-aws-persistent-spot", "p3.2xlarge", false, func(in *fleet.Instance) {
		in.Lifecycle, in.SpotInterruption = fleet.Spot, fleet.SpotStop
	})
	add(fleet.AWS, awsA, "spot-aws-one-time", "p3.2xlarge", false, func(in *fleet.Instance) {
		in.Lifecycle, in.SpotInterruption = fleet.Spot, fleet.SpotTerminate
	})
	// An Azure VM with local NVMe: deallocated with the data-loss warning.
	add(fleet.Azure, sub, "idle-azure-nvme", "Standard_ND96isr_H100_v5", false, func(in *fleet.Instance) { in.InstanceStoreGB = 28000 })
	return &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind, Instances: out}
}

// Through the three clouds' simulators and their real SDKs: the adapters
// read the placement constructs, AWS spot requests and Azure NVMe; idle-stop
// --execute stops no idle host of a working placement group, stops the
// persistent spot instance but not the one-time one, deallocates the NVMe
// VM with the data-loss warning; analyze counts a stop saving for exactly
// the machines idle-stop stops.
func TestPlacementSpotAndNVMeOnThreeClouds(t *testing.T) {
	recs, r := analyzeThenIdleStop(t, placementFleet())
	stopped := map[string]bool{}
	for _, d := range r.Machines {
		switch {
		case d.Decision == "stop" && !strings.HasPrefix(d.ResourceID, "idle-"):
			t.Errorf("%s stopped (%s: %s)", d.ResourceID, d.Reason, d.Message)
		case d.Decision != "stop" && strings.HasPrefix(d.ResourceID, "idle-"):
			t.Errorf("%s: %s %s: %s, want a stop", d.ResourceID, d.Decision, d.Reason, d.Message)
		case strings.HasPrefix(d.ResourceID, "pg-idle-") && (d.Reason != "multi-host" || !strings.Contains(d.Message, "placement=")):
			t.Errorf("%s: %s: %s, want kept by its placement group", d.ResourceID, d.Reason, d.Message)
		case d.ResourceID == "spot-aws-one-time" && d.Reason != "spot-not-stoppable":
			t.Errorf("%s: %s: %s, want kept as a one-time spot instance", d.ResourceID, d.Reason, d.Message)
		}
		if d.ResourceID == "idle-azure-nvme" && !strings.Contains(strings.Join(d.Warnings, " "), "local NVMe") {
			t.Errorf("%s: warnings %q, want the instance-store data-loss warning", d.ResourceID, d.Warnings)
		}
		if d.Decision == "stop" {
			stopped[d.ResourceID] = true
		}
	}
	if len(r.Machines) != len(placementFleet().Instances) {
		t.Errorf("%d machines decided, want %d", len(r.Machines), len(placementFleet().Instances))
	}
	counted := map[string]bool{}
	for _, rec := range recs {
		if rec.Kind == "idle-stop" && (rec.ShortAction == "stop" || rec.ShortAction == "deallocate") && rec.MonthlySavings > 0 {
			counted[rec.ResourceID] = true
		}
	}
	for _, in := range placementFleet().Instances {
		if stopped[in.ID] != counted[in.ID] {
			t.Errorf("%s: idle-stop stops it %v, analyze counts a stop saving %v", in.ID, stopped[in.ID], counted[in.ID])
		}
	}
}
