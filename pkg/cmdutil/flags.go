package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpufinops/gpufinops/pkg/config"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/providers"
)

// FleetFlags are the inputs shared by commands that read a fleet: a snapshot
// file, the demo fleet, or a live scan of one or more clouds.
type FleetFlags struct {
	Path string
	Demo bool
	// Providers are the clouds to scan (--provider).
	Providers []string
	// Regions narrows the scan.
	Regions []string
	// Adapter are the registered adapters' own flags (AWS: --profile,
	// --role-arn), added by AddScopeFlags.
	Adapter AdapterFlags
	// LookbackDays is how much utilization history to read.
	LookbackDays int
	// Quiet suppresses the scan's progress display; commands set it when
	// their output is for machines (-o json, csv, yaml).
	Quiet bool
	// Metrics say where utilization comes from (--metrics, --metrics-file).
	Metrics MetricsFlags
	// Timeouts bound a live scan (--request-timeout, --run-timeout).
	Timeouts ScanTimeouts
	// Shard narrows a live scan to one slice of its scopes (analyze
	// --shard); zero is every scope.
	Shard providers.Shard
	// NoPriceCache makes the adapters read prices from the price APIs,
	// never from the on-disk price cache (catalog update).
	NoPriceCache bool
}

// AddFleetFlags adds --fleet, --demo and the cloud scan flags.
func AddFleetFlags(cmd *cobra.Command, f *FleetFlags) {
	cmd.Flags().StringVarP(&f.Path, "fleet", "f", "", "fleet snapshot to read (JSON or YAML; - for stdin)")
	cmd.Flags().BoolVar(&f.Demo, "demo", false, "use the embedded demo fleet")
	AddScopeFlags(cmd, f, "scan live instead of reading a file")
	cmd.Flags().IntVar(&f.LookbackDays, "lookback-days", 14, "days of utilization history to read from the cloud")
	addScanTimeoutFlags(cmd, &f.Timeouts)
	addMetricsFlags(cmd, &f.Metrics)
	cmd.MarkFlagsMutuallyExclusive("fleet", "demo", "provider")
	_ = cmd.MarkFlagFilename("fleet", "json", "yaml", "yml")
}

// AddScopeFlags adds --provider and --region, the clouds and regions a
// command works on, and each registered adapter's own flags (e.g. AWS's
// --profile and --role-arn); purpose ends the --provider help.
func AddScopeFlags(cmd *cobra.Command, f *FleetFlags, purpose string) {
	clouds := providers.Scannable()
	help := "clouds to " + purpose
	if len(clouds) > 0 {
		help += ": " + strings.Join(clouds, ", ")
	}
	cmd.Flags().StringSliceVar(&f.Providers, "provider", nil, help)
	cmd.Flags().StringSliceVar(&f.Regions, "region", nil, "regions to scan, each on the cloud it belongs to, e.g. us-east-1,us-central1 with --provider aws,gcp (default: every enabled region)")
	f.Adapter = addAdapterFlags(cmd)
	_ = cmd.RegisterFlagCompletionFunc("provider", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return providers.Scannable(), cobra.ShellCompDirectiveNoFileComp
	})
}

// AdapterFlags are the adapter flags of a command, by flag name.
type AdapterFlags map[string]*AdapterFlag

// AdapterFlag is one adapter flag: the option it sets in each of its clouds
// and the value given, if any.
type AdapterFlag struct {
	providers.Flag
	// value points at the flag's variable; changed says whether it was given.
	value   any
	changed func() bool
}

// Set reports whether the flag was given.
func (a *AdapterFlag) Set() bool { return a.changed != nil && a.changed() }

// Value is the flag's value, of the option's type.
func (a *AdapterFlag) Value() any {
	switch v := a.value.(type) {
	case *[]string:
		return *v
	case *string:
		return *v
	case *int:
		return *v
	case *bool:
		return *v
	case *time.Duration:
		return *v
	}
	return nil
}

