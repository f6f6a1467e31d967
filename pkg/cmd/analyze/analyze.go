// Package analyze implements `gpufinops analyze`: price a fleet, run the
// engine and print the report.
package analyze

import (
	"context"
	"fmt"
	"io"
	"os"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	"github.com/spf13/cobra"

	"github.com/gpufinops/gpufinops/pkg/build"
	billingCmd "github.com/gpufinops/gpufinops/pkg/cmd/billing"
	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/config"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/gates"
	"github.com/gpufinops/gpufinops/pkg/idlestop"
	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/pkg/recommend"
	"github.com/gpufinops/gpufinops/pkg/report"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/providers"
)

// AnalyzeOptions are the inputs of `gpufinops analyze`.
type AnalyzeOptions struct {
	IO      *iostreams.IOStreams
	Config  func() (*config.Config, error)
	Catalog func() (pricing.Catalog, error)
	Fleet   func(path string, demo bool) (*fleet.Fleet, error)
	// Scan reads the clouds live (--provider); Ctx bounds it.
	Scan cmdutil.ScanFunc
	Ctx  context.Context
	Now  func() time.Time

	Input  cmdutil.FleetFlags
	Format string

	// Policy overrides from flags; nil when the flag was not given.
	IdleThreshold  *float64
	CommitmentTerm *string
	// IncludeProtected is --include-protected: count the savings of machines
	// idle-stop protects; nil takes analyze.include_protected.
	IncludeProtected *bool

	// Gates are the --fail-on expressions, evaluated on the USD report
	// after it is written.
	Gates []gates.Gate
	// Filter is the --jq or --template filter of the JSON output; nil prints it whole.
	Filter cmdutil.Filter
	// Currency is the --currency code; "USD" prints the report as priced.
	Currency string
	// ExchangeRate is --exchange-rate; nil takes the configured rate.
	ExchangeRate *decimal.Decimal
	// Markdown shapes -o markdown: --markdown-summary, --full-report and
	// --markdown-top.
	Markdown MarkdownFlags
	// Billing is --billing: a FOCUS export whose effective rates price the
	// instances it bills; "" prices at list.
	Billing string
	// BillingStart and BillingEnd are --billing-start and --billing-end;
	// zero is open.
	BillingStart, BillingEnd time.Time
	// View shapes -o table and -o wide: --by, --limit and --all.
	View ViewFlags
}

// ViewFlags shape the table and wide formats.
type ViewFlags struct {
	// ByStrategy is --by strategy: sections by strategy, one row per
	// recommendation, instead of one ranked row per machine.
	ByStrategy bool
	// Limit is --limit: how many machines the ranked view lists; 0 fits one
	// screen on a terminal, else report.DefaultLimit.
	Limit int
	// All is --all: every machine.
	All bool
}

// MarkdownFlags shape the markdown format.
type MarkdownFlags struct {
	// Summary prints the summary even when the whole report would fit.
	Summary bool
	// FullReport is the link or path the summary points to.
	FullReport string
	// Top is how many recommendations the summary lists.
	Top int
}

