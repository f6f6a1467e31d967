package recommend

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/internal/fleetgen"
	"github.com/gpufinops/gpufinops/internal/purchasetest"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
)

func heldDec(s string) *decimal.Decimal { d := decimal.RequireFromString(s); return &d }

func ri(id, typ string, count float64, rate string, flexible bool) fleet.Held {
	return fleet.Held{ID: id, Provider: fleet.AWS, Kind: fleet.HeldStandardRI, Term: "1y", Scope: fleet.HeldScope{Level: "region", Region: "us-east-1"},
		InstanceType: typ, Count: count, SizeFlexible: flexible, HourlyRate: heldDec(rate)}
}

func runHeld(t *testing.T, held []fleet.Held, instances ...fleet.Instance) Plan {
	t.Helper()
	f := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind, Instances: instances, Commitments: held}
	if err := f.Validate(); err != nil {
		t.Fatalf("test fleet invalid: %v", err)
	}
	p := Run(f, testCatalog(), DefaultPolicy().WithPurchases(purchasetest.Purchases()))
	checkSums(t, p)
	checkHeld(t, p)
	return p
}

// checkHeld: no recommendation saves what commitments pay, and no projected
// cost falls below it.
func checkHeld(t *testing.T, p Plan) {
	t.Helper()
	saved := map[string]decimal.Decimal{}
	for _, r := range p.Recommendations {
		saved[r.ResourceID] = saved[r.ResourceID].Add(r.MonthlySavings)
		if r.ProjectedMonthly.IsNegative() {
			t.Errorf("%s: projected %s", r.ID, r.ProjectedMonthly)
		}
	}
	for _, ic := range p.Instances {
		if ic.CoveredShare > 1 {
			t.Errorf("%s: covered %v", ic.ResourceID, ic.CoveredShare)
		}
		if !ic.Priced {
			continue
		}
		if ic.OptimizedCost.LessThan(ic.CommitmentMonthly) {
			t.Errorf("%s: optimized %s below what commitments charge it, %s", ic.ResourceID, ic.OptimizedCost, ic.CommitmentMonthly)
		}
		if s := saved[ic.ResourceID]; s.GreaterThan(ic.MonthlyCost.Sub(ic.CommitmentMonthly)) {
			t.Errorf("%s: saves %s of %s, of which commitments pay %s", ic.ResourceID, s, ic.MonthlyCost, ic.CommitmentMonthly)
		}
	}
	paid := decimal.Zero
	for _, u := range p.Held {
		if !(u.Utilization >= 0 && u.Utilization <= 1) || u.UsedMonthly.GreaterThan(u.PaidMonthly) {
			t.Errorf("%s: used %s of %s, utilization %v", u.ID, u.UsedMonthly, u.PaidMonthly, u.Utilization)
		}
		if u.Active && u.Priced && u.Kind != fleet.HeldCapacityReservation && u.Kind != fleet.HeldGCPReservation {
			paid = paid.Add(u.PaidMonthly)
		}
	}
	slack := decimal.New(int64(len(p.Instances)+len(p.Held)), -2)
	if p.Summary.OptimizedMonthly.Add(slack).LessThan(paid) {
		t.Errorf("optimized %s below the %s commitments are paid", p.Summary.OptimizedMonthly, paid)
	}
}

func warningsOf(p Plan, code string) []Warning {
	var out []Warning
	for _, w := range p.Warnings {
		if w.Code == code {
			out = append(out, w)
		}
	}
	return out
}

