package recommend

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/internal/purchasetest"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
	"github.com/gpufinops/gpufinops/pricing/pricingtest"
)

// Steady instances on the embedded catalog use the shared data's rate for the
// term, and the advice names what to buy in the cloud's own unit.
func TestCommitmentRatesFromData(t *testing.T) {
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	steady := withUtil(agg(busy, memHigh, hostMid, hostMid))
	inference := withWorkload(fleet.Inference, nil)
	cases := []struct {
		name string
		in   fleet.Instance
		term string
		// want is the shared data's discount_percent for the term
		// (commitments/*.csv), kind what is bought.
		want   map[string]float64
		kind   pricing.CommitmentKind
		action []string
	}{
		{
			name: "aws p5.48xlarge us-east-1",
			in:   inst("p5", "p5.48xlarge", steady, inference),
			// Compute SP no upfront ≈ Convertible RI no upfront: rows 7701 (1y) and 7704 (3y).
			want: map[string]float64{"1y": 21.25, "3y": 26.56}, kind: pricing.ComputeSavingsPlan,
			action: []string{"Compute Savings Plan, No Upfront with a commitment of $43.344/h", "covers $55.040/h of on-demand p5"},
		},
		{
			name: "azure NC40ads_H100_v5 australiaeast",
			in: inst("nc", "Standard_NC40ads_H100_v5", steady, inference, func(in *fleet.Instance) {
				od := decimal.RequireFromString("10.121")
				in.Provider, in.Region, in.HourlyPrice = fleet.Azure, "australiaeast", &od
			}),
			want: map[string]float64{"1y": 25, "3y": 45}, kind: pricing.Reservation,
			action: []string{"Reserved VM Instance for 1 × Standard_NC40ads_H100_v5 in australiaeast", "25 % off"},
		},
		{
			name: "gcp a2-highgpu-1g us-central1",
			in: inst("a2", "a2-highgpu-1g", steady, inference, func(in *fleet.Instance) {
				in.Provider, in.Region = fleet.GCP, "us-central1"
			}),
			want: map[string]float64{"1y": 37, "3y": 65}, kind: pricing.ResourceCUD,
			action: []string{"committed use discount for 1 × a2-highgpu-1g in us-central1", "12 vCPUs, 85 GiB memory, 1 × A100 GPUs"},
		},
	}
	for _, tc := range cases {
		for _, term := range []string{"1y", "3y"} {
			t.Run(tc.name+" "+term, func(t *testing.T) {
				f := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind, Instances: []fleet.Instance{tc.in}}
				if err := pricing.Complete(f, cat); err != nil {
					t.Fatal(err)
				}
				pol := DefaultPolicy().WithPurchases(purchasetest.Purchases())
				pol.Commitment.Term = term
				p := Run(f, cat, pol)
				checkSums(t, p)
				var rec *Recommendation
				for i := range p.Recommendations {
					if p.Recommendations[i].Kind == KindCommitment {
						rec = &p.Recommendations[i]
					}
				}
				if rec == nil {
					t.Fatalf("no commitment recommendation; warnings %v", p.Warnings)
				}
				pu := rec.Evidence.Purchase
				if pu == nil || pu.Kind != string(tc.kind) || pu.Term != term {
					t.Fatalf("purchase %+v", pu)
				}
				if got := rec.Evidence.Metrics["discountPercent"]; math.Abs(got-tc.want[term]) > 0.5 || math.Abs(pu.DiscountPercent-tc.want[term]) > 0.5 {
					t.Errorf("discount %v%%, shared data %v%%", got, tc.want[term])
				}
				if want := 100 - tc.want[term]; math.Abs(pu.BreakEvenUtilizationPercent-want) > 0.5 {
					t.Errorf("break-even %v%%, want %v%%", pu.BreakEvenUtilizationPercent, want)
				}
				// The commitment's hourly cost is the discounted spend, not the
				// on-demand it covers.
				if !pu.CommitmentHourly.LessThan(pu.CoversOnDemandHourly) || rec.Evidence.Metrics["commitmentHourly"] != pu.CommitmentHourly.InexactFloat64() {
					t.Errorf("commitment $%s/h covers $%s/h", pu.CommitmentHourly, pu.CoversOnDemandHourly)
				}
				if !tc.kind.PerHour() && pu.Quantity != 1 {
					t.Errorf("quantity %d, want 1", pu.Quantity)
				}
				if pu.RateSource == "" || pu.RateAsOf == "" || !strings.Contains(pu.RateOrigin, "commit-") {
					t.Errorf("rate provenance %+v", pu)
				}
				if term == "1y" {
					for _, w := range tc.action {
						if !strings.Contains(rec.Action, w) {
							t.Errorf("action %q lacks %q", rec.Action, w)
						}
					}
				}
			})
		}
	}
}

