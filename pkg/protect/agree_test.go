package protect_test

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/idlestop"
	"github.com/gpufinops/gpufinops/pkg/protect"
	"github.com/gpufinops/gpufinops/pkg/recommend"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
)

// The tags a random machine draws from: every protection class in several
// spellings, their negations, and neutral tags.
var tagPool = []map[string]string{
	{"DoNotStop": "true"}, {"do_not_stop": "false"}, {"keep-running": "yes"}, {"shutdown-exempt": ""},
	{"auto-shutdown": "disabled"}, {"AutoShutdown": "true"}, {"auto-stop": "maybe"}, {"auto_stop": "on"},
	{"Environment": "prod"}, {"env": "dev"}, {"deployment": "production"}, {"stage": "staging"}, {"Environment": "whatever"},
	{"role": "serving"}, {"stack": "vllm"}, {"app": "notebook"},
	{"Team": "ml"}, {"CostCenter": "42"},
	{"job": "pretrain-1"}, {"ray-cluster": "rc"}, {"placement_group": "pg-a"},
	{"eks:nodegroup-name": "ng"}, {"slurm-cluster-name": "hpc"}, {"goog-batch-job-uid": "b"},
}

var types = []struct {
	p    fleet.Provider
	name string
	gpus int
}{
	{fleet.AWS, "g5.xlarge", 1}, {fleet.AWS, "g5.12xlarge", 4},
	{fleet.GCP, "g2-standard-8", 1}, {fleet.GCP, "a2-highgpu-4g", 4},
	{fleet.Azure, "Standard_NC4as_T4_v3", 1}, {fleet.Azure, "Standard_NC64as_T4_v3", 4},
}

var regions = map[fleet.Provider]string{fleet.AWS: "us-east-1", fleet.GCP: "us-central1", fleet.Azure: "eastus"}

func randomFleet(rng *rand.Rand, now time.Time) *fleet.Fleet {
	f := &fleet.Fleet{APIVersion: "gpufinops/v1", Kind: "Fleet"}
	n := 1 + rng.Intn(12)
	launch := now.Add(-10 * 24 * time.Hour)
	start := now.Add(-30 * time.Minute)
	for i := range n {
		t := types[rng.Intn(len(types))]
		price := decimal.NewFromFloat(0.5 + float64(rng.Intn(400))/100)
		in := fleet.Instance{
			ID: fmt.Sprintf("m-%d", i), Provider: t.p, Region: regions[t.p], InstanceType: t.name,
			Lifecycle: fleet.OnDemand, State: fleet.Running, LaunchTime: &launch, HourlyPrice: &price,
			Tags: map[string]string{},
		}
		if rng.Intn(6) == 0 {
			in.Lifecycle = fleet.Spot
			in.SpotInterruption = []fleet.SpotInterruption{"", fleet.SpotDeallocate, fleet.SpotStop, fleet.SpotDelete, fleet.SpotTerminate, "hibernate"}[rng.Intn(6)]
		}
		for range rng.Intn(3) {
			for k, v := range tagPool[rng.Intn(len(tagPool))] {
				in.Tags[k] = v
			}
		}
		switch rng.Intn(8) {
		case 0:
			in.Workload = &fleet.Workload{Type: fleet.Inference}
		case 1:
			in.Workload = &fleet.Workload{Type: fleet.Training, TrainingRun: "run-1"}
		}
		busy, partial := rng.Intn(4) == 0, rng.Intn(7) == 0
		mem, cpu := 5.0, 10.0
		if rng.Intn(6) == 0 {
			mem = 50
		}
		if rng.Intn(7) == 0 {
			cpu = 60
		}
		u := &fleet.Utilization{Window: &fleet.TimeRange{Start: start, End: now}}
		for m := range 30 {
			k := t.gpus
			if partial && t.gpus > 1 {
				k = t.gpus / 2
			}
			s := fleet.Sample{Time: start.Add(time.Duration(m) * time.Minute), CPU: &cpu}
			for range k {
				v := float64(rng.Intn(10))
				if busy && m == 17 {
					v = 40
				}
				s.GPU = append(s.GPU, v)
				s.GPUMemory = append(s.GPUMemory, mem)
			}
			u.Samples = append(u.Samples, s)
		}
		if rng.Intn(12) != 0 {
			in.Utilization = u
		}
		if t.p == fleet.Azure && rng.Intn(4) == 0 {
			in.StoppedAllocated = true // powered off, still billed: no metrics needed
			if rng.Intn(2) == 0 {
				in.Utilization = nil
			}
		}
		if rng.Intn(2) == 0 { // the cloud's placement constructs, several spellings
			in.PlacementGroups = [][]string{{"hpc-pg"}, {"HPC-PG"}, {" hpc-pg"}, {"other-pg"}, {"projects/p/regions/r/resourcePolicies/nightly", "hpc-pg"}, {""}}[rng.Intn(6)]
			in.Account = []string{"", "", "acct-2"}[rng.Intn(3)]
		}
		if rng.Intn(5) == 0 {
			in.InstanceStoreGB = float64(100 * (1 + rng.Intn(8)))
		}
		f.Instances = append(f.Instances, in)
	}
	return f
}

