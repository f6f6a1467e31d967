package report

import (
	"cmp"
	"fmt"
	"html"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/recommend"
)

// The HTML report is one self-contained file: inline CSS and SVG charts drawn
// here, in Go. It has no script and no reference to any URL, so it opens
// offline, in a mail attachment or a CI artifact, and looks the same
// everywhere. Everything it shows comes from the report; it computes no
// prices, only sums of the report's own cents for the charts.

// Chart IDs, stable for tests and for anyone styling or scraping the report.
const (
	ChartSpendByProvider   = "chart-spend-by-provider"
	ChartSpendByTeam       = "chart-spend-by-team"
	ChartSpendByGPUModel   = "chart-spend-by-gpu-model"
	ChartSavingsByStrategy = "chart-savings-by-strategy"
	ChartUtilization       = "chart-utilization"
)

// HTMLCharts lists the chart IDs in the order the report shows them.
var HTMLCharts = []string{ChartSpendByProvider, ChartSpendByTeam, ChartSpendByGPUModel, ChartSavingsByStrategy, ChartUtilization}

// maxBars is the most bars a chart draws; the rest are summed into "others".
const maxBars = 12

// bar is one bar of a horizontal bar chart.
type bar struct {
	label string
	value decimal.Decimal
	text  string
}

// writeHTML prints the report as one HTML page.
func writeHTML(w io.Writer, r *Report) error {
	s := r.Summary
	usd := func(m Money) string { return formatMoney(m, true) }
	var b strings.Builder
	name := r.Source.Fleet
	if name == "" {
		name = "(unnamed)"
	}
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	b.WriteString("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	fmt.Fprintf(&b, "<title>GPU cost report: %s</title>\n<style>\n%s</style>\n</head>\n<body>\n", esc(name), htmlCSS)

	fmt.Fprintf(&b, "<header>\n<h1>GPU cost report: %s</h1>\n", esc(name))
	fmt.Fprintf(&b, "<p class=\"meta\">%s</p>\n", esc(footerText(r)))
	if line := partialScanLine(r); line != "" {
		fmt.Fprintf(&b, "<p class=\"partial\" style=\"background: #fff4e5; border-left: 4px solid #e69f00; padding: 6px 10px;\"><a href=\"#warnings\">%s</a></p>\n", esc(line))
	}
	if r.Billing != nil {
		fmt.Fprintf(&b, "<p class=\"bill\">Bill: %s</p>\n", esc(r.Billing.Line))
	}
	b.WriteString("</header>\n")

	b.WriteString("<section id=\"summary\">\n<h2>Summary</h2>\n<div class=\"cards\">\n")
	instances := strconv.Itoa(s.InstanceCount)
	if s.UnpricedCount > 0 {
		instances += fmt.Sprintf(" (%d unpriced)", s.UnpricedCount)
	}
	cards := [][3]string{
		{"current", "Current monthly cost", usd(s.CurrentMonthlyCost)},
		{"optimized", "Optimized monthly cost", usd(s.OptimizedMonthlyCost)},
		{"savings", "Monthly savings", usd(s.MonthlySavings)},
		{"savings-percent", "Savings", percent(s.SavingsPercent)},
		{"instances", "Instances", instances},
		{"gpus", "GPUs", strconv.FormatFloat(s.GPUCount, 'f', -1, 64)},
	}
	if u := s.UnusedCommitmentMonthlyCost; u != nil {
		cards = append(cards, [3]string{"unused-commitments", "Unused commitments (in the costs)", usd(*u)})
	}
	if h := r.CommitmentsHeld; h != nil {
		cards = append(cards, [3]string{"commitment-coverage", "Covered by commitments", percent(h.CoveragePercent)})
	}
	for _, c := range cards {
		fmt.Fprintf(&b, "<div class=\"card\" id=\"summary-%s\"><div class=\"label\">%s</div><div class=\"value\">%s</div></div>\n",
			c[0], esc(c[1]), esc(c[2]))
	}
	b.WriteString("</div>\n</section>\n")

	b.WriteString("<section id=\"charts\">\n<h2>Charts</h2>\n<div class=\"charts\">\n")
	barChart(&b, ChartSpendByProvider, "Monthly spend by provider", spendByProvider(r))
	barChart(&b, ChartSpendByTeam, "Monthly spend by team", spendByTeam(r))
	barChart(&b, ChartSpendByGPUModel, "Monthly spend by GPU model", spendByGPUModel(r))
	barChart(&b, ChartSavingsByStrategy, "Monthly savings by strategy", savingsByStrategy(r))
	histogram(&b, ChartUtilization, "Instances by p95 GPU utilization", utilizationBuckets(r))
	b.WriteString("</div>\n</section>\n")

	b.WriteString("<section id=\"recommendations\">\n<h2>Recommendations</h2>\n")
	secs := sections(r)
	if len(secs) == 0 {
		b.WriteString("<p>No savings found.</p>\n")
	}
	for _, sec := range secs {
		fmt.Fprintf(&b, "<h3 id=\"strategy-%s\">%s</h3>\n", esc(sec.kind),
			esc(sectionHeading(sec, s.SavingsByKind[sec.kind], func(m Money) string { return usd(m) + "/mo" })))
		b.WriteString("<table class=\"recs\">\n<thead><tr><th>Resource</th><th>Instance type</th><th>Action</th>" +
			"<th class=\"num\">Current/mo</th><th class=\"num\">Projected/mo</th><th class=\"num\">Savings/mo</th>" +
			"<th>Confidence</th><th>Risk</th></tr></thead>\n<tbody>\n")
		for _, rec := range sec.recs {
			fmt.Fprintf(&b, "<tr id=\"rec-%s\"><td data-label=\"Resource\"><code>%s</code></td><td data-label=\"Instance type\"><code>%s</code></td><td data-label=\"Action\">%s</td>"+
				"<td class=\"num\" data-label=\"Current/mo\">%s</td><td class=\"num\" data-label=\"Projected/mo\">%s</td><td class=\"num\" data-label=\"Savings/mo\">%s</td>"+
				"<td data-label=\"Confidence\">%s</td><td data-label=\"Risk\">%s</td></tr>\n",
				esc(rec.ID), esc(rec.ResourceID), esc(rec.InstanceType), esc(actionText(rec)),
				usd(rec.CurrentMonthlyCost), usd(rec.ProjectedMonthlyCost), usd(rec.MonthlySavings),
				badge("confidence", rec.Confidence), badge("risk", rec.Risk))
		}
		b.WriteString("</tbody>\n</table>\n")
	}
	b.WriteString("</section>\n")

	writeHTMLSections(&b, r)

	if len(r.Warnings) > 0 {
		fmt.Fprintf(&b, "<section id=\"warnings\">\n<h2>Warnings (%d)</h2>\n<ul>\n", len(r.Warnings))
		for _, wn := range r.Warnings {
			b.WriteString("<li>")
			if wn.ResourceID != "" {
				fmt.Fprintf(&b, "<code>%s</code>: ", esc(wn.ResourceID))
			}
			fmt.Fprintf(&b, "%s (<code>%s</code>)</li>\n", esc(wn.Message), esc(wn.Code))
		}
		b.WriteString("</ul>\n</section>\n")
	}
	fmt.Fprintf(&b, "<footer>%s</footer>\n</body>\n</html>\n", esc(footerText(r)))
	_, err := io.WriteString(w, b.String())
	return err
}

// badge shows a confidence or risk level in its colour: a high confidence
// and a low risk green, medium amber, a low confidence and a high risk red.
// Other values are shown plain.
func badge(what, level string) string {
	tone := map[string]map[string]string{
		"confidence": {"high": "good", "medium": "fair", "low": "poor"},
		"risk":       {"low": "good", "medium": "fair", "high": "poor"},
	}[what][level]
	if tone == "" {
		return esc(level)
	}
	return fmt.Sprintf("<span class=\"badge %s\" title=\"%s %s\">%s</span>", tone, esc(level), what, esc(level))
}

// writeHTMLSections writes what the markdown has after the strategies: cost
// by team, project and workload type, the AI cost metrics with the training
// runs, and the tags line.
func writeHTMLSections(b *strings.Builder, r *Report) {
	money := func(m Money) string { return formatMoney(m, true) }
	if views := allocationViews(r); len(views) > 0 {
		b.WriteString("<section id=\"allocation\">\n<h2>Cost allocation</h2>\n")
		for _, v := range views {
			id := strings.ReplaceAll(v.header, " ", "-")
			head := strings.ToUpper(v.header[:1]) + v.header[1:]
			fmt.Fprintf(b, "<h3 id=\"cost-by-%s\">%s</h3>\n", id, esc(v.title))
			fmt.Fprintf(b, "<table class=\"recs alloc\">\n<thead><tr><th>%s</th><th class=\"num\">Instances</th>"+
				"<th class=\"num\">Current/mo</th><th class=\"num\">Optimized/mo</th><th class=\"num\">Share</th></tr></thead>\n<tbody>\n", esc(head))
			for _, row := range v.rows {
				fmt.Fprintf(b, "<tr><td data-label=\"%s\">%s</td><td class=\"num\" data-label=\"Instances\">%d</td>"+
					"<td class=\"num\" data-label=\"Current/mo\">%s</td><td class=\"num\" data-label=\"Optimized/mo\">%s</td>"+
					"<td class=\"num\" data-label=\"Share\">%s</td></tr>\n",
					esc(head), esc(row.key), row.instances, money(row.current), money(row.optimized), esc(row.share))
			}
			b.WriteString("</tbody>\n</table>\n")
		}
		b.WriteString("</section>\n")
	}

	if m := r.AIMetrics; m != nil && (len(m.Instances) > 0 || len(m.TrainingRuns) > 0) {
		b.WriteString("<section id=\"ai-metrics\">\n<h2>AI cost metrics</h2>\n")
		if lines := aiMetricLines(m, true, r.Currency); len(lines) > 0 {
			b.WriteString("<dl class=\"metrics\">\n")
			for _, l := range lines {
				fmt.Fprintf(b, "<div><dt>%s</dt><dd>%s</dd></div>\n", esc(l.label), esc(l.value))
			}
			b.WriteString("</dl>\n")
		} else {
			b.WriteString("<p class=\"empty\">No utilization, price or throughput data to measure.</p>\n")
		}
		if len(m.TrainingRuns) > 0 {
			heads := []string{"Training run", "Instances", "GPUs", "Monthly cost", "Run hours", "Run cost"}
			b.WriteString("<h3 id=\"training-runs\">Training runs</h3>\n<table class=\"recs runs\">\n<thead><tr>")
			for i, h := range heads {
				if i == 0 {
					fmt.Fprintf(b, "<th>%s</th>", h)
				} else {
					fmt.Fprintf(b, "<th class=\"num\">%s</th>", h)
				}
			}
			b.WriteString("</tr></thead>\n<tbody>\n")
			for _, tr := range m.TrainingRuns {
				b.WriteString("<tr>")
				for i, c := range trainingRunCells(tr, true) {
					if i == 0 {
						fmt.Fprintf(b, "<td data-label=\"%s\"><code>%s</code></td>", heads[i], esc(c))
					} else {
						fmt.Fprintf(b, "<td class=\"num\" data-label=\"%s\">%s</td>", heads[i], esc(c))
					}
				}
				b.WriteString("</tr>\n")
			}
			b.WriteString("</tbody>\n</table>\n")
		}
		b.WriteString("</section>\n")
	}

	if line, more := tagsLine(r.TagAudit, true); line != "" {
		line = esc(line)
		if more {
			line += "; see <code>" + esc(tagsCommand) + "</code>"
		}
		fmt.Fprintf(b, "<section id=\"tags\">\n<h2>Tags</h2>\n<p>%s</p>\n</section>\n", line)
	}
}

// footerText names the tool, schema, time, fleet and price data.
func footerText(r *Report) string {
	parts := []string{strings.TrimSpace(r.Tool.Name + " " + r.Tool.Version), "report schema " + r.SchemaVersion,
		"generated " + r.GeneratedAt.UTC().Format(time.RFC3339)}
	if r.Source.Path != "" {
		parts = append(parts, "fleet "+r.Source.Path)
	}
	var cat []string
	for _, c := range r.Catalog {
		cat = append(cat, c.Name+" ("+c.AsOf+")")
	}
	if len(cat) > 0 {
		parts = append(parts, "prices: "+strings.Join(cat, ", "))
	}
	parts = append(parts, "amounts in "+r.Currency+" a month")
	return strings.Join(parts, " · ")
}

func esc(s string) string { return html.EscapeString(s) }

// spendByProvider is the allocation's provider split, or the instances'
// costs summed by provider for a report without one.
func spendByProvider(r *Report) []bar {
	if r.Allocation != nil {
		return bucketBars(r.Allocation.ByProvider)
	}
	return sumInstances(r, func(in Instance) string { return in.Provider })
}

// spendByTeam is the allocation's team split; a report without allocation
// (schema 1.0) has none.
func spendByTeam(r *Report) []bar {
	if r.Allocation == nil {
		return nil
	}
	return bucketBars(r.Allocation.ByTeam)
}

// spendByGPUModel sums the priced instances' current costs by GPU model.
func spendByGPUModel(r *Report) []bar {
	return sumInstances(r, func(in Instance) string {
		if in.GPUModel == "" {
			return "(unknown)"
		}
		return in.GPUModel
	})
}

func bucketBars(bs []CostBucket) []bar {
	out := make([]bar, 0, len(bs))
	for _, bk := range bs {
		if bk.CurrentMonthlyCost.d.IsZero() {
			continue
		}
		out = append(out, bar{label: bk.Key, value: bk.CurrentMonthlyCost.d})
	}
	return topBars(out)
}

// sumInstances sums the priced instances' current monthly cost by key,
// costliest first, ties by key.
func sumInstances(r *Report, key func(Instance) string) []bar {
	sums := map[string]decimal.Decimal{}
	for _, in := range r.Instances {
		if in.CurrentMonthlyCost == nil {
			continue
		}
		k := key(in)
		sums[k] = sums[k].Add(in.CurrentMonthlyCost.d)
	}
	out := make([]bar, 0, len(sums))
	for k, v := range sums {
		if !v.IsZero() {
			out = append(out, bar{label: k, value: v})
		}
	}
	slices.SortFunc(out, func(a, b bar) int { return cmp.Or(b.value.Cmp(a.value), cmp.Compare(a.label, b.label)) })
	return topBars(out)
}

// topBars keeps the first maxBars-1 bars and sums the rest into "others",
// then labels every bar with its amount.
func topBars(bs []bar) []bar {
	if len(bs) > maxBars {
		rest := decimal.Zero
		for _, x := range bs[maxBars-1:] {
			rest = rest.Add(x.value)
		}
		bs = append(bs[:maxBars-1:maxBars-1], bar{label: fmt.Sprintf("%d others", len(bs)-maxBars+1), value: rest})
	}
	for i := range bs {
		bs[i].text = formatMoney(NewMoney(bs[i].value), true)
	}
	return bs
}

// savingsByStrategy is the summary's savings per kind, in planner order,
// kinds that save nothing left out.
func savingsByStrategy(r *Report) []bar {
	var out []bar
	seen := map[string]bool{}
	add := func(k string) {
		seen[k] = true
		if m, ok := r.Summary.SavingsByKind[k]; ok && !m.d.IsZero() {
			out = append(out, bar{label: k, value: m.d, text: formatMoney(m, true)})
		}
	}
	for _, k := range recommend.Kinds {
		add(string(k))
	}
	var rest []string
	for k := range r.Summary.SavingsByKind {
		if !seen[k] {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	for _, k := range rest {
		add(k)
	}
	return out
}

// utilizationBuckets counts instances by the p95 of their busiest GPU's
// utilization (the figure the rules decide on) in ten 10-point buckets, the
// last including 100, and those without GPU data.
func utilizationBuckets(r *Report) []bar {
	counts := make([]int, 11)
	for _, in := range r.Instances {
		if in.GPUUtilP95 == nil {
			counts[10]++
			continue
		}
		counts[min(max(int(*in.GPUUtilP95/10), 0), 9)]++
	}
	out := make([]bar, 0, 11)
	for i := 0; i < 10; i++ {
		out = append(out, bar{label: fmt.Sprintf("%d–%d", i*10, i*10+10), value: decimal.NewFromInt(int64(counts[i])), text: strconv.Itoa(counts[i])})
	}
	out = append(out, bar{label: "no data", value: decimal.NewFromInt(int64(counts[10])), text: strconv.Itoa(counts[10])})
	return out
}

// The chart geometry, in SVG user units.
const (
	chartWidth  = 520
	labelWidth  = 150
	valueWidth  = 100
	rowHeight   = 26
	barHeight   = 18
	chartMargin = 8
)

// barLabelRunes is the longest bar label drawn whole: at 12 px, wide
// letters included, it fits the labelWidth column; a longer one is cut with
// "…" and shown whole in the bar's tooltip.
const barLabelRunes = 18

// barChart draws horizontal bars scaled to the largest value.
func barChart(b *strings.Builder, id, title string, bars []bar) {
	fmt.Fprintf(b, "<figure class=\"chart\" id=\"%s\">\n<figcaption>%s</figcaption>\n", id, esc(title))
	if len(bars) == 0 {
		b.WriteString("<p class=\"empty\">No data in this report.</p>\n</figure>\n")
		return
	}
	height := 2*chartMargin + rowHeight*len(bars)
	fmt.Fprintf(b, "<svg viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" role=\"img\" aria-label=\"%s\">\n",
		chartWidth, height, chartWidth, height, esc(title))
	largest := maxValue(bars)
	area := chartWidth - labelWidth - valueWidth
	for i, x := range bars {
		y := chartMargin + i*rowHeight
		w := scale(x.value, largest, area)
		fmt.Fprintf(b, "<text x=\"%d\" y=\"%d\" class=\"label\" text-anchor=\"end\">%s</text>", labelWidth-8, y+barHeight-4, esc(truncate(x.label, barLabelRunes)))
		fmt.Fprintf(b, "<rect x=\"%d\" y=\"%d\" width=\"%s\" height=\"%d\" fill=\"%s\"><title>%s: %s</title></rect>",
			labelWidth, y, w, barHeight, palette[i%len(palette)], esc(x.label), esc(x.text))
		fmt.Fprintf(b, "<text x=\"%d\" y=\"%d\" class=\"value\">%s</text>\n", chartWidth-valueWidth+6, y+barHeight-4, esc(x.text))
	}
	b.WriteString("</svg>\n</figure>\n")
}

// The histogram's geometry: ten 40-unit buckets on a 0–100 axis labelled at
// every edge, then, after a gap, one wider bar for instances without data,
// so that no two labels share a place.
const (
	histSlot     = 40
	histGap      = 24
	histNoData   = 72
	histPlot     = 160
	histTop      = 20
	histBottom   = 44
	histBarInset = 4
)

// histogram draws vertical bars, one per bucket, scaled to the largest
// count: bars[:len-1] are the 10-point buckets, the last one "no data".
func histogram(b *strings.Builder, id, title string, bars []bar) {
	fmt.Fprintf(b, "<figure class=\"chart\" id=\"%s\">\n<figcaption>%s</figcaption>\n", id, esc(title))
	height := histTop + histPlot + histBottom
	fmt.Fprintf(b, "<svg viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" role=\"img\" aria-label=\"%s\">\n",
		chartWidth, height, chartWidth, height, esc(title))
	largest := maxValue(bars)
	base := histTop + histPlot
	buckets := len(bars) - 1
	axisEnd := chartMargin + buckets*histSlot
	fmt.Fprintf(b, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" class=\"axis\"/>\n", chartMargin, base, axisEnd, base)
	column := func(x0, w int, x bar, fill, label string) {
		h, _ := decimal.NewFromInt(histPlot).Mul(x.value).DivRound(nonZero(largest), 2).Float64()
		fmt.Fprintf(b, "<rect x=\"%d\" y=\"%s\" width=\"%d\" height=\"%s\" fill=\"%s\"><title>%s: %s instances</title></rect>",
			x0, num(float64(base)-h), w, num(h), fill, esc(label), esc(x.text))
		fmt.Fprintf(b, "<text x=\"%d\" y=\"%s\" class=\"value\" text-anchor=\"middle\">%s</text>\n", x0+w/2, num(float64(base)-h-4), esc(x.text))
	}
	for i, x := range bars[:buckets] {
		column(chartMargin+i*histSlot+histBarInset, histSlot-2*histBarInset, x, palette[0], "p95 "+x.label+" %")
	}
	for i := 0; i <= buckets; i++ {
		fmt.Fprintf(b, "<text x=\"%d\" y=\"%d\" class=\"label\" text-anchor=\"middle\">%d</text>", chartMargin+i*histSlot, base+16, i*10)
	}
	noData := axisEnd + histGap
	fmt.Fprintf(b, "\n<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" class=\"axis\"/>\n", noData, base, noData+histNoData, base)
	column(noData+histBarInset, histNoData-2*histBarInset, bars[buckets], "#9aa5b1", bars[buckets].label)
	fmt.Fprintf(b, "<text x=\"%d\" y=\"%d\" class=\"label\" text-anchor=\"middle\">%s</text>\n", noData+histNoData/2, base+16, esc(bars[buckets].label))
	fmt.Fprintf(b, "<text x=\"%d\" y=\"%d\" class=\"label\" text-anchor=\"middle\">p95 GPU utilization, %%</text>\n", (chartMargin+axisEnd)/2, height-6)
	b.WriteString("</svg>\n</figure>\n")
}

func maxValue(bars []bar) decimal.Decimal {
	m := decimal.Zero
	for _, x := range bars {
		if x.value.GreaterThan(m) {
			m = x.value
		}
	}
	return m
}

func nonZero(d decimal.Decimal) decimal.Decimal {
	if d.IsZero() {
		return decimal.NewFromInt(1)
	}
	return d
}

// scale is value ÷ largest × area, at least 1 unit for a positive value so
// that no bar vanishes, to two decimals.
func scale(value, largest decimal.Decimal, area int) string {
	w, _ := decimal.NewFromInt(int64(area)).Mul(value).DivRound(nonZero(largest), 2).Float64()
	if value.IsPositive() && w < 1 {
		w = 1
	}
	return num(w)
}

// num writes a coordinate with at most two decimals.
func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// palette is colour-blind-safe (Okabe–Ito).
var palette = []string{"#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#f0e442", "#000000"}

const htmlCSS = `body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1f2933; margin: 0 auto; max-width: 1200px; padding: 24px; overflow-wrap: anywhere; }
h1 { font-size: 24px; margin: 0 0 4px; }
h2 { font-size: 18px; margin: 32px 0 12px; border-bottom: 1px solid #e4e7eb; padding-bottom: 4px; }
h3 { font-size: 15px; margin: 24px 0 8px; }
.meta, footer { color: #616e7c; font-size: 12px; }
footer { margin-top: 32px; border-top: 1px solid #e4e7eb; padding-top: 8px; }
.cards { display: flex; flex-wrap: wrap; gap: 12px; }
.card { border: 1px solid #e4e7eb; border-radius: 6px; padding: 10px 14px; min-width: 150px; }
.card .label { color: #616e7c; font-size: 12px; }
.card .value { font-size: 20px; font-weight: 600; }
#summary-savings .value, #summary-savings-percent .value { color: #007a4d; }
.charts { display: flex; flex-wrap: wrap; gap: 16px; }
.chart { margin: 0; border: 1px solid #e4e7eb; border-radius: 6px; padding: 8px; max-width: 100%; box-sizing: border-box; }
.chart figcaption { font-weight: 600; margin-bottom: 4px; }
.chart svg { display: block; max-width: 100%; height: auto; }
.chart text { font-size: 12px; fill: #1f2933; }
.chart .axis { stroke: #9aa5b1; }
.empty { color: #616e7c; }
table.recs { border-collapse: collapse; width: 100%; font-size: 13px; }
table.recs th, table.recs td { border-bottom: 1px solid #e4e7eb; padding: 4px 6px; text-align: left; vertical-align: top; }
table.recs th { background: #f5f7fa; white-space: nowrap; overflow-wrap: normal; }
table.alloc, table.runs { width: auto; min-width: 50%; }
.num { text-align: right !important; white-space: nowrap; }
code { font-size: 12px; }
.badge { display: inline-block; padding: 0 8px; border-radius: 9px; font-size: 12px; font-weight: 600; white-space: nowrap; }
.badge.good { background: #e3f6ec; color: #00603c; }
.badge.fair { background: #fff4e5; color: #8a4b00; }
.badge.poor { background: #fde8e8; color: #9b1c1c; }
dl.metrics { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; margin: 0; }
dl.metrics div { display: contents; }
dl.metrics dt { color: #616e7c; }
dl.metrics dd { margin: 0; }
@media (max-width: 760px) {
  body { padding: 12px; }
  .card { min-width: 0; flex: 1 1 40%; }
  table.recs, table.recs tbody, table.recs tr, table.recs td { display: block; width: auto; min-width: 0; }
  table.recs thead { display: none; }
  table.recs tr { border: 1px solid #e4e7eb; border-radius: 6px; margin: 0 0 8px; padding: 4px 8px; }
  table.recs td { border: 0; padding: 2px 0; display: flex; justify-content: space-between; gap: 12px; text-align: right !important; white-space: normal; }
  table.recs td::before { content: attr(data-label); color: #616e7c; text-align: left; flex: none; }
  dl.metrics { grid-template-columns: 1fr; gap: 0; }
  dl.metrics dd { margin-bottom: 6px; }
}
`
