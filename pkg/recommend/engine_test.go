package recommend

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/internal/purchasetest"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/governance"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/pricingtest"
)

func f64(v float64) *float64 { return &v }
func yes() *bool             { b := true; return &b }
func no() *bool              { b := false; return &b }

var week = &fleet.TimeRange{
	Start: time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC),
	End:   time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC),
}

func testCatalog() *pricingtest.Catalog {
	c := &pricingtest.Catalog{}
	c.AddGPU(pricing.GPUSpec{Name: "A10G", Vendor: "nvidia", MemoryGiB: 24, MemoryBandwidthGBs: 600})
	c.AddGPU(pricing.GPUSpec{Name: "T4", Vendor: "nvidia", MemoryGiB: 16, MemoryBandwidthGBs: 320})
	c.AddGPU(pricing.GPUSpec{Name: "A100", Vendor: "nvidia", MemoryGiB: 40, MemoryBandwidthGBs: 1555})
	c.AddGPU(pricing.GPUSpec{Name: "Inferentia2", Vendor: "aws", MemoryGiB: 32, MemoryBandwidthGBs: 820})
	aws := func(name, gpu string, count, mem, vcpu, ram float64) pricing.InstanceType {
		return pricing.InstanceType{Provider: fleet.AWS, Name: name, GPUModel: gpu, GPUCount: count, GPUMemoryGiB: mem, VCPUs: vcpu, MemoryGiB: ram}
	}
	c.AddOffer(aws("g5.xlarge", "A10G", 1, 22.35, 4, 16), "us-east-1", "1.006", "0.4246")
	c.AddOffer(aws("g5.2xlarge", "A10G", 1, 22.35, 8, 32), "us-east-1", "1.212", "0.4738")
	c.AddOffer(aws("g4dn.xlarge", "T4", 1, 16, 4, 16), "us-east-1", "0.526", "0.2")
	c.AddOffer(aws("inf2.xlarge", "Inferentia2", 1, 32, 4, 16), "us-east-1", "0.7582", "0.1")
	c.AddOffer(aws("p4d.24xlarge", "A100", 8, 40, 96, 1152), "us-east-1", "21.957642", "2.4655")
	c.AddOffer(aws("g5.xlarge", "A10G", 1, 22.35, 4, 16), "eu-north-1", "1.1", "")
	// Flat test rates (35 % / 55 %) keep the hand-computed figures simple;
	// TestCommitmentRatesFromData uses the embedded catalog's real ones.
	for _, o := range c.List {
		c.AddCommitment(fleet.AWS, o.Region, o.Type.Name, pricing.ComputeSavingsPlan, "1y", 35)
		c.AddCommitment(fleet.AWS, o.Region, o.Type.Name, pricing.ComputeSavingsPlan, "3y", 55)
	}
	c.AddAdvice(fleet.AWS, "us-east-1", "p4d.24xlarge", pricing.SpotAdvice{SavingsPercent: 60, Band: ">20%", BandIndex: 4, MaxInterruptPercent: 100, Source: "AWS Spot Instance Advisor", AsOf: "2025-06-28"})
	c.AddAdvice(fleet.AWS, "us-east-1", "g5.xlarge", pricing.SpotAdvice{SavingsPercent: 59, Band: ">20%", BandIndex: 4, MaxInterruptPercent: 100, Source: "AWS Spot Instance Advisor", AsOf: "2025-06-28"})
	return c
}

func agg(gpu, gpuMem, cpu, mem fleet.Stats) *fleet.Utilization {
	return &fleet.Utilization{Window: week, GPU: &gpu, GPUMemory: &gpuMem, CPU: &cpu, Memory: &mem}
}

func inst(id, typ string, mods ...func(*fleet.Instance)) fleet.Instance {
	in := fleet.Instance{ID: id, Provider: fleet.AWS, Region: "us-east-1", InstanceType: typ, Lifecycle: fleet.OnDemand, State: fleet.Running,
		Tags: map[string]string{"Team": "ml", "Project": "p", "Environment": "Development", "WorkloadType": "Development", "CostCenter": "cc-1", "AutoShutdown": "true", "ModelName": "m"}}
	for _, m := range mods {
		m(&in)
	}
	if in.Workload != nil {
		in.Tags["WorkloadType"] = governance.WorkloadClass(in.Workload.Type)
	}
	return in
}

