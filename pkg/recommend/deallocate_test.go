package recommend

import (
	"strings"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// A machine stopped but still allocated is billed for no work: whatever its
// utilization says (none, or stale busy figures), the advice is to
// deallocate it, saving its whole cost, with high confidence; no other rule
// touches it, and it raises no "no utilization" warning. A committed one
// saves nothing by it and gets a warning instead.
func TestStoppedAllocatedIsDeallocated(t *testing.T) {
	parked := func(id string, mods ...func(*fleet.Instance)) fleet.Instance {
		in := inst(id, "g5.xlarge", mods...)
		in.StoppedAllocated = true
		return in
	}
	busyStale := withUtil(agg(busy, busy, hostMid, hostMid))
	committed := func(in *fleet.Instance) { in.Lifecycle = fleet.Committed }
	p := run(t, parked("bare"), parked("stale", busyStale), parked("ri", committed), inst("running", "g5.xlarge", busyStale))
	recs := map[string][]Recommendation{}
	for _, r := range p.Recommendations {
		if r.Kind != KindTagging {
			recs[r.ResourceID] = append(recs[r.ResourceID], r)
		}
	}
	cost := map[string]string{}
	for _, ic := range p.Instances {
		cost[ic.ResourceID] = ic.MonthlyCost.StringFixed(2)
	}
	for _, id := range []string{"bare", "stale"} {
		rs := recs[id]
		if len(rs) != 1 || rs[0].Kind != KindIdleStop || rs[0].Target != "deallocated" || rs[0].Confidence != High {
			t.Fatalf("%s: %+v, want one deallocate recommendation with high confidence", id, rs)
		}
		if !rs[0].MonthlySavings.Equal(rs[0].CurrentMonthly) || rs[0].CurrentMonthly.StringFixed(2) != cost[id] || !rs[0].CurrentMonthly.IsPositive() {
			t.Errorf("%s: saves %s of %s (instance cost %s), want all of it", id, rs[0].MonthlySavings, rs[0].CurrentMonthly, cost[id])
		}
	}
	if len(recs["ri"]) != 0 {
		t.Errorf("committed: %+v, want no recommendation", recs["ri"])
	}
	for _, r := range recs["running"] {
		if r.Target == "deallocated" {
			t.Errorf("a running machine was told to deallocate: %+v", r)
		}
	}
	warned := map[string]string{}
	for _, w := range p.Warnings {
		warned[w.ResourceID+" "+w.Code] = w.Message
	}
	if _, ok := warned["bare "+WarnNoUtilization]; ok {
		t.Error("no-utilization warning for a machine known to be stopped")
	}
	if _, ok := warned["ri "+WarnIdleCommitted]; !ok {
		t.Errorf("no idle-committed warning for the committed machine: %v", warned)
	}
}

// A stopped-but-allocated machine owned by a controller is advised through
// its owner, never deallocated directly (as idle-stop skips it, managed).
func TestStoppedAllocatedOwnedIsShrunkThroughItsOwner(t *testing.T) {
	p := run(t, inst("owned", "g5.xlarge", func(in *fleet.Instance) {
		in.StoppedAllocated = true
		in.Tags["eks:nodegroup-name"] = "gpu"
	}))
	for _, r := range p.Recommendations {
		if r.ResourceID == "owned" && r.Kind == KindIdleStop {
			if !strings.HasPrefix(r.ShortAction, "shrink ") || !strings.Contains(r.Action, "Do not deallocate it directly") {
				t.Errorf("owned: %q %q, want advice through its owner", r.ShortAction, r.Action)
			}
			return
		}
	}
	t.Fatal("owned: no advice")
}

// Stopping or deallocating a machine with instance store (AWS instance
// store, Azure local NVMe, GCP local SSD) warns that its data is lost,
// once per machine; a machine without it gets no such note.
func TestInstanceStoreIsWarnedBeforeAStop(t *testing.T) {
	idle := withUtil(agg(idle, idle, idle, idle))
	store := func(in *fleet.Instance) { in.InstanceStoreGB = 900 }
	p := run(t,
		inst("idle-nvme", "g5.xlarge", idle, store),
		inst("parked-nvme", "g5.xlarge", store, func(in *fleet.Instance) { in.StoppedAllocated = true }),
		inst("idle-plain", "g5.xlarge", idle))
	notes := map[string]int{}
	seen := map[string]bool{}
	for _, r := range p.Recommendations {
		if r.Kind != KindIdleStop {
			continue
		}
		seen[r.ResourceID] = true
		for _, n := range r.RiskNotes {
			if strings.HasPrefix(n, "instance store:") {
				notes[r.ResourceID]++
				if !strings.Contains(n, "900 GB") {
					t.Errorf("%s: %q does not give the size", r.ResourceID, n)
				}
			}
		}
	}
	for id, want := range map[string]int{"idle-nvme": 1, "parked-nvme": 1, "idle-plain": 0} {
		if !seen[id] || notes[id] != want {
			t.Errorf("%s: advised %v, %d instance-store notes, want %d", id, seen[id], notes[id], want)
		}
	}
}
