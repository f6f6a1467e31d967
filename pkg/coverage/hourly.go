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
	var minutes [hoursInWeek]int
	for m, ok := range on {
		if ok {
			utc := ((m-shift)%fleet.MinutesPerWeek + fleet.MinutesPerWeek) % fleet.MinutesPerWeek
			minutes[utc/60]++
		}
	}
	w := new(week)
	for h, n := range minutes {
		w[h] = float64(n) / 60
	}
	return w
}

// minSampleSpan is the shortest span of utilization samples that places an
// instance's hours: a week, so that every hour of the week was seen.
const minSampleSpan = 7 * 24 * time.Hour

// fromSamples places onSum instance-hours a week (fewer than all of them)
// in the UTC hours of the week the instance's utilization samples were
// taken in, each hour weighing how many of the sampled weeks have a sample
// in it: the hours with the most samples fill first, all in proportion,
// none past a whole hour; hours the samples cannot hold are spread evenly
// over the others. nil when the samples span less than a week.
func fromSamples(samples []fleet.Sample, onSum float64) *week {
	if len(samples) < 2 || !(onSum > 0) || onSum >= hoursInWeek {
		return nil
	}
	first, last := samples[0].Time, samples[0].Time
	for _, x := range samples[1:] {
		if x.Time.Before(first) {
			first = x.Time
		}
		if x.Time.After(last) {
			last = x.Time
		}
	}
	if last.Sub(first) < minSampleSpan {
		return nil
	}
	// n[h] counts the weeks with a sample in hour h: each (week, hour) once.
	var n week
	seen := map[int64]bool{}
	for _, x := range samples {
		k := x.Time.UTC().Unix() / 3600
		if seen[k] {
			continue
		}
		seen[k] = true
		n[hourOfWeek(x.Time)]++
	}
	// on[h] = min(1, c·n[h]) with c found by bisection so that they sum to onSum.
	fill := func(c float64) (w week, sum float64) {
		for h := range w {
			w[h] = min(1, c*n[h])
			sum += w[h]
		}
		return w, sum
	}
	lo, hi := 0.0, 1.0
	for _, s := fill(hi); s < onSum && hi < 1e12; _, s = fill(hi) {
		hi *= 2
	}
	for range 60 {
		mid := (lo + hi) / 2
		if _, s := fill(mid); s < onSum {
			lo = mid
		} else {
			hi = mid
		}
	}
	w, sum := fill(hi)
	if rest := onSum - sum; rest > 0 {
		// More hours than the sampled hours hold: the rest evenly over the
		// hours without samples.
		empty := 0
		for h := range w {
			if w[h] < 1 {
				empty++
			}
		}
		for h := range w {
			if w[h] < 1 && empty > 0 {
				w[h] = min(1, w[h]+rest/float64(empty))
			}
		}
	}
	return &w
}

// hourOfWeek is t's hour of the week in UTC, Sunday 00:00 first.
func hourOfWeek(t time.Time) int {
	t = t.UTC()
	return int(t.Weekday())*24 + t.Hour()
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
