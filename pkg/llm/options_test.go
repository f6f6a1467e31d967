package llm

import (
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
	"github.com/gpufinops/gpufinops/pricing/pricingtest"
)

// fakeCatalog is small enough to check by hand.
func fakeCatalog() *pricingtest.Catalog {
	c := &pricingtest.Catalog{}
	c.AddGPU(pricing.GPUSpec{Name: "A10G", Vendor: "nvidia", MemoryGiB: 24, MemoryBandwidthGBs: 600})
	c.AddGPU(pricing.GPUSpec{Name: "T4", Vendor: "nvidia", MemoryGiB: 16, MemoryBandwidthGBs: 320, FP16TFLOPS: f64(65), INT8TOPS: f64(130)})
	c.AddGPU(pricing.GPUSpec{Name: "L4", Vendor: "nvidia", MemoryGiB: 24, MemoryBandwidthGBs: 300, FP16TFLOPS: f64(121)})
	c.AddGPU(pricing.GPUSpec{Name: "H100", Vendor: "nvidia", MemoryGiB: 80, MemoryBandwidthGBs: 3350, FP16TFLOPS: f64(989.5)})
	c.AddGPU(pricing.GPUSpec{Name: "MI300X", Vendor: "amd", MemoryGiB: 192, MemoryBandwidthGBs: 5300})
	c.AddGPU(pricing.GPUSpec{Name: "Inferentia2", Vendor: "aws", MemoryGiB: 32})
	c.AddGPU(pricing.GPUSpec{Name: "Gaudi", Vendor: "intel", MemoryGiB: 32, MemoryBandwidthGBs: 1000})
	c.AddGPU(pricing.GPUSpec{Name: "K80", Vendor: "nvidia", MemoryGiB: 12})
	typ := func(p fleet.Provider, name, gpu string, count, mem float64) pricing.InstanceType {
		return pricing.InstanceType{Provider: p, Name: name, GPUModel: gpu, GPUCount: count, GPUMemoryGiB: mem}
	}
	c.AddOffer(typ(fleet.AWS, "g4dn.xlarge", "T4", 1, 16), "us-east-1", "0.526", "0.2")       // too small for 8B fp16
	c.AddOffer(typ(fleet.AWS, "g5.xlarge", "A10G", 1, 22.3515625), "us-east-1", "1.006", "")  // cheapest fit
	c.AddOffer(typ(fleet.AWS, "g5.xlarge", "A10G", 1, 22.3515625), "us-west-2", "1.100", "")  // dearer region
	c.AddOffer(typ(fleet.AWS, "g5.2xlarge", "A10G", 1, 22.3515625), "us-east-1", "1.212", "") // same GPU, bigger host
	c.AddOffer(typ(fleet.AWS, "inf2.xlarge", "Inferentia2", 1, 32), "us-east-1", "0.7582", "")
	c.AddOffer(typ(fleet.AWS, "dl1.24xlarge", "Gaudi", 8, 32), "us-east-1", "0.5", "")
	c.AddOffer(typ(fleet.AWS, "p2.xlarge", "K80", 1, 12), "us-east-1", "0.1", "")
	c.AddOffer(typ(fleet.AWS, "g6f.large", "L4", 0.5, 11.2), "us-east-1", "0.05", "")    // fractional
	c.AddOffer(typ(fleet.AWS, "g6.xlarge", "L4", 1, 22.3515625), "us-east-1", "", "0.3") // spot only
	c.AddOffer(typ(fleet.GCP, "g2-standard-4", "L4", 1, 24), "us-central1", "0.7068", "")
	c.AddOffer(typ(fleet.GCP, "a3-highgpu-8g", "H100", 8, 80), "us-central1", "88.25", "")
	c.AddOffer(typ(fleet.Azure, "Standard_ND96isr_MI300X_v5", "MI300X", 8, 192), "eastus", "48.0", "")
	c.AddOffer(typ(fleet.Azure, "Standard_NC4as_T4_v3", "T4", 1, 16), "eastus", "0.526", "")
	c.AddOffer(typ(fleet.Azure, "Standard_NC64as_T4_v3", "T4", 4, 16), "eastus", "4.352", "")
	return c
}

