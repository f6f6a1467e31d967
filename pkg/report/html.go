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
	b.WriteString("</header>\n")

	b.WriteString("<section id=\"summary\">\n<h2>Summary</h2>\n<div class=\"cards\">\n")
	instances := strconv.Itoa(s.InstanceCount)
	if s.UnpricedCount > 0 {
		instances += fmt.Sprintf(" (%d unpriced)", s.UnpricedCount)
	}
	for _, c := range [][3]string{
		{"current", "Current monthly cost", usd(s.CurrentMonthlyCost)},
		{"optimized", "Optimized monthly cost", usd(s.OptimizedMonthlyCost)},
		{"savings", "Monthly savings", usd(s.MonthlySavings)},
		{"savings-percent", "Savings", percent(s.SavingsPercent)},
		{"instances", "Instances", instances},
		{"gpus", "GPUs", strconv.FormatFloat(s.GPUCount, 'f', -1, 64)},
	} {
		fmt.Fprintf(&b, "<div class=\"card\" id=\"summary-%s\"><div class=\"label\">%s</div><div class=\"value\">%s</div></div>\n",
			c[0], esc(c[1]), esc(c[2]))
	}
	b.WriteString("</div>\n</section>\n")

	b.WriteString("<section id=\"charts\">\n<h2>Charts</h2>\n<div class=\"charts\">\n")
	barChart(&b, ChartSpendByProvider, "Monthly spend by provider", spendByProvider(r))
	barChart(&b, ChartSpendByTeam, "Monthly spend by team", spendByTeam(r))
	barChart(&b, ChartSpendByGPUModel, "Monthly spend by GPU model", spendByGPUModel(r))
	barChart(&b, ChartSavingsByStrategy, "Monthly savings by strategy", savingsByStrategy(r))
	histogram(&b, ChartUtilization, "Instances by average GPU utilization", utilizationBuckets(r))
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
			fmt.Fprintf(&b, "<tr id=\"rec-%s\"><td><code>%s</code></td><td><code>%s</code></td><td>%s</td>"+
				"<td class=\"num\">%s</td><td class=\"num\">%s</td><td class=\"num\">%s</td>"+
				"<td>%s</td><td>%s</td></tr>\n",
				esc(rec.ID), esc(rec.ResourceID), esc(rec.InstanceType), esc(actionText(rec)),
				usd(rec.CurrentMonthlyCost), usd(rec.ProjectedMonthlyCost), usd(rec.MonthlySavings),
				esc(rec.Confidence), esc(rec.Risk))
		}
		b.WriteString("</tbody>\n</table>\n")
	}
	b.WriteString("</section>\n")

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

// utilizationBuckets counts instances by average GPU utilization (the
// report's aiMetrics) in ten 10-point buckets, and those without data. The
// report carries each instance's average, not its p95.
func utilizationBuckets(r *Report) []bar {
	counts := make([]int, 11)
	measured := map[string]bool{}
	if r.AIMetrics != nil {
		for _, m := range r.AIMetrics.Instances {
			if m.GPUUtilAvg == nil {
				continue
			}
			measured[m.ResourceID] = true
			i := min(max(int(*m.GPUUtilAvg/10), 0), 9)
			counts[i]++
		}
	}
	for _, in := range r.Instances {
		if !measured[in.ResourceID] {
			counts[10]++
		}
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
		fmt.Fprintf(b, "<text x=\"%d\" y=\"%d\" class=\"label\" text-anchor=\"end\">%s</text>", labelWidth-8, y+barHeight-4, esc(truncate(x.label, 24)))
		fmt.Fprintf(b, "<rect x=\"%d\" y=\"%d\" width=\"%s\" height=\"%d\" fill=\"%s\"><title>%s: %s</title></rect>",
			labelWidth, y, w, barHeight, palette[i%len(palette)], esc(x.label), esc(x.text))
		fmt.Fprintf(b, "<text x=\"%d\" y=\"%d\" class=\"value\">%s</text>\n", chartWidth-valueWidth+6, y+barHeight-4, esc(x.text))
	}
	b.WriteString("</svg>\n</figure>\n")
}

// histogram draws vertical bars, one per bucket, scaled to the largest count.
func histogram(b *strings.Builder, id, title string, bars []bar) {
	fmt.Fprintf(b, "<figure class=\"chart\" id=\"%s\">\n<figcaption>%s</figcaption>\n", id, esc(title))
	const plotHeight, top, bottom = 160, 20, 36
	height := top + plotHeight + bottom
	fmt.Fprintf(b, "<svg viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" role=\"img\" aria-label=\"%s\">\n",
		chartWidth, height, chartWidth, height, esc(title))
	largest := maxValue(bars)
	slot := (chartWidth - 2*chartMargin) / len(bars)
	fmt.Fprintf(b, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" class=\"axis\"/>\n", chartMargin, top+plotHeight, chartWidth-chartMargin, top+plotHeight)
	for i, x := range bars {
		h, _ := decimal.NewFromInt(plotHeight).Mul(x.value).DivRound(nonZero(largest), 2).Float64()
		x0 := chartMargin + i*slot + 4
		fill := palette[0]
		if i == len(bars)-1 {
			fill = "#9aa5b1"
		}
		fmt.Fprintf(b, "<rect x=\"%d\" y=\"%s\" width=\"%d\" height=\"%s\" fill=\"%s\"><title>%s %%: %s instances</title></rect>",
			x0, num(float64(top+plotHeight)-h), slot-8, num(h), fill, esc(x.label), esc(x.text))
		fmt.Fprintf(b, "<text x=\"%d\" y=\"%s\" class=\"value\" text-anchor=\"middle\">%s</text>", x0+(slot-8)/2, num(float64(top+plotHeight)-h-4), esc(x.text))
		fmt.Fprintf(b, "<text x=\"%d\" y=\"%d\" class=\"label\" text-anchor=\"middle\">%s</text>\n", x0+(slot-8)/2, top+plotHeight+16, esc(x.label))
	}
	fmt.Fprintf(b, "<text x=\"%d\" y=\"%d\" class=\"label\" text-anchor=\"middle\">average GPU utilization, %%</text>\n", chartWidth/2, height-4)
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

const htmlCSS = `body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1f2933; margin: 0 auto; max-width: 1200px; padding: 24px; }
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
.chart { margin: 0; border: 1px solid #e4e7eb; border-radius: 6px; padding: 8px; }
.chart figcaption { font-weight: 600; margin-bottom: 4px; }
.chart svg { display: block; max-width: 100%; height: auto; }
.chart text { font-size: 12px; fill: #1f2933; }
.chart .axis { stroke: #9aa5b1; }
.empty { color: #616e7c; }
table.recs { border-collapse: collapse; width: 100%; font-size: 13px; }
table.recs th, table.recs td { border-bottom: 1px solid #e4e7eb; padding: 4px 6px; text-align: left; vertical-align: top; }
table.recs th { background: #f5f7fa; }
.num { text-align: right !important; white-space: nowrap; }
code { font-size: 12px; }
`
