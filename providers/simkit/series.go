package simkit

// The series synthesizer: hourly patterns made from a fleet's utilization.
//
// Every instance has an hourly pattern (one value per hour, NaN for no
// datapoint) that repeats without end:
//
//   - Utilization samples are replayed. The pattern is the utilization
//     window (or, without one, the span of the samples), anchored on the
//     window's start, so it repeats every window length and a 7-day window
//     repeats weekly on the same weekdays and hours. Samples in the same
//     hour are averaged; hours without a sample have no datapoint.
//   - Summary statistics {avg, p95, max} become a weekly pattern: the hours
//     the instance runs (RunningWeek) get values whose mean, 95th percentile
//     (fleet.Percentile) and maximum are the file's figures (Shape), over
//     every whole week and any whole number of weeks.
//   - Without utilization only the host CPU has a series, from the idle
//     figures the simulator gives.
//
// A simulator serves minute or hourly datapoints from the pattern (Each),
// leaving out the minutes an instance was stopped (Timeline) and replacing
// GPU utilization where a load was set (Timeline.SetLoad).

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"sort"
	"sync"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// WeekHours is the length of a weekly pattern.
const WeekHours = 7 * 24

// Clock maps an hour to its slot in a repeating pattern.
type Clock struct {
	// Loc set: a weekly pattern, slot = local weekday × 24 + local hour.
	Loc *time.Location
	// Loc nil: slot = whole hours since Anchor, modulo N.
	Anchor time.Time
	N      int
}

// Size is the number of slots of the pattern.
func (c Clock) Size() int {
	if c.Loc != nil {
		return WeekHours
	}
	return c.N
}

// Slot returns the pattern slot of the hour starting at t.
func (c Clock) Slot(t time.Time) int {
	if c.Loc == time.UTC {
		return utcSlot(t.Unix())
	}
	if c.Loc != nil {
		lt := t.In(c.Loc)
		return int(lt.Weekday())*24 + lt.Hour()
	}
	h := floorDiv(int64(t.Sub(c.Anchor)), int64(time.Hour))
	return int(((h % int64(c.N)) + int64(c.N)) % int64(c.N))
}