func withUtil(u *fleet.Utilization) func(*fleet.Instance) {
	return func(in *fleet.Instance) { in.Utilization = u }
}

func withWorkload(w fleet.WorkloadType, checkpoints *bool) func(*fleet.Instance) {
	return func(in *fleet.Instance) { in.Workload = &fleet.Workload{Type: w, Checkpoints: checkpoints} }
}

func perWeek(h float64) func(*fleet.Instance) {
	return func(in *fleet.Instance) { in.Usage.HoursPerWeek = &h }
}

var (
	busy    = fleet.Stats{Avg: 80, P95: 95, Max: 100}
	idle    = fleet.Stats{Avg: 0.5, P95: 1, Max: 3}
	memHigh = fleet.Stats{Avg: 60, P95: 70, Max: 80}
	hostLow = fleet.Stats{Avg: 10, P95: 17, Max: 30}
	hostMid = fleet.Stats{Avg: 40, P95: 60, Max: 80}
)

func run(t *testing.T, instances ...fleet.Instance) Plan {
	t.Helper()
	f := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind, Instances: instances}
	p := Run(f, testCatalog(), DefaultPolicy().WithPurchases(purchasetest.Purchases()))
	checkSums(t, p)
	return p
}

// checkSums asserts the summary equals the sum of its parts.
func checkSums(t *testing.T, p Plan) {
	t.Helper()
	var cur, sav, instSav decimal.Decimal
	for _, ic := range p.Instances {
		cur = cur.Add(ic.MonthlyCost)
		instSav = instSav.Add(ic.MonthlySavings)
		if !ic.MonthlyCost.Sub(ic.MonthlySavings).Equal(ic.OptimizedCost) {
			t.Errorf("%s: cost %s − savings %s ≠ optimized %s", ic.ResourceID, ic.MonthlyCost, ic.MonthlySavings, ic.OptimizedCost)
		}
	}
	byKind := map[Kind]decimal.Decimal{}
	for _, r := range p.Recommendations {
		sav = sav.Add(r.MonthlySavings)
		byKind[r.Kind] = byKind[r.Kind].Add(r.MonthlySavings)
		if !r.CurrentMonthly.Sub(r.ProjectedMonthly).Equal(r.MonthlySavings) {
			t.Errorf("%s: current − projected ≠ savings", r.ID)
		}
	}
	cur = cur.Add(p.Summary.UnusedCommitmentMonthly)
	if !cur.Equal(p.Summary.CurrentMonthly) || !sav.Equal(p.Summary.MonthlySavings) || !sav.Equal(instSav) {
		t.Errorf("summary current %s savings %s; parts: current %s, rec savings %s, instance savings %s",
			p.Summary.CurrentMonthly, p.Summary.MonthlySavings, cur, sav, instSav)
	}
	if !p.Summary.CurrentMonthly.Sub(p.Summary.MonthlySavings).Equal(p.Summary.OptimizedMonthly) {
		t.Errorf("optimized %s ≠ current − savings", p.Summary.OptimizedMonthly)
	}
	for k, v := range byKind {
		if !p.Summary.SavingsByKind[k].Equal(v) {
			t.Errorf("savingsByKind[%s] = %s, want %s", k, p.Summary.SavingsByKind[k], v)
		}
	}
}

type recWant struct {
	kind      Kind
	target    string
	current   string
	projected string
	risk      Level
}

