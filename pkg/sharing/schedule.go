package sharing

import (
	"strings"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

const minutesPerWeek = fleet.MinutesPerWeek

// availability is when a tenant runs in a week. A host must run whenever each
// of its tenants does, so that no tenant loses hours by moving.
type availability struct {
	// always: no schedule and the whole month.
	always bool
	// known: the minutes of the week are known (a valid schedule).
	known bool
	tz    string
	on    [weekWords]uint64
}

// weekWords is the number of 64-bit words that hold a week of minutes; the
// last word is partial (10,080 = 157 × 64 + 32).
const weekWords = (minutesPerWeek + 63) / 64

// fullWord is the value of word i when every minute it holds is on.
func fullWord(i int) uint64 {
	if n := minutesPerWeek - i*64; n < 64 {
		return 1<<n - 1
	}
	return ^uint64(0)
}

func availabilityOf(t Tenant) availability {
	if t.Schedule == nil {
		// Without a schedule, a tenant that runs part of the month runs at
		// unknown times: only an always-on host covers it.
		return availability{always: t.MonthlyHours == 0 || t.MonthlyHours >= fleet.HoursPerMonth}
	}
	a := availability{known: true, tz: strings.ToUpper(t.Schedule.Timezone)}
	if a.tz == "" {
		a.tz = "UTC"
	}
	week, _, err := t.Schedule.Week()
	if err != nil {
		return availability{}
	}
	for i, on := range week {
		if on {
			a.on[i/64] |= 1 << (i % 64)
		}
	}
	full := true
	for i, w := range a.on {
		if w != fullWord(i) {
			full = false
			break
		}
	}
	if full {
		return availability{always: true}
	}
	return a
}

// covers reports whether a host running as a runs whenever b runs.
func (a availability) covers(b availability) bool {
	switch {
	case a.always:
		return true
	case b.always || !a.known || !b.known || a.tz != b.tz:
		return false
	}
	for i := range a.on {
		if b.on[i]&^a.on[i] != 0 {
			return false
		}
	}
	return true
}
