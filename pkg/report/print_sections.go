package report

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/money"
	"github.com/gpufinops/gpufinops/pkg/tableprinter"
	"github.com/gpufinops/gpufinops/pricing"
)

// The table and markdown formats show three of the 1.1 sections briefly after
// the strategy sections: cost by team, project and workload type, the fleet's
// AI cost metrics with its training runs, and one line on tags. The other
// dimensions, the per-instance metrics, the audit's details and the sharing
// and commitment plans are in -o json.

// maxBuckets is how many tagged buckets a printed allocation shows before the
// rest are folded into one row.
const maxBuckets = 5

// allocationView is one printed allocation dimension.
type allocationView struct {
	title  string // "Cost by team"
	header string // "team"
	rows   []bucketRow
}

// bucketRow is one printed bucket, or the fold of several.
type bucketRow struct {
	key                string
	instances          int
	current, optimized Money
	share              string
}

// allocationViews are the dimensions the table and markdown print, without
// the empty ones.
func allocationViews(r *Report) []allocationView {
	a := r.Allocation
	if a == nil {
		return nil
	}
	var out []allocationView
	for _, d := range []struct {
		title, header string
		buckets       []CostBucket
	}{
		{"Cost by team", "team", a.ByTeam},
		{"Cost by project", "project", a.ByProject},
		{"Cost by workload type", "workload type", a.ByWorkloadType},
	} {
		if len(d.buckets) > 0 {
			out = append(out, allocationView{d.title, d.header, bucketRows(d.buckets, a.CurrentMonthlyCost)})
		}
	}
	return out
}

// bucketRows keeps every tagged bucket when there are at most maxBuckets + 1
// (a fold would save no line), else the costliest maxBuckets and one row for
// the rest; the untagged bucket comes last, never folded.
func bucketRows(bs []CostBucket, total Money) []bucketRow {
	var tagged []CostBucket
	var untagged *CostBucket
	for i, b := range bs {
		if b.Key == Untagged {
			untagged = &bs[i]
			continue
		}
		tagged = append(tagged, b)
	}
	row := func(b CostBucket) bucketRow {
		return bucketRow{b.Key, b.Instances, b.CurrentMonthlyCost, b.OptimizedMonthlyCost,
			strconv.FormatFloat(b.SharePercent, 'f', 1, 64) + " %"}
	}
	var out []bucketRow
	if len(tagged) <= maxBuckets+1 {
		for _, b := range tagged {
			out = append(out, row(b))
		}
	} else {
		for _, b := range tagged[:maxBuckets] {
			out = append(out, row(b))
		}
		rest := bucketRow{key: fmt.Sprintf("%d others", len(tagged)-maxBuckets)}
		cur, opt := decimal.Zero, decimal.Zero
		for _, b := range tagged[maxBuckets:] {
			rest.instances += b.Instances
			cur, opt = cur.Add(b.CurrentMonthlyCost.d), opt.Add(b.OptimizedMonthlyCost.d)
		}
		rest.current, rest.optimized = NewMoney(cur), NewMoney(opt)
		rest.current.cur, rest.optimized.cur = total.cur, total.cur
		share := decimal.Zero
		if !total.d.IsZero() {
			share = cur.Mul(decimal.NewFromInt(100)).Div(total.d)
		}
		rest.share = share.StringFixed(1) + " %"
		out = append(out, rest)
	}
	if untagged != nil {
		out = append(out, row(*untagged))
	}
	return out
}

// metricLine is one "label  value" line of the AI cost metrics.
type metricLine struct{ label, value string }

// aiMetricLines are the fleet's AI cost metrics that are known, for people
// (tty) or pipes.
func aiMetricLines(m *AIMetrics, tty bool, cur string) []metricLine {
	f := m.Fleet
	var out []metricLine
	if f.GPUEfficiencyPercent != nil {
		out = append(out, metricLine{"GPU efficiency", strconv.FormatFloat(*f.GPUEfficiencyPercent, 'f', 1, 64) + " % (busy ÷ measured GPU-hours)"})
	}
	if f.PaidGPUHours > 0 {
		v := formatHours(f.PaidGPUHours, tty) + " paid"
		switch {
		case f.MeasuredGPUHours == f.PaidGPUHours:
			v = formatHours(f.BusyGPUHours, tty) + " busy of " + v
		case f.MeasuredGPUHours > 0:
			v = fmt.Sprintf("%s busy of %s measured, %s", formatHours(f.BusyGPUHours, tty), formatHours(f.MeasuredGPUHours, tty), v)
		}
		out = append(out, metricLine{"GPU-hours a month", v})
	}
	if f.CostPerBusyGPUHour != nil {
		out = append(out, metricLine{"Cost per busy GPU-hour", usd(f.CostPerBusyGPUHour.d, 2, tty, cur)})
	}
	if f.CostPerMillionTokens != nil {
		out = append(out, metricLine{"Cost per 1M output tokens", usd(f.CostPerMillionTokens.d, 4, tty, cur)})
	}
	if f.CostPerThousandRequests != nil {
		out = append(out, metricLine{"Cost per 1,000 requests", usd(f.CostPerThousandRequests.d, 4, tty, cur)})
	}
	return out
}

