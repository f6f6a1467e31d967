package pricing

import (
	"testing"
	"time"
)

func TestAgeDays(t *testing.T) {
	today := time.Date(2026, 12, 1, 23, 59, 0, 0, time.UTC)
	for _, tc := range []struct {
		asOf string
		days int
		ok   bool
	}{
		{"2026-12-01", 0, true},
		{"2026-11-30", 1, true},
		{"2025-06-28", 521, true},
		{"2024-02-29", 1006, true},
		{"2027-01-01", 0, true}, // a date after today is no age
		{"", 0, false},
		{"2026-13-01", 0, false},
		{"30/11/2026", 0, false},
		{"2026-11-30T00:00:00Z", 0, false},
	} {
		got, ok := AgeDays(tc.asOf, today)
		if got != tc.days || ok != tc.ok {
			t.Errorf("AgeDays(%q) = %d, %v; want %d, %v", tc.asOf, got, ok, tc.days, tc.ok)
		}
	}
	// Another zone's clock is the same UTC day.
	if got, _ := AgeDays("2026-11-30", time.Date(2026, 12, 1, 1, 0, 0, 0, time.FixedZone("x", 5*3600))); got != 0 {
		t.Errorf("UTC+5 01:00 on 12-01 is 11-30 UTC: age %d, want 0", got)
	}
	if MaxAgeDays(Spot, 90, 365) != 90 || MaxAgeDays(OnDemand, 90, 365) != 365 || MaxAgeDays(SavingsPlan1y, 90, 365) != 365 {
		t.Error("MaxAgeDays")
	}
}
