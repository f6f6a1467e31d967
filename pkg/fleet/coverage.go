package fleet

import "math"

// SampleCoverage is the share (0–1) of an instance's GPU-hours that the
// samples hold data for: each sample in which the instance ran (any GPU,
// GPU memory, CPU or memory value) counts GPUs reporting ÷ GPUs (the count
// rounded up, at most 1). So it is both hours with GPU data ÷ running hours
// and GPUs reporting ÷ GPUs: a 4-GPU machine whose samples carry 2 GPUs
// covers 0.5, one whose GPU agent reported 42 of 168 running hours 0.25.
// Nil without samples.
func SampleCoverage(samples []Sample, gpus float64) *float64 {
	want := 1
	if gpus > 1 && !math.IsInf(gpus, 0) {
		want = int(math.Ceil(math.Min(gpus, 1024)))
	}
	running, data := 0, 0.0
	for _, s := range samples {
		n := finiteCount(s.GPU)
		if n == 0 && finiteCount(s.GPUMemory) == 0 && !finitePtr(s.CPU) && !finitePtr(s.Memory) {
			continue
		}
		running++
		data += math.Min(1, float64(n)/float64(want))
	}
	if running == 0 {
		return nil
	}
	c := math.Round(data/float64(running)*10000) / 10000
	return &c
}

func finiteCount(v PerGPU) int {
	n := 0
	for _, x := range v {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			n++
		}
	}
	return n
}

func finitePtr(v *float64) bool { return v != nil && !math.IsNaN(*v) && !math.IsInf(*v, 0) }

// EffectiveCoverage is the share of the window's GPU-hours with data the
// rules judge on: Coverage when the source set it (the cloud adapters
// count every GPU; a metrics source that writes the busiest GPU's value
// alone says so), else the samples' own (SampleCoverage), else 1.
func (u *Utilization) EffectiveCoverage(gpus float64) float64 {
	if u == nil {
		return 1
	}
	if u.Coverage != nil {
		return *u.Coverage
	}
	if s := SampleCoverage(u.Samples, gpus); s != nil {
		return *s
	}
	return 1
}
