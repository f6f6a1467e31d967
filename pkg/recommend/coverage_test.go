package recommend

import (
	"time"

	"reflect"
	"strings"
	"testing"

	"github.com/gpufinops/gpufinops/internal/purchasetest"
	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// TestCoverage checks that gaps in the utilization lower confidence (below
// 0.8 one level, below 0.5 low) and that idle needs policy.idle.min_coverage.
func TestCoverage(t *testing.T) {
	withCoverage := func(c float64) func(*fleet.Instance) {
		return func(in *fleet.Instance) { in.Utilization.Source, in.Utilization.Coverage = "prometheus", &c }
	}
	busyUtil := func() func(*fleet.Instance) { return withUtil(agg(busy, memHigh, hostMid, hostMid)) }
	for _, tc := range []struct {
		name     string
		in       fleet.Instance
		kinds    []Kind
		conf     Level
		warnings []string
	}{
		{"no coverage given is complete", inst("a", "g4dn.xlarge", withUtil(agg(idle, idle, idle, idle))), []Kind{KindIdleStop}, High, nil},
		{"full coverage", inst("a", "g4dn.xlarge", withUtil(agg(idle, idle, idle, idle)), withCoverage(1)), []Kind{KindIdleStop}, High, nil},
		{"idle at 0.8 coverage is still judged", inst("a", "g4dn.xlarge", withUtil(agg(idle, idle, idle, idle)), withCoverage(0.8)), []Kind{KindIdleStop}, High, nil},
		{"idle below min coverage is a warning", inst("a", "g4dn.xlarge", withUtil(agg(idle, idle, idle, idle)), withCoverage(0.7)), []Kind{KindCommitment}, Medium, []string{WarnLowCoverage}},
		{"busy at 0.7 coverage: one level lower", inst("a", "g5.xlarge", busyUtil(), withCoverage(0.7)), []Kind{KindCommitment}, Medium, nil},
		{"busy at 0.4 coverage: low", inst("a", "g5.xlarge", busyUtil(), withCoverage(0.4)), []Kind{KindCommitment}, Low, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := run(t, tc.in)
			var kinds []Kind
			for _, r := range p.Recommendations {
				kinds = append(kinds, r.Kind)
				if r.Confidence != tc.conf {
					t.Errorf("%s: confidence %s, want %s", r.ID, r.Confidence, tc.conf)
				}
			}
			if !reflect.DeepEqual(kinds, tc.kinds) {
				t.Errorf("kinds = %v, want %v", kinds, tc.kinds)
			}
			var codes []string
			for _, w := range p.Warnings {
				codes = append(codes, w.Code)
				if w.Code == WarnLowCoverage && !strings.HasPrefix(w.Message, "utilization covers 70 % of the window's GPU-hours") {
					t.Errorf("message %q", w.Message)
				}
			}
			if !reflect.DeepEqual(codes, tc.warnings) {
				t.Errorf("warnings = %v, want %v", codes, tc.warnings)
			}
		})
	}
	pol := DefaultPolicy().WithPurchases(purchasetest.Purchases())
	pol.Idle.MinCoverage = 1.5
	if err := pol.Validate(); err == nil || !strings.Contains(err.Error(), "policy.idle.min_coverage: 1.5 is outside 0–1") {
		t.Errorf("Validate = %v", err)
	}
}

// From a file: a machine whose samples carry 2 of its 8 GPUs, or GPU data
// for 42 of its 168 running hours, is never judged idle, put on a schedule
// or rightsized; it gets a warning instead.
func TestEvidenceBeforeConfidence(t *testing.T) {
	var partial, sparse []fleet.Sample
	for i, tm := 0, week.Start; tm.Before(week.End); i, tm = i+1, tm.Add(time.Hour) {
		cpu := 5.0
		partial = append(partial, fleet.Sample{Time: tm, GPU: fleet.PerGPU{1, 2}, GPUMemory: fleet.PerGPU{1, 1}, CPU: &cpu})
		s := fleet.Sample{Time: tm, CPU: &cpu}
		if i%4 == 0 {
			s.GPU = fleet.PerGPU{1, 1, 1, 1, 1, 1, 1, 1}
		}
		sparse = append(sparse, s)
	}
	for name, samples := range map[string][]fleet.Sample{"2 of 8 GPUs": partial, "42 of 168 hours": sparse} {
		p := run(t, inst("a", "p4d.24xlarge", withUtil(&fleet.Utilization{Window: week, Samples: samples})))
		for _, r := range p.Recommendations {
			switch r.Kind {
			case KindIdleStop, KindSchedule, KindRightsize:
				t.Errorf("%s: %s advice (%s, confidence %s)", name, r.Kind, r.ShortAction, r.Confidence)
			}
		}
		if len(p.Warnings) == 0 {
			t.Errorf("%s: no warning", name)
		}
	}
}

// A spiky GPU (p95 low, peaks at 85–99 %) keeps its class: no smaller GPU.
func TestSpikyKeepsItsGPU(t *testing.T) {
	spiky := fleet.Stats{Avg: 8, P95: 20, Max: 97}
	p := run(t, inst("a", "g5.xlarge", withUtil(agg(spiky, fleet.Stats{Avg: 5, P95: 10, Max: 20}, hostLow, hostLow))))
	for _, r := range p.Recommendations {
		if r.Kind == KindRightsize {
			t.Fatalf("spiky GPU rightsized to %s", r.Target)
		}
	}
	calm := fleet.Stats{Avg: 8, P95: 20, Max: 30}
	p = run(t, inst("a", "g5.xlarge", withUtil(agg(calm, fleet.Stats{Avg: 5, P95: 10, Max: 20}, hostLow, hostLow))))
	found := false
	for _, r := range p.Recommendations {
		found = found || r.Kind == KindRightsize && r.Target == "g4dn.xlarge"
	}
	if !found {
		t.Errorf("a calm GPU is not rightsized: %+v", p.Recommendations)
	}
}
