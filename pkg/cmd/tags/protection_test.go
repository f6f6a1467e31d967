package tags

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpufinops/gpufinops/internal/purchasetest"
	"github.com/gpufinops/gpufinops/pkg/cmd/factory"
	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/config"
	"github.com/gpufinops/gpufinops/pkg/idlestop"
	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/pkg/recommend"
	"github.com/gpufinops/gpufinops/pkg/testutil"
	"github.com/gpufinops/gpufinops/pricing/catalog"
)

// idleFleet is one idle on-demand machine tagged with a house exemption
// convention no default rule knows ("Pinned"), and one idle machine
// without it.
const idleFleet = `apiVersion: gpufinops/v1
kind: Fleet
instances:
- id: pinned
  provider: aws
  region: us-east-1
  instanceType: g5.xlarge
  tags: {Pinned: "yes", Team: ml, Project: p, WorkloadType: development, Environment: dev}
  utilization: {gpu: {avg: 1, p95: 2, max: 3}, gpuMemory: {avg: 1, p95: 1, max: 1}, cpu: {avg: 2, p95: 3, max: 4}}
- id: plain
  provider: aws
  region: us-east-1
  instanceType: g5.xlarge
  tags: {Team: ml, Project: p, WorkloadType: development, Environment: dev}
  utilization: {gpu: {avg: 1, p95: 2, max: 3}, gpuMemory: {avg: 1, p95: 1, max: 1}, cpu: {avg: 2, p95: 3, max: 4}}
`

// TestAuditUsesTheConfiguredProtection: the optimized cost of tags audit
// follows the configured idle_stop policy, as analyze and idle-stop do: a
// machine exempt by the configured idle_stop.exempt_tag (or
// idle_stop.exempt_phrases) is kept running, while under the defaults it is
// stopped (optimized to nothing).
func TestAuditUsesTheConfiguredProtection(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fleet.yaml")
	if err := os.WriteFile(path, []byte(idleFleet), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(is idlestop.Policy) map[string][2]string {
		t.Helper()
		ios, _, out, _ := iostreams.Test()
		opts := &AuditOptions{IO: ios,
			Config: func() (*config.Config, error) {
				return &config.Config{Policy: recommend.DefaultPolicy().WithPurchases(purchasetest.Purchases()), IdleStop: is}, nil
			},
			Catalog: catalog.Embedded, Fleet: factory.FileFleet(ios), Now: testutil.Now,
			Input: cmdutil.FleetFlags{Path: path}, Format: "csv"}
		if err := auditRun(opts); err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(strings.NewReader(out.String())).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		col := map[string]int{}
		for i, h := range rows[0] {
			col[h] = i
		}
		got := map[string][2]string{}
		for _, r := range rows[1:] {
			got[r[col["resourceId"]]] = [2]string{r[col["currentMonthlyCost"]], r[col["optimizedMonthlyCost"]]}
		}
		return got
	}
	def := run(idlestop.Policy{})
	if c := def["pinned"]; c[0] == "" || c[1] != "0.00" {
		t.Fatalf("defaults: pinned %v, want an optimized cost of 0.00 (stopped)", c)
	}
	tag := idlestop.DefaultPolicy()
	tag.ExemptTag = "Pinned"
	phrase := idlestop.DefaultPolicy()
	phrase.ExemptPhrases = []string{"pinned"}
	for name, is := range map[string]idlestop.Policy{"exempt_tag": tag, "exempt_phrases": phrase} {
		got := run(is)
		if c := got["pinned"]; c[1] == "0.00" || c[1] == "" {
			t.Errorf("%s: pinned %v, want it kept running (protected: an optimized cost above 0)", name, c)
		}
		if got["plain"] != def["plain"] {
			t.Errorf("%s: plain %v, with the defaults %v", name, got["plain"], def["plain"])
		}
	}
}