func TestRules(t *testing.T) {
	tests := []struct {
		name     string
		in       fleet.Instance
		cost     string
		want     []recWant
		warnings []string
	}{
		{
			name:     "no metrics is never idle, only a warning",
			in:       inst("a", "g4dn.xlarge"),
			cost:     "383.98",
			warnings: []string{WarnNoUtilization},
		},
		{
			name: "stopped instance costs nothing and gets no advice",
			in:   inst("a", "g4dn.xlarge", withUtil(agg(idle, idle, idle, idle)), func(in *fleet.Instance) { in.State = fleet.Stopped }),
			cost: "0",
		},
		{
			name: "idle on aggregate stats is stopped",
			in:   inst("a", "g4dn.xlarge", withUtil(agg(idle, idle, idle, idle))),
			cost: "383.98",
			want: []recWant{{KindIdleStop, "stopped", "383.98", "0", Low}},
		},
		{
			name: "idle inference endpoint is protected, as idle-stop protects it: nothing saved, then committed",
			in:   inst("a", "g4dn.xlarge", withUtil(agg(idle, idle, idle, idle)), withWorkload(fleet.Inference, nil)),
			cost: "383.98",
			want: []recWant{{KindIdleStop, "stopped", "383.98", "383.98", High}, {KindCommitment, "1-year Compute Savings Plan", "383.98", "249.59", Low}},
		},
		{
			name:     "idle on a commitment is a warning, not a saving",
			in:       inst("a", "g4dn.xlarge", withUtil(agg(idle, idle, idle, idle)), func(in *fleet.Instance) { in.Lifecycle = fleet.Committed }),
			cost:     "249.59",
			warnings: []string{WarnCommitmentRateUnknown, WarnIdleCommitted},
		},
		{
			name: "committed at the fleet's own rate",
			in: inst("a", "g4dn.xlarge", withUtil(agg(idle, idle, idle, idle)), func(in *fleet.Instance) {
				r := decimal.RequireFromString("0.3")
				in.Lifecycle, in.Commitment = fleet.Committed, &fleet.Commitment{Kind: "standard-reserved-instance", Term: "3y", HourlyRate: &r}
			}),
			cost:     "219.00",
			warnings: []string{WarnIdleCommitted},
		},
		{
			name: "committed, no rate anywhere: on-demand, flagged",
			in: inst("a", "g4dn.xlarge", withUtil(agg(idle, idle, idle, idle)), func(in *fleet.Instance) {
				in.Lifecycle, in.Commitment = fleet.Committed, &fleet.Commitment{Kind: "reservation", Term: "5y"}
			}),
			cost:     "383.98",
			warnings: []string{WarnCommitmentRateUnknown, WarnIdleCommitted},
		},
		{
			name: "busy GPU, low host: smaller host, then a commitment on what is left",
			in:   inst("a", "g5.2xlarge", withUtil(agg(fleet.Stats{Avg: 35, P95: 46, Max: 71}, memHigh, hostLow, fleet.Stats{Avg: 21, P95: 25, Max: 31}))),
			cost: "884.76",
			want: []recWant{
				{KindRightsize, "g5.xlarge", "884.76", "734.38", Low},
				{KindCommitment, "1-year Compute Savings Plan", "734.38", "477.35", Low},
			},
		},
		{
			name: "low GPU and GPU memory: cheapest NVIDIA type that holds the peak",
			in:   inst("a", "g5.2xlarge", withUtil(agg(fleet.Stats{Avg: 10, P95: 20, Max: 40}, fleet.Stats{Avg: 20, P95: 30, Max: 35}, hostLow, hostLow))),
			cost: "884.76",
			want: []recWant{
				{KindRightsize, "g4dn.xlarge", "884.76", "383.98", Medium},
				{KindCommitment, "1-year Compute Savings Plan", "383.98", "249.59", Low},
			},
		},
		{
			name: "GPU memory peak too big for a T4: stays on the A10G but shrinks the host",
			in:   inst("a", "g5.2xlarge", withUtil(agg(fleet.Stats{Avg: 10, P95: 20, Max: 40}, fleet.Stats{Avg: 20, P95: 39, Max: 75}, hostLow, hostLow))),
			cost: "884.76",
			want: []recWant{
				{KindRightsize, "g5.xlarge", "884.76", "734.38", Low},
				{KindCommitment, "1-year Compute Savings Plan", "734.38", "477.35", Low},
			},
		},
		{
			name: "busy everywhere: only the commitment",
			in:   inst("a", "g5.2xlarge", withUtil(agg(busy, memHigh, hostMid, hostMid))),
			cost: "884.76",
			want: []recWant{{KindCommitment, "1-year Compute Savings Plan", "884.76", "575.09", Low}},
		},
		{
			name: "part-time training goes to spot at the advisor's typical saving, no commitment",
			in:   inst("a", "p4d.24xlarge", perWeek(60), withUtil(agg(busy, memHigh, hostMid, hostMid)), withWorkload(fleet.Training, yes())),
			cost: "5724.67",
			// 8.783057 $/h × 260.71 h × (1 + 1.5338 % checkpoint overhead)
			want: []recWant{{KindSpot, "spot", "5724.67", "2324.99", Medium}},
		},
		{
			name: "spot for a job that does not checkpoint is high risk",
			in:   inst("a", "p4d.24xlarge", perWeek(60), withUtil(agg(busy, memHigh, hostMid, hostMid)), withWorkload(fleet.HPO, no())),
			cost: "5724.67",
			want: []recWant{{KindSpot, "spot", "5724.67", "2324.99", High}},
		},
		{
			name: "spot without utilization data is still advised",
			in:   inst("a", "g4dn.xlarge", withWorkload(fleet.Batch, yes())),
			cost: "383.98",
			// 0.2 $/h × 730 h × 1.015338
			want:     []recWant{{KindSpot, "spot", "383.98", "148.24", Medium}},
			warnings: []string{WarnNoUtilization},
		},
		{
			name: "already on spot: no spot advice",
			in:   inst("a", "g4dn.xlarge", withUtil(agg(busy, memHigh, hostMid, hostMid)), withWorkload(fleet.Training, yes()), func(in *fleet.Instance) { in.Lifecycle = fleet.Spot }),
			cost: "146",
		},
		{
			name:     "eligible workload with no spot price warns",
			in:       inst("a", "g5.xlarge", withUtil(agg(busy, memHigh, hostMid, hostMid)), withWorkload(fleet.Training, yes()), perWeek(40), func(in *fleet.Instance) { in.Region = "eu-north-1" }),
			cost:     "191.19",
			warnings: []string{WarnNoSpotPrice},
		},
		{
			name:     "unknown price is a warning and no cost",
			in:       inst("a", "g5.xlarge", withUtil(agg(busy, memHigh, hostMid, hostMid)), func(in *fleet.Instance) { in.Region = "ap-south-1" }),
			cost:     "0",
			warnings: []string{WarnUnpriced},
		},
		{
			name: "hourly price in the fleet wins over the catalog",
			in:   inst("a", "g5.xlarge", withUtil(agg(busy, memHigh, hostMid, hostMid)), func(in *fleet.Instance) { d := decimal.RequireFromString("0.9"); in.HourlyPrice = &d }),
			cost: "657",
			// The commitment costs its public rate ($0.653904/h × 730),
			// not the source's discount taken off the negotiated price.
			want: []recWant{{KindCommitment, "1-year Compute Savings Plan", "657", "477.35", Low}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := run(t, tc.in)
			if got := p.Instances[0].MonthlyCost; !got.Equal(decimal.RequireFromString(tc.cost)) {
				t.Errorf("monthly cost = %s, want %s", got, tc.cost)
			}
			var got []recWant
			for _, r := range p.Recommendations {
				got = append(got, recWant{r.Kind, r.Target, r.CurrentMonthly.String(), r.ProjectedMonthly.String(), r.Risk})
				if r.Rationale == "" || r.Action == "" || r.Evidence.Formula == "" || len(r.Evidence.Prices) == 0 && r.Kind != KindIdleStop {
					t.Errorf("%s: missing explanation: %+v", r.ID, r)
				}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("recommendations:\n got %+v\nwant %+v", got, tc.want)
			}
			var codes []string
			for _, w := range p.Warnings {
				codes = append(codes, w.Code)
			}
			if !reflect.DeepEqual(codes, tc.warnings) {
				t.Errorf("warnings = %v, want %v (%v)", codes, tc.warnings, p.Warnings)
			}
		})
	}
}

