package report

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"
)

// writeMarkdown prints the report for CI logs and pull-request comments
// (GitHub-flavoured markdown): a headline, a summary table, one table per
// strategy with the evidence folded in <details>, and the warnings.
func writeMarkdown(w io.Writer, r *Report) error {
	s := r.Summary
	usd := func(m Money) string { return formatMoney(m, true) }
	var b strings.Builder

	name := r.Source.Fleet
	if name == "" {
		name = "(unnamed)"
	}
	fmt.Fprintf(&b, "## GPU cost report: %s\n\n", mdText(name))
	fmt.Fprintf(&b, "**Current %s/mo → optimized %s/mo, saving %s/mo (%s)**\n\n",
		usd(s.CurrentMonthlyCost), usd(s.OptimizedMonthlyCost), usd(s.MonthlySavings), percent(s.SavingsPercent))
	if line := partialScanLine(r); line != "" {
		fmt.Fprintf(&b, "> **Warning:** %s\n\n", mdText(line))
	}

	instances := strconv.Itoa(s.InstanceCount)
	if s.UnpricedCount > 0 {
		instances += fmt.Sprintf(" (%d unpriced, left out of the costs)", s.UnpricedCount)
	}
	b.WriteString("| | |\n|---|---:|\n")
	fmt.Fprintf(&b, "| Current monthly cost | %s |\n", usd(s.CurrentMonthlyCost))
	fmt.Fprintf(&b, "| Optimized monthly cost | %s |\n", usd(s.OptimizedMonthlyCost))
	fmt.Fprintf(&b, "| Monthly savings | %s (%s) |\n", usd(s.MonthlySavings), percent(s.SavingsPercent))
	fmt.Fprintf(&b, "| Instances | %s |\n", instances)
	fmt.Fprintf(&b, "| GPUs | %s |\n", strconv.FormatFloat(s.GPUCount, 'f', -1, 64))

	secs := sections(r)
	if len(secs) == 0 {
		b.WriteString("\nNo savings found.\n")
	} else {
		b.WriteString("\n| Strategy | Recommendations | Savings/mo |\n|---|---:|---:|\n")
		for _, sec := range secs {
			fmt.Fprintf(&b, "| %s | %d | %s |\n", mdText(sec.kind), len(sec.recs), usd(s.SavingsByKind[sec.kind]))
		}
		fmt.Fprintf(&b, "| **Total** | **%d** | **%s** |\n", len(r.Recommendations), usd(s.MonthlySavings))
	}

	for _, sec := range secs {
		fmt.Fprintf(&b, "\n### %s\n\n", mdText(sectionHeading(sec, s.SavingsByKind[sec.kind],
			func(m Money) string { return usd(m) + "/mo" })))
		b.WriteString("| Resource | Instance type | Action | Current/mo | Projected/mo | Savings/mo | Confidence | Risk |\n")
		b.WriteString("|---|---|---|---:|---:|---:|---|---|\n")
		for _, rec := range sec.recs {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n",
				mdCode(rec.ResourceID), mdCode(rec.InstanceType), mdText(actionText(rec)),
				usd(rec.CurrentMonthlyCost), usd(rec.ProjectedMonthlyCost), usd(rec.MonthlySavings),
				mdText(rec.Confidence), mdText(rec.Risk))
		}
		b.WriteString("\n<details><summary>Evidence</summary>\n")
		for _, rec := range sec.recs {
			writeEvidence(&b, rec)
		}
		b.WriteString("\n</details>\n")
	}

	writeMarkdownSections(&b, r)

	if len(r.Warnings) > 0 {
		fmt.Fprintf(&b, "\n### Warnings (%d)\n\n", len(r.Warnings))
		for _, wn := range r.Warnings {
			b.WriteString("- ")
			if wn.ResourceID != "" {
				b.WriteString(mdCode(wn.ResourceID) + ": ")
			}
			fmt.Fprintf(&b, "%s (%s)\n", mdText(wn.Message), mdCode(wn.Code))
		}
	}

	footer := []string{strings.TrimSpace(mdText(r.Tool.Name + " " + r.Tool.Version)),
		"report schema " + mdText(r.SchemaVersion), "generated " + r.GeneratedAt.UTC().Format(time.RFC3339)}
	if r.Source.Path != "" {
		footer = append(footer, "fleet "+mdText(r.Source.Path))
	}
	if cat := catalogText(r.Catalog); cat != "" {
		footer = append(footer, "prices: "+cat)
	}
	fmt.Fprintf(&b, "\n<sub>%s</sub>\n", strings.Join(footer, " · "))
	_, err := io.WriteString(w, b.String())
	return err
}

// writeEvidence writes one recommendation's evidence as a list.
func writeEvidence(b *strings.Builder, rec Recommendation) {
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
