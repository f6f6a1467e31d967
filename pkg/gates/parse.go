package gates

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/recommend"
	"github.com/gpufinops/gpufinops/pkg/suggest"
)

// ParseError is a malformed --fail-on value: the value, the column (from 1)
// where the problem is, and what was expected there.
type ParseError struct {
	Value  string
	Column int
	Msg    string
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("--fail-on %q: at column %d: %s", e.Value, e.Column, e.Msg)
}

// Parse reads --fail-on values. Each value holds one or more expressions
// separated by commas; each gives one Gate.
func Parse(values []string) ([]Gate, error) {
	var out []Gate
	for _, v := range values {
		p := parser{value: v}
		gs, err := p.parseValue()
		if err != nil {
			return nil, err
		}
		out = append(out, gs...)
	}
	return out, nil
}

// parser reads one flag value; offsets are byte offsets into value.
type parser struct{ value string }

func (p parser) errorf(off int, format string, args ...any) error {
	return &ParseError{Value: p.value, Column: len([]rune(p.value[:off])) + 1, Msg: fmt.Sprintf(format, args...)}
}

// span is a piece of the value and where it starts.
type span struct {
	text string
	off  int
}

// split cuts s (at offset off) at every sep.
func split(s span, sep string) []span {
	var out []span
	for {
		i := strings.Index(s.text, sep)
		if i < 0 {
			return append(out, s)
		}
		out = append(out, span{s.text[:i], s.off})
		s = span{s.text[i+len(sep):], s.off + i + len(sep)}
	}
}

// trim drops surrounding spaces, keeping the offset right.
func trim(s span) span {
	t := strings.TrimLeftFunc(s.text, unicode.IsSpace)
	off := s.off + len(s.text) - len(t)
	return span{strings.TrimRightFunc(t, unicode.IsSpace), off}
}