// notebook returns hourly samples for a week: busy (60 %) on the given
// weekdays between from and to o'clock UTC, idle (1 %) otherwise.
func notebook(days []time.Weekday, from, to int) []fleet.Sample {
	var out []fleet.Sample
	for t := week.Start; t.Before(week.End); t = t.Add(time.Hour) {
		v := 1.0
		for _, d := range days {
			if t.Weekday() == d && t.Hour() >= from && t.Hour() < to {
				v = 60
			}
		}
		out = append(out, fleet.Sample{Time: t, GPU: fleet.PerGPU{v}, GPUMemory: fleet.PerGPU{30}})
	}
	return out
}

var weekdays = []time.Weekday{time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday}

// weeksOf repeats a week of samples over n weeks ending where it ends.
func weeksOf(n int, wk []fleet.Sample) []fleet.Sample {
	var out []fleet.Sample
	for k := n - 1; k >= 0; k-- {
		for _, s := range wk {
			s.Time = s.Time.Add(-time.Duration(k) * 7 * 24 * time.Hour)
			out = append(out, s)
		}
	}
	return out
}

// A schedule needs its busy hours to recur across two weeks: one week of
// samples gives it low confidence; busy hours that do not recur (random
// spikes over four weeks) give none.
func TestScheduleRecurrence(t *testing.T) {
	one := run(t, inst("nb", "g4dn.xlarge", withWorkload(fleet.Development, nil), withUtil(&fleet.Utilization{Samples: notebook(weekdays, 9, 17)})))
	if len(one.Recommendations) != 1 || one.Recommendations[0].Kind != KindSchedule || one.Recommendations[0].Confidence != Low {
		t.Fatalf("one week: %+v", one.Recommendations)
	}
	var spikes []fleet.Sample
	for i, s := range weeksOf(4, notebook(nil, 0, 0)) {
		if i%37 == 0 { // never the same hour of the week twice
			s.GPU = fleet.PerGPU{95}
		}
		spikes = append(spikes, s)
	}
	p := run(t, inst("vm", "g4dn.xlarge", withUtil(&fleet.Utilization{Samples: spikes})))
	for _, r := range p.Recommendations {
		if r.Kind == KindSchedule {
			t.Fatalf("random spikes gave a schedule: %+v", r)
		}
	}
	found := false
	for _, w := range p.Warnings {
		found = found || w.Code == WarnNotRecurring
	}
	if !found {
		t.Errorf("no %s warning: %v", WarnNotRecurring, p.Warnings)
	}
}