// NewCmdAnalyze builds the command; runF replaces the run function in tests.
func NewCmdAnalyze(f *cmdutil.Factory, runF func(*AnalyzeOptions) error) *cobra.Command {
	opts := &AnalyzeOptions{IO: f.IOStreams, Config: f.Config, Catalog: f.Catalog, Fleet: f.Fleet, Scan: f.Scan, Now: f.Now}
	var idle float64
	var includeProtected bool
	var term, currency, rate, billStart, billEnd, by string
	var failOn []string
	var out *cmdutil.Output
	cmd := &cobra.Command{
		Use:   "analyze (--fleet FILE | --demo)",
		Short: "Recommend how to cut a GPU fleet's spend, with the saving of each change",
		Long: `Analyze reads a fleet snapshot, prices every instance from the catalog, and
applies the rules in order (idle-stop and schedules, rightsizing, spot,
commitments) so that each saving is computed on what the earlier ones left and
the total is the sum of its parts. Every recommendation carries its evidence:
the metrics, the thresholds and the prices used (see -o json).

Thresholds come from the policy (docs/rules.md); override them in the config
file, with GPUFINOPS_POLICY_* variables, or with the flags below.`,
		Example: `  $ gpufinops analyze --demo
  $ gpufinops analyze --demo --all -o wide
  $ gpufinops analyze --demo --by strategy
  $ gpufinops analyze --fleet fleet.yaml -o json > report.json
  $ gpufinops inventory --demo -o json | gpufinops analyze --fleet - -o markdown
  $ gpufinops analyze --demo --idle-threshold 10 --commitment-term 3y
  $ gpufinops analyze --fleet fleet.yaml -o json --fail-on 'savings>5000' > report.json
  $ gpufinops analyze --demo --fail-on 'savings:spot>1000&&confidence=high,idle-gpus>0'
  $ gpufinops analyze --demo -o json --jq '.summary.monthlySavings'
  $ gpufinops analyze --demo --currency EUR --exchange-rate 0.92
  $ gpufinops analyze --fleet fleet.yaml -o markdown --markdown-summary --full-report "$RUN_URL"
  $ gpufinops analyze --provider aws,azure,gcp --shard 2/8 -o json > part-2.json`,
		Args: cmdutil.FleetArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Ctx = cmd.Context()
			opts.Format, opts.Filter = out.Format(), out.Filter
			if err := opts.Input.Validate(); err != nil {
				return err
			}
			if !opts.Input.Shard.IsZero() && len(opts.Input.Providers) == 0 {
				return cmdutil.FlagErrorf("--shard %s slices a live scan's scopes: add --provider", opts.Input.Shard)
			}
			if cmd.Flags().Changed("include-protected") {
				opts.IncludeProtected = &includeProtected
			}
			if cmd.Flags().Changed("idle-threshold") {
				if err := cmdutil.CheckFloatFlag("--idle-threshold", idle, 0, 100, "%"); err != nil {
					return err
				}
				opts.IdleThreshold = &idle
			}
			for _, name := range []string{"markdown-summary", "full-report", "markdown-top"} {
				if cmd.Flags().Changed(name) && opts.Format != "markdown" {
					return cmdutil.FlagErrorf("--%s shapes the markdown report: add -o markdown", name)
				}
			}
			switch by {
			case "machine":
			case "strategy":
				opts.View.ByStrategy = true
			default:
				return cmdutil.FlagErrorf("--by: %q is not machine or strategy", by)
			}
			for _, name := range []string{"by", "limit", "all"} {
				if cmd.Flags().Changed(name) && opts.Format != "table" && opts.Format != "wide" {
					return cmdutil.FlagErrorf("--%s shapes the table: use -o table or -o wide", name)
				}
			}
			if cmd.Flags().Changed("limit") {
				switch {
				case opts.View.Limit < 1:
					return cmdutil.FlagErrorf("--limit: %d is not a positive number of machines", opts.View.Limit)
				case opts.View.All:
					return cmdutil.FlagErrorf("--limit and --all disagree: give one")
				}
			}
			if opts.View.ByStrategy && (cmd.Flags().Changed("limit") || opts.View.All) {
				return cmdutil.FlagErrorf("--limit and --all rank machines; --by strategy lists every recommendation")
			}
			if opts.Markdown.Top < 1 {
				return cmdutil.FlagErrorf("--markdown-top: %d is not a positive number of recommendations", opts.Markdown.Top)
			}
			if cmd.Flags().Changed("commitment-term") {
				if term != "1y" && term != "3y" {
					return cmdutil.FlagErrorf("--commitment-term: %q is not 1y or 3y", term)
				}
				opts.CommitmentTerm = &term
			}
			if opts.Billing == "" && (billStart != "" || billEnd != "") {
				return cmdutil.FlagErrorf("--billing-start and --billing-end bound the --billing export: add --billing SOURCE")
			}
			var err error
			if opts.BillingStart, opts.BillingEnd, err = billingCmd.Window(billStart, billEnd, "--billing-start", "--billing-end"); err != nil {
				return err
			}
			gs, err := gates.Parse(failOn)
			if err != nil {
				return &cmdutil.FlagError{Err: err}
			}
			opts.Gates = gs
			if opts.Currency, err = report.ParseCurrency(currency); err != nil {
				return cmdutil.FlagErrorf("--currency: %v", err)
			}
			if cmd.Flags().Changed("exchange-rate") {
				d, err := cmdutil.ParseExchangeRate(rate, opts.Currency)
				if err != nil {
					return cmdutil.FlagErrorf("--exchange-rate: %v", err)
				}
				if opts.Currency == pricing.Currency && !d.Equal(decimal.NewFromInt(1)) {
					return cmdutil.FlagErrorf("--exchange-rate needs --currency: the report is priced in USD")
				}
				opts.ExchangeRate = &d
			}
			if runF != nil {
				return runF(opts)
			}
			return analyzeRun(opts)
		},
	}
	cmdutil.AddFleetFlags(cmd, &opts.Input)
	cmd.Flags().Var(&opts.Input.Shard, "shard", "scan only slice I of N of the scopes (a stable hash of cloud and region: every account of a region in one shard) and write a partial report for gpufinops report merge, e.g. 2/8")
	out = cmdutil.AddOutputFlags(cmd, append(slices.Clone(report.Formats), report.FormatFOCUS)...)
	def := recommend.DefaultPolicy()
	cmd.Flags().Float64Var(&idle, "idle-threshold", def.Idle.GPUPercent, "GPU busy % (p95 of the busiest GPU) below which an instance is idle")
	cmd.Flags().StringVar(&term, "commitment-term", def.Commitment.Term, "commitment term to recommend: 1y or 3y")
	cmd.Flags().BoolVar(&includeProtected, "include-protected", false, "count the stop, schedule and deallocate savings of machines idle-stop protects (exempt, opted out, production, spot, inference, in use, multi-host) in the saving")
	cmd.Flags().StringArrayVar(&failOn, "fail-on", nil, "exit 5 after writing the report when an expression holds, e.g. 'savings>5000', 'idle-gpus>0', 'savings:spot>1000&&confidence=high' (repeatable; commas separate too)")
	cmd.Flags().StringVar(&currency, "currency", pricing.Currency, "print amounts in this currency (prices stay USD); needs a rate")
	cmd.Flags().StringVar(&rate, "exchange-rate", "", "units of --currency one USD buys (default: config report.exchange_rates.<CODE>)")
	cmd.Flags().BoolVar(&opts.Markdown.Summary, "markdown-summary", false, fmt.Sprintf("print the markdown report's summary (headline, totals, top recommendations, warnings); automatic over %d characters", report.MarkdownLimit))
	cmd.Flags().StringVar(&opts.Markdown.FullReport, "full-report", "", "link or path of the whole report, named in the markdown summary")
	cmd.Flags().IntVar(&opts.Markdown.Top, "markdown-top", report.DefaultTop, "recommendations the markdown summary lists, largest saving first")
	cmd.Flags().StringVar(&by, "by", "machine", "how the table groups the advice: machine (one ranked row per machine, its steps combined) or strategy (sections by strategy, one row per recommendation)")
	cmd.Flags().IntVar(&opts.View.Limit, "limit", 0, fmt.Sprintf("machines the table lists, largest saving first (default: one screen on a terminal, %d in a pipe)", report.DefaultLimit))
	cmd.Flags().BoolVar(&opts.View.All, "all", false, "list every machine in the table")
	cmd.Flags().StringVar(&opts.Billing, "billing", "", "FOCUS billing export (file or folder): price each instance at its effective rate and reconcile with the bill")
	cmd.Flags().StringVar(&billStart, "billing-start", "", "read the bill's charges from this date (YYYY-MM-DD or RFC 3339, UTC)")
	cmd.Flags().StringVar(&billEnd, "billing-end", "", "read the bill's charges before this date (YYYY-MM-DD or RFC 3339, UTC)")
	return cmd
}

