package coverage

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/pricingtest"
)

var now = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

func testCatalog() *pricingtest.Catalog {
	c := &pricingtest.Catalog{}
	for _, o := range []struct {
		p        fleet.Provider
		typ, reg string
		od       string
		gpu      string
		n, v, m  float64
	}{
		{fleet.AWS, "g5.xlarge", "us-east-1", "1.006", "A10G", 1, 4, 16},
		{fleet.AWS, "g5.12xlarge", "us-east-1", "5.672", "A10G", 4, 48, 192},
		{fleet.AWS, "g5.24xlarge", "us-east-1", "8.144", "A10G", 4, 96, 384},
		{fleet.AWS, "p5.48xlarge", "us-east-1", "55.04", "H100", 8, 192, 2048},
		{fleet.Azure, "Standard_NC24ads_A100_v4", "eastus", "3.673", "A100", 1, 24, 220},
		{fleet.GCP, "g2-standard-48", "europe-west4", "4.0", "L4", 4, 48, 192},
		{fleet.GCP, "g2-standard-4", "europe-west4", "0.8", "L4", 1, 4, 16},
	} {
		c.AddOffer(pricing.InstanceType{Provider: o.p, Name: o.typ, GPUModel: o.gpu, GPUCount: o.n, VCPUs: o.v, MemoryGiB: o.m}, o.reg, o.od, "")
	}
	c.AddCommitment(fleet.AWS, "us-east-1", "p5.48xlarge", pricing.ComputeSavingsPlan, "1y", 40)
	c.AddCommitment(fleet.AWS, "us-east-1", "g5.xlarge", pricing.ComputeSavingsPlan, "1y", 20)
	c.AddCommitment(fleet.AWS, "us-east-1", "g5.12xlarge", pricing.EC2InstanceSavingsPlan, "1y", 30)
	return c
}

func dec(s string) *decimal.Decimal { d := decimal.RequireFromString(s); return &d }

func hours(h float64) fleet.Usage { return fleet.Usage{HoursPerMonth: &h} }

func inst(id string, p fleet.Provider, region, typ string) fleet.Instance {
	return fleet.Instance{ID: id, Provider: p, Region: region, InstanceType: typ, Lifecycle: fleet.OnDemand, State: fleet.Running}
}

func allocate(t *testing.T, f *fleet.Fleet) Result {
	t.Helper()
	return allocateWith(t, testCatalog(), f)
}

// checkInvariants: no instance is covered past 100 %, no commitment past
// its capacity, a commitment's parts never charge more than it is paid.
func checkInvariants(t *testing.T, f *fleet.Fleet, r Result) {
	t.Helper()
	if len(r.Commitments) != len(f.Commitments) {
		t.Fatalf("%d usages for %d commitments", len(r.Commitments), len(f.Commitments))
	}
	charged := map[string]decimal.Decimal{}
	for id, c := range r.Instances {
		sum := 0.0
		for _, p := range c.Parts {
			if !(p.Share > 0 && p.Share <= 1+1e-9) || p.Monthly.IsNegative() {
				t.Errorf("%s: part %+v", id, p)
			}
			sum += p.Share
			charged[p.CommitmentID] = charged[p.CommitmentID].Add(p.Monthly)
		}
		if !(c.Share <= 1+1e-9) || math.Abs(min(1, sum)-c.Share) > 1e-6 {
			t.Errorf("%s: share %v, parts sum to %v", id, c.Share, sum)
		}
	}
	cent := decimal.New(1, -2)
	for _, u := range r.Commitments {
		if !(u.Utilization >= 0 && u.Utilization <= 1) {
			t.Errorf("%s: utilization %v", u.ID, u.Utilization)
		}
		if u.UsedMonthly.GreaterThan(u.PaidMonthly) || u.UnusedMonthly.IsNegative() || !u.UsedMonthly.Add(u.UnusedMonthly).Equal(u.PaidMonthly) {
			t.Errorf("%s: paid %s, used %s, unused %s", u.ID, u.PaidMonthly, u.UsedMonthly, u.UnusedMonthly)
		}
		slack := cent.Mul(decimal.NewFromInt(int64(len(u.Covers) + 1)))
		if c := charged[u.ID]; c.GreaterThan(u.PaidMonthly.Add(slack)) {
			t.Errorf("%s: parts charge %s, paid %s", u.ID, c, u.PaidMonthly)
		}
		if !u.Active && (len(u.Covers) > 0 || !u.PaidMonthly.IsZero()) {
			t.Errorf("%s: inactive but applied or paid", u.ID)
		}
	}
	if r.Coverage < 0 || r.Coverage > 1+1e-9 {
		t.Errorf("coverage %v", r.Coverage)
	}
}

