package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/pkg/money"
	"github.com/gpufinops/gpufinops/pkg/recommend"
	"github.com/gpufinops/gpufinops/pkg/text"
)

// Formats lists the output formats Write accepts, in the order help shows them.
var Formats = []string{"table", "wide", "json", "csv", "markdown", "html"}

// PrintOptions say where a report is printed.
type PrintOptions struct {
	// TTY selects the rendering for people: aligned columns, "$12,345.67",
	// colour. Otherwise tables are tab-separated with plain numbers.
	TTY bool
	// Color is used on a TTY; nil means no colour.
	Color *iostreams.ColorScheme
	// Width is the terminal width the table fits; 0 means 120.
	Width int
	// MarkdownSummary prints the markdown format's summary instead of the
	// whole report; the summary is printed anyway when the whole report
	// would exceed MarkdownLimit characters.
	MarkdownSummary bool
	// FullReport says where the whole report is (a link or a path), for the
	// summary's pointer to it.
	FullReport string
	// Top is how many recommendations the summary lists; 0 means 10.
	Top int
	// ByStrategy prints the table and wide formats as sections by strategy,
	// one row per recommendation, instead of the ranked view of machines.
	ByStrategy bool
	// Limit is how many machines the ranked view lists; 0 fits one screen
	// of Height lines on a terminal, else DefaultLimit. All lists them all.
	Limit int
	All   bool
	// Height is the terminal's height in lines; 0 when unknown.
	Height int
}

// DefaultWidth is the table width used when PrintOptions.Width is 0.
const DefaultWidth = 120

// Write prints r to w in format, one of Formats.
func Write(w io.Writer, r *Report, format string, opts PrintOptions) error {
	switch format {
	case "table", "wide":
		if opts.ByStrategy {
			return writeTable(w, r, opts, format == "wide")
		}
		return writeActions(w, r, opts, format == "wide")
	case "json":
		return writeJSON(w, r)
	case "csv":
		return writeCSV(w, r)
	case "markdown":
		return writeMarkdown(w, r, opts)
	case "html":
		return writeHTML(w, r)
	}
	return fmt.Errorf("unknown output format %q: use one of %s", format, strings.Join(Formats, ", "))
}

// writeJSON writes the envelope indented by two spaces, with a final newline,
// a piece at a time (see writeJSONStream).
func writeJSON(w io.Writer, r *Report) error {
	return writeJSONStream(w, r)
}

// WriteConsumed writes plan's report as Write(w, Consume(plan, meta),
// "json", opts) would, byte for byte, without ever holding the report whole:
// each recommendation and instance is converted as it is written and
// released from the plan, so that a large fleet's plan and report are never
// both in memory. *plan is empty afterwards.
func WriteConsumed(w io.Writer, plan *recommend.Plan, meta Meta) error {
	r, conv := skeleton(plan, meta)
	releaseRest(plan)
	conv.evidencePrices = []Price{}
	return writeJSONLists(w, r, map[string]lazyList{
		"recommendations": {
			n: len(plan.Recommendations),
			write: func(s *streamer, i int, prefix string) {
				rec := conv.recommendation(i, true)
				if !s.fast(&rec, prefix) {
					s.encode(reflect.ValueOf(rec), prefix)
				}
			},
			done: func() { plan.Recommendations = nil },
		},
		"instances": {
			n: len(plan.Instances),
			write: func(s *streamer, i int, prefix string) {
				in := conv.instance(i, true)
				if !s.fast(&in, prefix) {
					s.encode(reflect.ValueOf(in), prefix)
				}
			},
			done: func() { plan.Instances = nil },
		},
	})
}

// CSVHeader is the header row of the csv format.
var CSVHeader = []string{
	"id", "resourceId", "provider", "account", "region", "instanceType", "kind", "action", "target",
	"currentMonthlyCost", "projectedMonthlyCost", "monthlySavings", "confidence", "risk", "rationale",
}

