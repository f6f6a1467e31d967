package recommend

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/internal/fleetgen"
	"github.com/gpufinops/gpufinops/internal/purchasetest"
	"github.com/gpufinops/gpufinops/pkg/commitplan"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
	"github.com/gpufinops/gpufinops/pricing/pricingtest"
)

// oneAnswerFleets are the demo and test fleets, and generated ones.
func oneAnswerFleets(t *testing.T) map[string]*fleet.Fleet {
	t.Helper()
	out := map[string]*fleet.Fleet{}
	for _, name := range []string{"demo.yaml", "azure.yaml", "gcp.yaml", "full.json"} {
		path := filepath.Join("..", "..", "testdata", "fleets", name)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f, err := fleet.Parse(path, b)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = f
	}
	for seed := range uint64(4) {
		out[fmt.Sprintf("generated-%d", seed)] = fleetgen.Generate(fleetgen.Options{Instances: 400, Seed: seed, SampleShare: 0.2, MaxSamples: 300})
	}
	return out
}

// TestAnalyzeAndCommitPlanOneAnswer: analyze's commitment advice and
// commit-plan's plan are one answer. Over the demo, the test fleets and
// generated ones, with a 1- and a 3-year policy, every group commit-plan
// recommends a term for is the term analyze buys, at the same amount and
// quantity; every group with a positive saving gets advice; and the term is
// the policy's (commit-plan recommended the term saving most, analyze the
// policy's, 1y against 3y in 30 groups of the fleets).
func TestAnalyzeAndCommitPlanOneAnswer(t *testing.T) {
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	longerSavesMore := 0
	for name, f := range oneAnswerFleets(t) {
		if err := pricing.Complete(f, cat); err != nil {
			t.Fatal(err)
		}
		longerSavesMore += checkOneAnswer(t, name, f, cat, nil)
	}
	if longerSavesMore == 0 {
		t.Error("no group where the other term saves more: the fleets do not test the choice")
	}
}

// TestOneAnswerAzureSavingsPlan: with live Azure savings plan rates laid
// over the catalog (as a scan reads them from the Retail Prices API), the
// planner weighs them against reservations group by group, and analyze
// buys the kind, term and amount commit-plan recommends; some groups take
// the savings plan and some the reservation.
func TestOneAnswerAzureSavingsPlan(t *testing.T) {
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for name, f := range oneAnswerFleets(t) {
		if err := pricing.Complete(f, cat); err != nil {
			t.Fatal(err)
		}
		// Savings plan rates for every Azure size the fleet runs (30 % off
		// for 1 year, 50 % for 3, on the catalog's on-demand), and
		// reservation rates (37 %, 57 %) for every other one, as regions
		// lack some sizes' reservations.
		var live []pricing.Price
		seen := map[string]bool{}
		for _, in := range f.Instances {
			if in.Provider != fleet.Azure || seen[in.Region+" "+in.InstanceType] {
				continue
			}
			seen[in.Region+" "+in.InstanceType] = true
			off, ok := cat.Offer(fleet.Azure, in.Region, in.InstanceType)
			if !ok || off.OnDemand == nil {
				continue
			}
			for _, r := range []struct {
				o    pricing.Option
				kind pricing.CommitmentKind
				d    string
			}{
				{pricing.SavingsPlan1y, pricing.AzureSavingsPlan, "0.7"}, {pricing.SavingsPlan3y, pricing.AzureSavingsPlan, "0.5"},
				{pricing.SavingsPlan1y, pricing.Reservation, "0.63"}, {pricing.SavingsPlan3y, pricing.Reservation, "0.43"},
			} {
				if r.kind == pricing.Reservation && len(seen)%2 == 0 {
					continue
				}
				live = append(live, pricing.Price{Provider: fleet.Azure, Region: in.Region, InstanceType: in.InstanceType, Option: r.o, Commitment: r.kind,
					Hourly: off.OnDemand.Hourly.Mul(decimal.RequireFromString(r.d)).Round(6), Currency: pricing.Currency, Unit: pricing.UnitHour,
					Source: "Azure Retail Prices API (" + string(r.kind) + ")", AsOf: "2026-12-06"})
			}
		}
		if len(live) == 0 {
			continue
		}
		checkOneAnswer(t, name, f, pricing.Overlay(cat, live), kinds)
	}
	t.Logf("groups by kind bought: %v", kinds)
	if kinds[string(pricing.AzureSavingsPlan)] == 0 || kinds[string(pricing.Reservation)] == 0 {
		t.Errorf("groups by kind %v: want both an Azure savings plan and reservations chosen somewhere", kinds)
	}
}