func TestNormalizationFactor(t *testing.T) {
	for typ, want := range map[string]float64{"t3.nano": 0.25, "m5.large": 4, "g5.xlarge": 8, "g5.12xlarge": 96, "p5.48xlarge": 384, "p4d.24xlarge": 192} {
		if got, ok := NormalizationFactor(typ); !ok || got != want {
			t.Errorf("%s: %v %v, want %v", typ, got, ok, want)
		}
	}
	for _, typ := range []string{"g5.metal", "p5", "g5.0xlarge", "g5.1.5xlarge", "Standard_NC24ads_A100_v4"} {
		if _, ok := NormalizationFactor(typ); ok {
			t.Errorf("%s has a factor", typ)
		}
	}
}

func TestAWSReservedInstances(t *testing.T) {
	t.Run("size flexible across the family", func(t *testing.T) {
		f := &fleet.Fleet{
			Instances: []fleet.Instance{inst("big", fleet.AWS, "us-east-1", "g5.24xlarge"), inst("small", fleet.AWS, "us-east-1", "g5.xlarge")},
			Commitments: []fleet.Held{{ID: "ri", Provider: fleet.AWS, Kind: fleet.HeldStandardRI, Term: "1y", Scope: fleet.HeldScope{Level: "region", Region: "us-east-1"},
				InstanceType: "g5.12xlarge", Count: 1, SizeFlexible: true, HourlyRate: dec("3.5")}},
		}
		r := allocate(t, f)
		if c := r.Instances["big"]; c == nil || c.Share != 0.5 {
			t.Fatalf("g5.24xlarge (192 units) on a g5.12xlarge RI (96 units): %+v, want half covered", c)
		}
		if r.Instances["small"] != nil {
			t.Errorf("the RI is used up, yet covers the small one")
		}
		u := r.Commitments[0]
		if !u.PaidMonthly.Equal(decimal.RequireFromString("2555")) || !u.UnusedMonthly.IsZero() || u.Utilization != 1 {
			t.Errorf("usage %+v", u)
		}
	})
	t.Run("exact size when not flexible", func(t *testing.T) {
		f := &fleet.Fleet{
			Instances: []fleet.Instance{inst("big", fleet.AWS, "us-east-1", "g5.24xlarge")},
			Commitments: []fleet.Held{{ID: "ri", Provider: fleet.AWS, Kind: fleet.HeldStandardRI, Term: "1y",
				InstanceType: "g5.12xlarge", Count: 1, HourlyRate: dec("3.5")}},
		}
		r := allocate(t, f)
		if r.Instances["big"] != nil || !r.Commitments[0].UnusedMonthly.Equal(decimal.RequireFromString("2555")) {
			t.Errorf("a g5.12xlarge RI covered a g5.24xlarge: %+v", r.Commitments[0])
		}
		if len(r.Commitments[0].Candidates) != 0 {
			t.Errorf("candidates %v", r.Commitments[0].Candidates)
		}
	})
	t.Run("zonal and account scope", func(t *testing.T) {
		a := inst("a", fleet.AWS, "us-east-1", "p5.48xlarge")
		a.Zone, a.Account = "us-east-1a", "111"
		b := inst("b", fleet.AWS, "us-east-1", "p5.48xlarge")
		b.Zone, b.Account = "us-east-1b", "111"
		c := inst("c", fleet.AWS, "us-east-1", "p5.48xlarge")
		c.Zone, c.Account = "us-east-1b", "222"
		f := &fleet.Fleet{Instances: []fleet.Instance{a, b, c}, Commitments: []fleet.Held{
			{ID: "zonal", Provider: fleet.AWS, Kind: fleet.HeldStandardRI, Term: "1y", Scope: fleet.HeldScope{Level: "zone", Zone: "us-east-1b"}, InstanceType: "p5.48xlarge", Count: 1, HourlyRate: dec("30")},
			{ID: "acct", Provider: fleet.AWS, Account: "222", Kind: fleet.HeldStandardRI, Term: "1y", Scope: fleet.HeldScope{Level: "account", Region: "us-east-1"}, InstanceType: "p5.48xlarge", Count: 1, HourlyRate: dec("30")},
		}}
		r := allocate(t, f)
		if r.Instances["a"] != nil || r.Instances["b"].Parts[0].CommitmentID != "zonal" || r.Instances["c"].Parts[0].CommitmentID != "acct" {
			t.Errorf("scope: a %+v b %+v c %+v", r.Instances["a"], r.Instances["b"], r.Instances["c"])
		}
		if got := r.Commitments[0].Candidates; len(got) != 0 {
			t.Errorf("a fully used RI has candidates %v", got)
		}
	})
	t.Run("200 hours a month", func(t *testing.T) {
		a := inst("a", fleet.AWS, "us-east-1", "p5.48xlarge")
		a.Usage = hours(200)
		f := &fleet.Fleet{Instances: []fleet.Instance{a, inst("b", fleet.AWS, "us-west-2", "p5.48xlarge")}, Commitments: []fleet.Held{
			{ID: "ri", Provider: fleet.AWS, Kind: fleet.HeldStandardRI, Term: "1y", Scope: fleet.HeldScope{Region: "us-east-1"}, InstanceType: "p5.48xlarge", Count: 1, HourlyRate: dec("30")}}}
		r := allocate(t, f)
		u := r.Commitments[0]
		// Paid 30 × 730 = 21900; used 200 of 730 hours: 6000.
		if !u.PaidMonthly.Equal(decimal.NewFromInt(21900)) || !u.UsedMonthly.Equal(decimal.NewFromInt(6000)) || !u.UnusedMonthly.Equal(decimal.NewFromInt(15900)) {
			t.Errorf("usage %+v", u)
		}
		if c := r.Instances["a"]; c.Share != 1 || !c.Parts[0].Hourly.Equal(decimal.NewFromInt(30)) {
			t.Errorf("covered %+v", c)
		}
	})
	t.Run("outside its term", func(t *testing.T) {
		end := now.Add(-time.Hour)
		start := end.AddDate(-1, 0, 0)
		f := &fleet.Fleet{Instances: []fleet.Instance{inst("a", fleet.AWS, "us-east-1", "p5.48xlarge")}, Commitments: []fleet.Held{
			{ID: "ri", Provider: fleet.AWS, Kind: fleet.HeldStandardRI, Term: "1y", Start: &start, End: &end, InstanceType: "p5.48xlarge", Count: 1, HourlyRate: dec("30")}}}
		r := allocate(t, f)
		if r.Instances["a"] != nil || r.Commitments[0].Active {
			t.Errorf("an expired RI applied: %+v", r.Commitments[0])
		}
	})
}