func TestOptionsFake(t *testing.T) {
	m := mustModel(t, "llama-3.1-8b")
	opts := Options(fakeCatalog(), m, FP16, 4096, 1, pricing.Query{})
	type row struct {
		provider fleet.Provider
		region   string
		typ      string
		tp, reps int
		hourly   string
	}
	want := []row{
		{fleet.GCP, "us-central1", "g2-standard-4", 1, 1, "0.7068"},
		{fleet.AWS, "us-east-1", "g5.xlarge", 1, 1, "1.006"},
		{fleet.Azure, "eastus", "Standard_NC64as_T4_v3", 2, 2, "4.352"},
	}
	if len(opts) != len(want) {
		t.Fatalf("got %d options: %+v", len(opts), opts)
	}
	for i, w := range want {
		o := opts[i]
		if o.Provider != w.provider || o.Region != w.region || o.InstanceType != w.typ || o.TensorParallel != w.tp ||
			o.Replicas != w.reps || !o.Hourly.Equal(decimal.RequireFromString(w.hourly)) {
			t.Errorf("option %d = %s %s %s tp %d × %d at %s; want %+v", i, o.Provider, o.Region, o.InstanceType,
				o.TensorParallel, o.Replicas, o.Hourly, w)
		}
		if o.AsOf != "2026-11-30" || o.Bound != BandwidthBound {
			t.Errorf("option %d: asOf %q, bound %q", i, o.AsOf, o.Bound)
		}
	}
	// g5.xlarge: 0.65 × 600e9 / 16,596,870,912 B = 23.4984 tokens/s;
	// 1.006 / (23.4984 × 3600) × 1e6 = 11.892 $/1M tokens.
	aws := opts[1]
	near(t, "aws tokens/s", aws.TokensPerSecond, 23.4984, 1e-4)
	near(t, "aws $/1M", aws.CostPer1MTokens.InexactFloat64(), 1.006e6/(aws.TokensPerSecond*3600), 1e-8)
	near(t, "aws $/1M", aws.CostPer1MTokens.InexactFloat64(), 11.8921, 1e-4)
	near(t, "aws required", aws.RequiredGiB, 16.9527, 1e-4)
	// Azure's 4 × T4 runs two replicas of two GPUs: 2 × 0.65 × 2 × 320e9 / 16,596,870,912 B.
	near(t, "azure tokens/s", opts[2].TokensPerSecond, 2*0.65*2*320e9/16596870912, 1e-9)
}

func TestOptionsPerRegionAndQuery(t *testing.T) {
	m := mustModel(t, "llama-3.1-8b")
	w := Workload{Precision: FP16, Context: 4096, Batch: 1}
	plan := w.Plan(fakeCatalog(), m, pricing.Query{Provider: fleet.AWS}, true)
	if len(plan.Options) != 2 {
		t.Fatalf("per region: %+v", plan.Options)
	}
	if o := plan.Options[0]; o.Region != "us-east-1" || o.InstanceType != "g5.xlarge" {
		t.Errorf("first = %s %s", o.Region, o.InstanceType)
	}
	if o := plan.Options[1]; o.Region != "us-west-2" || o.InstanceType != "g5.xlarge" {
		t.Errorf("second = %s %s", o.Region, o.InstanceType)
	}
	// int4 fits the T4 (4.015e9 B = 3.74 GiB + 0.5 + 1): the cheaper g4dn.xlarge wins.
	opts := Options(fakeCatalog(), m, INT4, 4096, 1, pricing.Query{Provider: fleet.AWS, Region: "us-east-1"})
	if len(opts) != 1 || opts[0].InstanceType != "g4dn.xlarge" {
		t.Errorf("int4 on aws us-east-1: %+v", opts)
	}
	// Nothing matches the query: no options and no multi-instance verdict.
	plan = w.Plan(fakeCatalog(), m, pricing.Query{Region: "mars-1"}, false)
	if len(plan.Options) != 0 || len(plan.MultiInstance) != 0 {
		t.Errorf("no offers: %+v", plan)
	}
	// An invalid workload plans nothing.
	if p := (Workload{Precision: FP16}).Plan(fakeCatalog(), m, pricing.Query{}, false); len(p.Options) != 0 {
		t.Errorf("invalid workload: %+v", p.Options)
	}
}

// TestOptionsExcluded checks that accelerators without GPU arithmetic,
// fractional GPUs, unknown bandwidth and spot-only offers never appear.
func TestOptionsExcluded(t *testing.T) {
	m := mustModel(t, "llama-3.2-1b") // 1.23e9 × 0.5 B: fits anything
	plan := Workload{Precision: INT4, Context: 1024, Batch: 1}.Plan(fakeCatalog(), m, pricing.Query{}, true)
	for _, o := range plan.Options {
		switch o.GPUModel {
		case "Inferentia2", "Gaudi", "K80":
			t.Errorf("%s offered (%s)", o.GPUModel, o.InstanceType)
		}
		if o.InstanceType == "g6f.large" || o.InstanceType == "g6.xlarge" {
			t.Errorf("%s offered", o.InstanceType)
		}
	}
	if len(plan.Options) != 4 {
		t.Errorf("got %d options, want one per provider and region (4)", len(plan.Options))
	}
}

