package idlestop

import (
	"strings"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// A powered-off Azure VM still allocated (billed as running) is deallocated
// with no metrics and no launch time, the power state being the evidence;
// the other protections still hold, a busy multi-host peer does not keep it
// (it does no work for the job), and its instance store is warned about once.
func TestStoppedAllocatedIsDeallocatedWithoutMetrics(t *testing.T) {
	parked := func(id string, mods ...func(*Candidate)) Candidate {
		return cand(id, append([]func(*Candidate){func(c *Candidate) {
			c.Instance.Provider, c.Instance.StoppedAllocated = fleet.Azure, true
			c.Instance.Utilization, c.Instance.LaunchTime = nil, nil
		}}, mods...)...)
	}
	busyPeer := cand("peer", withTag("job", "train-1"), func(c *Candidate) {
		c.Instance.Provider = fleet.Azure
		c.Instance.Utilization.Samples = samples(30, 90, 90)
	})
	cases := []struct {
		name string
		c    Candidate
		want Reason
	}{
		{"bare", parked("a"), ReasonStoppedAllocated},
		{"stale busy figures", parked("a", func(c *Candidate) {
			c.Instance.Utilization = &fleet.Utilization{Window: &fleet.TimeRange{Start: now.Add(-30 * time.Minute), End: now}, Samples: samples(30, 90)}
		}), ReasonStoppedAllocated},
		{"exempt", parked("a", withTag("do-not-stop", "true")), ReasonExempt},
		{"production", parked("a", withTag("Environment", "prod")), ReasonProduction},
		{"owned", parked("a", withTag("aks-managed-poolName", "gpu")), ReasonManaged},
		{"spot deleted on eviction", parked("a", func(c *Candidate) {
			c.Instance.Lifecycle, c.Instance.SpotInterruption = fleet.Spot, fleet.SpotDelete
		}), ReasonSpotNotStoppable},
		{"inference", parked("a", func(c *Candidate) { c.Instance.Workload = &fleet.Workload{Type: fleet.Inference} }), ReasonInference},
		{"peer of a busy job", parked("a", withTag("job", "train-1")), ReasonStoppedAllocated},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ds := Decide([]Candidate{tc.c, busyPeer}, now, DefaultPolicy())
			d := ds[0]
			if d.Reason != tc.want {
				t.Fatalf("%s (%s: %s), want %s", d.Decision, d.Reason, d.Message, tc.want)
			}
			if (d.Decision == Stop) != (tc.want == ReasonStoppedAllocated) {
				t.Fatalf("decision %s for %s", d.Decision, d.Reason)
			}
			if d.Decision == Stop && (!d.MonthlySavings.Decimal.IsPositive() || !strings.Contains(d.Message, "still allocated")) {
				t.Errorf("saving %s, message %q", d.MonthlySavings, d.Message)
			}
		})
	}
}

func TestInstanceStoreWarnedOnce(t *testing.T) {
	for _, c := range []Candidate{
		cand("idle", func(c *Candidate) { c.Instance.InstanceStoreGB = 3800 }),
		cand("parked", func(c *Candidate) {
			c.Instance.Provider, c.Instance.StoppedAllocated, c.Instance.InstanceStoreGB = fleet.Azure, true, 2900
		}),
	} {
		d := Decide([]Candidate{c}, now, DefaultPolicy())[0]
		n := 0
		for _, w := range d.Warnings {
			if strings.HasPrefix(w, "instance store:") {
				n++
			}
		}
		if d.Decision != Stop || n != 1 {
			t.Errorf("%s: %s (%s), %d instance-store warnings in %q, want a stop with one", c.Instance.ID, d.Decision, d.Reason, n, d.Warnings)
		}
		p := DefaultPolicy()
		p.ProtectInstanceStore = true
		if d := Decide([]Candidate{c}, now, p)[0]; d.Decision != Skip || d.Reason != ReasonInstanceStore {
			t.Errorf("%s under protect_instance_store: %s (%s)", c.Instance.ID, d.Decision, d.Reason)
		}
	}
}