func TestSavingsPlans(t *testing.T) {
	t.Run("descending discount order", func(t *testing.T) {
		// p5 gets 40 % off (rate 33.024/h), g5.xlarge 20 % (0.8048/h). A plan
		// of 34/h covers the p5 first, then 0.976/h of the g5.
		f := &fleet.Fleet{Instances: []fleet.Instance{inst("g5", fleet.AWS, "us-east-1", "g5.xlarge"), inst("p5", fleet.AWS, "eu-west-1", "p5.48xlarge"), inst("p5b", fleet.AWS, "us-east-1", "p5.48xlarge")},
			Commitments: []fleet.Held{{ID: "sp", Provider: fleet.AWS, Kind: fleet.HeldComputeSavingsPlan, Term: "1y", HourlyCommitment: dec("33.5")}}}
		r := allocate(t, f)
		if c := r.Instances["p5b"]; c == nil || c.Share != 1 {
			t.Fatalf("p5 (largest discount) not covered first: %+v", c)
		}
		g := r.Instances["g5"]
		if g == nil || math.Abs(g.Share-0.476/0.8048) > 1e-9 {
			t.Errorf("g5 share %+v, want %v", g, 0.476/0.8048)
		}
		if r.Instances["p5"] != nil {
			t.Errorf("p5 in eu-west-1 has no rate in the catalog and no fallback: covered")
		}
		if u := r.Commitments[0]; u.Utilization != 1 || !u.UnusedMonthly.IsZero() || !u.PaidMonthly.Equal(decimal.RequireFromString("24455")) {
			t.Errorf("usage %+v", u)
		}
	})
	t.Run("EC2 instance plan: its family and region", func(t *testing.T) {
		f := &fleet.Fleet{Instances: []fleet.Instance{inst("p5", fleet.AWS, "us-east-1", "p5.48xlarge"), inst("g5", fleet.AWS, "us-east-1", "g5.12xlarge")},
			Commitments: []fleet.Held{{ID: "sp", Provider: fleet.AWS, Kind: fleet.HeldEC2SavingsPlan, Term: "1y", InstanceFamily: "g5", Scope: fleet.HeldScope{Region: "us-east-1"}, HourlyCommitment: dec("10")}}}
		r := allocate(t, f)
		if r.Instances["p5"] != nil || r.Instances["g5"] == nil || r.Instances["g5"].Share != 1 {
			t.Errorf("g5 plan: %+v", r.Instances)
		}
		u := r.Commitments[0]
		// g5.12xlarge at 30 % off: 3.9704/h of 10/h used.
		if math.Abs(u.Utilization-0.39704) > 1e-9 {
			t.Errorf("utilization %v", u.Utilization)
		}
	})
	t.Run("fallback discount", func(t *testing.T) {
		f := &fleet.Fleet{Instances: []fleet.Instance{inst("p5", fleet.AWS, "eu-west-1", "p5.48xlarge")},
			Commitments: []fleet.Held{{ID: "sp", Provider: fleet.AWS, Kind: fleet.HeldComputeSavingsPlan, Term: "1y", HourlyCommitment: dec("1")}}}
		f.APIVersion, f.Kind = fleet.APIVersion, fleet.Kind
		cat := testCatalog()
		cat.AddOffer(pricing.InstanceType{Provider: fleet.AWS, Name: "p5.48xlarge", GPUModel: "H100", GPUCount: 8}, "eu-west-1", "60", "")
		r := Allocate(Input{Fleet: f, Catalog: cat, Now: now, FallbackDiscount: func(fleet.Provider, string) (float64, bool) { return 0.5, true }})
		checkInvariants(t, f, r)
		if c := r.Instances["p5"]; c == nil || math.Abs(c.Share-1.0/30) > 1e-9 || len(r.Commitments[0].Notes) == 0 {
			t.Errorf("fallback: %+v %v", c, r.Commitments[0].Notes)
		}
	})
}

