// Package commitplan implements `gpufinops commit-plan`: how much steady GPU
// capacity to commit to per provider, region and family, for each term, after
// the plan has stopped, scheduled and rightsized what it can.
package commitplan

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	"github.com/spf13/cobra"

	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	cplan "github.com/gpufinops/gpufinops/pkg/commitplan"
	"github.com/gpufinops/gpufinops/pkg/config"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/idlestop"
	"github.com/gpufinops/gpufinops/pkg/iostreams"
	moneyfmt "github.com/gpufinops/gpufinops/pkg/money"
	"github.com/gpufinops/gpufinops/pkg/recommend"
	"github.com/gpufinops/gpufinops/pkg/tableprinter"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/providers"
)

// Term flag values.
const (
	termBoth = "both"
)

// Chart sizes: fixed so that output does not depend on the terminal.
const (
	chartWidth  = 56
	chartHeight = 8
)

// CommitPlanOptions are the inputs of `gpufinops commit-plan`.
type CommitPlanOptions struct {
	IO      *iostreams.IOStreams
	Config  func() (*config.Config, error)
	Catalog func() (pricing.Catalog, error)
	Fleet   func(path string, demo bool) (*fleet.Fleet, error)
	// Scan reads the clouds live (--provider); Ctx bounds it.
	Scan cmdutil.ScanFunc
	Ctx  context.Context
	Now  func() time.Time

	Input cmdutil.FleetFlags
	// Term is 1y, 3y or both.
	Term string
	// Output is table or json.
	Output string
	// Filter is the --jq or --template filter of the JSON output; nil prints it whole.
	Filter cmdutil.Filter
}

// NewCmdCommitPlan builds the command; runF replaces the run function in tests.
func NewCmdCommitPlan(f *cmdutil.Factory, runF func(*CommitPlanOptions) error) *cobra.Command {
	opts := &CommitPlanOptions{IO: f.IOStreams, Config: f.Config, Catalog: f.Catalog, Fleet: f.Fleet, Scan: f.Scan, Now: f.Now}
	var out *cmdutil.Output
	cmd := &cobra.Command{
		Use:   "commit-plan (--fleet FILE | --demo)",
		Short: "Size savings plans, reservations and committed use discounts from hourly usage",
		Long: `Commit-plan decides how much steady GPU capacity to commit to, per provider,
region and family (the scope of AWS Savings Plans and RIs, Azure reservations,
GCP committed use discounts), for a 1-year and a 3-year term.

It first runs the plan's rules (idle-stop, schedules, rightsizing, spot) so it
never commits capacity they would remove. It then lays each group's usage out
hour by hour over a representative week, in on-demand USD per hour, and picks
the commitment c that minimises c·(1−d)·730 plus the usage above c at on-demand
(or spot) prices. That is the level usage exceeds in a share 1−d of the hours:
a commitment at a level pays only when usage stays above it longer than that.

For each group and term it prints the commitment, its cost, the on-demand and
spot remainder, the saving, how much of the commitment is used, the split into
base (committed), burst (spot) and reserve (on demand), where spot beats a
commitment, and charts of the usage and the cost curve. Discounts are the
policy's (docs/rules.md); set your negotiated rates in the config. See
docs/commit-plan.md.`,
		Example: `  $ gpufinops commit-plan --demo
  $ gpufinops commit-plan --fleet fleet.yaml --term 3y
  $ gpufinops commit-plan --demo -o json | jq '.groups[] | {family, recommended}'`,
		Args: cmdutil.FleetArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Ctx = cmd.Context()
			opts.Output, opts.Filter = out.Format(), out.Filter
			if err := opts.Input.Validate(); err != nil {
				return err
			}
			if opts.Term != cplan.Term1y && opts.Term != cplan.Term3y && opts.Term != termBoth {
				return cmdutil.FlagErrorf("--term: %q is not 1y, 3y or both", opts.Term)
			}
			if runF != nil {
				return runF(opts)
			}
			return commitPlanRun(opts)
		},
	}
	cmdutil.AddFleetFlags(cmd, &opts.Input)
	cmd.Flags().StringVar(&opts.Term, "term", termBoth, "commitment term to plan: 1y, 3y or both")
	_ = cmd.RegisterFlagCompletionFunc("term", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{cplan.Term1y, cplan.Term3y, termBoth}, cobra.ShellCompDirectiveNoFileComp
	})
	out = cmdutil.AddOutputFlags(cmd, cmdutil.FormatTable, cmdutil.FormatJSON)
	return cmd
}

