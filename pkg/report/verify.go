package report

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/shopspring/decimal"
)

// Verify checks that the report adds up: the summary's current cost is the
// sum of the priced instances' costs, its savings the sum of the
// recommendations' savings (in total and per kind), optimized is current minus
// savings, the counts match the instances, each recommendation's projected
// cost is its current cost minus its savings, and each priced instance's
// savings are those of its recommendations. It reports every mismatch found.
func (r *Report) Verify() error {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	eq := func(what string, got Money, want decimal.Decimal) {
		if !got.d.Equal(want) {
			bad("%s is %s, want %s", what, got, want.StringFixed(2))
		}
	}

	s := r.Summary
	current, gpus, unpriced := decimal.Zero, 0.0, 0
	for _, in := range r.Instances {
		gpus += in.GPUCount
		if !in.Priced {
			unpriced++
			continue
		}
		if in.CurrentMonthlyCost == nil || in.OptimizedMonthlyCost == nil || in.MonthlySavings == nil {
			bad("instance %s is priced but has no monthly costs", in.ResourceID)
			continue
		}
		current = current.Add(in.CurrentMonthlyCost.d)
		eq("instance "+in.ResourceID+" optimizedMonthlyCost", *in.OptimizedMonthlyCost,
			in.CurrentMonthlyCost.d.Sub(in.MonthlySavings.d))
	}

	savings := decimal.Zero
	byKind := map[string]decimal.Decimal{}
	byResource := map[string]decimal.Decimal{}
	ids := map[string]bool{}
	for _, rec := range r.Recommendations {
		if ids[rec.ID] {
			bad("recommendation ID %s appears twice", rec.ID)
		}
		ids[rec.ID] = true
		savings = savings.Add(rec.MonthlySavings.d)
		byKind[rec.Kind] = byKind[rec.Kind].Add(rec.MonthlySavings.d)
		byResource[rec.ResourceID] = byResource[rec.ResourceID].Add(rec.MonthlySavings.d)
		eq("recommendation "+rec.ID+" projectedMonthlyCost", rec.ProjectedMonthlyCost,
			rec.CurrentMonthlyCost.d.Sub(rec.MonthlySavings.d))
	}
	for _, rec := range r.Recommendations {
		if rec.After != "" && !ids[rec.After] {
			bad("recommendation %s is priced after %s, which is not in the report", rec.ID, rec.After)
		}
	}
	for _, in := range r.Instances {
		if in.Priced && in.MonthlySavings != nil {
			eq("instance "+in.ResourceID+" monthlySavings", *in.MonthlySavings, byResource[in.ResourceID])
		}
	}

	eq("summary.currentMonthlyCost", s.CurrentMonthlyCost, current)
	eq("summary.monthlySavings", s.MonthlySavings, savings)
	eq("summary.optimizedMonthlyCost", s.OptimizedMonthlyCost, s.CurrentMonthlyCost.d.Sub(s.MonthlySavings.d))

	kinds := make([]string, 0, len(byKind)+len(s.SavingsByKind))
	for k := range byKind {
		kinds = append(kinds, k)
	}
	for k := range s.SavingsByKind {
		if _, ok := byKind[k]; !ok {
			kinds = append(kinds, k)
		}
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		eq("summary.savingsByKind."+k, s.SavingsByKind[k], byKind[k])
	}

	if s.InstanceCount != len(r.Instances) {
		bad("summary.instanceCount is %d, want %d", s.InstanceCount, len(r.Instances))
	}
	if s.UnpricedCount != unpriced {
		bad("summary.unpricedCount is %d, want %d", s.UnpricedCount, unpriced)
	}
	if math.Abs(s.GPUCount-gpus) > 1e-9 {
		bad("summary.gpuCount is %v, want %v", s.GPUCount, gpus)
	}

	// The percentage is rounded to one decimal; any rounding mode lands
	// within 0.05 of the exact value.
	pct := decimal.Zero
	if !s.CurrentMonthlyCost.d.IsZero() {
		pct = s.MonthlySavings.d.Mul(decimal.NewFromInt(100)).Div(s.CurrentMonthlyCost.d)
	}
	if s.SavingsPercent.d.Sub(pct).Abs().GreaterThan(decimal.RequireFromString("0.05")) {
		bad("summary.savingsPercent is %s, want %s", s.SavingsPercent, pct.StringFixed(1))
	}

	if len(problems) > 0 {
		return errors.New("report does not add up: " + strings.Join(problems, "; "))
	}
	return nil
}