func TestAzureReservation(t *testing.T) {
	vm := inst("/subscriptions/s1/resourceGroups/ml/providers/Microsoft.Compute/virtualMachines/a", fleet.Azure, "eastus", "Standard_NC24ads_A100_v4")
	vm.Account = "s1"
	other := inst("/subscriptions/s1/resourceGroups/web/providers/Microsoft.Compute/virtualMachines/b", fleet.Azure, "eastus", "Standard_NC24ads_A100_v4")
	other.Account = "s1"
	f := &fleet.Fleet{Instances: []fleet.Instance{vm, other}, Commitments: []fleet.Held{
		{ID: "res", Provider: fleet.Azure, Kind: fleet.HeldReservation, Term: "1y", Scope: fleet.HeldScope{Level: "resource-group", Region: "eastus", Accounts: []string{"ML"}},
			InstanceType: "Standard_NC24ads_A100_v4", Count: 2, SizeFlexible: true, HourlyRate: dec("2.2")}}}
	r := allocate(t, f)
	if r.Instances[vm.ID] == nil || r.Instances[other.ID] != nil {
		t.Fatalf("resource group scope: %+v", r.Instances)
	}
	u := r.Commitments[0]
	if u.Utilization != 0.5 || !u.UnusedMonthly.Equal(decimal.NewFromInt(1606)) || len(u.Notes) == 0 {
		t.Errorf("usage %+v", u)
	}
}