func TestHeldCoverage(t *testing.T) {
	idleUtil := withUtil(agg(idle, idle, idle, idle))
	busyUtil := withUtil(agg(busy, memHigh, hostMid, hostMid))
	t.Run("an idle reserved machine is not stopped to save", func(t *testing.T) {
		p := runHeld(t, []fleet.Held{ri("ri-1", "p4d.24xlarge", 1, "13.5", false)}, inst("p4d", "p4d.24xlarge", idleUtil))
		if len(p.Recommendations) > 0 {
			for _, r := range p.Recommendations {
				if r.ResourceID == "p4d" && r.Kind != KindTagging {
					t.Errorf("recommendation on the reserved machine: %s %s", r.ID, r.MonthlySavings)
				}
			}
		}
		w := warningsOf(p, WarnCoveredNoSaving)
		if len(w) != 1 || !strings.Contains(w[0].Message, "frees $13.500/h of commitment ri-1") {
			t.Errorf("warnings %+v", w)
		}
		// 13.5 × 730
		if ic := p.Instances[0]; !ic.MonthlyCost.Equal(decimal.NewFromInt(9855)) || !ic.CommitmentMonthly.Equal(decimal.NewFromInt(9855)) || ic.CoveredShare != 1 {
			t.Errorf("cost %+v", ic)
		}
	})
	t.Run("beside a busy twin, the reservation covers the busy one and the idle one's stop saves", func(t *testing.T) {
		// Listed idle first: the allocation does not follow the listing.
		p := runHeld(t, []fleet.Held{ri("ri-1", "p4d.24xlarge", 1, "13.5", false)}, inst("p4d", "p4d.24xlarge", idleUtil), inst("other", "p4d.24xlarge", busyUtil))
		var saved decimal.Decimal
		for _, r := range p.Recommendations {
			if r.ResourceID == "p4d" && r.Kind == KindIdleStop {
				saved = r.MonthlySavings
			}
		}
		var idle, busy InstanceCost
		for _, ic := range p.Instances {
			switch ic.ResourceID {
			case "p4d":
				idle = ic
			case "other":
				busy = ic
			}
		}
		if busy.CoveredShare != 1 || !busy.MonthlyCost.Equal(decimal.NewFromInt(9855)) || idle.CoveredShare != 0 {
			t.Errorf("covered: busy %+v, idle %+v", busy, idle)
		}
		if !saved.IsPositive() || !saved.Equal(idle.MonthlyCost) {
			t.Errorf("the idle twin's stop saves %s, want its whole on-demand cost %s", saved, idle.MonthlyCost)
		}
	})
	t.Run("a partly covered machine saves its uncovered part", func(t *testing.T) {
		// A size-flexible g5.xlarge RI (8 units) covers half of a g5.2xlarge (16).
		p := runHeld(t, []fleet.Held{ri("ri-1", "g5.xlarge", 1, "0.6", true)}, inst("g5", "g5.2xlarge", idleUtil))
		if len(p.Recommendations) == 0 || p.Recommendations[0].Kind != KindIdleStop {
			t.Fatalf("recommendations %+v", p.Recommendations)
		}
		r := p.Recommendations[0]
		// Uncovered: 1.212 × 365 = 442.38; the RI's 0.6 × 730 = 438 stays.
		if !r.MonthlySavings.Equal(decimal.RequireFromString("442.38")) || !r.ProjectedMonthly.Equal(decimal.NewFromInt(438)) {
			t.Errorf("saving %s projected %s", r.MonthlySavings, r.ProjectedMonthly)
		}
		if !strings.Contains(r.Action, "frees $0.600/h of commitment ri-1") || !strings.Contains(strings.Join(r.Evidence.Notes, " "), "the saving is the uncovered part only") {
			t.Errorf("action %q notes %v", r.Action, r.Evidence.Notes)
		}
	})
	t.Run("no spot move on a savings plan's usage", func(t *testing.T) {
		sp := fleet.Held{ID: "sp-1", Provider: fleet.AWS, Kind: fleet.HeldComputeSavingsPlan, Term: "1y", HourlyCommitment: heldDec("15")}
		p := runHeld(t, []fleet.Held{sp}, inst("train", "p4d.24xlarge", busyUtil, withWorkload(fleet.Training, yes())))
		for _, r := range p.Recommendations {
			if r.Kind == KindSpot || r.Kind == KindCommitment {
				t.Errorf("%s on a machine the plan covers: saves %s", r.ID, r.MonthlySavings)
			}
		}
		if len(warningsOf(p, WarnCoveredNoSaving)) != 1 {
			t.Errorf("warnings %+v", p.Warnings)
		}
	})
	t.Run("a stopped machine naming its reservation still pays it", func(t *testing.T) {
		p := runHeld(t, []fleet.Held{ri("ri-1", "g5.xlarge", 1, "0.6", false)}, inst("off", "g5.xlarge", func(in *fleet.Instance) {
			in.State, in.Lifecycle, in.Commitment = fleet.Stopped, fleet.Committed, &fleet.Commitment{ID: "ri-1"}
		}))
		if ic := p.Instances[0]; !ic.MonthlyCost.Equal(decimal.NewFromInt(438)) {
			t.Errorf("stopped reserved machine costs %s, want the RI's 438", ic.MonthlyCost)
		}
		if w := warningsOf(p, WarnStoppedCommitted); len(w) != 1 || !strings.Contains(w[0].Message, "stopped, but commitment ri-1 is still paid: $438.00 a month") || len(warningsOf(p, WarnUnusedCommitment)) != 1 {
			t.Errorf("warnings %+v", p.Warnings)
		}
	})
	t.Run("a named reservation running 200 hours costs all its hours", func(t *testing.T) {
		p := runHeld(t, []fleet.Held{ri("ri-1", "g5.xlarge", 1, "0.6", false)}, inst("part", "g5.xlarge", busyUtil, func(in *fleet.Instance) {
			h := 200.0
			in.Usage.HoursPerMonth = &h
			in.Lifecycle, in.Commitment = fleet.Committed, &fleet.Commitment{ID: "ri-1"}
		}))
		// 0.6 × 730 = 438: 200 h used (120.00) and 530 h unused (318.00), all on it.
		ic := p.Instances[0]
		if !ic.MonthlyCost.Equal(decimal.NewFromInt(438)) || !ic.CommitmentMonthly.Equal(decimal.NewFromInt(438)) || ic.CoveredShare != 1 || !p.Summary.UnusedCommitmentMonthly.IsZero() {
			t.Errorf("cost %+v, summary %+v", ic, p.Summary)
		}
		if w := warningsOf(p, WarnUnusedCommitment); len(w) != 1 || !strings.Contains(w[0].Message, "$318.00 of the $438.00") {
			t.Errorf("warnings %+v", w)
		}
	})
	t.Run("an implicit reservation is paid every hour", func(t *testing.T) {
		rate := heldDec("3.75")
		p := runHeld(t, nil, inst("ri", "g5.xlarge", func(in *fleet.Instance) {
			h := 200.0
			in.Usage.HoursPerMonth = &h
			in.Lifecycle, in.Commitment = fleet.Committed, &fleet.Commitment{Kind: "standard-reserved-instance", Term: "1y", HourlyRate: rate}
		}), inst("off", "g5.xlarge", func(in *fleet.Instance) {
			in.State, in.Lifecycle, in.Commitment = fleet.Stopped, fleet.Committed, &fleet.Commitment{Kind: "standard-reserved-instance", Term: "1y", HourlyRate: rate}
		}))
		// 3.75 × 730, not × 200; stopped, the same.
		for _, ic := range p.Instances {
			if !ic.MonthlyCost.Equal(decimal.RequireFromString("2737.5")) {
				t.Errorf("%s costs %s, want 2737.50", ic.ResourceID, ic.MonthlyCost)
			}
		}
		if w := warningsOf(p, WarnStoppedCommitted); len(w) != 1 || w[0].ResourceID != "off" {
			t.Errorf("warnings %+v", w)
		}
	})
	t.Run("an unused commitment is a finding and is paid", func(t *testing.T) {
		p := runHeld(t, []fleet.Held{ri("ri-9", "p4d.24xlarge", 2, "13.5", false)}, inst("g5", "g5.xlarge", busyUtil))
		w := warningsOf(p, WarnUnusedCommitment)
		if len(w) != 1 || w[0].ResourceID != "ri-9" || !strings.Contains(w[0].Message, "$19,710.00 of the $19,710.00") || !strings.Contains(w[0].Message, "no uncovered running usage") {
			t.Errorf("warnings %+v", w)
		}
		if !p.Summary.UnusedCommitmentMonthly.Equal(decimal.NewFromInt(19710)) || p.Summary.CurrentMonthly.LessThan(decimal.NewFromInt(19710)) {
			t.Errorf("summary %+v", p.Summary)
		}
	})
	t.Run("new commitments are net of what is held", func(t *testing.T) {
		p := runHeld(t, []fleet.Held{ri("ri-1", "g5.xlarge", 1, "0.6", false)}, inst("a", "g5.xlarge", busyUtil), inst("b", "g5.xlarge", busyUtil))
		var buys []string
		for _, r := range p.Recommendations {
			if r.Kind == KindCommitment {
				buys = append(buys, r.ResourceID)
			}
		}
		if len(buys) != 1 || buys[0] != "b" {
			t.Errorf("commitments advised for %v, want only the uncovered b", buys)
		}
		excluded := false
		for _, g := range p.Commitments.Groups {
			for _, x := range g.Excluded {
				excluded = excluded || x.ID == "a" && strings.Contains(x.Reason, "ri-1")
			}
		}
		if !excluded {
			t.Errorf("the covered instance is not excluded naming ri-1: %+v", p.Commitments.Groups)
		}
	})
}

