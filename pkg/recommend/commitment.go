package recommend

import (
	"fmt"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/commitplan"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
)

// commitmentRule plans commitments per provider, region and family from the
// hourly usage that the rules before it left (stopped, scheduled, resized and
// spot capacity is never committed), choosing the level that minimises the
// month's cost, and gives each instance its share of the saving.
func commitmentRule(e *engine, active []*state) map[*state]*change {
	pol := e.policy.Commitment
	byID := map[string]*state{}
	for _, s := range active {
		byID[s.inst.ID] = s
	}
	var items []commitplan.Item
	for _, s := range e.all {
		if !s.priced {
			continue
		}
		od := s.price.Hourly
		if s.inst.HourlyPrice == nil || s.lifecycle != fleet.OnDemand {
			offer, ok := e.cat.Offer(s.inst.Provider, s.inst.Region, s.typ.Name)
			if !ok || offer.OnDemand == nil {
				continue
			}
			od = offer.OnDemand.Hourly
		}
		family := s.typ.Family
		items = append(items, commitplan.ItemFrom(s.inst, commitplan.Final{
			InstanceType: s.typ.Name, Family: family, Lifecycle: s.lifecycle, Priced: true,
			OnDemandHourly: od, Hourly: s.price.Hourly, MonthlyHours: s.hours, Schedule: s.schedule,
			Stopped: s.stopped,
		}))
	}
	discounts := map[fleet.Provider]commitplan.Terms{}
	for _, p := range fleet.Providers {
		t := commitplan.Terms{}
		if d, ok := pol.Discounts1y[string(p)]; ok {
			t["1y"] = d
		}
		if d, ok := pol.Discounts3y[string(p)]; ok {
			t["3y"] = d
		}
		discounts[p] = t
	}
	plan, err := commitplan.Build(items, discounts, commitplan.Options{})
	if err != nil {
		e.warn("", "commitment-plan", "no commitment plan: %v", err)
		return nil
	}
	e.commits = plan
	out := map[*state]*change{}
	for _, g := range plan.Groups {
		for _, tp := range g.Terms {
			if tp.Term != pol.Term {
				continue
			}
			for _, a := range tp.Allocations {
				s := byID[a.ID]
				if s == nil || !a.SavingsMonthly.IsPositive() {
					continue
				}
				out[s] = e.commitmentChange(s, g, tp, a)
			}
		}
	}
	return out
}

func (e *engine) commitmentChange(s *state, g commitplan.GroupPlan, tp commitplan.TermPlan, a commitplan.Allocation) *change {
	term := map[string]string{"1y": "1-year", "3y": "3-year"}[tp.Term]
	name := e.commitmentName(s.inst.Provider)
	projected := s.cost().Sub(a.SavingsMonthly)
	committed := s.price
	committed.Option = pricing.Option(fleet.Committed)
	committed.Hourly = s.price.Hourly.Mul(decimal.NewFromFloat(1 - tp.Discount)).Round(6)
	committed.Source = fmt.Sprintf("%s, less the policy's %s commitment discount of %s%%", s.price.Source, term, pct(tp.Discount*100))
	c := &change{
		kind:       KindCommitment,
		target:     term + " " + name,
		lifecycle:  fleet.Committed,
		price:      committed,
		hours:      s.hours,
		projected:  &projected,
		confidence: e.confidenceFor(s),
		risk:       Low,
		action: fmt.Sprintf("Cover it with a %s %s: commit $%s/h of on-demand %s usage in %s (%s%% off); this instance takes %s%% of it",
			term, name, tp.CommitHourly.StringFixed(3), g.Family, g.Region, pct(tp.Discount*100), pct(a.BandShare*100)),
		rationale: fmt.Sprintf("The %s family in %s runs at least $%s/h of on-demand usage in %s%% of the hours; committing up to the level exceeded in 1 − d = %s%% of hours minimises the month's cost (docs/commit-plan.md).",
			g.Family, g.Region, tp.CommitHourly.StringFixed(3), pct(tp.ExceedShare*100), pct((1-tp.Discount)*100)),
		evidence: Evidence{
			Metrics: map[string]float64{
				"groupCommitHourly":        tp.CommitHourly.InexactFloat64(),
				"groupUtilizationPercent":  round2(tp.Utilization * 100),
				"groupRunningSharePercent": round2(g.Usage.RunningShare * 100),
				"bandSharePercent":         round2(a.BandShare * 100),
				"breakEvenPercent":         round2(tp.BreakEven * 100),
			},
			Thresholds: map[string]float64{"discount": tp.Discount},
			Prices:     priceList(s.price, committed),
			Formula:    "choose c minimising c·(1−d)·H + Σ max(u_h − c, 0) over the family's hourly on-demand usage; this instance's saving is its share of the group's",
			Notes: []string{
				"discounts are the policy's (docs/rules.md), not live rates: set your negotiated rates in the config",
				fmt.Sprintf("the %s group saves $%s a month with this term; see 'gpufinops commit-plan' for both terms, the layers and the cost curve", g.Family, tp.SavingsMonthly.StringFixed(2)),
			},
		},
	}
	for _, other := range g.Terms {
		c.evidence.Metrics["groupSavings"+other.Term] = other.SavingsMonthly.InexactFloat64()
	}
	if s.lifecycle == fleet.Spot {
		c.riskNotes = append(c.riskNotes, "it runs on spot today; at its hours a commitment costs less than spot")
	}
	if tp.Term == "3y" {
		c.risk = Medium
	}
	c.riskNotes = append(c.riskNotes, "a commitment is paid whether or not the capacity is used: commit only what you are sure to keep running")
	return c
}
