package report

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/commitplan"
	"github.com/gpufinops/gpufinops/pkg/recommend"
)

// Verify checks that the report adds up: the summary's current cost is the
// sum of the priced instances' costs, its savings the sum of the
// recommendations' savings (in total and per kind), optimized is current minus
// savings, the counts match the instances, each recommendation's projected
// cost is its current cost minus its savings, and each priced instance's
// savings are those of its recommendations. It reports every mismatch found.
//
// Of the sections added in 1.1 (absent in older reports, and then not
// checked): every allocation dimension's buckets add up to the summary's
// current and optimized costs and instance count; the sharing plan frees
// exactly the instances the share recommendations stop, for their savings; the
// commitment groups' savings at the policy's term are the commitment
// recommendations' savings, and at their recommended terms the plan's total;
// the tag audit's untagged spend and compliant count match its violations; and
// tagging recommendations save nothing.
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
		gpus += in.billedGPUs()
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

	if u := s.UnusedCommitmentMonthlyCost; u != nil {
		current = current.Add(u.d)
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

	for _, rec := range r.Recommendations {
		if rec.Kind == string(recommend.KindTagging) && !rec.MonthlySavings.d.IsZero() {
			bad("tagging recommendation %s saves %s; tagging saves nothing by itself", rec.ID, rec.MonthlySavings)
		}
	}
	r.verifyAllocation(bad)
	r.verifySharing(bad)
	r.verifyCommitments(bad)
	r.verifyTagAudit(bad)

	if len(problems) > 0 {
		return errors.New("report does not add up: " + strings.Join(problems, "; "))
	}
	return nil
}

// badFunc records one problem Verify found.
type badFunc func(format string, args ...any)

// verifyAllocation: the allocation's totals are the summary's, and each
// dimension's buckets add up to them.
func (r *Report) verifyAllocation(bad badFunc) {
	a := r.Allocation
	if a == nil {
		return
	}
	s := r.Summary
	// The allocation splits the instances' costs; unused commitment no
	// instance carries belongs to none of its buckets.
	current, optimized, less := s.CurrentMonthlyCost.d, s.OptimizedMonthlyCost.d, ""
	if u := s.UnusedCommitmentMonthlyCost; u != nil {
		current, optimized, less = current.Sub(u.d), optimized.Sub(u.d), " less unusedCommitmentMonthlyCost"
	}
	if !a.CurrentMonthlyCost.d.Equal(current) {
		bad("allocation.currentMonthlyCost is %s, but summary.currentMonthlyCost%s is %s", a.CurrentMonthlyCost, less, current.StringFixed(2))
	}
	if !a.OptimizedMonthlyCost.d.Equal(optimized) {
		bad("allocation.optimizedMonthlyCost is %s, but summary.optimizedMonthlyCost%s is %s", a.OptimizedMonthlyCost, less, optimized.StringFixed(2))
	}
	for _, dim := range []struct {
		name    string
		buckets []CostBucket
	}{
		{"byTeam", a.ByTeam}, {"byProject", a.ByProject}, {"byWorkloadType", a.ByWorkloadType},
		{"byEnvironment", a.ByEnvironment}, {"byProvider", a.ByProvider},
	} {
		cur, opt, n := decimal.Zero, decimal.Zero, 0
		for _, b := range dim.buckets {
			cur, opt, n = cur.Add(b.CurrentMonthlyCost.d), opt.Add(b.OptimizedMonthlyCost.d), n+b.Instances
		}
		if !cur.Equal(a.CurrentMonthlyCost.d) {
			bad("allocation.%s adds up to a current cost of %s, want %s", dim.name, cur.StringFixed(2), a.CurrentMonthlyCost)
		}
		if !opt.Equal(a.OptimizedMonthlyCost.d) {
			bad("allocation.%s adds up to an optimized cost of %s, want %s", dim.name, opt.StringFixed(2), a.OptimizedMonthlyCost)
		}
		if n != s.InstanceCount {
			bad("allocation.%s counts %d instances, want %d (summary.instanceCount)", dim.name, n, s.InstanceCount)
		}
	}
}