// TestHeldProperties: over generated fleets with random commitments, no
// recommendation saves what a commitment already pays, no projected cost
// falls below the commitments paid, and the summary is the sum of its parts.
func TestHeldProperties(t *testing.T) {
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	pol := DefaultPolicy().WithPurchases(purchasetest.Purchases())
	reallocated := 0
	for seed := range uint64(8) {
		f := fleetgen.Generate(fleetgen.Options{Instances: 300, Seed: seed, SampleShare: 0.2, MaxSamples: 200, Hostile: seed%2 == 1})
		if err := pricing.Complete(f, cat); err != nil {
			t.Fatal(err)
		}
		f.Commitments = randomHeld(rand.New(rand.NewPCG(seed, 33)), f)
		for i := range f.Instances {
			if in := &f.Instances[i]; in.Commitment != nil && in.Commitment.ID != "" {
				in.Commitment.ID = ""
			}
		}
		if err := f.Validate(); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		p := Run(f, cat, pol)
		checkSums(t, p)
		checkHeld(t, p)
		reallocated += checkReallocations(t, p)
		covered := 0
		for _, ic := range p.Instances {
			if ic.CoveredShare > 0 {
				covered++
			}
		}
		if covered == 0 {
			t.Errorf("seed %d: no instance covered: the property is not exercised", seed)
		}
	}
	t.Logf("%d reallocations checked over 8 fleets", reallocated)
	if reallocated == 0 {
		t.Error("no reallocation in any fleet: its invariants are not exercised")
	}
}

