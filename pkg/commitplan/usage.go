package commitplan

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

const week = 7 * 24 * time.Hour

// referenceMonday anchors the axis when no sample dates it. Only schedules in
// a time zone with daylight-saving time depend on the date.
var referenceMonday = time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)

// axis is the hours usage is laid out on: whole weeks from a Monday 00:00 UTC.
type axis struct {
	start time.Time
	hours int
	// dated is true when samples fixed the start.
	dated bool
}

// sampleSpan is an item's samples, time-sorted, and the window they cover.
type sampleSpan struct {
	sorted []fleet.Sample
	step   time.Duration
	window fleet.TimeRange
}

// samplesOf returns the item's samples when they can place its hours: it has
// no schedule and they (or its window) cover at least a week. Samples already
// in time order are used as they are.
func samplesOf(it *Item) (sampleSpan, bool) {
	if it.Schedule != nil || len(it.Samples) == 0 {
		return sampleSpan{}, false
	}
	byTime := func(a, b fleet.Sample) int { return a.Time.Compare(b.Time) }
	s := it.Samples
	if !slices.IsSortedFunc(s, byTime) {
		s = slices.Clone(s)
		slices.SortStableFunc(s, byTime)
	}
	step := fleet.SampleStep(s)
	sp := sampleSpan{sorted: s, step: step, window: fleet.TimeRange{Start: s[0].Time, End: s[len(s)-1].Time.Add(step)}}
	if it.Window != nil && it.Window.End.After(it.Window.Start) {
		sp.window = *it.Window
	}
	return sp, sp.window.Hours() >= fleet.HoursPerWeek-1e-9
}

// newAxis lays the axis over the samples of the items they place: from the
// hour of the earliest window start to the latest window end, at least a
// week and at most maxWeeks weeks (the latest ones). Without samples it is
// one reference week from a Monday.
func newAxis(items []Item, maxWeeks int, spans map[*Item]placing) (axis, []string) {
	var first, last time.Time
	for i := range items {
		it := &items[i]
		if ok, _ := committable(it); !ok {
			continue
		}
		sp, ok := samplesOf(it)
		if len(it.Samples) > 0 {
			spans[it] = placing{sp, ok}
		}
		if !ok {
			continue
		}
		if first.IsZero() || sp.window.Start.Before(first) {
			first = sp.window.Start
		}
		if sp.window.End.After(last) {
			last = sp.window.End
		}
	}
	if first.IsZero() {
		return axis{start: referenceMonday, hours: int(fleet.HoursPerWeek)}, nil
	}
	start := first.UTC().Truncate(time.Hour)
	hours := int(math.Ceil(last.Sub(start).Hours() - 1e-9))
	hours = max(hours, int(fleet.HoursPerWeek))
	var notes []string
	if limit := maxWeeks * int(fleet.HoursPerWeek); hours > limit {
		notes = append(notes, fmt.Sprintf("samples span %s weeks; the usage curve uses the last %d", num(float64(hours)/fleet.HoursPerWeek), maxWeeks))
		start = start.Add(time.Duration(hours-limit) * time.Hour)
		hours = limit
	}
	return axis{start: start, hours: hours, dated: true}, notes
}

// curve is a group's committable usage, hour by hour, stacked by price: the
// usage that must run on demand at the bottom, spot-eligible usage above it,
// the largest spot discount on top (the first to leave the commitment).
type curve struct {
	hours int
	// prices are the price classes as fractions of on-demand, descending: 1 is
	// on demand, below 1 spot-eligible usage at its spot price.
	prices []float64
	// seg[h][k] is the usage of class k in hour h (on-demand USD per hour);
	// cum[h][k] is the stack's height at the top of class k.
	seg, cum [][]float64
	items    []curveItem
	assumed  []string
	// events, when set, is optimum's buffer, shared with other curves.
	events *[]event
	// priced caches price by the level's bits.
	priced map[uint64]priced
}

type curveItem struct {
	id    string
	class int
	use   []float64
	// price is its on-demand USD per hour; monthlyHours the hours a month it
	// is billed for.
	price        float64
	monthlyHours float64
}

func (c *curve) top(h int) float64 {
	if len(c.cum[h]) == 0 {
		return 0
	}
	return c.cum[h][len(c.cum[h])-1]
}

