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
	on    [minutesPerWeek / 64]uint64
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
	for _, w := range a.on {
		if w != ^uint64(0) {
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
