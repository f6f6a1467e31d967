// Package factory wires the production dependencies of every command.
package factory

import (
	"fmt"
	"sync"
	"time"

	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/config"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/cache"
	"github.com/gpufinops/gpufinops/pricing/catalog"
	"github.com/gpufinops/gpufinops/providers"
	"github.com/gpufinops/gpufinops/providers/file"

	// Register every cloud adapter.
	_ "github.com/gpufinops/gpufinops/providers/all"
)

// New returns the Factory the gpufinops binary runs with.
func New() *cmdutil.Factory {
	f := &cmdutil.Factory{
		IOStreams: iostreams.System(),
		Now:       time.Now,
	}
	f.Config = sync.OnceValues(func() (*config.Config, error) {
		cfg, err := config.Load(config.Options{File: f.ConfigFile})
		if err != nil {
			return nil, &cmdutil.InputError{Err: err}
		}
		for _, w := range cfg.Warnings {
			fmt.Fprintf(f.IOStreams.ErrOut, "warning: %s\n", w)
		}
		return cfg, nil
	})
	// The scanner reads the factory's clock and streams when it runs, so
	// whoever replaces them after New (tests, embedders) is heard.
	sc := &scanner{streams: func() *iostreams.IOStreams { return f.IOStreams }, now: func() time.Time { return f.Now() }}
	f.Scan = sc.scan
	f.Providers = sc.providers
	f.EmbeddedCatalog = catalog.Embedded
	// OverlayPath is empty when there is no cache folder (no overlay).
	f.OverlayPath = func() (string, error) {
		cfg, err := f.Config()
		if err != nil {
			return "", err
		}
		d := cacheDir(cfg.Cache.Dir)
		if d == "" {
			return "", nil // no cache folder: no overlay
		}
		return cache.OverlayPath(d), nil
	}
	f.Catalog = sync.OnceValues(func() (pricing.Catalog, error) { return withOverlay(f.EmbeddedCatalog, f.OverlayPath) })
	f.Fleet = FileFleet(f.IOStreams)
	return f
}

// withOverlay is the embedded catalog with the overlay file of 'catalog
// update' laid over it, when there is one; a file that cannot be read is an
// InputError naming it.
func withOverlay(embedded func() (pricing.Catalog, error), path func() (string, error)) (pricing.Catalog, error) {
	base, err := embedded()
	if err != nil {
		return nil, err
	}
	p, err := path()
	if err != nil || p == "" {
		return base, err
	}
	o, err := cache.ReadOverlay(p)
	if err != nil {
		return nil, &cmdutil.InputError{Err: err}
	}
	return o.Catalog(base, p), nil
}

// options are an adapter's Options: the shared settings, and its own
// options from the configuration (providers.<cloud>.*) with its flags (and
// --region) laid over them.
func (sc *scanner) options(ri *providers.RegInfo, in cmdutil.FleetFlags, cfg *config.Config) providers.Options {
	cloud := string(ri.Name)
	vals := providers.Values{}
	for k, v := range ri.Defaults() {
		vals[k] = v
	}
	for k, v := range cfg.Provider(cloud) {
		vals[k] = v
	}
	for k, v := range in.Adapter.Values(cloud) {
		vals[k] = v
	}
	regions := vals.Strings(providers.OptRegions)
	if len(in.Regions) > 0 {
		// each region only on the cloud it belongs to (checked by
		// FleetFlags.Validate)
		if rs := in.RegionsFor(cloud); len(rs) > 0 {
			regions = rs
		} else {
			regions = in.Regions
		}
	}
	return providers.Options{
		Endpoint:        vals.String(providers.OptEndpoint),
		Regions:         regions,
		Lookback:        time.Duration(in.LookbackDays) * 24 * time.Hour,
		Concurrency:     cfg.Concurrency(cloud),
		CacheDir:        priceCacheDir(in, cfg),
		CacheTTL:        time.Duration(cfg.Cache.TTLHours) * time.Hour,
		ConnectTimeout:  cfg.Timeouts.Connect,
		RequestTimeout:  cfg.Timeouts.Request,
		RetryMaxBackoff: sc.retryMaxBackoff,
		OnRequest:       sc.counter(ri.Name).request,
		Now:             sc.now,
		Adapter:         vals,
	}
}

// FileFleet returns the Factory's Fleet function: it reads the fleet file at
// path ("-" is ios.In at the time of the call) or, when demo is true, the
// embedded demo fleet, through providers/file like a scan. Its errors are
// InputErrors.
func FileFleet(ios *iostreams.IOStreams) func(path string, demo bool) (*fleet.Fleet, error) {
	return func(path string, demo bool) (*fleet.Fleet, error) {
		var (
			fl  *fleet.Fleet
			err error
		)
		if demo {
			fl, err = file.Demo()
		} else {
			fl, err = file.Load(path, ios.In)
		}
		if err != nil {
			return nil, &cmdutil.InputError{Err: err}
		}
		return (&scanner{streams: func() *iostreams.IOStreams { return ios }}).readFile(fl)
	}
}

// priceCacheDir is the adapters' price cache: none when the command reads
// prices fresh (catalog update).
func priceCacheDir(in cmdutil.FleetFlags, cfg *config.Config) string {
	if in.NoPriceCache {
		return ""
	}
	return cacheDir(cfg.Cache.Dir)
}
