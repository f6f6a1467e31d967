package commitplan

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

func TestItemFrom(t *testing.T) {
	util := &fleet.Utilization{GPU: &fleet.Stats{Avg: 50, P95: 70, Max: 90}}
	base := func(mods ...func(*fleet.Instance)) *fleet.Instance {
		in := &fleet.Instance{ID: "i", Provider: fleet.AWS, Region: "us-east-1", InstanceType: "g5.2xlarge",
			Lifecycle: fleet.OnDemand, State: fleet.Running, Utilization: util}
		for _, m := range mods {
			m(in)
		}
		return in
	}
	final := Final{InstanceType: "g5.xlarge", Family: "g5", Lifecycle: fleet.OnDemand, Priced: true,
		OnDemandHourly: dec("1.006"), Hourly: dec("1.006"), MonthlyHours: 730}
	for _, tc := range []struct {
		name     string
		in       *fleet.Instance
		f        func(*Final)
		eligible bool
		reason   string
		spot     bool
	}{
		{"on demand", base(), nil, true, "", false},
		{"committed by the engine is re-planned", base(), func(f *Final) { f.Lifecycle, f.Hourly = fleet.Committed, dec("0.6539") }, true, "", false},
		{"unpriced", base(), func(f *Final) { f.Priced = false }, false, ReasonUnpriced, false},
		{"stopped by the plan", base(), func(f *Final) { f.Stopped, f.MonthlyHours = true, 0 }, false, ReasonStopped, false},
		{"stopped in the fleet", base(func(in *fleet.Instance) { in.State = fleet.Stopped }), nil, false, ReasonStopped, false},
		{"existing commitment", base(func(in *fleet.Instance) { in.Lifecycle = fleet.Committed }), nil, false, ReasonCommitted, false},
		{"on spot", base(), func(f *Final) { f.Lifecycle, f.Hourly = fleet.Spot, dec("0.41") }, false, ReasonSpot, true},
		{"no utilization", base(func(in *fleet.Instance) { in.Utilization = nil }), nil, false, ReasonNoUtilization, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := final
			if tc.f != nil {
				tc.f(&f)
			}
			it := ItemFrom(tc.in, f)
			if it.Eligible != tc.eligible || it.Reason != tc.reason || it.SpotEligible != tc.spot {
				t.Errorf("eligible %v reason %q spot %v", it.Eligible, it.Reason, it.SpotEligible)
			}
			if it.Family != "g5" || it.InstanceType != "g5.xlarge" || !it.OnDemandHourly.Equal(dec("1.006")) {
				t.Errorf("%+v", it)
			}
			if tc.spot && !it.SpotHourly.Equal(dec("0.41")) {
				t.Errorf("spot price %s", it.SpotHourly)
			}
		})
	}
	// Unknown family: the instance type is its own scope.
	if it := ItemFrom(base(), Final{Priced: true}); it.Family != "g5.2xlarge" || it.InstanceType != "g5.2xlarge" {
		t.Errorf("%+v", it)
	}
}

// TestHasUtilizationIsSummarize: hasUtilization answers as Summarize() != nil
// for utilizations with and without samples, GPU readings and figures.
func TestHasUtilizationIsSummarize(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	start := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	seen := map[bool]int{}
	for i := range 5000 {
		var u *fleet.Utilization
		if i%10 > 0 {
			u = &fleet.Utilization{}
			if r.IntN(2) == 0 {
				u.GPU = &fleet.Stats{Avg: r.Float64() * 100}
			}
			if r.IntN(2) == 0 {
				u.Window = &fleet.TimeRange{Start: start, End: start.Add(time.Duration(r.IntN(400)) * time.Hour)}
			}
			for j := range r.IntN(4) {
				s := fleet.Sample{Time: start.Add(time.Duration(r.IntN(300)-j) * time.Hour)}
				switch r.IntN(4) {
				case 0:
					s.GPU = fleet.PerGPU{r.Float64() * 100}
				case 1:
					s.GPU = fleet.PerGPU{}
				case 2:
					v := r.Float64()
					s.CPU, s.GPUMemory = &v, fleet.PerGPU{v}
				}
				u.Samples = append(u.Samples, s)
			}
		}
		want := u.Summarize() != nil
		if got := hasUtilization(u); got != want {
			t.Fatalf("%+v: hasUtilization %v, Summarize() != nil %v", u, got, want)
		}
		seen[want]++
	}
	if seen[true] == 0 || seen[false] == 0 {
		t.Fatalf("only %v", seen)
	}
}
