package catalog

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"

	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/cache"
)

// SnapshotPath is where `make catalog` writes the price snapshot, from the
// module's root.
const SnapshotPath = "pricing/catalog/snapshot/prices.json"

//go:embed snapshot
var snapshotFS embed.FS

// withSnapshot lays the price snapshot `make catalog` wrote (an overlay
// file, see pricing/cache) over the catalog loaded from the source
// extracts; without one the catalog is returned as it is.
func withSnapshot(base pricing.Catalog, fsys fs.FS) (pricing.Catalog, error) {
	b, err := fs.ReadFile(fsys, "snapshot/prices.json")
	if errors.Is(err, fs.ErrNotExist) {
		return base, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", SnapshotPath, err)
	}
	o, err := cache.ParseOverlay(SnapshotPath, b)
	if err != nil {
		return nil, err
	}
	return o.CatalogAs(base, pricing.OverlaySource{
		Label:  "price snapshot",
		Origin: fmt.Sprintf("the cloud's price APIs, read by 'make catalog' (%s) on %s", SnapshotPath, o.UpdatedAt.UTC().Format("2006-01-02")),
	}, "price snapshot"), nil
}
