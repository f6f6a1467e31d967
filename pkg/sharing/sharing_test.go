package sharing

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
)

// t4 is a development notebook on a g4dn.xlarge (one 16 GiB T4).
func t4(id string, p95, peakGiB float64) Tenant {
	return Tenant{
		InstanceID: id, Provider: fleet.AWS, Region: "us-east-1", Account: "111122223333",
		InstanceType: "g4dn.xlarge", Workload: fleet.Development, GPUModel: "T4", GPUCount: 1,
		GPUMemoryGiB: 16, GPUP95: p95, MemoryPeakGiB: peakGiB, MonthlyCost: decimal.RequireFromString("383.98"),
	}
}

// a100 is light inference on GCP: a2-highgpu-1g (A100 40 GB) or, with
// big, a2-ultragpu-1g (A100 80 GB).
func a100(id string, big bool, p95, peakGiB float64) Tenant {
	t := Tenant{
		InstanceID: id, Provider: fleet.GCP, Region: "us-central1", Account: "ml-prod",
		InstanceType: "a2-highgpu-1g", Workload: fleet.Inference, GPUModel: "A100", GPUCount: 1,
		GPUMemoryGiB: 40, GPUP95: p95, MemoryPeakGiB: peakGiB, MonthlyCost: decimal.RequireFromString("2681.57"),
	}
	if big {
		t.InstanceType, t.GPUModel, t.GPUMemoryGiB = "a2-ultragpu-1g", "A100-80GB", 80
		t.MonthlyCost = decimal.RequireFromString("2150.45")
	}
	return t
}

func realGPUs(t *testing.T) func(string) (pricing.GPUSpec, bool) {
	t.Helper()
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	return cat.GPU
}

func noGPUs(string) (pricing.GPUSpec, bool) { return pricing.GPUSpec{}, false }

// layout is a plan reduced to what the packing decides: per group
// "mode type N=replicas" and per host "host[tenants]{mig devices}".
func layout(p Plan) []string {
	var out []string
	for _, g := range p.Groups {
		line := fmt.Sprintf("%s %s", g.Mode, g.InstanceType)
		if g.Replicas > 0 {
			line += fmt.Sprintf(" N=%d", g.Replicas)
		}
		for _, h := range g.Hosts {
			line += fmt.Sprintf(" %s%v", h.InstanceID, h.Tenants)
			if h.MIGDevices != nil {
				line += fmt.Sprint(h.MIGDevices)
			}
		}
		out = append(out, line)
	}
	return out
}

func TestPolicy(t *testing.T) {
	if err := DefaultPolicy().Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		edit func(*Policy)
		want string
	}{
		{func(p *Policy) { p.DevelopmentMaxGPUPercent = 101 }, "policy.sharing.development_max_gpu_percent: 101 is outside 0–100"},
		{func(p *Policy) { p.HeadroomPercent = -1 }, "policy.sharing.headroom_percent: -1 is outside 0–100"},
		{func(p *Policy) { p.TargetGPUPercent = 0 }, "target_gpu_percent: 0 leaves no room"},
		{func(p *Policy) { p.MaxReplicas = 1 }, "policy.sharing.max_replicas: 1 is outside 2–64"},
	} {
		p := DefaultPolicy()
		tc.edit(&p)
		if err := p.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate() = %v, want %q", err, tc.want)
		}
	}
}

