package factory

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/config"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/pricing/cache"
	"github.com/gpufinops/gpufinops/providers"
	"github.com/gpufinops/gpufinops/providers/file"
)

// scanner reads every fleet a command works on through providers: the
// registered cloud adapters for a live scan, providers/file for a fleet
// file or the demo.
type scanner struct {
	io  *iostreams.IOStreams
	now func() time.Time
	// retryMaxBackoff caps the adapters' retry waits; zero keeps theirs.
	retryMaxBackoff time.Duration
	// build makes the providers a live scan reads; nil is sc.providers
	// (the registered adapters). Tests give fakes.
	build func(ctx context.Context, in cmdutil.FleetFlags, cfg *config.Config) ([]providers.Provider, error)
}

// scan builds each requested adapter from the flags and the configuration,
// collects every scope concurrently, and merges the results. Failed scopes
// and metrics reads are kept as failures (cmdutil.ReadFleet makes them
// warnings of the snapshot and the report, exit code 3 after the output);
// credentials that are missing or rejected stop the scan (exit code 4).
func (sc *scanner) scan(ctx context.Context, in cmdutil.FleetFlags, cfg *config.Config) (*cmdutil.Scan, error) {
	now := sc.now().UTC()
	end := now.Truncate(time.Hour)
	// One bound for the whole scan, every provider and the progress
	// display's scope listing included: past it, the scopes read are kept.
	ctx, cancel := providers.WithTimeLimit(ctx, cfg.Timeouts.Run)
	defer cancel()
	build := sc.build
	if build == nil {
		build = sc.providers
	}
	provs, err := build(ctx, in, cfg)
	if err != nil {
		return nil, err
	}
	out, err := sc.collect(ctx, provs, collectOptions{
		window:      fleet.TimeRange{Start: end.Add(-time.Duration(in.LookbackDays) * 24 * time.Hour), End: end},
		concurrency: func(name fleet.Provider) int { return cfg.Concurrency(string(name)) },
		progress:    !in.Quiet,
	})
	if err != nil {
		return nil, err
	}
	out.Fleet.Metadata = fleet.Metadata{Name: "scan", GeneratedAt: &now,
		Source: fmt.Sprintf("live scan of %v, %d days of utilization", in.Providers, in.LookbackDays)}
	return out, nil
}

// collectOptions say how collect reads its providers.
type collectOptions struct {
	// window is the utilization window; zero reads what the listing has
	// (a fleet file's own utilization).
	window fleet.TimeRange
	// concurrency bounds the scopes of a provider read at once; nil or
	// zero is Collect's default.
	concurrency func(fleet.Provider) int
	// progress shows a progress bar per provider on a terminal.
	progress bool
	// skipPrices leaves live prices out.
	skipPrices bool
}

func (o collectOptions) conc(name fleet.Provider) int {
	if o.concurrency == nil {
		return 0
	}
	return o.concurrency(name)
}

// collect reads every scope of every provider into one snapshot: the one
// path of every fleet, live or from a file.
func (sc *scanner) collect(ctx context.Context, provs []providers.Provider, o collectOptions) (*cmdutil.Scan, error) {
	out := &cmdutil.Scan{Fleet: &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind}}
	for _, p := range provs {
		bar := sc.startProgress(ctx, p, !o.progress)
		res, err := providers.Collect(ctx, p, providers.CollectOptions{
			Window:      o.window,
			Concurrency: o.conc(p.Name()),
			Progress:    bar.scopeDone,
			SkipPrices:  o.skipPrices,
		})
		bar.finish()
		if err != nil {
			return nil, fatal(err)
		}
		out.Fleet.Instances = append(out.Fleet.Instances, res.Fleet.Instances...)
		out.Prices = append(out.Prices, res.Prices...)
		out.Notes = append(out.Notes, res.Notes...)
		for _, f := range res.Failures {
			if errors.Is(f, providers.ErrCredentials) || errors.Is(f, providers.ErrPermission) {
				out.Failures = append(out.Failures, fmt.Errorf("%w (see docs/iam/)", f))
				continue
			}
			out.Failures = append(out.Failures, f)
		}
	}
	return out, nil
}

// readFile reads a fleet file (or the demo) through providers/file, keeping
// the file's metadata (its name, source and recorded warnings).
func (sc *scanner) readFile(fl *fleet.Fleet) (*fleet.Fleet, error) {
	res, err := sc.collect(context.Background(), []providers.Provider{file.New(fl, file.Options{})}, collectOptions{skipPrices: true})
	if err != nil {
		return nil, err
	}
	res.Fleet.Metadata = fl.Metadata
	if len(res.Fleet.Instances) != len(fl.Instances) {
		return nil, fmt.Errorf("%s: %d of %d instances read", fl.Metadata.Name, len(res.Fleet.Instances), len(fl.Instances))
	}
	// A file's instances keep the file's order, which reports follow.
	order := make(map[string]int, len(fl.Instances))
	for i, in := range fl.Instances {
		order[in.ID] = i
	}
	sort.Slice(res.Fleet.Instances, func(i, j int) bool {
		return order[res.Fleet.Instances[i].ID] < order[res.Fleet.Instances[j].ID]
	})
	return res.Fleet, nil
}