func commitPlanRun(opts *CommitPlanOptions) (err error) {
	opts.Input.Quiet = cmdutil.Quiet(opts.Output)
	in, err := cmdutil.ReadFleet(opts.Ctx, opts.Config, opts.Catalog, opts.Fleet, opts.Scan, opts.Input)
	if err != nil {
		return err
	}
	defer in.Finish(opts.IO.ErrOut, &err)
	cfg, cat, fl := in.Config, in.Catalog, in.Fleet
	policy := cfg.Policy
	if opts.Term != termBoth {
		policy.Commitment.Term = opts.Term
	}
	terms := discounts(policy.Commitment, opts.Term)
	// The engine plans commitments after idle-stop, schedules, rightsizing,
	// quantization, sharing and spot, at each type's commitment rate; this
	// command shows that plan in full.
	isf, err := cmdutil.ISF(cfg)
	if err != nil {
		return err
	}
	ro := protected(cfg)
	ro.ISF = isf
	p := onlyTerm(recommend.RunWith(fl, cat, policy, ro).Commitments, opts.Term)
	source := opts.Input.SourceName()
	if opts.Input.Demo {
		source = "demo"
	}
	h := header{fleet: fl.Metadata.Name, source: source, terms: terms, names: cfg.Policy.Commitment.Names, term: policy.Commitment.Term}
	return cmdutil.Print(opts.Ctx, opts.IO.Out, opts.Output, opts.Filter, cplan.NewDocument(p), cmdutil.Printers{
		cmdutil.FormatTable: func(w io.Writer) error { return writeTable(w, opts.IO, h, p) },
	})
}

// onlyTerm keeps one term of each group ("both" keeps every term), its
// recommendation and the plan's total following.
func onlyTerm(p cplan.Plan, term string) cplan.Plan {
	if term == termBoth {
		return p
	}
	p.SavingsMonthly = decimal.Zero
	for i, g := range p.Groups {
		var kept []cplan.TermPlan
		for _, t := range g.Terms {
			if t.Term == term {
				kept = append(kept, t)
			}
		}
		g.Terms, g.Recommended = append([]cplan.TermPlan{}, kept...), cplan.None
		for _, t := range kept {
			if t.SavingsMonthly.IsPositive() {
				g.Recommended = t.Term
				p.SavingsMonthly = p.SavingsMonthly.Add(t.SavingsMonthly)
			}
		}
		p.Groups[i] = g
	}
	return p
}

// discounts are the policy's configured commitment discounts per provider for the term
// ("1y", "3y" or "both").
func discounts(pol recommend.CommitmentPolicy, term string) map[fleet.Provider]cplan.Terms {
	out := map[fleet.Provider]cplan.Terms{}
	add := func(t string, m map[string]float64) {
		if term != t && term != termBoth {
			return
		}
		for p, d := range m {
			if out[fleet.Provider(p)] == nil {
				out[fleet.Provider(p)] = cplan.Terms{}
			}
			out[fleet.Provider(p)][t] = d
		}
	}
	add(cplan.Term1y, pol.Discounts1y)
	add(cplan.Term3y, pol.Discounts3y)
	return out
}

// header is what the table's first lines say.
type header struct {
	fleet, source string
	// term is the policy's term: the one recommended, as analyze buys it.
	term  string
	terms map[fleet.Provider]cplan.Terms
	names map[string]string
}