// addAdapterFlags adds the registered adapters' flags; a flag two clouds
// share (same type) sets the option of each.
func addAdapterFlags(cmd *cobra.Command) AdapterFlags {
	flags, err := providers.Flags()
	if err != nil {
		panic("cmdutil: " + err.Error()) // two adapters registered a flag with different types
	}
	out := AdapterFlags{}
	fs := cmd.Flags()
	for _, fl := range flags {
		a := &AdapterFlag{Flag: fl}
		help := strings.Join(fl.Clouds, ", ") + ": " + fl.Help
		switch d := fl.Default.(type) {
		case []string:
			v := new([]string)
			fs.StringSliceVar(v, fl.Option.Flag, nil, help)
			a.value = v
		case string:
			v := new(string)
			fs.StringVar(v, fl.Option.Flag, d, help)
			a.value = v
		case int:
			v := new(int)
			fs.IntVar(v, fl.Option.Flag, d, help)
			a.value = v
		case bool:
			v := new(bool)
			fs.BoolVar(v, fl.Option.Flag, d, help)
			a.value = v
		case time.Duration:
			v := new(time.Duration)
			fs.DurationVar(v, fl.Option.Flag, d, help)
			a.value = v
		}
		name := fl.Option.Flag
		a.changed = func() bool { return fs.Changed(name) }
		out[name] = a
	}
	return out
}

