package recommend

import (
	"testing"

	"github.com/gpufinops/gpufinops/internal/purchasetest"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing/pricingtest"
)

// markRetired marks a type in the test catalog retired or promotional.
func markRetired(c *pricingtest.Catalog, name string, promo bool) *pricingtest.Catalog {
	for i := range c.List {
		if c.List[i].Type.Name == name {
			if promo {
				c.List[i].Type.Promo = "promotional size (test)"
			} else {
				c.List[i].Type.Retired = "retired: test"
			}
		}
	}
	return c
}

func kinds(p Plan) map[Kind][]string {
	out := map[Kind][]string{}
	for _, r := range p.Recommendations {
		out[r.Kind] = append(out[r.Kind], r.Target)
	}
	return out
}

// TestNoMoveToRetiredTypes: a retired, retiring or promotional size is
// never a rightsizing or quantization target, gets no spot move and no
// commitment; the same fleet on the unmarked catalog gets each advice.
func TestNoMoveToRetiredTypes(t *testing.T) {
	pol := DefaultPolicy().WithPurchases(purchasetest.Purchases())
	lowHost := inst("a", "g5.2xlarge", withUtil(agg(fleet.Stats{Avg: 35, P95: 46, Max: 71}, memHigh, hostLow, fleet.Stats{Avg: 21, P95: 25, Max: 31})))
	plan := func(c *pricingtest.Catalog, in fleet.Instance) Plan {
		f := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind, Instances: []fleet.Instance{in}}
		p := Run(f, c, pol)
		checkSums(t, p)
		return p
	}

	// Rightsizing: g5.2xlarge → g5.xlarge, unless g5.xlarge is retired or a promo.
	if got := kinds(plan(testCatalog(), lowHost))[KindRightsize]; len(got) != 1 || got[0] != "g5.xlarge" {
		t.Fatalf("baseline rightsize targets = %v, want [g5.xlarge]", got)
	}
	for _, promo := range []bool{false, true} {
		for _, r := range plan(markRetired(testCatalog(), "g5.xlarge", promo), lowHost).Recommendations {
			if r.Target == "g5.xlarge" {
				t.Errorf("promo %v: advised a move to the marked g5.xlarge: %+v", promo, r.Kind)
			}
		}
	}

	// Spot and commitment: a training job on g5.xlarge gets spot advice,
	// a busy inference server a commitment; on a retired g5.xlarge neither.
	training := inst("b", "g5.xlarge", withUtil(agg(busy, memHigh, hostMid, hostMid)), withWorkload(fleet.Training, yes()))
	serving := inst("c", "g5.xlarge", withUtil(agg(busy, memHigh, hostMid, hostMid)), withWorkload(fleet.Inference, nil))
	if got := kinds(plan(testCatalog(), training)); len(got[KindSpot]) == 0 {
		t.Fatalf("baseline: no spot advice for training on g5.xlarge: %v", got)
	}
	if got := kinds(plan(testCatalog(), serving)); len(got[KindCommitment]) == 0 {
		t.Fatalf("baseline: no commitment for inference on g5.xlarge: %v", got)
	}
	for _, in := range []fleet.Instance{training, serving} {
		got := kinds(plan(markRetired(testCatalog(), "g5.xlarge", false), in))
		if len(got[KindSpot]) > 0 || len(got[KindCommitment]) > 0 {
			t.Errorf("%s on a retired g5.xlarge: advice %v", in.ID, got)
		}
	}
}
