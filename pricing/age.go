package pricing

import "time"

// Default age limits, in days, past which a price used is warned about:
// spot markets move within weeks, list prices within a year or so.
const (
	DefaultMaxSpotAgeDays = 90
	DefaultMaxListAgeDays = 365
)

// AgeDays is how many whole days before today (a UTC calendar day) the
// as-of date asOf (YYYY-MM-DD) lies; 0 for today or a later date. It is
// false when asOf is empty or not a date.
func AgeDays(asOf string, today time.Time) (int, bool) {
	d, err := time.Parse(time.DateOnly, asOf)
	if err != nil {
		return 0, false
	}
	t := today.UTC()
	day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	if !day.After(d) {
		return 0, true
	}
	return int(day.Sub(d).Hours() / 24), true
}

// MaxAgeDays is the limit for a price of option o: spotDays for spot,
// listDays for every other option (on-demand, commitments).
func MaxAgeDays(o Option, spotDays, listDays int) int {
	if o == Spot {
		return spotDays
	}
	return listDays
}
