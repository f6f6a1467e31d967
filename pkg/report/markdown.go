package report

import (
	"fmt"
	"io"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/money"
)

// MarkdownLimit is the most characters the markdown format prints whole: a
// GitHub comment holds 65,536, and the rest is room for what CI adds. A
// longer report is printed as its summary.
const MarkdownLimit = 60000

// DefaultTop is how many recommendations the markdown summary lists.
const DefaultTop = 10

// writeMarkdown prints the report for CI logs and pull-request comments
// (GitHub-flavoured markdown): whole (see writeMarkdownFull), or its summary
// when asked or when the whole would not fit a comment.
func writeMarkdown(w io.Writer, r *Report, opts PrintOptions) error {
	var out string
	over := opts.MarkdownSummary
	if !over {
		out, over = markdownFull(r, MarkdownLimit)
	}
	if over {
		out = markdownSummary(r, opts, !opts.MarkdownSummary)
	}
	_, err := io.WriteString(w, out)
	return err
}

// textWriter is where the markdown is written: a strings.Builder or capped.
type textWriter interface {
	io.Writer
	io.StringWriter
}

// capped keeps text up to limit characters (all of it when limit is 0) and
// past that only notes that there was more, so that a whole report too long
// for a comment is never held in memory.
type capped struct {
	b     strings.Builder
	limit int
	n     int
}

func (c *capped) Write(p []byte) (int, error) {
	c.n += len(p)
	if !c.over() {
		c.b.Write(p)
	}
	return len(p), nil
}

func (c *capped) WriteString(s string) (int, error) {
	c.n += len(s)
	if !c.over() {
		c.b.WriteString(s)
	}
	return len(s), nil
}

func (c *capped) over() bool { return c.limit > 0 && c.n > c.limit }

// markdownHead is the title, the headline and the partial-scan warning.
func markdownHead(b textWriter, r *Report) {
	s := r.Summary
	name := r.Source.Fleet
	if name == "" {
		name = "(unnamed)"
	}
	fmt.Fprintf(b, "## GPU cost report: %s\n\n", mdText(name))
	fmt.Fprintf(b, "**Current %s/mo → optimized %s/mo, saving %s/mo (%s)**\n\n",
		mdMoney(s.CurrentMonthlyCost), mdMoney(s.OptimizedMonthlyCost), mdMoney(s.MonthlySavings), percent(s.SavingsPercent))
	if u := s.UnusedCommitmentMonthlyCost; u != nil {
		fmt.Fprintf(b, "> Current and optimized include %s/mo of commitments paid for nothing (`unused-commitment`).\n\n", mdMoney(*u))
	}
	if line := partialScanLine(r); line != "" {
		fmt.Fprintf(b, "> **Warning:** %s\n\n", mdText(line))
	}
	if r.Billing != nil {
		fmt.Fprintf(b, "**Bill:** %s\n\n", mdText(r.Billing.Line))
	}
}

func mdMoney(m Money) string { return formatMoney(m, true) }

// markdownStrategies is the table of savings per strategy, with the total.
func markdownStrategies(b textWriter, r *Report, secs []section) {
	s := r.Summary
	if len(secs) == 0 {
		b.WriteString("\nNo savings found.\n")
		return
	}
	b.WriteString("\n| Strategy | Recommendations | Savings/mo |\n|---|---:|---:|\n")
	for _, sec := range secs {
		fmt.Fprintf(b, "| %s | %d | %s |\n", mdText(sec.kind), len(sec.recs), mdMoney(s.SavingsByKind[sec.kind]))
	}
	fmt.Fprintf(b, "| **Total** | **%d** | **%s** |\n", len(r.Recommendations), mdMoney(s.MonthlySavings))
}

