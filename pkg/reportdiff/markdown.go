package reportdiff

import (
	"fmt"
	"io"
	"strings"

	"github.com/gpufinops/gpufinops/pkg/report"
)

// writeMarkdown prints the diff for pull-request and issue comments
// (GitHub-flavoured markdown): the headline and the totals first, then the
// instance and recommendation changes folded in <details>, each list in the
// diff's stable order.
func writeMarkdown(w io.Writer, d *Diff) error {
	usd := func(m report.Money) string { return money(m, true) }
	signed := func(m report.Money) string { return signedMoney(m, true) }
	s := d.Summary
	var b strings.Builder

	name := d.New.Fleet
	if name == "" {
		name = "(unnamed)"
	}
	fmt.Fprintf(&b, "## GPU cost report diff: %s\n\n", mdText(name))
	fmt.Fprintf(&b, "**Monthly savings %s → %s (%s); current cost %s → %s (%s)**\n\n",
		usd(s.MonthlySavings.Old), usd(s.MonthlySavings.New), signed(s.MonthlySavings.Change),
		usd(s.CurrentMonthlyCost.Old), usd(s.CurrentMonthlyCost.New), signed(s.CurrentMonthlyCost.Change))
	b.WriteString("| | Old | New | Change |\n|---|---:|---:|---:|\n")
	for _, r := range summaryRows(s, usd, signed) {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", mdText(r[0]), r[1], r[2], r[3])
	}
	in, rs := d.Instances, d.Recommendations
	fmt.Fprintf(&b, "\nInstances: %s. Recommendations: %s.\n", instanceCounts(in), mdText(recommendationCounts(rs, usd)))

	if rows := instanceRows(in, true); len(rows) > 0 {
		fmt.Fprintf(&b, "\n<details><summary>Instances: %s</summary>\n\n", instanceCounts(in))
		b.WriteString("| Change | Resource | Provider | Region | Details | Cost/mo |\n|---|---|---|---|---|---:|\n")
		for _, r := range rows {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", r[0], mdCode(r[1]), mdText(r[2]), mdText(r[3]), mdText(r[4]), r[5])
		}
		b.WriteString("\n</details>\n")
	}
	if rows := recommendationRows(rs, true); len(rows) > 0 {
		fmt.Fprintf(&b, "\n<details><summary>Recommendations: %s</summary>\n\n", mdText(recommendationCounts(rs, usd)))
		b.WriteString("| Change | ID | Kind | Resource | Savings/mo | Details |\n|---|---|---|---|---:|---|\n")
		for _, r := range rows {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", r[0], mdText(r[1]), mdText(r[2]), mdCode(r[3]), r[4], mdText(r[5]))
		}
		b.WriteString("\n</details>\n")
	}
	fmt.Fprintf(&b, "\n<sub>old: %s (%s, schema %s) · new: %s (%s, schema %s) · diff %s</sub>\n",
		mdText(d.Old.File), d.Old.GeneratedAt, mdText(d.Old.SchemaVersion),
		mdText(d.New.File), d.New.GeneratedAt, mdText(d.New.SchemaVersion), d.DiffVersion)
	_, err := io.WriteString(w, b.String())
	return err
}

func mdText(s string) string { return report.MarkdownText(s) }

func mdCode(s string) string { return report.MarkdownCode(s) }