// A type and region without a rate gets no commitment and a warning naming
// it, never an assumed percentage; a configured discount is used and said so.
func TestCommitmentWithoutRate(t *testing.T) {
	c := testCatalog()
	c.Commitments = nil
	steady := inst("a", "g5.xlarge", withUtil(agg(busy, memHigh, hostMid, hostMid)), withWorkload(fleet.Inference, nil))
	f := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind, Instances: []fleet.Instance{steady}}
	p := Run(f, c, DefaultPolicy().WithPurchases(purchasetest.Purchases()))
	for _, r := range p.Recommendations {
		if r.Kind == KindCommitment {
			t.Errorf("commitment without a rate: %s", r.Action)
		}
	}
	if len(p.Warnings) != 1 || p.Warnings[0].Code != WarnNoCommitmentRate || !strings.Contains(p.Warnings[0].Message, "g5.xlarge") {
		t.Errorf("warnings %v", p.Warnings)
	}
	pol := DefaultPolicy().WithPurchases(purchasetest.Purchases())
	pol.Commitment.Discounts1y = map[string]float64{"aws": 0.3}
	p = Run(f, c, pol)
	var got *Recommendation
	for i, r := range p.Recommendations {
		if r.Kind == KindCommitment {
			got = &p.Recommendations[i]
		}
	}
	if got == nil || got.Evidence.Metrics["discountPercent"] != 30 || !strings.Contains(got.Evidence.Purchase.RateSource, "configured") {
		t.Fatalf("configured discount: %+v", got)
	}
}

// genFleet is a random fleet: several families with their own rates, sparse
// or dense samples, machines that leave halfway or join late (fleets that
// shrink or grow), hour counts that disagree with the samples, spot and
// committed machines mixed in.
func genFleet(r *rand.Rand) (*fleet.Fleet, *pricingtest.Catalog) {
	c := testCatalog()
	c.Commitments = nil
	for _, o := range c.List {
		d1 := 10 + r.Float64()*40
		c.AddCommitment(fleet.AWS, o.Region, o.Type.Name, pricing.ComputeSavingsPlan, "1y", math.Round(d1*100)/100)
		c.AddCommitment(fleet.AWS, o.Region, o.Type.Name, pricing.ComputeSavingsPlan, "3y", math.Round((d1+r.Float64()*20)*100)/100)
	}
	types := []string{"g5.xlarge", "g5.2xlarge", "g4dn.xlarge", "p4d.24xlarge"}
	start := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	weeks := 1 + r.IntN(4)
	span := weeks * 168
	f := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind}
	for i := range 2 + r.IntN(8) {
		typ := types[r.IntN(len(types))]
		var mods []func(*fleet.Instance)
		from, to := 0, span
		switch r.IntN(4) {
		case 0: // left halfway
			to = span/2 + r.IntN(span/2)
		case 1: // joined late
			from = r.IntN(span / 2)
		}
		step := 1
		if r.IntN(3) == 0 {
			step = 1 + r.IntN(12) // sparse samples
		}
		var samples []fleet.Sample
		for h := from; h < to; h += step {
			if r.Float64() < 0.1 {
				continue // a gap
			}
			samples = append(samples, fleet.Sample{Time: start.Add(time.Duration(h) * time.Hour), GPU: fleet.PerGPU{60 + r.Float64()*40}, GPUMemory: fleet.PerGPU{70}, CPU: f64(60), Memory: f64(60)})
		}
		u := &fleet.Utilization{Samples: samples}
		if r.IntN(2) == 0 {
			u.Window = &fleet.TimeRange{Start: start, End: start.Add(time.Duration(span) * time.Hour)}
		}
		mods = append(mods, withUtil(u), withWorkload(fleet.Inference, nil))
		switch r.IntN(6) {
		case 0:
			h := float64(50 + r.IntN(680))
			mods = append(mods, func(in *fleet.Instance) { in.Usage.HoursPerMonth = &h })
		case 1:
			mods = append(mods, func(in *fleet.Instance) { in.Lifecycle = fleet.Spot })
		case 2:
			mods = append(mods, func(in *fleet.Instance) { in.Lifecycle = fleet.Committed })
		case 3:
			mods = append(mods, withWorkload(fleet.Training, yes()))
		}
		f.Instances = append(f.Instances, inst(fmt.Sprintf("i-%02d", i), typ, mods...))
	}
	return f, c
}

