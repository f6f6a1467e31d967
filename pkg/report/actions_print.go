package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/gpufinops/gpufinops/pkg/tableprinter"
)

// How the ranked view fits a terminal: the resource loses its middle down to
// minActionsResource and the action wraps onto continuation lines down to
// minActionsAction, never cut; before the action wraps that far the
// optimized cost, the confidence, the current cost, the instance type and
// the risk give way, in that order. Nothing else is shortened.
const (
	minActionsResource = 16
	minActionsAction   = 44
)

// actionsDropOrder is the order in which the ranked view's minor columns give way.
var actionsDropOrder = []string{"optimized", "confidence", "current", typeHeader, "risk"}

// actionColumn is one column of the ranked view.
type actionColumn struct {
	header string
	right  bool
	cell   func(machineAction, bool) string
}

func actionColumns(wide bool) []actionColumn {
	money := func(f func(machineAction) Money) func(machineAction, bool) string {
		return func(m machineAction, tty bool) string { return formatMoney(f(m), tty) }
	}
	action := actionColumn{header: actionHeader, cell: func(m machineAction, _ bool) string { return m.shortText() }}
	if wide {
		action.cell = func(m machineAction, _ bool) string { return m.fullText() }
	}
	cols := []actionColumn{{header: resourceHeader, cell: func(m machineAction, _ bool) string { return m.name() }}}
	if wide {
		cols[0].cell = func(m machineAction, _ bool) string {
			if m.label != "" {
				return m.label + " · " + m.resource
			}
			return m.resource
		}
		cols = append(cols,
			actionColumn{header: "provider", cell: func(m machineAction, _ bool) string { return m.provider }},
			actionColumn{header: "account", cell: func(m machineAction, _ bool) string { return m.account }},
			actionColumn{header: "region", cell: func(m machineAction, _ bool) string { return m.region }},
		)
	}
	cols = append(cols,
		actionColumn{header: typeHeader, cell: func(m machineAction, _ bool) string { return m.instanceType }},
		action,
		actionColumn{header: "current", right: true, cell: money(func(m machineAction) Money { return m.current })},
		actionColumn{header: "optimized", right: true, cell: money(func(m machineAction) Money { return m.optimized })},
		actionColumn{header: "savings", right: true, cell: money(func(m machineAction) Money { return m.savings })},
		actionColumn{header: "confidence", cell: func(m machineAction, _ bool) string { return m.confidence }},
		actionColumn{header: "risk", cell: func(m machineAction, _ bool) string { return m.risk }},
	)
	return cols
}

// writeActions prints the ranked view (table) or its detailed form (wide): the
// headline, the machines to act on first, one line each for what is hidden,
// protected and tagging advice, the warnings grouped, and the total with
// what to run next last.
func writeActions(w io.Writer, r *Report, opts PrintOptions, wide bool) error {
	tty := opts.TTY
	width := opts.Width
	if width <= 0 {
		width = DefaultWidth
	}
	c := colors{}
	if tty {
		c.cs = opts.Color
	}
	perMonth := perMonthFunc(tty)
	p := rank(r)
	shown := opts.limit(len(p.machines))

	render := func(shown int, compact bool) string {
		var b strings.Builder
		writeHeadline(&b, r, c, perMonth)
		if len(p.machines) == 0 {
			b.WriteString("\nNo savings found.\n")
		} else {
			b.WriteString("\n")
			top := p.machines[:shown]
			if wide && tty && !fitsTable(top, width) {
				writeRecords(&b, top, c, width)
			} else {
				writeActionTable(&b, top, c, tty, wide, width)
			}
		}
		writeActionNotes(&b, r, p, shown, c, perMonth)
		cut := 0
		if compact {
			cut = width
		}
		writeWarnings(&b, r.Warnings, c, cut)
		writeActionsEnd(&b, r, p, shown, wide, c, perMonth)
		out := b.String()
		if tty {
			out = tableprinter.Wrap(out, width)
		}
		return out
	}
	out := render(shown, false)
	// On a terminal of known height the default view fits one screen up to
	// its total: fewer machines until it does, down to minFitRows; then the
	// warnings one line each, and fewer machines again, five at least.
	if tty && !opts.All && opts.Limit == 0 && opts.Height > 0 && linesToTotal(out) > opts.Height {
		for _, step := range []struct {
			compact     bool
			from, least int
		}{{false, shown, minFitRows}, {true, min(shown, minFitRows), 5}} {
			for shown = step.from; ; shown-- {
				out = render(shown, step.compact)
				if linesToTotal(out) <= opts.Height || shown <= min(step.least, step.from) {
					break
				}
			}
			if linesToTotal(out) <= opts.Height {
				break
			}
		}
	}
	_, err := io.WriteString(w, out)
	return err
}

// minFitRows is how few machines the default view shows to fit one screen
// before it prints the warnings one line each.
const minFitRows = 10