func TestTenantFrom(t *testing.T) {
	base := func() fleet.Instance {
		return fleet.Instance{
			ID: "nb-1", Provider: fleet.AWS, Account: "1", Region: "us-east-1", InstanceType: "g4dn.xlarge",
			GPU: fleet.GPU{Model: "T4", Count: 1, MemoryGiB: 16}, State: fleet.Running, Lifecycle: fleet.OnDemand,
			Utilization: &fleet.Utilization{GPU: &fleet.Stats{P95: 22, Max: 60}, GPUMemory: &fleet.Stats{P95: 20, Max: 25}},
			Workload:    &fleet.Workload{Type: fleet.Development},
		}
	}
	cur := Current{MonthlyCost: decimal.RequireFromString("114.28"), MonthlyHours: 217.26}
	p := DefaultPolicy()

	in := base()
	got, err := TenantFrom(&in, in.Utilization.Summarize(), cur, p)
	if err != nil {
		t.Fatal(err)
	}
	want := Tenant{
		InstanceID: "nb-1", Provider: fleet.AWS, Region: "us-east-1", Account: "1", InstanceType: "g4dn.xlarge",
		Workload: fleet.Development, GPUModel: "T4", GPUCount: 1, GPUMemoryGiB: 16, GPUP95: 22,
		MemoryPeakGiB: 4, MonthlyCost: cur.MonthlyCost, MonthlyHours: 217.26,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("tenant (-want +got):\n%s", d)
	}

	for _, tc := range []struct {
		name  string
		edit  func(*fleet.Instance, *Current)
		quiet bool
		want  string
	}{
		{"training", func(i *fleet.Instance, _ *Current) { i.Workload.Type = fleet.Training }, true, ""},
		{"no workload", func(i *fleet.Instance, _ *Current) { i.Workload = nil }, true, ""},
		{"stopped", func(i *fleet.Instance, _ *Current) { i.State = fleet.Stopped }, true, ""},
		{"multi-GPU", func(i *fleet.Instance, _ *Current) { i.GPU.Count = 4 }, false, "4 GPUs: a tenant must fit one GPU, multi-GPU instances are not candidates"},
		{"fractional", func(i *fleet.Instance, _ *Current) { i.GPU.Count = 0.5 }, false, "already a fraction (0.5) of a GPU"},
		{"busy notebook", func(i *fleet.Instance, _ *Current) { i.Utilization.GPU.P95 = 40 }, false, "development GPU p95 40.0 % is not below 40.0 %"},
		{"heavy inference", func(i *fleet.Instance, _ *Current) { i.Workload.Type = fleet.Inference; i.Utilization.GPU.P95 = 31 },
			false, "inference GPU p95 31.0 % is not below 30.0 %"},
		{"no memory data", func(i *fleet.Instance, _ *Current) { i.Utilization.GPUMemory = nil }, false, "no GPU memory data"},
		{"no utilization", func(i *fleet.Instance, _ *Current) { i.Utilization = nil }, false, "no GPU utilization data"},
		{"rightsized to another GPU", func(_ *fleet.Instance, c *Current) { c.GPUModel = "L4" }, false, "moves from T4 to L4 by an earlier recommendation"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := base()
			c := cur
			tc.edit(&in, &c)
			_, err := TenantFrom(&in, in.Utilization.Summarize(), c, p)
			switch {
			case err == nil:
				t.Fatal("no error")
			case tc.quiet != errors.Is(err, ErrNotCandidate):
				t.Fatalf("error %v: quiet = %v, want %v", err, !tc.quiet, tc.quiet)
			case !strings.Contains(err.Error(), tc.want):
				t.Fatalf("error %q, want %q", err, tc.want)
			}
		})
	}

	// The type after rightsizing is the group's type.
	in = base()
	got, err = TenantFrom(&in, in.Utilization.Summarize(), Current{InstanceType: "g4dn.2xlarge", GPUModel: "t4"}, p)
	if err != nil || got.InstanceType != "g4dn.2xlarge" {
		t.Errorf("after rightsizing: %+v, %v", got, err)
	}
}