// TestCommitmentInvariants: over random fleets, every recommendation's
// projected cost is ≥ 0, a commitment never saves more than its discount of
// the instance's cost, and a group's optimized cost is never below what the
// commitment itself costs.
func TestCommitmentInvariants(t *testing.T) {
	trials := 300
	if testing.Short() {
		trials = 60
	}
	r := rand.New(rand.NewPCG(11, 29))
	commits := 0
	for trial := range trials {
		f, c := genFleet(r)
		for _, term := range []string{"1y", "3y"} {
			pol := DefaultPolicy().WithPurchases(purchasetest.Purchases())
			pol.Commitment.Term = term
			p := Run(f, c, pol)
			checkSums(t, p)
			cost := map[string]decimal.Decimal{}
			for _, ic := range p.Instances {
				cost[ic.ResourceID] = ic.OptimizedCost
			}
			for _, rec := range p.Recommendations {
				if rec.ProjectedMonthly.IsNegative() || rec.MonthlySavings.IsNegative() {
					t.Fatalf("trial %d %s: %s projected %s, saving %s", trial, term, rec.ID, rec.ProjectedMonthly, rec.MonthlySavings)
				}
				if rec.Kind != KindCommitment {
					continue
				}
				commits++
				d := rec.Evidence.Thresholds["discount"]
				limit := rec.CurrentMonthly.Mul(decimal.NewFromFloat(d)).Add(decimal.NewFromFloat(0.02))
				if rec.MonthlySavings.GreaterThan(limit) {
					t.Fatalf("trial %d %s: %s saves %s of %s, more than its %v discount", trial, term, rec.ResourceID, rec.MonthlySavings, rec.CurrentMonthly, d)
				}
			}
			for _, g := range p.Commitments.Groups {
				for _, tp := range g.Terms {
					if tp.Term != term || tp.CommitHourly.IsZero() {
						continue
					}
					sum := decimal.Zero
					for _, id := range g.Items {
						sum = sum.Add(cost[id])
					}
					// Cents of rounding per instance are allowed.
					slack := decimal.NewFromFloat(0.01 * float64(len(g.Items)+1))
					if sum.Add(slack).LessThan(tp.CommittedMonthly) {
						t.Fatalf("trial %d %s: group %s optimized %s < commitment %s", trial, term, g.Family, sum, tp.CommittedMonthly)
					}
					if tp.SavingsMonthly.GreaterThan(tp.CommittedMonthly.Div(decimal.NewFromFloat(1 - tp.Discount)).Mul(decimal.NewFromFloat(tp.Discount)).Add(decimal.NewFromFloat(0.02))) {
						t.Fatalf("trial %d %s: group %s saves %s, more than the discount of what it covers", trial, term, g.Family, tp.SavingsMonthly)
					}
				}
			}
		}
	}
	if commits == 0 {
		t.Fatal("no trial produced a commitment: the generator tests nothing")
	}
	t.Logf("%d commitment recommendations checked", commits)
}

