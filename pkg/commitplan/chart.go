package commitplan

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/money"
)

// Glyphs of the charts.
const (
	glyphCurve   = '•'
	glyphOptimum = '◆'
	glyphUsed    = '█'
	glyphUnused  = '░'
	glyphAbove   = '▒'
	glyphMark    = '▲'
)

func clampInt(v, lo, hi int) int { return min(max(v, lo), hi) }

// Chart draws a term's cost curve, the total monthly cost against the
// commitment level from 0 to the usage peak, with the optimum marked ◆. The
// plot is width × height characters plus axes and labels; the output is
// deterministic.
func Chart(tp TermPlan, width, height int) string { return ChartWith(tp, width, height, Amounts{}) }

// Amounts writes the amounts the charts' sentences name, as the output
// around them writes money: Hourly a commitment level, Monthly a total. The
// zero value writes them plain with their unit ("2.0120 USD/h",
// "1530.46 USD"); the axes' ticks are plain numbers either way.
type Amounts struct {
	Hourly, Monthly func(decimal.Decimal) string
}

func (a Amounts) hourly(d decimal.Decimal) string {
	if a.Hourly != nil {
		return a.Hourly(d)
	}
	return d.StringFixed(4) + " USD/h"
}

func (a Amounts) monthly(d decimal.Decimal) string {
	if a.Monthly != nil {
		return a.Monthly(d)
	}
	return money.Inline(d, money.USD, false)
}

// ChartWith is Chart with its sentences' amounts written by a.
func ChartWith(tp TermPlan, width, height int, a Amounts) string {
	width, height = clampInt(width, 16, 200), clampInt(height, 3, 60)
	if len(tp.Curve) < 2 || tp.Curve[len(tp.Curve)-1].CommitHourly <= 0 {
		return "(no usage to chart)\n"
	}
	xs := make([]float64, len(tp.Curve))
	ys := make([]float64, len(tp.Curve))
	for i, p := range tp.Curve {
		xs[i], ys[i] = p.CommitHourly, p.TotalMonthly.InexactFloat64()
	}
	xmax := xs[len(xs)-1]
	ymin, ymax := slices.Min(ys), slices.Max(ys)
	row := func(y float64) int {
		if ymax == ymin {
			return height / 2
		}
		return int(math.Round((ymax - y) / (ymax - ymin) * float64(height-1)))
	}
	grid := newGrid(width, height)
	prev := -1
	for i := range width {
		r := row(interpolate(xs, ys, xmax*float64(i)/float64(width-1)))
		grid[r][i] = glyphCurve
		if prev >= 0 {
			for rr := min(prev, r) + 1; rr < max(prev, r); rr++ {
				grid[rr][i] = glyphCurve
			}
		}
		prev = r
	}
	opt := tp.CommitHourly.InexactFloat64()
	optY := tp.TotalMonthly.InexactFloat64()
	optCol := int(math.Round(opt / xmax * float64(width-1)))
	grid[row(optY)][optCol] = glyphOptimum

	labels := map[int]string{0: tick(ymax), height - 1: tick(ymin)}
	labels[row(optY)] = tick(optY)
	var b strings.Builder
	fmt.Fprintf(&b, "total USD a month by commitment level (%s, %s off)\n", tp.Term, money.PercentFloat(tp.Discount*100))
	writeRows(&b, grid, labels)
	lw := labelWidth(labels)
	fmt.Fprintf(&b, "%s └%s\n", strings.Repeat(" ", lw), strings.Repeat("─", width))
	axisLine := newLine(width)
	placeMark(axisLine, optCol, fmt.Sprintf("%.2f", opt))
	putFree(axisLine, 0, "0")
	right := fmt.Sprintf("%.2f", xmax)
	putFree(axisLine, width-len(right), right)
	fmt.Fprintf(&b, "%s  %s  on-demand USD/h committed\n", strings.Repeat(" ", lw), strings.TrimRight(string(axisLine), " "))
	fmt.Fprintf(&b, "%c optimum: commit %s of on-demand usage → %s a month\n", glyphOptimum, a.hourly(tp.CommitHourly), a.monthly(tp.TotalMonthly))
	return b.String()
}

// DurationChart draws a group's usage duration curve (the hourly usage sorted
// from the busiest hour down, against the share of hours) with the term's
// commitment: █ committed and used, ░ committed and unused, ▒ above the
// commitment (on demand or spot). ▲ marks the break-even share 1−d: the
// optimum is the level the curve still reaches at that share.
func DurationChart(g GroupPlan, tp TermPlan, width, height int) string {
	return DurationChartWith(g, tp, width, height, Amounts{})
}

