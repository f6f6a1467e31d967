package tags

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	"github.com/spf13/cobra"

	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/config"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/governance"
	"github.com/gpufinops/gpufinops/pkg/idlestop"
	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/pkg/money"
	"github.com/gpufinops/gpufinops/pkg/recommend"
	"github.com/gpufinops/gpufinops/pkg/tableprinter"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/providers"
)

// AuditOptions are the inputs of `gpufinops tags audit`.
type AuditOptions struct {
	IO      *iostreams.IOStreams
	Config  func() (*config.Config, error)
	Catalog func() (pricing.Catalog, error)
	Fleet   func(path string, demo bool) (*fleet.Fleet, error)
	// Scan reads the clouds live (--provider); Ctx bounds it.
	Scan cmdutil.ScanFunc
	Ctx  context.Context
	Now  func() time.Time

	Input cmdutil.FleetFlags
	// Format is table, json or csv.
	Format string
	// Filter is the --jq or --template filter of the JSON output; nil prints it whole.
	Filter cmdutil.Filter
	// Require replaces the policy's required tags; nil keeps them.
	Require []string
}

// NewCmdAudit builds the command; runF replaces the run function in tests.
func NewCmdAudit(f *cmdutil.Factory, runF func(*AuditOptions) error) *cobra.Command {
	opts := &AuditOptions{IO: f.IOStreams, Config: f.Config, Catalog: f.Catalog, Fleet: f.Fleet, Scan: f.Scan, Now: f.Now}
	var require string
	var out *cmdutil.Output
	def := governance.DefaultPolicy()
	cmd := &cobra.Command{
		Use:   "audit (--fleet FILE | --demo)",
		Short: "Find instances with missing or invalid tags and the spend they leave unattributed",
		Long: `Audit checks every instance of a fleet against the tag policy and prints:

  - each instance with a missing tag, a value the policy does not allow (with the
    allowed values), or a key or value spelt in another case (team for Team);
    the monthly spend of an instance counts once however many tags it lacks;
  - the share of instances and of spend that complies, and counts per tag;
  - the current and optimized monthly cost by team, project, workload type,
    environment and cloud, with an (untagged) bucket; each adds up to the total;
  - AI cost metrics: GPU efficiency (busy / paid GPU-hours), cost per busy
    GPU-hour, per 1M output tokens and per 1,000 requests where the snapshot
    has throughput, and the cost of each training run.

Keys match ignoring case, '-', '_' and spaces, so GCP labels (lower-case by
rule) such as workload_type count without a note. ModelName is required only
of training, inference and fine-tuning workloads. Costs come from the same
engine as analyze. Docs: docs/governance.md.`,
		Example: `  $ gpufinops tags audit --demo
  $ gpufinops tags audit --fleet fleet.yaml -o json > audit.json
  $ gpufinops tags audit --demo --require Team,Project,CostCenter -o csv`,
		Args: cmdutil.FleetArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Ctx = cmd.Context()
			opts.Format, opts.Filter = out.Format(), out.Filter
			if err := opts.Input.Validate(); err != nil {
				return err
			}
			if cmd.Flags().Changed("require") {
				tags, err := governance.ParseTagList(require)
				if err != nil {
					return cmdutil.FlagErrorf("--require: %s", err)
				}
				opts.Require = tags
			}
			if runF != nil {
				return runF(opts)
			}
			return auditRun(opts)
		},
	}
	cmdutil.AddFleetFlags(cmd, &opts.Input)
	out = cmdutil.AddOutputFlags(cmd, cmdutil.FormatTable, cmdutil.FormatJSON, cmdutil.FormatCSV)
	cmd.Flags().StringVar(&require, "require", strings.Join(def.RequiredTags, ","), "comma-separated tags every instance must carry")
	return cmd
}

// result is one audit with what the printers need besides the report.
type result struct {
	governance.Report
	fleetName, source string
	policy            governance.Policy
	items             []governance.Item
	plan              recommend.Plan
}

