package report

import (
	"slices"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/coverage"
	"github.com/gpufinops/gpufinops/pkg/recommend"
)

// CommitmentsHeld is what the commitments the fleet already holds cover,
// pay and leave unused (since 1.7); docs/commitments.md.
type CommitmentsHeld struct {
	// CoveragePercent is CoveredOnDemandMonthlyCost over
	// OnDemandMonthlyCost × 100: the share of the running usage, valued on
	// demand, that commitments cover.
	CoveragePercent            Number `json:"coveragePercent"`
	CoveredOnDemandMonthlyCost Money  `json:"coveredOnDemandMonthlyCost"`
	OnDemandMonthlyCost        Money  `json:"onDemandMonthlyCost"`
	// Commitments are the fleet's commitments, in its order.
	Commitments []HeldCommitment `json:"commitments"`
}

// HeldCommitment is one commitment the fleet holds.
type HeldCommitment struct {
	ID       string `json:"id"`
	Provider string `json:"provider" jsonschema:"enum=aws,enum=azure,enum=gcp"`
	Kind     string `json:"kind"`
	Region   string `json:"region,omitempty"`
	// Active is false outside its term at the report's date: neither paid
	// nor applied.
	Active bool `json:"active"`
	// Priced is false when its price is unknown: the costs are then zero.
	Priced bool `json:"priced"`
	// Capacity says what it buys, e.g. "1 × g5.12xlarge (96 normalized units, family g5)".
	Capacity string `json:"capacity,omitempty"`
	// PaidMonthlyCost is what it costs a month, used or not; UsedMonthlyCost
	// the part that covers usage, UnusedMonthlyCost the rest.
	PaidMonthlyCost   Money `json:"paidMonthlyCost"`
	UsedMonthlyCost   Money `json:"usedMonthlyCost"`
	UnusedMonthlyCost Money `json:"unusedMonthlyCost"`
	// UnusedHourlyCost is UnusedMonthlyCost per hour (÷ 730).
	UnusedHourlyCost Number `json:"unusedHourlyCost"`
	// UtilizationPercent is the part of its capacity used.
	UtilizationPercent float64 `json:"utilizationPercent"`
	// Covers are the instances it covers; CouldCover uncovered running
	// instances in its scope that its unused part could cover.
	Covers     []string `json:"covers,omitempty"`
	CouldCover []string `json:"couldCover,omitempty"`
	// Notes say how it was priced or matched where that was not exact.
	Notes []string `json:"notes,omitempty"`
}

var hoursPerMonth = decimal.NewFromInt(730)

// newCommitmentsHeld is the plan's held commitments; nil when the fleet
// holds none.
func newCommitmentsHeld(held []coverage.Usage, cov recommend.HeldCoverage) *CommitmentsHeld {
	if len(held) == 0 {
		return nil
	}
	out := &CommitmentsHeld{
		CoveragePercent:            NewNumber(decimal.NewFromFloat(cov.Share * 100).Round(1)),
		CoveredOnDemandMonthlyCost: NewMoney(cov.Covered),
		OnDemandMonthlyCost:        NewMoney(cov.OnDemand),
		Commitments:                make([]HeldCommitment, 0, len(held)),
	}
	for _, u := range held {
		out.Commitments = append(out.Commitments, HeldCommitment{
			ID: u.ID, Provider: string(u.Provider), Kind: u.Kind, Region: u.Region, Active: u.Active, Priced: u.Priced,
			Capacity:           u.Capacity,
			PaidMonthlyCost:    NewMoney(u.PaidMonthly),
			UsedMonthlyCost:    NewMoney(u.UsedMonthly),
			UnusedMonthlyCost:  NewMoney(u.UnusedMonthly),
			UnusedHourlyCost:   NewNumber(u.UnusedMonthly.Div(hoursPerMonth).Round(4)),
			UtilizationPercent: decimal.NewFromFloat(u.Utilization * 100).Round(1).InexactFloat64(),
			Covers:             slices.Clone(u.Covers),
			CouldCover:         slices.Clone(u.Candidates),
			Notes:              slices.Clone(u.Notes),
		})
	}
	return out
}

// convertHeld converts the section's amounts.
func (h *CommitmentsHeld) convert(k decimal.Decimal, conv func(Money) Money) {
	if h == nil {
		return
	}
	h.CoveredOnDemandMonthlyCost, h.OnDemandMonthlyCost = conv(h.CoveredOnDemandMonthlyCost), conv(h.OnDemandMonthlyCost)
	for i := range h.Commitments {
		c := &h.Commitments[i]
		c.PaidMonthlyCost, c.UsedMonthlyCost, c.UnusedMonthlyCost = conv(c.PaidMonthlyCost), conv(c.UsedMonthlyCost), conv(c.UnusedMonthlyCost)
		c.UnusedHourlyCost = NewNumber(c.UnusedHourlyCost.d.Mul(k).Round(4))
	}
}

// mergeHeld joins the parts' sections: each commitment belongs to the
// part whose scope holds it.
func mergeHeld(a, b *CommitmentsHeld) *CommitmentsHeld {
	if a == nil {
		if b == nil {
			return nil
		}
		c := *b
		c.Commitments = slices.Clone(b.Commitments)
		return &c
	}
	if b == nil {
		return a
	}
	a.CoveredOnDemandMonthlyCost = addMoney(a.CoveredOnDemandMonthlyCost, b.CoveredOnDemandMonthlyCost)
	a.OnDemandMonthlyCost = addMoney(a.OnDemandMonthlyCost, b.OnDemandMonthlyCost)
	a.CoveragePercent = NewNumber(decimal.Zero)
	if a.OnDemandMonthlyCost.d.IsPositive() {
		a.CoveragePercent = NewNumber(a.CoveredOnDemandMonthlyCost.d.Mul(decimal.NewFromInt(100)).Div(a.OnDemandMonthlyCost.d).Round(1))
	}
	a.Commitments = append(a.Commitments, b.Commitments...)
	return a
}