// randomHeld draws commitments over a fleet's own types and regions: RIs
// (exact and size-flexible), savings plans, Azure reservations, GCP CUDs and
// reservations, some larger than the usage and some expired.
func randomHeld(r *rand.Rand, f *fleet.Fleet) []fleet.Held {
	var out []fleet.Held
	for i := 0; i < 40; i++ {
		in := f.Instances[r.IntN(len(f.Instances))]
		h := fleet.Held{ID: "held-" + string(rune('a'+i%26)) + strings.Repeat("x", i/26), Provider: in.Provider, Term: "1y",
			Scope: fleet.HeldScope{Level: "region", Region: in.Region}}
		rate := decimal.NewFromFloat(0.5 + r.Float64()*20).Round(3)
		switch in.Provider {
		case fleet.AWS:
			switch r.IntN(3) {
			case 0:
				h.Kind, h.InstanceType, h.Count, h.SizeFlexible, h.HourlyRate = fleet.HeldStandardRI, in.InstanceType, float64(1+r.IntN(3)), r.IntN(2) == 0, &rate
			case 1:
				h.Kind, h.HourlyCommitment = fleet.HeldComputeSavingsPlan, &rate
				h.Scope = fleet.HeldScope{}
			default:
				h.Kind, h.InstanceType, h.Count, h.Term = fleet.HeldCapacityReservation, in.InstanceType, 1, ""
			}
		case fleet.Azure:
			h.Kind, h.InstanceType, h.Count, h.HourlyRate = fleet.HeldReservation, in.InstanceType, float64(1+r.IntN(2)), &rate
		case fleet.GCP:
			if r.IntN(2) == 0 {
				h.Kind, h.HourlyCommitment = fleet.HeldResourceCUD, &rate
				h.Resources = []fleet.HeldResource{{Type: "vcpu", Amount: float64(8 + r.IntN(64))}, {Type: "memory", Amount: float64(32 + r.IntN(256))}}
				if in.GPU.Model != "" {
					h.Resources = append(h.Resources, fleet.HeldResource{Type: "gpu", GPUModel: in.GPU.Model, Amount: float64(1 + r.IntN(8))})
				}
			} else {
				h.Kind, h.HourlyCommitment = fleet.HeldSpendCUD, &rate
			}
		}
		if r.IntN(8) == 0 {
			end := week.Start
			h.End = &end
		}
		out = append(out, h)
	}
	return out
}