func writeTable(w io.Writer, ios *iostreams.IOStreams, h header, p cplan.Plan) error {
	tty, width := ios.IsStdoutTTY(), ios.TerminalWidth()
	var page bytes.Buffer
	if err := writePage(&page, tty, width, h, p); err != nil {
		return err
	}
	out := page.String()
	if tty {
		out = tableprinter.Wrap(out, width)
	}
	_, err := io.WriteString(w, out)
	return err
}

// writePage writes the plan for people (tty) or pipes; on a terminal the
// tables fit width.
func writePage(w io.Writer, tty bool, width int, h header, p cplan.Plan) error {
	name := h.fleet
	if name == "" {
		name = "fleet"
	}
	fmt.Fprintf(w, "Commitment plan for %s (%s): %d groups, usage over %s, scaled to 730 h a month\n", name, h.source, len(p.Groups), axisText(p))
	fmt.Fprintf(w, "Rates: public commitment rates per type and region, live where a scan read them (AWS Savings Plans, Azure reservations and savings plans, GCP CUD SKUs), else the catalog's dated data (docs/catalog.md); configured discounts: %s\n", discountText(h.terms, h.names))
	fmt.Fprintf(w, "Term: %s, policy.commitment.term, recommended where it saves, as analyze buys it (--term plans another)\n", h.term)
	for _, g := range p.Groups {
		fmt.Fprintln(w)
		if err := writeGroup(w, tty, width, g); err != nil {
			return err
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "Recommended: %s\n", recommendedText(fmtr{tty}, p))
	if len(p.Assumptions) > 0 {
		fmt.Fprintln(w, "\nAssumptions:")
		for _, a := range p.Assumptions {
			fmt.Fprintf(w, "- %s\n", a)
		}
	}
	if tty {
		fmt.Fprintln(w, "\nAmounts are a month (730 h); commitment levels are on-demand dollars per hour covered. -o json has every figure.")
	} else {
		fmt.Fprintln(w, "\nAmounts are USD a month (730 h), hourly figures USD per hour; commitment levels are on-demand USD per hour covered. -o json has every figure.")
	}
	return nil
}

func axisText(p cplan.Plan) string {
	weeks := p.Hours / 168
	span := "one representative week (168 h)"
	if weeks > 1 {
		span = fmt.Sprintf("%d weeks (%d h)", weeks, p.Hours)
	}
	if p.Start != nil {
		span += " from " + p.Start.Format("2006-01-02")
	}
	return span
}

func discountText(terms map[fleet.Provider]cplan.Terms, names map[string]string) string {
	var parts []string
	for _, prov := range fleet.Providers {
		t := terms[prov]
		if len(t) == 0 {
			continue
		}
		var ds []string
		for _, term := range []string{cplan.Term1y, cplan.Term3y} {
			if d, ok := t[term]; ok {
				ds = append(ds, term+" "+moneyfmt.PercentFloat(d*100))
			}
		}
		n := names[string(prov)]
		if n == "" {
			n = "commitment"
		}
		parts = append(parts, fmt.Sprintf("%s %s %s", prov, n, strings.Join(ds, ", ")))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "; ")
}

func groupName(g cplan.GroupPlan) string {
	return fmt.Sprintf("%s %s %s", g.Provider, g.Region, g.Family)
}

func writeGroup(w io.Writer, tty bool, width int, g cplan.GroupPlan) error {
	f := fmtr{tty}
	fmt.Fprintf(w, "== %s: %s\n", groupName(g), groupCounts(g))
	if g.KindNote != "" {
		fmt.Fprintf(w, "kind: %s\n", g.KindNote)
	}
	if len(g.Excluded) > 0 {
		var ex []string
		for _, e := range g.Excluded {
			ex = append(ex, e.ID+" ("+e.Reason+")")
		}
		fmt.Fprintf(w, "left out: %s\n", strings.Join(ex, ", "))
	}
	if len(g.Items) > 0 {
		u := g.Usage
		fmt.Fprintf(w, "usage: %s, mean %s, median %s, running %s of hours\n",
			f.rateRange(u.Min, u.Max), f.rate(u.Mean, 2), f.rate(u.P50, 2), moneyfmt.PercentFloat(u.RunningShare*100))
		if len(g.PlacementAssumed) > 0 {
			fmt.Fprintf(w, "placement assumed: %s\n", strings.Join(g.PlacementAssumed, ", "))
		}
		if tr := g.Trend; tr != nil {
			fmt.Fprintf(w, "trend: usage %s %s in the last week (mean %s → %s): sized on the last week\n",
				tr.Direction, moneyfmt.PercentFloat(math.Abs(tr.ChangePercent)), f.rate(tr.EarlierMean, 2), f.rate(tr.RecentMean, 2))
		}
		for _, t := range g.Terms {
			if t.Quantity > 0 {
				rate := ""
				if t.UnitRate.IsPositive() {
					rate = fmt.Sprintf(", %s each at the public rate: pay %s", f.rateExact(t.UnitRate), f.hourly(t.PayHourly))
				}
				fmt.Fprintf(w, "%s: buy %d × %s (%s each on demand%s)\n", t.Term, t.Quantity, t.UnitType, f.hourly(t.UnitHourly), rate)
			}
		}
		if len(g.Terms) == 0 {
			fmt.Fprintln(w, "no commitment rate is known for these types in this region: no commitment advised")
		} else if err := writeTerms(w, tty, width, g); err != nil {
			return err
		}
	}
	if err := writeSpot(w, tty, width, g); err != nil {
		return err
	}
	tp, ok := shown(g)
	if !ok || len(g.Items) == 0 {
		return nil
	}
	if err := writeLayers(w, tty, width, tp); err != nil {
		return err
	}
	if a := tp.Allocations; len(a) > 0 {
		var parts []string
		for _, x := range a {
			parts = append(parts, x.ID+" "+f.inline(x.SavingsMonthly))
		}
		fmt.Fprintf(w, "saving by instance (%s): %s\n", tp.Term, strings.Join(parts, ", "))
	}
	fmt.Fprintln(w)
	amounts := cplan.Amounts{Hourly: f.hourly, Monthly: f.inline}
	fmt.Fprint(w, cplan.DurationChartWith(g, tp, chartWidth, chartHeight, amounts))
	fmt.Fprintln(w)
	fmt.Fprint(w, cplan.ChartWith(tp, chartWidth, chartHeight, amounts))
	return nil
}

func groupCounts(g cplan.GroupPlan) string {
	parts := []string{count(len(g.Items), "instance") + " to plan"}
	if n := len(g.SpotItems); n > 0 {
		parts = append(parts, count(n, "on spot"))
	}
	if n := len(g.Excluded); n > 0 {
		parts = append(parts, count(n, "left out"))
	}
	rec := g.Recommended
	if len(g.Items) == 0 {
		rec = "nothing to commit"
	}
	return strings.Join(parts, ", ") + " · recommended: " + rec
}

func count(n int, what string) string {
	if what == "instance" && n != 1 {
		what = "instances"
	}
	return strconv.Itoa(n) + " " + what
}

// shown is the term whose layers and charts are printed: the recommended one,
// else the first.
func shown(g cplan.GroupPlan) (cplan.TermPlan, bool) {
	for _, t := range g.Terms {
		if t.Term == g.Recommended {
			return t, true
		}
	}
	if len(g.Terms) > 0 {
		return g.Terms[0], true
	}
	return cplan.TermPlan{}, false
}

func writeTerms(w io.Writer, tty bool, width int, g cplan.GroupPlan) error {
	// Headers are words only: the terminal renderer splits them at punctuation.
	f := fmtr{tty}
	t := tableprinter.New(w, tty, "term", "discount", "commit per hour", "pay per hour", "committed", "on demand", "spot", "total", "saving", "utilisation", "break even")
	t.AlignRight(1, 2, 3, 4, 5, 6, 7, 8, 9, 10)
	t.SetWidth(width)
	t.Key(0, 3, 8)
	t.DropOrder(6, 5, 4, 9, 10, 7, 2)
	for _, tp := range g.Terms {
		util := "-"
		if tp.CommitHourly.IsPositive() {
			util = moneyfmt.PercentFloat(tp.Utilization * 100)
		}
		term := tp.Term
		if tp.Term == g.Recommended {
			term += " *"
		}
		t.AddRow(term, moneyfmt.PercentFloat(tp.Discount*100), f.hourlyCell(tp.CommitHourly), f.hourlyCell(tp.PayHourly),
			f.cell(tp.CommittedMonthly), f.cell(tp.OnDemandMonthly), f.cell(tp.SpotMonthly), f.cell(tp.TotalMonthly),
			f.cell(tp.SavingsMonthly), util, moneyfmt.PercentFloat(tp.BreakEven*100))
	}
	if err := t.Render(); err != nil {
		return err
	}
	fmt.Fprintf(w, "baseline without a commitment: %s; all on demand: %s. * = recommended. break even: usage must exceed a level in more than this share of hours for a commitment at that level to pay.\n",
		f.inline(g.Terms[0].BaselineMonthly), f.inline(g.AllOnDemandMonthly))
	return nil
}

func writeLayers(w io.Writer, tty bool, width int, tp cplan.TermPlan) error {
	f := fmtr{tty}
	fmt.Fprintf(w, "layers (%s, commit %s):\n", tp.Term, f.hourly(tp.CommitHourly))
	t := tableprinter.New(w, tty, "layer", "carries", "usage at on demand", "cost", "share")
	t.AlignRight(2, 3, 4)
	t.SetWidth(width)
	for _, l := range []struct {
		name, what string
		l          cplan.Layer
	}{
		{cplan.LayerBase, "committed", tp.Layers.Base},
		{cplan.LayerBurst, "spot", tp.Layers.Burst},
		{cplan.LayerReserve, "on demand", tp.Layers.Reserve},
	} {
		t.AddRow(l.name, l.what, f.cell(l.l.UsageMonthly), f.cell(l.l.CostMonthly), moneyfmt.PercentFloat(l.l.Share*100))
	}
	return t.Render()
}

func writeSpot(w io.Writer, tty bool, width int, g cplan.GroupPlan) error {
	type row struct {
		check cplan.SpotCheck
		terms []cplan.SpotCheck
	}
	var rows []*row
	byID := map[string]*row{}
	for ti, tp := range g.Terms {
		for _, sc := range tp.Spot {
			r := byID[sc.ID]
			if r == nil {
				r = &row{check: sc, terms: make([]cplan.SpotCheck, len(g.Terms))}
				byID[sc.ID] = r
				rows = append(rows, r)
			}
			r.terms[ti] = sc
		}
	}
	if len(rows) == 0 {
		return nil
	}
	f := fmtr{tty}
	fmt.Fprintln(w, "spot against a commitment sized to the instance (the commitment pays only when hours share > break even = (1−d)/(1−s)):")
	headers := []string{"instance", "spot discount", "hours share", "on spot"}
	for _, tp := range g.Terms {
		headers = append(headers, tp.Term+" committed", tp.Term+" break even")
	}
	headers = append(headers, "cheapest")
	t := tableprinter.New(w, tty, headers...)
	for i := 1; i < len(headers)-1; i++ {
		t.AlignRight(i)
	}
	t.SetWidth(width)
	t.TruncateMiddle(0, 12)
	t.WrapColumn(len(headers)-1, 16)
	t.Key(0, len(headers)-1)
	for _, r := range rows {
		sc := r.check
		cells := []string{sc.ID, moneyfmt.PercentFloat(sc.SpotDiscount * 100), moneyfmt.PercentFloat(sc.HoursShare * 100), f.cell(sc.SpotMonthly)}
		best, bestTerm := sc.SpotMonthly, ""
		for ti, tc := range r.terms {
			be := moneyfmt.PercentFloat(tc.BreakEven * 100)
			if tc.BreakEven >= 1 {
				be = "never"
			}
			cells = append(cells, f.cell(tc.CommitMonthly), be)
			if tc.CommitMonthly.LessThan(best) {
				best, bestTerm = tc.CommitMonthly, g.Terms[ti].Term
			}
		}
		cheapest := "spot"
		if bestTerm != "" {
			cheapest = fmt.Sprintf("%s commitment, %s less than spot", bestTerm, f.inline(sc.SpotMonthly.Sub(best)))
			if sc.AlreadyOnSpot {
				cheapest += " (now on spot)"
			}
		}
		t.AddRow(append(cells, cheapest)...)
	}
	return t.Render()
}

func recommendedText(f fmtr, p cplan.Plan) string {
	var parts []string
	for _, g := range p.Groups {
		tp, ok := shown(g)
		if !ok || g.Recommended == cplan.None {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %s at %s (pay %s) saving %s", groupName(g), tp.Term,
			f.hourly(tp.CommitHourly), f.hourly(tp.PayHourly), f.inline(tp.SavingsMonthly)))
	}
	if len(parts) == 0 {
		return "no commitment pays"
	}
	return strings.Join(parts, "; ") + fmt.Sprintf(" · total saving %s a month", f.inline(p.SavingsMonthly))
}

