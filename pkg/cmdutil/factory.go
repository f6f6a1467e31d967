package cmdutil

import (
	"context"
	"time"

	"github.com/gpufinops/gpufinops/pkg/config"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/providers"
)

// Factory hands commands their dependencies. Func fields are lazy, so a command
// that never asks for the catalog never loads it; tests fill only what they use.
type Factory struct {
	IOStreams *iostreams.IOStreams
	// ConfigFile is the --config path; empty means the default location.
	ConfigFile string
	// Config returns the merged configuration (flags > env > file > defaults).
	Config func() (*config.Config, error)
	// Catalog returns the price and hardware catalog: the embedded one with
	// the overlay file of 'catalog update' laid over it, when there is one.
	Catalog func() (pricing.Catalog, error)
	// EmbeddedCatalog returns the catalog built into the binary alone.
	EmbeddedCatalog func() (pricing.Catalog, error)
	// OverlayPath returns where the overlay file of 'catalog update' is;
	// empty when there is no cache folder.
	OverlayPath func() (string, error)
	// Fleet reads a fleet snapshot from a file path, or the demo fleet when demo is true.
	Fleet func(path string, demo bool) (*fleet.Fleet, error)
	// Scan reads fleets live from the clouds (--provider).
	Scan ScanFunc
	// Providers builds the cloud adapters the flags name (idle-stop acts
	// through them).
	Providers func(ctx context.Context, in FleetFlags, cfg *config.Config) ([]providers.Provider, error)
	// Now is the clock; tests pin it.
	Now func() time.Time
}