// totalPrefix starts the ranked view's total line.
const totalPrefix = "Total: "

// linesToTotal counts the lines up to the end of the total, its wrapped
// continuation lines with it.
func linesToTotal(out string) int {
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if strings.HasPrefix(tableprinter.StripColor(l), totalPrefix) {
			n := i + 1
			for n < len(lines) && strings.HasPrefix(lines[n], "  ") {
				n++
			}
			return n
		}
	}
	return len(lines)
}

// perMonthFunc writes an amount a month: "$1,234.56/mo", or "1234.56 USD/mo"
// for pipes.
func perMonthFunc(tty bool) func(Money) string {
	return func(m Money) string {
		if tty {
			return formatMoney(m, true) + "/mo"
		}
		return m.String() + " " + m.Currency() + "/mo"
	}
}

// writeHeadline writes the title, the headline and the lines that qualify it
// (unused commitments, exchange rate, partial scan, bill).
func writeHeadline(b *strings.Builder, r *Report, c colors, perMonth func(Money) string) {
	s := r.Summary
	b.WriteString(c.bold(title(r)) + "\n")
	fmt.Fprintf(b, "Current %s → optimized %s, saving %s (%s)\n",
		perMonth(s.CurrentMonthlyCost), perMonth(s.OptimizedMonthlyCost),
		c.green(perMonth(s.MonthlySavings)), percent(s.SavingsPercent))
	if u := s.UnusedCommitmentMonthlyCost; u != nil {
		b.WriteString(c.yellow("! current and optimized include "+perMonth(*u)+" of commitments paid for nothing (unused-commitment)") + "\n")
	}
	if line := exchangeRateLine(r); line != "" {
		b.WriteString(line + "\n")
	}
	if line := partialScanLine(r); line != "" {
		b.WriteString(c.yellow("! "+line) + "\n")
	}
	if r.Billing != nil {
		b.WriteString("Bill: " + r.Billing.Line + "\n")
	}
}

// writeActionTable writes the machines as a table: on a terminal aligned to
// width (wide: as wide as it needs), elsewhere tab-separated and whole.
func writeActionTable(b *strings.Builder, ms []machineAction, c colors, tty, wide bool, width int) {
	cols := actionColumns(wide)
	headers := make([]string, len(cols))
	for j, col := range cols {
		headers[j] = col.header
	}
	if !tty && wide {
		headers = append(headers, "rationale")
	}
	tp := tableprinter.New(b, tty, headers...)
	if tty && !wide {
		tp.SetWidth(width)
	}
	var drop []int
	for _, h := range actionsDropOrder {
		for j, col := range cols {
			if col.header == h {
				drop = append(drop, j)
			}
		}
	}
	tp.DropOrder(drop...)
	savings := -1
	for j, col := range cols {
		if col.right {
			tp.AlignRight(j)
		}
		switch col.header {
		case resourceHeader:
			tp.Key(j)
			tp.TruncateMiddle(j, minActionsResource)
		case actionHeader:
			tp.Key(j)
			tp.WrapColumn(j, minActionsAction)
		case "savings":
			tp.Key(j)
			savings = j
		}
	}
	tp.Style(func(row, j int, text string) string {
		switch {
		case j == savings:
			return c.green(text)
		case cols[j].header == "risk" && ms[row].risk == "high":
			return c.red(text)
		}
		return text
	})
	for _, m := range ms {
		row := make([]string, len(headers))
		for j, col := range cols {
			row[j] = col.cell(m, tty)
		}
		if len(headers) > len(cols) {
			row[len(cols)] = m.rationale()
		}
		tp.AddRow(row...)
	}
	_ = tp.Render()
}

// fitsTable reports whether the wide table of ms fits width.
func fitsTable(ms []machineAction, width int) bool {
	var b strings.Builder
	writeActionTable(&b, ms, colors{}, true, true, 0)
	for _, l := range strings.Split(b.String(), "\n") {
		if tableprinter.Width(l) > width {
			return false
		}
	}
	return true
}

