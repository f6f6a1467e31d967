package fleet

import (
	"math"
	"testing"
	"time"
)

func TestSampleCoverage(t *testing.T) {
	at := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	cpu := 5.0
	var four, two, sparse []Sample
	for h := range 168 {
		tm := at.Add(time.Duration(h) * time.Hour)
		four = append(four, Sample{Time: tm, GPU: PerGPU{1, 2, 3, 4}})
		two = append(two, Sample{Time: tm, GPU: PerGPU{1, math.NaN(), 3}})
		s := Sample{Time: tm, CPU: &cpu}
		if h < 42 {
			s.GPU = PerGPU{1, 1, 1, 1}
		}
		sparse = append(sparse, s)
	}
	for _, tc := range []struct {
		name    string
		samples []Sample
		gpus    float64
		want    float64
	}{
		{"all GPUs, every hour", four, 4, 1},
		{"2 of 4 GPUs", two, 4, 0.5},
		{"42 of 168 running hours", sparse, 4, 0.25},
		{"a partition counts as one GPU", four[:1], 0.5, 1},
	} {
		got := SampleCoverage(tc.samples, tc.gpus)
		if got == nil || *got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	if SampleCoverage(nil, 4) != nil {
		t.Error("no samples: want nil")
	}
	u := &Utilization{Samples: two}
	if got := u.EffectiveCoverage(4); got != 0.5 {
		t.Errorf("EffectiveCoverage = %v, want the samples' 0.5", got)
	}
	u.Coverage = new(0.9)
	if got := u.EffectiveCoverage(4); got != 0.9 {
		t.Errorf("EffectiveCoverage = %v, want the source's 0.9", got)
	}
}