func TestTenantsFromFleet(t *testing.T) {
	mk := func(id string, wt fleet.WorkloadType, count, p95 float64) fleet.Instance {
		return fleet.Instance{
			ID: id, Provider: fleet.AWS, Region: "us-east-1", InstanceType: "g4dn.xlarge", State: fleet.Running,
			GPU:         fleet.GPU{Model: "T4", Count: count, MemoryGiB: 16},
			Utilization: &fleet.Utilization{GPU: &fleet.Stats{P95: p95}, GPUMemory: &fleet.Stats{Max: 10}},
			Workload:    &fleet.Workload{Type: wt},
		}
	}
	f := &fleet.Fleet{Instances: []fleet.Instance{
		mk("nb-2", fleet.Development, 1, 20),
		mk("train", fleet.Training, 1, 90),
		mk("nb-big", fleet.Development, 4, 10),
		mk("nb-1", fleet.Development, 1, 25),
		mk("nb-stopped-by-plan", fleet.Development, 1, 5),
	}}
	tenants, notes := TenantsFromFleet(f, func(in *fleet.Instance) (Current, bool) {
		return Current{}, in.ID != "nb-stopped-by-plan"
	}, DefaultPolicy())
	var ids []string
	for _, tn := range tenants {
		ids = append(ids, tn.InstanceID)
	}
	if d := cmp.Diff([]string{"nb-1", "nb-2"}, ids); d != "" {
		t.Errorf("tenants (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"nb-big: not shared: 4 GPUs: a tenant must fit one GPU, multi-GPU instances are not candidates"}, notes); d != "" {
		t.Errorf("notes (-want +got):\n%s", d)
	}
}

func TestBuildTimeSlicing(t *testing.T) {
	p := DefaultPolicy()
	for _, tc := range []struct {
		name    string
		tenants []Tenant
		policy  func(*Policy)
		want    []string
		freed   int
	}{
		{
			// The reference article: 8 notebooks on 2 physical T4s.
			name: "article 8 notebooks on 2 T4",
			tenants: []Tenant{t4("nb-1", 20, 3), t4("nb-2", 20, 3), t4("nb-3", 20, 3), t4("nb-4", 20, 3),
				t4("nb-5", 20, 3), t4("nb-6", 20, 3), t4("nb-7", 20, 3), t4("nb-8", 20, 3)},
			want:  []string{"time-slicing g4dn.xlarge N=4 nb-1[nb-1 nb-2 nb-3 nb-4] nb-5[nb-5 nb-6 nb-7 nb-8]"},
			freed: 6,
		},
		{
			// First-fit decreasing by p95: 35+30+15 = 80 and 25+20+10 = 55; N is
			// the most tenants on a host, from the peaks, not a constant.
			name: "N from peaks",
			tenants: []Tenant{t4("a", 10, 1), t4("b", 35, 1), t4("c", 20, 1), t4("d", 30, 1),
				t4("e", 15, 1), t4("f", 25, 1)},
			want:  []string{"time-slicing g4dn.xlarge N=3 b[b d e] f[f a c]"},
			freed: 4,
		},
		{
			name:    "N from peaks, light load",
			tenants: []Tenant{t4("a", 16, 1), t4("b", 16, 1), t4("c", 16, 1), t4("d", 16, 1), t4("e", 16, 1)},
			want:    []string{"time-slicing g4dn.xlarge N=5 a[a b c d e]"},
			freed:   4,
		},
		{
			// 5 GiB peaks + 10 % headroom: two fit 16 GiB (11), three do not (16.5).
			name:    "memory limit",
			tenants: []Tenant{t4("a", 10, 5), t4("b", 10, 5), t4("c", 10, 5), t4("d", 10, 5), t4("e", 10, 5)},
			want:    []string{"time-slicing g4dn.xlarge N=2 a[a b] c[c d]"},
			freed:   2,
		},
		{
			name: "replica cap",
			tenants: []Tenant{t4("n01", 5, 1), t4("n02", 5, 1), t4("n03", 5, 1), t4("n04", 5, 1), t4("n05", 5, 1),
				t4("n06", 5, 1), t4("n07", 5, 1), t4("n08", 5, 1), t4("n09", 5, 1), t4("n10", 5, 1)},
			want:  []string{"time-slicing g4dn.xlarge N=8 n01[n01 n02 n03 n04 n05 n06 n07 n08] n09[n09 n10]"},
			freed: 8,
		},
		{
			name:    "replica cap from policy",
			tenants: []Tenant{t4("a", 5, 1), t4("b", 5, 1), t4("c", 5, 1)},
			policy:  func(p *Policy) { p.MaxReplicas = 2 },
			want:    []string{"time-slicing g4dn.xlarge N=2 a[a b]"},
			freed:   1,
		},
		{
			name:    "target load",
			tenants: []Tenant{t4("a", 39, 1), t4("b", 39, 1), t4("c", 39, 1)},
			policy:  func(p *Policy) { p.TargetGPUPercent = 70 },
			want:    nil,
		},
		{
			name: "groups do not mix regions, accounts or types",
			tenants: func() []Tenant {
				b, c, d := t4("b", 10, 1), t4("c", 10, 1), t4("d", 10, 1)
				b.Region, c.Account, d.InstanceType = "us-west-2", "999", "g4dn.2xlarge"
				return []Tenant{t4("a", 10, 1), b, c, d, t4("e", 10, 1)}
			}(),
			want:  []string{"time-slicing g4dn.xlarge N=2 a[a e]"},
			freed: 1,
		},
		{
			name: "inference time-slices where MIG is impossible",
			tenants: func() []Tenant {
				b := t4("b", 20, 2)
				b.Workload = fleet.Inference
				return []Tenant{t4("a", 20, 2), b}
			}(),
			want:  []string{"time-slicing g4dn.xlarge N=2 a[a b]"},
			freed: 1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pol := p
			if tc.policy != nil {
				tc.policy(&pol)
			}
			plan := Build(tc.tenants, noGPUs, pol)
			if d := cmp.Diff(tc.want, layout(plan)); d != "" {
				t.Errorf("layout (-want +got):\n%s", d)
			}
			freed := 0
			for _, g := range plan.Groups {
				freed += len(g.Freed)
			}
			if freed != tc.freed {
				t.Errorf("freed %d, want %d", freed, tc.freed)
			}
			want := decimal.RequireFromString("383.98").Mul(decimal.NewFromInt(int64(tc.freed)))
			if !plan.FreedMonthly.Equal(want) {
				t.Errorf("freed monthly %s, want %s", plan.FreedMonthly, want)
			}
		})
	}
}