func TestMultiInstanceFake(t *testing.T) {
	// Llama-3.1-405B at fp32: 1,512 GiB of weights. The largest types are
	// Azure's 8 × MI300X (1,536 GiB, 1,382 usable) and GCP's 8 × H100 (640,
	// 576 usable).
	m := mustModel(t, "llama-3.1-405b")
	w := Workload{Precision: FP32, Context: 4096, Batch: 1}
	plan := w.Plan(fakeCatalog(), m, pricing.Query{}, false)
	if len(plan.Options) != 0 {
		t.Fatalf("options: %+v", plan.Options)
	}
	need := plan.Need.RequiredGiB // 1512.1 + 3.94 + 151.2
	near(t, "required", need, 405.9e9*4/(1<<30)*1.1+2*126*8*128*4096*4.0/(1<<30), 1e-6)
	byProvider := map[fleet.Provider]MultiInstance{}
	for _, mi := range plan.MultiInstance {
		byProvider[mi.Provider] = mi
	}
	if mi := byProvider[fleet.Azure]; mi.InstanceType != "Standard_ND96isr_MI300X_v5" || mi.Instances != 2 ||
		!mi.TotalHourly.Equal(decimal.RequireFromString("96")) {
		t.Errorf("azure: %+v", mi)
	}
	if mi := byProvider[fleet.GCP]; mi.InstanceType != "a3-highgpu-8g" || mi.Instances != 3 {
		t.Errorf("gcp: %+v", mi)
	}
	// AWS's largest servable type is one A10G: 20.1 usable GiB, 83 instances.
	if mi := byProvider[fleet.AWS]; mi.InstanceType != "g5.xlarge" || mi.Region != "us-east-1" || mi.Instances != 83 {
		t.Errorf("aws: %+v", mi)
	}
	if got, want := byProvider[fleet.Azure].String(),
		"needs more than one instance: at least 2 × Standard_ND96isr_MI300X_v5 (8 × MI300X) on azure in eastus"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if plan.MultiInstance[0].Provider != fleet.AWS {
		// 83 × 1.006 = 83.498 < 96 < 3 × 88.25.
		t.Errorf("multi-instance order: %+v", plan.MultiInstance)
	}
}

func TestCostPer1MTokens(t *testing.T) {
	// 1 $/h at 1000 tokens/s: 1 / 3,600,000 × 1e6 = 0.2777… $/1M tokens.
	got := CostPer1MTokens(decimal.NewFromInt(1), 1000)
	if !got.Equal(decimal.RequireFromString("0.2777777778")) {
		t.Errorf("CostPer1MTokens = %s", got)
	}
	if !CostPer1MTokens(decimal.NewFromInt(1), 0).IsZero() {
		t.Error("zero tokens/s should cost zero, not divide by zero")
	}
}

