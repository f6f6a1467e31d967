package coverage

import (
	"math"
	"strings"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// hoursInWeek is the period the allocation runs over: the hours of a week,
// Sunday 00:00 UTC first. The clouds apply commitments hour by hour; a week
// is the period a schedule repeats in.
const hoursInWeek = 168

// week is an amount for each hour of the week.
type week [hoursInWeek]float64

// weekToMonth turns instance-hours a week into a month's.
const weekToMonth = fleet.HoursPerMonth / fleet.HoursPerWeek

// fullWeek is a week of v every hour.
func fullWeek(v float64) *week {
	w := new(week)
	for h := range w {
		w[h] = v
	}
	return w
}

// weekOf is *p, made on first use.
func weekOf(p **week) *week {
	if *p == nil {
		*p = new(week)
	}
	return *p
}

// scheduleRef is the date whose UTC offsets place a schedule's hours when
// the report has no date.
var scheduleRef = time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)

// profiles reads schedules into hourly profiles once for each distinct
// schedule (a fleet's thousands of machines share a few).
type profiles struct {
	at    time.Time
	cache map[string]*week
}

// of is the hours in each UTC hour of the week the instance's schedule
// keeps it on, at the UTC offset its time zone has at the report's date;
// nil when its hours come from hoursPerMonth or hoursPerWeek, it has no
// schedule or a broken one (it then runs its monthly hours spread evenly).
func (p *profiles) of(u fleet.Usage) *week {
	s := u.Schedule
	if s == nil || u.HoursPerMonth != nil || u.HoursPerWeek != nil {
		return nil
	}
	var key strings.Builder
	key.WriteString(s.Timezone)
	for _, w := range s.Windows {
		key.WriteString("|" + w.Start + "-" + w.End + ":" + strings.Join(w.Days, ","))
	}
	if w, ok := p.cache[key.String()]; ok {
		return w
	}
	w := p.read(s)
	if p.cache == nil {
		p.cache = map[string]*week{}
	}
	p.cache[key.String()] = w
	return w
}

func (p *profiles) read(s *fleet.Schedule) *week {
	on, loc, err := s.Week()
	if err != nil {
		return nil
	}
	at := p.at
	if at.IsZero() {
		at = scheduleRef
	}
	_, off := at.In(loc).Zone()
	shift := off / 60
	w := new(week)
	for m, ok := range on {
		if ok {
			utc := ((m-shift)%fleet.MinutesPerWeek + fleet.MinutesPerWeek) % fleet.MinutesPerWeek
			w[utc/60] += 1.0 / 60
		}
	}
	for h := range w {
		w[h] = min(1, w[h])
	}
	return w
}

// at is the instance-hours the instance runs in hour h of the week.
func (u *usage) at(h int) float64 {
	if u.on != nil {
		return u.on[h]
	}
	return u.flat
}

// share is the part (0–1) of its usage discounts cover.
func (u *usage) share() float64 {
	if !(u.onSum > 0) {
		return 0
	}
	return u.covSum / u.onSum
}

// heldShare is the part capacity reservations bill that no discount covers.
func (u *usage) heldShare() float64 {
	if !(u.onSum > 0) {
		return 0
	}
	return u.heldSum / u.onSum
}

// take covers u's uncovered hours from left, hour by hour, each
// instance-hour using k of it; it returns the instance-hours a week it
// covered and lowers *leftSum by what it used.
func (u *usage) take(left *week, leftSum *float64, k float64) float64 {
	cov := weekOf(&u.cov)
	got := 0.0
	for h := range left {
		free := u.at(h) - cov[h]
		if free <= 0 || left[h] <= 0 {
			continue
		}
		use := min(free*k, left[h])
		left[h] -= use
		c := use / k
		cov[h] += c
		got += c
	}
	*leftSum -= got * k
	return u.add(got)
}

// add counts got more instance-hours a week covered, a sum of hours within
// rounding of all of them counting as all; it returns what it counted.
func (u *usage) add(got float64) float64 {
	if d := u.onSum - u.covSum - got; d != 0 && math.Abs(d) <= u.onSum*1e-12 {
		got += d
	}
	u.covSum += got
	return got
}
