package reportdiff

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/report"
	"github.com/gpufinops/gpufinops/pkg/tableprinter"
)

// Formats lists the output formats Write accepts, in the order help shows them.
var Formats = []string{"table", "json", "markdown"}

// PrintOptions say where a diff is printed.
type PrintOptions struct {
	// TTY selects the rendering for people: aligned columns and "$1,234.56".
	// Otherwise tables are tab-separated with plain numbers.
	TTY bool
	// Width is the terminal width the tables fit; 0 means no limit.
	Width int
}

// Write prints d to w in format, one of Formats.
func Write(w io.Writer, d *Diff, format string, opts PrintOptions) error {
	switch format {
	case "table":
		return writeTable(w, d, opts.TTY, opts.Width)
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(d)
	case "markdown":
		return writeMarkdown(w, d)
	}
	return fmt.Errorf("unknown output format %q: use one of %s", format, strings.Join(Formats, ", "))
}

// writeTable prints the summary deltas, then a table of instance changes and
// one of recommendation changes.
func writeTable(w io.Writer, d *Diff, tty bool, width int) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Report diff: %s (%s) → %s (%s)\n\n", d.Old.File, d.Old.GeneratedAt, d.New.File, d.New.GeneratedAt)
	s := d.Summary
	t := tableprinter.New(&b, tty, "total", "old", "new", "change")
	t.AlignRight(1, 2, 3)
	for _, row := range summaryRows(s, func(m report.Money) string { return money(m, tty) },
		func(m report.Money) string { return signedMoney(m, tty) }) {
		t.AddRow(row[:]...)
	}
	if err := t.Render(); err != nil {
		return err
	}

	in := d.Instances
	fmt.Fprintf(&b, "\nInstances: %s\n", instanceCounts(in))
	if n := len(in.Added) + len(in.Removed) + len(in.Changed); n > 0 {
		t := tableprinter.New(&b, tty, "change", "resource", "provider", "region", "details", "cost/mo")
		t.AlignRight(5)
		t.SetWidth(width)
		t.Key(0, 1, 4, 5)
		t.TruncateMiddle(1, 12)
		t.WrapColumn(4, 20)
		t.DropOrder(2, 3)
		for _, r := range instanceRows(in, tty) {
			t.AddRow(r...)
		}
		if err := t.Render(); err != nil {
			return err
		}
	}

	rs := d.Recommendations
	fmt.Fprintf(&b, "\nRecommendations: %s\n", recommendationCounts(rs, func(m report.Money) string { return money(m, tty) }))
	if n := len(rs.New) + len(rs.Resolved) + len(rs.Changed); n > 0 {
		t := tableprinter.New(&b, tty, "change", "id", "kind", "resource", "savings/mo", "details")
		t.AlignRight(4)
		// The id is kind:resource: on a terminal it gives way to them.
		t.SetWidth(width)
		t.Key(0, 2, 3, 4, 5)
		t.TruncateMiddle(3, 12)
		t.WrapColumn(5, 20)
		t.DropOrder(1)
		for _, r := range recommendationRows(rs, tty) {
			t.AddRow(r...)
		}
		if err := t.Render(); err != nil {
			return err
		}
	}
	out := b.String()
	if tty && width > 0 {
		out = tableprinter.Wrap(out, width)
	}
	_, err := io.WriteString(w, out)
	return err
}

// summaryRows are the label, old, new and change of each total.
func summaryRows(s Summary, amount, signed func(report.Money) string) [][4]string {
	md := func(label string, m MoneyDelta) [4]string {
		return [4]string{label, amount(m.Old), amount(m.New), signed(m.Change)}
	}
	id := func(label string, i IntDelta) [4]string {
		return [4]string{label, strconv.Itoa(i.Old), strconv.Itoa(i.New), signedInt(i.Change)}
	}
	p := s.SavingsPercent
	return [][4]string{
		md("Current monthly cost", s.CurrentMonthlyCost),
		md("Optimized monthly cost", s.OptimizedMonthlyCost),
		md("Monthly savings", s.MonthlySavings),
		{"Savings %", p.Old.Decimal().StringFixed(1), p.New.Decimal().StringFixed(1), signedDecimal(p.Change.Decimal().Round(1), 1) + " pts"},
		id("Instances", s.InstanceCount),
		id("Recommendations", s.RecommendationCount),
	}
}

