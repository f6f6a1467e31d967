package recommend

import (
	"strconv"
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
		// The state holds the summary and hours NewItem would compute.
		it := governance.NewItemSummarized(s.inst, s.summary, s.hours0)
		if s.priced {
			it.Priced = true
			it.MonthlyCost = s.monthly0
			it.OptimizedCost = e.costOf(s)
			it.HourlyPrice = s.hourly0.Hourly
		}
		items[i] = it
	}
	byID := make(map[string]*state, len(states))
	for _, s := range states {
		byID[s.inst.ID] = s
	}
	// A large fleet's untagged instances mostly lack the same tags: each
	// distinct explanation is held once, shared by its recommendations.
	texts := &taggingTexts{}
	// Each instance's recommendation is made as it is audited, so that the
	// audit's detail need not be kept (AuditSummary). The order they are made
	// in does not matter: one per instance, and the plan sorts them.
	each := func(v *governance.InstanceViolations) {
		s := byID[v.ResourceID]
		if !v.Compliant && s != nil && s.priced && !s.stopped && s.inst.State == "running" {
			t := texts.of(v)
			e.record(s, &change{
				kind:       KindTagging,
				target:     t.target,
				short:      t.target,
				keep:       true,
				confidence: High,
				risk:       Low,
				action:     v.Action,
				rationale:  t.rationale,
				evidence: Evidence{
					Prices:  e.priceListOf(s.price),
					Formula: "no saving of its own: tagging makes the spend attributable (docs/governance.md)",
					Notes:   t.problems,
				},
			})
		}
		if e.opts.AuditSummary {
			v.Violations, v.Action = nil, ""
		}
	}
	rep := governance.BuildEach(items, e.policy.Governance, each)
	return rep
}

// taggingText is what the tagging recommendations of instances with the same
// violations share: the target, the rationale and the problems.
type taggingText struct {
	target, rationale string
	problems          []string
}

// taggingTexts holds each distinct taggingText once, by the violations'
// messages and the missing and invalid tags it is made from.
type taggingTexts struct {
	byKey map[string]*taggingText
	key   []byte
	// bySlices finds the text by the violations' and lists' slices: the
	// audit shares them between the instances of one finding and never
	// writes them, so the same slices have the same text.
	bySlices map[sliceKey]*taggingText
}

// sliceKey is where an instance's violations, missing and invalid tags lie
// in memory.
type sliceKey struct {
	violations       *governance.Violation
	missing, invalid *string
	nv, nm, ni       int
}

// first is the address of s's first element, nil when it is empty.
func first[T any](s []T) *T {
	if len(s) == 0 {
		return nil
	}
	return &s[0]
}

// of is the text for an instance's violations.
func (ts *taggingTexts) of(v *governance.InstanceViolations) *taggingText {
	sk := sliceKey{first(v.Violations), first(v.Missing), first(v.Invalid), len(v.Violations), len(v.Missing), len(v.Invalid)}
	if t, ok := ts.bySlices[sk]; ok {
		return t
	}
	t := ts.byContent(v)
	if ts.bySlices == nil {
		ts.bySlices = map[sliceKey]*taggingText{}
	}
	ts.bySlices[sk] = t
	return t
}

// byContent is the text for an instance's violations, found by what they
// say.
func (ts *taggingTexts) byContent(v *governance.InstanceViolations) *taggingText {
	// Each string length-prefixed, each list counted: equal keys, equal
	// texts.
	ts.key = ts.key[:0]
	str := func(s string) {
		ts.key = strconv.AppendInt(ts.key, int64(len(s)), 10)
		ts.key = append(append(ts.key, ':'), s...)
	}
	ts.key = strconv.AppendInt(ts.key, int64(len(v.Violations)), 10)
	for _, vi := range v.Violations {
		str(vi.Message)
	}
	for _, l := range [][]string{v.Missing, v.Invalid} {
		ts.key = strconv.AppendInt(append(ts.key, '/'), int64(len(l)), 10)
		for _, tag := range l {
			str(tag)
		}
	}
	if t, ok := ts.byKey[string(ts.key)]; ok {
		return t
	}
	problems := make([]string, 0, len(v.Violations))
	for _, vi := range v.Violations {
		problems = append(problems, vi.Message)
	}
	t := &taggingText{
		target:    "tag " + strings.Join(append(append([]string{}, v.Missing...), v.Invalid...), ", "),
		rationale: "Untagged GPU spend cannot be shown back to a team or project, and escapes budgets and reviews: " + strings.Join(problems, "; ") + ".",
		problems:  problems,
	}
	if ts.byKey == nil {
		ts.byKey = map[string]*taggingText{}
	}
	ts.byKey[string(ts.key)] = t
	return t
}