func TestBuildGroupDetails(t *testing.T) {
	plan := Build([]Tenant{t4("nb-2", 20, 3.5), t4("nb-1", 30, 2.25), t4("nb-3", 10, 1)}, noGPUs, DefaultPolicy())
	if len(plan.Groups) != 1 {
		t.Fatalf("groups %v", layout(plan))
	}
	g := plan.Groups[0]
	want := Group{
		Mode: TimeSlicing, Provider: fleet.AWS, Region: "us-east-1", Account: "111122223333",
		InstanceType: "g4dn.xlarge", GPUModel: "T4", GPUMemoryGiB: 16, Replicas: 3, Config: "g4dn-xlarge-t4",
		Hosts: []Host{{InstanceID: "nb-1", Tenants: []string{"nb-1", "nb-2", "nb-3"}, GPULoadPercent: 60, GPUMemoryGiB: 6.75}},
		Freed: []string{"nb-2", "nb-3"},
		Moves: []Move{
			{InstanceID: "nb-2", Host: "nb-1", MonthlyCost: decimal.RequireFromString("383.98")},
			{InstanceID: "nb-3", Host: "nb-1", MonthlyCost: decimal.RequireFromString("383.98")},
		},
		FreedMonthly: decimal.RequireFromString("767.96"),
	}
	if d := cmp.Diff(want, g); d != "" {
		t.Errorf("group (-want +got):\n%s", d)
	}
	if plan.Policy == nil || *plan.Policy != DefaultPolicy() {
		t.Errorf("policy %+v", plan.Policy)
	}
}

