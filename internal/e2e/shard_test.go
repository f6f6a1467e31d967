package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/cmdutil"
)

// TestShardedScanMerges: `analyze --shard 1/3 … 3/3` over aws, azure and gcp
// on one port serving the demo fleet, then `report merge`, gives the
// recommendations, instance costs and totals of the unsharded scan; the
// shards share no instance and together make the same number of requests
// as the whole scan's scopes need.
func TestShardedScanMerges(t *testing.T) {
	allClouds(t)
	args := []string{"analyze", "--provider", "aws,azure,gcp", "-o", "json"}
	code, whole, stderr := gpufinops(t, args...)
	if code != cmdutil.ExitOK {
		t.Fatalf("analyze exited %d: %s", code, stderr)
	}
	dir := t.TempDir()
	var paths []string
	sizes := make([]int, 3)
	for i := 1; i <= 3; i++ {
		code, part, stderr := gpufinops(t, append(args, "--shard", fmt.Sprintf("%d/3", i))...)
		if code != cmdutil.ExitOK {
			t.Fatalf("analyze --shard %d/3 exited %d: %s", i, code, stderr)
		}
		var head struct {
			Shard   struct{ Index, Count int } `json:"shard"`
			Summary struct {
				InstanceCount int `json:"instanceCount"`
			} `json:"summary"`
		}
		if err := json.Unmarshal([]byte(part), &head); err != nil || head.Shard.Index != i || head.Shard.Count != 3 {
			t.Fatalf("shard %d/3: %v, shard %+v", i, err, head.Shard)
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
	t.Logf("shards of %v instances; %d recommendations, current %s, saving %s, both ways", sizes, len(want.recs), want.current, want.savings)

	code, _, stderr = gpufinops(t, "report", "merge", paths[0], paths[2])
	if code != cmdutil.ExitUsage || !strings.Contains(stderr, "missing shard 2/3") {
		t.Errorf("merging without shard 2: exit %d, %s", code, stderr)
	}
}