// checkOneAnswer runs f with a 1- and a 3-year policy and checks that
// every group commit-plan recommends a term for is bought by analyze at
// that term, kind, amount and quantity, and that every group with a
// positive saving gets advice. It returns how many groups another term
// would save more in, and counts the groups' kinds in kinds when given.
func checkOneAnswer(t *testing.T, name string, f *fleet.Fleet, cat pricing.Catalog, kinds map[string]int) int {
	t.Helper()
	longerSavesMore := 0
	for _, term := range []string{commitplan.Term1y, commitplan.Term3y} {
		pol := DefaultPolicy().WithPurchases(purchasetest.Purchases())
		pol.Commitment.Term = term
		p := Run(f, cat, pol)
		type key struct {
			provider       fleet.Provider
			region, family string
		}
		groups := map[key]commitplan.GroupPlan{}
		advised := map[key]int{}
		for _, g := range p.Commitments.Groups {
			groups[key{g.Provider, g.Region, g.Family}] = g
			if g.Recommended != commitplan.None && g.Recommended != term {
				t.Errorf("%s %s: %s %s %s recommends %s", name, term, g.Provider, g.Region, g.Family, g.Recommended)
			}
			if kinds != nil && g.Kind != "" && g.Recommended != commitplan.None {
				kinds[g.Kind]++
			}
			for _, tp := range g.Terms {
				if tp.Term != term {
					if tp.SavingsMonthly.GreaterThan(savingsOf(g, term)) {
						longerSavesMore++
					}
				}
			}
		}
		for _, r := range p.Recommendations {
			if r.Kind != KindCommitment {
				continue
			}
			pu := r.Evidence.Purchase
			k := key{r.Provider, pu.Region, pu.Scope}
			g, ok := groups[k]
			if !ok && pu.Kind == string(pricing.ResourceCUD) {
				// Bought per resource: the purchase is the series' vCPU and
				// memory groups' and the GPU model's, at their terms.
				pay, covers, n := decimal.Zero, decimal.Zero, 0
				for _, fam := range []string{pu.Scope + " vCPU", pu.Scope + " memory", pu.GPUModel + " GPU"} {
					rk := key{r.Provider, pu.Region, fam}
					if tp := termOf(groups[rk], groups[rk].Recommended); tp != nil && tp.Quantity > 0 && groups[rk].Recommended == pu.Term {
						pay, covers, n = pay.Add(tp.PayHourly), covers.Add(tp.CommitHourly), n+1
						advised[rk]++
					}
				}
				if n == 0 || !pay.Equal(pu.CommitmentHourly) || !covers.Equal(pu.CoversOnDemandHourly) {
					t.Errorf("%s %s: %s buys %s/h for %s/h per resource; commit-plan's %s resource groups pay %s for %s", name, term, r.ResourceID, pu.CommitmentHourly, pu.CoversOnDemandHourly, pu.Scope, pay, covers)
				}
				continue
			}
			if !ok {
				t.Fatalf("%s %s: %s advises a commitment for a group commit-plan lacks: %+v", name, term, r.ResourceID, k)
			}
			advised[k]++
			tp := termOf(g, g.Recommended)
			if tp == nil || pu.Term != g.Recommended || !pu.CommitmentHourly.Equal(tp.PayHourly) || pu.Quantity != tp.Quantity || !pu.CoversOnDemandHourly.Equal(tp.CommitHourly) {
				t.Errorf("%s %s: %s buys %s %s/h ×%d; commit-plan recommends %s %+v", name, term, r.ResourceID, pu.Term, pu.CommitmentHourly, pu.Quantity, g.Recommended, tp)
			}
			if g.Kind != "" && pu.Kind != g.Kind {
				t.Errorf("%s %s: %s buys a %s; commit-plan plans the group as %s", name, term, r.ResourceID, pu.Kind, g.Kind)
			}
		}
		for k, g := range groups {
			tp := termOf(g, g.Recommended)
			if tp != nil && tp.SavingsMonthly.IsPositive() && advised[k] == 0 {
				t.Errorf("%s %s: commit-plan recommends %s for %+v (saving %s), analyze advises nothing", name, term, g.Recommended, k, tp.SavingsMonthly)
			}
		}
	}
	return longerSavesMore
}

func termOf(g commitplan.GroupPlan, term string) *commitplan.TermPlan {
	for i := range g.Terms {
		if g.Terms[i].Term == term {
			return &g.Terms[i]
		}
	}
	return nil
}

func savingsOf(g commitplan.GroupPlan, term string) decimal.Decimal {
	if tp := termOf(g, term); tp != nil {
		return tp.SavingsMonthly
	}
	return decimal.Zero
}