func TestBuildSchedules(t *testing.T) {
	week := func(days []string, start, end string) *fleet.Schedule {
		return &fleet.Schedule{Timezone: "UTC", Windows: []fleet.Window{{Days: days, Start: start, End: end}}}
	}
	weekdays := []string{"mon", "tue", "wed", "thu", "fri"}
	office, early := t4("office", 30, 1), t4("early", 20, 1)
	office.Schedule = week(weekdays, "08:00", "18:00")
	early.Schedule = week(weekdays, "06:00", "12:00")
	lunch := t4("lunch", 10, 1)
	lunch.Schedule = week(weekdays, "12:00", "14:00")
	partial := t4("partial", 5, 1)
	partial.MonthlyHours = 200 // no schedule: runs at unknown times
	always := t4("always", 1, 1)

	for _, tc := range []struct {
		name    string
		tenants []Tenant
		want    []string
	}{
		// office covers lunch; early overlaps office without either covering
		// the other, so it stays alone.
		{"covered schedules share", []Tenant{office, early, lunch}, []string{"time-slicing g4dn.xlarge N=2 office[office lunch]"}},
		// The always-on instance comes last (lowest load) but hosts the GPU it
		// joins, since it covers office; early had already opened its own GPU.
		{"always-on host", []Tenant{office, early, always}, []string{"time-slicing g4dn.xlarge N=2 always[always office]"}},
		{"unknown hours need an always-on host", []Tenant{office, partial}, nil},
		{"unknown hours on an always-on host", []Tenant{partial, always}, []string{"time-slicing g4dn.xlarge N=2 always[always partial]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan := Build(tc.tenants, noGPUs, DefaultPolicy())
			if d := cmp.Diff(tc.want, layout(plan)); d != "" {
				t.Errorf("layout (-want +got):\n%s", d)
			}
			if !slices.ContainsFunc(plan.Notes, func(n string) bool { return strings.Contains(n, "schedules do not overlap") }) {
				t.Errorf("no schedule note in %q", plan.Notes)
			}
		})
	}
}

func TestChooseProfile(t *testing.T) {
	gpus := realGPUs(t)
	for _, tc := range []struct {
		gpu       string
		p95, peak float64
		want      string
	}{
		// A100 40 GB: 1g.5gb, 1g.10gb, 2g.10gb, 3g.20gb, 4g.20gb, 7g.40gb.
		{"A100", 10, 4, "1g.5gb"},     // 4.4 GiB ≤ 5, 11 % ≤ 1/7
		{"A100", 10, 8, "1g.10gb"},    // 8.8 GiB: one slice, 10 GB
		{"A100", 20, 4, "2g.10gb"},    // 22 % > 1/7 (14.3 %): two slices
		{"A100", 29, 4, "3g.20gb"},    // 31.9 % > 2/7 (28.6 %)
		{"A100", 10, 15, "3g.20gb"},   // 16.5 GiB: 3g before 4g at equal memory
		{"A100", 10, 18.1, "3g.20gb"}, // 19.91 GiB
		{"A100", 10, 19, ""},          // 20.9 GiB: only 7g.40gb, the whole GPU
		{"A100", 62, 1, ""},           // 68.2 % > 4/7
		// A100 80 GB: 1g.10gb, 1g.20gb, 2g.20gb, 3g.40gb, 4g.40gb, 7g.80gb.
		{"A100-80GB", 10, 9, "1g.10gb"},
		{"A100-80GB", 10, 12, "1g.20gb"},
		{"A100-80GB", 20, 5, "2g.20gb"},
		{"A100-80GB", 20, 30, "3g.40gb"},
		{"A100-80GB", 50, 30, "4g.40gb"},
		// H200 141 GB and B200 180 GB profiles from the catalog too.
		{"H200", 10, 15, "1g.18gb"},
		{"B200", 10, 30, "1g.45gb"},
	} {
		spec, ok := gpus(tc.gpu)
		if !ok {
			t.Fatalf("catalog has no %s", tc.gpu)
		}
		tn := a100("x", tc.gpu != "A100", tc.p95, tc.peak)
		got, ok := chooseProfile(spec, tn, 10)
		if tc.want == "" {
			if ok {
				t.Errorf("%s p95 %v peak %v: got %s, want none", tc.gpu, tc.p95, tc.peak, got.Name)
			}
			continue
		}
		if got.Name != tc.want {
			t.Errorf("%s p95 %v peak %v: got %q, want %s", tc.gpu, tc.p95, tc.peak, got.Name, tc.want)
		}
	}
}

