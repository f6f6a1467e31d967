package factory

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/config"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/cache"
	"github.com/gpufinops/gpufinops/pricing/catalog"
)

// The factory's catalog lays the overlay file of 'catalog update' over the
// embedded one and names it in its sources; a corrupt file is an input
// error naming it; no file, or no cache folder, is the embedded catalog.
func TestCatalogWithOverlay(t *testing.T) {
	path := cache.OverlayPath(t.TempDir())
	at := func() (string, error) { return path, nil }
	cat, err := withOverlay(catalog.Embedded, at)
	if err != nil {
		t.Fatal(err)
	}
	if emb, _ := catalog.Embedded(); cat != emb {
		t.Fatal("without a file the catalog is not the embedded one")
	}
	if cat, err := withOverlay(catalog.Embedded, func() (string, error) { return "", nil }); err != nil || cat == nil {
		t.Fatalf("no cache folder: %v", err)
	}
	day := time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)
	o, _ := (*cache.Overlay)(nil).Merge(
		map[cache.Region]cache.Fetch{{Provider: fleet.AWS, Region: "us-east-1"}: {Provider: fleet.AWS, Region: "us-east-1", FetchedAt: day}},
		map[cache.Region][]string{{Provider: fleet.AWS, Region: "us-east-1"}: {"p5.48xlarge"}},
		[]pricing.Price{{Provider: fleet.AWS, Region: "us-east-1", InstanceType: "p5.48xlarge", Option: pricing.OnDemand,
			Hourly: decimal.RequireFromString("12.34"), Currency: pricing.Currency, Unit: pricing.UnitHour, Source: "AWS Price List API", AsOf: "2026-12-06"}},
		day)
	if err := o.Write(path); err != nil {
		t.Fatal(err)
	}
	cat, err = withOverlay(catalog.Embedded, at)
	if err != nil {
		t.Fatal(err)
	}
	off, ok := cat.Offer(fleet.AWS, "us-east-1", "p5.48xlarge")
	if !ok || off.OnDemand.Hourly.String() != "12.34" || off.OnDemand.Source != "AWS Price List API (catalog update 2026-12-06)" {
		t.Fatalf("offer %+v", off.OnDemand)
	}
	srcs := cat.Sources()
	if last := srcs[len(srcs)-1]; last.Name != "AWS prices from catalog update" || last.AsOf != "2026-12-06" || !strings.Contains(last.Origin, path) {
		t.Fatalf("last source %+v", last)
	}
	if err := os.WriteFile(path, []byte(`{"kind":"CatalogOverlay","schemaVersion":"1.0","prices":[{"hourly":"NaN"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = withOverlay(catalog.Embedded, at)
	var ie *cmdutil.InputError
	if !errors.As(err, &ie) || !strings.HasPrefix(err.Error(), "catalog overlay "+path+":") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("corrupt overlay: %v", err)
	}
}

// The production factory finds the overlay under the configured cache folder.
func TestFactoryOverlayPath(t *testing.T) {
	dir := t.TempDir()
	f := New()
	f.Config = func() (*config.Config, error) { return &config.Config{Cache: config.CacheConfig{Dir: dir}}, nil }
	got, err := f.OverlayPath()
	if err != nil || got != filepath.Join(dir, "catalog", "overlay.json") {
		t.Fatalf("%q, %v", got, err)
	}
	// catalog update reads prices anew: the adapters get no price cache.
	if d := priceCacheDir(cmdutil.FleetFlags{NoPriceCache: true}, &config.Config{Cache: config.CacheConfig{Dir: dir}}); d != "" {
		t.Fatalf("the price cache is %q for catalog update", d)
	}
	if d := priceCacheDir(cmdutil.FleetFlags{}, &config.Config{Cache: config.CacheConfig{Dir: dir}}); d != dir {
		t.Fatalf("the price cache is %q, want %q", d, dir)
	}
}
