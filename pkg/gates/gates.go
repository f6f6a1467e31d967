package gates

import (
	"fmt"
	"slices"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/recommend"
	"github.com/gpufinops/gpufinops/pkg/report"
)

// The metrics a comparison may name.
const (
	// MetricSavings is the monthly savings of the recommendations counted.
	MetricSavings = "savings"
	// MetricSavingsPercent is those savings as a share of the current cost.
	MetricSavingsPercent = "savings-percent"
	// MetricCurrentCost is the current monthly cost of the priced instances.
	MetricCurrentCost = "current-cost"
	// MetricUntaggedSpend is the monthly cost of the instances with a missing
	// or invalid tag (the report's tagAudit).
	MetricUntaggedSpend = "untagged-spend"
	// MetricIdleGPUs counts the GPUs on idle-stop recommendations.
	MetricIdleGPUs = "idle-gpus"
	// MetricRecommendations counts the recommendations.
	MetricRecommendations = "recommendations"
	// MetricWarnings counts the report's warnings.
	MetricWarnings = "warnings"
)

// The filter fields.
const (
	FilterConfidence = "confidence"
	FilterKind       = "kind"
	FilterProvider   = "provider"
)

// Metrics lists every metric in the order help shows them; "savings:<kind>"
// is savings restricted to one kind.
var Metrics = []string{MetricSavings, MetricSavingsPercent, MetricCurrentCost, MetricUntaggedSpend,
	MetricIdleGPUs, MetricRecommendations, MetricWarnings}

// filtersOf says which filters restrict each metric: the recommendation
// metrics take all three, the instance totals only the provider.
var filtersOf = map[string][]string{
	MetricSavings:         {FilterConfidence, FilterKind, FilterProvider},
	MetricSavingsPercent:  {FilterConfidence, FilterKind, FilterProvider},
	MetricIdleGPUs:        {FilterConfidence, FilterKind, FilterProvider},
	MetricRecommendations: {FilterConfidence, FilterKind, FilterProvider},
	MetricCurrentCost:     {FilterProvider},
	MetricUntaggedSpend:   {FilterProvider},
	MetricWarnings:        {FilterProvider},
}

// Op is a comparison operator.
type Op string

// The operators, longest first so that parsing finds ">=" before ">".
const (
	OpGE Op = ">="
	OpLE Op = "<="
	OpNE Op = "!="
	OpGT Op = ">"
	OpLT Op = "<"
	OpEQ Op = "="
)

var ops = []Op{OpGE, OpLE, OpNE, OpGT, OpLT, OpEQ}

// holds reports whether "a op b" is true for a comparison result c = a.Cmp(b).
func (o Op) holds(c int) bool {
	switch o {
	case OpGT:
		return c > 0
	case OpGE:
		return c >= 0
	case OpLT:
		return c < 0
	case OpLE:
		return c <= 0
	case OpEQ:
		return c == 0
	default:
		return c != 0
	}
}

// Comparison is one metric compared with a number, e.g. savings>5000.
type Comparison struct {
	// Metric is one of Metrics.
	Metric string
	// Kind restricts savings to one recommendation kind (savings:spot).
	Kind  string
	Op    Op
	Value decimal.Decimal
}

// name is the metric as written: "savings" or "savings:spot".
func (c Comparison) name() string {
	if c.Kind != "" {
		return c.Metric + ":" + c.Kind
	}
	return c.Metric
}

// String writes the comparison as Parse reads it, e.g. "savings:spot>1000".
func (c Comparison) String() string { return c.name() + string(c.Op) + c.Value.String() }

// Filter restricts what the comparisons of its gate count, e.g. confidence=high.
type Filter struct {
	// Field is confidence, kind or provider.
	Field string
	Op    Op
	Value string
}

func (f Filter) String() string { return f.Field + string(f.Op) + f.Value }

// confidenceRank orders the confidence grades for <, <=, > and >=.
var confidenceRank = map[string]int{"low": 0, "medium": 1, "high": 2}

// match reports whether a recommendation passes the filter.
func (f Filter) match(rec report.Recommendation) bool {
	switch f.Field {
	case FilterConfidence:
		got, ok := confidenceRank[rec.Confidence]
		return ok && f.Op.holds(cmpInt(got, confidenceRank[f.Value]))
	case FilterKind:
		return f.Op.holds(strings.Compare(rec.Kind, f.Value))
	default:
		return f.Op.holds(strings.Compare(rec.Provider, f.Value))
	}
}