// utcSlot is the slot of a UTC weekly pattern of the hour starting at
// secs, Unix seconds.
func utcSlot(secs int64) int {
	days := floorDiv(secs, 86400)
	weekday := ((days+4)%7 + 7) % 7 // 1970-01-01 was a Thursday
	return int(weekday*24 + floorDiv(secs-days*86400, 3600))
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// Pattern is an instance's hourly patterns, one value per Clock slot (NaN:
// no datapoint). A series that is nil or all NaN has no datapoint at all.
type Pattern struct {
	Clock Clock
	// GPU and GPUMemory are per GPU index, in percent; GPU indexes that
	// share a series share the slice.
	GPU, GPUMemory [][]float64
	// CPU and Memory are the host's, in percent.
	CPU, Memory []float64
}

// Keys name an instance's metrics in the seeds of their synthesized
// values, so that each simulator keeps its own deterministic series.
type Keys struct{ GPU, GPUMemory, CPU, Memory string }

// Synthesize makes the patterns of an instance with gpus GPU devices (at
// least one): samples are replayed (and may name more GPUs), summary
// figures shaped over the running hours (every GPU gets the figures: the
// file describes the busiest), and an instance without utilization gets a
// CPU series from idle only. A metric the file leaves out has no series.
func Synthesize(in fleet.Instance, gpus int, keys Keys, idle fleet.Stats) Pattern {
	u := in.Utilization
	switch {
	case u != nil && len(u.Samples) > 0:
		return replay(u, max(gpus, 1))
	case u != nil && (u.GPU != nil || u.GPUMemory != nil || u.CPU != nil || u.Memory != nil):
		return shaped(in, u, max(gpus, 1), keys)
	}
	running, loc := RunningWeek(in.Usage)
	return Pattern{Clock: Clock{Loc: loc}, CPU: Weekly(running, Shape(idle, CountHours(running), Seed(in.ID, keys.CPU)))}
}

// replay averages the samples per slot of the utilization window.
func replay(u *fleet.Utilization, gpus int) Pattern {
	sorted := append([]fleet.Sample(nil), u.Samples...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Time.Before(sorted[j].Time) })
	window := fleet.SampleWindow(sorted)
	if u.Window != nil {
		window = *u.Window
	}
	anchor := window.Start.Truncate(time.Hour)
	n := max(int(math.Ceil(window.End.Sub(anchor).Hours())), 1)
	p := Pattern{Clock: Clock{Anchor: anchor, N: n}}
	for _, smp := range sorted {
		gpus = max(gpus, len(smp.GPU), len(smp.GPUMemory))
	}

	type acc struct{ sum, n []float64 }
	newAcc := func() *acc { return &acc{make([]float64, n), make([]float64, n)} }
	util, mem := make([]*acc, gpus), make([]*acc, gpus)
	cpu, host := newAcc(), newAcc()
	put := func(a *acc, slot int, v float64) { a.sum[slot] += v; a.n[slot]++ }
	perGPU := func(dst []*acc, slot int, values fleet.PerGPU) {
		for i := range dst {
			var v float64
			switch {
			case len(values) == 1: // one figure: the busiest GPU, so every GPU
				v = values[0]
			case i < len(values):
				v = values[i]
			default:
				continue
			}
			if dst[i] == nil {
				dst[i] = newAcc()
			}
			put(dst[i], slot, v)
		}
	}
	for _, smp := range sorted {
		slot := p.Clock.Slot(smp.Time)
		perGPU(util, slot, smp.GPU)
		perGPU(mem, slot, smp.GPUMemory)
		if smp.CPU != nil {
			put(cpu, slot, *smp.CPU)
		}
		if smp.Memory != nil {
			put(host, slot, *smp.Memory)
		}
	}
	mean := func(a *acc) []float64 {
		if a == nil {
			return nil
		}
		out := make([]float64, n)
		for i := range out {
			out[i] = math.NaN()
			if a.n[i] > 0 {
				out[i] = a.sum[i] / a.n[i]
			}
		}
		return out
	}
	p.GPU, p.GPUMemory = make([][]float64, gpus), make([][]float64, gpus)
	for i := range util {
		p.GPU[i], p.GPUMemory[i] = mean(util[i]), mean(mem[i])
	}
	p.Memory, p.CPU = mean(host), mean(cpu)
	return p
}

// shaped turns summary statistics into a weekly pattern over the hours the
// instance runs.
func shaped(in fleet.Instance, u *fleet.Utilization, gpus int, keys Keys) Pattern {
	running, loc := RunningWeek(in.Usage)
	n := CountHours(running)
	shape := func(st *fleet.Stats, key string) []float64 {
		if st == nil {
			return nil
		}
		return Weekly(running, Shape(*st, n, Seed(in.ID, key)))
	}
	p := Pattern{Clock: Clock{Loc: loc}}
	gpu, mem := shape(u.GPU, keys.GPU), shape(u.GPUMemory, keys.GPUMemory)
	p.GPU, p.GPUMemory = make([][]float64, gpus), make([][]float64, gpus)
	for i := range p.GPU {
		p.GPU[i], p.GPUMemory[i] = gpu, mem
	}
	p.Memory = shape(u.Memory, keys.Memory)
	p.CPU = shape(u.CPU, keys.CPU)
	return p
}

// Weekly spreads values over the running slots of a week, in slot order;
// the other slots have no datapoint (NaN).
func Weekly(running *[WeekHours]bool, values []float64) []float64 {
	out := make([]float64, WeekHours)
	j := 0
	for i := range out {
		out[i] = math.NaN()
		if running[i] && j < len(values) {
			out[i] = values[j]
			j++
		}
	}
	return out
}

// CountHours is the number of running hours of a week.
func CountHours(running *[WeekHours]bool) int {
	n := 0
	for _, r := range running {
		if r {
			n++
		}
	}
	return n
}

