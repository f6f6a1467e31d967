package governance

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

func util(v float64) *float64 { return &v }

func money(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// handItems are the instances the metrics are computed by hand for.
func handItems() []Item {
	p4dHours := 60 * 730 / 168.0 // weekdays 08:00–20:00: 260.714 h a month
	train := func(id string, hours float64) Item {
		return Item{ID: id, Provider: fleet.AWS, GPUCount: 8, MonthlyHours: p4dHours, GPUUtilAvg: util(60), Priced: true,
			HourlyPrice: money("21.9576"), MonthlyCost: money("5724.67"), OptimizedCost: money("1896.19"),
			Tags:     map[string]string{"Team": "ml-research", "Project": "nlp"},
			Workload: &fleet.Workload{Type: fleet.Training, Model: "llama-3.1-8b", TrainingRun: "pretrain", TrainingRunHours: hours}}
	}
	return []Item{
		{ID: "infer", Provider: fleet.AWS, GPUCount: 1, MonthlyHours: 730, GPUUtilAvg: util(35), Priced: true,
			HourlyPrice: money("1.212"), MonthlyCost: money("884.76"), OptimizedCost: money("477.35"),
			Tags:     map[string]string{"Team": "ml-serving", "Project": "nlp", "Environment": "prod"},
			Workload: &fleet.Workload{Type: fleet.Inference, Model: "mistral-7b-instruct", TokensPerSecond: 300, RequestsPerSecond: 2}},
		train("train-1", 520),
		train("train-2", 0), // no hours of its own: the run's 520
		{ID: "idle-h100", Provider: fleet.Azure, GPUCount: 8, MonthlyHours: 730, GPUUtilAvg: util(0.4), Priced: true,
			HourlyPrice: money("98.32"), MonthlyCost: money("71773.60"), OptimizedCost: money("0"),
			Workload: &fleet.Workload{Type: fleet.Inference, Model: "llama-3.1-70b-instruct"}},
		{ID: "unpriced", Provider: fleet.GCP, GPUCount: 1, MonthlyHours: 730, GPUUtilAvg: util(50),
			Tags: map[string]string{"team": "ML-Serving", "TrainingRun": "ablation"}},
		{ID: "stopped", Provider: fleet.AWS, GPUCount: 1, MonthlyHours: 0, GPUUtilAvg: util(10), Priced: true,
			HourlyPrice: money("1.006"), MonthlyCost: money("0"), OptimizedCost: money("0"),
			Tags: map[string]string{"Team": "ml-serving", "Environment": "Production"}, Workload: &fleet.Workload{Type: fleet.Development}},
	}
}

func TestComputeMetricsByHand(t *testing.T) {
	m := ComputeMetrics(handItems())
	show := func(im InstanceMetrics) string {
		var b strings.Builder
		fmt.Fprintf(&b, "paid %v", im.PaidGPUHours)
		for _, f := range []struct {
			name string
			v    *float64
		}{{"busy", im.BusyGPUHours}, {"eff", im.EfficiencyPercent}, {"tokens", im.MonthlyOutputTokens}, {"requests", im.MonthlyRequests}} {
			if f.v != nil {
				fmt.Fprintf(&b, " %s %v", f.name, *f.v)
			}
		}
		for _, f := range []struct {
			name string
			v    *Money
		}{{"$/gpu-h", im.CostPerGPUHour}, {"$/busy-h", im.CostPerBusyGPUHour}} {
			if f.v != nil {
				fmt.Fprintf(&b, " %s %s", f.name, f.v.StringFixed(2))
			}
		}
		for _, f := range []struct {
			name string
			v    *UnitCost
		}{{"$/1M tokens", im.CostPerMillionTokens}, {"$/1k requests", im.CostPerThousandRequests}} {
			if f.v != nil {
				fmt.Fprintf(&b, " %s %s", f.name, f.v.StringFixed(4))
			}
		}
		return b.String()
	}
	got := map[string]string{}
	for _, im := range m.Instances {
		got[im.ResourceID] = show(im)
	}
	want := map[string]string{
		// 1 GPU × 730 h = 730 paid; 35 % of it busy = 255.5 h.
		// $884.76 / 730 = $1.21 per GPU-hour; / 255.5 = $3.46 per busy GPU-hour.
		// 300 tokens/s × 3600 × 730 = 788,400,000 tokens: $884.76 / 788.4 = $1.1222 per 1M.
		// 2 requests/s × 3600 × 730 = 5,256,000 requests: $884.76 / 5,256 = $0.1683 per 1,000.
		"infer": "paid 730 busy 255.5 eff 35 tokens 7.884e+08 requests 5.256e+06 $/gpu-h 1.21 $/busy-h 3.46 $/1M tokens 1.1222 $/1k requests 0.1683",
		// 8 GPUs × 260.714 h = 2085.71 paid; 60 % busy = 1251.43 h.
		// $5724.67 / 2085.71 = $2.74; / 1251.43 = $4.57.
		"train-1": "paid 2085.71 busy 1251.43 eff 60 $/gpu-h 2.74 $/busy-h 4.57",
		"train-2": "paid 2085.71 busy 1251.43 eff 60 $/gpu-h 2.74 $/busy-h 4.57",
		// 8 × 730 = 5840 paid; 0.4 % busy = 23.36 h: $71773.60 / 23.36 = $3072.50 per busy GPU-hour.
		"idle-h100": "paid 5840 busy 23.36 eff 0.4 $/gpu-h 12.29 $/busy-h 3072.50",
		// No price: hours and efficiency, no money.
		"unpriced": "paid 730 busy 365 eff 50",
		// Stopped: nothing paid, nothing to measure.
		"stopped": "paid 0",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("instance metrics (-want +got):\n%s", d)
	}

	f := m.Fleet
	// Paid: 730 + 2 × 2085.714 + 5840 + 730 = 11471.43; busy: 255.5 + 2 × 1251.429 + 23.36 + 365 = 3146.72.
	if f.PaidGPUHours != 11471.43 || f.MeasuredGPUHours != 11471.43 || f.BusyGPUHours != 3146.72 {
		t.Errorf("fleet hours: paid %v, measured %v, busy %v", f.PaidGPUHours, f.MeasuredGPUHours, f.BusyGPUHours)
	}
	// 3146.72 / 11471.43 = 27.4 %.
	if f.EfficiencyPercent == nil || *f.EfficiencyPercent != 27.4 {
		t.Errorf("fleet efficiency %v", f.EfficiencyPercent)
	}
	// Priced and measured: $884.76 + 2 × $5724.67 + $71773.60 = $84107.70 over
	// 255.5 + 2502.857 + 23.36 = 2781.717 busy GPU-hours = $30.24.
	if f.CostPerBusyGPUHour == nil || f.CostPerBusyGPUHour.StringFixed(2) != "30.24" {
		t.Errorf("fleet cost per busy GPU-hour %v", f.CostPerBusyGPUHour)
	}
	if f.CostPerMillionTokens == nil || f.CostPerMillionTokens.StringFixed(4) != "1.1222" ||
		f.CostPerThousandRequests == nil || f.CostPerThousandRequests.StringFixed(4) != "0.1683" {
		t.Errorf("fleet per-token %v, per-request %v", f.CostPerMillionTokens, f.CostPerThousandRequests)
	}
	if f.MonthlyOutputTokens != 788400000 || f.MonthlyRequests != 5256000 {
		t.Errorf("fleet tokens %v, requests %v", f.MonthlyOutputTokens, f.MonthlyRequests)
	}

	// Runs, by id: "ablation" (from a GCP label, unpriced) and "pretrain".
	if len(m.TrainingRuns) != 2 {
		t.Fatalf("%d runs: %+v", len(m.TrainingRuns), m.TrainingRuns)
	}
	ab, pre := m.TrainingRuns[0], m.TrainingRuns[1]
	if ab.ID != "ablation" || ab.Priced || ab.RunCost != nil || ab.ExpectedHours != nil || ab.MonthlyCost.String() != "0" {
		t.Errorf("ablation run: %+v", ab)
	}
	// 2 × $5724.67 a month; the run: 2 × $21.9576 × 520 h = $22835.90.
	if pre.ID != "pretrain" || !pre.Priced || pre.GPUCount != 16 || pre.MonthlyCost.StringFixed(2) != "11449.34" ||
		pre.ExpectedHours == nil || *pre.ExpectedHours != 520 || pre.RunCost == nil || pre.RunCost.StringFixed(2) != "22835.90" {
		t.Errorf("pretrain run: %+v", pre)
	}
	if d := cmp.Diff([]string{"train-1", "train-2"}, pre.Instances); d != "" {
		t.Errorf("run instances (-want +got):\n%s", d)
	}
}

func TestComputeMetricsPerInstanceRunHours(t *testing.T) {
	// Each instance prices its own hours; one without hours takes the longest.
	items := []Item{
		{ID: "a", Priced: true, HourlyPrice: money("2"), MonthlyHours: 730, MonthlyCost: money("1460"), Workload: &fleet.Workload{Type: fleet.Training, TrainingRun: "r", TrainingRunHours: 100}},
		{ID: "b", Priced: true, HourlyPrice: money("3"), MonthlyHours: 730, MonthlyCost: money("2190"), Workload: &fleet.Workload{Type: fleet.Training, TrainingRun: "r", TrainingRunHours: 50}},
		// No hourly price: monthly cost / billed hours = $1 an hour.
		{ID: "c", Priced: true, MonthlyHours: 730, MonthlyCost: money("730"), Workload: &fleet.Workload{Type: fleet.Training, TrainingRun: "r"}},
	}
	run := ComputeMetrics(items).TrainingRuns[0]
	// 2 × 100 + 3 × 50 + 1 × 100 = 450.
	if run.RunCost == nil || run.RunCost.StringFixed(2) != "450.00" || *run.ExpectedHours != 100 {
		t.Errorf("%+v", run)
	}
}

func TestComputeMetricsEmpty(t *testing.T) {
	m := ComputeMetrics(nil)
	if m.Fleet.EfficiencyPercent != nil || m.Fleet.CostPerBusyGPUHour != nil || m.Fleet.CostPerMillionTokens != nil || m.Instances == nil || m.TrainingRuns == nil {
		t.Errorf("%+v", m)
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"fleet":{"paidGpuHours":0,"measuredGpuHours":0,"busyGpuHours":0,"monthlyOutputTokens":0,"monthlyRequests":0},"instances":[],"trainingRuns":[]}` {
		t.Errorf("%s", b)
	}
}

func TestAllocateSumsExactly(t *testing.T) {
	items := handItems()
	// Costs that do not add up in binary floating point.
	for i, c := range []string{"0.10", "0.20", "0.30", "1234567.89", "0.01", "999.99"} {
		if i < len(items) && items[i].Priced {
			items[i].MonthlyCost = money(c)
			items[i].OptimizedCost = money(c).Div(decimal.NewFromInt(3)).Round(2)
		}
	}
	a := Allocate(items, DefaultPolicy())
	cur, opt := decimal.Zero, decimal.Zero
	for _, it := range items {
		if it.Priced {
			cur, opt = cur.Add(it.MonthlyCost), opt.Add(it.OptimizedCost)
		}
	}
	if !a.MonthlyCost.Equal(cur) || !a.OptimizedMonthlyCost.Equal(opt) {
		t.Errorf("totals %s / %s, want %s / %s", a.MonthlyCost, a.OptimizedMonthlyCost, cur, opt)
	}
	for name, buckets := range map[string][]Bucket{"team": a.ByTeam, "project": a.ByProject, "workload": a.ByWorkloadType, "environment": a.ByEnvironment, "provider": a.ByProvider} {
		c, o, n := decimal.Zero, decimal.Zero, 0
		for _, b := range buckets {
			c, o, n = c.Add(b.MonthlyCost.Decimal), o.Add(b.OptimizedMonthlyCost.Decimal), n+b.Instances
		}
		if !c.Equal(a.MonthlyCost.Decimal) || !o.Equal(a.OptimizedMonthlyCost.Decimal) || n != len(items) {
			t.Errorf("by %s: buckets sum to %s / %s over %d instances; totals %s / %s over %d", name, c, o, n, a.MonthlyCost, a.OptimizedMonthlyCost, len(items))
		}
	}
}

func TestAllocateBuckets(t *testing.T) {
	a := Allocate(handItems(), DefaultPolicy())
	keys := func(bs []Bucket) string {
		var out []string
		for _, b := range bs {
			out = append(out, fmt.Sprintf("%s %d %s %s %v", b.Key, b.Instances, b.MonthlyCost.StringFixed(2), b.OptimizedMonthlyCost.StringFixed(2), b.SharePercent))
		}
		return strings.Join(out, "; ")
	}
	// Shares are of the fleet's $84,107.70: 11449.34 / 84107.70 = 13.6 %.
	for _, tc := range []struct {
		name    string
		buckets []Bucket
		want    string
	}{
		// "ML-Serving" (GCP label key "team") and "ml-serving" are one team; the
		// idle H100 has no tags and is (untagged), last despite its cost.
		{"team", a.ByTeam, "ml-research 2 11449.34 3792.38 13.6; ML-Serving 3 884.76 477.35 1.1; (untagged) 1 71773.60 0.00 85.3"},
		{"project", a.ByProject, "nlp 3 12334.10 4269.73 14.7; (untagged) 3 71773.60 0.00 85.3"},
		// The tag where allowed, else the fleet's workload type: "Inference"
		// covers the tagless H100 and the endpoint; the unpriced VM says nothing.
		{"workload", a.ByWorkloadType, "Inference 2 72658.36 477.35 86.4; Training 2 11449.34 3792.38 13.6; Development 1 0.00 0.00 0; (untagged) 1 0.00 0.00 0"},
		// "prod" is not an allowed value and stays as written.
		{"environment", a.ByEnvironment, "prod 1 884.76 477.35 1.1; Production 1 0.00 0.00 0; (untagged) 4 83222.94 3792.38 98.9"},
		{"provider", a.ByProvider, "azure 1 71773.60 0.00 85.3; aws 4 12334.10 4269.73 14.7; gcp 1 0.00 0.00 0"},
	} {
		if got := keys(tc.buckets); got != tc.want {
			t.Errorf("by %s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
}

func TestAttribute(t *testing.T) {
	p := DefaultPolicy()
	for _, tc := range []struct {
		it   Item
		want Attribution
	}{
		{Item{Tags: map[string]string{"team": "a", "PROJECT": "b", "environment": "staging", "WorkloadType": "HPO"}, Workload: &fleet.Workload{Type: fleet.HPO}},
			Attribution{Team: "a", Project: "b", Environment: "Staging", WorkloadType: "Training"}},
		{Item{Tags: map[string]string{"WorkloadType": "HPO", "Environment": "research"}},
			Attribution{WorkloadType: "HPO", Environment: "research"}},
		{Item{Workload: &fleet.Workload{Type: fleet.Batch}}, Attribution{WorkloadType: "Inference"}},
		{Item{}, Attribution{}},
	} {
		if got := Attribute(tc.it, p); got != tc.want {
			t.Errorf("Attribute(%v) = %+v, want %+v", tc.it.Tags, got, tc.want)
		}
	}
}

func TestMoneyJSON(t *testing.T) {
	b, err := json.Marshal(struct {
		M Money     `json:"m"`
		U *UnitCost `json:"u"`
		Z Money     `json:"z"`
	}{NewMoney(money("1234.5")), &UnitCost{money("0.1")}, Money{}})
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"m":1234.50,"u":0.1000,"z":0.00}` {
		t.Errorf("%s", b)
	}
	var back struct {
		M Money    `json:"m"`
		U UnitCost `json:"u"`
	}
	if err := json.Unmarshal([]byte(`{"m":12.345,"u":0.123456}`), &back); err != nil {
		t.Fatal(err)
	}
	if back.M.StringFixed(2) != "12.35" || back.U.StringFixed(4) != "0.1235" {
		t.Errorf("%+v", back)
	}
	if err := json.Unmarshal([]byte(`{"m":"x"}`), &back); err == nil || !strings.Contains(err.Error(), `governance: "x" is not an amount`) {
		t.Errorf("err %v", err)
	}
}

func TestDollars(t *testing.T) {
	for in, want := range map[string]string{"0": "$0.00", "5": "$5.00", "884.755": "$884.76", "71773.6": "$71,773.60", "1234567.891": "$1,234,567.89", "-1000": "-$1,000.00"} {
		if got := Dollars(money(in)); got != want {
			t.Errorf("Dollars(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestBuild(t *testing.T) {
	items := handItems()
	r := Build(items, DefaultPolicy())
	if r.Audit.InstanceCount != len(items) || len(r.Metrics.Instances) != len(items) || !r.Allocation.MonthlyCost.Equal(r.Audit.MonthlyCost.Decimal) {
		t.Errorf("%+v", r)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"audit":{`, `"allocation":{`, `"metrics":{`, `"nonCompliantMonthlyCost":`, `"byTeam":[`, `"costPerMillionTokens":1.1222`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("JSON lacks %s", key)
		}
	}
}

// TestPercentOfIsDiv: percentOf has Div's value for products of
// utilizations and paid GPU-hours, floats with up to 17 digits included,
// so every quotient that divides by it is Div's.
func TestPercentOfIsDiv(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 100000 {
		u := float64(r.IntN(1001)) / 10
		switch i % 4 {
		case 1:
			u = r.Float64() * 100
		case 2:
			u = float64(r.IntN(100001)) / 1000
		}
		paid := dec(float64(1 + r.IntN(16))).Mul(dec(float64(r.IntN(7301)) / 10))
		p := dec(u).Mul(paid)
		if got, want := percentOf(p), p.Div(hundred); !got.Equal(want) {
			t.Fatalf("percentOf(%v) = %v, Div %v", p, got, want)
		}
		cost := decimal.New(r.Int64N(1e9), -2)
		if want := p.Div(hundred); !want.IsZero() {
			if got, want := cost.Div(percentOf(p)), cost.Div(want); !got.Equal(want) {
				t.Fatalf("%v / percentOf(%v) = %v, / Div %v", cost, p, got, want)
			}
		}
	}
}
