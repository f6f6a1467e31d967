package fleet

import (
	"math"
	"math/rand"
	"testing"
	"time"
)

// TestSampleValidIsSample: sampleValid accepts a sample exactly when
// checker.sample reports nothing, over random samples (NaN, infinities,
// bounds, times on and around a window's edges, no window).
func TestSampleValidIsSample(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	start := time.Date(2026, 11, 16, 0, 0, 0, 0, time.UTC)
	end := start.Add(14 * 24 * time.Hour)
	values := []float64{0, 100, 50, 1e-9, -1e-9, 100.0000001, -5, 250, math.NaN(), math.Inf(1), math.Inf(-1)}
	value := func() float64 { return values[rng.Intn(len(values))] }
	perGPU := func() PerGPU {
		if rng.Intn(4) == 0 {
			return nil
		}
		l := make(PerGPU, 1+rng.Intn(8))
		for i := range l {
			l[i] = value()
		}
		return l
	}
	optional := func() *float64 {
		if rng.Intn(3) == 0 {
			return nil
		}
		v := value()
		return &v
	}
	times := []time.Time{{}, start, start.Add(-time.Nanosecond), end, end.Add(-time.Nanosecond), start.Add(time.Hour), end.Add(time.Hour)}
	windows := []*TimeRange{nil, {Start: start, End: end}, {Start: start}, {End: end}}
	for i := range 20000 {
		s := Sample{Time: times[rng.Intn(len(times))], GPU: perGPU(), GPUMemory: perGPU(), CPU: optional(), Memory: optional()}
		w := windows[rng.Intn(len(windows))]
		c := checker{inst: -1}
		c.sample(&s, w)
		if got, want := sampleValid(&s, w), c.first == nil; got != want {
			t.Fatalf("sample %d %+v, window %+v: sampleValid %v, checker.sample reports %v", i, s, w, got, c.first)
		}
	}
}
