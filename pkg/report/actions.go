package report

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/gpufinops/gpufinops/pkg/recommend"
)

// The table format's default view ranks machines, not recommendations: one
// row per machine with the steps the plan chains for it (the planner computes
// each step on what the earlier ones left, so a machine's saving is the sum of
// its steps), largest saving first. Protected machines and tagging advice are
// one line each; -o json keeps every recommendation.

// DefaultLimit is how many machines the ranked view lists when the screen's
// height is unknown (a pipe).
const DefaultLimit = 20

// machineAction is one machine's combined advice.
type machineAction struct {
	resource, provider, account, region, instanceType string
	// label names a managed AI item as what it is ("sagemaker endpoint
	// chat-demo/AllTraffic ×2"); empty for a VM.
	label string
	// steps are its recommendations with a counted saving, in plan order.
	steps                       []Recommendation
	current, optimized, savings Money
	confidence, risk            string
}

// actionPlan is the report seen machine by machine.
type actionPlan struct {
	// machines save something, largest saving first, ties by resource.
	machines []machineAction
	// protected are the recommendations idle-stop protection kept out of
	// the saving; protectedSavings what they would have saved.
	protected        []Recommendation
	protectedSavings Money
	// tagged counts the machines with tagging advice; other counts the
	// recommendations, tagging aside, that save nothing directly.
	tagged, other int
	// idleStops counts the stop and schedule steps among the machines.
	idleStops int
}

// rank orders every recommendation of r by machine.
func rank(r *Report) actionPlan {
	var p actionPlan
	cur := r.Summary.CurrentMonthlyCost.cur
	p.protectedSavings = Money{cur: cur}
	// Machines are told apart by provider, account and region as well: two
	// projects may name an instance alike.
	type machineKey struct{ provider, account, region, resource string }
	instances := make(map[machineKey]*Instance, len(r.Instances))
	for i := range r.Instances {
		in := &r.Instances[i]
		instances[machineKey{in.Provider, in.Account, in.Region, in.ResourceID}] = in
	}
	index := map[machineKey]int{}
	tagged := map[machineKey]bool{}
	for _, sec := range sections(r) {
		for _, rec := range sec.recs {
			switch {
			case rec.Protected != nil && !rec.Protected.Counted:
				p.protected = append(p.protected, rec)
				p.protectedSavings.d = p.protectedSavings.d.Add(rec.Protected.PotentialMonthlySavings.d)
				continue
			case rec.Kind == string(recommend.KindTagging):
				tagged[machineKey{rec.Provider, rec.Account, rec.Region, rec.ResourceID}] = true
				continue
			case !rec.MonthlySavings.d.IsPositive():
				// A managed item's zero-saving step (idle shutdown after a
				// stop) joins the item's row when it has one.
				i, ok := index[machineKey{rec.Provider, rec.Account, rec.Region, rec.ResourceID}]
				if rec.Change == nil || !ok {
					p.other++
					continue
				}
				p.machines[i].steps = append(p.machines[i].steps, rec)
				continue
			}
			k := machineKey{rec.Provider, rec.Account, rec.Region, rec.ResourceID}
			i, ok := index[k]
			if !ok {
				i = len(p.machines)
				index[k] = i
				m := machineAction{resource: rec.ResourceID, provider: rec.Provider, account: rec.Account,
					region: rec.Region, instanceType: rec.InstanceType, current: rec.CurrentMonthlyCost,
					savings: Money{cur: rec.MonthlySavings.cur}}
				if in := instances[k]; in != nil && in.CurrentMonthlyCost != nil {
					m.current = *in.CurrentMonthlyCost
				}
				if in := instances[k]; in != nil && in.Managed != nil {
					m.label = managedLabel(in.Managed)
				}
				p.machines = append(p.machines, m)
			}
			m := &p.machines[i]
			m.steps = append(m.steps, rec)
			m.savings.d = m.savings.d.Add(rec.MonthlySavings.d)
			if rec.Kind == string(recommend.KindIdleStop) || rec.Kind == string(recommend.KindSchedule) {
				p.idleStops++
			}
		}
	}
	p.tagged = len(tagged)
	for i := range p.machines {
		m := &p.machines[i]
		m.optimized = Money{d: m.current.d.Sub(m.savings.d), cur: m.current.cur}
		m.confidence, m.risk = m.steps[0].Confidence, m.steps[0].Risk
		for _, s := range m.steps[1:] {
			if level(s.Confidence) < level(m.confidence) {
				m.confidence = s.Confidence
			}
			if level(s.Risk) > level(m.risk) {
				m.risk = s.Risk
			}
		}
	}
	slices.SortStableFunc(p.machines, func(a, b machineAction) int {
		return cmp.Or(b.savings.d.Cmp(a.savings.d), cmp.Compare(a.resource, b.resource))
	})
	return p
}