// verifySharing: the plan frees the instances the share recommendations
// stop, and its freed cost is their savings.
func (r *Report) verifySharing(bad badFunc) {
	sh := r.Sharing
	if sh == nil {
		return
	}
	groups := decimal.Zero
	freed := map[string]bool{}
	for _, g := range sh.Groups {
		groups = groups.Add(g.FreedMonthlyCost.d)
		for _, id := range g.Freed {
			freed[id] = true
		}
	}
	if !sh.FreedMonthlyCost.d.Equal(groups) {
		bad("sharing.freedMonthlyCost is %s, but its groups free %s", sh.FreedMonthlyCost, groups.StringFixed(2))
	}
	if want := r.savingsOf(recommend.KindShare); !sh.FreedMonthlyCost.d.Equal(want) {
		bad("sharing.freedMonthlyCost is %s, but the share recommendations save %s", sh.FreedMonthlyCost, want.StringFixed(2))
	}
	shared := map[string]bool{}
	for _, rec := range r.Recommendations {
		if rec.Kind != string(recommend.KindShare) {
			continue
		}
		shared[rec.ResourceID] = true
		if !freed[rec.ResourceID] {
			bad("share recommendation %s: no sharing group frees %s", rec.ID, rec.ResourceID)
		}
	}
	for _, id := range sortedKeys(freed) {
		if !shared[id] {
			bad("sharing frees %s, but no share recommendation stops it", id)
		}
	}
}

// verifyCommitments: the groups' savings at the policy's term are the
// commitment recommendations'; at their recommended terms, the plan's total.
func (r *Report) verifyCommitments(bad badFunc) {
	c := r.Commitments
	if c == nil {
		return
	}
	atTerm, recommended := decimal.Zero, decimal.Zero
	for _, g := range c.Groups {
		found := g.RecommendedTerm == commitplan.None
		for _, t := range g.Terms {
			if t.Term == c.Term {
				atTerm = atTerm.Add(t.MonthlySavings.d)
			}
			if t.Term == g.RecommendedTerm {
				recommended = recommended.Add(t.MonthlySavings.d)
				found = true
			}
		}
		if !found {
			bad("commitments group %s %s %s recommends term %q, which it does not plan", g.Provider, g.Region, g.Family, g.RecommendedTerm)
		}
	}
	if want := r.savingsOf(recommend.KindCommitment); !atTerm.Equal(want) {
		bad("commitments groups save %s at the %s term, but the commitment recommendations save %s",
			atTerm.StringFixed(2), c.Term, want.StringFixed(2))
	}
	if !c.RecommendedMonthlySavings.d.Equal(recommended) {
		bad("commitments.recommendedMonthlySavings is %s, but the groups save %s at their recommended terms",
			c.RecommendedMonthlySavings, recommended.StringFixed(2))
	}
}

// verifyTagAudit: the untagged spend and the compliant count follow from
// the violations.
func (r *Report) verifyTagAudit(bad badFunc) {
	a := r.TagAudit
	if a == nil {
		return
	}
	untagged, nonCompliant := decimal.Zero, 0
	for _, v := range a.Violations {
		if v.Compliant {
			continue
		}
		nonCompliant++
		if v.MonthlyCost != nil {
			untagged = untagged.Add(v.MonthlyCost.d)
		}
	}
	if !a.UntaggedMonthlyCost.d.Equal(untagged) {
		bad("tagAudit.untaggedMonthlyCost is %s, but its non-compliant instances cost %s", a.UntaggedMonthlyCost, untagged.StringFixed(2))
	}
	if a.InstanceCount != r.Summary.InstanceCount {
		bad("tagAudit.instanceCount is %d, want %d (summary.instanceCount)", a.InstanceCount, r.Summary.InstanceCount)
	}
	if want := a.InstanceCount - nonCompliant; a.CompliantCount != want {
		bad("tagAudit.compliantCount is %d, want %d (%d instances, %d with a missing or invalid tag)",
			a.CompliantCount, want, a.InstanceCount, nonCompliant)
	}
}

// savingsOf sums the savings of the recommendations of one kind.
func (r *Report) savingsOf(k recommend.Kind) decimal.Decimal {
	sum := decimal.Zero
	for _, rec := range r.Recommendations {
		if rec.Kind == string(k) {
			sum = sum.Add(rec.MonthlySavings.d)
		}
	}
	return sum
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// billedGPUs is the instance's GPUs times the replicas of a managed item
// (at least one), as the summary counts them.
func (in Instance) billedGPUs() float64 {
	if in.Managed != nil {
		return in.GPUCount * float64(max(1, in.Managed.Replicas))
	}
	return in.GPUCount
}