// A family that shrank from four machines to two in the last week is
// committed at the two that remain, with a warning and lower confidence.
func TestCommitmentTrend(t *testing.T) {
	start := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	window := &fleet.TimeRange{Start: start, End: start.Add(3 * 168 * time.Hour)}
	machine := func(id string, hours int) fleet.Instance {
		var s []fleet.Sample
		for h := range hours {
			s = append(s, fleet.Sample{Time: start.Add(time.Duration(h) * time.Hour), GPU: fleet.PerGPU{90}, GPUMemory: fleet.PerGPU{80}, CPU: f64(70), Memory: f64(70)})
		}
		return inst(id, "g5.xlarge", withUtil(&fleet.Utilization{Window: window, Samples: s}), withWorkload(fleet.Inference, nil))
	}
	f := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind, Instances: []fleet.Instance{
		machine("stay-1", 504), machine("stay-2", 504), machine("gone-1", 336), machine("gone-2", 336),
	}}
	p := Run(f, testCatalog(), DefaultPolicy().WithPurchases(purchasetest.Purchases()))
	checkSums(t, p)
	var trend bool
	for _, w := range p.Warnings {
		trend = trend || (w.Code == WarnUsageTrend && strings.Contains(w.Message, "fell"))
	}
	if !trend {
		t.Errorf("no usage-trend warning: %v", p.Warnings)
	}
	g := p.Commitments.Groups[0]
	if g.Trend == nil || g.Trend.Direction != "fell" || !g.Terms[0].CommitHourly.Equal(decimal.RequireFromString("2.012")) {
		t.Fatalf("trend %+v, commit %s, want 2 × 1.006", g.Trend, g.Terms[0].CommitHourly)
	}
	n := 0
	for _, r := range p.Recommendations {
		if r.Kind == KindCommitment {
			n++
			if r.Confidence == High || r.Evidence.Metrics["trendChangePercent"] >= 0 {
				t.Errorf("%s: confidence %s, trend %v", r.ResourceID, r.Confidence, r.Evidence.Metrics["trendChangePercent"])
			}
		}
	}
	if n == 0 {
		t.Error("no commitment recommendation")
	}
}

// A policy that names no commitment for a cloud advises none there and says
// so once per cloud; the other clouds' commitments are unaffected.
func TestCommitmentWithoutKind(t *testing.T) {
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	f := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind}
	for i, p := range []fleet.Provider{fleet.AWS, fleet.AWS, fleet.GCP} {
		in := inst(fmt.Sprintf("%s-%d", p, i), "p5.48xlarge", withUtil(agg(busy, memHigh, hostMid, hostMid)), withWorkload(fleet.Inference, nil))
		in.Provider = p
		if p == fleet.GCP {
			in.InstanceType, in.Region = "a2-highgpu-1g", "us-central1"
		}
		f.Instances = append(f.Instances, in)
	}
	if err := pricing.Complete(f, cat); err != nil {
		t.Fatal(err)
	}
	plans, payments, names := purchasetest.Purchases()
	delete(plans, "aws")
	p := Run(f, cat, DefaultPolicy().WithPurchases(plans, payments, names))
	checkSums(t, p)
	kinds := 0
	for _, w := range p.Warnings {
		if w.Code == WarnNoCommitmentKind {
			kinds++
			if !strings.Contains(w.Message, "policy.commitment.plans.aws") || !strings.Contains(w.Message, "2 instance") {
				t.Errorf("warning %q", w.Message)
			}
		}
	}
	if kinds != 1 {
		t.Errorf("%d no-commitment-kind warnings, want 1: %v", kinds, p.Warnings)
	}
	gcp := 0
	for _, r := range p.Recommendations {
		if r.Kind != KindCommitment {
			continue
		}
		if strings.HasPrefix(r.ResourceID, "aws") {
			t.Errorf("commitment on a cloud without a plan: %s %s", r.ResourceID, r.Action)
		}
		gcp++
	}
	if gcp == 0 {
		t.Error("the cloud with a plan lost its commitment")
	}
}