func TestGCPCommitments(t *testing.T) {
	t.Run("resource CUD per resource", func(t *testing.T) {
		// 5 L4 and 52 vCPUs: the g2-standard-48 (4 L4, 48 vCPUs) takes 4 and
		// 48, the g2-standard-4 (1 L4, 4 vCPUs) the rest.
		f := &fleet.Fleet{Instances: []fleet.Instance{inst("big", fleet.GCP, "europe-west4", "g2-standard-48"), inst("small", fleet.GCP, "europe-west4", "g2-standard-4"), inst("small2", fleet.GCP, "europe-west4", "g2-standard-4")},
			Commitments: []fleet.Held{{ID: "cud", Provider: fleet.GCP, Kind: fleet.HeldResourceCUD, Term: "1y", Scope: fleet.HeldScope{Region: "europe-west4"},
				Resources: []fleet.HeldResource{{Type: "gpu", GPUModel: "nvidia-l4", Amount: 5}, {Type: "vcpu", Amount: 50}}, HourlyCommitment: dec("3")}}}
		r := allocate(t, f)
		if r.Instances["big"].Share != 1 || r.Instances["small"].Share != 0.5 || r.Instances["small2"] != nil {
			t.Errorf("big %+v small %+v small2 %+v", r.Instances["big"], r.Instances["small"], r.Instances["small2"])
		}
		u := r.Commitments[0]
		// 4.5 of 5 L4 and 50 of 50 vCPUs used: 0.95.
		if math.Abs(u.Utilization-0.95) > 1e-9 {
			t.Errorf("utilization %v", u.Utilization)
		}
		if got := u.Candidates; len(got) != 2 {
			t.Errorf("candidates %v", got)
		}
	})
	t.Run("spend CUD", func(t *testing.T) {
		f := &fleet.Fleet{Instances: []fleet.Instance{inst("big", fleet.GCP, "europe-west4", "g2-standard-48")},
			Commitments: []fleet.Held{{ID: "flex", Provider: fleet.GCP, Kind: fleet.HeldSpendCUD, Term: "3y", HourlyCommitment: dec("1.08")}}}
		r := allocate(t, f)
		// 46 % off 4.0/h is 2.16/h: 1.08/h covers half.
		if c := r.Instances["big"]; c == nil || math.Abs(c.Share-0.5) > 1e-9 {
			t.Errorf("spend CUD %+v", c)
		}
	})
	t.Run("reservation paid unused", func(t *testing.T) {
		f := &fleet.Fleet{Instances: []fleet.Instance{inst("big", fleet.GCP, "europe-west4", "g2-standard-48")},
			Commitments: []fleet.Held{
				{ID: "res", Provider: fleet.GCP, Kind: fleet.HeldGCPReservation, Scope: fleet.HeldScope{Region: "europe-west4"}, InstanceType: "g2-standard-48", Count: 2},
				{ID: "cud", Provider: fleet.GCP, Kind: fleet.HeldResourceCUD, Term: "1y", Scope: fleet.HeldScope{Region: "europe-west4"}, Resources: []fleet.HeldResource{{Type: "gpu", GPUModel: "L4", Amount: 2}}, HourlyCommitment: dec("1")}}}
		r := allocate(t, f)
		c := r.Instances["big"]
		// The CUD covers half; the reservation bills the other half at 4.0/h.
		if c == nil || c.Share != 1 || len(c.Parts) != 2 || c.Parts[1].CommitmentID != "res" || !c.Parts[1].Monthly.Equal(decimal.NewFromInt(1460)) {
			t.Fatalf("covered %+v", c)
		}
		u := r.Commitments[0]
		if !u.PaidMonthly.Equal(decimal.NewFromInt(5840)) || !u.UnusedMonthly.Equal(decimal.NewFromInt(2920)) {
			t.Errorf("reservation %+v", u)
		}
	})
}

