package recommend

import (
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
