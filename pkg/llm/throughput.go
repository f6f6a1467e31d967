package llm

import (
	"math"

	"github.com/gpufinops/gpufinops/pricing"
)

// Bound names what limits a decode estimate.
type Bound string

// The two limits of a decode step.
const (
	// BandwidthBound: reading the weights and KV cache from GPU memory.
	BandwidthBound Bound = "memory-bandwidth"
	// ComputeBound: the tensor cores' multiply-adds.
	ComputeBound Bound = "compute"
)

// Decode is a decode throughput estimate for one replica.
type Decode struct {
	// TokensPerSecond is the output tokens per second of the whole batch: the
	// smaller of the two bounds.
	TokensPerSecond float64
	// BandwidthTokensPerSecond = batch × BandwidthEfficiency × GPUs ×
	// bandwidth / bytes read per step.
	BandwidthTokensPerSecond float64
	// ComputeTokensPerSecond = ComputeEfficiency × GPUs × tensor throughput /
	// (2 × active parameters); zero when the catalog has no tensor figure for
	// the precision.
	ComputeTokensPerSecond float64
	// Bound is the limit that applies.
	Bound Bound
}

// DecodeTokensPerSecond estimates the output tokens per second of one replica
// of m on gpuCount GPUs of a model (tensor parallel), with weights at p and the
// default KV cache precision, decoding batch sequences at the given context.
// It is 0 when the GPU has no memory bandwidth figure.
func DecodeTokensPerSecond(m Model, p Precision, gpu pricing.GPUSpec, gpuCount float64, context, batch int) float64 {
	return Workload{Precision: p, Context: context, Batch: batch}.Decode(m, gpu, gpuCount).TokensPerSecond
}

// Decode estimates one replica's decode throughput on gpuCount GPUs.
//
// Each decode step emits one token per sequence and reads, from the GPUs'
// memory, the weights once (for a mixture of experts, those the batch is
// routed to: see Model.ParamsReadPerStep) plus the batch's KV cache at full
// context (a latent or replicated KV cache is read once per copy). So the bandwidth
// bound is batch × BandwidthEfficiency × gpuCount × bandwidth / bytes read.
// Each token also costs 2 FLOPs (a multiply and an add) per active parameter
// (attention's own FLOPs are left out), bounding throughput at ComputeEfficiency ×
// gpuCount × tensor throughput / (2 × active parameters). The estimate is the
// smaller bound.
func (w Workload) Decode(m Model, gpu pricing.GPUSpec, gpuCount float64) Decode {
	if gpuCount <= 0 || gpu.MemoryBandwidthGBs <= 0 || w.Validate() != nil || m.ActiveParams <= 0 {
		return Decode{}
	}
	copies := 1
	if k, whole := wholeGPUs(gpuCount); whole {
		copies = kvCopies(m.kvShards(), k)
	}
	bytes := m.ParamsReadPerStep(w.Batch)*w.Precision.Bytes() + w.kvBytes(m)*float64(copies)
	d := Decode{
		BandwidthTokensPerSecond: float64(w.Batch) * BandwidthEfficiency * gpuCount * gpu.MemoryBandwidthGBs * 1e9 / bytes,
		Bound:                    BandwidthBound,
	}
	d.TokensPerSecond = d.BandwidthTokensPerSecond
	if t := tensorThroughput(gpu, w.Precision); t > 0 {
		d.ComputeTokensPerSecond = ComputeEfficiency * gpuCount * t * 1e12 / (2 * m.ActiveParams)
		if d.ComputeTokensPerSecond < d.TokensPerSecond {
			d.TokensPerSecond, d.Bound = d.ComputeTokensPerSecond, ComputeBound
		}
	}
	return d
}

// tensorThroughput is the dense tensor-core peak, in TFLOPS or TOPS, that
// weights at p run on: FP16 for fp16/bf16 and for int4 (4-bit kernels widen
// the weights to fp16 and multiply in fp16); the 8-bit figure for fp8 and int8
// (the catalog's INT8 figure equals FP8 on the GPUs that have both), falling
// back to FP16 where no 8-bit figure is known. Zero for fp32: the catalog has
// no FP32 figures.
func tensorThroughput(g pricing.GPUSpec, p Precision) float64 {
	val := func(f *float64) float64 {
		if f == nil || math.IsNaN(*f) {
			return 0
		}
		return *f
	}
	switch p {
	case FP16, BF16, INT4:
		return val(g.FP16TFLOPS)
	case FP8, INT8:
		if v := val(g.INT8TOPS); v > 0 {
			return v
		}
		return val(g.FP16TFLOPS)
	}
	return 0
}