// matchProvider reports whether an instance's provider passes a provider filter.
func (f Filter) matchProvider(provider string) bool {
	return f.Op.holds(strings.Compare(provider, f.Value))
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Gate is one --fail-on expression: it trips when every comparison holds,
// each counted over what the filters let through.
type Gate struct {
	// Expr is the expression as given.
	Expr        string
	Comparisons []Comparison
	Filters     []Filter
}

// String writes the gate in a canonical form Parse reads back to the same
// comparisons and filters: the comparisons, then the filters, joined by "&&".
func (g Gate) String() string {
	parts := make([]string, 0, len(g.Comparisons)+len(g.Filters))
	for _, c := range g.Comparisons {
		parts = append(parts, c.String())
	}
	for _, f := range g.Filters {
		parts = append(parts, f.String())
	}
	return strings.Join(parts, "&&")
}

// Result is a gate evaluated on a report.
type Result struct {
	Gate    Gate
	Tripped bool
	// Reason states the figures, e.g. "savings 85757.94 > 5000"; set when
	// the gate tripped.
	Reason string
}

// Evaluate evaluates every gate on r, in order. The amounts are those of r, in
// its currency (evaluate the USD report for USD thresholds).
func Evaluate(gs []Gate, r *report.Report) []Result {
	out := make([]Result, 0, len(gs))
	for _, g := range gs {
		out = append(out, g.Evaluate(r))
	}
	return out
}

// Tripped returns the results that tripped.
func Tripped(rs []Result) []Result {
	var out []Result
	for _, r := range rs {
		if r.Tripped {
			out = append(out, r)
		}
	}
	return out
}

// Evaluate evaluates the gate on r.
func (g Gate) Evaluate(r *report.Report) Result {
	res := Result{Gate: g, Tripped: len(g.Comparisons) > 0}
	var parts []string
	for _, c := range g.Comparisons {
		v := value(r, c, g.Filters)
		if !c.Op.holds(v.Cmp(c.Value)) {
			res.Tripped = false
		}
		parts = append(parts, fmt.Sprintf("%s %s %s %s", c.name(), display(c.Metric, v), c.Op, c.Value))
	}
	if !res.Tripped {
		return res
	}
	res.Reason = strings.Join(parts, " and ")
	if len(g.Filters) > 0 {
		fs := make([]string, len(g.Filters))
		for i, f := range g.Filters {
			fs[i] = f.String()
		}
		res.Reason += " where " + strings.Join(fs, " and ")
	}
	return res
}

// display renders a metric's value: money to the cent, the percentage to one
// decimal, counts as they are.
func display(metric string, v decimal.Decimal) string {
	switch metric {
	case MetricSavings, MetricCurrentCost, MetricUntaggedSpend:
		return v.StringFixed(2)
	case MetricSavingsPercent:
		return v.StringFixed(1)
	}
	return v.String()
}

// value computes a comparison's metric on r over what the filters let through.
func value(r *report.Report, c Comparison, filters []Filter) decimal.Decimal {
	recs := matching(r, c, filters)
	providerOf := map[string]string{}
	for _, in := range r.Instances {
		providerOf[in.ResourceID] = in.Provider
	}
	providerOK := func(provider string) bool {
		for _, f := range filters {
			if f.Field == FilterProvider && !f.matchProvider(provider) {
				return false
			}
		}
		return true
	}
	switch c.Metric {
	case MetricSavings:
		return sumSavings(recs)
	case MetricRecommendations:
		return decimal.NewFromInt(int64(len(recs)))
	case MetricIdleGPUs:
		gpus := map[string]float64{}
		for _, in := range r.Instances {
			gpus[in.ResourceID] = in.GPUCount
		}
		seen := map[string]bool{}
		total := decimal.Zero
		for _, rec := range recs {
			if rec.Kind == string(recommend.KindIdleStop) && !seen[rec.ResourceID] {
				seen[rec.ResourceID] = true
				total = total.Add(decimal.NewFromFloat(gpus[rec.ResourceID]))
			}
		}
		return total
	case MetricSavingsPercent:
		if len(filters) == 0 {
			return r.Summary.SavingsPercent.Decimal()
		}
		cur := currentCost(r, providerOK)
		if cur.IsZero() {
			return decimal.Zero
		}
		return sumSavings(recs).Mul(decimal.NewFromInt(100)).Div(cur).Round(1)
	case MetricCurrentCost:
		return currentCost(r, providerOK)
	case MetricUntaggedSpend:
		a := r.TagAudit
		if a == nil {
			return decimal.Zero
		}
		if len(filters) == 0 {
			return a.UntaggedMonthlyCost.Decimal()
		}
		total := decimal.Zero
		for _, v := range a.Violations {
			if !v.Compliant && v.MonthlyCost != nil && providerOK(providerOf[v.ResourceID]) {
				total = total.Add(v.MonthlyCost.Decimal())
			}
		}
		return total
	default: // MetricWarnings
		n := 0
		for _, w := range r.Warnings {
			prov := providerOf[w.ResourceID]
			if w.Scope != nil && w.Scope.Provider != "" {
				prov = w.Scope.Provider
			}
			if len(filters) == 0 || providerOK(prov) {
				n++
			}
		}
		return decimal.NewFromInt(int64(n))
	}
}

// matching returns the recommendations the comparison counts.
func matching(r *report.Report, c Comparison, filters []Filter) []report.Recommendation {
	var out []report.Recommendation
	for _, rec := range r.Recommendations {
		if c.Kind != "" && rec.Kind != c.Kind {
			continue
		}
		if !slices.ContainsFunc(filters, func(f Filter) bool { return !f.match(rec) }) {
			out = append(out, rec)
		}
	}
	return out
}

func sumSavings(recs []report.Recommendation) decimal.Decimal {
	total := decimal.Zero
	for _, rec := range recs {
		total = total.Add(rec.MonthlySavings.Decimal())
	}
	return total
}

// currentCost is the summary's current cost, or the sum over the priced
// instances that pass a provider filter.
func currentCost(r *report.Report, providerOK func(string) bool) decimal.Decimal {
	total := decimal.Zero
	for _, in := range r.Instances {
		if in.Priced && in.CurrentMonthlyCost != nil && providerOK(in.Provider) {
			total = total.Add(in.CurrentMonthlyCost.Decimal())
		}
	}
	return total
}