// TestAnalyzeAndIdleStopAgree runs idle-stop's decision and analyze's plan
// over random fleets (every protection class in several spellings, partial
// GPUs, memory held, busy CPUs, spot, inference, multi-host groups by tag
// and by placement group,
// machines without metrics) on the same half hour of data, and checks that
// they never disagree: idle-stop stops a machine exactly when analyze
// counts a stop saving for it; and where idle-stop protects an idle machine,
// analyze's advice is protected for the same reason and saves nothing
// (with --include-protected it is counted).
func TestAnalyzeAndIdleStopAgree(t *testing.T) {
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	isp := idlestop.DefaultPolicy()
	pp := isp.Protection()
	rp := recommend.DefaultPolicy()
	seeds := 400
	if testing.Short() {
		seeds = 60
	}
	stops, protected, placement := 0, 0, 0
	for seed := range seeds {
		rng := rand.New(rand.NewSource(int64(seed)))
		f := randomFleet(rng, now)
		if err := pricing.Complete(f, cat); err != nil {
			t.Fatal(err)
		}
		var cands []idlestop.Candidate
		for _, in := range f.Instances {
			cands = append(cands, idlestop.Candidate{Instance: in})
		}
		ds := idlestop.Decide(cands, now, isp)
		for _, include := range []bool{false, true} {
			plan := recommend.RunWith(f, cat, rp, recommend.Options{Protection: &pp, IncludeProtected: include})
			recs := map[string]recommend.Recommendation{}
			for _, r := range plan.Recommendations {
				if r.Kind == recommend.KindIdleStop {
					recs[r.ResourceID] = r
				}
			}
			for _, d := range ds {
				r, ok := recs[d.ResourceID]
				counted := ok && (r.ShortAction == "stop" || r.ShortAction == "deallocate") && r.MonthlySavings.IsPositive()
				if !include && (d.Decision == idlestop.Stop) != counted {
					t.Fatalf("seed %d %s: idle-stop %s (%s: %s), analyze counts a stop %v (%q, saving %s, protected %+v)\ntags %v",
						seed, d.ResourceID, d.Decision, d.Reason, d.Message, counted, r.ShortAction, r.MonthlySavings, r.Protected, d.Tags)
				}
				if !isProtection(d.Reason) || !ok {
					continue
				}
				if r.Protected == nil || r.Protected.Reason != string(d.Reason) {
					t.Fatalf("seed %d %s: idle-stop protects it (%s: %s), analyze %q protected %+v", seed, d.ResourceID, d.Reason, d.Message, r.ShortAction, r.Protected)
				}
				if r.Protected.Counted != include || r.MonthlySavings.IsPositive() != include {
					t.Fatalf("seed %d %s: include-protected %v, saving %s, counted %v", seed, d.ResourceID, include, r.MonthlySavings, r.Protected.Counted)
				}
				if !include {
					protected++
				}
			}
		}
		for _, d := range ds {
			if d.Decision == idlestop.Stop {
				stops++
			}
			if protect.Reason(d.Reason) == protect.ReasonMultiHost && strings.Contains(d.Message, "placement=") {
				placement++
			}
		}
	}
	if stops < seeds/4 || protected < seeds/4 || placement < seeds/20 {
		t.Errorf("the fleets exercise too little: %d stops, %d protected advice, %d kept by a placement group over %d fleets", stops, protected, placement, seeds)
	}
}

func isProtection(r idlestop.Reason) bool {
	switch protect.Reason(r) {
	case protect.ReasonExempt, protect.ReasonOptedOut, protect.ReasonProduction, protect.ReasonSpot, protect.ReasonInference,
		protect.ReasonGPUMemoryHeld, protect.ReasonCPUBusy, protect.ReasonMultiHost:
		return true
	}
	return false
}