// instanceRows are the instance changes: added, removed, then changed.
func instanceRows(in Instances, tty bool) [][]string {
	var rows [][]string
	for _, x := range in.Added {
		rows = append(rows, []string{"added", x.ResourceID, x.Provider, x.Region, describe(x), optMoney(x.CurrentMonthlyCost, tty)})
	}
	for _, x := range in.Removed {
		rows = append(rows, []string{"removed", x.ResourceID, x.Provider, x.Region, describe(x), optMoney(x.CurrentMonthlyCost, tty)})
	}
	for _, c := range in.Changed {
		cost := ""
		if c.CurrentMonthlyCost != nil {
			cost = money(c.CurrentMonthlyCost.Old, tty) + " → " + money(c.CurrentMonthlyCost.New, tty)
		}
		rows = append(rows, []string{"changed", c.ResourceID, c.Provider, c.Region, instanceChangeText(c), cost})
	}
	return rows
}

// recommendationRows are the recommendation changes: new, resolved, then changed.
func recommendationRows(rs Recommendations, tty bool) [][]string {
	var rows [][]string
	for _, r := range rs.New {
		rows = append(rows, []string{"new", r.ID, r.Kind, r.ResourceID, money(r.MonthlySavings, tty), actionText(r)})
	}
	for _, r := range rs.Resolved {
		rows = append(rows, []string{"resolved", r.ID, r.Kind, r.ResourceID, money(r.MonthlySavings, tty), actionText(r)})
	}
	for _, c := range rs.Changed {
		m := c.MonthlySavings
		sav := money(m.New, tty)
		if !m.Change.Decimal().IsZero() {
			sav = money(m.Old, tty) + " → " + money(m.New, tty)
		}
		rows = append(rows, []string{"changed", c.ID, c.Kind, c.ResourceID, sav, recommendationChangeText(c)})
	}
	return rows
}

// recommendationChangeText names what changed besides the saving; a changed
// action is given in its new wording only, the old one being in the old report.
func recommendationChangeText(c RecommendationChange) string {
	parts := []string{}
	var rest []FieldChange
	for _, f := range c.Fields {
		if f.Field == "action" {
			parts = append(parts, "now: "+f.New)
			continue
		}
		rest = append(rest, f)
	}
	if t := fieldsText(rest); t != "" {
		parts = append(parts, t)
	}
	if len(parts) == 0 {
		return "saving"
	}
	return strings.Join(parts, "; ")
}

func describe(x Instance) string {
	return x.InstanceType + ", " + x.Lifecycle + ", " + x.State
}

func instanceChangeText(c InstanceChange) string {
	parts := []string{}
	if f := fieldsText(c.Fields); f != "" {
		parts = append(parts, f)
	}
	if c.Priced != nil {
		if c.Priced.New {
			parts = append(parts, "now priced")
		} else {
			parts = append(parts, "no longer priced")
		}
	}
	if len(parts) == 0 {
		return "cost"
	}
	return strings.Join(parts, "; ")
}

// fieldsText is "lifecycle spot → on-demand; state running → stopped".
func fieldsText(fs []FieldChange) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = f.Field + " " + orNone(f.Old) + " → " + orNone(f.New)
	}
	return strings.Join(parts, "; ")
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func actionText(r Recommendation) string {
	if r.Target == "" || strings.Contains(r.Action, r.Target) {
		return r.Action
	}
	return r.Action + " → " + r.Target
}

func instanceCounts(in Instances) string {
	return fmt.Sprintf("%d added, %d removed, %d changed", len(in.Added), len(in.Removed), len(in.Changed))
}

func recommendationCounts(rs Recommendations, amount func(report.Money) string) string {
	return fmt.Sprintf("%d new (%s/mo), %d resolved (%s/mo), %d changed",
		len(rs.New), amount(sum(rs.New)), len(rs.Resolved), amount(sum(rs.Resolved)), len(rs.Changed))
}

// money renders an amount: on a terminal "$12,345.67" ("€12,345.67" for a
// EUR diff), elsewhere "12345.67".
func money(m report.Money, tty bool) string {
	if !tty {
		return m.String()
	}
	return m.Format()
}

func optMoney(m *report.Money, tty bool) string {
	if m == nil {
		return "unpriced"
	}
	return money(*m, tty)
}

// signedMoney renders a change with its sign: "+$1,234.56", "-$12.00",
// "$0.00"; in pipes "+1234.56".
func signedMoney(m report.Money, tty bool) string {
	s := money(m, tty)
	if m.Decimal().IsPositive() {
		return "+" + s
	}
	return s
}

func signedInt(n int) string {
	if n > 0 {
		return "+" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}

func signedDecimal(d decimal.Decimal, places int32) string {
	if d.IsPositive() {
		return "+" + d.StringFixed(places)
	}
	return d.StringFixed(places)
}