// level orders low, medium and high; anything else sorts below low.
func level(s string) int { return slices.Index([]string{"low", "medium", "high"}, s) }

// stepText is one step in the ranked view: the short action, led by the
// strategy where the short action does not name it ("rightsize → g5.xlarge",
// "quantize: remove (INT8 replicas)").
func stepText(rec Recommendation) string {
	s := shortActionText(rec)
	if rec.Change != nil {
		return s
	}
	switch rec.Kind {
	case string(recommend.KindIdleStop), string(recommend.KindSchedule), string(recommend.KindShare),
		string(recommend.KindSpot), string(recommend.KindCommitment):
		return s
	}
	if strings.HasPrefix(s, "→") {
		return rec.Kind + " " + s
	}
	if strings.HasPrefix(s, rec.Kind) {
		return s
	}
	return rec.Kind + ": " + s
}

// shortText is the machine's steps on one line, in plan order.
func (m machineAction) shortText() string {
	parts := make([]string, len(m.steps))
	for i, s := range m.steps {
		parts[i] = stepText(s)
	}
	return strings.Join(parts, " + ")
}

// fullText is every step's whole action, in plan order.
func (m machineAction) fullText() string {
	parts := make([]string, len(m.steps))
	for i, s := range m.steps {
		parts[i] = s.Kind + ": " + oneLine(actionText(s))
	}
	return strings.Join(parts, "; ")
}

// rationale is every step's rationale, in plan order.
func (m machineAction) rationale() string {
	parts := make([]string, len(m.steps))
	for i, s := range m.steps {
		parts[i] = oneLine(s.Rationale)
	}
	return strings.Join(parts, " | ")
}

// protectedLine sums the protected recommendations up: how many machines,
// what they would save and why they are kept, most common reason first.
func (p actionPlan) protectedLine(perMonth func(Money) string) string {
	if len(p.protected) == 0 {
		return ""
	}
	machines := map[[4]string]bool{}
	reasons := map[string]int{}
	for _, rec := range p.protected {
		machines[[4]string{rec.Provider, rec.Account, rec.Region, rec.ResourceID}] = true
		reasons[rec.Protected.Reason]++
	}
	keys := make([]string, 0, len(reasons))
	for k := range reasons {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int { return cmp.Or(reasons[b]-reasons[a], cmp.Compare(a, b)) })
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, reasons[k])
	}
	return fmt.Sprintf("Protected: %s kept from stopping (%s), %s not counted; --include-protected counts it",
		plural(len(machines), "machine"), strings.Join(parts, ", "), perMonth(p.protectedSavings))
}

// limit is how many machines the ranked view shows under opts.
func (opts PrintOptions) limit(n int) int {
	switch {
	case opts.All:
		return n
	case opts.Limit > 0:
		return min(opts.Limit, n)
	}
	return min(DefaultLimit, n)
}

// managedLabel names a managed AI item: service, kind, name and, beyond one,
// its billed replicas.
func managedLabel(m *Managed) string {
	s := m.Service + " " + m.Kind
	if m.Name != "" {
		s += " " + m.Name
	}
	if m.Replicas > 1 {
		s += fmt.Sprintf(" ×%d", m.Replicas)
	}
	return s
}

// name is how the ranked view names the machine: a managed item's label,
// else its resource ID.
func (m machineAction) name() string { return cmp.Or(m.label, m.resource) }
