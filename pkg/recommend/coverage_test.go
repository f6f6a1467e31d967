package recommend

import (
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
				if w.Code == WarnLowCoverage && w.Message != "utilization covers 70 % of the window: not judged idle" {
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
