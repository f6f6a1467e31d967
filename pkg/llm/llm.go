// Package llm is the arithmetic of serving language models on GPUs: model
// shapes, the memory a model needs at a precision, whether an instance type
// holds it, its decode throughput, and the cheapest instances that serve it.
//
// Everything here is a pure function of its inputs and the catalog; the
// formulas and constants are documented in docs/fit.md.
package llm

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/gpufinops/gpufinops/pricing"
)

// GiB is the number of bytes in a gibibyte (2^30); every memory figure of this
// package is in GiB, as the catalog's GPU memory is.
const GiB = 1 << 30

// The rules of thumb behind every estimate (see docs/fit.md for why).
const (
	// UsableFraction is the share of GPU memory a serving engine may fill; the
	// rest is left to the driver and other processes. vLLM's default
	// gpu_memory_utilization is the same 0.9.
	UsableFraction = 0.9
	// OverheadFraction and MinOverheadGiB make the runtime overhead (CUDA
	// context, kernel workspaces, activations, allocator fragmentation):
	// max(MinOverheadGiB, OverheadFraction × weights).
	OverheadFraction = 0.10
	MinOverheadGiB   = 1.0
	// BandwidthEfficiency is the share of peak memory bandwidth a decode step
	// achieves in real serving kernels.
	BandwidthEfficiency = 0.65
	// ComputeEfficiency is the share of peak dense tensor throughput a decode
	// step achieves when it is compute bound (large batches).
	ComputeEfficiency = 0.5
)

// Precision is the numeric format of the weights or of the KV cache.
type Precision string

// The precisions gpufinops knows.
const (
	FP32 Precision = "fp32"
	FP16 Precision = "fp16"
	BF16 Precision = "bf16"
	FP8  Precision = "fp8"
	INT8 Precision = "int8"
	INT4 Precision = "int4"
)

// Precisions lists the known precisions, widest first.
var Precisions = []Precision{FP32, FP16, BF16, FP8, INT8, INT4}

// ParsePrecision reads a precision name, case-insensitively; "float32",
// "float16", "half" and "bfloat16" are accepted too.
func ParsePrecision(s string) (Precision, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "fp32", "float32":
		return FP32, nil
	case "fp16", "float16", "half":
		return FP16, nil
	case "bf16", "bfloat16":
		return BF16, nil
	case "fp8":
		return FP8, nil
	case "int8":
		return INT8, nil
	case "int4":
		return INT4, nil
	}
	return "", fmt.Errorf("unknown precision %q: want fp32, fp16, bf16, fp8, int8 or int4", s)
}

// Bytes is the storage size of one value: 4, 2, 1 or 0.5 bytes; 0 for an
// unknown precision.
func (p Precision) Bytes() float64 {
	switch p {
	case FP32:
		return 4
	case FP16, BF16:
		return 2
	case FP8, INT8:
		return 1
	case INT4:
		return 0.5
	}
	return 0
}

// Quantized reports whether p is narrower than 16 bits.
func (p Precision) Quantized() bool { return p == FP8 || p == INT8 || p == INT4 }

// DefaultKVPrecision is the KV cache format serving engines use for weights
// of precision p: the weights' own format when it is a float of 16 bits or
// more, else fp16. Quantizing the weights does not quantize the KV cache.
func DefaultKVPrecision(p Precision) Precision {
	switch p {
	case FP32, BF16:
		return p
	}
	return FP16
}

// Workload is how a model is served: the precision of its weights and KV
// cache, the context each sequence may reach, and how many sequences one
// replica decodes at once.
type Workload struct {
	Precision Precision
	// KVPrecision is the KV cache format; empty means DefaultKVPrecision(Precision).
	KVPrecision Precision
	Context     int
	Batch       int
}

// KV is the KV cache precision in effect.
func (w Workload) KV() Precision {
	if w.KVPrecision == "" {
		return DefaultKVPrecision(w.Precision)
	}
	return w.KVPrecision
}

// Validate reports the first invalid input, in the words of the flags.
func (w Workload) Validate() error {
	switch {
	case w.Precision.Bytes() == 0:
		return fmt.Errorf("unknown precision %q", w.Precision)
	case w.KV().Bytes() == 0:
		return fmt.Errorf("unknown KV cache precision %q", w.KVPrecision)
	case w.Context <= 0:
		return errors.New("context must be at least 1 token")
	case w.Batch <= 0:
		return errors.New("batch must be at least 1 sequence")
	}
	return nil
}

