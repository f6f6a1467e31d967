package sharing

import (
	"fmt"
	"strings"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// minutesPerWeek is the resolution of a weekly schedule.
const minutesPerWeek = 7 * 24 * 60

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
	for _, w := range t.Schedule.Windows {
		start, err1 := clock(w.Start)
		end, err2 := clock(w.End)
		if err1 != nil || err2 != nil || end <= start {
			return availability{}
		}
		for _, d := range w.Days {
			wd, ok := fleet.Weekdays[d]
			if !ok {
				return availability{}
			}
			for m := start; m < end; m++ {
				i := int(wd)*24*60 + m
				a.on[i/64] |= 1 << (i % 64)
			}
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

// clock parses "HH:MM" (00:00–24:00) into minutes of the day.
func clock(s string) (int, error) {
	var h, m int
	if n, err := fmt.Sscanf(s, "%d:%d", &h, &m); err != nil || n != 2 || len(s) != 5 {
		return 0, fmt.Errorf("%q is not HH:MM", s)
	}
	if h < 0 || m < 0 || m > 59 || h > 24 || (h == 24 && m != 0) {
		return 0, fmt.Errorf("%q is not between 00:00 and 24:00", s)
	}
	return h*60 + m, nil
}
