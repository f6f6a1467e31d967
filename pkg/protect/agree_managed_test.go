package protect_test

import (
	"math/rand"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/idlestop"
	"github.com/gpufinops/gpufinops/pkg/recommend"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
)

// managedEngineLanded turns on the agreement on managed items other than
// notebooks, which waits for the engine's managed rules (issue 35): set it
// when they are merged.
const managedEngineLanded = true

// serviceOf is the managed service of each cloud.
var serviceOf = map[fleet.Provider]fleet.ManagedService{fleet.AWS: fleet.SageMaker, fleet.GCP: fleet.VertexAI, fleet.Azure: fleet.AzureML}

// ownerOf is the owner kind each service is (the clouds' owner tag rules,
// registered by the adapters, give the same from the tags).
var ownerOf = map[fleet.ManagedService]fleet.OwnerKind{fleet.SageMaker: fleet.OwnerSageMaker, fleet.VertexAI: fleet.OwnerVertexAI, fleet.AzureML: fleet.OwnerAzureML}

// managedFleet is randomFleet with some machines made managed items: most
// notebooks (half of them owned by their own service), the rest of another
// kind.
func managedFleet(rng *rand.Rand, now time.Time) *fleet.Fleet {
	f := randomFleet(rng, now)
	for i := range f.Instances {
		in := &f.Instances[i]
		if rng.Intn(3) == 0 {
			continue
		}
		svc := serviceOf[in.Provider]
		kind := fleet.KindNotebook
		if rng.Intn(3) == 0 {
			kind = fleet.ManagedKinds[rng.Intn(len(fleet.ManagedKinds))]
		}
		in.Managed = &fleet.Managed{Service: svc, Kind: kind, Replicas: &fleet.Replicas{Current: 1}}
		in.StoppedAllocated, in.Lifecycle, in.SpotInterruption = false, fleet.OnDemand, ""
		if rng.Intn(2) == 0 {
			in.ManagedBy = &fleet.ManagedBy{Kind: ownerOf[svc], Name: "own"}
		}
	}
	return f
}

// TestAnalyzeAndIdleStopAgreeOnManaged: over random fleets of VMs and
// managed items, idle-stop stops a managed notebook exactly when analyze
// counts a stop saving for it, its own service as its owner protecting it
// in neither; no other managed kind is ever stopped by idle-stop, and (with
// the engine's managed rules) analyze never counts a VM-style stop for one.
func TestAnalyzeAndIdleStopAgreeOnManaged(t *testing.T) {
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	isp := idlestop.DefaultPolicy()
	pp := isp.Protection()
	rp := recommend.DefaultPolicy()
	seeds := 300
	if testing.Short() {
		seeds = 50
	}
	notebookStops, ownTagged, others := 0, 0, 0
	var disagree []string
	for seed := range seeds {
		rng := rand.New(rand.NewSource(int64(1000 + seed)))
		f := managedFleet(rng, now)
		if err := pricing.Complete(f, cat); err != nil {
			t.Fatal(err)
		}
		var cands []idlestop.Candidate
		kinds := map[string]*fleet.Managed{}
		own := map[string]bool{}
		for _, in := range f.Instances {
			cands = append(cands, idlestop.Candidate{Instance: in})
			kinds[in.ID] = in.Managed
			own[in.ID] = in.ManagedBy != nil && in.ManagedBy.Name == "own"
		}
		ds := idlestop.Decide(cands, now, isp)
		plan := recommend.RunWith(f, cat, rp, recommend.Options{Protection: &pp})
		counted := map[string]bool{}
		for _, r := range plan.Recommendations {
			if r.Kind == recommend.KindIdleStop && (r.ShortAction == "stop" || r.ShortAction == "deallocate") && r.MonthlySavings.IsPositive() {
				counted[r.ResourceID] = true
			}
		}
		for _, d := range ds {
			m := kinds[d.ResourceID]
			stop := d.Decision == idlestop.Stop
			switch {
			case m == nil:
				continue // VMs: TestAnalyzeAndIdleStopAgree
			case m.Kind == fleet.KindNotebook:
				if stop != counted[d.ResourceID] {
					t.Fatalf("seed %d %s (%s notebook): idle-stop %s (%s: %s), analyze counts a stop %v\ntags %v",
						seed, d.ResourceID, m.Service, d.Decision, d.Reason, d.Message, counted[d.ResourceID], d.Tags)
				}
				if stop {
					notebookStops++
					if own[d.ResourceID] {
						ownTagged++
					}
				}
			default:
				others++
				if stop {
					t.Fatalf("seed %d %s: idle-stop stops a %s", seed, d.ResourceID, m.Kind)
				}
				if counted[d.ResourceID] {
					disagree = append(disagree, d.ResourceID+" ("+string(m.Kind)+")")
				}
			}
		}
	}
	if notebookStops < seeds/4 || ownTagged < seeds/10 || others < seeds/4 {
		t.Errorf("the fleets exercise too little: %d notebook stops (%d owned by their own service), %d other managed items over %d fleets", notebookStops, ownTagged, others, seeds)
	}
	t.Logf("%d notebook stops (%d owned by their own service), %d other managed items; analyze counts a stop for %d of those", notebookStops, ownTagged, others, len(disagree))
	t.Run("analyze never counts a stop for another kind", func(t *testing.T) {
		if len(disagree) == 0 {
			return
		}
		if !managedEngineLanded {
			t.Skipf("waits for the engine's managed rules (issue 35), set managedEngineLanded: analyze counts a VM-style stop saving for %d managed items idle-stop never stops, e.g. %s", len(disagree), disagree[0])
		}
		t.Errorf("analyze counts a stop saving for %d managed items idle-stop never stops, e.g. %s", len(disagree), disagree[0])
	})
}
