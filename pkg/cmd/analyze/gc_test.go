package analyze

import (
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
	restore := tuneGC(none, 150000)
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
	restore = tuneGC(gogc, 150000)
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GOGC set: GOGC %d, want it untouched", got)
	}
	restore()
	restore = tuneGC(none, 500)
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("500 instances: GOGC %d, want 100", got)
	}
	restore()
}