// TestRealCatalog sanity-checks the plans against the embedded catalog.
func TestRealCatalog(t *testing.T) {
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	t.Run("70B int4 on one 48 GB-class or 80 GB GPU", func(t *testing.T) {
		// 35.3e9 B = 32.9 GiB + 1.25 KV + 3.3 overhead = 37.4 GiB ≤ 44.7 × 0.9 = 40.2.
		m := mustModel(t, "llama-3.1-70b")
		opts := Options(cat, m, INT4, 4096, 1, pricing.Query{})
		if len(opts) != 3 {
			t.Fatalf("want one option per cloud: %+v", opts)
		}
		single := 0
		for _, o := range opts {
			if float64(o.TensorParallel)*o.GPUMemoryGiB*UsableFraction < o.RequiredGiB {
				t.Errorf("%s %s does not hold %.1f GiB", o.Provider, o.InstanceType, o.RequiredGiB)
			}
			if o.GPUCount == 1 && o.GPUMemoryGiB >= 44 {
				single++
			}
		}
		if single == 0 {
			t.Errorf("no single 48 GB-class or 80 GB GPU: %+v", opts)
		}
	})
	t.Run("8B fp16 on AWS is one A10G or L4", func(t *testing.T) {
		opts := Options(cat, mustModel(t, "llama-3.1-8b"), FP16, 4096, 1, pricing.Query{Provider: fleet.AWS, Region: "us-east-1"})
		if len(opts) != 1 || opts[0].GPUCount != 1 || opts[0].GPUModel != "A10G" && opts[0].GPUModel != "L4" {
			t.Errorf("%+v", opts)
		}
	})
	t.Run("405B fp16 needs H200-class memory", func(t *testing.T) {
		// 756 GiB of weights + 76 overhead + 2 KV = 834 GiB > 8 × 80 × 0.9 = 576:
		// only 8 × H200 (141 GiB) or larger hold it; elsewhere several instances.
		plan := Workload{Precision: FP16, Context: 4096, Batch: 1}.Plan(cat, mustModel(t, "llama-3.1-405b"), pricing.Query{}, false)
		if len(plan.Options) == 0 {
			t.Fatal("no single instance holds 405B at fp16")
		}
		for _, o := range plan.Options {
			if o.GPUCount*o.GPUMemoryGiB*UsableFraction < o.RequiredGiB || o.GPUMemoryGiB < 140 {
				t.Errorf("%s %s: %v × %s", o.Provider, o.InstanceType, o.GPUCount, o.GPUModel)
			}
		}
		for _, mi := range plan.MultiInstance {
			if mi.Instances < 2 {
				t.Errorf("%+v", mi)
			}
		}
		if len(plan.Options)+len(plan.MultiInstance) != 3 {
			t.Errorf("want every cloud answered: %d options, %d multi", len(plan.Options), len(plan.MultiInstance))
		}
	})
	for _, tc := range []struct {
		model string
		p     Precision
	}{{"deepseek-v3", FP32}} { // 2.7 TB: more than 8 × B300 (p6-b300), 8 × MI300X or 8 × B200 hold
		t.Run(tc.model+" "+string(tc.p)+" needs more than one instance", func(t *testing.T) {
			plan := Workload{Precision: tc.p, Context: 4096, Batch: 1}.Plan(cat, mustModel(t, tc.model), pricing.Query{}, false)
			if len(plan.Options) != 0 || len(plan.MultiInstance) != 3 {
				t.Fatalf("options %+v, multi %+v", plan.Options, plan.MultiInstance)
			}
			for _, mi := range plan.MultiInstance {
				if mi.Instances < 2 || mi.GPUCount != 8 || !strings.HasPrefix(mi.String(), "needs more than one instance: at least ") {
					t.Errorf("%+v", mi)
				}
			}
		})
	}
	t.Run("only NVIDIA and AMD GPUs with bandwidth", func(t *testing.T) {
		plan := Workload{Precision: INT4, Context: 1024, Batch: 1}.Plan(cat, mustModel(t, "llama-3.2-1b"), pricing.Query{}, true)
		if len(plan.Options) < 20 {
			t.Fatalf("only %d options", len(plan.Options))
		}
		for _, o := range plan.Options {
			g, _ := cat.GPU(o.GPUModel)
			if g.Vendor != "nvidia" && g.Vendor != "amd" || g.MemoryBandwidthGBs <= 0 || o.GPUCount < 1 {
				t.Errorf("%s %s: %s (%s)", o.Provider, o.InstanceType, o.GPUModel, g.Vendor)
			}
		}
	})
}

func TestMultiInstanceWhereNothingFits(t *testing.T) {
	// Llama-3.1-70B at fp16 needs 131.5 + 1.25 + 13.15 = 145.9 GiB: GCP's
	// 8 × H100 holds it at degree 4 (2 × 72 = 144 is short), Azure's MI300X on
	// one GPU (172.8); AWS, with A10Gs and T4s only, gets a multi-instance verdict.
	plan := Workload{Precision: FP16, Context: 4096, Batch: 1}.Plan(fakeCatalog(), mustModel(t, "llama-3.1-70b"), pricing.Query{}, false)
	if len(plan.Options) != 2 || plan.Options[0].Provider != fleet.Azure || plan.Options[0].TensorParallel != 1 ||
		plan.Options[0].Replicas != 8 || plan.Options[1].Provider != fleet.GCP || plan.Options[1].TensorParallel != 4 ||
		plan.Options[1].Replicas != 2 {
		t.Errorf("options: %+v", plan.Options)
	}
	if len(plan.MultiInstance) != 1 || plan.MultiInstance[0].Provider != fleet.AWS || plan.MultiInstance[0].Instances != 8 {
		t.Errorf("multi: %+v", plan.MultiInstance)
	}
}
