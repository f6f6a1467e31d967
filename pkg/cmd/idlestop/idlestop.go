// Package idlestop implements `gpufinops idle-stop`: find GPU machines idle
// over the last half hour and, with --execute, stop them safely and on the record.
package idlestop

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/config"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/idlestop"
	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/pkg/metrics/nvsmi"
	"github.com/gpufinops/gpufinops/pkg/money"
	"github.com/gpufinops/gpufinops/pkg/tableprinter"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/providers"
)

// IdleStopOptions are the inputs of `gpufinops idle-stop`.
type IdleStopOptions struct {
	IO        *iostreams.IOStreams
	Config    func() (*config.Config, error)
	Catalog   func() (pricing.Catalog, error)
	Providers func(ctx context.Context, in cmdutil.FleetFlags, cfg *config.Config) ([]providers.Provider, error)
	Now       func() time.Time
	Ctx       context.Context

	Input     cmdutil.FleetFlags
	Execute   bool
	AuditLog  string
	Webhook   string
	Output    string
	Selectors []string
	// Filter is the --jq or --template filter of the JSON output; nil prints it whole.
	Filter cmdutil.Filter

	// Policy overrides from flags; nil when not given.
	Threshold         *float64
	Window            *time.Duration
	MinUptime         *time.Duration
	MaxStops          *int
	ExemptTag         *string
	IncludeProduction *bool
	RequireOptIn      *bool

	// Run holds the time and lock flags given.
	Run runFlags
	// LookupEnv finds the XDG state directory; os.LookupEnv when nil.
	LookupEnv func(string) (string, bool)
	// ProtectInstanceStore is --protect-instance-store.
	ProtectInstanceStore *bool
	// MetricsFiles are nvidia-smi CSVs (--metrics-file): GPU samples of
	// machines whose cloud publishes none (SageMaker notebooks), which win
	// over the cloud's for the machines they name.
	MetricsFiles []string
}

