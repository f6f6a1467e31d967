package fleetgen

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
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

// TestMixedValid: mixed fleets over every cloud pass validation and the
// catalog's checks, use the accounts and regions asked for, and a seed gives
// the same fleet every time.
func TestMixedValid(t *testing.T) {
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	for seed := range uint64(3) {
		o := MixedOptions{Instances: 600, Seed: seed, RegionCount: 3, Accounts: 4}
		f, err := Mixed(o, cat)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Validate(); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if err := pricing.Complete(f, cat); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		g, _ := Mixed(o, cat)
		if h, _ := Mixed(o, cat); !reflect.DeepEqual(g, h) {
			t.Fatalf("seed %d: two fleets from one seed differ", seed)
		}
		clouds, accounts, regions := map[fleet.Provider]bool{}, map[string]bool{}, map[fleet.Provider]map[string]bool{}
		var multi, spot, stopped, noAgent int
		for _, in := range f.Instances {
			clouds[in.Provider] = true
			accounts[string(in.Provider)+"/"+in.Account] = true
			if regions[in.Provider] == nil {
				regions[in.Provider] = map[string]bool{}
			}
			regions[in.Provider][in.Region] = true
			if in.GPU.Count > 1 {
				multi++
			}
			if in.Lifecycle == fleet.Spot {
				spot++
			}
			if in.State == fleet.Stopped {
				stopped++
			}
			if in.Utilization == nil {
				noAgent++
			}
		}
		if len(clouds) != 3 || len(accounts) != 12 {
			t.Errorf("seed %d: %d clouds, %d accounts, want 3 and 12", seed, len(clouds), len(accounts))
		}
		for p, rs := range regions {
			if len(rs) > 3 {
				t.Errorf("seed %d: %s uses %d regions, want at most 3", seed, p, len(rs))
			}
		}
		if multi == 0 || spot == 0 || stopped == 0 || noAgent == 0 {
			t.Errorf("seed %d: multi-GPU %d, spot %d, stopped %d, no agent %d: want some of each", seed, multi, spot, stopped, noAgent)
		}
	}
}

// TestMixedBadOptions: regions no cloud prices and negative counts are errors.
func TestMixedBadOptions(t *testing.T) {
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Mixed(MixedOptions{Instances: 1, Clouds: []fleet.Provider{fleet.AWS}, Regions: []string{"mars-1"}}, cat); err == nil || !strings.Contains(err.Error(), "mars-1") {
		t.Errorf("unknown region: %v", err)
	}
	if _, err := Mixed(MixedOptions{Instances: -1}, cat); err == nil {
		t.Error("negative instances: no error")
	}
}
