package factory

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/config"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/pricing/cache"
	"github.com/gpufinops/gpufinops/providers"
)

// scanner reads fleets live through the registered adapters.
type scanner struct {
	io  *iostreams.IOStreams
	now func() time.Time
	// retryMaxBackoff caps the adapters' retry waits; zero keeps theirs.
	retryMaxBackoff time.Duration

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
	window := fleet.TimeRange{Start: end.Add(-time.Duration(in.LookbackDays) * 24 * time.Hour), End: end}
	out := &cmdutil.Scan{Fleet: &fleet.Fleet{
		APIVersion: fleet.APIVersion,
		Kind:       fleet.Kind,
		Metadata:   fleet.Metadata{Name: "scan", GeneratedAt: &now},
	}}
	provs, err := sc.providers(ctx, in, cfg)
	if err != nil {
		return nil, err
	}
	for _, p := range provs {
		bar := sc.io.StartProgress(string(p.Name()), in.Quiet)
		sc.counter(p.Name()).attach(bar)
		res, err := providers.Collect(ctx, p, providers.CollectOptions{
			Window:      window,
			Concurrency: cfg.AWS.Concurrency,
			Discovered:  bar.Discovered,
			Progress:    scopeDone(bar),
		})
		sc.counter(p.Name()).attach(nil)
		bar.Finish()
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
	out.Fleet.Metadata.Source = fmt.Sprintf("live scan of %v, %d days of utilization", in.Providers, in.LookbackDays)
	return out, nil
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
		p, err := ri.New(ctx, providers.Options{
			Endpoint:         cfg.AWS.Endpoint,
			Regions:          first(in.Regions, cfg.AWS.Regions),
			Profiles:         first(in.Profiles, cfg.AWS.Profiles),
			RoleARNs:         first(in.RoleARNs, cfg.AWS.RoleARNs),
			MetricsNamespace: cfg.AWS.MetricsNamespace,
			Lookback:         time.Duration(in.LookbackDays) * 24 * time.Hour,
			Concurrency:      cfg.AWS.Concurrency,
			CacheDir:         cacheDir(cfg.Cache.Dir),
			CacheTTL:         time.Duration(cfg.Cache.TTLHours) * time.Hour,
			OnRequest:        sc.counter(fleet.Provider(name)).request,
			RequestTimeout:   cfg.Timeouts.Request,
			RetryMaxBackoff:  sc.retryMaxBackoff,
			Now:              sc.now,
		})
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

// fatal maps credential problems to exit code 4; other errors pass.
func fatal(err error) error {
	if errors.Is(err, providers.ErrCredentials) || errors.Is(err, providers.ErrPermission) {
		return &cmdutil.CredentialsError{Err: err}
	}
	return err
}

func first(a, b []string) []string {
	if len(a) > 0 {
		return a
	}
	return b
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