// markdownFooter is the tool, schema, time, fleet and price data line.
func markdownFooter(b textWriter, r *Report) {
	footer := []string{strings.TrimSpace(mdText(r.Tool.Name + " " + r.Tool.Version)),
		"report schema " + mdText(r.SchemaVersion), "generated " + r.GeneratedAt.UTC().Format(time.RFC3339)}
	if r.Source.Path != "" {
		footer = append(footer, "fleet "+mdText(r.Source.Path))
	}
	if cat := catalogText(r.Catalog); cat != "" {
		footer = append(footer, "prices: "+cat)
	}
	fmt.Fprintf(b, "\n<sub>%s</sub>\n", strings.Join(footer, " · "))
}

// markdownFull is the whole report: a headline, a summary table, one table
// per strategy folded in <details> with its evidence, the cost, AI metrics
// and tags sections, and the warnings. It stops, reporting over, once the
// text passes limit characters (0: no limit).
func markdownFull(r *Report, limit int) (text string, over bool) {
	s := r.Summary
	b := &capped{limit: limit}
	markdownHead(b, r)

	instances := strconv.Itoa(s.InstanceCount)
	if s.UnpricedCount > 0 {
		instances += fmt.Sprintf(" (%d unpriced, left out of the costs)", s.UnpricedCount)
	}
	b.WriteString("| | |\n|---|---:|\n")
	fmt.Fprintf(b, "| Current monthly cost | %s |\n", mdMoney(s.CurrentMonthlyCost))
	fmt.Fprintf(b, "| Optimized monthly cost | %s |\n", mdMoney(s.OptimizedMonthlyCost))
	fmt.Fprintf(b, "| Monthly savings | %s (%s) |\n", mdMoney(s.MonthlySavings), percent(s.SavingsPercent))
	fmt.Fprintf(b, "| Instances | %s |\n", instances)
	fmt.Fprintf(b, "| GPUs | %s |\n", strconv.FormatFloat(s.GPUCount, 'f', -1, 64))

	secs := sections(r)
	markdownStrategies(b, r, secs)

	for _, sec := range secs {
		if b.over() {
			return "", true
		}
		fmt.Fprintf(b, "\n<details><summary><strong>%s</strong></summary>\n\n", mdText(sectionHeading(sec, s.SavingsByKind[sec.kind],
			func(m Money) string { return mdMoney(m) + "/mo" })))
		b.WriteString("| Resource | Instance type | Action | Current/mo | Projected/mo | Savings/mo | Confidence | Risk |\n")
		b.WriteString("|---|---|---|---:|---:|---:|---|---|\n")
		for _, rec := range sec.recs {
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n",
				mdCode(rec.ResourceID), mdCode(rec.InstanceType), mdText(actionText(rec)),
				mdMoney(rec.CurrentMonthlyCost), mdMoney(rec.ProjectedMonthlyCost), mdMoney(rec.MonthlySavings),
				mdText(rec.Confidence), mdText(rec.Risk))
		}
		b.WriteString("\n#### Evidence\n")
		for _, rec := range sec.recs {
			writeEvidence(b, rec)
		}
		b.WriteString("\n</details>\n")
	}

	writeMarkdownSections(b, r)

	writeMarkdownWarnings(b, r.Warnings, 0, 0)
	markdownFooter(b, r)
	return b.b.String(), b.over()
}

// Bounds that keep the summary short whatever the fleet: at most
// maxWarningGroups groups of warnings, and a group's message is cut.
const (
	maxWarningGroups  = 20
	maxWarningMessage = 300
)