// Seed makes the deterministic seed of one metric of one instance.
func Seed(id, metric string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(id + "\x00" + metric))
	return h.Sum64()
}

// RunningWeek returns the hours of a week an instance runs, as slots (local
// weekday × 24 + local hour) in the returned zone:
//
//   - usage.schedule: the hours whose start lies in a window, in the
//     schedule's time zone (UTC by default);
//   - usage.hoursPerWeek, or usage.hoursPerMonth × 168/730: that many hours
//     (rounded) in UTC, as one contiguous block a day starting at 08:00:
//     Monday to Friday first, evenly, up to 16 hours a day (08:00–24:00);
//     then Saturday and Sunday likewise; beyond 112 hours every day's block
//     grows past midnight, evenly, up to 24 hours;
//   - otherwise every hour.
func RunningWeek(u fleet.Usage) (*[WeekHours]bool, *time.Location) {
	var on [WeekHours]bool
	switch {
	case u.Schedule != nil:
		loc := time.UTC
		if u.Schedule.Timezone != "" {
			if l, err := time.LoadLocation(u.Schedule.Timezone); err == nil {
				loc = l
			}
		}
		return scheduleWeek(u.Schedule, loc), loc
	case u.HoursPerWeek != nil:
		return blockWeek(int(math.Round(*u.HoursPerWeek))), time.UTC
	case u.HoursPerMonth != nil:
		return blockWeek(int(math.Round(*u.HoursPerMonth * fleet.HoursPerWeek / fleet.HoursPerMonth))), time.UTC
	}
	for i := range on {
		on[i] = true
	}
	return &on, time.UTC
}

// scheduleWeek marks the local hours whose start lies in a window. Hours
// start at the zone's minute offset from UTC (:30 in India).
func scheduleWeek(sch *fleet.Schedule, loc *time.Location) *[WeekHours]bool {
	var on [WeekHours]bool
	_, off := time.Date(2026, 1, 5, 12, 0, 0, 0, time.UTC).In(loc).Zone()
	minute := ((off%3600)/60 + 60) % 60
	week, _, err := sch.Week()
	if err != nil {
		return &on // the fleet was validated: unreachable
	}
	for d := range 7 {
		for h := 0; h < 24; h++ {
			on[d*24+h] = week[d*24*60+h*60+minute]
		}
	}
	return &on
}

// blockWeek places h hours a week as daily blocks from 08:00 UTC (see
// RunningWeek).
func blockWeek(h int) *[WeekHours]bool {
	h = min(max(h, 0), WeekHours)
	weekdays := []time.Weekday{time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday}
	weekend := []time.Weekday{time.Saturday, time.Sunday}
	all := append(append([]time.Weekday(nil), weekdays...), weekend...)
	length := map[time.Weekday]int{}
	// spread gives up to room more hours to each day, evenly, first days
	// first, and returns what is left of h.
	spread := func(days []time.Weekday, room, h int) int {
		give := min(h, room*len(days))
		for i, d := range days {
			n := give / len(days)
			if i < give%len(days) {
				n++
			}
			length[d] += n
		}
		return h - give
	}
	h = spread(weekdays, 16, h)
	h = spread(weekend, 16, h)
	spread(all, 8, h)
	var on [WeekHours]bool
	for d, n := range length {
		for i := 0; i < n; i++ {
			on[(int(d)*24+8+i)%WeekHours] = true
		}
	}
	return &on
}

