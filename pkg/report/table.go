package report

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/pkg/tableprinter"
)

// How the sections by strategy fit a terminal: long resource IDs lose their
// middle down to minResourceWidth and the short actions wrap onto
// continuation lines down to minActionWidth, never cut; if that is not
// enough, the projected cost, the confidence, the current cost, the instance
// type and the risk give way in that order. The resource, the action and the
// savings always stay.
const (
	minResourceWidth = 16
	minActionWidth   = 26
)

// colors applies a scheme that may be nil (no colour).
type colors struct{ cs *iostreams.ColorScheme }

func (c colors) apply(f func(*iostreams.ColorScheme, string) string, s string) string {
	if c.cs == nil {
		return s
	}
	return f(c.cs, s)
}

func (c colors) bold(s string) string   { return c.apply((*iostreams.ColorScheme).Bold, s) }
func (c colors) green(s string) string  { return c.apply((*iostreams.ColorScheme).Green, s) }
func (c colors) red(s string) string    { return c.apply((*iostreams.ColorScheme).Red, s) }
func (c colors) yellow(s string) string { return c.apply((*iostreams.ColorScheme).Yellow, s) }
func (c colors) gray(s string) string   { return c.apply((*iostreams.ColorScheme).Gray, s) }

// column is one table column: its header, whether it holds numbers, and how
// a recommendation fills it.
type column struct {
	header string
	right  bool
	// key columns are never hidden; min > 0 lets the column shorten to min
	// characters, from its start when fromStart is set.
	key       bool
	min       int
	fromStart bool
	cell      func(Recommendation, bool) string
	// color, if set, colours the cell's text on a terminal.
	color func(colors, Recommendation, string) string
}

// Headers of the columns that give way on a narrow terminal. Headers hold
// only letters and spaces: the terminal table spaces out other punctuation.
const (
	resourceHeader = "resource"
	typeHeader     = "instance type"
	actionHeader   = "action"
)

func tableColumns(wide bool) []column {
	money := func(f func(Recommendation) Money) func(Recommendation, bool) string {
		return func(rec Recommendation, tty bool) string { return formatMoney(f(rec), tty) }
	}
	field := func(f func(Recommendation) string) func(Recommendation, bool) string {
		return func(rec Recommendation, _ bool) string { return f(rec) }
	}
	resource := column{header: resourceHeader, key: true, min: minResourceWidth, fromStart: true,
		cell: field(func(r Recommendation) string { return r.ResourceID })}
	action := column{header: actionHeader, key: true, min: minActionWidth, cell: field(shortActionText)}
	if wide {
		action = column{header: actionHeader, key: true, cell: field(actionText)}
	}
	cols := []column{resource}
	if wide {
		cols = append(cols,
			column{header: "provider", cell: field(func(r Recommendation) string { return r.Provider })},
			column{header: "account", cell: field(func(r Recommendation) string { return r.Account })},
			column{header: "region", cell: field(func(r Recommendation) string { return r.Region })},
		)
	}
	cols = append(cols,
		column{header: typeHeader, cell: field(func(r Recommendation) string { return r.InstanceType })},
		action,
		column{header: "current", right: true, cell: money(func(r Recommendation) Money { return r.CurrentMonthlyCost })},
		column{header: "projected", right: true, cell: money(func(r Recommendation) Money { return r.ProjectedMonthlyCost })},
		column{header: "savings", right: true, key: true, cell: money(func(r Recommendation) Money { return r.MonthlySavings }),
			color: func(c colors, _ Recommendation, s string) string { return c.green(s) }},
		column{header: "confidence", cell: field(func(r Recommendation) string { return r.Confidence })},
		column{header: "risk", cell: field(func(r Recommendation) string { return r.Risk }),
			color: func(c colors, r Recommendation, s string) string {
				if r.Risk == "high" {
					return c.red(s)
				}
				return s
			}},
	)
	if wide {
		cols = append(cols, column{header: "rationale", cell: field(func(r Recommendation) string { return r.Rationale })})
	}
	return cols
}

// dropOrder is the order in which columns give way on a narrow terminal.
var dropOrder = []string{"projected", "confidence", "current", typeHeader, "risk"}