func TestSchedule(t *testing.T) {
	in := inst("nb", "g4dn.xlarge", withWorkload(fleet.Development, nil), withUtil(&fleet.Utilization{Samples: weeksOf(2, notebook(weekdays, 9, 17))}))
	p := run(t, in)
	if len(p.Recommendations) != 1 {
		t.Fatalf("want one recommendation, got %+v", p.Recommendations)
	}
	r := p.Recommendations[0]
	if r.Kind != KindSchedule || r.Target != "Mon–Fri 08:00–18:00 UTC" {
		t.Fatalf("got %s %q", r.Kind, r.Target)
	}
	// 0.526 $/h × 50 h/week × 730/168 = 114.28
	if r.ProjectedMonthly.String() != "114.28" || r.MonthlySavings.String() != "269.7" {
		t.Errorf("projected %s savings %s", r.ProjectedMonthly, r.MonthlySavings)
	}
	final := p.Instances[0].Final
	if h, err := final.Schedule.HoursPerWeek(); err != nil || h != 50 || final.Schedule.Windows[0].Days[4] != "fri" {
		t.Errorf("final schedule %+v (%v h/week, %v)", final.Schedule, h, err)
	}
	if r.Evidence.Metrics["scheduledHoursPerWeek"] != 50 || r.Confidence != High || r.Risk != Low {
		t.Errorf("evidence %+v confidence %s risk %s", r.Evidence.Metrics, r.Confidence, r.Risk)
	}
}

func TestScheduleVariants(t *testing.T) {
	mixed := notebook(weekdays, 9, 17)
	// Saturday morning work gets its own window.
	for i := range mixed {
		if tm := mixed[i].Time; tm.Weekday() == time.Saturday && tm.Hour() >= 10 && tm.Hour() < 12 {
			mixed[i].GPU = fleet.PerGPU{50}
		}
	}
	tests := []struct {
		name    string
		samples []fleet.Sample
		kind    Kind
		target  string
	}{
		{"idle all week is stopped", notebook(nil, 0, 0), KindIdleStop, "stopped"},
		{"busy most of the day keeps running, committed", notebook([]time.Weekday{0, 1, 2, 3, 4, 5, 6}, 2, 23), KindCommitment, "1-year Compute Savings Plan"},
		{"a Saturday session adds a window", mixed, KindSchedule, "Mon–Fri 08:00–18:00, Sat 09:00–13:00 UTC"},
		{"three days is too short to learn a week", notebook(weekdays, 9, 17)[:72], KindCommitment, "1-year Compute Savings Plan"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := run(t, inst("nb", "g4dn.xlarge", withWorkload(fleet.Development, nil), withUtil(&fleet.Utilization{Samples: tc.samples})))
			var kind Kind
			var target string
			if len(p.Recommendations) > 0 {
				kind, target = p.Recommendations[0].Kind, p.Recommendations[0].Target
			}
			if kind != tc.kind || target != tc.target {
				t.Errorf("got %q %q, want %q %q", kind, target, tc.kind, tc.target)
			}
		})
	}
}