// buildCurve lays the items' usage on the axis. A schedule places hours
// exactly; else samples (a sample = it ran, over the sampling step) when they
// cover a week; else 730 h a month is every hour; else the hour count is
// placed where the group's other usage is highest, which makes the curve least
// steady, so the saving is a lower bound. The items' usage lies in b's buffer,
// valid until the next group's curve.
func (b *builder) buildCurve(items []*Item) (*curve, []string, error) {
	ax := b.ax
	c := &curve{hours: ax.hours, items: make([]curveItem, len(items)), events: &b.events}
	var notes []string
	b.known = grow(b.known, ax.hours)
	known := b.known
	clear(known)
	b.frac = grow(b.frac, ax.hours)
	frac := b.frac
	b.use = grow(b.use, len(items)*ax.hours)
	var pending []int
	for i, it := range items {
		u := b.use[i*ax.hours : (i+1)*ax.hours : (i+1)*ax.hours]
		c.items[i].use = u
		price := it.OnDemandHourly.InexactFloat64()
		sp, sampled := b.samples(it)
		switch {
		case it.Schedule != nil:
			f, err := b.fractions(it.Schedule)
			if err != nil {
				return nil, nil, fmt.Errorf("commitplan: item %s: schedule %w", it.ID, err)
			}
			copy(frac, f)
		case sampled:
			sampledFractions(frac, ax, sp)
			if n := sumOf(frac) * fleet.HoursPerMonth / float64(ax.hours); math.Abs(n-it.MonthlyHours) > math.Max(1, it.MonthlyHours/100) {
				notes = append(notes, fmt.Sprintf("%s: its samples show %s h a month, the fleet bills %s h; the usage curve follows the samples",
					it.ID, num(n), num(it.MonthlyHours)))
			}
		case it.MonthlyHours >= fleet.HoursPerMonth-1e-9:
			for h := range frac {
				frac[h] = 1
			}
			if it.MonthlyHours > fleet.HoursPerMonth+1e-9 {
				notes = append(notes, fmt.Sprintf("%s: %s h a month is more than the 730 of a billing month; the usage curve counts every hour once", it.ID, num(it.MonthlyHours)))
			}
		default:
			pending = append(pending, i)
			why := "only its hours are known"
			if len(it.Samples) > 0 {
				why = "its samples cover less than a week"
			}
			notes = append(notes, fmt.Sprintf("%s: %s (%s h a month); placement assumed in the hours the rest of its group runs most, which never makes usage look steadier than it might be",
				it.ID, why, num(it.MonthlyHours)))
			continue
		}
		capToBilled(frac, it.MonthlyHours)
		for h, f := range frac {
			u[h] = round(price*f, 9)
			known[h] += u[h]
		}
	}
	if len(pending) > 0 {
		// Every assumed item goes on the same ranking of hours, so their
		// blocks nest and coincide with the known peaks: the least steady
		// arrangement.
		rank := make([]int, ax.hours)
		for h := range rank {
			rank[h] = h
		}
		slices.SortStableFunc(rank, func(a, b int) int { return -cmpFloat(known[a], known[b]) })
		for _, i := range pending {
			it, u := items[i], c.items[i].use
			clear(u)
			price := it.OnDemandHourly.InexactFloat64()
			hrs := it.MonthlyHours * float64(ax.hours) / fleet.HoursPerMonth
			full := int(math.Floor(hrs + 1e-9))
			for i := 0; i < full && i < ax.hours; i++ {
				u[rank[i]] = round(price, 9)
			}
			if rest := hrs - float64(full); rest > 1e-9 && full < ax.hours {
				u[rank[full]] = round(price*rest, 9)
			}
			c.assumed = append(c.assumed, it.ID)
		}
	}

	for i, it := range items {
		p := 1.0
		if it.SpotEligible && it.SpotHourly.IsPositive() && it.SpotHourly.LessThan(it.OnDemandHourly) {
			p = round(it.SpotHourly.Div(it.OnDemandHourly).InexactFloat64(), 9)
		}
		c.items[i].price = p // the class's price until the classes are sorted
		if !slices.Contains(c.prices, p) {
			c.prices = append(c.prices, p)
		}
	}
	slices.SortFunc(c.prices, func(a, b float64) int { return -cmpFloat(a, b) })
	for i, it := range items {
		ci := &c.items[i]
		ci.id, ci.class, ci.price, ci.monthlyHours = it.ID, slices.Index(c.prices, ci.price), it.OnDemandHourly.InexactFloat64(), it.MonthlyHours
	}
	c.stack(&b.stack)
	return c, notes, nil
}

// grow returns buf with length n, reallocated only when too short.
func grow(buf []float64, n int) []float64 {
	if cap(buf) < n {
		return make([]float64, n)
	}
	return buf[:n]
}

// capToBilled scales an item's hourly fractions down so that, per month,
// they never exceed the hours it is billed for: the commitment's effect is
// computed on the hours the instance costs, never on more.
func capToBilled(frac []float64, monthlyHours float64) {
	got := sumOf(frac)
	billed := monthlyHours * float64(len(frac)) / fleet.HoursPerMonth
	if got <= billed*(1+1e-4)+1e-9 || got == 0 {
		return
	}
	k := billed / got
	for h := range frac {
		frac[h] *= k
	}
}

