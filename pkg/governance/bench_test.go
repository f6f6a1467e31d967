package governance

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// fleetItems are n items shaped like a generated fleet's: a few lower-case
// tags (env, team, cost-center, owner, workload-pattern), each instance
// type's cost repeating, utilization to one decimal, a tenth of the
// workloads reporting tokens or naming a training run.
func fleetItems(rng *rand.Rand, n int) []Item {
	envs := []string{"staging", "production", "dev", "prod", "Production"}
	teams := []string{"search", "ads", "ml-platform", "research", "vision", "speech", "Search", "infra"}
	patterns := []string{"inference", "idle", "batch", "training", "notebook"}
	types := []fleet.WorkloadType{fleet.Training, fleet.Inference, fleet.FineTuning, fleet.Development, fleet.Batch}
	providers := []fleet.Provider{fleet.AWS, fleet.Azure, fleet.GCP}
	items := make([]Item, n)
	for i := range items {
		tags := map[string]string{"workload-pattern": patterns[rng.Intn(len(patterns))]}
		if rng.Intn(5) > 0 {
			tags["team"] = teams[rng.Intn(len(teams))]
		}
		if rng.Intn(3) > 0 {
			tags["env"] = envs[rng.Intn(len(envs))]
		}
		if rng.Intn(2) == 0 {
			tags["cost-center"] = fmt.Sprintf("cc-%03d", rng.Intn(20))
		}
		if rng.Intn(2) == 0 {
			tags["owner"] = fmt.Sprintf("user%d@example.com", rng.Intn(200))
		}
		typ := rng.Intn(300)
		gpus := []float64{1, 1, 4, 8}[typ%4]
		hours := []float64{730, 730, 730, 365, 0}[rng.Intn(5)]
		it := Item{
			ID: fmt.Sprintf("i-%07d", i), Provider: providers[rng.Intn(len(providers))], Account: "a", Region: "r", InstanceType: fmt.Sprintf("t%d", typ),
			Tags: tags, GPUCount: gpus, MonthlyHours: hours, Priced: rng.Intn(20) > 0,
			HourlyPrice: decimal.New(int64(typ)*1117, -4),
		}
		it.MonthlyCost = it.HourlyPrice.Mul(decimal.NewFromFloat(hours)).Round(2)
		it.OptimizedCost = it.MonthlyCost.Mul(decimal.NewFromInt(int64(rng.Intn(3)))).Div(decimal.NewFromInt(2)).Round(2)
		u := float64(rng.Intn(1001)) / 10
		it.GPUUtilAvg = &u
		if rng.Intn(10) > 0 {
			w := &fleet.Workload{Type: types[rng.Intn(len(types))]}
			if rng.Intn(2) == 0 {
				w.Model = fmt.Sprintf("model-%db", []int{7, 13, 70}[rng.Intn(3)])
			}
			if rng.Intn(10) == 0 {
				w.TokensPerSecond = float64(rng.Intn(2000))
			}
			if rng.Intn(10) == 0 {
				w.TrainingRun, w.TrainingRunHours = fmt.Sprintf("run-%d", rng.Intn(50)), float64(rng.Intn(1000))
			}
			it.Workload = w
		}
		items[i] = it
	}
	return items
}

// BenchmarkBuild builds the governance report of 20,000 fleet-like items,
// handing each instance's violations to a callback that trims them as the
// engine's does.
func BenchmarkBuild(b *testing.B) {
	items := fleetItems(rand.New(rand.NewSource(1)), 20000)
	p := DefaultPolicy()
	b.ReportAllocs()
	for b.Loop() {
		BuildEach(items, p, func(iv *InstanceViolations) { iv.Violations, iv.Action = nil, "" })
	}
}
