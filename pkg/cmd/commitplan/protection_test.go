package commitplan

import (
	"encoding/json"
	"os"
	"path/filepath"
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

// steadyFleet: four idle on-demand machines that run all month, tagged
// with a house exemption convention no default rule knows ("Pinned").
const steadyFleet = `apiVersion: gpufinops/v1
kind: Fleet
instances:
` + machine + `  id: a
` + machine + `  id: b
` + machine + `  id: c
` + machine + `  id: d
`

const machine = `- provider: aws
  region: us-east-1
  instanceType: g5.xlarge
  tags: {Pinned: "yes", Environment: dev}
  utilization: {gpu: {avg: 1, p95: 2, max: 3}, gpuMemory: {avg: 1, p95: 1, max: 1}, cpu: {avg: 2, p95: 3, max: 4}}
`

// TestCommitPlanUsesTheConfiguredProtection: commit-plan plans commitments
// for what analyze and idle-stop leave running under the configured
// idle_stop policy. Under the defaults the idle machines are stopped (left
// out of the plan as such); exempt by the configured idle_stop.exempt_tag
// (or an idle_stop.exempt_phrases entry) they keep running and the plan
// weighs them; a configured exemption they do not carry changes nothing.
func TestCommitPlanUsesTheConfiguredProtection(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fleet.yaml")
	if err := os.WriteFile(path, []byte(steadyFleet), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(is idlestop.Policy) (string, float64) {
		t.Helper()
		ios, _, out, _ := iostreams.Test()
		opts := &CommitPlanOptions{IO: ios,
			Config: func() (*config.Config, error) {
				return &config.Config{Policy: recommend.DefaultPolicy().WithPurchases(purchasetest.Purchases()), IdleStop: is}, nil
			},
			Catalog: catalog.Embedded, Fleet: factory.FileFleet(ios), Now: testutil.Now,
			Input: cmdutil.FleetFlags{Path: path}, Term: "both", Output: "json"}
		if err := commitPlanRun(opts); err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		return out.String(), stopped(doc)
	}
	defDoc, defStopped := run(idlestop.Policy{})
	if defStopped != 4 {
		t.Errorf("defaults: %v machines left out as stopped, want 4 (idle, not protected)", defStopped)
	}
	other := idlestop.DefaultPolicy()
	other.ExemptTag = "Frozen"
	if doc, _ := run(other); doc != defDoc {
		t.Errorf("an exemption no machine carries changed the plan:\n%s\nwant\n%s", doc, defDoc)
	}
	tag := idlestop.DefaultPolicy()
	tag.ExemptTag = "Pinned"
	phrase := idlestop.DefaultPolicy()
	phrase.ExemptPhrases = []string{"pinned"}
	for name, is := range map[string]idlestop.Policy{"exempt_tag": tag, "exempt_phrases": phrase} {
		if d, n := run(is); n != 0 || d == defDoc {
			t.Errorf("%s: %v machines left out as stopped, want none (protected, they run)", name, n)
		}
	}
}

// stopped counts the machines a commit-plan document leaves out because
// the plan stops them.
func stopped(v any) float64 {
	var n float64
	switch x := v.(type) {
	case map[string]any:
		if x["reason"] == "stopped" && x["id"] != nil {
			n++
		}
		for _, y := range x {
			n += stopped(y)
		}
	case []any:
		for _, y := range x {
			n += stopped(y)
		}
	}
	return n
}