// writeCSV writes one row per recommendation, money as plain numbers, then
// one row of kind "warning" per failed part of the scan (see scanWarningRow).
func writeCSV(w io.Writer, r *Report) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
		return err
	}
	for _, rec := range r.Recommendations {
		row := []string{
			rec.ID, rec.ResourceID, rec.Provider, rec.Account, rec.Region, rec.InstanceType, rec.Kind,
			rec.Action, rec.Target, rec.CurrentMonthlyCost.String(), rec.ProjectedMonthlyCost.String(),
			rec.MonthlySavings.String(), rec.Confidence, rec.Risk, rec.Rationale,
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	for _, wn := range r.Warnings {
		if !IsScanWarning(wn) {
			continue
		}
		if err := cw.Write(scanWarningRow(wn)); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// partialScanLine says, for the top of the table, markdown and html, that
// the scan behind the report is incomplete; "" when it is whole.
func partialScanLine(r *Report) string {
	var scopes, metrics, types, commitments int
	for _, wn := range r.Warnings {
		switch {
		case !IsScanWarning(wn):
		case wn.Code == fleet.ScanMetricsFailed:
			metrics++
		case wn.Code == fleet.ScanCommitmentsFailed:
			commitments++
		case wn.Code == fleet.ScanUnknownType:
			types++
		default:
			scopes++
		}
	}
	var parts []string
	if scopes > 0 {
		parts = append(parts, plural(scopes, "scope")+" not scanned (their instances are missing)")
	}
	if metrics > 0 {
		parts = append(parts, plural(metrics, "metrics source")+" failed (utilization unknown, no idle advice)")
	}
	if types > 0 {
		parts = append(parts, plural(types, "instance type")+" unknown (their instances are listed without the facts or price missing, and without savings advice)")
	}
	if commitments > 0 {
		parts = append(parts, plural(commitments, "commitment API")+" could not be read (the commitments they list are missing, so advice may count savings on capacity already committed)")
	}
	if len(parts) == 0 {
		return ""
	}
	return "Incomplete scan: " + strings.Join(parts, "; ") + ". See the warnings."
}

// CSVWarningKind is the kind column of a csv row that is a scan warning.
const CSVWarningKind = "warning"

// IsScanWarning reports whether wn is about a part of the scan that failed
// rather than about one instance.
func IsScanWarning(wn Warning) bool {
	return wn.Scope != nil || wn.Code == fleet.ScanScopeFailed || wn.Code == fleet.ScanMetricsFailed || wn.Code == fleet.ScanUnknownType || wn.Code == fleet.ScanCommitmentsFailed
}

// scanWarningRow is a scan warning as a csv row: the code in id, the scope in
// provider, account, region and (the metrics source) target, kind "warning",
// the message in action and the reason in rationale; no money.
func scanWarningRow(wn Warning) []string {
	sc := wn.Scope
	if sc == nil {
		sc = &WarningScope{}
	}
	return []string{
		wn.Code, wn.ResourceID, sc.Provider, sc.Account, sc.Region, "", CSVWarningKind, wn.Message, sc.Source,
		"", "", "", "", "", wn.Reason,
	}
}

// section is the recommendations of one kind.
type section struct {
	kind string
	recs []Recommendation
}

// sections groups recommendations by kind in planner order, keeping the
// report's order inside each kind; kinds this build does not know follow,
// sorted by name. Empty kinds are left out.
func sections(r *Report) []section {
	byKind := map[string][]Recommendation{}
	for _, rec := range r.Recommendations {
		byKind[rec.Kind] = append(byKind[rec.Kind], rec)
	}
	var out []section
	for _, k := range recommend.Kinds {
		if recs := byKind[string(k)]; len(recs) > 0 {
			out = append(out, section{string(k), recs})
			delete(byKind, string(k))
		}
	}
	var rest []string
	for k := range byKind {
		rest = append(rest, k)
	}
	sort.Strings(rest)
	for _, k := range rest {
		out = append(out, section{k, byKind[k]})
	}
	return out
}

// sectionHeading heads a strategy's section: "spot: 9 recommendations,
// saving $9,512.68/mo", or for a kind that saves nothing by itself (tagging)
// "tagging: 6 recommendations, no direct saving".
func sectionHeading(sec section, savings Money, perMonth func(Money) string) string {
	head := sec.kind + ": " + plural(len(sec.recs), "recommendation")
	if savings.d.IsZero() {
		return head + ", no direct saving"
	}
	return head + ", saving " + perMonth(savings)
}

// actionText is the action, followed by the target when the action does not
// already name it.
func actionText(rec Recommendation) string {
	run := ""
	if rec.Command != "" {
		run = "; run: " + rec.Command
	}
	if rec.Target == "" || strings.Contains(rec.Action, rec.Target) || rec.Change != nil {
		return rec.Action + run
	}
	if rec.Action == "" {
		return rec.Target + run
	}
	return rec.Action + " → " + rec.Target + run
}

// shortActionText is what the table's action column shows: the short action,
// else (a report older than 1.5) where the change leads, else the sentence.
func shortActionText(rec Recommendation) string {
	switch {
	case rec.ShortAction != "":
		return rec.ShortAction
	case rec.Target != "":
		return "→ " + rec.Target
	}
	return rec.Action
}

// plural writes n and the noun, adding "s" unless n is 1 (text.Plural).
func plural(n int, noun string) string { return text.Plural(n, noun) }

// percent renders the savings percentage with one decimal (money.Percent).
func percent(n Number) string { return money.Percent(n.d) }