func (p parser) parseValue() ([]Gate, error) {
	var out []Gate
	for i, e := range split(span{p.value, 0}, ",") {
		e = trim(e)
		if e.text == "" {
			if i == 0 {
				return nil, p.errorf(e.off, "expected an expression such as savings>5000")
			}
			return nil, p.errorf(e.off, "expected an expression after \",\"")
		}
		g, err := p.parseExpr(e)
		if err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, nil
}

func (p parser) parseExpr(e span) (Gate, error) {
	g := Gate{Expr: e.text}
	type placed struct {
		f   Filter
		off int
	}
	var filters []placed
	var metricsAt []int
	for i, t := range split(e, "&&") {
		t = trim(t)
		if t.text == "" {
			if i == 0 {
				return g, p.errorf(t.off, "expected a term before \"&&\"")
			}
			return g, p.errorf(t.off, "expected a term after \"&&\"")
		}
		name, op, val, err := p.parseTerm(t)
		if err != nil {
			return g, err
		}
		switch name.text {
		case FilterConfidence, FilterKind, FilterProvider:
			f, err := p.parseFilter(name, op, val)
			if err != nil {
				return g, err
			}
			filters = append(filters, placed{f, name.off})
			continue
		}
		c, err := p.parseComparison(name, op, val)
		if err != nil {
			return g, err
		}
		g.Comparisons = append(g.Comparisons, c)
		metricsAt = append(metricsAt, name.off)
	}
	if len(g.Comparisons) == 0 {
		return g, p.errorf(e.off, "expected a comparison such as savings>5000 besides the filters (%s)", strings.Join(Metrics, ", "))
	}
	// A filter must apply to every comparison it restricts.
	for _, pf := range filters {
		for j, c := range g.Comparisons {
			if !slices.Contains(filtersOf[c.Metric], pf.f.Field) {
				return g, p.errorf(pf.off, "%s does not apply to %s (at column %d); it takes %s",
					pf.f.Field, c.name(), len([]rune(p.value[:metricsAt[j]]))+1, describeFilters(c.Metric))
			}
		}
		g.Filters = append(g.Filters, pf.f)
	}
	return g, nil
}

func describeFilters(metric string) string {
	fs := filtersOf[metric]
	if len(fs) == 1 {
		return "only " + fs[0] + "="
	}
	return strings.Join(fs, ", ") + " filters"
}

// parseTerm splits "name op value".
func (p parser) parseTerm(t span) (name span, op Op, val span, err error) {
	i := strings.IndexAny(t.text, "<>=!")
	if i < 0 {
		return name, "", val, p.errorf(t.off+len(t.text), "expected an operator (> >= < <= = !=) after %q", t.text)
	}
	name = trim(span{t.text[:i], t.off})
	if name.text == "" {
		return name, "", val, p.errorf(t.off, "expected a metric (%s) before %q", strings.Join(Metrics, ", "), t.text[i:i+1])
	}
	rest := t.text[i:]
	for _, o := range ops {
		if strings.HasPrefix(rest, string(o)) {
			op = o
			break
		}
	}
	if op == "" {
		return name, "", val, p.errorf(t.off+i, "expected an operator (> >= < <= = !=), got %q", rest[:1])
	}
	val = trim(span{rest[len(op):], t.off + i + len(op)})
	if val.text == "" {
		return name, op, val, p.errorf(val.off, "expected a value after %q", string(op))
	}
	return name, op, val, nil
}

func (p parser) parseFilter(name span, op Op, val span) (Filter, error) {
	f := Filter{Field: name.text, Op: op, Value: val.text}
	var allowed []string
	switch f.Field {
	case FilterConfidence:
		allowed = []string{"low", "medium", "high"}
	case FilterKind:
		for _, k := range recommend.Kinds {
			allowed = append(allowed, string(k))
		}
	default:
		// Every cloud a fleet (and so a report) can hold.
		for _, c := range fleet.Providers {
			allowed = append(allowed, string(c))
		}
	}
	if !slices.Contains(allowed, f.Value) {
		return f, p.errorf(val.off, "expected %s to be one of %s, got %q%s", f.Field, strings.Join(allowed, ", "), f.Value, suggest.Phrase(f.Value, allowed, suggest.Quoted))
	}
	if f.Field != FilterConfidence && op != OpEQ && op != OpNE {
		return f, p.errorf(name.off+len(name.text), "expected = or != after %s, got %q", f.Field, string(op))
	}
	return f, nil
}

func (p parser) parseComparison(name span, op Op, val span) (Comparison, error) {
	c := Comparison{Metric: name.text, Op: op}
	if m, kind, ok := strings.Cut(name.text, ":"); ok {
		c.Metric, c.Kind = m, kind
		if m != MetricSavings {
			return c, p.errorf(name.off, "expected a metric (%s, or savings:<kind>), got %q", strings.Join(Metrics, ", "), name.text)
		}
		if !slices.Contains(recommend.Kinds, recommend.Kind(kind)) {
			kinds := make([]string, len(recommend.Kinds))
			for i, k := range recommend.Kinds {
				kinds[i] = string(k)
			}
			return c, p.errorf(name.off+len(m)+1, "expected a kind (%s) after \"savings:\", got %q%s", strings.Join(kinds, ", "), kind,
				suggest.Phrase(kind, kinds, suggest.Quoted))
		}
	} else if _, known := filtersOf[c.Metric]; !known {
		return c, p.errorf(name.off, "expected a metric (%s, savings:<kind>) or a filter (confidence, kind, provider), got %q%s",
			strings.Join(Metrics, ", "), name.text, suggest.Phrase(name.text, append(slices.Clone(Metrics), "confidence", "kind", "provider"), suggest.Quoted))
	}
	d, err := decimal.NewFromString(val.text)
	if err != nil || strings.ContainsAny(val.text, "eE") {
		return c, p.errorf(val.off, "expected a number after %q, got %q", string(op), val.text)
	}
	if len(val.text) > maxNumberLength || d.Abs().GreaterThan(maxValue) {
		return c, p.errorf(val.off, "%s is out of range; want a number up to %s", shorten(val.text), maxValue)
	}
	switch c.Metric {
	case MetricSavingsPercent:
		if d.IsNegative() || d.GreaterThan(decimal.NewFromInt(100)) {
			return c, p.errorf(val.off, "expected a percentage 0–100 after %q, got %s", string(op), val.text)
		}
	case MetricIdleGPUs, MetricRecommendations, MetricWarnings:
		if d.IsNegative() {
			return c, p.errorf(val.off, "expected a count (0 or more) after %q, got %s", string(op), val.text)
		}
	}
	c.Value = d
	return c, nil
}

// Bounds of a comparison's number: far above any fleet's monthly spend.
const maxNumberLength = 32

var maxValue = decimal.New(1, 15)

// shorten cuts a long value for a message.
func shorten(s string) string {
	if r := []rune(s); len(r) > 20 {
		return string(r[:20]) + "…"
	}
	return s
}
