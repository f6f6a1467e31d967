package report

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/pkg/tableprinter"
)

// How the table format fits a terminal: long resource IDs give way first,
// down to longResourceWidth; then, if the action sentences still do not fit,
// the targets replace them; then resource and action shorten together, down
// to minShrinkWidth, and last the instance type.
const (
	longResourceWidth = 24
	minShrinkWidth    = 12
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
	cell   func(Recommendation, bool) string
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
	resource := column{header: resourceHeader, cell: field(func(r Recommendation) string { return r.ResourceID })}
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
		column{header: actionHeader, cell: field(actionText)},
		column{header: "current", right: true, cell: money(func(r Recommendation) Money { return r.CurrentMonthlyCost })},
		column{header: "projected", right: true, cell: money(func(r Recommendation) Money { return r.ProjectedMonthlyCost })},
		column{header: "savings", right: true, cell: money(func(r Recommendation) Money { return r.MonthlySavings }),
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

// writeTable prints the table and wide formats: a title and headline, one
// section per strategy, totals, warnings and a pointer to the evidence.
func writeTable(w io.Writer, r *Report, opts PrintOptions, wide bool) error {
	tty := opts.TTY
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

	b.WriteString(c.bold(title(r)) + "\n")
	fmt.Fprintf(&b, "Current %s → optimized %s, saving %s (%s)\n",
		perMonth(s.CurrentMonthlyCost), perMonth(s.OptimizedMonthlyCost),
		c.green(perMonth(s.MonthlySavings)), percent(s.SavingsPercent))
	if line := exchangeRateLine(r); line != "" {
		b.WriteString(line + "\n")
	}
	if line := partialScanLine(r); line != "" {
		b.WriteString(c.yellow("! "+line) + "\n")
	}

	secs := sections(r)
	if len(secs) == 0 {
		b.WriteString("\nNo savings found.\n")
	}
	cols := tableColumns(wide)
	cells := tableCells(secs, cols, tty, wide, opts.Width)
	widths := columnWidths(cols, cells)
	for i, sec := range secs {
		fmt.Fprintf(&b, "\n%s\n", c.bold(sectionHeading(sec, s.SavingsByKind[sec.kind], perMonth)))
		headers := make([]string, len(cols))
		var right []int
		for j, col := range cols {
			headers[j] = col.header
			if col.right {
				right = append(right, j)
			}
		}
		var tb strings.Builder
		tp := tableprinter.New(&tb, tty, headers...)
		tp.AlignRight(right...)
		for k, rec := range sec.recs {
			row := cells[i][k]
			if tty {
				row = styleRow(c, cols, rec, row, widths)
			}
			tp.AddRow(row...)
		}
		if err := tp.Render(); err != nil {
			return err
		}
		b.WriteString(trimColorTail(tb.String()))
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
	if err := writeTableSections(&b, r, c, tty, wide, opts.Width); err != nil {
		return err
	}
	if len(r.Warnings) > 0 {
		fmt.Fprintf(&b, "\n%s\n", c.bold(fmt.Sprintf("Warnings (%d)", len(r.Warnings))))
		for _, wn := range r.Warnings {
			b.WriteString(c.yellow("! "+warningText(wn)) + "\n")
		}
	}
	b.WriteString("\n" + c.gray("Amounts are "+currencyNote(r)+" per month; every figure's evidence (metrics, thresholds, prices, formula) is in -o json.") + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// colorReset ends an ANSI colour.
const colorReset = "\x1b[0m"

// trimColorTail drops the spaces the terminal table leaves before a colour
// reset at the end of a line, so coloured and plain lines end alike.
func trimColorTail(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		for {
			head, ok := strings.CutSuffix(strings.TrimRight(l, " "), colorReset)
			if !ok || head == strings.TrimRight(head, " ") {
				break
			}
			l = strings.TrimRight(head, " ") + colorReset
		}
		lines[i] = l
	}
	return strings.Join(lines, "\n")
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

// tableCells renders the plain text of every cell, section by section. On a
// terminal the table format fits width (see longResourceWidth); shortened
// resource IDs keep their end.
func tableCells(secs []section, cols []column, tty, wide bool, width int) [][][]string {
	out := make([][][]string, len(secs))
	for i, sec := range secs {
		for _, rec := range sec.recs {
			row := make([]string, len(cols))
			for j, col := range cols {
				row[j] = oneLine(col.cell(rec, tty))
			}
			out[i] = append(out[i], row)
		}
	}
	if !tty || wide {
		return out
	}
	if width <= 0 {
		width = DefaultWidth
	}
	widths := columnWidths(cols, out)
	shrink(cols, widths, width, longResourceWidth, resourceHeader)
	if action := slices.IndexFunc(cols, func(c column) bool { return c.header == actionHeader }); tableWidth(widths) > width && action >= 0 {
		// The sentences do not fit: show where each change leads instead.
		for i, sec := range secs {
			for k, rec := range sec.recs {
				if rec.Target != "" {
					out[i][k][action] = "→ " + oneLine(rec.Target)
				}
			}
		}
		widths = columnWidths(cols, out)
		shrink(cols, widths, width, longResourceWidth, resourceHeader)
	}
	shrink(cols, widths, width, minShrinkWidth, resourceHeader, actionHeader)
	shrink(cols, widths, width, minShrinkWidth, typeHeader)
	for _, rows := range out {
		for _, row := range rows {
			for j, col := range cols {
				if col.header == resourceHeader {
					row[j] = truncateLeft(row[j], widths[j])
				} else {
					row[j] = truncate(row[j], widths[j])
				}
			}
		}
	}
	return out
}

// shrink takes a character at a time from the widest of the named columns
// wider than min until the table fits width.
func shrink(cols []column, widths []int, width, min int, headers ...string) {
	for tableWidth(widths) > width {
		widest := -1
		for j, col := range cols {
			if slices.Contains(headers, col.header) && widths[j] > min && (widest < 0 || widths[j] >= widths[widest]) {
				widest = j
			}
		}
		if widest < 0 {
			return
		}
		widths[widest]--
	}
}

// tableWidth is the width of a terminal table with these column widths.
func tableWidth(widths []int) int {
	total := -2 // no gap after the last column
	for _, w := range widths {
		total += w + 2
	}
	return total
}

// columnWidths is the widest cell or header of each column across sections.
func columnWidths(cols []column, cells [][][]string) []int {
	widths := make([]int, len(cols))
	for j, col := range cols {
		widths[j] = utf8.RuneCountInString(col.header)
	}
	for _, rows := range cells {
		for _, row := range rows {
			for j, cell := range row {
				widths[j] = max(widths[j], utf8.RuneCountInString(cell))
			}
		}
	}
	return widths
}

// styleRow pads every cell to its column's width across all sections, so the
// sections line up, and colours the text.
func styleRow(c colors, cols []column, rec Recommendation, row []string, widths []int) []string {
	out := make([]string, len(row))
	for j, cell := range row {
		pad := strings.Repeat(" ", max(0, widths[j]-utf8.RuneCountInString(cell)))
		text := cell
		if cols[j].color != nil {
			text = cols[j].color(c, rec, cell)
		}
		if cols[j].right {
			out[j] = pad + text
		} else {
			out[j] = text + pad
		}
	}
	return out
}