// Shape returns n values whose mean, 95th percentile (fleet.Percentile:
// linear interpolation between closest ranks) and maximum are st's figures,
// in a deterministic order drawn from seed.
//
// Sorted, the values are: lows (each at most p95, their sum solved for the
// mean, spread around their own mean), then a plateau of values equal to p95,
// then one value at max. For n ≥ 21 the plateau covers the 95th-percentile
// rank of the values and of any whole number of copies of them, so every
// whole number of pattern repetitions has the same three figures. For
// 2 ≤ n ≤ 20 one value just below max is solved so that the interpolation
// gives p95 for the n values themselves. n = 1 is the mean.
//
// Figures no data could have are approached as closely as values in 0..max
// allow: a mean too low for p95 and max gives all lows at 0 (the mean comes
// out higher); p95 above max or a mean above p95 are lowered to them.
func Shape(st fleet.Stats, n int, seed uint64) []float64 {
	if n <= 0 {
		return nil
	}
	top := math.Max(st.Max, 0)
	p95 := math.Min(math.Max(st.P95, 0), top)
	avg := math.Min(math.Max(st.Avg, 0), p95)
	if n == 1 {
		return []float64{avg}
	}
	var lows, upper []float64 // upper: everything above the lows, sorted
	var capLow float64
	if n >= 21 {
		m := 95 * (n - 1) / 100 // the lows: floor(0.95 (n-1)), exactly
		q := n - 1 - m
		for i := 0; i < q; i++ {
			upper = append(upper, p95)
		}
		upper = append(upper, top)
		lows, capLow = make([]float64, m), p95
	} else {
		// rank 0.95 (n-1) lies between the last two values: solve the
		// lower one for p95.
		f := 0.95*float64(n-1) - float64(n-2)
		below := math.Max((p95-f*top)/(1-f), 0)
		upper = []float64{below, top}
		lows, capLow = make([]float64, n-2), below
	}
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	if m := len(lows); m > 0 {
		var fixed float64
		for _, v := range upper {
			fixed += v
		}
		sum := math.Min(math.Max(avg*float64(n)-fixed, 0), float64(m)*capLow)
		mid := sum / float64(m)
		amp := math.Min(mid, capLow-mid) // keeps every low in [0, capLow]
		w := make([]float64, m)
		var mean float64
		for i := range w {
			w[i] = rng.Float64()
			mean += w[i] / float64(m)
		}
		var peak float64
		for i := range w {
			w[i] -= mean
			peak = math.Max(peak, math.Abs(w[i]))
		}
		for i := range lows {
			v := mid
			if peak > 0 {
				v += amp * w[i] / peak
			}
			lows[i] = math.Min(math.Max(v, 0), capLow)
		}
	}
	out := append(lows, upper...)
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// Timeline is what a simulator's metrics service has seen of its
// instances: their stops, learnt when it next serves a request (at the
// simulator's now then), and the GPU loads set with SetLoad. It is safe for
// concurrent use.
type Timeline struct {
	mu    sync.Mutex
	runs  map[string]*runLog // instance ID → stops seen
	loads map[string][]Load  // instance ID → GPU loads set, by time
}

// NewTimeline returns an empty timeline.
func NewTimeline() *Timeline {
	return &Timeline{runs: map[string]*runLog{}, loads: map[string][]Load{}}
}

// Add enters an instance, stopped since ever when the fleet has it stopped.
func (t *Timeline) Add(id string, stopped bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.runs[id] = &runLog{stopped: stopped}
}

// runLog is what the service has seen of an instance's stops; a minute has
// no datapoint when all of it lies in a stop (so an hour has datapoints
// when the instance ran in any part of it).
type runLog struct {
	stopped bool
	since   time.Time // start of the current stop; zero: stopped since ever
	gaps    []Span    // stops that ended
}

// Span is a time range [From, To).
type Span struct{ From, To time.Time }

// farFuture ends the current stop.
var farFuture = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// down returns the minutes that lie wholly in a stop, as spans of minute
// starts [From, To), in time order.
func (r runLog) down() []Span {
	var out []Span
	for _, g := range r.gaps {
		if a, z := CeilTo(g.From, time.Minute), g.To.Truncate(time.Minute); z.After(a) {
			out = append(out, Span{a, z})
		}
	}
	if r.stopped {
		out = append(out, Span{CeilTo(r.since, time.Minute), farFuture})
	}
	return out
}

// CeilTo rounds t up to a multiple of d (as time.Truncate counts them).
func CeilTo(t time.Time, d time.Duration) time.Time {
	if f := t.Truncate(d); f.Before(t) {
		return f.Add(d)
	}
	return t
}

// Load is a GPU utilization set with SetLoad: from its minute on, every GPU
// of the instance reports GPU (until the next change).
type Load struct {
	From time.Time
	GPU  float64
}

// View is what one request sees of an instance: the minutes it was down
// and the loads set, as of the request's now.
type View struct {
	Down    []Span
	Loads   []Load
	Stopped bool
	Since   time.Time // start of the current stop; zero: stopped since ever
}

// RanAfter reports whether the instance ran at some time after t: it runs
// now, or its current stop began after t.
func (v View) RanAfter(t time.Time) bool {
	return !v.Stopped || (!v.Since.IsZero() && v.Since.After(t))
}

// Observe records the instance's live state (running or not) at now and
// returns what a request at now sees of it.
func (t *Timeline) Observe(id string, live bool, now time.Time) View {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := t.runs[id]
	if r == nil {
		r = &runLog{}
		t.runs[id] = r
	}
	switch {
	case r.stopped && live:
		r.gaps = append(r.gaps, Span{r.since, now})
		r.stopped, r.since = false, time.Time{}
	case !r.stopped && !live:
		r.stopped, r.since = true, now
	}
	return View{
		Down:    r.down(),
		Loads:   append([]Load(nil), t.loads[id]...),
		Stopped: r.stopped, Since: r.since,
	}
}

// SetLoad makes every GPU of the instance report gpuPercent from now (its
// minute) onward, until set again; it replaces loads set for that minute
// or later. It fails for an instance not Added and a value outside 0–100.
func (t *Timeline) SetLoad(id string, gpuPercent float64, now time.Time) error {
	if math.IsNaN(gpuPercent) || gpuPercent < 0 || gpuPercent > 100 {
		return fmt.Errorf("gpu %v: want a percentage from 0 to 100", gpuPercent)
	}
	from := now.UTC().Truncate(time.Minute)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.runs[id] == nil {
		return fmt.Errorf("%w: %s", ErrNoInstance, id)
	}
	loads := t.loads[id]
	for len(loads) > 0 && !loads[len(loads)-1].From.Before(from) {
		loads = loads[:len(loads)-1]
	}
	t.loads[id] = append(loads, Load{from, gpuPercent})
	return nil
}

// Each calls fn, in time order, for the runs of minutes with a datapoint in
// [from, to) (minute starts; both on the minute): every minute of [a, z)
// has the value v. A minute carries its hour's pattern value (so hourly
// averages are the pattern), or the load set last before it (pass loads
// only for GPU utilization); minutes wholly in a down span have none.
// Nothing is stored per minute.
func Each(values []float64, clock Clock, from, to time.Time, down []Span, loads []Load, fn func(a, z time.Time, v float64)) {
	for h := from.Truncate(time.Hour); h.Before(to); h = h.Add(time.Hour) {
		a, z := h, h.Add(time.Hour)
		if a.Before(from) {
			a = from
		}
		if z.After(to) {
			z = to
		}
		pattern := values[clock.Slot(h)]
		for a.Before(z) {
			v, next := pattern, z
			for _, l := range loads {
				if l.From.After(a) {
					if l.From.Before(next) {
						next = l.From
					}
					break
				}
				v = l.GPU
			}
			if !math.IsNaN(v) {
				upRuns(a, next, down, v, fn)
			}
			a = next
		}
	}
}

// upRuns calls fn for the parts of [a, z) outside the down spans.
func upRuns(a, z time.Time, down []Span, v float64, fn func(a, z time.Time, v float64)) {
	for _, d := range down {
		if !d.To.After(a) {
			continue
		}
		if !d.From.Before(z) {
			break
		}
		if d.From.After(a) {
			fn(a, d.From, v)
		}
		a = d.To
		if !a.Before(z) {
			return
		}
	}
	fn(a, z, v)
}