// DurationChartWith is DurationChart with its sentences' amounts written
// by a.
func DurationChartWith(g GroupPlan, tp TermPlan, width, height int, a Amounts) string {
	width, height = clampInt(width, 16, 200), clampInt(height, 3, 60)
	sorted := slices.Clone(g.HourlyUsage)
	slices.SortFunc(sorted, func(a, b float64) int { return -cmpFloat(a, b) })
	if len(sorted) == 0 || sorted[0] <= 0 {
		return "(no usage to chart)\n"
	}
	c := tp.CommitHourly.InexactFloat64()
	ymax := math.Max(sorted[0], c)
	grid := newGrid(width, height)
	for i := range width {
		u := sorted[min(len(sorted)-1, int((float64(i)+0.5)/float64(width)*float64(len(sorted))))]
		for r := range height {
			y := ymax * (float64(height-r) - 0.5) / float64(height)
			switch {
			case y <= c && u >= y:
				grid[r][i] = glyphUsed
			case y <= c:
				grid[r][i] = glyphUnused
			case u >= y:
				grid[r][i] = glyphAbove
			}
		}
	}
	labels := map[int]string{0: fmt.Sprintf("%.2f", ymax), height - 1: "0"}
	if c > 0 {
		cr := height - 1 - int(math.Floor(c/ymax*float64(height)-0.5))
		labels[clampInt(cr, 0, height-1)] = fmt.Sprintf("%.2f", c)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "on-demand USD/h by share of hours, %s %s %s/%s (%s)\n", g.Provider, g.Region, g.Family, tp.Term, commitText(tp, a))
	writeRows(&b, grid, labels)
	lw := labelWidth(labels)
	fmt.Fprintf(&b, "%s └%s\n", strings.Repeat(" ", lw), strings.Repeat("─", width))
	axisLine := newLine(width)
	be := clampInt(int(math.Round(tp.BreakEven*float64(width))), 0, width-1)
	placeMark(axisLine, be, money.PercentFloat(tp.BreakEven*100)+" break-even")
	putFree(axisLine, 0, "0 %")
	putFree(axisLine, width-5, "100 %")
	fmt.Fprintf(&b, "%s  %s  of hours\n", strings.Repeat(" ", lw), strings.TrimRight(string(axisLine), " "))
	fmt.Fprintf(&b, "%c committed, used  %c committed, unused  %c above the commitment\n", glyphUsed, glyphUnused, glyphAbove)
	return b.String()
}

func commitText(tp TermPlan, a Amounts) string {
	if !tp.CommitHourly.IsPositive() {
		return "no commitment"
	}
	return "commit " + a.hourly(tp.CommitHourly)
}

// interpolate reads y at x from points sorted by x, linearly between them.
func interpolate(xs, ys []float64, x float64) float64 {
	if x <= xs[0] {
		return ys[0]
	}
	for i := 1; i < len(xs); i++ {
		if x <= xs[i] {
			if xs[i] == xs[i-1] {
				return ys[i]
			}
			t := (x - xs[i-1]) / (xs[i] - xs[i-1])
			return ys[i-1] + t*(ys[i]-ys[i-1])
		}
	}
	return ys[len(ys)-1]
}

func newGrid(width, height int) [][]rune {
	g := make([][]rune, height)
	for r := range g {
		g[r] = newLine(width)
	}
	return g
}

func newLine(width int) []rune {
	l := make([]rune, width)
	for i := range l {
		l[i] = ' '
	}
	return l
}

// put writes s into line from column at, clipped to the line.
func put(line []rune, at int, s string) {
	for i, r := range []rune(s) {
		if at+i >= 0 && at+i < len(line) {
			line[at+i] = r
		}
	}
}

// putFree writes s from column at when it fits there with a blank on each side
// (or the line's edge); otherwise it writes nothing.
func putFree(line []rune, at int, s string) bool {
	n := len([]rune(s))
	if at < 0 || at+n > len(line) {
		return false
	}
	for i := at - 1; i <= at+n; i++ {
		if i >= 0 && i < len(line) && line[i] != ' ' {
			return false
		}
	}
	put(line, at, s)
	return true
}

// placeMark puts ▲ at col with its label on the right, or on the left when the
// right has no room, or alone.
func placeMark(line []rune, col int, label string) {
	line[col] = glyphMark
	n := len([]rune(label))
	switch {
	case col+1+n <= len(line):
		put(line, col+1, label)
	case col-n >= 0:
		put(line, col-n, label)
	}
}

func labelWidth(labels map[int]string) int {
	w := 0
	for _, l := range labels {
		w = max(w, len(l))
	}
	return w
}

// writeRows writes the grid with its labels on the left: ┤ on a labelled row.
func writeRows(b *strings.Builder, grid [][]rune, labels map[int]string) {
	lw := labelWidth(labels)
	for r, line := range grid {
		tick := '│'
		if _, ok := labels[r]; ok {
			tick = '┤'
		}
		fmt.Fprintf(b, "%*s %c%s\n", lw, labels[r], tick, strings.TrimRight(string(line), " "))
	}
}

// tick is an axis label: a plain amount, the axis title naming the unit.
func tick(v float64) string { return fmt.Sprintf("%.2f", v) }
