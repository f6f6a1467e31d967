package recommend

import (
	"strings"

	"github.com/gpufinops/gpufinops/pkg/governance"
)

// governanceReport audits tags, allocates cost and computes AI cost metrics
// over every instance (current and optimized cost), then adds a tagging
// recommendation, with no saving of its own, to each running instance whose
// tags are incomplete.
func (e *engine) governanceReport(states []*state) governance.Report {
	items := make([]governance.Item, len(states))
	for i, s := range states {
		it := governance.NewItem(s.inst)
		if s.priced {
			it.Priced = true
			it.MonthlyCost = s.cost0.MonthlyCost
			it.OptimizedCost = s.cost()
			it.HourlyPrice = s.cost0.Hourly.Hourly
		}
		items[i] = it
	}
	rep := governance.Build(items, e.policy.Governance)
	byID := map[string]*state{}
	for _, s := range states {
		byID[s.inst.ID] = s
	}
	for _, v := range rep.Audit.Violations {
		s := byID[v.ResourceID]
		if v.Compliant || s == nil || !s.priced || s.stopped || s.inst.State != "running" {
			continue
		}
		var problems []string
		for _, vi := range v.Violations {
			problems = append(problems, vi.Message)
		}
		e.record(s, &change{
			kind:       KindTagging,
			target:     "tag " + strings.Join(append(append([]string{}, v.Missing...), v.Invalid...), ", "),
			short:      "tag " + strings.Join(append(append([]string{}, v.Missing...), v.Invalid...), ", "),
			keep:       true,
			confidence: High,
			risk:       Low,
			action:     v.Action,
			rationale:  "Untagged GPU spend cannot be shown back to a team or project, and escapes budgets and reviews: " + strings.Join(problems, "; ") + ".",
			evidence: Evidence{
				Prices:  priceList(s.price),
				Formula: "no saving of its own: tagging makes the spend attributable (docs/governance.md)",
				Notes:   problems,
			},
		})
	}
	return rep
}