// markdownSummary is the report in the size of a pull-request comment: the
// headline, the savings per strategy, the top recommendations by saving with
// their short actions, the warnings grouped by code and where the whole
// report is. auto says it replaces a whole report that was too long.
func markdownSummary(r *Report, opts PrintOptions, auto bool) string {
	var b strings.Builder
	markdownHead(&b, r)
	s := r.Summary
	fmt.Fprintf(&b, "%s · %s GPUs", plural(s.InstanceCount, "instance"), strconv.FormatFloat(s.GPUCount, 'f', -1, 64))
	if s.UnpricedCount > 0 {
		fmt.Fprintf(&b, " · %d unpriced, left out of the costs", s.UnpricedCount)
	}
	b.WriteString("\n")
	markdownStrategies(&b, r, sections(r))

	top := opts.Top
	if top <= 0 {
		top = DefaultTop
	}
	recs := make([]Recommendation, 0, len(r.Recommendations))
	for _, rec := range r.Recommendations {
		if rec.MonthlySavings.d.IsPositive() {
			recs = append(recs, rec)
		}
	}
	sort.SliceStable(recs, func(i, j int) bool {
		if c := recs[i].MonthlySavings.d.Cmp(recs[j].MonthlySavings.d); c != 0 {
			return c > 0
		}
		return recs[i].ID < recs[j].ID
	})
	if len(recs) > 0 {
		shown := recs[:min(top, len(recs))]
		fmt.Fprintf(&b, "\n### Top %d by saving\n\n", len(shown))
		b.WriteString("| Resource | Strategy | Action | Savings/mo | Risk |\n|---|---|---|---:|---|\n")
		for _, rec := range shown {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", mdCode(rec.ResourceID), mdText(rec.Kind),
				mdText(shortActionText(rec)), mdMoney(rec.MonthlySavings), mdText(rec.Risk))
		}
		if rest := len(r.Recommendations) - len(shown); rest > 0 {
			fmt.Fprintf(&b, "\n%s in the full report.\n", plural(rest, "more recommendation"))
		}
	}

	writeMarkdownWarnings(&b, r.Warnings, maxWarningGroups, maxWarningMessage)

	b.WriteString("\n")
	if auto {
		fmt.Fprintf(&b, "This is a summary: the whole report is over %s characters, more than a comment holds. ", money.Group(decimal.NewFromInt(MarkdownLimit), 0))
	}
	if opts.FullReport != "" {
		fmt.Fprintf(&b, "**Full report:** %s\n", mdLink(opts.FullReport))
	} else {
		b.WriteString("**Full report:** not attached; write it with `gpufinops analyze -o html` or `-o json` (and link it with `--full-report`).\n")
	}
	markdownFooter(&b, r)
	return b.String()
}

// mdLink is a URL as a link, anything else (a path, an artifact's name) as code.
func mdLink(s string) string {
	if u, err := url.Parse(s); err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" {
		return "<" + strings.NewReplacer("<", "%3C", ">", "%3E", " ", "%20").Replace(s) + ">"
	}
	return mdCode(s)
}

// writeEvidence writes one recommendation's evidence as a list.
func writeEvidence(b textWriter, rec Recommendation) {
	ev := rec.Evidence
	fmt.Fprintf(b, "\n**%s** %s: %s\n\n", mdText(rec.ID), mdCode(rec.ResourceID), mdText(rec.Rationale))
	if ev.Formula != "" {
		fmt.Fprintf(b, "- Formula: %s\n", mdText(ev.Formula))
	}
	if len(ev.Metrics) > 0 {
		fmt.Fprintf(b, "- Metrics: %s\n", floatMap(ev.Metrics))
	}
	if len(ev.Thresholds) > 0 {
		fmt.Fprintf(b, "- Thresholds: %s\n", floatMap(ev.Thresholds))
	}
	for _, p := range ev.Prices {
		zone := ""
		if p.Zone != "" {
			zone = " (" + p.Zone + ")"
		}
		fmt.Fprintf(b, "- Price: %s %s%s %s %s: %s %s/%s (%s, %s)\n",
			mdText(p.Provider), mdText(p.Region), mdText(zone), mdCode(p.InstanceType), mdText(p.Option),
			p.Hourly, mdText(p.Currency), mdText(p.Unit), mdText(p.Source), mdText(p.AsOf))
	}
	fmt.Fprintf(b, "- Billed hours a month: %s → %s\n",
		strconv.FormatFloat(ev.MonthlyHoursBefore, 'f', -1, 64), strconv.FormatFloat(ev.MonthlyHoursAfter, 'f', -1, 64))
	if rec.After != "" {
		fmt.Fprintf(b, "- Priced after %s\n", mdText(rec.After))
	}
	for _, n := range rec.RiskNotes {
		fmt.Fprintf(b, "- Risk: %s\n", mdText(n))
	}
	for _, n := range ev.Notes {
		fmt.Fprintf(b, "- Note: %s\n", mdText(n))
	}
}