func analyzeRun(opts *AnalyzeOptions) (err error) {
	if opts.Ctx == nil {
		// A caller without a command (tests, library use): the bill reader
		// checks the context every few thousand rows.
		opts.Ctx = context.Background()
	}
	opts.Input.Quiet = cmdutil.Quiet(opts.Format)
	limited, unlimit := startSoftLimit(os.Getenv)
	defer unlimit()
	resume := pauseTarget(limited, len(opts.Input.Providers) > 0)
	in, err := cmdutil.ReadFleet(opts.Ctx, opts.Config, opts.Catalog, opts.Fleet, opts.Scan, opts.Input)
	resume()
	if err != nil {
		return err
	}
	defer in.Finish(opts.IO.ErrOut, &err)
	cat, fl := in.Catalog, in.Fleet
	// A large fleet's plan and report are hundreds of MiB of live data: the
	// soft limit, or a lower collector target, keeps the garbage beside
	// them in proportion.
	defer tuneGC(os.Getenv, len(fl.Instances), limited, unlimit)()
	policy := in.Config.Policy
	flags := map[string]string{}
	if opts.IdleThreshold != nil {
		policy.Idle.GPUPercent = *opts.IdleThreshold
		flags["policy.idle.gpu_percent"] = "--idle-threshold"
	}
	if opts.CommitmentTerm != nil {
		policy.Commitment.Term = *opts.CommitmentTerm
		flags["policy.commitment.term"] = "--commitment-term"
	}
	if err := cmdutil.ValidatePolicy(in.Config, policy, flags); err != nil {
		return err
	}
	source := opts.Input.Path
	if opts.Input.Demo {
		source = "demo"
	}

	// analyze protects what idle-stop protects, with idle-stop's settings
	// (idle_stop.*); a configuration made without them has the defaults.
	is := in.Config.IdleStop
	if reflect.ValueOf(is).IsZero() {
		is = idlestop.DefaultPolicy()
	}
	protection := is.Protection()
	ropts := recommend.Options{AuditSummary: true, Protection: &protection, IncludeProtected: in.Config.Analyze.IncludeProtected, ManagedCommand: providers.ManagedCommand}
	if opts.IncludeProtected != nil {
		ropts.IncludeProtected = *opts.IncludeProtected
	}
	if ropts.ISF, err = cmdutil.ISF(in.Config); err != nil {
		return err
	}
	var bill *billed
	if opts.Billing != "" {
		if bill, err = readBill(opts.Ctx, opts, cat, fl); err != nil {
			return err
		}
		ropts.Billed = bill.rates
		// The bill prices what neither the cloud nor the catalog could.
		in.PricedElsewhere(func(id string) bool { _, ok := bill.rates[id]; return ok })
	}
	// The report prints the tag audit's summary; the tagging
	// recommendations carry its detail.
	plan := recommend.RunWith(fl, cat, policy, ropts)
	// The plan is all the rest needs: let the fleet (its samples above all) go
	// before the report is built beside the plan.
	fleetName, scanWarnings := fl.Metadata.Name, fl.Metadata.Warnings
	in.Fleet, fl = nil, nil
	meta := report.Meta{
		GeneratedAt: opts.Now(),
		ToolVersion: build.Version,
		FleetName:   fleetName,
		FleetSource: source,
		Catalog:     cat.Sources(),
		// A failed region or metrics source is in the report itself, not
		// only on stderr: a saved report shows it is partial.
		ScanWarnings: scanWarnings,
	}
	if bill != nil {
		meta.Billing = bill.reconcile(&plan)
	}
	if sh := opts.Input.Shard; !sh.IsZero() {
		meta.Shard = &report.Shard{Index: sh.Index, Count: sh.Count}
	}
	usd := opts.Currency == "" || opts.Currency == pricing.Currency
	if opts.Format == "json" && opts.Filter == nil && len(opts.Gates) == 0 && usd {
		// Nothing reads the report after it is written: write it as it is
		// made, never whole beside the plan.
		return report.WriteConsumed(opts.IO.Out, &plan, meta)
	}
	rep := report.Consume(&plan, meta)
	printed := rep
	if !usd {
		conv, err := conversion(opts, in.Config)
		if err != nil {
			return err
		}
		if printed, err = report.Convert(rep, conv); err != nil {
			return err
		}
	}
	popts := report.PrintOptions{TTY: opts.IO.IsStdoutTTY(), Width: opts.IO.TerminalWidth(),
		MarkdownSummary: opts.Markdown.Summary, FullReport: opts.Markdown.FullReport, Top: opts.Markdown.Top,
		ByStrategy: opts.View.ByStrategy, Limit: opts.View.Limit, All: opts.View.All, Height: opts.IO.TerminalHeight()}
	if opts.IO.ColorEnabled() {
		popts.Color = opts.IO.ColorScheme()
	}
	// The report has a printer for each of its formats, JSON (streamed) too.
	printers := cmdutil.Printers{}
	for _, format := range report.Formats {
		printers[format] = func(w io.Writer) error { return report.Write(w, printed, format, popts) }
	}
	printers[report.FormatFOCUS] = func(w io.Writer) error { return report.WriteFOCUS(w, printed, focusProviderName) }
	if err := cmdutil.Print(opts.Ctx, opts.IO.Out, opts.Format, opts.Filter, nil, printers); err != nil {
		return err
	}
	// The report is written; now the gates, on the USD figures.
	return gateError(gates.Tripped(gates.Evaluate(opts.Gates, rep)), printed.Currency)
}