// Need is the GPU memory one replica of a model needs, in GiB.
type Need struct {
	// WeightsGiB = total parameters × bytes per parameter.
	WeightsGiB float64
	// KVCacheGiB = KV elements per token × context × batch × bytes per KV element.
	KVCacheGiB float64
	// OverheadGiB = max(MinOverheadGiB, OverheadFraction × WeightsGiB).
	OverheadGiB float64
	// RequiredGiB = weights + KV cache + overhead, on one GPU (OnGPUs tells
	// the figure for a tensor-parallel group).
	RequiredGiB float64
	// Heads is the model's attention heads: a tensor-parallel degree must
	// divide it. Zero means no constraint.
	Heads int
	// KVShards is how many tensor-parallel ranks can share the KV cache out
	// without copies (the KV heads; 1 for a latent cache). A larger degree
	// keeps ceil(degree / KVShards) copies. Zero means no copies ever.
	KVShards int
}

// Requirement is the memory need of a model at weight precision p with the
// default KV cache precision, for the given context and batch.
func Requirement(m Model, p Precision, context, batch int) Need {
	return Workload{Precision: p, Context: context, Batch: batch}.Need(m)
}

// Need is the memory one replica of m needs under w. Invalid inputs (see
// Validate) give zeros rather than an error.
func (w Workload) Need(m Model) Need {
	weights := m.Params * w.Precision.Bytes() / GiB
	kv := w.kvBytes(m) / GiB
	overhead := math.Max(MinOverheadGiB, OverheadFraction*weights)
	return Need{
		WeightsGiB:  weights,
		KVCacheGiB:  kv,
		OverheadGiB: overhead,
		RequiredGiB: weights + kv + overhead,
		Heads:       m.Heads,
		KVShards:    m.kvShards(),
	}
}

// kvBytes is the KV cache of a whole batch at full context, in bytes.
func (w Workload) kvBytes(m Model) float64 {
	if w.Context <= 0 || w.Batch <= 0 {
		return 0
	}
	return float64(m.KVElementsPerToken()) * float64(w.Context) * float64(w.Batch) * w.KV().Bytes()
}

// kvCopies is how many times a tensor-parallel group of k GPUs holds the KV cache.
func kvCopies(shards, k int) int {
	if shards <= 0 || k <= shards {
		return 1
	}
	return (k + shards - 1) / shards
}

// OnGPUs is the memory a replica needs in total across a tensor-parallel
// group of k GPUs: RequiredGiB plus any KV cache copies (see KVShards).
func (n Need) OnGPUs(k int) float64 {
	return n.RequiredGiB + float64(kvCopies(n.KVShards, k)-1)*n.KVCacheGiB
}

// TensorParallel is the smallest tensor-parallel degree at which one replica
// fits on the instance type: a power of two that divides the type's GPU count
// (and the model's attention heads) with OnGPUs(degree) ≤ degree × GPU memory
// × UsableFraction. ok is false when no degree fits or the type has no whole
// GPUs or no GPU memory figure.
func TensorParallel(n Need, it pricing.InstanceType) (degree int, ok bool) {
	count, whole := wholeGPUs(it.GPUCount)
	if !whole || it.GPUMemoryGiB <= 0 || n.RequiredGiB <= 0 {
		return 0, false
	}
	for k := 1; k <= count && count%k == 0; k *= 2 {
		if n.Heads > 0 && n.Heads%k != 0 {
			break
		}
		if n.OnGPUs(k) <= float64(k)*it.GPUMemoryGiB*UsableFraction {
			return k, true
		}
	}
	return 0, false
}

// Fits reports whether one replica fits on the instance type (see TensorParallel).
func Fits(n Need, it pricing.InstanceType) bool {
	_, ok := TensorParallel(n, it)
	return ok
}

func wholeGPUs(count float64) (int, bool) {
	if count < 1 || count != math.Trunc(count) || count > 1<<20 {
		return 0, false
	}
	return int(count), true
}