func TestDaysText(t *testing.T) {
	for _, tc := range []struct {
		days []time.Weekday
		want string
	}{
		{weekdays, "Mon–Fri"},
		{[]time.Weekday{time.Monday, time.Wednesday}, "Mon, Wed"},
		{[]time.Weekday{time.Monday, time.Tuesday}, "Mon, Tue"},
		{[]time.Weekday{time.Saturday, time.Sunday}, "Sat, Sun"},
		{[]time.Weekday{time.Monday, time.Tuesday, time.Wednesday, time.Friday, time.Saturday, time.Sunday}, "Mon–Wed, Fri–Sun"},
	} {
		if got := daysText(tc.days); got != tc.want {
			t.Errorf("daysText(%v) = %q, want %q", tc.days, got, tc.want)
		}
	}
}

func TestPolicyOverrides(t *testing.T) {
	in := inst("a", "g4dn.xlarge", withUtil(agg(fleet.Stats{Avg: 10, P95: 18, Max: 25}, idle, hostLow, hostLow)))
	f := &fleet.Fleet{Instances: []fleet.Instance{in}}
	p := DefaultPolicy().WithPurchases(purchasetest.Purchases())
	if got := Run(f, testCatalog(), p); len(got.Recommendations) != 1 || got.Recommendations[0].Kind != KindCommitment {
		t.Fatalf("default policy: %+v", got.Recommendations)
	}
	p.Idle.GPUPercent = 20
	if got := Run(f, testCatalog(), p); len(got.Recommendations) != 1 || got.Recommendations[0].Kind != KindIdleStop {
		t.Fatalf("idle threshold 20: %+v", got.Recommendations)
	}
	p = DefaultPolicy().WithPurchases(purchasetest.Purchases())
	p.Commitment.Term = "3y"
	got := Run(f, testCatalog(), p)
	// 0.526 × 0.45 = 0.2367 $/h × 730 = 172.79
	if len(got.Recommendations) != 1 || got.Recommendations[0].ProjectedMonthly.String() != "172.79" || got.Recommendations[0].Risk != Medium {
		t.Fatalf("3y term: %+v", got.Recommendations)
	}
}

func TestFleetSumsAndDeterminism(t *testing.T) {
	fl := func() *fleet.Fleet {
		return &fleet.Fleet{Instances: []fleet.Instance{
			inst("train", "p4d.24xlarge", perWeek(60), withUtil(agg(busy, memHigh, hostMid, hostMid)), withWorkload(fleet.Training, yes())),
			inst("infer", "g5.2xlarge", withUtil(agg(fleet.Stats{Avg: 35, P95: 46, Max: 71}, memHigh, hostLow, hostLow))),
			inst("nb", "g4dn.xlarge", withUtil(&fleet.Utilization{Samples: notebook(weekdays, 9, 17)})),
			inst("idle", "g4dn.xlarge", withUtil(agg(idle, idle, idle, idle))),
			inst("off", "g5.xlarge", func(in *fleet.Instance) { in.State = fleet.Stopped }),
			inst("nodata", "g5.xlarge"),
		}}
	}
	a := Run(fl(), testCatalog(), DefaultPolicy().WithPurchases(purchasetest.Purchases()))
	b := Run(fl(), testCatalog(), DefaultPolicy().WithPurchases(purchasetest.Purchases()))
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two runs differ")
	}
	checkSums(t, a)
	// 5724.67 + 884.76 + 383.98 + 383.98 + 0 + 734.38
	if a.Summary.CurrentMonthly.String() != "8111.77" {
		t.Errorf("current = %s", a.Summary.CurrentMonthly)
	}
	// spot 3399.68 + rightsize 150.38 + commitment 257.03 + schedule 269.70 + idle 383.98
	if a.Summary.MonthlySavings.String() != "4460.77" {
		t.Errorf("savings = %s", a.Summary.MonthlySavings)
	}
	if a.Summary.InstanceCount != 6 || a.Summary.UnpricedCount != 0 {
		t.Errorf("counts %+v", a.Summary)
	}
	var order []string
	for _, r := range a.Recommendations {
		order = append(order, r.ID)
	}
	want := "idle-stop:idle schedule:nb rightsize:infer spot:train commitment:infer"
	if strings.Join(order, " ") != want {
		t.Errorf("order = %v, want %s", order, want)
	}
	if a.Recommendations[4].After != "rightsize:infer" {
		t.Errorf("commitment should be priced after the rightsize, got After=%q", a.Recommendations[4].After)
	}
}

