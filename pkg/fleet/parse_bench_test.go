package fleet_test

import (
	"bytes"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/gpufinops/gpufinops/internal/fleetgen"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
)

// BenchmarkParseGenerated reads the mixed fleets cloudsim generates, as
// JSON and as YAML, streamed (the default) and as one tree (the readers
// before), at 10,000 instances; GPUFINOPS_BENCH_INSTANCES=10000,100000
// sets the sizes. The fleets are generated once, before the timing.
//
//	go test -run '^$' -bench ParseGenerated -benchmem ./pkg/fleet/
func BenchmarkParseGenerated(b *testing.B) {
	sizes := []int{10000}
	if s := os.Getenv("GPUFINOPS_BENCH_INSTANCES"); s != "" {
		sizes = nil
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				b.Fatalf("GPUFINOPS_BENCH_INSTANCES: %v", err)
			}
			sizes = append(sizes, n)
		}
	}
	cat, err := catalog.Embedded()
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range sizes {
		for _, format := range []string{fleet.FormatJSON, fleet.FormatYAML} {
			var doc []byte
			for _, mode := range []string{"streamed", "tree"} {
				b.Run(fmt.Sprintf("%s/%s/%d", format, mode, n), func(b *testing.B) {
					if doc == nil {
						doc = generated(b, cat, n, format)
					}
					defer fleet.SetPiecewise(fleet.SetPiecewise(mode == "streamed"))
					b.SetBytes(int64(len(doc)))
					b.ResetTimer()
					for b.Loop() {
						f, err := fleet.Parse("fleet."+format, doc)
						if err != nil {
							b.Fatal(err)
						}
						if len(f.Instances) != n {
							b.Fatalf("%d instances, want %d", len(f.Instances), n)
						}
					}
				})
			}
		}
	}
}

// TestGeneratedYAMLStreams: a mixed fleet as cloudsim generates it reads
// streamed, every instance without the YAML library, into the fleet the
// whole-tree reader gives and the JSON gives.
func TestGeneratedYAMLStreams(t *testing.T) {
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	const n = 500
	y := generated(t, cat, n, fleet.FormatYAML)
	if slow, ok := fleet.YAMLLibraryInstances(y); !ok || slow > 0 {
		t.Fatalf("streamed %v, %d of %d instances through the YAML library", ok, slow, n)
	}
	streamed, err := fleet.Parse("fleet.yaml", y)
	if err != nil {
		t.Fatal(err)
	}
	fromJSON, err := fleet.Parse("fleet.json", generated(t, cat, n, fleet.FormatJSON))
	if err != nil {
		t.Fatal(err)
	}
	was := fleet.SetPiecewise(false)
	tree, err := fleet.Parse("fleet.yaml", y)
	fleet.SetPiecewise(was)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(streamed, tree) || !reflect.DeepEqual(streamed, fromJSON) {
		t.Fatal("the streamed YAML, the YAML read whole and the JSON give different fleets")
	}
}

// generated is the mixed fleet of n instances in format, as cloudsim
// generate writes it.
func generated(b testing.TB, cat pricing.Catalog, n int, format string) []byte {
	b.Helper()
	head, all, err := fleetgen.MixedSeq(fleetgen.MixedOptions{Instances: n, Seed: 1, RegionCount: 10, Accounts: 3}, cat)
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	if err := fleet.EncodeSeq(&buf, head, all, format); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}