// floatMap renders a map as "a = 1, b = 2.5", sorted by key.
func floatMap(m map[string]float64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = mdText(k) + " = " + strconv.FormatFloat(m[k], 'f', -1, 64)
	}
	return strings.Join(parts, ", ")
}

// catalogText lists the price data sets with their dates.
func catalogText(srcs []CatalogSource) string {
	if len(srcs) == 0 {
		return ""
	}
	parts := make([]string, len(srcs))
	for i, s := range srcs {
		parts[i] = mdText(s.Name) + " (" + mdText(s.AsOf) + ")"
	}
	return strings.Join(parts, ", ")
}

// mdCellEscaper keeps a table cell on one line and its pipes literal.
var mdCellEscaper = strings.NewReplacer("|", `\|`, "\r\n", " ", "\n", " ", "\r", " ")

// mdEscaper escapes what would break a table cell or start markup: pipes,
// emphasis, links, HTML and backslashes.
var mdEscaper = strings.NewReplacer(
	`\`, `\\`, "|", `\|`, "*", `\*`, "_", `\_`, "`", "\\`", "[", `\[`, "]", `\]`,
	"<", "&lt;", ">", "&gt;", "\r\n", " ", "\n", " ", "\r", " ",
)

// MarkdownText is s as literal Markdown text on one line, safe in a table cell.
func MarkdownText(s string) string { return mdEscaper.Replace(s) }

func mdText(s string) string { return MarkdownText(s) }

func mdCode(s string) string { return MarkdownCode(s) }

// MarkdownCode is s as an inline code span, safe inside a table cell.
func MarkdownCode(s string) string {
	if s == "" {
		return ""
	}
	s = mdCellEscaper.Replace(s)
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}

// writeMarkdownWarnings writes the warnings grouped by code (stale prices by
// source) as the terminal does (warningGroup.lines); with maxGroups > 0 the
// groups past it are counted, with maxMessage > 0 a message is cut to it.
func writeMarkdownWarnings(b textWriter, ws []Warning, maxGroups, maxMessage int) {
	if len(ws) == 0 {
		return
	}
	groups := groupWarnings(ws)
	fmt.Fprintf(b, "\n### %s\n\n", mdText(warningsHeading(ws, groups)))
	for i, g := range groups {
		if maxGroups > 0 && i == maxGroups {
			fmt.Fprintf(b, "- and %s more\n", plural(len(groups)-i, "group"))
			break
		}
		cut := func(msg string) string {
			if maxMessage > 0 {
				return truncate(msg, maxMessage)
			}
			return msg
		}
		switch {
		case g.n <= maxExamples && !g.merged:
			for _, wn := range g.items {
				b.WriteString("- ")
				if wn.ResourceID != "" {
					b.WriteString(mdCode(wn.ResourceID) + ": ")
				}
				fmt.Fprintf(b, "%s (%s)\n", mdText(cut(oneLine(wn.Message))), mdCode(wn.Code))
			}
		case g.merged:
			fmt.Fprintf(b, "- %s (%s × %d)\n", mdText(cut(g.message)), mdCode(g.code), g.n)
		default:
			head := fmt.Sprintf("%s × %d", mdCode(g.code), g.n)
			if len(g.examples) > 0 {
				ex := make([]string, len(g.examples))
				for k, e := range g.examples {
					ex[k] = mdCode(e)
				}
				head += ", e.g. " + strings.Join(ex, ", ")
				if g.n > len(ex) {
					head += ", …"
				}
			}
			fmt.Fprintf(b, "- %s: %s\n", head, mdText(cut(g.message)))
		}
	}
}