// trainingRunCells are a training run's printed cells: run, instances, GPUs,
// monthly cost, expected hours, run cost.
func trainingRunCells(tr TrainingRun, tty bool) []string {
	monthly, hours, run := "no price", "-", "-"
	if tr.Priced {
		monthly = formatMoney(tr.MonthlyCost, tty)
	}
	if tr.ExpectedHours != nil {
		hours = formatHours(*tr.ExpectedHours, tty)
	}
	if tr.RunCost != nil {
		run = formatMoney(*tr.RunCost, tty)
	}
	return []string{tr.ID, strconv.Itoa(len(tr.Instances)), strconv.FormatFloat(tr.GPUCount, 'f', -1, 64), monthly, hours, run}
}

// trainingRunHeaders head the training runs table (letters and spaces only).
var trainingRunHeaders = []string{"training run", "instances", "gpus", "monthly cost", "run hours", "run cost"}

// tagsCommand is the command that shows the tag audit whole.
const tagsCommand = "gpufinops tags audit"

// tagsLine sums the tag audit up in one sentence, and says whether to point
// to tagsCommand after it; "" when there is nothing to audit. The untagged
// share of spend is 100 − the compliance by spend, both to one decimal.
func tagsLine(a *TagAudit, tty bool) (string, bool) {
	if a == nil || a.InstanceCount == 0 {
		return "", false
	}
	bad := a.InstanceCount - a.CompliantCount
	if bad == 0 {
		if a.InstanceCount == 1 {
			return "The instance carries every required tag.", false
		}
		return fmt.Sprintf("All %d instances carry every required tag.", a.InstanceCount), false
	}
	untaggedShare := decimal.NewFromInt(100).Sub(decimal.NewFromFloat(a.CompliancePercentBySpend))
	spend := formatMoney(a.UntaggedMonthlyCost, tty) + "/month"
	if !tty {
		spend = a.UntaggedMonthlyCost.String() + " " + a.UntaggedMonthlyCost.Currency() + "/month"
	}
	return fmt.Sprintf("%s (%s %%) carries incomplete tags on %s", spend, untaggedShare.StringFixed(1), plural(bad, "instance")), true
}

// writeTableSections writes the allocation, AI cost metrics and tags
// sections of the table and wide formats. On a terminal the allocation tables
// line up with each other and, in the table format, long keys are cut to fit
// width.
func writeTableSections(b *strings.Builder, r *Report, c colors, tty, wide bool, width int) error {
	if width <= 0 {
		width = DefaultWidth
	}
	fit := tty && !wide
	if err := writeAllocationTables(b, r, c, tty, fit, width); err != nil {
		return err
	}
	if err := writeAIMetrics(b, r.AIMetrics, r.Currency, c, tty, fit, width); err != nil {
		return err
	}
	if line, more := tagsLine(r.TagAudit, tty); line != "" {
		if more {
			line += "; see '" + tagsCommand + "'"
		}
		fmt.Fprintf(b, "\n%s\n%s\n", c.bold("Tags"), line)
	}
	return nil
}

// writeAllocationTables writes cost by team, project and workload type. On
// a terminal the three tables line up; with fit, long keys are cut to width
// and the optimized cost gives way.
func writeAllocationTables(b *strings.Builder, r *Report, c colors, tty, fit bool, width int) error {
	views := allocationViews(r)
	if len(views) == 0 {
		return nil
	}
	tp := tableprinter.New(b, tty, views[0].header, "instances", "current", "optimized", "share")
	tp.AlignRight(1, 2, 3, 4)
	tp.Key(0)
	tp.TruncateMiddle(0, minKeyWidth)
	tp.DropOrder(3, 1)
	if fit {
		tp.SetWidth(width)
	}
	for _, v := range views {
		tp.Section("\n"+c.bold(v.title), v.header, "instances", "current", "optimized", "share")
		for _, row := range v.rows {
			tp.AddRow(row.key, strconv.Itoa(row.instances), formatMoney(row.current, tty), formatMoney(row.optimized, tty), row.share)
		}
	}
	return tp.Render()
}

// minKeyWidth is how short a team, project or training run's name may be cut.
const minKeyWidth = 12