// TestUnvalidatedCommitments: a scan's commitments are not checked as a
// file's are; nonsense is ignored with a note, never a panic or a NaN.
func TestUnvalidatedCommitments(t *testing.T) {
	neg := decimal.NewFromInt(-1)
	f := &fleet.Fleet{Instances: []fleet.Instance{inst("big", fleet.GCP, "europe-west4", "g2-standard-48"), inst("p5", fleet.AWS, "us-east-1", "p5.48xlarge")},
		Commitments: []fleet.Held{
			{ID: "cud", Provider: fleet.GCP, Kind: fleet.HeldResourceCUD, Resources: []fleet.HeldResource{{Type: "gpu", GPUModel: "L4", Amount: 0}}},
			{ID: "ri", Provider: fleet.AWS, Kind: fleet.HeldStandardRI, InstanceType: "p5.48xlarge", Count: math.NaN()},
			{ID: "sp", Provider: fleet.AWS, Kind: fleet.HeldComputeSavingsPlan, HourlyCommitment: &neg},
		}}
	r := Allocate(Input{Fleet: f, Catalog: testCatalog(), Now: now})
	if len(r.Instances) != 0 {
		t.Errorf("covered by nonsense: %+v", r.Instances)
	}
	for _, u := range r.Commitments {
		if u.Active || len(u.Notes) == 0 || !strings.HasPrefix(u.Notes[0], "ignored: ") {
			t.Errorf("%s: %+v", u.ID, u)
		}
	}
}

// TestCUDSeries: a resource-based CUD's vCPUs and memory cover only its
// machine series (an A2 commitment covers no G2 vCPU); its GPUs cover their
// model on any series, and without a series it fits any.
func TestCUDSeries(t *testing.T) {
	cud := func(series string, rs ...fleet.HeldResource) fleet.Held {
		return fleet.Held{ID: "cud-" + series, Provider: fleet.GCP, Kind: fleet.HeldResourceCUD, Term: "1y", InstanceFamily: series,
			Scope: fleet.HeldScope{Level: "region", Region: "europe-west4"}, Resources: rs, HourlyCommitment: dec("1")}
	}
	vcpuMem := []fleet.HeldResource{{Type: "vcpu", Amount: 48}, {Type: "memory", Amount: 192}}
	for _, tc := range []struct {
		name string
		held fleet.Held
		want float64
	}{
		{"another series covers nothing", cud("a2", vcpuMem...), 0},
		{"its own series", cud("g2", vcpuMem...), 1},
		{"no series fits any", cud("", vcpuMem...), 1},
		{"GPUs of the model on any series", cud("a2", fleet.HeldResource{Type: "gpu", GPUModel: "L4", Amount: 4}), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fleet.Fleet{Instances: []fleet.Instance{inst("g2", fleet.GCP, "europe-west4", "g2-standard-48")}, Commitments: []fleet.Held{tc.held}}
			r := allocate(t, f)
			got := 0.0
			if c := r.Instances["g2"]; c != nil {
				got = c.Share
			}
			if math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("covered %v, want %v", got, tc.want)
			}
		})
	}
	for typ, want := range map[string]string{"g2-standard-48": "g2", "a3-megagpu-8g": "a3-mega", "a3-ultragpu-8g": "a3-ultra", "a3-highgpu-8g": "a3", "n1-standard-8+2xT4": "n1"} {
		if got := MachineSeries(typ); got != want {
			t.Errorf("MachineSeries(%q) = %q, want %q", typ, got, want)
		}
	}
}

