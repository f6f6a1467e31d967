package llm

import (
	"math"
	"strings"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
)

func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %.6f, want %.6f (±%g)", what, got, want, tol)
	}
}

func mustModel(t *testing.T, name string) Model {
	t.Helper()
	m, ok := Lookup(name)
	if !ok {
		t.Fatalf("Lookup(%q) found nothing", name)
	}
	return m
}

func TestParsePrecision(t *testing.T) {
	for _, tc := range []struct {
		in    string
		want  Precision
		bytes float64
	}{
		{"fp32", FP32, 4}, {"FLOAT32", FP32, 4}, {"fp16", FP16, 2}, {"half", FP16, 2}, {" BF16 ", BF16, 2},
		{"bfloat16", BF16, 2}, {"fp8", FP8, 1}, {"Int8", INT8, 1}, {"int4", INT4, 0.5},
	} {
		got, err := ParsePrecision(tc.in)
		if err != nil || got != tc.want || got.Bytes() != tc.bytes {
			t.Errorf("ParsePrecision(%q) = %q (%v bytes), %v; want %q (%v bytes)", tc.in, got, got.Bytes(), err, tc.want, tc.bytes)
		}
	}
	for _, in := range []string{"", "fp64", "int3", "q4_k_m"} {
		if _, err := ParsePrecision(in); err == nil || !strings.Contains(err.Error(), "want fp32, fp16, bf16, fp8, int8 or int4") {
			t.Errorf("ParsePrecision(%q) err = %v", in, err)
		}
	}
}

func TestDefaultKVPrecision(t *testing.T) {
	for p, want := range map[Precision]Precision{FP32: FP32, FP16: FP16, BF16: BF16, FP8: FP16, INT8: FP16, INT4: FP16} {
		if got := DefaultKVPrecision(p); got != want {
			t.Errorf("DefaultKVPrecision(%s) = %s, want %s", p, got, want)
		}
	}
}