// TestPurchaseAtThePublicRate: two Azure NC24ads A100 v4 at a negotiated
// $4.42/h, whose public 1-year reservation rate is $3.48/h (36.96 % off the
// $5.52 list price): the reservation costs 2 × $3.48 = $6.96/h, and saves
// what the instances pay less that, 2 × ($4.42 − $3.48) × 730 h; the
// purchase was priced at the source's discount off the negotiated price,
// 2 × $4.42 × 0.6304 = $5.57/h.
func TestPurchaseAtThePublicRate(t *testing.T) {
	const size, region = "Standard_NC24ads_A100_v4", "japaneast"
	c := &pricingtest.Catalog{}
	c.AddGPU(pricing.GPUSpec{Name: "A100", Vendor: "nvidia", MemoryGiB: 80, MemoryBandwidthGBs: 1935})
	c.AddOffer(pricing.InstanceType{Provider: fleet.Azure, Name: size, Family: "NCads_A100_v4", GPUModel: "A100", GPUCount: 1, GPUMemoryGiB: 80, VCPUs: 24, MemoryGiB: 220}, region, "5.52", "")
	c.Commitments = append(c.Commitments, pricing.CommitmentRate{Provider: fleet.Azure, Region: region, InstanceType: size, Kind: pricing.Reservation,
		Term: pricing.Term1y, Payment: pricing.PayUpfrontOrMonthly, Hourly: decimal.RequireFromString("3.48"), OnDemandHourly: decimal.RequireFromString("5.52"),
		DiscountPercent: pricing.DiscountPercent(decimal.RequireFromString("3.48"), decimal.RequireFromString("5.52")), Source: "public reservation rates", Origin: "test", AsOf: "2026-11-30"})
	negotiated := decimal.RequireFromString("4.42")
	var ins []fleet.Instance
	for _, id := range []string{"a", "b"} {
		ins = append(ins, inst(id, size, withUtil(agg(busy, memHigh, hostMid, hostMid)), func(in *fleet.Instance) {
			in.Provider, in.Region, in.HourlyPrice = fleet.Azure, region, &negotiated
		}))
	}
	f := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind, Instances: ins}
	p := Run(f, c, DefaultPolicy().WithPurchases(purchasetest.Purchases()))
	checkSums(t, p)
	saved := decimal.Zero
	n := 0
	for _, r := range p.Recommendations {
		if r.Kind != KindCommitment {
			continue
		}
		n++
		pu := r.Evidence.Purchase
		if pu.Quantity != 2 || !pu.CommitmentHourly.Equal(decimal.RequireFromString("6.96")) || pu.RateSource != "public reservation rates" {
			t.Errorf("%s buys %d × %s at %s/h from %q; want 2 units at 2 × 3.48 = 6.96/h, the public rate", r.ResourceID, pu.Quantity, pu.InstanceType, pu.CommitmentHourly, pu.RateSource)
		}
		if !strings.Contains(r.Action, "$6.960/h = 2 × $3.48/h") {
			t.Errorf("action %q does not say it buys 2 units at the $3.48/h public rate", r.Action)
		}
		saved = saved.Add(r.MonthlySavings)
	}
	if want := decimal.RequireFromString("1372.4"); n != 2 || !saved.Equal(want) {
		t.Errorf("%d commitment recommendations saving %s a month, want 2 saving 2 × (4.42 − 3.48) × 730 = %s", n, saved, want)
	}
}

// TestFleetPricesAreDated: a price the fleet file states is dated with the
// day of its metadata.generatedAt, or its source says the date is unknown.
func TestFleetPricesAreDated(t *testing.T) {
	price := decimal.RequireFromString("0.9")
	in := inst("a", "g5.xlarge", withUtil(agg(busy, memHigh, hostMid, hostMid)), func(in *fleet.Instance) { in.HourlyPrice = &price })
	at := time.Date(2026, 11, 29, 23, 30, 0, 0, time.FixedZone("x", -3600))
	for _, tc := range []struct {
		at           *time.Time
		asOf, source string
	}{{&at, "2026-11-30", "fleet file (hourlyPrice)"}, {nil, "", "fleet file (hourlyPrice), date unknown"}} {
		f := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind, Metadata: fleet.Metadata{GeneratedAt: tc.at}, Instances: []fleet.Instance{in}}
		p := Run(f, testCatalog(), DefaultPolicy().WithPurchases(purchasetest.Purchases()))
		got := p.Instances[0].Hourly
		if got.AsOf != tc.asOf || got.Source != tc.source {
			t.Errorf("generatedAt %v: price dated %q from %q, want %q from %q", tc.at, got.AsOf, got.Source, tc.asOf, tc.source)
		}
	}
}
