// Package factory wires the production dependencies of every command.
package factory

import (
	"sync"
	"time"

	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/config"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
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
		return cfg, nil
	})
	sc := &scanner{io: f.IOStreams, now: f.Now}
	f.Scan = sc.scan
	f.Providers = sc.providers
	f.Catalog = sync.OnceValues(func() (pricing.Catalog, error) { return catalog.Embedded() })
	f.Fleet = FileFleet(f.IOStreams)
	return f
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
		return (&scanner{io: ios}).readFile(fl)
	}
}