// writeTable prints the table and wide formats: a title and headline, one
// section per strategy, totals, warnings and a pointer to the evidence.
func writeTable(w io.Writer, r *Report, opts PrintOptions, wide bool) error {
	tty := opts.TTY
	width := opts.Width
	if width <= 0 {
		width = DefaultWidth
	}
	c := colors{}
	if tty {
		c.cs = opts.Color
	}
	perMonth := func(m Money) string {
		if tty {
			return formatMoney(m, true) + "/mo"
		}
		return m.String() + " " + m.Currency() + "/mo"
	}
	s := r.Summary
	var b strings.Builder

	writeHeadline(&b, r, c, perMonth)

	secs := sections(r)
	if len(secs) == 0 {
		b.WriteString("\nNo savings found.\n")
	}
	cols := tableColumns(wide)
	if len(secs) > 0 {
		headers := make([]string, len(cols))
		for j, col := range cols {
			headers[j] = col.header
		}
		tp := tableprinter.New(&b, tty, headers...)
		if tty && !wide {
			tp.SetWidth(width)
		}
		var drop []int
		for _, h := range dropOrder {
			if j := slices.IndexFunc(cols, func(c column) bool { return c.header == h }); j >= 0 {
				drop = append(drop, j)
			}
		}
		tp.DropOrder(drop...)
		var recs []Recommendation
		for j, col := range cols {
			if col.right {
				tp.AlignRight(j)
			}
			if col.key {
				tp.Key(j)
			}
			switch {
			case col.header == actionHeader:
				tp.WrapColumn(j, minActionWidth)
			case col.min > 0 && col.fromStart:
				tp.TruncateMiddle(j, col.min)
			case col.min > 0:
				tp.Truncate(j, col.min)
			}
		}
		tp.Style(func(row, j int, text string) string {
			if cols[j].color == nil {
				return text
			}
			return cols[j].color(c, recs[row], text)
		})
		for _, sec := range secs {
			tp.Section("\n" + c.bold(sectionHeading(sec, s.SavingsByKind[sec.kind], perMonth)))
			for _, rec := range sec.recs {
				row := make([]string, len(cols))
				for j, col := range cols {
					row[j] = col.cell(rec, tty)
				}
				tp.AddRow(row...)
				recs = append(recs, rec)
			}
		}
		if err := tp.Render(); err != nil {
			return err
		}
	}
	if len(secs) > 0 {
		fmt.Fprintf(&b, "\nTotal: %s, saving %s of %s (%s)\n",
			plural(len(r.Recommendations), "recommendation"), c.green(perMonth(s.MonthlySavings)),
			perMonth(s.CurrentMonthlyCost), percent(s.SavingsPercent))
	}
	switch {
	case s.UnpricedCount == 1:
		b.WriteString("1 instance has no price and is left out of the costs.\n")
	case s.UnpricedCount > 1:
		fmt.Fprintf(&b, "%d instances have no price and are left out of the costs.\n", s.UnpricedCount)
	}
	if err := writeTableSections(&b, r, c, tty, wide, width); err != nil {
		return err
	}
	writeWarnings(&b, r.Warnings, c, 0)
	b.WriteString("\n" + c.gray("Amounts are "+currencyNote(r)+" per month; every figure's evidence (metrics, thresholds, prices, formula) is in -o json.") + "\n")
	out := b.String()
	if tty && !wide {
		out = tableprinter.Wrap(out, width)
	}
	_, err := io.WriteString(w, out)
	return err
}

// title names the fleet and counts what is in it.
func title(r *Report) string {
	name := r.Source.Fleet
	if name == "" {
		name = "(unnamed)"
	}
	t := "Fleet " + name
	if r.Source.Path != "" {
		t += " (" + r.Source.Path + ")"
	}
	t += fmt.Sprintf(" · %s · %s GPUs", plural(r.Summary.InstanceCount, "instance"),
		strconv.FormatFloat(r.Summary.GPUCount, 'f', -1, 64))
	if r.Summary.UnpricedCount > 0 {
		t += fmt.Sprintf(" · %d unpriced", r.Summary.UnpricedCount)
	}
	return t
}

// warningText is one warning on one line: "resource: message [code]".
func warningText(wn Warning) string {
	msg := oneLine(wn.Message)
	if wn.ResourceID != "" {
		msg = wn.ResourceID + ": " + msg
	}
	return msg + " [" + wn.Code + "]"
}
