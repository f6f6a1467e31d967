package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/internal/fleetgen"
	"github.com/gpufinops/gpufinops/internal/purchasetest"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/recommend"
	"github.com/gpufinops/gpufinops/pkg/report"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
)

// propertyRounds is how many generated fleets the engine properties run on:
// a few seconds by default, many more with GPUFINOPS_PROPERTY_LONG=1.
func propertyRounds() (rounds, size int) {
	if os.Getenv("GPUFINOPS_PROPERTY_LONG") != "" {
		return 200, 400
	}
	return 6, 120
}

// checkFinite fails on any number in a JSON document that is not finite or
// is absurd (above 1e15: no GPU bill is that large).
func checkFinite(t *testing.T, doc []byte) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		if n, ok := tok.(json.Number); ok {
			f, err := n.Float64()
			if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > 1e15 {
				t.Fatalf("number %s in the report", n)
			}
		}
	}
}

// TestEnginePropertiesGeneratedFleets runs the whole engine — recommend.Run,
// report.New, every printer — on generated fleets with hostile schedules (any
// minute, 24:00, overlaps, every IANA zone), samples (sparse, dense, out of
// order, duplicated, at DST changes, none) and mixed providers, regions,
// types, lifecycles and workloads. Nothing panics, and the report adds up:
// report.Verify (summary = sum of parts), no negative savings or costs, only
// finite numbers.
func TestEnginePropertiesGeneratedFleets(t *testing.T) {
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	rounds, size := propertyRounds()
	for seed := range uint64(rounds) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			f := fleetgen.Generate(fleetgen.Options{Instances: size, Seed: seed, SampleShare: 0.3, MaxSamples: 400, Hostile: true})
			runEngine(t, f, cat)
		})
	}
}

func runEngine(t *testing.T, f *fleet.Fleet, cat pricing.Catalog) {
	t.Helper()
	if err := f.Validate(); err != nil {
		t.Fatalf("generated fleet: %v", err)
	}
	if err := pricing.Complete(f, cat); err != nil {
		t.Fatalf("generated fleet against the catalog: %v", err)
	}
	plan := recommend.Run(f, cat, recommend.DefaultPolicy().WithPurchases(purchasetest.Purchases()))
	rep := report.New(plan, report.Meta{GeneratedAt: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC), FleetName: f.Metadata.Name})
	if err := rep.Verify(); err != nil {
		t.Fatalf("report does not add up: %v", err)
	}
	for _, r := range rep.Recommendations {
		if r.MonthlySavings.Decimal().IsNegative() {
			t.Fatalf("%s %s: savings %s", r.ResourceID, r.Kind, r.MonthlySavings)
		}
		if r.CurrentMonthlyCost.Decimal().IsNegative() || r.ProjectedMonthlyCost.Decimal().IsNegative() {
			t.Fatalf("%s %s: current %s, projected %s, savings %s", r.ResourceID, r.Kind, r.CurrentMonthlyCost, r.ProjectedMonthlyCost, r.MonthlySavings)
		}
	}
	if rep.Summary.MonthlySavings.Decimal().IsNegative() {
		t.Fatalf("summary savings %s", rep.Summary.MonthlySavings)
	}
	for _, format := range report.Formats {
		var b bytes.Buffer
		if err := report.Write(&b, rep, format, report.PrintOptions{TTY: format == "table", Width: 100}); err != nil {
			t.Fatalf("-o %s: %v", format, err)
		}
		if format == "json" {
			checkFinite(t, b.Bytes())
			back, err := report.Load(&b)
			if err != nil {
				t.Fatalf("the JSON report does not load back: %v", err)
			}
			if err := back.Verify(); err != nil {
				t.Fatalf("the loaded report does not add up: %v", err)
			}
		}
	}
}

// TestEnginePropertiesZones: one fleet per batch of IANA zones, every
// instance on a schedule in one of them, through the engine and the CLI's
// sharing and commitment plans.
func TestEnginePropertiesZones(t *testing.T) {
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	zones := fleetgen.AllZones
	const batch = 150
	for start := 0; start < len(zones); start += batch {
		end := min(start+batch, len(zones))
		f := fleetgen.Generate(fleetgen.Options{Instances: end - start, Seed: uint64(start), SampleShare: 0.2, MaxSamples: 200, Hostile: true})
		for i := range f.Instances {
			in := &f.Instances[i]
			in.Usage = fleet.Usage{Schedule: &fleet.Schedule{Timezone: zones[start+i], Windows: []fleet.Window{
				{Days: []string{"sat", "sun"}, Start: fmt.Sprintf("%02d:%02d", i%24, i%60), End: "24:00"},
				{Days: []string{"mon", "tue", "wed", "thu", "fri"}, Start: "00:00", End: fmt.Sprintf("%02d:%02d", 1+i%23, (i*7)%60)},
			}}}
		}
		t.Run(fmt.Sprintf("%s..%s", zones[start], zones[end-1]), func(t *testing.T) {
			runEngine(t, f, cat)
			path := filepath.Join(t.TempDir(), "fleet.json")
			b, _ := json.Marshal(f)
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{
				{"sharing", "plan", "--fleet", path, "-o", "json"},
				{"commit-plan", "--fleet", path, "-o", "json"},
				{"commit-plan", "--fleet", path},
			} {
				if n := analyzeArgs(t, args); n == 0 {
					t.Errorf("%s: no output", strings.Join(args, " "))
				}
			}
		})
	}
}