func TestPolicyValidate(t *testing.T) {
	if err := DefaultPolicy().WithPurchases(purchasetest.Purchases()).Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		mod  func(*Policy)
		want string
	}{
		{func(p *Policy) { p.Idle.GPUPercent = 140 }, "policy.idle.gpu_percent: 140 is outside 0–100"},
		{func(p *Policy) { p.Commitment.Term = "5y" }, `policy.commitment.term: "5y" is not 1y or 3y`},
		{func(p *Policy) { p.Commitment.Discounts1y["oracle"] = 0.2 }, `policy.commitment.discounts_1y: "oracle" is not a provider`},
		{func(p *Policy) { p.Commitment.Discounts3y["aws"] = 1.2 }, "policy.commitment.discounts_3y.aws: 1.2 is not a fraction"},
		{func(p *Policy) { p.Spot.Workloads = []fleet.WorkloadType{"gaming"} }, `policy.spot.workloads[0]: "gaming" is not one of`},
	} {
		p := DefaultPolicy().WithPurchases(purchasetest.Purchases())
		tc.mod(&p)
		err := p.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want %q", err, tc.want)
		}
	}
}

func TestYoungDaly(t *testing.T) {
	p := DefaultPolicy().WithPurchases(purchasetest.Purchases()).Spot
	for _, tc := range []struct {
		name                         string
		w                            *fleet.Workload
		advice                       *pricing.SpotAdvice
		write, mtbi, interval, ovPct float64
	}{
		// C = 5 min, M = 730 h / 1 = 730 h: τ = √(2 × 1/12 h × 730 h) = 11.03 h = 661.8 min;
		// overhead = (1/12)/11.03 + (11.03/2 + 10/60)/730 = 0.755 % + 0.778 % = 1.53 %.
		{"no model size, no band", nil, nil, 5, 730, 661.82, 1.53},
		// 8 B params × 14 B = 112 GB at 1 GB/s = 1.867 min; band <5 %: M = 730/0.05 = 14,600 h;
		// τ = √(2 × 0.03111 h × 14,600 h) = 30.14 h = 1808.42 min;
		// overhead = 0.03111/30.14 + (15.07 + 0.1667)/14,600 = 0.1032 % + 0.1044 % = 0.21 %.
		{"8B model, rare interruptions", &fleet.Workload{ParamsBillions: 8}, &pricing.SpotAdvice{Band: "<5%", MaxInterruptPercent: 5}, 1.87, 14600, 1808.42, 0.21},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cp := planCheckpoints(p, tc.w, tc.advice)
			if round2(cp.writeMinutes) != tc.write || round2(cp.mtbiHours) != tc.mtbi || round2(cp.intervalMinutes) != tc.interval || round2(cp.overhead*100) != tc.ovPct {
				t.Errorf("got write %v min, M %v h, τ %v min, overhead %v %%", round2(cp.writeMinutes), round2(cp.mtbiHours), round2(cp.intervalMinutes), round2(cp.overhead*100))
			}
		})
	}
}

func inference(model, prec string) func(*fleet.Instance) {
	return func(in *fleet.Instance) {
		in.Workload = &fleet.Workload{Type: fleet.Inference, Model: model, Precision: prec}
	}
}