func TestParseParams(t *testing.T) {
	for in, want := range map[string]float64{
		"13B": 13e9, "1.5b": 1.5e9, "350M": 350e6, "70e9": 70e9, "7000000000": 7e9, "1.2T": 1.2e12,
		" 8 B ": 8e9, "405b": 405e9, "2000k": 2e6,
	} {
		got, err := ParseParams(in)
		if err != nil || math.Abs(got-want) > want*1e-12 {
			t.Errorf("ParseParams(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for in, wantErr := range map[string]string{
		"":      "empty parameter count",
		"-3":    "parameter count -3 is not positive",
		"0":     "parameter count 0 is not positive",
		"-1.5B": "parameter count -1.5B is not positive",
		"13":    "parameter count 13 is under a million: add a unit, e.g. 13B",
		"abc":   `"abc" is not a parameter count`,
		"13X":   `"13X" is not a parameter count`,
		"B":     `"B" is not a parameter count`,
		"NaN":   `"NaN" is not a parameter count`,
		"Inf":   `"Inf" is not a parameter count`,
		"20T":   "parameter count 20T is over ten trillion",
	} {
		_, err := ParseParams(in)
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("ParseParams(%q) err = %v, want %q", in, err, wantErr)
		}
	}
}

func TestFormatParams(t *testing.T) {
	for n, want := range map[float64]string{8.03e9: "8.03B", 13e9: "13B", 350e6: "350M", 1.2e12: "1.2T", 405.9e9: "405.9B", 1.23456e9: "1.235B"} {
		if got := FormatParams(n); got != want {
			t.Errorf("FormatParams(%v) = %q, want %q", n, got, want)
		}
	}
}

func TestLookup(t *testing.T) {
	for in, want := range map[string]string{
		"llama-3.1-8b":                            "Llama-3.1-8B",
		"meta-llama/Llama-3.1-8B-Instruct":        "Llama-3.1-8B",
		"Meta-Llama-3.1-8B-Instruct":              "Llama-3.1-8B",
		"LLAMA 3.1 8B":                            "Llama-3.1-8B",
		"mistral-7b-instruct":                     "Mistral-7B",
		"mistralai/Mistral-7B-Instruct-v0.3":      "Mistral-7B",
		"mixtral-8x22b-instruct":                  "Mixtral-8x22B",
		"Qwen/Qwen2.5-72B-Instruct":               "Qwen2.5-72B",
		"qwen2.5-7b":                              "Qwen2.5-7B",
		"google/gemma-2-9b-it":                    "Gemma-2-9B",
		"deepseek-ai/DeepSeek-R1":                 "DeepSeek-R1",
		"deepseek-v3":                             "DeepSeek-V3",
		"microsoft/Phi-3-mini-4k-instruct":        "Phi-3-mini",
		"phi-3-medium-128k-instruct":              "Phi-3-medium",
		"llama-3.3-70b-instruct":                  "Llama-3.3-70B",
		"meta-llama/Llama-3.2-1B-Instruct":        "Llama-3.2-1B",
		"meta-llama/Meta-Llama-3.1-405B-Instruct": "Llama-3.1-405B",
	} {
		m, ok := Lookup(in)
		if !ok || m.Name != want {
			t.Errorf("Lookup(%q) = %q, %v; want %q", in, m.Name, ok, want)
		}
	}
	for _, in := range []string{"", "gpt-4", "llama-3.1-9b", "llama"} {
		if m, ok := Lookup(in); ok {
			t.Errorf("Lookup(%q) = %q, want nothing", in, m.Name)
		}
	}
}

// TestModelTable checks every row is complete and consistent, and that every
// name and alias finds its own row.
func TestModelTable(t *testing.T) {
	seen := map[string]bool{}
	for _, m := range Models() {
		if seen[m.Name] {
			t.Errorf("%s listed twice", m.Name)
		}
		seen[m.Name] = true
		if m.Params <= 0 || m.ActiveParams <= 0 || m.ActiveParams > m.Params || m.Layers <= 0 || m.Hidden <= 0 ||
			m.Heads <= 0 || m.KVHeads <= 0 || m.HeadDim <= 0 || m.MaxContext <= 0 || m.Source == "" || m.Estimated {
			t.Errorf("%s: incomplete row %+v", m.Name, m)
		}
		if m.Heads%m.KVHeads != 0 {
			t.Errorf("%s: %d heads not a multiple of %d KV heads", m.Name, m.Heads, m.KVHeads)
		}
		for _, n := range append([]string{m.Name}, m.Aliases...) {
			if got, ok := Lookup(n); !ok || got.Name != m.Name {
				t.Errorf("Lookup(%q) = %q, want %q", n, got.Name, m.Name)
			}
		}
	}
	for _, want := range []string{"Llama-3.2-1B", "Llama-3.2-3B", "Llama-3.1-8B", "Llama-3.1-70B", "Llama-3.3-70B", "Llama-3.1-405B",
		"Mistral-7B", "Mixtral-8x7B", "Mixtral-8x22B", "Qwen2.5-7B", "Qwen2.5-14B", "Qwen2.5-32B", "Qwen2.5-72B",
		"Gemma-2-2B", "Gemma-2-9B", "Gemma-2-27B", "DeepSeek-V3", "DeepSeek-R1", "Phi-3-mini", "Phi-3-medium"} {
		if !seen[want] {
			t.Errorf("%s missing", want)
		}
	}
	if m := mustModel(t, "Mixtral-8x7B"); !m.MoE() || m.ActiveParams != 12.9e9 {
		t.Errorf("Mixtral-8x7B: MoE %v, active %v", m.MoE(), m.ActiveParams)
	}
	if m := mustModel(t, "Llama-3.1-8B"); m.MoE() || m.ActiveParams != m.Params {
		t.Errorf("Llama-3.1-8B: MoE %v, active %v", m.MoE(), m.ActiveParams)
	}
	// Models returns copies: changing one leaves the table alone.
	ms := Models()
	ms[0].Aliases[0] = "changed"
	if m := mustModel(t, ms[0].Name); m.Aliases[0] == "changed" {
		t.Error("Models shares its alias slices with the table")
	}
}

func TestSuggest(t *testing.T) {
	for in, want := range map[string]string{
		"llama-3.1-80b": "Llama-3.1-8B",
		"lama-3.1-70b":  "Llama-3.1-70B",
		"mixtral":       "Mixtral-8x7B",
		"qwen2.5-70b":   "Qwen2.5-72B",
		"deepseek":      "DeepSeek-V3",
	} {
		got := Suggest(in)
		if len(got) == 0 || len(got) > 3 || !contains(got, want) {
			t.Errorf("Suggest(%q) = %q, want it to include %q", in, got, want)
		}
	}
	for _, in := range []string{"", "gpt-4", "claude"} {
		if got := Suggest(in); len(got) != 0 {
			t.Errorf("Suggest(%q) = %q, want nothing", in, got)
		}
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func TestEstimateModel(t *testing.T) {
	m := EstimateModel(13e9)
	// 13B is nearest Phi-3-medium (14B): |ln(13/14)| = 0.074 < |ln(13/14.7)| = 0.123.
	if !m.Estimated || m.ShapeFrom != "Phi-3-medium" || m.Name != "13B" || m.Params != 13e9 || m.ActiveParams != 13e9 {
		t.Fatalf("EstimateModel(13B) = %+v", m)
	}
	if m.Layers != 40 || m.KVHeads != 10 || m.HeadDim != 128 || m.Heads != 40 {
		t.Errorf("13B shape = %d layers, %d/%d heads × %d", m.Layers, m.Heads, m.KVHeads, m.HeadDim)
	}
	// Mixtures of experts and latent attention are never borrowed from: 600B
	// takes Llama-3.1-405B's shape, not DeepSeek-V3's.
	if m := EstimateModel(600e9); m.ShapeFrom != "Llama-3.1-405B" {
		t.Errorf("EstimateModel(600B) shape from %s", m.ShapeFrom)
	}
	if m := EstimateModel(1e6); m.ShapeFrom != "Llama-3.2-1B" {
		t.Errorf("EstimateModel(1M) shape from %s", m.ShapeFrom)
	}
	// 70.6B is both Llama-3.1-70B and Llama-3.3-70B; the first row wins.
	if m := EstimateModel(70e9); m.ShapeFrom != "Llama-3.1-70B" {
		t.Errorf("EstimateModel(70B) shape from %s", m.ShapeFrom)
	}
}

// TestRequirementLlama8B is the worked example of docs/fit.md.
func TestRequirementLlama8B(t *testing.T) {
	n := Requirement(mustModel(t, "llama-3.1-8b"), FP16, 4096, 1)
	// 8.03e9 × 2 B = 16.06e9 B = 14.9570 GiB.
	near(t, "weights", n.WeightsGiB, 16.06e9/(1<<30), 1e-9)
	near(t, "weights", n.WeightsGiB, 14.9570, 5e-5)
	// 2 × 32 layers × 8 KV heads × 128 × 4096 tokens × 1 × 2 B = 536,870,912 B = 0.5 GiB.
	near(t, "kv", n.KVCacheGiB, 0.5, 1e-12)
	// max(1, 10 % × 14.957) = 1.4957.
	near(t, "overhead", n.OverheadGiB, 1.49570, 5e-5)
	near(t, "required", n.RequiredGiB, 16.9527, 1e-4)
	if n.Heads != 32 || n.KVShards != 8 {
		t.Errorf("heads %d, KV shards %d", n.Heads, n.KVShards)
	}
}

func TestRequirement(t *testing.T) {
	tests := []struct {
		model                      string
		w                          Workload
		weights, kv, overhead, tol float64
	}{
		// 70.6e9 × 0.5 B = 35.3e9 B; KV stays fp16: 2 × 80 × 8 × 128 × 4096 × 2 B = 1.25 GiB.
		{"llama-3.1-70b", Workload{Precision: INT4, Context: 4096, Batch: 1}, 32.8756, 1.25, 3.28756, 1e-4},
		// Same with an int8 KV cache: half the KV.
		{"llama-3.1-70b", Workload{Precision: INT4, KVPrecision: INT8, Context: 4096, Batch: 1}, 32.8756, 0.625, 3.28756, 1e-4},
		// fp32 weights keep an fp32 KV cache: 2 × 16 × 8 × 64 × 2048 × 4 × 4 B = 0.5 GiB; overhead floor 1 GiB.
		{"llama-3.2-1b", Workload{Precision: FP32, Context: 2048, Batch: 4}, 4.58215, 0.5, 1, 1e-4},
		// Small weights: the 1 GiB floor. 2.61e9 × 0.5 B = 1.2154 GiB; KV 2 × 26 × 4 × 256 × 8192 × 2 B = 0.8125 GiB.
		{"gemma-2-2b", Workload{Precision: INT4, Context: 8192, Batch: 1}, 1.21537, 0.8125, 1, 1e-4},
		// MoE: memory holds all 46.7e9 parameters. 46.7e9 × 1 B = 43.4928 GiB; KV 2 × 32 × 8 × 128 × 32768 × 8 × 2 B = 32 GiB.
		{"mixtral-8x7b", Workload{Precision: INT8, Context: 32768, Batch: 8}, 43.4928, 32, 4.34928, 1e-4},
		// MLA: 61 layers × (512 + 64) × 4096 × 2 B = 287,834,112 B = 0.268066 GiB.
		{"deepseek-v3", Workload{Precision: FP8, Context: 4096, Batch: 1}, 624.9174, 0.268066, 62.49174, 1e-4},
	}
	for _, tc := range tests {
		n := tc.w.Need(mustModel(t, tc.model))
		name := tc.model + "/" + string(tc.w.Precision)
		near(t, name+" weights", n.WeightsGiB, tc.weights, tc.tol)
		near(t, name+" kv", n.KVCacheGiB, tc.kv, tc.tol)
		near(t, name+" overhead", n.OverheadGiB, tc.overhead, tc.tol)
		near(t, name+" required", n.RequiredGiB, tc.weights+tc.kv+tc.overhead, 3*tc.tol)
	}
}

func TestWorkloadValidate(t *testing.T) {
	for _, tc := range []struct {
		w    Workload
		want string
	}{
		{Workload{Precision: FP16, Context: 1, Batch: 1}, ""},
		{Workload{Precision: "fp64", Context: 1, Batch: 1}, `unknown precision "fp64"`},
		{Workload{Precision: FP16, KVPrecision: "x", Context: 1, Batch: 1}, `unknown KV cache precision "x"`},
		{Workload{Precision: FP16, Context: 0, Batch: 1}, "context must be at least 1 token"},
		{Workload{Precision: FP16, Context: 1, Batch: -2}, "batch must be at least 1 sequence"},
	} {
		err := tc.w.Validate()
		if (err == nil) != (tc.want == "") || err != nil && err.Error() != tc.want {
			t.Errorf("%+v: err = %v, want %q", tc.w, err, tc.want)
		}
	}
	if n := (Workload{Precision: FP16, Context: 0, Batch: 1}).Need(mustModel(t, "llama-3.1-8b")); n.KVCacheGiB != 0 {
		t.Errorf("zero context gives KV %v", n.KVCacheGiB)
	}
}

func TestFitsAndTensorParallel(t *testing.T) {
	n := Requirement(mustModel(t, "llama-3.1-8b"), FP16, 4096, 1) // 16.95 GiB
	it := func(gpu string, count, mem float64) pricing.InstanceType {
		return pricing.InstanceType{Provider: fleet.AWS, Name: "t", GPUModel: gpu, GPUCount: count, GPUMemoryGiB: mem}
	}
	for _, tc := range []struct {
		name   string
		it     pricing.InstanceType
		degree int
	}{
		{"A10G 22.35 GiB × 0.9 = 20.1 holds 16.95", it("A10G", 1, 22.3515625), 1},
		{"T4 16 × 0.9 = 14.4 does not", it("T4", 1, 16), 0},
		{"4 × T4: two GPUs, 28.8", it("T4", 4, 16), 2},
		{"8 × T4: still two", it("T4", 8, 16), 2},
		{"3 GPUs: only degree 1 divides", it("T4", 3, 16), 0},
		{"6 GPUs: degree 2 divides 6", it("T4", 6, 16), 2},
		{"fractional GPU", it("L4", 0.5, 11.2), 0},
		{"no memory figure", it("X", 1, 0), 0},
		{"exactly full", it("X", 1, n.RequiredGiB/UsableFraction), 1},
	} {
		k, ok := TensorParallel(n, tc.it)
		if k != tc.degree || ok != (tc.degree > 0) || Fits(n, tc.it) != ok {
			t.Errorf("%s: TensorParallel = %d, %v; want %d", tc.name, k, ok, tc.degree)
		}
	}
	// Qwen2.5-7B has 28 heads: degree 8 does not divide them, so 8 small GPUs
	// cannot hold it at fp32 even though their memory would.
	q := Requirement(mustModel(t, "qwen2.5-7b"), FP32, 4096, 1) // 28.35 + 0.22 + 2.83 GiB
	if k, ok := TensorParallel(q, it("X", 8, 5)); ok {
		t.Errorf("Qwen2.5-7B on 8 × 5 GiB: degree %d", k)
	}
	if k, ok := TensorParallel(q, it("X", 8, 10)); !ok || k != 4 {
		t.Errorf("Qwen2.5-7B on 8 × 10 GiB: degree %d, %v; want 4", k, ok)
	}
}

func TestOnGPUsLatentKV(t *testing.T) {
	// A latent KV cache is kept whole by every tensor-parallel rank.
	n := Requirement(mustModel(t, "deepseek-v3"), FP8, 4096, 1)
	near(t, "on 1", n.OnGPUs(1), n.RequiredGiB, 1e-12)
	near(t, "on 8", n.OnGPUs(8), n.RequiredGiB+7*n.KVCacheGiB, 1e-9)
	// Grouped-query KV heads split up to their count, then copy: Gemma-2-2B has 4.
	g := Requirement(mustModel(t, "gemma-2-2b"), FP16, 8192, 1)
	near(t, "gemma on 4", g.OnGPUs(4), g.RequiredGiB, 1e-12)
	near(t, "gemma on 8", g.OnGPUs(8), g.RequiredGiB+g.KVCacheGiB, 1e-9)
}

func f64(v float64) *float64 { return &v }

func TestDecodeTokensPerSecond(t *testing.T) {
	a10g := pricing.GPUSpec{Name: "A10G", Vendor: "nvidia", MemoryGiB: 24, MemoryBandwidthGBs: 600}
	llama8 := mustModel(t, "llama-3.1-8b")
	// 0.65 × 600e9 B/s / (16.06e9 + 536,870,912 B) = 23.4984 tokens/s.
	got := DecodeTokensPerSecond(llama8, FP16, a10g, 1, 4096, 1)
	near(t, "A10G fp16", got, 0.65*600e9/(16.06e9+536870912), 1e-9)
	near(t, "A10G fp16", got, 23.4984, 1e-4)
	// Batch 8 reads the weights once and eight KV caches: 8 × 390e9 / (16.06e9 + 8 × 536,870,912).
	near(t, "A10G batch 8", DecodeTokensPerSecond(llama8, FP16, a10g, 1, 4096, 8), 8*390e9/(16.06e9+8*536870912.0), 1e-9)
	// int4 weights with an fp16 KV cache: 390e9 / (4.015e9 + 536,870,912) = 85.68.
	near(t, "A10G int4", DecodeTokensPerSecond(llama8, INT4, a10g, 1, 4096, 1), 390e9/(4.015e9+536870912), 1e-9)
	// Two GPUs double the bandwidth.
	near(t, "2 × A10G", DecodeTokensPerSecond(llama8, FP16, a10g, 2, 4096, 1), 2*got, 1e-9)
	// MoE reads only the active parameters: Mixtral-8x7B 12.9e9 × 2 B, KV 2 × 32 × 8 × 128 × 1024 × 2 B.
	near(t, "Mixtral", DecodeTokensPerSecond(mustModel(t, "mixtral-8x7b"), FP16, a10g, 4, 1024, 1),
		0.65*4*600e9/(25.8e9+134217728), 1e-9)
	// No bandwidth figure, no estimate.
	if v := DecodeTokensPerSecond(llama8, FP16, pricing.GPUSpec{Name: "Inferentia2"}, 1, 4096, 1); v != 0 {
		t.Errorf("no bandwidth: %v", v)
	}
	if v := DecodeTokensPerSecond(llama8, FP16, a10g, 0, 4096, 1); v != 0 {
		t.Errorf("no GPUs: %v", v)
	}
}

func TestDecodeComputeBound(t *testing.T) {
	// A made-up GPU with plenty of bandwidth and little compute: 10 TFLOPS fp16, 20 TOPS int8.
	g := pricing.GPUSpec{Name: "X", Vendor: "nvidia", MemoryBandwidthGBs: 3000, FP16TFLOPS: f64(10), INT8TOPS: f64(20)}
	m := mustModel(t, "llama-3.1-8b")
	w := Workload{Precision: FP16, Context: 128, Batch: 64}
	d := w.Decode(m, g, 1)
	// Compute: 0.5 × 10e12 / (2 × 8.03e9) = 311.33 tokens/s.
	near(t, "compute", d.ComputeTokensPerSecond, 0.5*10e12/(2*8.03e9), 1e-9)
	// Bandwidth: 64 × 0.65 × 3000e9 / (16.06e9 + 64 × 2 × 32 × 8 × 128 × 128 × 2 B) = 7,307.
	near(t, "bandwidth", d.BandwidthTokensPerSecond, 64*0.65*3000e9/(16.06e9+64*16777216.0), 1e-6)
	if d.Bound != ComputeBound || d.TokensPerSecond != d.ComputeTokensPerSecond {
		t.Errorf("bound %s, tokens %v", d.Bound, d.TokensPerSecond)
	}
	// int8 uses the INT8 figure, int4 the FP16 one, fp32 none.
	near(t, "int8", Workload{Precision: INT8, Context: 128, Batch: 64}.Decode(m, g, 1).ComputeTokensPerSecond, 0.5*20e12/(2*8.03e9), 1e-9)
	near(t, "int4", Workload{Precision: INT4, Context: 128, Batch: 64}.Decode(m, g, 1).ComputeTokensPerSecond, 0.5*10e12/(2*8.03e9), 1e-9)
	if d := (Workload{Precision: FP32, Context: 128, Batch: 64}).Decode(m, g, 1); d.ComputeTokensPerSecond != 0 || d.Bound != BandwidthBound {
		t.Errorf("fp32: %+v", d)
	}
	// Without an 8-bit figure int8 falls back to FP16.
	g.INT8TOPS = nil
	near(t, "int8 fallback", Workload{Precision: INT8, Context: 128, Batch: 64}.Decode(m, g, 1).ComputeTokensPerSecond, 0.5*10e12/(2*8.03e9), 1e-9)
	// Batch 1 stays bandwidth bound.
	if d := (Workload{Precision: FP16, Context: 128, Batch: 1}).Decode(m, g, 1); d.Bound != BandwidthBound {
		t.Errorf("batch 1 bound %s", d.Bound)
	}
}

func TestParamsReadPerStep(t *testing.T) {
	mx := mustModel(t, "mixtral-8x7b")
	// Per expert X = (46.7 − 12.9) / (8 − 2) = 5.6333B; shared S = 12.9 − 2X = 1.6333B.
	near(t, "batch 1", mx.ParamsReadPerStep(1), 12.9e9, 1)
	// Batch 2 touches 8 × (1 − 0.75²) = 3.5 experts: S + 3.5X = 21.35B.
	near(t, "batch 2", mx.ParamsReadPerStep(2), 21.35e9, 1e3)
	// Batch 32 touches nearly all eight: 8 × (1 − 0.75^32) = 7.99920.
	near(t, "batch 32", mx.ParamsReadPerStep(32), 1.63333e9+7.99920*5.63333e9, 1e5)
	ds := mustModel(t, "deepseek-v3")
	// X = (671 − 37) / 248 = 2.55645B, S = 37 − 8X = 16.5484B; batch 32 touches
	// 256 × (1 − (31/32)^32) = 162.89 of 256 experts.
	near(t, "deepseek batch 32", ds.ParamsReadPerStep(32), 16.5484e9+256*(1-math.Pow(31.0/32, 32))*2.55645e9, 1e6)
	// Dense models read everything at any batch.
	if l := mustModel(t, "llama-3.1-8b"); l.ParamsReadPerStep(64) != l.Params {
		t.Errorf("dense: %v", l.ParamsReadPerStep(64))
	}
	// Decode at batch 32 reads S + 7.9992X weights.
	a10g := pricing.GPUSpec{Name: "A10G", Vendor: "nvidia", MemoryBandwidthGBs: 600}
	kv := 2.0 * 32 * 8 * 128 * 1024 * 32 * 2
	near(t, "Mixtral batch 32", DecodeTokensPerSecond(mx, FP16, a10g, 4, 1024, 32),
		32*0.65*4*600e9/(2*mx.ParamsReadPerStep(32)+kv), 1e-9)
}