// Given are the names of the adapter flags given, sorted.
func (a AdapterFlags) Given() []string {
	var out []string
	for name, f := range a {
		if f.Set() {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// Values are the options of one cloud the flags set.
func (a AdapterFlags) Values(cloud string) providers.Values {
	out := providers.Values{}
	for _, f := range a {
		if f.Set() && slices.Contains(f.Clouds, cloud) {
			out[f.Option.Name] = f.Value()
		}
	}
	return out
}

// Validate requires exactly one input and sane scan settings.
func (f *FleetFlags) Validate() error {
	if f.Path == "" && !f.Demo && len(f.Providers) == 0 {
		return FlagErrorf("give a fleet: --fleet FILE, --demo or --provider %s", cloudChoice())
	}
	for _, p := range f.Providers {
		if !fleet.Provider(p).Valid() {
			return FlagErrorf("--provider: %q is not one of %s", p, snapshotClouds())
		}
	}
	if err := f.validateRegions(); err != nil {
		return err
	}
	given := f.Adapter.Given()
	if len(f.Providers) == 0 && (len(f.Regions) > 0 || len(given) > 0) {
		var names []string
		if len(f.Regions) > 0 {
			names = append(names, "--region")
		}
		for _, g := range given {
			names = append(names, "--"+g)
		}
		verb := "needs"
		if len(names) > 1 {
			verb = "need"
		}
		return FlagErrorf("%s %s --provider", strings.Join(names, ", "), verb)
	}
	for _, g := range given {
		fl := f.Adapter[g]
		if !slices.ContainsFunc(f.Providers, func(p string) bool { return slices.Contains(fl.Clouds, p) }) {
			return FlagErrorf("--%s is a flag of %s, which --provider does not name", g, strings.Join(fl.Clouds, ", "))
		}
		if fl.Validate != nil {
			if err := fl.Validate(fl.Value()); err != nil {
				return FlagErrorf("--%s: %v", g, err)
			}
		}
	}
	if f.LookbackDays < 1 || f.LookbackDays > MaxLookbackDays {
		return FlagErrorf("--lookback-days: %d is outside 1–%d", f.LookbackDays, MaxLookbackDays)
	}
	for _, p := range f.Providers {
		if ri, ok := providers.Find(fleet.Provider(p)); ok && ri.Lookback.MaxDays > 0 && f.LookbackDays > ri.Lookback.MaxDays {
			return FlagErrorf("--lookback-days: %d is outside 1–%d (%s)", f.LookbackDays, ri.Lookback.MaxDays, ri.Lookback.Why)
		}
	}
	if err := f.Timeouts.validate(len(f.Providers) > 0); err != nil {
		return err
	}
	return f.Metrics.validate()
}

// MaxLookbackDays bounds --lookback-days for every source; each adapter may
// bound it further (providers.RegInfo.Lookback).
const MaxLookbackDays = 455

// cloudChoice is what --provider takes, for messages: the clouds this build
// can scan.
func cloudChoice() string {
	if c := providers.Scannable(); len(c) > 0 {
		return strings.Join(c, "|")
	}
	return "CLOUD"
}

// snapshotClouds are the clouds a fleet can hold.
func snapshotClouds() string {
	out := make([]string, len(fleet.Providers))
	for i, p := range fleet.Providers {
		out[i] = string(p)
	}
	return strings.Join(out, ", ")
}

// SourceName is what messages call the fleet: its path, "<stdin>" or
// "demo.yaml", the names the fleet loader (providers/file) uses too.
func (f *FleetFlags) SourceName() string {
	switch {
	case len(f.Providers) > 0:
		return "scan of " + strings.Join(f.Providers, ", ")
	case f.Demo:
		return "demo.yaml"
	case f.Path == "-":
		return "<stdin>"
	}
	return f.Path
}

// CompleteFleet fills the fleet's hardware from the catalog and, for a fleet
// file, checks it against the catalog (CheckCatalogFacts). Its errors are
// InputErrors with the fleet's name on every line (one line per instance).
func CompleteFleet(fl *fleet.Fleet, cat pricing.Catalog, in FleetFlags) error {
	complete := pricing.Complete
	if len(in.Providers) > 0 {
		complete = pricing.CompleteScanned // the cloud's answer first
	}
	err := complete(fl, cat)
	if err == nil && len(in.Providers) == 0 {
		// A scan's hardware comes from the cloud itself; a file's is checked.
		err = CheckCatalogFacts(fl, cat)
	}
	if err != nil {
		lines := strings.Split(err.Error(), "\n")
		for i, l := range lines {
			lines[i] = in.SourceName() + ": " + l
		}
		return &InputError{Err: errors.New(strings.Join(lines, "\n"))}
	}
	return nil
}

// Scan is what a live scan of the clouds found.
type Scan struct {
	Fleet *fleet.Fleet
	// Prices are the prices read live, to lay over the catalog.
	Prices []pricing.Price
	// Failures are the scopes (account and region) that could not be read.
	Failures []error
	// Notes are things to tell the user, e.g. instances without GPU metrics.
	Notes []string
}

// ScanFunc scans the clouds named by the flags.
type ScanFunc func(ctx context.Context, in FleetFlags, cfg *config.Config) (*Scan, error)

// FleetInputs is what the fleet commands work on: the configuration, the
// catalog (with live prices laid over it after a scan), and the fleet
// completed from the catalog.
type FleetInputs struct {
	Config  *config.Config
	Catalog pricing.Catalog
	Fleet   *fleet.Fleet
	// Failures are the parts of the scan that failed: this run's scopes and
	// metrics sources, and those a snapshot read with --fleet records in
	// metadata.warnings. Each is also in Fleet.Metadata.Warnings, which the
	// report and the snapshot written by inventory carry.
	Failures []error
	// Notes come from a live scan and the metrics sources.
	Notes []string
}

// Partial returns a PartialError when some scope failed, else nil. Commands
// return it after writing their output, so the exit code is 3.
func (in *FleetInputs) Partial() error {
	if len(in.Failures) == 0 {
		return nil
	}
	return &PartialError{Failures: in.Failures}
}

// ReadFleet reads the configuration, the catalog and the fleet named by in —
// a file, the demo, or a live scan — and completes the fleet's hardware from
// the catalog. scan may be nil when only files are possible, cfg when the
// command needs no configuration.
func ReadFleet(ctx context.Context, cfg func() (*config.Config, error), cat func() (pricing.Catalog, error), read func(path string, demo bool) (*fleet.Fleet, error), scan ScanFunc, in FleetFlags) (*FleetInputs, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	c := &config.Config{}
	if cfg != nil {
		var err error
		if c, err = cfg(); err != nil {
			return nil, err
		}
	}
	k, err := cat()
	if err != nil {
		return nil, err
	}
	out := &FleetInputs{Config: c, Catalog: k}
	if len(in.Providers) > 0 {
		if scan == nil {
			return nil, FlagErrorf("--provider is not available in this command")
		}
		in.Timeouts.apply(c)
		res, err := scan(ctx, in, c)
		if err != nil {
			return nil, err
		}
		out.Fleet, out.Notes = res.Fleet, res.Notes
		out.addFailures(res.Failures...)
		// The cloud's own answer describes the types the catalog lacks, so
		// their live prices price them.
		out.Catalog = pricing.WithTypes(k, pricing.TypesOf(res.Fleet))
		if len(res.Prices) > 0 {
			// Live prices win over the embedded catalog; the rest stays.
			prices, notes := SanePrices(res.Prices)
			out.Notes = append(out.Notes, notes...)
			out.Catalog = pricing.Overlay(out.Catalog, prices)
		}
	} else {
		fl, err := read(in.Path, in.Demo)
		if err != nil {
			return nil, err
		}
		out.Fleet = fl
		// A partial snapshot stays partial: its recorded failures count.
		for _, w := range fl.Metadata.Warnings {
			out.Failures = append(out.Failures, &ScanFailure{Warning: w, Recorded: true})
		}
	}
	if err := out.applyMetrics(ctx, in.Metrics, in.LookbackDays); err != nil {
		return nil, err
	}
	if err := CompleteFleet(out.Fleet, out.Catalog, in); err != nil {
		return nil, err
	}
	out.addUnknownTypes(pricing.UnknownTypes(out.Fleet, k, out.Catalog))
	return out, nil
}

// Finish ends a command that read a live scan: it prints the scan's notes and
// failed scopes on w, and turns a successful run with failed scopes into a
// PartialError (exit code 3). Use it deferred, with a named error result.
func (in *FleetInputs) Finish(w io.Writer, err *error) {
	for _, n := range in.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	for _, f := range in.Failures {
		var sf *ScanFailure
		if errors.As(f, &sf) && sf.Recorded {
			fmt.Fprintf(w, "warning: %s (recorded in %s)\n", sf.Warning.Message(), in.source())
			continue
		}
		fmt.Fprintf(w, "warning: %v\n", f)
	}
	if *err == nil {
		*err = in.Partial()
	}
}

// FleetArgs is the Args check of a command that reads a fleet with --fleet
// and takes no arguments: a fleet file given as an argument ("analyze
// fleet.json") is told to use --fleet; any other argument is unknown, as
// cobra.NoArgs says.
func FleetArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	if looksLikeFile(args[0]) {
		return FlagErrorf("%s takes the fleet as a flag, not an argument: %s --fleet %s", cmd.CommandPath(), cmd.CommandPath(), shellQuote(args[0]))
	}
	return cobra.NoArgs(cmd, args)
}

// looksLikeFile reports whether arg names a file: "-", a path with a
// directory, a fleet file's extension, or a file that exists.
func looksLikeFile(arg string) bool {
	if arg == "-" || strings.ContainsAny(arg, `/\`) {
		return true
	}
	switch strings.ToLower(filepath.Ext(arg)) {
	case ".json", ".yaml", ".yml":
		return true
	}
	_, err := os.Stat(arg)
	return err == nil
}

// shellQuote quotes s for a shell when it holds anything but plain path
// characters.
func shellQuote(s string) string {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:@+=,", r)) {
			return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
		}
	}
	return s
}