// writeAIMetrics writes the fleet's AI cost metrics and its training runs;
// with fit, long run IDs are cut to width.
func writeAIMetrics(b *strings.Builder, m *AIMetrics, cur string, c colors, tty, fit bool, width int) error {
	if m == nil || (len(m.Instances) == 0 && len(m.TrainingRuns) == 0) {
		return nil
	}
	fmt.Fprintf(b, "\n%s\n", c.bold("AI cost metrics"))
	lines := aiMetricLines(m, tty, cur)
	if len(lines) == 0 {
		b.WriteString("No utilization, price or throughput data to measure.\n")
	}
	labelWidth := 0
	for _, l := range lines {
		labelWidth = max(labelWidth, utf8.RuneCountInString(l.label))
	}
	for _, l := range lines {
		if tty {
			fmt.Fprintf(b, "%s  %s\n", l.label+strings.Repeat(" ", labelWidth-utf8.RuneCountInString(l.label)), l.value)
		} else {
			fmt.Fprintf(b, "%s\t%s\n", l.label, l.value)
		}
	}
	if len(m.TrainingRuns) > 0 {
		b.WriteString("\n")
		rows := make([][]string, 0, len(m.TrainingRuns))
		for _, tr := range m.TrainingRuns {
			rows = append(rows, trainingRunCells(tr, tty))
		}
		tp := tableprinter.New(b, tty, trainingRunHeaders...)
		tp.AlignRight(1, 2, 3, 4, 5)
		tp.Key(0)
		tp.TruncateMiddle(0, minKeyWidth)
		tp.DropOrder(3, 1, 2)
		if fit {
			tp.SetWidth(width)
		}
		for _, row := range rows {
			tp.AddRow(row...)
		}
		if err := tp.Render(); err != nil {
			return err
		}
	}
	return nil
}

// writeMarkdownSections writes the same sections as markdown.
func writeMarkdownSections(b textWriter, r *Report) {
	money := func(m Money) string { return formatMoney(m, true) }
	for _, v := range allocationViews(r) {
		fmt.Fprintf(b, "\n### %s\n\n", v.title)
		fmt.Fprintf(b, "| %s | Instances | Current/mo | Optimized/mo | Share |\n|---|---:|---:|---:|---:|\n",
			strings.ToUpper(v.header[:1])+v.header[1:])
		for _, row := range v.rows {
			fmt.Fprintf(b, "| %s | %d | %s | %s | %s |\n", mdText(row.key), row.instances, money(row.current), money(row.optimized), row.share)
		}
	}

	if m := r.AIMetrics; m != nil && (len(m.Instances) > 0 || len(m.TrainingRuns) > 0) {
		b.WriteString("\n### AI cost metrics\n\n")
		if lines := aiMetricLines(m, true, r.Currency); len(lines) > 0 {
			b.WriteString("| Metric | Value |\n|---|---|\n")
			for _, l := range lines {
				fmt.Fprintf(b, "| %s | %s |\n", mdText(l.label), mdText(l.value))
			}
		} else {
			b.WriteString("No utilization, price or throughput data to measure.\n")
		}
		if len(m.TrainingRuns) > 0 {
			b.WriteString("\n| Training run | Instances | GPUs | Monthly cost | Run hours | Run cost |\n|---|---:|---:|---:|---:|---:|\n")
			for _, tr := range m.TrainingRuns {
				cells := trainingRunCells(tr, true)
				cells[0] = mdCode(cells[0])
				for i := 1; i < len(cells); i++ {
					cells[i] = mdText(cells[i])
				}
				fmt.Fprintf(b, "| %s |\n", strings.Join(cells, " | "))
			}
		}
	}

	if line, more := tagsLine(r.TagAudit, true); line != "" {
		line = mdText(line)
		if more {
			line += "; see " + mdCode(tagsCommand)
		}
		fmt.Fprintf(b, "\n### Tags\n\n%s\n", line)
	}
}

// usd renders an amount in the report's currency cur with the given
// decimals: on a terminal "$1,234.5678", elsewhere "1234.5678 USD".
func usd(d decimal.Decimal, places int32, tty bool, cur string) string {
	if cur == pricing.Currency {
		cur = ""
	}
	if !tty {
		return d.StringFixed(places) + " " + currencyCodeOf(cur)
	}
	return money.FormatPlaces(d, cur, places)
}

// formatHours renders a number of hours to at most one decimal: on a
// terminal with thousands separators ("21,100.5"), elsewhere plain.
func formatHours(f float64, tty bool) string {
	s := decimal.NewFromFloat(f).Round(1).String()
	if !tty {
		return s
	}
	places := int32(0)
	if strings.Contains(s, ".") {
		places = 1
	}
	return money.Group(decimal.RequireFromString(s), places)
}