func auditRun(opts *AuditOptions) (err error) {
	opts.Input.Quiet = cmdutil.Quiet(opts.Format)
	in, err := cmdutil.ReadFleet(opts.Ctx, opts.Config, opts.Catalog, opts.Fleet, opts.Scan, opts.Input)
	if err != nil {
		return err
	}
	defer in.Finish(opts.IO.ErrOut, &err)
	cfg, cat, fl := in.Config, in.Catalog, in.Fleet
	policy := cfg.Policy
	if opts.Require != nil {
		policy.Governance.RequiredTags = opts.Require
	}
	if err := policy.Governance.Validate(); err != nil {
		return &cmdutil.InputError{Err: err}
	}
	plan := recommend.RunWith(fl, cat, policy, protected(cfg))
	res := &result{
		Report:    plan.Governance,
		fleetName: fl.Metadata.Name,
		source:    opts.Input.Path,
		policy:    policy.Governance,
		items:     joinCosts(fl, plan),
		plan:      plan,
	}
	if opts.Input.Demo {
		res.source = "demo"
	}
	doc := governance.NewDocument(res.Report, opts.Now(), res.fleetName, res.source)
	return cmdutil.Print(opts.Ctx, opts.IO.Out, opts.Format, opts.Filter, doc, cmdutil.Printers{
		cmdutil.FormatCSV: func(w io.Writer) error { return writeCSV(w, res) },
		cmdutil.FormatTable: func(io.Writer) error {
			if len(fl.Instances) == 0 {
				opts.IO.Notef("%s has no instances\n", opts.Input.SourceName())
				return nil
			}
			return writeTable(opts.IO, res)
		},
	})
}

// joinCosts pairs a fleet's instances with the engine's costs of them.
func joinCosts(fl *fleet.Fleet, plan recommend.Plan) []governance.Item {
	costs := make(map[string]recommend.InstanceCost, len(plan.Instances))
	for _, ic := range plan.Instances {
		costs[ic.ResourceID] = ic
	}
	items := make([]governance.Item, len(fl.Instances))
	for i := range fl.Instances {
		it := governance.NewItem(&fl.Instances[i])
		if ic, ok := costs[it.ID]; ok && ic.Priced {
			it.Priced = true
			it.MonthlyCost, it.OptimizedCost = ic.MonthlyCost, ic.OptimizedCost
			if ic.Hourly != nil {
				it.HourlyPrice = ic.Hourly.Hourly
			}
		}
		items[i] = it
	}
	return items
}

// writeCSV writes one row per instance: its attribution, what its tags lack,
// its costs and its AI cost metrics. The cost columns add up to the fleet's.
func writeCSV(w io.Writer, res *result) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"resourceId", "provider", "account", "region", "instanceType",
		"team", "project", "workloadType", "environment", "compliant", "missing", "invalid", "caseMismatch",
		"priced", "currentMonthlyCost", "optimizedMonthlyCost", "gpuEfficiencyPercent", "costPerBusyGpuHour",
		"costPerMillionTokens", "costPerThousandRequests", "trainingRun"})
	byID := map[string]governance.InstanceViolations{}
	for _, v := range res.Audit.Violations {
		byID[v.ResourceID] = v
	}
	for i, it := range res.items {
		a := governance.Attribute(it, res.policy)
		v, bad := byID[it.ID]
		compliant := !bad || v.Compliant
		m := res.Metrics.Instances[i]
		cur, opt := "", ""
		if it.Priced {
			cur, opt = money.Plain(it.MonthlyCost, money.USD), money.Plain(it.OptimizedCost, money.USD)
		}
		_ = cw.Write([]string{it.ID, string(it.Provider), it.Account, it.Region, it.InstanceType,
			untagged(a.Team), untagged(a.Project), untagged(a.WorkloadType), untagged(a.Environment),
			strconv.FormatBool(compliant), strings.Join(v.Missing, ";"), strings.Join(v.Invalid, ";"), strings.Join(v.CaseMismatch, ";"),
			strconv.FormatBool(it.Priced), cur, opt, optFloat(m.EfficiencyPercent), csvMoney(m.CostPerBusyGPUHour),
			unit(m.CostPerMillionTokens), unit(m.CostPerThousandRequests), m.TrainingRun})
	}
	cw.Flush()
	return cw.Error()
}

