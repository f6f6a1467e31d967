package recommend

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/pricingtest"
)

// Property, on every cloud: a rightsize saving compares like with like.
// With live prices laid over the catalog for the current type, the target,
// both or neither, the saving is the live difference where both prices are
// live, else the catalog's difference, never a live price against a catalog
// one; the evidence says which source each price is from.
func TestRightsizeComparesLikeWithLike(t *testing.T) {
	r := rand.New(rand.NewPCG(34, 5))
	dec := func(f float64) decimal.Decimal { return decimal.NewFromFloat(f).Round(4) }
	for _, p := range []fleet.Provider{fleet.AWS, fleet.Azure, fleet.GCP} {
		for trial := range 60 {
			curCat := 1 + r.Float64()
			tgtCat := curCat * (0.5 + 0.3*r.Float64())
			curLive, tgtLive := curCat*(0.8+0.4*r.Float64()), tgtCat*(0.8+0.4*r.Float64())
			liveCur, liveTgt := trial%4 == 1 || trial%4 == 3, trial%4 == 2 || trial%4 == 3
			base := &pricingtest.Catalog{}
			base.AddGPU(pricing.GPUSpec{Name: "L4", Vendor: "nvidia", MemoryGiB: 24, MemoryBandwidthGBs: 300})
			typ := func(name string, vcpu, ram float64) pricing.InstanceType {
				return pricing.InstanceType{Provider: p, Name: name, GPUModel: "L4", GPUCount: 1, GPUMemoryGiB: 24, VCPUs: vcpu, MemoryGiB: ram}
			}
			base.AddOffer(typ("big-l4", 16, 64), "r1", dec(curCat).String(), "")
			base.AddOffer(typ("small-l4", 4, 16), "r1", dec(tgtCat).String(), "")
			var live []pricing.Price
			lp := func(name string, v float64) pricing.Price {
				return pricing.Price{Provider: p, Region: "r1", InstanceType: name, Option: pricing.OnDemand, Hourly: dec(v), Currency: pricing.Currency, Unit: pricing.UnitHour, Source: "live price API", AsOf: "2026-11-30"}
			}
			if liveCur {
				live = append(live, lp("big-l4", curLive))
			}
			if liveTgt {
				live = append(live, lp("small-l4", tgtLive))
			}
			cat := pricing.Overlay(base, live)
			in := inst("a", "big-l4", withUtil(agg(busy, memHigh, hostLow, hostLow)))
			in.Provider, in.Region = p, "r1"
			plan := Run(&fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind, Instances: []fleet.Instance{in}}, cat, DefaultPolicy())
			checkSums(t, plan)
			cur, tgt := dec(curCat), dec(tgtCat)
			if liveCur && liveTgt {
				cur, tgt = dec(curLive), dec(tgtLive)
			}
			want := monthly(cur, fleet.HoursPerMonth).Sub(monthly(tgt, fleet.HoursPerMonth))
			var rs *Recommendation
			for i := range plan.Recommendations {
				if plan.Recommendations[i].Kind == KindRightsize {
					rs = &plan.Recommendations[i]
				}
			}
			if rs == nil {
				paid := dec(curCat)
				if liveCur {
					paid = dec(curLive)
				}
				if want.Mul(decimal.NewFromInt(100)).Div(monthly(paid, fleet.HoursPerMonth)).GreaterThanOrEqual(decimal.NewFromInt(11)) {
					t.Errorf("%s trial %d: no rightsize, want a saving of %s", p, trial, want)
				}
				continue
			}
			if d := rs.MonthlySavings.Sub(want).Abs(); d.GreaterThan(decimal.RequireFromString("0.02")) {
				t.Errorf("%s trial %d (live current %v, live target %v): saving %s, want %s", p, trial, liveCur, liveTgt, rs.MonthlySavings, want)
			}
			notes := strings.Join(rs.Evidence.Notes, " ")
			if (liveCur || liveTgt) && (!strings.Contains(notes, "current big-l4 ") || !strings.Contains(notes, "target small-l4 ")) {
				t.Errorf("%s trial %d: the evidence does not say where the prices are from: %q", p, trial, notes)
			}
			if liveCur != liveTgt && !strings.Contains(notes, "compared at catalog prices") {
				t.Errorf("%s trial %d: the evidence does not say the prices were compared at the catalog's: %q", p, trial, notes)
			}
		}
	}
}