// conversion finds the rate for --currency: the flag, else the configuration
// (environment, then file). A currency without a rate is a FlagError.
func conversion(opts *AnalyzeOptions, cfg *config.Config) (report.Conversion, error) {
	c := report.Conversion{Currency: opts.Currency}
	if opts.ExchangeRate != nil {
		c.Rate, c.Source = *opts.ExchangeRate, "--exchange-rate"
		return c, nil
	}
	rate, source, ok := cfg.ExchangeRate(opts.Currency)
	if !ok {
		return c, cmdutil.FlagErrorf("--currency %s needs a rate: give --exchange-rate, set report.exchange_rates.%s in the config file, or %s",
			opts.Currency, opts.Currency, config.EnvVar("report.exchange_rates."+opts.Currency))
	}
	d, err := cmdutil.ParseExchangeRate(rate, opts.Currency)
	if err != nil {
		return c, &cmdutil.InputError{Err: fmt.Errorf("%s: exchange rate %v", source, err)}
	}
	c.Rate, c.Source = d, source
	return c, nil
}

// gateError is the GateError for the gates that tripped, nil when none did:
// one line, the reasons joined by "; ", marked as USD when the report was
// printed in another currency.
func gateError(tripped []gates.Result, printedIn string) error {
	if len(tripped) == 0 {
		return nil
	}
	reasons := make([]string, len(tripped))
	for i, t := range tripped {
		reasons[i] = t.Reason
	}
	reason := strings.Join(reasons, "; ")
	if printedIn != pricing.Currency {
		reason += " (amounts in USD)"
	}
	return &cmdutil.GateError{Reason: reason}
}