func untagged(s string) string {
	if s == "" {
		return governance.Untagged
	}
	return s
}

func optFloat(v *float64) string {
	if v == nil {
		return ""
	}
	return strconv.FormatFloat(*v, 'f', -1, 64)
}

func csvMoney(m *governance.Money) string {
	if m == nil {
		return ""
	}
	return money.Plain(m.Decimal, money.USD)
}

func unit(u *governance.UnitCost) string {
	if u == nil {
		return ""
	}
	return u.StringFixed(4)
}

// printer renders amounts for a terminal ("$1,234.56") or a pipe ("1234.56").
type printer struct {
	w     io.Writer
	tty   bool
	width int
}

func (p printer) usd(d decimal.Decimal) string { return money.Cell(d, money.USD, p.tty) }

// perMonth is "$1,234.56/month" on a terminal, "1234.56 USD/month" elsewhere.
func (p printer) perMonth(d decimal.Decimal) string {
	if p.tty {
		return money.Format(d, money.USD) + "/month"
	}
	return money.Plain(d, money.USD) + " USD/month"
}

// sentence is an amount inside a sentence: "$14.22" or "14.22 USD".
func (p printer) sentence(d decimal.Decimal) string {
	if p.tty {
		return money.Format(d, money.USD)
	}
	return money.Plain(d, money.USD) + " USD"
}

// sentenceUnit is a unit cost inside a sentence: "$1.1560" or "1.1560 USD".
func (p printer) sentenceUnit(u *governance.UnitCost) string {
	switch {
	case u == nil:
		return "-"
	case p.tty:
		return money.FormatPlaces(u.Decimal, money.USD, 4)
	}
	return u.StringFixed(4) + " USD"
}

func (p printer) unitCost(u *governance.UnitCost) string {
	if u == nil {
		return "-"
	}
	return money.CellPlaces(u.Decimal, money.USD, 4, p.tty)
}

func (p printer) optMoney(m *governance.Money) string {
	if m == nil {
		return "-"
	}
	return p.usd(m.Decimal)
}

func (p printer) table(headers []string, right ...int) *tableprinter.Table {
	t := tableprinter.New(p.w, p.tty, headers...)
	t.AlignRight(right...)
	t.SetWidth(p.width)
	return t
}

// writeTable writes the page on stdout, then its footnotes on stderr, so
// that on a terminal, where both show, the notes follow the report.
func writeTable(ios *iostreams.IOStreams, res *result) error {
	var page, notes bytes.Buffer
	tty, width := ios.IsStdoutTTY(), ios.TerminalWidth()
	if err := writePage(&page, &notes, tty, width, res); err != nil {
		return err
	}
	out := page.String()
	if tty {
		out = tableprinter.Wrap(out, width)
	}
	if _, err := io.WriteString(ios.Out, out); err != nil {
		return err
	}
	_, err := notes.WriteTo(ios.ErrOut)
	return err
}

