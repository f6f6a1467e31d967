package factory

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/config"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/pricing/cache"
	"github.com/gpufinops/gpufinops/providers"
	"github.com/gpufinops/gpufinops/providers/file"
)

// ioStreams are the streams progress is shown on.
func (sc *scanner) ioStreams() *iostreams.IOStreams {
	if sc.streams == nil {
		return nil
	}
	return sc.streams()
}

// scanner reads every fleet a command works on through providers: the
// registered cloud adapters for a live scan, providers/file for a fleet
// file or the demo.
type scanner struct {
	// streams are where progress goes; nil is none.
	streams func() *iostreams.IOStreams
	now     func() time.Time
	// retryMaxBackoff caps the adapters' retry waits; zero keeps theirs.
	retryMaxBackoff time.Duration
	// build makes the providers a live scan reads; nil is sc.providers
	// (the registered adapters). Tests give fakes.
	build func(ctx context.Context, in cmdutil.FleetFlags, cfg *config.Config) ([]providers.Provider, error)

	mu       sync.Mutex
	counters map[fleet.Provider]*requestCounter
}

// counter is the request counter of a provider.
func (sc *scanner) counter(name fleet.Provider) *requestCounter {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.counters == nil {
		sc.counters = map[fleet.Provider]*requestCounter{}
	}
	c, ok := sc.counters[name]
	if !ok {
		c = &requestCounter{}
		sc.counters[name] = c
	}
	return c
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
		shard:       in.Shard,
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
	// shard narrows every provider's scopes.
	shard providers.Shard
}

func (o collectOptions) conc(name fleet.Provider) int {
	if o.concurrency == nil {
		return 0
	}
	return o.concurrency(name)
}

// collect reads every scope of every provider into one snapshot: the one
// path of every fleet, live or from a file. The providers are read at once
// (`--provider aws,azure,gcp` takes as long as the slowest cloud), their
// progress on one shared line, and merged in the order given.
func (sc *scanner) collect(ctx context.Context, provs []providers.Provider, o collectOptions) (*cmdutil.Scan, error) {
	// A provider that cannot be read at all (no credentials, say) ends the
	// scan, as it would alone: the others are cancelled, its error returned.
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var (
		results  = make([]*providers.Result, len(provs))
		errMu    sync.Mutex
		firstErr error
		wg       sync.WaitGroup
	)
	start := func(name string) *iostreams.Progress { return sc.ioStreams().StartProgress(name, !o.progress) }
	if len(provs) > 1 {
		start = sc.ioStreams().StartProgressGroup(!o.progress).Start
	}
	for i, p := range provs {
		bar := start(string(p.Name()))
		sc.counter(p.Name()).attach(bar)
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := providers.Collect(ctx, p, providers.CollectOptions{
				Window:      o.window,
				Concurrency: o.conc(p.Name()),
				Discovered:  bar.Discovered,
				Progress:    scopeDone(bar),
				SkipPrices:  o.skipPrices,
				Shard:       o.shard,
			})
			sc.counter(p.Name()).attach(nil)
			bar.Finish()
			if err != nil {
				errMu.Lock()
				if firstErr == nil {
					firstErr = err
					cancel(err)
				}
				errMu.Unlock()
				return
			}
			results[i] = res
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return nil, fatal(firstErr)
	}
	out := &cmdutil.Scan{Fleet: &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind}}
	for _, res := range results {
		if len(results) == 1 { // nothing to join the instances to: no copy
			out.Fleet.Instances = res.Fleet.Instances
		} else {
			out.Fleet.Instances = append(out.Fleet.Instances, res.Fleet.Instances...)
		}
		out.Fleet.Commitments = append(out.Fleet.Commitments, res.Fleet.Commitments...)
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
	// The file's commitments are its own, in its order.
	res.Fleet.Commitments = fl.Commitments
	if len(res.Fleet.Instances) != len(fl.Instances) {
		return nil, fmt.Errorf("%s: %d of %d instances read", fl.Metadata.Name, len(res.Fleet.Instances), len(fl.Instances))
	}
	res.Fleet.Instances = fileOrder(res.Fleet.Instances, fl.Instances)
	if res.Fleet.Commitments == nil {
		// What the file holds is applied before any saving (docs/commitments.md).
		res.Fleet.Commitments = fl.Commitments
	}
	return res.Fleet, nil
}

// fileOrder puts the instances read back in the order of the file's, which
// reports follow. Each instance's place is looked up once; instances whose
// ids repeat keep their order among themselves.
func fileOrder(read, file []fleet.Instance) []fleet.Instance {
	order := make(map[string]int, len(file))
	for i, in := range file {
		if _, ok := order[in.ID]; !ok {
			order[in.ID] = i
		}
	}
	pos := make([]int, len(read))
	sorted := true
	for k := range read {
		pos[k] = order[read[k].ID]
		sorted = sorted && (k == 0 || pos[k-1] <= pos[k])
	}
	if sorted {
		return read
	}
	idx := make([]int, len(read))
	for k := range idx {
		idx[k] = k
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(pos[a], pos[b]) })
	out := make([]fleet.Instance, len(read))
	for k, from := range idx {
		out[k] = read[from]
	}
	return out
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

// requestCounter passes the requests an adapter reports (Options.OnRequest)
// to the progress display of its scan, when there is one.
type requestCounter struct {
	mu sync.Mutex
	to *iostreams.Progress
}

// request is providers.Options.OnRequest.
func (c *requestCounter) request() {
	c.mu.Lock()
	to := c.to
	c.mu.Unlock()
	to.Request()
}

// attach directs the counts to a provider's display (nil: none).
func (c *requestCounter) attach(p *iostreams.Progress) {
	c.mu.Lock()
	c.to = p
	c.mu.Unlock()
}

// scopeDone is providers.CollectOptions.Progress for a display.
func scopeDone(p *iostreams.Progress) func(providers.Scope, int, error) {
	return func(_ providers.Scope, instances int, err error) { p.ScopeDone(instances, err != nil) }
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
