package protect

import (
	"fmt"
	"math"
	"slices"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// Evidence is what a machine's metrics say over the window a command
// judges: idle-stop's last half hour, analyze's whole utilization window.
type Evidence struct {
	// HasGPU: any GPU value exists. GPUMax is the busiest GPU's highest.
	HasGPU bool
	GPUMax float64
	// WantGPUs is the number of GPUs every sample must carry; MaxGPUs the
	// most one did.
	WantGPUs, MaxGPUs int
	// HasMem and MemMax: GPU memory use, the highest share (%).
	HasMem bool
	MemMax float64
	// HasCPU and CPUP95: the host CPU's p95 (%).
	HasCPU bool
	CPUP95 float64
}

// Busy reports whether the busiest GPU reached the use threshold.
func (ev Evidence) Busy(p Policy) bool { return ev.HasGPU && ev.GPUMax >= p.effective().GPUPercent }

// InUse is the protection the metrics give a machine whose GPUs stay below
// the threshold: GPUs missing from the data (not idle, unknown), GPU memory
// held by a process, a busy host CPU. Nil when none applies.
func InUse(ev Evidence, window string, p Policy) *Finding {
	p = p.effective()
	if ev.HasGPU && ev.MaxGPUs < ev.WantGPUs {
		return &Finding{Reason: ReasonPartialGPUs, Message: fmt.Sprintf("at most %d of its %d GPUs reported in %s: a GPU without data is not idle", ev.MaxGPUs, ev.WantGPUs, window)}
	}
	if ev.HasMem && ev.MemMax > p.GPUMemoryPercent {
		return &Finding{Reason: ReasonGPUMemoryHeld, Message: fmt.Sprintf("GPU memory use reached %.1f%% in %s, above %.4g%%: a process holds the GPU", round2(ev.MemMax), window, p.GPUMemoryPercent)}
	}
	if ev.HasCPU && ev.CPUP95 > p.CPUPercent {
		return &Finding{Reason: ReasonCPUBusy, Message: fmt.Sprintf("the host CPU p95 was %.1f%% in %s, above %.4g%%: the machine is working", round2(ev.CPUP95), window, p.CPUPercent)}
	}
	return nil
}

// Measure reads the evidence of every sample of a utilization (analyze's
// window), or its summary statistics when it has no samples. gpus is the
// instance's GPU count.
func Measure(u *fleet.Utilization, gpus float64) Evidence {
	ev := Evidence{WantGPUs: WantGPUs(gpus)}
	if u == nil {
		return ev
	}
	var cpus []float64
	for _, s := range u.Samples {
		if v, n := maxFinite(s.GPU); n > 0 {
			ev.GPUMax = max(ev.GPUMax, v)
			ev.HasGPU = true
			ev.MaxGPUs = max(ev.MaxGPUs, n)
		}
		if v, n := maxFinite(s.GPUMemory); n > 0 {
			ev.MemMax = max(ev.MemMax, v)
			ev.HasMem = true
		}
		if s.CPU != nil && finite(*s.CPU) {
			cpus = append(cpus, *s.CPU)
		}
	}
	if len(u.Samples) == 0 {
		if u.GPU != nil {
			ev.HasGPU, ev.GPUMax, ev.MaxGPUs = true, u.GPU.Max, ev.WantGPUs
		}
		if u.GPUMemory != nil {
			ev.HasMem, ev.MemMax = true, u.GPUMemory.Max
		}
		if u.CPU != nil {
			ev.HasCPU, ev.CPUP95 = true, u.CPU.P95
		}
		return ev
	}
	if len(cpus) > 0 {
		ev.HasCPU = true
		ev.CPUP95 = fleet.Percentile(sortedCopy(cpus), 95)
	}
	return ev
}

// WantGPUs is the number of GPUs a sample must carry: the count rounded up
// (a partition counts as one), at least one.
func WantGPUs(count float64) int {
	if math.IsNaN(count) || math.IsInf(count, 0) || count <= 1 {
		return 1
	}
	if count > 1024 {
		return 1024
	}
	return int(math.Ceil(count))
}

func maxFinite(v fleet.PerGPU) (float64, int) {
	var best float64
	n := 0
	for _, x := range v {
		if !finite(x) {
			continue
		}
		if n == 0 || x > best {
			best = x
		}
		n++
	}
	return best, n
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

func round2(v float64) float64 { return math.Round(v*100) / 100 }

func sortedCopy(v []float64) []float64 {
	out := append([]float64(nil), v...)
	slices.Sort(out)
	return out
}