// writePage writes the audit for people (tty) or pipes; on a terminal the
// tables fit width.
func writePage(out, errOut io.Writer, tty bool, width int, res *result) error {
	p := printer{w: out, tty: tty, width: width}
	a := res.Audit
	w := p.w

	name := res.fleetName
	if name == "" {
		name = res.source
	} else {
		name += " (" + res.source + ")"
	}
	fmt.Fprintf(w, "Tag audit of %s · %d instances · required: %s\n", name, a.InstanceCount, requiredList(res.policy))
	fmt.Fprintf(w, "%s of %s (%.1f %%) carries incomplete tags; %d of %d instances (%.1f %%) comply\n",
		p.perMonth(a.NonCompliantMonthlyCost.Decimal), p.perMonth(a.MonthlyCost.Decimal), 100-a.CompliancePercentBySpend,
		a.CompliantCount, a.InstanceCount, a.CompliancePercentByInstances)
	if a.UnpricedCount > 0 {
		fmt.Fprintf(w, "%d instances have no price; their spend counts as 0\n", a.UnpricedCount)
	}

	if len(a.Violations) > 0 {
		fmt.Fprintf(w, "\nViolations: %d instances, costliest first\n", len(a.Violations))
		// Headers are words only: the terminal renderer splits them at punctuation and digits.
		t := p.table([]string{"resource", "provider", "missing", "invalid", "case", "monthly cost"}, 5)
		t.Key(0, 2, 5)
		t.TruncateMiddle(0, 19)
		t.WrapColumn(2, 14)
		t.WrapColumn(3, 12)
		t.Truncate(4, 10)
		t.DropOrder(1, 4, 3)
		for _, v := range a.Violations {
			cost := p.usd(v.MonthlyCost.Decimal)
			if !v.Priced {
				cost = "unpriced"
			}
			t.AddRow(v.ResourceID, string(v.Provider), dashList(v.Missing), invalidList(v.Violations), dashList(v.CaseMismatch), cost)
		}
		if err := t.Render(); err != nil {
			return err
		}
	}

	fmt.Fprintf(w, "\nBy tag\n")
	t := p.table([]string{"tag", "missing", "invalid", "case", "affected monthly cost"}, 1, 2, 3, 4)
	for _, s := range a.Tags {
		tag := s.Tag
		if !s.Required {
			tag += " (optional)"
		}
		t.AddRow(tag, strconv.Itoa(s.Missing), strconv.Itoa(s.Invalid), strconv.Itoa(s.CaseMismatch), p.usd(s.MonthlyCost.Decimal))
	}
	if err := t.Render(); err != nil {
		return err
	}

	al := res.Allocation
	for _, dim := range []struct {
		title   string
		buckets []governance.Bucket
	}{
		{"team", al.ByTeam}, {"project", al.ByProject}, {"workload type", al.ByWorkloadType},
		{"environment", al.ByEnvironment}, {"provider", al.ByProvider},
	} {
		fmt.Fprintf(w, "\nCost by %s\n", dim.title)
		t := p.table([]string{dim.title, "instances", "current", "optimized", "share"}, 1, 2, 3, 4)
		for _, b := range dim.buckets {
			t.AddRow(b.Key, strconv.Itoa(b.Instances), p.usd(b.MonthlyCost.Decimal), p.usd(b.OptimizedMonthlyCost.Decimal),
				strconv.FormatFloat(b.SharePercent, 'f', 1, 64)+" %")
		}
		t.AddRow("total", strconv.Itoa(a.InstanceCount), p.usd(al.MonthlyCost.Decimal), p.usd(al.OptimizedMonthlyCost.Decimal), "100.0 %")
		if err := t.Render(); err != nil {
			return err
		}
	}

	if err := writeMetrics(p, res.Metrics); err != nil {
		return err
	}
	if p.tty {
		_, _ = io.WriteString(errOut, tableprinter.Wrap("\nAmounts are USD per month at the current cost; \"optimized\" applies every recommendation of 'gpufinops analyze'.\n"+
			"Efficiency = busy / paid GPU-hours, from the busiest GPU's average utilization (an upper bound for several GPUs). Formulas: docs/governance.md.\n", width))
	}
	return nil
}

