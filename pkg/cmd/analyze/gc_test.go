package analyze

import (
	"math"
	"runtime/debug"
	"testing"
)

func TestGCPercent(t *testing.T) {
	for _, c := range []struct{ n, want int }{
		{0, 100}, {10000, 100}, {20000, 50}, {30000, 33}, {50000, 20}, {100000, 10}, {150000, 10}, {10_000_000, 10},
	} {
		if got := gcPercent(c.n); got != c.want {
			t.Errorf("gcPercent(%d) = %d, want %d", c.n, got, c.want)
		}
	}
}

// TestTuneGC: a large fleet lowers the target until restored; GOGC in the
// environment and a small fleet leave it alone.
func TestTuneGC(t *testing.T) {
	prev := debug.SetGCPercent(100)
	defer debug.SetGCPercent(prev)
	none := func(string) string { return "" }
	restore := tuneGC(none, 150000, false, func() {})
	if got := debug.SetGCPercent(10); got != 10 {
		t.Errorf("150,000 instances: GOGC %d, want 10", got)
	}
	restore()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("restored: GOGC %d, want 100", got)
	}
	gogc := func(k string) string {
		if k == "GOGC" {
			return "300"
		}
		return ""
	}
	restore = tuneGC(gogc, 150000, false, func() {})
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GOGC set: GOGC %d, want it untouched", got)
	}
	restore()
	restore = tuneGC(none, 500, false, func() {})
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("500 instances: GOGC %d, want 100", got)
	}
	restore()
}

// TestTuneGCSoftLimit: with no limit set, the soft limit is set before
// the fleet is read and kept for a fleet that fits under it (the target
// left at 100, or limitTarget from 80,000 instances, where the limit
// governs); a fleet too large for it lifts it and lowers the target;
// a limit of the user's is left alone.
func TestTuneGCSoftLimit(t *testing.T) {
	prevGC := debug.SetGCPercent(100)
	defer debug.SetGCPercent(prevGC)
	prevLimit := debug.SetMemoryLimit(math.MaxInt64)
	defer debug.SetMemoryLimit(prevLimit)
	none := func(string) string { return "" }
	if !softLimitFits(100000) || softLimitFits(150000) {
		t.Fatalf("100,000 fits %v, 150,000 fits %v; want true, false", softLimitFits(100000), softLimitFits(150000))
	}
	for _, c := range []struct {
		n         int
		limit     int64
		gcPercent int
	}{{500, gcSoftLimit, 100}, {50000, gcSoftLimit, 100}, {75000, gcSoftLimit, 100}, {80000, gcSoftLimit, limitTarget}, {100000, gcSoftLimit, limitTarget}, {150000, math.MaxInt64, 10}} {
		limited, unlimit := startSoftLimit(none)
		if !limited || debug.SetMemoryLimit(-1) != gcSoftLimit {
			t.Fatalf("no limit set: startSoftLimit set %v, limit %d", limited, debug.SetMemoryLimit(-1))
		}
		restore := tuneGC(none, c.n, limited, unlimit)
		if got := debug.SetMemoryLimit(-1); got != c.limit {
			t.Errorf("%d instances: limit %d, want %d", c.n, got, c.limit)
		}
		if got := debug.SetGCPercent(c.gcPercent); got != c.gcPercent {
			t.Errorf("%d instances: GOGC %d, want %d", c.n, got, c.gcPercent)
		}
		restore()
		unlimit()
		if got, gc := debug.SetMemoryLimit(-1), debug.SetGCPercent(100); got != math.MaxInt64 || gc != 100 {
			t.Errorf("%d instances restored: limit %d, GOGC %d; want none and 100", c.n, got, gc)
		}
	}
	userLimit := func(k string) string {
		if k == "GPUFINOPS_MEMORY_LIMIT" {
			return "off"
		}
		return ""
	}
	if limited, _ := startSoftLimit(userLimit); limited || debug.SetMemoryLimit(-1) != math.MaxInt64 {
		t.Errorf("a limit of the user's: the soft limit was set")
	}
}

// TestPauseTarget: under the soft limit a file's reading runs with the
// target off and gets it back after; a scan, or a run without the soft
// limit (GOGC or a limit of the user's), keeps it.
func TestPauseTarget(t *testing.T) {
	prev := debug.SetGCPercent(100)
	defer debug.SetGCPercent(prev)
	for _, c := range []struct {
		limited, scan bool
		want          int
	}{{true, false, -1}, {true, true, 100}, {false, false, 100}, {false, true, 100}} {
		resume := pauseTarget(c.limited, c.scan)
		during := debug.SetGCPercent(100)
		debug.SetGCPercent(during)
		resume()
		after := debug.SetGCPercent(100)
		if during != c.want || after != 100 {
			t.Errorf("limited %v, scan %v: target %d while reading, %d after; want %d, then 100", c.limited, c.scan, during, after, c.want)
		}
	}
}