// writeRecords writes each machine as a block of "key: value" lines, for a
// terminal too narrow for the wide table: nothing is cut, long values wrap
// under themselves.
func writeRecords(b *strings.Builder, ms []machineAction, c colors, width int) {
	for i, m := range ms {
		if i > 0 {
			b.WriteString("\n")
		}
		head := fmt.Sprintf("%d. ", i+1)
		for k, l := range tableprinter.WrapWords(m.name(), max(20, width-len(head))) {
			if k > 0 {
				head = strings.Repeat(" ", len(head))
			}
			b.WriteString(c.bold(head+l) + "\n")
		}
		where := []string{m.provider}
		if m.label != "" {
			where = append(where, m.resource)
		}
		for _, s := range []string{m.account, m.region, m.instanceType} {
			if s != "" {
				where = append(where, s)
			}
		}
		fields := [][2]string{
			{"where", strings.Join(where, " · ")},
			{"cost", formatMoney(m.current, true) + "/mo → " + formatMoney(m.optimized, true) + "/mo, saving " + c.green(formatMoney(m.savings, true)+"/mo")},
			{"confidence", m.confidence + ", risk " + m.risk},
		}
		for _, s := range m.steps {
			fields = append(fields, [2]string{s.Kind, oneLine(actionText(s)) + " (" + formatMoney(s.MonthlySavings, true) + "/mo)"})
			if s.Rationale != "" {
				fields = append(fields, [2]string{"why", oneLine(s.Rationale)})
			}
		}
		keyWidth := 0
		for _, f := range fields {
			keyWidth = max(keyWidth, tableprinter.Width(f[0]))
		}
		indent := strings.Repeat(" ", 3+keyWidth+2)
		for _, f := range fields {
			lines := tableprinter.WrapWords(f[1], max(20, width-len(indent)))
			fmt.Fprintf(b, "   %s:%s%s\n", f[0], strings.Repeat(" ", keyWidth-tableprinter.Width(f[0])+1), lines[0])
			for _, l := range lines[1:] {
				b.WriteString(indent + l + "\n")
			}
		}
	}
}

// writeActionNotes writes one line each for the machines not shown, the
// protected machines, tagging advice, recommendations without a direct
// saving and unpriced instances.
func writeActionNotes(b *strings.Builder, r *Report, p actionPlan, shown int, c colors, perMonth func(Money) string) {
	var lines []string
	if hidden := len(p.machines) - shown; hidden > 0 {
		rest := Money{cur: r.Summary.MonthlySavings.cur}
		for _, m := range p.machines[shown:] {
			rest.d = rest.d.Add(m.savings.d)
		}
		lines = append(lines, fmt.Sprintf("%s not shown, saving %s together (--all lists them)", plural(hidden, "more machine"), perMonth(rest)))
	}
	if line := p.protectedLine(perMonth); line != "" {
		lines = append(lines, line)
	}
	if p.tagged > 0 {
		verb := "miss"
		if p.tagged == 1 {
			verb = "misses"
		}
		lines = append(lines, fmt.Sprintf("Tagging: %s %s required tags (no direct saving); see '%s'", plural(p.tagged, "machine"), verb, tagsCommand))
	}
	if p.other > 0 {
		lines = append(lines, fmt.Sprintf("%s save nothing directly (see -o json)", plural(p.other, "other recommendation")))
	}
	switch n := r.Summary.UnpricedCount; {
	case n == 1:
		lines = append(lines, "1 instance has no price and is left out of the costs.")
	case n > 1:
		lines = append(lines, fmt.Sprintf("%d instances have no price and are left out of the costs.", n))
	}
	if len(lines) > 0 {
		b.WriteString("\n" + strings.Join(lines, "\n") + "\n")
	}
}

// writeWarnings writes the warnings grouped by code (stale prices by source),
// each group on one line; with cut > 0 a line is cut to cut columns.
func writeWarnings(b *strings.Builder, ws []Warning, c colors, cut int) {
	if len(ws) == 0 {
		return
	}
	groups := groupWarnings(ws)
	heading := warningsHeading(ws, groups)
	if cut > 0 {
		heading = fmt.Sprintf("Warnings (%d, cut to a line each; each one whole in -o json)", len(ws))
	}
	fmt.Fprintf(b, "\n%s\n", c.bold(heading))
	for _, g := range groups {
		for _, l := range g.lines(cut > 0) {
			l = "! " + l
			if cut > 0 {
				l = truncate(l, cut)
			}
			b.WriteString(c.yellow(l) + "\n")
		}
	}
}

// writeActionsEnd writes the total and what to run next.
func writeActionsEnd(b *strings.Builder, r *Report, p actionPlan, shown int, wide bool, c colors, perMonth func(Money) string) {
	s := r.Summary
	b.WriteString("\n")
	if len(p.machines) > 0 {
		fmt.Fprintf(b, "%s\n", c.bold(fmt.Sprintf("%s%s on %s, saving %s of %s (%s)", totalPrefix,
			plural(len(r.Recommendations), "recommendation"), plural(len(p.machines), "machine"),
			c.green(perMonth(s.MonthlySavings)), perMonth(s.CurrentMonthlyCost), percent(s.SavingsPercent))))
	}
	var next []string
	if shown < len(p.machines) {
		next = append(next, "--all for every machine")
	}
	if !wide {
		next = append(next, "-o wide for each step and why")
	}
	next = append(next, "-o json for the evidence",
		"--by strategy for the sections by strategy, cost by team and AI metrics")
	if p.idleStops > 0 {
		next = append(next, "'gpufinops idle-stop' to stop the idle machines")
	}
	b.WriteString(c.gray("Amounts are "+currencyNote(r)+" per month. Next: "+strings.Join(next, ", ")+".") + "\n")
}