func writeMetrics(p printer, m governance.Metrics) error {
	w := p.w
	f := m.Fleet
	fmt.Fprintf(w, "\nAI cost metrics\n")
	if f.EfficiencyPercent != nil {
		fmt.Fprintf(w, "GPU efficiency %.1f %%: %s busy of %s paid GPU-hours a month with utilization data",
			*f.EfficiencyPercent, hours(f.BusyGPUHours), hours(f.MeasuredGPUHours))
		if f.CostPerBusyGPUHour != nil {
			fmt.Fprintf(w, "; %s per busy GPU-hour", p.sentence(f.CostPerBusyGPUHour.Decimal))
		}
		fmt.Fprintln(w)
	} else {
		fmt.Fprintln(w, "No utilization data: no GPU efficiency")
	}
	if f.CostPerMillionTokens != nil || f.CostPerThousandRequests != nil {
		fmt.Fprintf(w, "Serving: %s per 1M output tokens, %s per 1,000 requests, over the instances that report throughput\n",
			p.sentenceUnit(f.CostPerMillionTokens), p.sentenceUnit(f.CostPerThousandRequests))
	}

	rows := slices.DeleteFunc(slices.Clone(m.Instances), func(im governance.InstanceMetrics) bool {
		return im.EfficiencyPercent == nil && im.CostPerMillionTokens == nil && im.CostPerThousandRequests == nil
	})
	// The costliest busy GPU-hour first: where paid GPU time works least.
	sort.SliceStable(rows, func(i, j int) bool {
		ci, cj := rows[i].CostPerBusyGPUHour, rows[j].CostPerBusyGPUHour
		switch {
		case ci == nil || cj == nil:
			return ci != nil && cj == nil
		case !ci.Equal(cj.Decimal):
			return ci.GreaterThan(cj.Decimal)
		}
		return rows[i].ResourceID < rows[j].ResourceID
	})
	if len(rows) > 0 {
		fmt.Fprintln(w)
		t := p.table([]string{"resource", "model", "gpus", "efficiency", "per busy GPU hour", "tokens per second", "per million tokens", "per thousand requests"},
			2, 3, 4, 5, 6, 7)
		for _, im := range rows {
			eff := "-"
			if im.EfficiencyPercent != nil {
				eff = strconv.FormatFloat(*im.EfficiencyPercent, 'f', 1, 64) + " %"
			}
			tps := "-"
			if im.TokensPerSecond != nil {
				tps = hours(*im.TokensPerSecond)
			}
			t.AddRow(im.ResourceID, dash(im.Model), hours(im.GPUCount), eff, p.optMoney(im.CostPerBusyGPUHour), tps,
				p.unitCost(im.CostPerMillionTokens), p.unitCost(im.CostPerThousandRequests))
		}
		if err := t.Render(); err != nil {
			return err
		}
	}

	if len(m.TrainingRuns) > 0 {
		fmt.Fprintf(w, "\nTraining runs\n")
		t := p.table([]string{"run", "instances", "gpus", "monthly cost", "expected hours", "run cost"}, 2, 3, 4, 5)
		for _, r := range m.TrainingRuns {
			exp := "-"
			if r.ExpectedHours != nil {
				exp = hours(*r.ExpectedHours)
			}
			monthly := p.usd(r.MonthlyCost.Decimal)
			if !r.Priced {
				monthly = "unpriced"
			}
			t.AddRow(r.ID, strings.Join(r.Instances, ", "), hours(r.GPUCount), monthly, exp, p.optMoney(r.RunCost))
		}
		if err := t.Render(); err != nil {
			return err
		}
	}
	return nil
}

// requiredList names the required tags, ModelName with its condition.
func requiredList(p governance.Policy) string {
	if len(p.RequiredTags) == 0 {
		return "none"
	}
	parts := make([]string, len(p.RequiredTags))
	for i, t := range p.RequiredTags {
		parts[i] = t
		if strings.EqualFold(t, governance.TagModelName) && len(p.ModelNameWorkloads) > 0 {
			parts[i] += " (" + strings.Join(p.ModelNameWorkloads, ", ") + ")"
		}
	}
	return strings.Join(parts, ", ")
}

// invalidList is "Environment=prod, WorkloadType=HPO".
func invalidList(vs []governance.Violation) string {
	var parts []string
	for _, v := range vs {
		if v.Kind == governance.KindInvalidValue {
			parts = append(parts, v.Tag+"="+v.Value)
		}
	}
	return dashList(parts)
}

func dashList(s []string) string {
	if len(s) == 0 {
		return "-"
	}
	return strings.Join(s, ", ")
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// hours shows a number with at most one decimal and thousands unseparated:
// 730, 260.7, 0.4.
func hours(v float64) string {
	return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64)
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