func TestBuildMIG(t *testing.T) {
	gpus := realGPUs(t)
	p := DefaultPolicy()
	for _, tc := range []struct {
		name    string
		tenants []Tenant
		policy  func(*Policy)
		want    []string
		notes   []string
	}{
		{
			// 3g.20gb + 3g.20gb take all 8 memory slices of an A100 40 GB (and 6
			// of 7 compute slices): the 1g.5gb cannot join them.
			name:    "A100 40GB memory slices",
			tenants: []Tenant{a100("i-1", false, 25, 16), a100("i-2", false, 20, 15), a100("i-3", false, 10, 4), a100("i-4", false, 5, 2)},
			want: []string{"mig a2-highgpu-1g i-1[i-1 i-2]map[3g.20gb:2]" +
				" i-3[i-3 i-4]map[1g.5gb:2]"},
		},
		{
			name: "A100 40GB seven 1g.5gb",
			tenants: []Tenant{a100("i-1", false, 5, 2), a100("i-2", false, 5, 2), a100("i-3", false, 5, 2), a100("i-4", false, 5, 2),
				a100("i-5", false, 5, 2), a100("i-6", false, 5, 2), a100("i-7", false, 5, 2), a100("i-8", false, 5, 2)},
			want: []string{"mig a2-highgpu-1g i-1[i-1 i-2 i-3 i-4 i-5 i-6 i-7]map[1g.5gb:7]"},
		},
		{
			// 1g.10gb takes 2 of 8 memory slices on a 40 GB A100: four per GPU.
			name: "A100 40GB 1g.10gb uses two memory slices",
			tenants: []Tenant{a100("i-1", false, 5, 8), a100("i-2", false, 5, 8), a100("i-3", false, 5, 8),
				a100("i-4", false, 5, 8), a100("i-5", false, 5, 8), a100("i-6", false, 5, 8)},
			want: []string{"mig a2-highgpu-1g i-1[i-1 i-2 i-3 i-4]map[1g.10gb:4] i-5[i-5 i-6]map[1g.10gb:2]"},
		},
		{
			name:    "A100 80GB mixed layout",
			tenants: []Tenant{a100("j-1", true, 20, 30), a100("j-2", true, 10, 9), a100("j-3", true, 12, 8), a100("j-4", true, 20, 30), a100("j-5", true, 20, 30)},
			// 3g+3g (8 memory slices) fill j-1's GPU; j-5's 3g takes the two 1g.10gb.
			want: []string{"mig a2-ultragpu-1g j-1[j-1 j-4]map[3g.40gb:2] j-5[j-5 j-2 j-3]map[1g.10gb:2 3g.40gb:1]"},
		},
		{
			name:    "whole-GPU tenant left as is",
			tenants: []Tenant{a100("i-1", false, 10, 19), a100("i-2", false, 5, 2), a100("i-3", false, 5, 2)},
			want:    []string{"mig a2-highgpu-1g i-2[i-2 i-3]map[1g.5gb:2]"},
			notes:   []string{"i-1: not shared: GPU p95 10.0 % and memory peak 19 GiB plus 10.0 % headroom need a whole A100 (7g); left as is"},
		},
		{
			name: "development on an A100 time-slices",
			tenants: func() []Tenant {
				a, b := a100("i-1", false, 20, 10), a100("i-2", false, 20, 10)
				a.Workload, b.Workload = fleet.Development, fleet.Development
				return []Tenant{a, b, a100("i-3", false, 5, 2), a100("i-4", false, 5, 2)}
			}(),
			want: []string{"mig a2-highgpu-1g i-3[i-3 i-4]map[1g.5gb:2]", "time-slicing a2-highgpu-1g N=2 i-1[i-1 i-2]"},
		},
		{
			name:    "MIG off",
			tenants: []Tenant{a100("i-1", false, 5, 2), a100("i-2", false, 5, 2)},
			policy:  func(p *Policy) { p.MIG = false },
			want:    []string{"time-slicing a2-highgpu-1g N=2 i-1[i-1 i-2]"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pol := p
			if tc.policy != nil {
				tc.policy(&pol)
			}
			plan := Build(tc.tenants, gpus, pol)
			if d := cmp.Diff(tc.want, layout(plan)); d != "" {
				t.Errorf("layout (-want +got):\n%s", d)
			}
			for _, n := range tc.notes {
				if !slices.Contains(plan.Notes, n) {
					t.Errorf("missing note %q in %q", n, plan.Notes)
				}
			}
			for _, g := range plan.Groups {
				if g.Mode != MIG {
					continue
				}
				for _, h := range g.Hosts {
					n := 0
					for _, c := range h.MIGDevices {
						n += c
					}
					if n != len(h.Tenants) || len(h.Profiles) != len(h.Tenants) || h.MIGConfig != MIGConfigName(h.MIGDevices) {
						t.Errorf("host %+v: devices, profiles and tenants disagree", h)
					}
				}
			}
		})
	}
}