// NewCmdIdleStop builds the command; runF replaces the run function in tests.
func NewCmdIdleStop(f *cmdutil.Factory, runF func(*IdleStopOptions) error) *cobra.Command {
	opts := &IdleStopOptions{IO: f.IOStreams, Config: f.Config, Catalog: f.Catalog, Providers: f.Providers, Now: f.Now}
	def := idlestop.DefaultPolicy()
	var (
		threshold               float64
		window, minUptime       time.Duration
		maxStops                int
		exemptTag               string
		includeProd, requireOpt bool
		protectStore            bool
		out                     *cmdutil.Output
		checkRun                func() error
	)
	cmd := &cobra.Command{
		Use:   "idle-stop --provider aws [--execute]",
		Short: "Stop GPU machines that have been idle (a dry run unless --execute)",
		Long: `idle-stop reads the last minutes of GPU utilization of every GPU machine and
stops those whose busiest GPU stayed below the threshold. It is a dry run unless
--execute is given. Protected machines are always left running, each with its
reason: owned by a controller (Auto Scaling group, EKS/GKE/AKS node pool,
Karpenter, Batch, EMR, ParallelCluster, fleets), the exemption tag with any
value but false, AutoShutdown not true-or-absent, production (Environment/Env/
Stage/Tier = prod, prd, production, live, … or any unknown value), one-time
spot, unknown launch time, just launched, inference, missing or stale metrics,
GPUs that do not report, GPU memory held, a busy host CPU. Managed AI notebooks
(SageMaker notebook instances, Vertex AI Workbench instances, Azure ML compute
instances) are judged like machines and stopped through their service; other
managed items (endpoints, Studio apps, jobs, compute clusters) are never
stopped (reason managed-kind; analyze gives the command). Tag keys ignore case,
'-', '_' and spaces; when in doubt the machine is left running. More candidates than --max-stops
stop nothing (exit 5). Right before stopping, each machine is checked again.

With --execute, one lock per cloud account keeps concurrent runs apart, an
intent line is synced to the audit log before each stop, and the next run
reconciles stops a killed run left without an answer. SIGINT/SIGTERM and
--run-timeout stop starting new stops; those in flight get --grace-period.

Exit codes: 0 done; 2 bad flags; 3 some stops failed or got no answer, some
scopes could not be read, or the run ended early (--run-timeout, SIGINT or
SIGTERM); 4 credentials or the stop permission missing (nothing stopped); 5
more candidates than --max-stops (nothing stopped). Docs: docs/idle-stop.md.`,
		Example: `  $ gpufinops idle-stop --provider aws
  $ gpufinops idle-stop --provider aws --execute --audit-log /var/log/gpufinops/idle-stop.jsonl
  $ gpufinops idle-stop --provider aws --require-opt-in --selector Team=research -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Ctx = cmd.Context()
			opts.Output, opts.Filter = out.Format(), out.Filter
			if len(opts.Input.Providers) == 0 {
				return cmdutil.FlagErrorf("idle-stop acts on clouds: give --provider aws")
			}
			if err := opts.Input.Validate(); err != nil {
				return err
			}
			for _, s := range opts.Selectors {
				if k, _, ok := strings.Cut(s, "="); !ok || k == "" {
					return cmdutil.FlagErrorf("--selector %q: want key=value", s)
				}
			}
			// The flags only assign: Policy.Validate checks every value, the
			// same way as from the config file or the environment.
			fl := cmd.Flags()
			if fl.Changed("threshold") {
				opts.Threshold = &threshold
			}
			if fl.Changed("window") {
				opts.Window = &window
			}
			if fl.Changed("min-uptime") {
				opts.MinUptime = &minUptime
			}
			if fl.Changed("max-stops") {
				opts.MaxStops = &maxStops
			}
			if fl.Changed("protect-instance-store") {
				opts.ProtectInstanceStore = &protectStore
			}
			if fl.Changed("exempt-tag") {
				opts.ExemptTag = &exemptTag
			}
			if fl.Changed("include-production") {
				opts.IncludeProduction = &includeProd
			}
			if fl.Changed("require-opt-in") {
				opts.RequireOptIn = &requireOpt
			}
			if err := checkRun(); err != nil {
				return err
			}
			// Bad flag values are usage errors now, named by flag; the
			// merged policy (config file, environment, flags) is validated
			// again when the run starts.
			if _, err := opts.policy(&config.Config{IdleStop: idlestop.DefaultPolicy()}); err != nil {
				return cmdutil.FlagErrorf("%v", err)
			}
			if runF != nil {
				return runF(opts)
			}
			return idleStopRun(opts)
		},
	}
	cmdutil.AddScopeFlags(cmd, &opts.Input, "act on")
	opts.Input.LookbackDays = 1
	cmd.Flags().BoolVar(&opts.Execute, "execute", false, "stop the idle machines (without it: a dry run)")
	cmd.Flags().StringVar(&opts.AuditLog, "audit-log", "", "append one JSON line per machine considered to this file (with --execute, default $XDG_STATE_HOME/gpufinops/idle-stop.jsonl)")
	cmd.Flags().StringVar(&opts.Webhook, "notify-webhook", "", "post a Slack-compatible summary to this URL")
	cmd.Flags().StringSliceVar(&opts.Selectors, "selector", nil, "only machines carrying this tag, key=value (repeatable)")
	cmd.Flags().Float64Var(&threshold, "threshold", def.GPUPercent, "busy at or above this GPU % (busiest GPU)")
	cmd.Flags().DurationVar(&window, "window", def.Window, "how much recent utilization to judge")
	cmd.Flags().DurationVar(&minUptime, "min-uptime", def.MinUptime, "spare machines launched less than this ago")
	cmd.Flags().IntVar(&maxStops, "max-stops", def.MaxStops, "stop nothing when more machines than this would stop")
	cmd.Flags().StringVar(&exemptTag, "exempt-tag", def.ExemptTag, "machines carrying this tag (any value but false) are never stopped")
	cmd.Flags().BoolVar(&includeProd, "include-production", false, "also stop production machines (Environment/Env/Stage/Tier=prod, production, live, …)")
	cmd.Flags().BoolVar(&protectStore, "protect-instance-store", def.ProtectInstanceStore, "leave machines with local instance-store disks running (their data is lost on stop)")
	cmd.Flags().BoolVar(&requireOpt, "require-opt-in", false, "stop only machines tagged AutoShutdown=true")
	cmd.Flags().StringArrayVar(&opts.MetricsFiles, "metrics-file", nil, "nvidia-smi CSV of one machine, matched by a host column or the file name against its ID or name, for machines whose cloud publishes no GPU metric (SageMaker notebooks); read again at the re-check (repeatable)")
	_ = cmd.MarkFlagFilename("metrics-file", "csv")
	checkRun = addRunFlags(cmd, &opts.Run)
	out = cmdutil.AddOutputFlags(cmd, cmdutil.FormatTable, cmdutil.FormatJSON)
	return cmd
}

// policy merges configuration and flags.
func (o *IdleStopOptions) policy(cfg *config.Config) (idlestop.Policy, error) {
	p := cfg.IdleStop
	if o.Threshold != nil {
		p.GPUPercent = *o.Threshold
	}
	if o.Window != nil {
		p.Window = *o.Window
	}
	if o.MinUptime != nil {
		p.MinUptime = *o.MinUptime
	}
	if o.MaxStops != nil {
		p.MaxStops = *o.MaxStops
	}
	if o.ExemptTag != nil {
		p.ExemptTag = *o.ExemptTag
	}
	if o.IncludeProduction != nil {
		p.IncludeProduction = *o.IncludeProduction
	}
	if o.RequireOptIn != nil {
		p.RequireOptIn = *o.RequireOptIn
	}
	if o.ProtectInstanceStore != nil {
		p.ProtectInstanceStore = *o.ProtectInstanceStore
	}
	if len(o.Selectors) > 0 {
		p.Selectors = map[string]string{}
		for _, s := range o.Selectors {
			k, v, _ := strings.Cut(s, "=")
			p.Selectors[k] = v
		}
	}
	if err := p.Validate(); err != nil {
		return p, o.nameFlag(err)
	}
	return p, nil
}

// nameFlag names the flag instead of the idle_stop.* key when the invalid
// value came from a flag.
func (o *IdleStopOptions) nameFlag(err error) error {
	flags := []struct {
		key, flag string
		set       bool
	}{
		{"gpu_percent", "--threshold", o.Threshold != nil},
		{"window", "--window", o.Window != nil},
		{"min_uptime", "--min-uptime", o.MinUptime != nil},
		{"max_stops", "--max-stops", o.MaxStops != nil},
		{"exempt_tag", "--exempt-tag", o.ExemptTag != nil},
		{"selectors", "--selector", len(o.Selectors) > 0},
	}
	msg := err.Error()
	for _, f := range flags {
		if prefix := "idle_stop." + f.key + ":"; f.set && strings.HasPrefix(msg, prefix) {
			return errors.New(f.flag + ":" + strings.TrimPrefix(msg, prefix))
		}
	}
	return err
}

func idleStopRun(opts *IdleStopOptions) (err error) {
	ctx := opts.Ctx
	if ctx == nil {
		ctx = context.Background()
	}
	cfg, err := opts.Config()
	if err != nil {
		return err
	}
	pol, err := opts.policy(cfg)
	if err != nil {
		return cmdutil.FlagErrorf("%v", err)
	}
	set, err := opts.settings(cfg)
	if err != nil {
		return err
	}
	cat, err := opts.Catalog()
	if err != nil {
		return err
	}
	var csv *nvsmi.Source
	if len(opts.MetricsFiles) > 0 {
		if csv, err = nvsmi.Open(opts.MetricsFiles...); err != nil {
			return &cmdutil.InputError{Err: err}
		}
	}
	// Every network call of the run, retries included, ends by the run
	// timeout; stops in flight then get the grace period.
	ctx, cancel := context.WithTimeoutCause(ctx, set.run, &timeoutCause{limit: set.run})
	defer cancel()
	provCfg := *cfg
	provCfg.Timeouts.Connect, provCfg.Timeouts.Request = set.connect, set.request
	provs, err := opts.Providers(ctx, opts.Input, &provCfg)
	if err != nil {
		if ctx.Err() != nil {
			return incomplete(ctx, idlestop.Summary{}, false)
		}
		return err
	}
	byName := map[fleet.Provider]providers.Provider{}
	for _, p := range provs {
		byName[p.Name()] = p
	}
	// With --execute, one lock per provider:account, whatever the audit
	// log: a second run over the same accounts waits, then stops nothing.
	var lock *idlestop.TargetLock
	var ledger *idlestop.Ledger
	if opts.Execute {
		ts, err := targets(ctx, provs)
		if err != nil {
			if ctx.Err() != nil {
				return incomplete(ctx, idlestop.Summary{}, false)
			}
			return credentials(err)
		}
		if lock, err = idlestop.LockTargets(ctx, set.lockDir, ts, set.lockWait); err != nil {
			if ctx.Err() != nil {
				return incomplete(ctx, idlestop.Summary{}, false)
			}
			return err
		}
		defer func() {
			if rerr := lock.Release(); err == nil && rerr != nil {
				err = rerr
			}
		}()
		ledger = &idlestop.Ledger{Path: filepath.Join(set.lockDir, idlestop.LedgerFile)}
	}
	// The audit log's own lock keeps runs sharing it from interleaving;
	// open it before reading the fleet so that a run waiting for another
	// sees that run's stops.
	var audit *idlestop.Audit
	if set.auditLog != "" {
		if audit, err = idlestop.OpenAuditWait(ctx, set.auditLog, set.lockWait); err != nil {
			if ctx.Err() != nil {
				return incomplete(ctx, idlestop.Summary{}, false)
			}
			return err
		}
		defer func() {
			if cerr := audit.Close(); err == nil && cerr != nil {
				err = cerr
			}
		}()
	}
	// Settle what killed runs left open before deciding anew.
	if opts.Execute {
		if err := reconcile(ctx, opts.IO.ErrOut, audit, lock, byName, opts.Now); err != nil {
			return fmt.Errorf("%w; nothing was stopped", err)
		}
	}
	now := opts.Now().UTC()
	end := now.Truncate(time.Minute)
	window := fleet.TimeRange{Start: end.Add(-pol.Window), End: end}

	var cands []idlestop.Candidate
	var scanFailures []error
	metricsFailed := map[string]*providers.ScopeError{}
	for _, p := range provs {
		res, err := providers.Collect(ctx, p, providers.CollectOptions{Window: window, SkipPrices: true, SkipCommitments: true, Concurrency: cfg.Concurrency(string(p.Name()))})
		if err != nil {
			if ctx.Err() != nil {
				return incomplete(ctx, idlestop.Summary{}, false)
			}
			return credentials(err)
		}
		for _, f := range res.Failures {
			scanFailures = append(scanFailures, f)
			if f.Metrics {
				for _, id := range f.Instances {
					metricsFailed[id] = f
				}
			}
		}
		for _, in := range res.Fleet.Instances {
			cands = append(cands, candidate(in, cat))
		}
	}
	if csv != nil {
		if err := readFiles(ctx, csv, cands, window); err != nil {
			scanFailures = append(scanFailures, err)
		}
	}
	// Types neither the cloud nor the catalog describes are kept, warned
	// of, and never stopped without their GPU count (a GPU that did not
	// report would pass for idle).
	scanned := &fleet.Fleet{Instances: make([]fleet.Instance, len(cands))}
	for i := range cands {
		scanned.Instances[i] = cands[i].Instance
	}
	for _, w := range pricing.UnknownTypes(scanned, cat, cat) {
		scanFailures = append(scanFailures, &cmdutil.ScanFailure{Warning: w})
	}
	decisions := idlestop.Decide(cands, now, pol)
	skipMetricsFailed(decisions, metricsFailed)
	skipUnknownGPUs(decisions, cands)

	summary, runErr := idlestop.Execute(ctx, decisions, idlestop.Options{
		Stopper: stopper(byName),
		Recheck: func(ctx context.Context, stops []idlestop.Decision) (map[string]idlestop.Candidate, error) {
			return recheck(ctx, byName, stops, pol, opts.Now, cat, csv)
		},
		Execute: opts.Execute,
		Audit:   audit,
		Now:     opts.Now,
		Policy:  pol,
		Grace:   set.grace,
		Lock:    lock,
		Ledger:  ledger,
	})
	// Whether the run ended early is decided here: the webhook below is
	// only told.
	endedEarly := ctx.Err() != nil
	if werr := write(opts, summary, decisions, runErr, set.auditLog); werr != nil {
		return werr
	}
	if opts.Webhook != "" && (opts.Execute || summary.Stop > 0) {
		// An interrupted or timed-out run still tells the team, within
		// the grace period.
		nctx := ctx
		if endedEarly {
			var ncancel context.CancelFunc
			nctx, ncancel = context.WithTimeout(context.WithoutCancel(ctx), max(set.grace, time.Second))
			defer ncancel()
		}
		n := idlestop.NewNotifier(opts.Webhook, set.request, nil)
		if nerr := n.Send(nctx, summary, decisions); nerr != nil {
			opts.IO.Notef("warning: the webhook notification failed: %v\n", nerr)
		}
	}
	for _, f := range scanFailures {
		if sf, ok := f.(*cmdutil.ScanFailure); ok && sf.Warning.Code == fleet.ScanUnknownType {
			opts.IO.Notef("warning: %v\n", f)
			continue
		}
		opts.IO.Notef("warning: not read: %v\n", f)
	}
	var tooMany *idlestop.TooManyError
	switch {
	case errors.As(runErr, &tooMany) && tooMany.Recent > 0:
		return &cmdutil.GateError{Reason: fmt.Sprintf("%d machines would stop and other runs still running stop %d, more than --max-stops %d together: nothing was stopped", tooMany.Stops, tooMany.Recent, tooMany.Max)}
	case errors.As(runErr, &tooMany):
		return &cmdutil.GateError{Reason: fmt.Sprintf("%d machines would stop, more than --max-stops %d: nothing was stopped", tooMany.Stops, tooMany.Max)}
	case errors.Is(runErr, providers.ErrPermission) || errors.Is(runErr, providers.ErrCredentials):
		return &cmdutil.CredentialsError{Err: fmt.Errorf("%w: nothing was stopped (see docs/iam/aws-idle-stop.json)", runErr)}
	case endedEarly:
		return incomplete(ctx, summary, opts.Execute)
	case runErr != nil:
		return runErr
	case summary.Failed > 0 || summary.Unknown > 0:
		var fails []error
		for _, f := range summary.Failures {
			fails = append(fails, errors.New(f))
		}
		if summary.Unknown > 0 {
			fails = append(fails, fmt.Errorf("%d stop(s) got no answer in time; the next run reconciles them", summary.Unknown))
		}
		return &cmdutil.PartialError{Failures: append(fails, scanFailures...)}
	case len(scanFailures) > 0:
		return &cmdutil.PartialError{Failures: scanFailures}
	}
	return nil
}

// ReasonMetricsFailed: the machine's metrics source failed in this scan, so
// nothing is known of its use; it is skipped, never taken for idle.
const ReasonMetricsFailed idlestop.Reason = "metrics-failed"

// skipMetricsFailed skips the machines whose scope's metrics could not be
// read: one Decide would stop (it never should without data) and one it
// skipped for missing data now says which source failed and why. A machine
// skipped for another reason (already stopped, protected) keeps it.
func skipMetricsFailed(decisions []idlestop.Decision, failed map[string]*providers.ScopeError) {
	for i := range decisions {
		d := &decisions[i]
		f, ok := failed[d.ResourceID]
		if !ok {
			continue
		}
		switch {
		case d.Reason == idlestop.ReasonStoppedAllocated:
			continue // powered off: the power state, not the metrics, is the evidence
		case d.Decision == idlestop.Stop:
		case d.Reason == idlestop.ReasonNoMetrics, d.Reason == idlestop.ReasonPartialMetrics, d.Reason == idlestop.ReasonStaleMetrics:
		default:
			continue
		}
		d.Decision, d.Reason = idlestop.Skip, ReasonMetricsFailed
		d.Message = fmt.Sprintf("%s could not be read for %s, so the machine's use is unknown: %v", f.Source, f.Scope, f.Err)
		d.HourlySavings, d.MonthlySavings = idlestop.Amount{}, idlestop.Amount{}
	}
}

// ReasonUnknownType: neither the cloud nor the catalog gives the machine's
// GPU count, so whether all its GPUs reported is unknown; it is skipped.
const ReasonUnknownType idlestop.Reason = "unknown-type"

// skipUnknownGPUs skips the machines a stop was decided for whose GPU count
// is unknown.
func skipUnknownGPUs(decisions []idlestop.Decision, cands []idlestop.Candidate) {
	unknown := map[string]string{}
	for _, c := range cands {
		if !(c.Instance.GPU.Count > 0) {
			unknown[string(c.Instance.Provider)+"/"+c.Instance.ID] = c.Instance.InstanceType
		}
	}
	for i := range decisions {
		d := &decisions[i]
		typ, ok := unknown[string(d.Provider)+"/"+d.ResourceID]
		if !ok || d.Decision != idlestop.Stop || d.Reason == idlestop.ReasonStoppedAllocated {
			continue
		}
		d.Decision, d.Reason = idlestop.Skip, ReasonUnknownType
		d.Message = fmt.Sprintf("neither %s nor the catalog gives the GPU count of %s, so whether every GPU reported is unknown", d.Provider, typ)
		d.HourlySavings, d.MonthlySavings = idlestop.Amount{}, idlestop.Amount{}
	}
}

// candidate turns a scanned instance into a candidate with its price: the
// fleet's hourlyPrice, else the catalog's on-demand (or spot) price.
func candidate(in fleet.Instance, cat pricing.Catalog) idlestop.Candidate {
	c := idlestop.Candidate{
		Instance: in,
		Scope:    providers.Scope{Provider: in.Provider, Account: in.Account, Region: in.Region},
	}
	if in.HourlyPrice != nil {
		p := pricing.Price{Provider: in.Provider, Region: in.Region, InstanceType: in.InstanceType, Hourly: *in.HourlyPrice, Currency: pricing.Currency, Unit: pricing.UnitHour, Source: "fleet"}
		c.Hourly = &p
	} else if o, ok := cat.Offer(in.Provider, in.Region, priceName(cat, &in)); ok {
		switch {
		case in.Lifecycle == fleet.Spot && o.Spot != nil:
			c.Hourly = o.Spot
		case o.OnDemand != nil:
			c.Hourly = o.OnDemand
		}
	}
	return c
}

// readFiles fills the candidates' utilization over the window from the
// nvidia-smi files, which win over the cloud's metrics for the machines they
// name; files that name no machine are a warning, never a reason to stop.
func readFiles(ctx context.Context, src *nvsmi.Source, cands []idlestop.Candidate, window fleet.TimeRange) error {
	insts := make([]fleet.Instance, len(cands))
	for i := range cands {
		insts[i] = cands[i].Instance
	}
	_, err := src.Read(ctx, insts, window)
	for i := range cands {
		cands[i].Instance.Utilization = insts[i].Utilization
	}
	if err != nil {
		return fmt.Errorf("--metrics-file: %w", err)
	}
	return nil
}

// priceName is the name the catalog prices the instance under: a managed
// item's price type (Vertex AI's vertex-ai/… names), else its type.
func priceName(cat pricing.Catalog, in *fleet.Instance) string {
	if in.Managed != nil && in.Managed.PriceType != "" {
		return in.Managed.PriceType
	}
	return pricing.TypeNameOf(cat, in)
}

// stopper sends each stop to its provider's stop capability.
type dispatch map[fleet.Provider]providers.Stopper

func stopper(byName map[fleet.Provider]providers.Provider) dispatch {
	d := dispatch{}
	for n, p := range byName {
		if s := providers.FeaturesOf(p).Stopper; s != nil {
			d[n] = s
		}
	}
	return d
}

// Stop implements providers.Stopper by provider.
func (d dispatch) Stop(ctx context.Context, scope providers.Scope, id string, dryRun bool) (providers.StopResult, error) {
	s, ok := d[scope.Provider]
	if !ok {
		return providers.StopResult{}, fmt.Errorf("%s cannot stop machines: %w", scope.Provider, providers.ErrNotStoppable)
	}
	return s.Stop(ctx, scope, id, dryRun)
}

// peakReader is a utilization reader that can read each period's maximum
// instead of its average (the AWS adapter: CloudWatch statistic Maximum).
type peakReader interface {
	ReadPeakUtilization(ctx context.Context, scope providers.Scope, instances []fleet.Instance, window fleet.TimeRange) ([]string, error)
}

// recheck reads the stop candidates again, scope by scope: their state and a
// fresh utilization window ending now.
func recheck(ctx context.Context, byName map[fleet.Provider]providers.Provider, stops []idlestop.Decision, pol idlestop.Policy, now func() time.Time, cat pricing.Catalog, csv *nvsmi.Source) (map[string]idlestop.Candidate, error) {
	byScope := map[providers.Scope]map[string]bool{}
	for _, d := range stops {
		if byScope[d.Scope] == nil {
			byScope[d.Scope] = map[string]bool{}
		}
		byScope[d.Scope][d.ResourceID] = true
	}
	scopes := make([]providers.Scope, 0, len(byScope))
	for s := range byScope {
		scopes = append(scopes, s)
	}
	sort.Slice(scopes, func(i, j int) bool { return scopes[i].String() < scopes[j].String() })
	out := map[string]idlestop.Candidate{}
	for _, sc := range scopes {
		p, ok := byName[sc.Provider]
		if !ok {
			continue
		}
		all, err := p.ListGPUInstances(ctx, sc)
		if err != nil {
			return nil, fmt.Errorf("re-check %s: %w", sc, err)
		}
		var mine []fleet.Instance
		for _, in := range all {
			if byScope[sc][in.ID] {
				mine = append(mine, in)
			}
		}
		if r := providers.FeaturesOf(p).Utilization; r != nil && len(mine) > 0 {
			// The freshest window there is, read after the listing, up to
			// the end of the current (partial) minute, with each period's
			// maximum where the provider can read it.
			end := now().UTC().Truncate(time.Minute).Add(time.Minute)
			window := fleet.TimeRange{Start: end.Add(-pol.Window), End: end}
			read := r.ReadUtilization
			if pr, ok := p.(peakReader); ok {
				read = pr.ReadPeakUtilization
			}
			if _, err := read(ctx, sc, mine, window); err != nil {
				return nil, fmt.Errorf("re-check %s: %w", sc, err)
			}
		}
		if csv != nil && len(mine) > 0 {
			// The files do not grow during a run: the window is the one
			// decided on, so a machine they named is judged on the same
			// readings.
			end := now().UTC().Truncate(time.Minute)
			if _, err := csv.Read(ctx, mine, fleet.TimeRange{Start: end.Add(-pol.Window), End: end}); err != nil && ctx.Err() != nil {
				return nil, fmt.Errorf("re-check %s: %w", sc, err)
			}
		}
		for _, in := range mine {
			out[in.ID] = candidate(in, cat)
		}
	}
	return out, nil
}

func credentials(err error) error {
	if errors.Is(err, providers.ErrCredentials) || errors.Is(err, providers.ErrPermission) {
		return &cmdutil.CredentialsError{Err: err}
	}
	return err
}

func write(opts *IdleStopOptions, s idlestop.Summary, decisions []idlestop.Decision, runErr error, auditLog string) error {
	final := decisions // Execute updates them in place
	return cmdutil.Print(opts.Ctx, opts.IO.Out, opts.Output, opts.Filter, idlestop.NewDocument(final, s), cmdutil.Printers{
		cmdutil.FormatTable: func(io.Writer) error { return writeTable(opts, s, final, auditLog) },
	})
}

// writeTable prints one row per machine considered, then the run's warnings
// and summary on stderr.
func writeTable(opts *IdleStopOptions, s idlestop.Summary, final []idlestop.Decision, auditLog string) error {
	tty := opts.IO.IsStdoutTTY()
	tp := tableprinter.New(opts.IO.Out, tty, "resource", "provider", "region", "type", "decision", "reason", "gpu max %", "samples", "per hour", "per month", "result")
	tp.AlignRight(6, 7, 8, 9)
	// On a terminal the resource, the decision, the monthly saving and the
	// result stay; the reason shortens.
	tp.SetWidth(opts.IO.TerminalWidth())
	tp.Key(0, 4, 9, 10)
	tp.TruncateMiddle(0, 12)
	tp.WrapColumn(5, 12)
	tp.WrapColumn(10, 10)
	tp.DropOrder(1, 7, 8, 2, 3, 6, 5)
	for _, d := range final {
		res := d.Result
		if res == "" {
			res = money.None
		}
		// No samples is no figure, not 0 %; a machine left running saves
		// nothing, which is not $0.00 of saving either.
		gpu := money.NoData
		if d.Metrics.Samples > 0 {
			gpu = fmt.Sprintf("%.1f", d.Metrics.GPUMaxPercent)
		}
		hourly, monthly := money.None, money.None
		if d.Decision == idlestop.Stop {
			hourly, monthly = money.CellPlaces(d.HourlySavings.Decimal, money.USD, 4, tty), money.Cell(d.MonthlySavings.Decimal, money.USD, tty)
		}
		tp.AddRow(d.ResourceID, string(d.Provider), d.Region, d.InstanceType, string(d.Decision), string(d.Reason),
			gpu, fmt.Sprint(d.Metrics.Samples), hourly, monthly, res)
	}
	if err := tp.Render(); err != nil {
		return err
	}
	for _, w := range groupWarnings(final) {
		opts.IO.Notef("warning: %s\n", w)
	}
	mode := "dry run: nothing was stopped (add --execute to act)"
	if opts.Execute {
		mode = fmt.Sprintf("%d stopped, %d failed", s.Stopped, s.Failed)
		if s.Unknown > 0 {
			mode += fmt.Sprintf(", %d unknown", s.Unknown)
		}
	}
	opts.IO.Notef("%d machines considered, %d idle to stop, %d left running; %s; saving %s a month\n",
		s.Considered, s.Stop, s.Skip, mode, money.Inline(s.MonthlySavings.Decimal, money.USD, opts.IO.IsStderrTTY()))
	if s.RunID != "" && auditLog != "" {
		opts.IO.Notef("audit log: %s (run %s)\n", auditLog, s.RunID)
	}
	return nil
}

// groupWarnings says each warning of the machines to stop once, naming the
// machines it concerns: the first few, then how many more (-o json has
// them all).
func groupWarnings(ds []idlestop.Decision) []string {
	const shown = 3
	var order []string
	ids := map[string][]string{}
	for _, d := range ds {
		if d.Decision != idlestop.Stop {
			continue
		}
		for _, w := range d.Warnings {
			if _, seen := ids[w]; !seen {
				order = append(order, w)
			}
			ids[w] = append(ids[w], d.ResourceID)
		}
	}
	out := make([]string, 0, len(order))
	for _, w := range order {
		m := ids[w]
		if len(m) == 1 {
			out = append(out, m[0]+": "+w)
			continue
		}
		names := strings.Join(m[:min(len(m), shown)], ", ")
		if len(m) > shown {
			names += fmt.Sprintf(" and %d more", len(m)-shown)
		}
		out = append(out, fmt.Sprintf("%d machines (%s): %s", len(m), names, w))
	}
	return out
}

// Run runs idle-stop with options NewCmdIdleStop filled in; end-to-end tests
// call it with their own providers.
func Run(opts *IdleStopOptions) error { return idleStopRun(opts) }
