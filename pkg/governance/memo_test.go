package governance

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// TestAuditMemoIsFresh: over random items drawn from a small vocabulary (so
// that tag sets repeat, in other spellings too), an audit that reuses earlier
// findings gives every item what an audit of that item alone gives.
func TestAuditMemoIsFresh(t *testing.T) {
	custom := Policy{
		RequiredTags:       []string{"team", "Owner"},
		AllowedValues:      []AllowedValues{{Tag: "Environment", Values: []string{"prod", "dev"}}, {Tag: "owner", Values: []string{"a", "x"}}},
		ModelNameWorkloads: []string{"Development"},
	}
	rng := rand.New(rand.NewSource(5))
	for _, p := range []Policy{DefaultPolicy(), custom} {
		memo := newAuditMemo(p)
		for i, it := range randomItems(rng, 3000) {
			got, want := memo.audit(it), newAuditMemo(p).audit(it)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("item %d %v %+v: the reused findings differ from a fresh audit (-fresh +reused):\n%s", i, it.Tags, it.Workload, diff)
			}
		}
		if n := len(memo.byIn); n >= 3000 {
			t.Errorf("%d findings for 3000 items: nothing was reused", n)
		}
	}
}

// randomItems are n items whose tags, providers, workloads and costs are
// drawn from a small vocabulary, other spellings of the policy's keys and
// values among them.
func randomItems(rng *rand.Rand, n int) []Item {
	keys := []string{"Team", "team", "TEAM", "Project", "Environment", "environment", "env", "WorkloadType", "workload-type",
		"ModelName", "model_name", "CostCenter", "AutoShutdown", "Owner", " Team "}
	values := []string{"", " ", "a", "Production", "prod", "production", "Staging", "Training", "training", "fine-tuning", "Inference", "x"}
	types := []fleet.WorkloadType{fleet.Training, fleet.Inference, fleet.FineTuning, fleet.Development, fleet.Batch, fleet.HPO, ""}
	providers := []fleet.Provider{fleet.AWS, fleet.Azure, fleet.GCP}
	items := make([]Item, n)
	for i := range items {
		tags := map[string]string{}
		for range rng.Intn(8) {
			tags[keys[rng.Intn(len(keys))]] = values[rng.Intn(len(values))]
		}
		var w *fleet.Workload
		if rng.Intn(3) > 0 {
			w = &fleet.Workload{Type: types[rng.Intn(len(types))]}
			if rng.Intn(2) == 0 {
				w.Model = []string{"llama-3-8b", "mixtral"}[rng.Intn(2)]
			}
		}
		cost := []string{"", "0", "123.45", "9999.99"}[rng.Intn(4)]
		items[i] = item(fmt.Sprintf("i-%d", i), providers[rng.Intn(len(providers))], tags, w, cost)
	}
	return items
}

// BenchmarkAuditTags audits 10,000 random items with the default policy.
func BenchmarkAuditTags(b *testing.B) {
	items := randomItems(rand.New(rand.NewSource(1)), 10000)
	p := DefaultPolicy()
	b.ReportAllocs()
	for b.Loop() {
		AuditTags(items, p)
	}
}
