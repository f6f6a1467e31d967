package governance

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"
)

// amounts are costs that test exact cents: sums that do not add up in
// binary, more decimals than cents, half-cent ties either way, negatives,
// and magnitudes at and past what an int64 of cents holds.
var amounts = []string{
	"0", "0.00", "0.01", "0.10", "0.20", "0.30", "5", "884.76", "884.755", "884.745", "-884.755", "2.675", "-0.005", "0.004999",
	"1234567.891", "71773.6", "999.99", "3.14159265358979323846", "-12.5", "1e3", "92233720368547758.07", "92233720368547758.08",
	"-92233720368547758.08", "-92233720368547758.09", "46116860184273879.04", "123456789012345678901234567890.125", "-1e25",
}

// hardFloats are the fleet figures (GPUs, hours, utilization, throughput)
// the metrics multiply and divide.
var hardFloats = []float64{0, 0.1, 0.5, 1, 2, 3, 8, 12.5, 35, 37.249999999999993, 60, 99.99, 100, 260.71428571428572, 730, 1e-7, 123456.789, 1.0000000000000002}

func randomFloat(rng *rand.Rand) float64 {
	if rng.Intn(3) == 0 {
		return math.Round(rng.Float64()*1000) / 10
	}
	return hardFloats[rng.Intn(len(hardFloats))]
}

func randomAmount(rng *rand.Rand) decimal.Decimal {
	if rng.Intn(4) == 0 {
		return decimal.New(rng.Int63n(2_000_000)-1000, -int32(rng.Intn(5)))
	}
	return decimal.RequireFromString(amounts[rng.Intn(len(amounts))])
}

// buildItems are randomItems with random costs, figures, workloads, runs
// and the tags allocation and the metrics read.
func buildItems(rng *rand.Rand, n int) []Item {
	items := randomItems(rng, n)
	teams := []string{"ml", "ML", "Ml", "search", " ads ", "", "Search"}
	runs := []string{"", "pretrain", "ablation", " sweep "}
	for i := range items {
		it := &items[i]
		if rng.Intn(4) == 0 {
			it.ID = fmt.Sprintf("i-%d", rng.Intn(n/2+1)) // ids repeat: ties fall to item order
		}
		tags := map[string]string{}
		for k, v := range it.Tags {
			tags[k] = v
		}
		for _, k := range []string{"Team", "team", "project", "Project", "TrainingRun", "training_run", "ModelName"} {
			if rng.Intn(4) == 0 {
				if strings.Contains(strings.ToLower(k), "run") {
					tags[k] = runs[rng.Intn(len(runs))]
				} else {
					tags[k] = teams[rng.Intn(len(teams))]
				}
			}
		}
		it.Tags = tags
		it.Priced = rng.Intn(5) > 0
		it.MonthlyCost, it.OptimizedCost, it.HourlyPrice = randomAmount(rng), randomAmount(rng), decimal.Zero
		if rng.Intn(2) == 0 {
			it.HourlyPrice = randomAmount(rng)
		}
		it.GPUCount, it.MonthlyHours = randomFloat(rng), randomFloat(rng)
		if rng.Intn(4) > 0 {
			u := randomFloat(rng)
			it.GPUUtilAvg = &u
		}
		if it.Workload != nil {
			w := *it.Workload
			if rng.Intn(2) == 0 {
				w.TokensPerSecond = randomFloat(rng)
			}
			if rng.Intn(2) == 0 {
				w.RequestsPerSecond = randomFloat(rng)
			}
			if rng.Intn(3) == 0 {
				w.TrainingRun, w.TrainingRunHours = runs[rng.Intn(len(runs))], randomFloat(rng)
			}
			it.Workload = &w
		}
	}
	return items
}

// customPolicy spells its keys unlike the default, restricts a tag it does
// not require and requires ModelName of development boxes.
func customPolicy() Policy {
	return Policy{
		RequiredTags:       []string{"team", "Owner", "project"},
		AllowedValues:      []AllowedValues{{Tag: "Environment", Values: []string{"prod", "dev"}}, {Tag: "owner", Values: []string{"a", "x"}}, {Tag: "Team", Values: []string{"ML", "search"}}},
		ModelNameWorkloads: []string{"Development"},
	}
}

// handed is what a BuildEach callback saw of one instance.
type handed struct {
	ID, Action string
	Violations int
}