func TestMIGConfigName(t *testing.T) {
	if got := MIGConfigName(map[string]int{"1g.10gb": 2, "3g.40gb": 1}); got != "gpufinops-1x3g.40gb-2x1g.10gb" {
		t.Errorf("got %q", got)
	}
}

func TestBuildDeterministic(t *testing.T) {
	gpus := realGPUs(t)
	var tenants []Tenant
	for i := range 12 {
		tenants = append(tenants, t4(fmt.Sprintf("nb-%02d", i), float64(5+i*3%30), float64(1+i%4)))
		tenants = append(tenants, a100(fmt.Sprintf("inf-%02d", i), i%2 == 0, float64(3+i*2%20), float64(2+i*3%25)))
	}
	want := Build(tenants, gpus, DefaultPolicy())
	r := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		shuffled := slices.Clone(tenants)
		r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		if d := cmp.Diff(want, Build(shuffled, gpus, DefaultPolicy())); d != "" {
			t.Fatalf("plan depends on input order (-want +got):\n%s", d)
		}
	}
	if len(want.Groups) < 3 {
		t.Errorf("expected time-slicing and MIG groups, got %v", layout(want))
	}
}

func TestBuildInvalidTenants(t *testing.T) {
	multi := t4("multi", 10, 1)
	multi.GPUCount = 4
	over := t4("over", 10, 17)
	plan := Build([]Tenant{multi, over, t4("a", 10, 1), t4("a", 10, 1)}, noGPUs, DefaultPolicy())
	want := []string{
		"a: listed twice; the second is ignored",
		"multi: not shared: 4 GPUs: a tenant must fit one GPU, multi-GPU instances are not candidates",
		"over: not shared: GPU memory peak 17 GiB is more than its GPU's 16 GiB",
		"1 candidate(s), but no two fit one GPU under the policy",
	}
	if d := cmp.Diff(want, plan.Notes); d != "" {
		t.Errorf("notes (-want +got):\n%s", d)
	}
	if len(plan.Groups) != 0 || plan.Groups == nil {
		t.Errorf("groups %v", plan.Groups)
	}
}

func TestConfigNamesUnique(t *testing.T) {
	a, b := t4("a", 10, 1), t4("b", 10, 1)
	c, d := t4("c", 10, 1), t4("d", 10, 1)
	c.Region, d.Region = "us-west-2", "us-west-2"
	e, f := t4("e", 10, 1), t4("f", 10, 1)
	e.Account, f.Account = "444455556666", "444455556666"
	plan := Build([]Tenant{a, b, c, d, e, f}, noGPUs, DefaultPolicy())
	var got []string
	for _, g := range plan.Groups {
		got = append(got, g.Config)
	}
	want := []string{"g4dn-xlarge-t4", "g4dn-xlarge-t4-us-east-1", "g4dn-xlarge-t4-us-west-2"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("config names (-want +got):\n%s", d)
	}
}

func TestMoveOf(t *testing.T) {
	plan := Build([]Tenant{t4("a", 30, 1), t4("b", 20, 1)}, noGPUs, DefaultPolicy())
	g, m, ok := plan.MoveOf("b")
	if !ok || m.Host != "a" || g.Config != "g4dn-xlarge-t4" || !m.MonthlyCost.Equal(decimal.RequireFromString("383.98")) {
		t.Errorf("MoveOf(b) = %+v, %+v, %v", g, m, ok)
	}
	if _, _, ok := plan.MoveOf("a"); ok {
		t.Error("the host is not moved")
	}
}