// stackBuf holds a curve's seg and cum for reuse by the next.
type stackBuf struct {
	seg, cum         []float64
	segRows, cumRows [][]float64
}

// stack sums the items' usage per hour and price class into seg and cum, in
// buf when set (which it then owns until the next stack into buf).
func (c *curve) stack(buf *stackBuf) {
	if buf == nil {
		buf = &stackBuf{}
	}
	k := len(c.prices)
	buf.seg, buf.cum = grow(buf.seg, c.hours*k), grow(buf.cum, c.hours*k)
	seg, cum := buf.seg, buf.cum
	clear(seg)
	if cap(buf.segRows) < c.hours {
		buf.segRows, buf.cumRows = make([][]float64, c.hours), make([][]float64, c.hours)
	}
	c.seg, c.cum = buf.segRows[:c.hours], buf.cumRows[:c.hours]
	for h := range c.seg {
		c.seg[h] = seg[h*k : (h+1)*k : (h+1)*k]
		c.cum[h] = cum[h*k : (h+1)*k : (h+1)*k]
	}
	for _, ci := range c.items {
		for h, v := range ci.use {
			seg[h*k+ci.class] += v
		}
	}
	for h := range c.seg {
		level := 0.0
		for k := range c.seg[h] {
			c.seg[h][k] = round(c.seg[h][k], 9)
			level = round(level+c.seg[h][k], 9)
			c.cum[h][k] = level
		}
	}
}

// tail is the curve's last n hours, each item capped again to its billed
// hours over that span.
func (c *curve) tail(n int) *curve {
	t := &curve{hours: n, prices: c.prices, assumed: c.assumed, events: c.events}
	for _, ci := range c.items {
		u := slices.Clone(ci.use[c.hours-n:])
		if ci.price > 0 {
			frac := make([]float64, n)
			for h, v := range u {
				frac[h] = v / ci.price
			}
			capToBilled(frac, ci.monthlyHours)
			for h := range u {
				u[h] = round(frac[h]*ci.price, 9)
			}
		}
		t.items = append(t.items, curveItem{id: ci.id, class: ci.class, use: u, price: ci.price, monthlyHours: ci.monthlyHours})
	}
	t.stack(nil)
	return t
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func sumOf(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s
}

// num formats hours with at most one decimal.
func num(v float64) string { return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64) }

