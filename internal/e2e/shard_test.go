package e2e

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpufinops/gpufinops/internal/fleetgen"
	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pricing/catalog"
)

// TestShardedScanMerges: `analyze --shard 1/3 … 3/3` over aws, azure and gcp
// on one port serving the demo fleet, then `report merge`, gives the
// recommendations, instance costs and totals of the unsharded scan; the
// shards share no instance and together make the same number of requests
// as the whole scan's scopes need.
func TestShardedScanMerges(t *testing.T) {
	allClouds(t)
	paths := shardedEqualsWhole(t, 3)
	code, _, stderr := gpufinops(t, "report", "merge", paths[0], paths[2])
	if code != cmdutil.ExitUsage || !strings.Contains(stderr, "missing shard 2/3") {
		t.Errorf("merging without shard 2: exit %d, %s", code, stderr)
	}
}

// TestShardedGeneratedFleet: a generated fleet over three clouds, several
// accounts and regions, scanned in 5 shards and merged, is the whole scan,
// commitments included (their pools span accounts and projects).
func TestShardedGeneratedFleet(t *testing.T) {
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	f, err := fleetgen.Mixed(fleetgen.MixedOptions{Instances: 240, Seed: 5, RegionCount: 3, Accounts: 3, Now: demoEnd}, cat)
	if err != nil {
		t.Fatal(err)
	}
	allCloudsServing(t, f)
	shardedEqualsWhole(t, 5)
}

// shardedEqualsWhole scans the served clouds whole and in n shards, merges
// the shards and compares every recommendation, every instance's cost and
// the totals; it returns the parts' paths. A shard holds every account of
// its regions, so a commitment pool that spans accounts (GCP's committed
// use discounts over projects, a Savings Plan over accounts) is planned
// whole in one shard, as in the whole scan.
func shardedEqualsWhole(t *testing.T, n int) []string {
	t.Helper()
	args := []string{"analyze", "--provider", "aws,azure,gcp", "-o", "json"}
	code, whole, stderr := gpufinops(t, args...)
	if code != cmdutil.ExitOK {
		t.Fatalf("analyze exited %d: %s", code, stderr)
	}
	dir := t.TempDir()
	var paths []string
	sizes := make([]int, n)
	for i := 1; i <= n; i++ {
		code, part, stderr := gpufinops(t, append(args, "--shard", fmt.Sprintf("%d/%d", i, n))...)
		if code != cmdutil.ExitOK {
			t.Fatalf("analyze --shard %d/%d exited %d: %s", i, n, code, stderr)
		}
		var head struct {
			Shard   struct{ Index, Count int } `json:"shard"`
			Summary struct {
				InstanceCount int `json:"instanceCount"`
			} `json:"summary"`
		}
		if err := json.Unmarshal([]byte(part), &head); err != nil || head.Shard.Index != i || head.Shard.Count != n {
			t.Fatalf("shard %d/%d: %v, shard %+v", i, n, err, head.Shard)
		}
		sizes[i-1] = head.Summary.InstanceCount
		path := filepath.Join(dir, fmt.Sprintf("part-%d.json", i))
		if err := os.WriteFile(path, []byte(part), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, path)
	}
	code, merged, stderr := gpufinops(t, append([]string{"report", "merge", "-o", "json"}, paths...)...)
	if code != cmdutil.ExitOK {
		t.Fatalf("report merge exited %d: %s", code, stderr)
	}
	got, want := reportOutcome(t, merged), reportOutcome(t, whole)
	if got.current != want.current || got.savings != want.savings {
		t.Errorf("totals: merged current %s saving %s, whole current %s saving %s", got.current, got.savings, want.current, want.savings)
	}
	if strings.Join(got.recs, "\n") != strings.Join(want.recs, "\n") {
		t.Errorf("recommendations differ:\nmerged:\n%s\nwhole:\n%s", strings.Join(got.recs, "\n"), strings.Join(want.recs, "\n"))
	}
	if fmt.Sprint(got.instances) != fmt.Sprint(want.instances) {
		t.Errorf("instance costs differ:\nmerged %v\nwhole  %v", got.instances, want.instances)
	}
	t.Logf("shards of %v instances; %d instances, %d recommendations, current %s, saving %s, both ways", sizes, len(want.instances), len(want.recs), want.current, want.savings)
	return paths
}

// TestShardedRandomFleets, a property over random fleets: on three clouds,
// with random numbers of accounts (projects, subscriptions), regions,
// instances and shards, merge(shards) is the whole scan, every
// recommendation and cost alike.
func TestShardedRandomFleets(t *testing.T) {
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(34, 6))
	for range 3 {
		opts := fleetgen.MixedOptions{Instances: 40 + r.IntN(120), Seed: r.Uint64N(1 << 40), RegionCount: 1 + r.IntN(3), Accounts: 2 + r.IntN(3), Now: demoEnd}
		n := 2 + r.IntN(5)
		t.Run(fmt.Sprintf("%d instances, %d regions, %d accounts, %d shards", opts.Instances, opts.RegionCount, opts.Accounts, n), func(t *testing.T) {
			f, err := fleetgen.Mixed(opts, cat)
			if err != nil {
				t.Fatal(err)
			}
			allCloudsServing(t, f)
			shardedEqualsWhole(t, n)
		})
	}
}