// compareBuild builds items both ways, trimming what each hands over when
// trim is set, and fails on any difference in the report, its JSON or what
// was handed over.
func compareBuild(t *testing.T, items []Item, p Policy, trim bool) {
	t.Helper()
	run := func(build func([]Item, Policy, func(*InstanceViolations)) Report) (Report, []handed) {
		var seen []handed
		r := build(items, p, func(iv *InstanceViolations) {
			seen = append(seen, handed{iv.ResourceID, iv.Action, len(iv.Violations)})
			if trim {
				iv.Violations, iv.Action = nil, ""
			}
		})
		return r, seen
	}
	want, wantSeen := run(refBuildEach)
	got, gotSeen := run(BuildEach)
	if d := cmp.Diff(wantSeen, gotSeen); d != "" {
		t.Fatalf("handed over (-reference +builders):\n%s", d)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("report (-reference +builders):\n%s", d)
	}
	wj, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	gj, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	if string(wj) != string(gj) {
		t.Fatalf("JSON differs:\n reference %s\n builders  %s", wj, gj)
	}
	for name, part := range map[string][2]any{
		"audit":      {refAuditTagsEach(items, p, nil), AuditTags(items, p)},
		"allocation": {refAllocate(items, p), Allocate(items, p)},
		"metrics":    {refComputeMetrics(items), ComputeMetrics(items)},
	} {
		if d := cmp.Diff(part[0], part[1]); d != "" {
			t.Fatalf("%s alone (-reference +builder):\n%s", name, d)
		}
	}
}

// TestBuildIsReference: over random fleets, with both policies and with the
// callback trimming or not, BuildEach and its parts give what the
// item-by-item decimal reference gives.
func TestBuildIsReference(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for round := range 20 {
		items := buildItems(rng, 1+rng.Intn(300))
		for _, p := range []Policy{DefaultPolicy(), customPolicy()} {
			compareBuild(t, items, p, round%2 == 0)
		}
	}
	compareBuild(t, nil, DefaultPolicy(), false)
}

// TestBuildIsReferenceBounded: the same with the memos' bounds so low that
// they are emptied (and the metrics' sums flushed) item after item.
func TestBuildIsReferenceBounded(t *testing.T) {
	defer func(f, a int) { maxFigures, maxActions = f, a }(maxFigures, maxActions)
	maxFigures, maxActions = 2, 2
	rng := rand.New(rand.NewSource(8))
	for round := range 6 {
		compareBuild(t, buildItems(rng, 1+rng.Intn(300)), DefaultPolicy(), round%2 == 0)
	}
}

// FuzzBuildIsReference: a few random items whose costs and figures the
// fuzzer chooses give the reference's report.
func FuzzBuildIsReference(f *testing.F) {
	f.Add(int64(1), "884.755", "-0.005", 35.0, 730.0)
	f.Add(int64(2), "92233720368547758.07", "0.01", 37.249999999999993, 0.1)
	f.Add(int64(3), "-92233720368547758.08", "-92233720368547758.08", 0.0, 0.0)
	f.Add(int64(4), "1e40", "2.675", 100.0, 1e-9)
	f.Fuzz(func(t *testing.T, seed int64, a, b string, u, hours float64) {
		da, errA := decimal.NewFromString(a)
		db, errB := decimal.NewFromString(b)
		if errA != nil || errB != nil || len(a) > 60 || len(b) > 60 || math.IsNaN(u) || math.IsInf(u, 0) || math.IsNaN(hours) || math.IsInf(hours, 0) {
			t.Skip()
		}
		if e := da.Exponent(); e < -40 || e > 40 {
			t.Skip()
		}
		if e := db.Exponent(); e < -40 || e > 40 {
			t.Skip()
		}
		rng := rand.New(rand.NewSource(seed))
		items := buildItems(rng, 12)
		for i := range items {
			if i%2 == 0 {
				items[i].MonthlyCost, items[i].OptimizedCost = da, db
			} else {
				items[i].MonthlyCost, items[i].OptimizedCost = db, da
			}
			if i%3 == 0 {
				items[i].GPUUtilAvg, items[i].MonthlyHours = &u, hours
			}
		}
		compareBuild(t, items, DefaultPolicy(), seed%2 == 0)
	})
}
