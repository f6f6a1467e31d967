package bench

import (
	"strings"
	"testing"
	"time"
)

// TestSameHour: the clean and throttled scans are compared only when both
// ran within one UTC hour; a pair that straddles an hour is run again, and
// after hourAttempts straddles the throttled row says it was not compared.
func TestSameHour(t *testing.T) {
	base := time.Date(2026, 12, 2, 14, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		// each scan advances the clock by step; the clock starts at start.
		start, step time.Duration
		wantPairs   int
		wantOneHour bool
	}{
		{"within the hour", 10 * time.Minute, 20 * time.Minute, 1, true},
		{"straddles once", 50 * time.Minute, 6 * time.Minute, 2, true},
		{"always straddles", 30 * time.Minute, 40 * time.Minute, hourAttempts, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := base.Add(tc.start)
			now := func() time.Time { return clock }
			var cleans, throttled int
			scan := func(n *int) func() Row {
				return func() Row {
					*n++
					clock = clock.Add(tc.step)
					return Row{N: *n}
				}
			}
			var logged []string
			logf := func(f string, a ...any) { logged = append(logged, f) }
			c, thr, oneHour := sameHour(now, logf, scan(&cleans), scan(&throttled))
			if cleans != tc.wantPairs || throttled != tc.wantPairs {
				t.Errorf("%d clean and %d throttled scans, want %d of each", cleans, throttled, tc.wantPairs)
			}
			if c.N != tc.wantPairs || thr.N != tc.wantPairs {
				t.Errorf("returned scans %d and %d, want the last pair (%d)", c.N, thr.N, tc.wantPairs)
			}
			if oneHour != tc.wantOneHour {
				t.Errorf("oneHour %v, want %v", oneHour, tc.wantOneHour)
			}
			if got := len(logged); got != tc.wantPairs-1 {
				t.Errorf("%d re-run lines logged, want %d", got, tc.wantPairs-1)
			}
			if !oneHour && !strings.Contains(thr.Note, "not compared") {
				t.Errorf("a throttled row never compared says %q", thr.Note)
			}
			if oneHour && thr.Note != "" {
				t.Errorf("a compared throttled row has a note: %q", thr.Note)
			}
		})
	}
}
