package fleetgen

import (
	"math"
	"reflect"
	"regexp"
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

// TestMixedLimits: counts past MaxInstances and MaxAccounts are refused
// before anything is drawn, and every account index up to MaxAccounts keeps
// its cloud's ID format and is distinct.
func TestMixedLimits(t *testing.T) {
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []MixedOptions{
		{Instances: MaxInstances + 1},
		{Instances: math.MaxInt},
		{Instances: 1, Accounts: MaxAccounts + 1},
		{Instances: 1, Accounts: math.MaxInt},
		{Instances: 1, Accounts: -1},
		{Instances: 1, RegionCount: -1},
	} {
		if _, _, err := MixedSeq(o, cat); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
	formats := map[fleet.Provider]*regexp.Regexp{
		fleet.AWS:   regexp.MustCompile(`^[0-9]{12}$`),
		fleet.Azure: regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`),
		fleet.GCP:   regexp.MustCompile(`^[a-z][a-z0-9-]{4,28}[a-z0-9]$`),
	}
	for p, re := range formats {
		seen := map[string]bool{}
		for k := range MaxAccounts {
			a := accountName(p, k)
			if !re.MatchString(a) || seen[a] {
				t.Fatalf("%s account %d: %q is not a distinct ID of the cloud's format", p, k, a)
			}
			seen[a] = true
		}
	}
}

// TestMixedSeqIsMixed: the sequence gives Mixed's instances, and a second
// pass gives them again.
func TestMixedSeqIsMixed(t *testing.T) {
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	o := MixedOptions{Instances: 300, Seed: 9, RegionCount: 4, Accounts: 2}
	whole, err := Mixed(o, cat)
	if err != nil {
		t.Fatal(err)
	}
	head, all, err := MixedSeq(o, cat)
	if err != nil {
		t.Fatal(err)
	}
	for pass := range 2 {
		got := *head
		for in := range all {
			got.Instances = append(got.Instances, in)
		}
		if !reflect.DeepEqual(&got, whole) {
			t.Fatalf("pass %d of the sequence differs from Mixed", pass)
		}
	}
}

// BenchmarkMixedWrite is `cloudsim generate`'s path: 1,000 mixed instances
// drawn and written an instance at a time, as JSON and as YAML.
func BenchmarkMixedWrite(b *testing.B) {
	cat, err := catalog.Embedded()
	if err != nil {
		b.Fatal(err)
	}
	for _, format := range []string{fleet.FormatJSON, fleet.FormatYAML} {
		b.Run(format, func(b *testing.B) {
			var n countWriter
			for b.Loop() {
				head, all, err := MixedSeq(MixedOptions{Instances: 1000, Seed: 1, RegionCount: 10, Accounts: 3}, cat)
				if err != nil {
					b.Fatal(err)
				}
				if err := fleet.EncodeSeq(&n, head, all, format); err != nil {
					b.Fatal(err)
				}
			}
			b.SetBytes(n.n / int64(b.N))
		})
	}
}

// countWriter counts what is written to it.
type countWriter struct{ n int64 }

func (w *countWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	return len(p), nil
}
