package recommend

import (
	"testing"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// Instances of a type the catalog lacks: one without GPU facts but with a
// price is costed and warned about, never advised; one without a price is
// unpriced (not priced at 0); one with both is planned like any other.
func TestUnknownTypes(t *testing.T) {
	price := decimal.RequireFromString("2.5")
	idleUtil := withUtil(agg(idle, idle, hostLow, hostLow))
	priced := func(in *fleet.Instance) { in.HourlyPrice = &price }
	gpus := func(in *fleet.Instance) { in.GPU = fleet.GPU{Model: "Z9", Count: 1, MemoryGiB: 48} }
	p := run(t,
		inst("no-gpu", "g9z.4xlarge", idleUtil, priced),
		inst("no-price", "g9z.4xlarge", idleUtil, gpus),
		inst("nothing", "g9z.4xlarge", idleUtil),
		inst("described", "g9z.4xlarge", idleUtil, gpus, priced),
	)
	by := map[string]InstanceCost{}
	for _, ic := range p.Instances {
		by[ic.ResourceID] = ic
	}
	if len(by) != 4 {
		t.Fatalf("%d instances in the plan, want 4", len(by))
	}
	if !by["no-gpu"].Priced || !by["no-gpu"].MonthlyCost.IsPositive() || !by["no-gpu"].MonthlySavings.IsZero() {
		t.Errorf("no-gpu: %+v; want costed, no saving", by["no-gpu"])
	}
	for _, id := range []string{"no-price", "nothing"} {
		if ic := by[id]; ic.Priced || ic.Hourly != nil || !ic.MonthlyCost.IsZero() || ic.Final != nil {
			t.Errorf("%s: %+v; want unpriced", id, ic)
		}
	}
	if p.Summary.UnpricedCount != 2 {
		t.Errorf("unpriced count %d, want 2", p.Summary.UnpricedCount)
	}
	advised := map[string]bool{}
	for _, r := range p.Recommendations {
		if r.Kind != KindTagging {
			advised[r.ResourceID] = true
		}
	}
	for _, id := range []string{"no-gpu", "no-price", "nothing"} {
		if advised[id] {
			t.Errorf("%s was advised", id)
		}
	}
	if !advised["described"] {
		t.Error("an idle instance with its own GPUs and price got no advice")
	}
	warned := map[string]string{}
	for _, w := range p.Warnings {
		if w.Code == WarnUnknownType || w.Code == WarnUnpriced {
			warned[w.ResourceID] = w.Code
		}
	}
	want := map[string]string{"no-gpu": WarnUnknownType, "no-price": WarnUnpriced, "nothing": WarnUnpriced}
	for id, code := range want {
		if warned[id] != code {
			t.Errorf("%s: warning %q, want %q", id, warned[id], code)
		}
	}
}