// fmtr writes money one way per output: for people on a terminal
// ("$1,234.56", "$2.0120/h"), plain for pipes ("1234.56" in a cell,
// "1234.56 USD" and "2.0120 USD/h" in a sentence).
type fmtr struct{ tty bool }

func (f fmtr) cell(d decimal.Decimal) string { return moneyfmt.Cell(d, moneyfmt.USD, f.tty) }

func (f fmtr) hourlyCell(d decimal.Decimal) string {
	return moneyfmt.CellPlaces(d, moneyfmt.USD, 4, f.tty)
}

func (f fmtr) inline(d decimal.Decimal) string { return moneyfmt.Inline(d, moneyfmt.USD, f.tty) }

// hourly is an hourly amount in a sentence, to four decimals.
func (f fmtr) hourly(d decimal.Decimal) string { return f.hourlyPlaces(d, 4) }

// rate is a float hourly amount in a sentence, to places decimals.
func (f fmtr) rate(v float64, places int32) string {
	return f.hourlyPlaces(decimal.NewFromFloat(v), places)
}

// rateRange is lo–hi an hour, to cents: "$0.00–$1.58/h", "0.00–1.58 USD/h".
func (f fmtr) rateRange(lo, hi float64) string {
	l, h := decimal.NewFromFloat(lo), decimal.NewFromFloat(hi)
	if f.tty {
		return moneyfmt.FormatPlaces(l, moneyfmt.USD, 2) + "–" + moneyfmt.FormatPlaces(h, moneyfmt.USD, 2) + "/h"
	}
	return l.StringFixed(2) + "–" + h.StringFixed(2) + " USD/h"
}

// rateExact is an hourly rate in a sentence with all its decimals.
func (f fmtr) rateExact(d decimal.Decimal) string {
	return f.hourlyPlaces(d, max(-d.Exponent(), 2))
}

func (f fmtr) hourlyPlaces(d decimal.Decimal, places int32) string {
	if f.tty {
		return moneyfmt.FormatPlaces(d, moneyfmt.USD, places) + "/h"
	}
	return d.StringFixed(places) + " USD/h"
}

// protected are the engine options that protect what analyze and idle-stop
// protect: the configured idle_stop.* policy (its defaults when the
// configuration has none) and analyze.include_protected, so the machines
// they keep running are planned as running here too.
func protected(cfg *config.Config) recommend.Options {
	is := cfg.IdleStop
	if reflect.ValueOf(is).IsZero() {
		is = idlestop.DefaultPolicy()
	}
	pp := is.Protection()
	return recommend.Options{Protection: &pp, IncludeProtected: cfg.Analyze.IncludeProtected, ManagedCommand: providers.ManagedCommand}
}