func TestQuantize(t *testing.T) {
	load := func(p95 float64) func(*fleet.Instance) {
		return withUtil(agg(fleet.Stats{Avg: p95 * 0.7, P95: p95, Max: p95 + 10}, memHigh, hostMid, hostMid))
	}
	replicas := func(n int, typ, prec string, p95 float64) []fleet.Instance {
		var out []fleet.Instance
		for i := 1; i <= n; i++ {
			out = append(out, inst(fmt.Sprintf("r%d", i), typ, inference("mistral-7b-instruct", prec), load(p95)))
		}
		return out
	}
	kinds := func(p Plan) map[string]string {
		m := map[string]string{}
		for _, r := range p.Recommendations {
			if r.Kind == KindQuantize {
				m[r.ResourceID] = r.Target
			}
		}
		return m
	}

	t.Run("four FP16 replicas at 46 % become two INT8 replicas", func(t *testing.T) {
		p := run(t, replicas(4, "g5.xlarge", "fp16", 46)...)
		// Load 4 × 0.46 = 1.84 FP16 replicas; an INT8 replica decodes ~1.6× as
		// fast on the same A10G, so 1.84 / 1.6 / 0.7 target → 2 replicas.
		want := map[string]string{"r3": "removed", "r4": "removed"}
		if got := kinds(p); !reflect.DeepEqual(got, want) {
			t.Fatalf("quantize recommendations %v, want %v", got, want)
		}
		for _, r := range p.Recommendations {
			if r.Kind == KindQuantize && (!r.ProjectedMonthly.IsZero() || r.MonthlySavings.String() != "734.38" || r.Risk != Medium || len(r.RiskNotes) == 0) {
				t.Errorf("%s: %+v", r.ID, r)
			}
			if r.Kind == KindCommitment && (r.ResourceID == "r3" || r.ResourceID == "r4") {
				t.Errorf("removed replica %s still gets a commitment", r.ResourceID)
			}
		}
	})
	t.Run("busy replicas keep their count", func(t *testing.T) {
		if got := kinds(run(t, replicas(2, "g5.xlarge", "fp16", 95)...)); len(got) != 0 {
			t.Errorf("got %v", got)
		}
	})
	t.Run("a lone replica keeps one instance but moves to a cheaper GPU", func(t *testing.T) {
		got := kinds(run(t, replicas(1, "g5.xlarge", "bf16", 20)...))
		if got["r1"] != "g4dn.xlarge INT8" {
			t.Errorf("got %v", got)
		}
	})
	t.Run("already INT8, unknown model, training: untouched", func(t *testing.T) {
		p := run(t,
			inst("a", "g5.xlarge", inference("mistral-7b-instruct", "int8"), load(20)),
			inst("b", "g5.xlarge", inference("no-such-model", "fp16"), load(20)),
			inst("c", "g5.xlarge", withWorkload(fleet.Training, yes()), load(20)),
		)
		if got := kinds(p); len(got) != 0 {
			t.Errorf("got %v", got)
		}
	})
}

func TestTagging(t *testing.T) {
	untagged := inst("u", "g4dn.xlarge", withUtil(agg(busy, memHigh, hostMid, hostMid)), func(in *fleet.Instance) { in.Tags = map[string]string{"team": "ml"} })
	stopped := inst("s", "g4dn.xlarge", withUtil(agg(idle, idle, idle, idle)), func(in *fleet.Instance) { in.Tags = nil })
	p := run(t, untagged, stopped, inst("ok", "g4dn.xlarge", withUtil(agg(busy, memHigh, hostMid, hostMid))))
	var got []string
	for _, r := range p.Recommendations {
		if r.Kind == KindTagging {
			got = append(got, r.ResourceID)
			if !r.MonthlySavings.IsZero() || r.After != "commitment:u" || !strings.Contains(r.Action, "Project") {
				t.Errorf("%+v", r)
			}
		}
	}
	// The idle instance is stopped: tagging it would not matter.
	if !reflect.DeepEqual(got, []string{"u"}) {
		t.Errorf("tagging recommendations for %v, want [u]", got)
	}
	a := p.Governance.Audit
	if len(a.Violations) == 0 {
		t.Fatalf("no audit in the plan")
	}
}