// TestAllocationIgnoresListingOrder: the same fleet listed in other orders
// (a scan lists what a file may list otherwise) allocates alike, and the
// busy machine of two twins is the one a single reservation covers.
func TestAllocationIgnoresListingOrder(t *testing.T) {
	busy := &fleet.Utilization{GPU: &fleet.Stats{Avg: 80, P95: 95, Max: 99}}
	idle := &fleet.Utilization{GPU: &fleet.Stats{Avg: 0, P95: 1, Max: 2}}
	mk := func(order []int) Result {
		ins := []fleet.Instance{inst("a-idle", fleet.AWS, "us-east-1", "g5.xlarge"), inst("b-busy", fleet.AWS, "us-east-1", "g5.xlarge"), inst("c-nodata", fleet.AWS, "us-east-1", "g5.xlarge")}
		ins[0].Utilization, ins[1].Utilization = idle, busy
		hs := []fleet.Held{
			{ID: "ri-2", Provider: fleet.AWS, Kind: fleet.HeldStandardRI, Term: "1y", InstanceType: "g5.xlarge", Count: 1, Scope: fleet.HeldScope{Level: "region", Region: "us-east-1"}, HourlyRate: dec("0.6")},
			{ID: "ri-1", Provider: fleet.AWS, Kind: fleet.HeldStandardRI, Term: "1y", InstanceType: "g5.xlarge", Count: 1, Scope: fleet.HeldScope{Level: "region", Region: "us-east-1"}, HourlyRate: dec("0.6")},
		}
		f := &fleet.Fleet{}
		for _, i := range order {
			f.Instances = append(f.Instances, ins[i])
		}
		f.Commitments = hs
		if order[0] == 2 {
			f.Commitments = []fleet.Held{hs[1], hs[0]}
		}
		return allocate(t, f)
	}
	shares := func(r Result) string {
		var b strings.Builder
		for _, id := range []string{"a-idle", "b-busy", "c-nodata"} {
			c := r.Instances[id]
			if c == nil {
				b.WriteString(id + ":0 ")
				continue
			}
			b.WriteString(id + ":" + decimal.NewFromFloat(c.Share).String())
			for _, p := range c.Parts {
				b.WriteString("/" + p.CommitmentID)
			}
			b.WriteString(" ")
		}
		return b.String()
	}
	want := shares(mk([]int{0, 1, 2}))
	for _, order := range [][]int{{2, 1, 0}, {1, 0, 2}, {2, 0, 1}} {
		if got := shares(mk(order)); got != want {
			t.Errorf("order %v: %s, in file order %s", order, got, want)
		}
	}
	if !strings.Contains(want, "a-idle:0 ") || strings.Contains(want, "b-busy:0 ") || strings.Contains(want, "c-nodata:0 ") {
		t.Errorf("two reservations among an idle, a busy and a machine without data: %s; want the idle one left uncovered", want)
	}
}

