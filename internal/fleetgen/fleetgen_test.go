package fleetgen

import (
	"reflect"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
)

// TestGenerateValid: generated fleets, plain and hostile, pass validation and
// the catalog's checks, and a seed gives the same fleet every time.
func TestGenerateValid(t *testing.T) {
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	for seed := range uint64(4) {
		for _, hostile := range []bool{false, true} {
			o := Options{Instances: 300, Seed: seed, SampleShare: 0.3, Hostile: hostile}
			f := Generate(o)
			if err := f.Validate(); err != nil {
				t.Fatalf("seed %d hostile %v: %v", seed, hostile, err)
			}
			if err := pricing.Complete(f, cat); err != nil {
				t.Fatalf("seed %d hostile %v: %v", seed, hostile, err)
			}
			if g := Generate(o); !reflect.DeepEqual(Generate(o), g) {
				t.Fatalf("seed %d: two fleets from one seed differ", seed)
			}
		}
	}
}

// TestAllZonesLoad: every listed zone is one the binary can load.
func TestAllZonesLoad(t *testing.T) {
	if len(AllZones) < 400 {
		t.Fatalf("only %d zones", len(AllZones))
	}
	for _, z := range append(AllZones, Zones...) {
		if _, err := time.LoadLocation(z); err != nil {
			t.Errorf("%s: %v", z, err)
		}
	}
}