// providers builds the adapters the flags name, with the configuration's
// endpoint, regions, accounts and cache. Missing or rejected credentials are
// CredentialsErrors (exit code 4).
func (sc *scanner) providers(ctx context.Context, in cmdutil.FleetFlags, cfg *config.Config) ([]providers.Provider, error) {
	var out []providers.Provider
	for _, name := range in.Providers {
		ri, ok := providers.Find(fleet.Provider(name))
		if !ok {
			return nil, cmdutil.FlagErrorf("--provider %s: this build has no %s adapter yet (available: %v)", name, name, providers.Names())
		}
		if !ri.CanScan() {
			return nil, cmdutil.FlagErrorf("--provider %s: this build has no %s adapter yet (available: %v)", name, name, providers.Scannable())
		}
		p, err := ri.New(ctx, sc.options(ri, in, cfg))
		if err != nil {
			return nil, fatal(err)
		}
		out = append(out, p)
	}
	return out, nil
}

// scanProgress shows a person at a terminal how a scan goes, on stderr: a
// bar of scopes done out of all, with the last scope and the GPU instances
// found so far, cleared when the provider is done and followed by one
// summary line. A nil *scanProgress shows nothing.
type scanProgress struct {
	io       *iostreams.IOStreams
	provider string

	mu                     sync.Mutex
	bar                    *progressbar.ProgressBar
	done, found, failed, n int
}

// startProgress starts the display for one provider, or returns nil when
// stderr or stdout is not a terminal (a pipe, a file, CI) or the command
// writes machine output (quiet: -o json and the like): then nothing extra is
// written. Sizing the bar lists the provider's scopes once more (for AWS
// one DescribeRegions per account), only in that interactive case.
func (sc *scanner) startProgress(ctx context.Context, p providers.Provider, quiet bool) *scanProgress {
	if quiet || !sc.io.IsStderrTTY() || !sc.io.IsStdoutTTY() {
		return nil
	}
	total := -1 // unknown: a spinner
	if scopes, err := p.Scopes(ctx); err == nil {
		total = len(scopes)
	}
	sp := &scanProgress{io: sc.io, provider: string(p.Name()), n: total}
	sp.bar = progressbar.NewOptions(total,
		progressbar.OptionSetWriter(sc.io.ErrOut),
		progressbar.OptionSetDescription(fmt.Sprintf("scanning %s", sp.provider)),
		progressbar.OptionShowCount(),
		progressbar.OptionSetItsString("scopes"),
		progressbar.OptionSetWidth(20),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionEnableColorCodes(false),
		progressbar.OptionSetRenderBlankState(true),
	)
	return sp
}

// scopeDone is providers.CollectOptions.Progress.
func (sp *scanProgress) scopeDone(s providers.Scope, instances int, err error) {
	if sp == nil {
		return
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	sp.done++
	sp.found += instances
	where := s.Region
	if where == "" {
		where = s.Account
	}
	if err != nil {
		sp.failed++
	}
	desc := fmt.Sprintf("scanning %s: %s, %d GPU instances", sp.provider, where, sp.found)
	if sp.failed > 0 {
		desc += fmt.Sprintf(", %d failed", sp.failed)
	}
	sp.bar.Describe(desc)
	_ = sp.bar.Add(1)
}

// finish clears the bar and prints the provider's summary line.
func (sp *scanProgress) finish() {
	if sp == nil {
		return
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	_ = sp.bar.Finish()
	_ = sp.bar.Clear()
	line := fmt.Sprintf("%s: %d scopes scanned, %d GPU instances", sp.provider, sp.done, sp.found)
	if sp.failed > 0 {
		line += fmt.Sprintf(", %d failed", sp.failed)
	}
	fmt.Fprintln(sp.io.ErrOut, line)
}

// fatal maps credential problems to exit code 4 and a scan cut short by
// its time limit to exit code 3; other errors pass.
func fatal(err error) error {
	switch {
	case errors.Is(err, providers.ErrCredentials) || errors.Is(err, providers.ErrPermission):
		return &cmdutil.CredentialsError{Err: err}
	case errors.Is(err, providers.ErrTimeLimit):
		return &cmdutil.IncompleteError{Err: err}
	}
	return err
}

// cacheDir is the configured price cache, else the default one
// ($XDG_CACHE_HOME/gpufinops or the OS user cache dir).
func cacheDir(dir string) string {
	if dir != "" {
		return dir
	}
	d, err := cache.DefaultDir()
	if err != nil {
		return "" // no cache: prices are read live every time
	}
	return d
}