// A commitment never covers a managed AI item of a service its bill does
// not apply to, and covers the one it does.
func TestManagedItemsCoverage(t *testing.T) {
	cat := testCatalog()
	cat.AddOffer(pricing.InstanceType{Provider: fleet.AWS, Name: "ml.g5.xlarge", GPUModel: "A10G", GPUCount: 1, Service: fleet.SageMaker}, "us-east-1", "1.408", "")
	endpoint := inst("arn:aws:sagemaker:us-east-1:1:endpoint/e/variant/v", fleet.AWS, "us-east-1", "ml.g5.xlarge")
	endpoint.Managed = &fleet.Managed{Service: fleet.SageMaker, Kind: fleet.KindEndpoint, Replicas: &fleet.Replicas{Current: 2}}
	vm := inst("i-1", fleet.AWS, "us-east-1", "g5.xlarge")
	t.Run("compute savings plan: the VM only", func(t *testing.T) {
		f := &fleet.Fleet{Instances: []fleet.Instance{endpoint, vm},
			Commitments: []fleet.Held{{ID: "sp", Provider: fleet.AWS, Kind: fleet.HeldComputeSavingsPlan, Term: "1y", HourlyCommitment: dec("100")}}}
		// A fallback discount for every type: only the bill's rules keep it off.
		r := Allocate(Input{Fleet: f, Catalog: cat, Now: now, FallbackDiscount: func(fleet.Provider, string) (float64, bool) { return 0.3, true }})
		checkInvariants(t, f, r)
		if r.Instances[endpoint.ID] != nil {
			t.Errorf("a Compute Savings Plan covers a SageMaker endpoint: %+v", r.Instances[endpoint.ID])
		}
		if r.Instances[vm.ID] == nil {
			t.Errorf("the VM beside it is not covered")
		}
	})
	t.Run("SageMaker Savings Plan: the endpoint, never the VM", func(t *testing.T) {
		f := &fleet.Fleet{Instances: []fleet.Instance{endpoint, vm},
			Commitments: []fleet.Held{{ID: "smsp", Provider: fleet.AWS, Kind: fleet.HeldSageMakerSavingsPlan, Term: "1y", HourlyCommitment: dec("100")}}}
		r := Allocate(Input{Fleet: f, Catalog: cat, Now: now, FallbackDiscount: func(fleet.Provider, string) (float64, bool) { return 0.3, true }})
		checkInvariants(t, f, r)
		if r.Instances[vm.ID] != nil {
			t.Errorf("a SageMaker Savings Plan covers an EC2 VM")
		}
		if r.Instances[endpoint.ID] == nil {
			t.Errorf("a SageMaker Savings Plan does not cover a SageMaker endpoint")
		}
	})
	t.Run("Azure VM reservation covers Azure ML compute of its size", func(t *testing.T) {
		aml := inst("/subscriptions/s1/resourceGroups/ml/providers/Microsoft.MachineLearningServices/workspaces/w/computes/c", fleet.Azure, "eastus", "Standard_NC24ads_A100_v4")
		aml.Account = "s1"
		aml.Managed = &fleet.Managed{Service: fleet.AzureML, Kind: fleet.KindComputeCluster, Replicas: &fleet.Replicas{Current: 1}}
		f := &fleet.Fleet{Instances: []fleet.Instance{aml}, Commitments: []fleet.Held{
			{ID: "res", Provider: fleet.Azure, Kind: fleet.HeldReservation, Term: "1y", Scope: fleet.HeldScope{Region: "eastus"},
				InstanceType: "Standard_NC24ads_A100_v4", Count: 1, HourlyRate: dec("2.2")}}}
		if c := allocateWith(t, cat, f).Instances[aml.ID]; c == nil || c.Share != 1 {
			t.Errorf("Azure ML cluster node not covered by the reservation of its size: %+v", c)
		}
	})
	t.Run("Vertex endpoint: no CUD", func(t *testing.T) {
		vx := inst("projects/p/locations/us-central1/endpoints/1/deployedModels/2", fleet.GCP, "europe-west4", "g2-standard-4")
		vx.Managed = &fleet.Managed{Service: fleet.VertexAI, Kind: fleet.KindEndpoint, Replicas: &fleet.Replicas{Current: 1}, PriceType: "vertex-ai/prediction/g2-standard-4"}
		cat.AddOffer(pricing.InstanceType{Provider: fleet.GCP, Name: "vertex-ai/prediction/g2-standard-4", GPUModel: "L4", GPUCount: 1, Service: fleet.VertexAI}, "europe-west4", "0.92", "")
		f := &fleet.Fleet{Instances: []fleet.Instance{vx}, Commitments: []fleet.Held{
			{ID: "cud", Provider: fleet.GCP, Kind: fleet.HeldSpendCUD, Term: "1y", HourlyCommitment: dec("5")}}}
		if c := allocateWith(t, cat, f).Instances[vx.ID]; c != nil {
			t.Errorf("a spend CUD covers a Vertex AI endpoint: %+v", c)
		}
	})
}