// sampledFractions sets frac to the share of each hour of the axis the
// samples cover, each sample standing for one sampling step. Hours outside
// the samples' window are 0: samples are never stretched over time they do
// not cover (a machine that left, or joined, runs only where it was seen).
func sampledFractions(frac []float64, ax axis, sp sampleSpan) {
	clear(frac)
	end := ax.start.Add(time.Duration(ax.hours) * time.Hour)
	// Merge the samples' intervals so overlaps count once.
	type iv struct{ a, b time.Time }
	var merged []iv
	for _, s := range sp.sorted {
		a, b := s.Time, s.Time.Add(sp.step)
		if n := len(merged); n > 0 && !a.After(merged[n-1].b) {
			if b.After(merged[n-1].b) {
				merged[n-1].b = b
			}
			continue
		}
		merged = append(merged, iv{a, b})
	}
	wEnd := sp.window.End
	for _, m := range merged {
		a, b := maxTime(m.a, ax.start), minTime(minTime(m.b, end), maxTime(wEnd, m.a))
		for a.Before(b) {
			h := int(a.Sub(ax.start) / time.Hour)
			slotEnd := ax.start.Add(time.Duration(h+1) * time.Hour)
			stop := minTime(slotEnd, b)
			frac[h] += stop.Sub(a).Hours()
			a = stop
		}
	}
	for h := range frac {
		frac[h] = min(frac[h], 1)
	}
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// schedule is a weekly schedule as minutes of the local week it is on.
type schedule struct {
	loc *time.Location
	// cum[i] is the number of minutes the schedule is on in the first i
	// minutes of the local week.
	cum [fleet.MinutesPerWeek + 1]int32
}

// parseSchedule reads a fleet schedule (fleet.Schedule.Week).
func parseSchedule(s *fleet.Schedule) (*schedule, error) {
	sc := &schedule{}
	if err := sc.parse(s); err != nil {
		return nil, err
	}
	return sc, nil
}

// parse reads s into sc, overwriting it.
func (sc *schedule) parse(s *fleet.Schedule) error {
	if len(s.Windows) == 0 {
		return fmt.Errorf("has no windows")
	}
	on, loc, err := s.Week()
	if err != nil {
		return err
	}
	sc.loc = loc
	for m, b := range on {
		sc.cum[m+1] = sc.cum[m]
		if b {
			sc.cum[m+1]++
		}
	}
	return nil
}

// builder is what Build keeps from group to group: the axis, each sampled
// item's samples, each distinct schedule's hourly shares on the axis (a large
// fleet's instances share a few schedules) and buffers that every group's
// curve reuses.
type builder struct {
	ax     axis
	spans  map[*Item]placing
	scheds map[string]schedFractions
	// checked holds checkSchedule's verdict per schedule key.
	checked map[string]error
	parsed  schedule
	key     []byte
	// known, frac and use are a curve's scratch; use holds its items' usage.
	known, frac, use []float64
	events           []event
	stack            stackBuf
}

// placing is an item's samples and whether they place its hours.
type placing struct {
	span sampleSpan
	ok   bool
}

type schedFractions struct {
	frac []float64
	err  error
}

func newBuilder() *builder {
	return &builder{spans: map[*Item]placing{}, scheds: map[string]schedFractions{}, checked: map[string]error{}}
}

func (b *builder) samples(it *Item) (sampleSpan, bool) {
	if it.Schedule != nil || len(it.Samples) == 0 {
		return sampleSpan{}, false
	}
	if p, ok := b.spans[it]; ok {
		return p.span, p.ok
	}
	return samplesOf(it)
}

// fractions is the schedule's share of each hour of the axis, read once per
// distinct schedule; the caller must not change it.
func (b *builder) fractions(s *fleet.Schedule) ([]float64, error) {
	b.key = appendScheduleKey(b.key[:0], s)
	if f, ok := b.scheds[string(b.key)]; ok {
		return f.frac, f.err
	}
	var f schedFractions
	if f.err = b.parsed.parse(s); f.err == nil {
		f.frac = b.parsed.fractions(b.ax)
	}
	b.scheds[string(b.key)] = f
	return f.frac, f.err
}

// check is checkSchedule's verdict, once per distinct schedule.
func (b *builder) check(s *fleet.Schedule) error {
	b.key = appendScheduleKey(b.key[:0], s)
	if err, ok := b.checked[string(b.key)]; ok {
		return err
	}
	err := checkSchedule(s)
	b.checked[string(b.key)] = err
	return err
}

// scheduleKey spells a schedule's content, each string prefixed with its
// length, so two schedules have one key only when they are the same.
func scheduleKey(s *fleet.Schedule) string { return string(appendScheduleKey(nil, s)) }

func appendScheduleKey(b []byte, s *fleet.Schedule) []byte {
	put := func(v string) {
		b = strconv.AppendInt(b, int64(len(v)), 10)
		b = append(b, ':')
		b = append(b, v...)
	}
	put(s.Timezone)
	for _, w := range s.Windows {
		b = strconv.AppendInt(b, int64(len(w.Days)), 10)
		b = append(b, '/')
		for _, d := range w.Days {
			put(d)
		}
		put(w.Start)
		put(w.End)
	}
	return b
}

// checkSchedule is parseSchedule's verdict on a schedule, without keeping
// the week.
func checkSchedule(s *fleet.Schedule) error {
	if len(s.Windows) == 0 {
		return fmt.Errorf("has no windows")
	}
	_, err := s.HoursPerWeek()
	return err
}

// onMinutes is the number of minutes the schedule is on among the n ≤ one
// week local minutes from minute a of the week (wrapping into the next).
func (s *schedule) onMinutes(a, n int) int32 {
	const week = fleet.MinutesPerWeek
	if a+n <= week {
		return s.cum[a+n] - s.cum[a]
	}
	return s.cum[week] - s.cum[a] + s.cum[a+n-week]
}

// weekMinute is the minute of the local week t falls in.
func weekMinute(lt time.Time) int {
	return int(lt.Weekday())*24*60 + lt.Hour()*60 + lt.Minute()
}

// fractions is the share of each hour of the axis the schedule is on, read in
// its time zone minute by minute (so daylight-saving time and half-hour
// offsets fall where they do on the axis's dates). An hour that one zone
// offset covers is 60 consecutive minutes of the local week; one that a
// change of offset cuts is read minute by minute.
func (s *schedule) fractions(ax axis) []float64 {
	out := make([]float64, ax.hours)
	for h := range out {
		t := ax.start.Add(time.Duration(h) * time.Hour)
		lt := t.In(s.loc)
		var on int32
		if _, end := lt.ZoneBounds(); end.IsZero() || end.After(t.Add(59*time.Minute)) {
			on = s.onMinutes(weekMinute(lt), 60)
		} else {
			for m := range 60 {
				on += s.onMinutes(weekMinute(t.Add(time.Duration(m)*time.Minute).In(s.loc)), 1)
			}
		}
		out[h] = float64(on) / 60
	}
	return out
}
