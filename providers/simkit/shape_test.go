package simkit

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// figures are the three numbers a file gives, from values, rounded as the
// file rounds them.
func fileFigures(values []float64) fleet.Stats {
	sorted := append([]float64(nil), values...)
	sort.Float64s(sorted)
	var sum float64
	for _, v := range sorted {
		sum += v
	}
	return fleet.Stats{
		Avg: roundCents(sum / float64(len(sorted))),
		P95: roundCents(fleet.Percentile(sorted, 95)),
		Max: roundCents(sorted[len(sorted)-1]),
	}
}

func roundCents(v float64) float64 { return math.Round(v*100) / 100 }

// repeat concatenates k copies of values.
func copies(values []float64, k int) []float64 {
	var out []float64
	for range k {
		out = append(out, values...)
	}
	return out
}

// lowestMean is the smallest mean any n values with these p95 and max can
// have (n ≥ 21): the top 5 % at p95, one at max, the rest 0.
func lowestMean(p95, top float64, n int) float64 {
	q := n - 1 - 95*(n-1)/100
	return (top + float64(q)*p95) / float64(n)
}

func TestShapeHitsTheFiguresForAnyNumberOfWeeks(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	check := func(st fleet.Stats, n int, seed uint64) {
		t.Helper()
		values := Shape(st, n, seed)
		if len(values) != n {
			t.Fatalf("%+v n=%d: %d values", st, n, len(values))
		}
		for _, v := range values {
			if v < 0 || v > st.Max || math.IsNaN(v) {
				t.Fatalf("%+v n=%d: value %v outside 0..max", st, n, v)
			}
		}
		for _, k := range []int{1, 2, 3, 5} {
			if got := fileFigures(copies(values, k)); got != st {
				t.Fatalf("%+v n=%d, %d cop(ies): got %+v", st, n, k, got)
			}
		}
	}
	checked := 0
	for i := range 3000 {
		n := 21 + rng.IntN(400)
		top := roundCents(rng.Float64() * 100)
		p95 := roundCents(rng.Float64() * top)
		lo := math.Ceil(lowestMean(p95, top, n)*100) / 100
		if lo > p95 {
			continue // no n values have these figures
		}
		avg := roundCents(lo + rng.Float64()*(p95-lo))
		check(fleet.Stats{Avg: avg, P95: p95, Max: top}, n, uint64(i))
		checked++
	}
	if checked < 1000 {
		t.Fatalf("only %d random figures were possible ones", checked)
	}
	t.Logf("%d random figures", checked)
	// Edge cases: all equal, all zero, a lone spike, the lowest and highest
	// possible means, the demo's figures over its running hours.
	for _, c := range []struct {
		st fleet.Stats
		n  int
	}{
		{fleet.Stats{Avg: 50, P95: 50, Max: 50}, 168},
		{fleet.Stats{Avg: 100, P95: 100, Max: 100}, 21},
		{fleet.Stats{Avg: 0, P95: 0, Max: 0}, 60},
		{fleet.Stats{Avg: 0, P95: 0, Max: 0.5}, 168},
		{fleet.Stats{Avg: 0.02, P95: 0.1, Max: 1}, 168},
		{fleet.Stats{Avg: 99.99, P95: 100, Max: 100}, 168},
		{fleet.Stats{Avg: 20, P95: 20, Max: 90}, 200},
		{fleet.Stats{Avg: 86, P95: 97, Max: 100}, 60},
		{fleet.Stats{Avg: 62, P95: 88, Max: 99}, 40},
		{fleet.Stats{Avg: 78, P95: 95, Max: 100}, 30},
		{fleet.Stats{Avg: 0.4, P95: 1.2, Max: 3.5}, 168},
	} {
		check(c.st, c.n, 7)
	}
}

func TestShapeFewHours(t *testing.T) {
	// Under 21 values the figures hold for the values themselves when some
	// values can have them.
	for n := 2; n <= 20; n++ {
		st := fleet.Stats{Avg: 70, P95: 95, Max: 100}
		values := Shape(st, n, 3)
		if got := fileFigures(values); got.P95 != st.P95 || got.Max != st.Max {
			t.Errorf("n=%d: %+v, want p95 95 and max 100", n, got)
		}
		if n >= 4 && fileFigures(values).Avg != st.Avg {
			t.Errorf("n=%d: %+v, want avg 70", n, fileFigures(values))
		}
	}
	if got := Shape(fleet.Stats{Avg: 12, P95: 30, Max: 40}, 1, 1); !slices.Equal(got, []float64{12}) {
		t.Errorf("one hour: %v, want the mean", got)
	}
	if got := Shape(fleet.Stats{Avg: 12, P95: 30, Max: 40}, 0, 1); got != nil {
		t.Errorf("no hours: %v", got)
	}
}

func TestShapeIsDeterministic(t *testing.T) {
	st := fleet.Stats{Avg: 35, P95: 46, Max: 71}
	a, b := Shape(st, 168, Seed("i-1", "gpu")), Shape(st, 168, Seed("i-1", "gpu"))
	if !slices.Equal(a, b) {
		t.Fatal("same seed, different values")
	}
	if c := Shape(st, 168, Seed("i-2", "gpu")); slices.Equal(a, c) {
		t.Error("two instances with the same figures have the same hours")
	}
}

func TestShapeImpossibleFigures(t *testing.T) {
	// A mean too low for p95 and max: max and p95 hold, the mean is the
	// lowest possible.
	values := Shape(fleet.Stats{Avg: 1, P95: 50, Max: 100}, 168, 1)
	got := fileFigures(values)
	if got.P95 != 50 || got.Max != 100 || got.Avg != roundCents(lowestMean(50, 100, 168)) {
		t.Errorf("got %+v", got)
	}
	// Out of order figures are lowered: p95 to max, the mean to p95.
	if got := fileFigures(Shape(fleet.Stats{Avg: 90, P95: 80, Max: 70}, 168, 1)); got != (fleet.Stats{Avg: 70, P95: 70, Max: 70}) {
		t.Errorf("got %+v", got)
	}
}

func onSlots(on *[WeekHours]bool) []int {
	var out []int
	for i, b := range on {
		if b {
			out = append(out, i)
		}
	}
	return out
}

func slotRange(from, to int) []int {
	var out []int
	for h := from; h < to; h++ {
		out = append(out, h)
	}
	return out
}

func TestBlockWeek(t *testing.T) {
	day := func(d time.Weekday, from, to int) []int { return slotRange(int(d)*24+from, int(d)*24+to) }
	weekdays := func(from, to int) []int {
		var out []int
		for d := time.Monday; d <= time.Friday; d++ {
			out = append(out, day(d, from, to)...)
		}
		return out
	}
	for _, c := range []struct {
		hours int
		want  []int
	}{
		{0, nil},
		{40, weekdays(8, 16)},
		{30, weekdays(8, 14)},
		{7, append(append(day(time.Monday, 8, 10), day(time.Tuesday, 8, 10)...), append(day(time.Wednesday, 8, 9), append(day(time.Thursday, 8, 9), day(time.Friday, 8, 9)...)...)...)},
		{80, weekdays(8, 24)},
		{84, append(append(day(time.Sunday, 8, 10), weekdays(8, 24)...), day(time.Saturday, 8, 10)...)},
		{168, slotRange(0, WeekHours)},
	} {
		got := onSlots(blockWeek(c.hours))
		want := append([]int(nil), c.want...)
		sort.Ints(want)
		if !slices.Equal(got, want) {
			t.Errorf("%d hours: slots %v\nwant %v", c.hours, got, want)
		}
	}
	for h := 0; h <= WeekHours; h++ {
		if n := CountHours(blockWeek(h)); n != h {
			t.Errorf("%d hours a week: %d slots", h, n)
		}
	}
}

func TestRunningWeek(t *testing.T) {
	hpm := 365.0
	for _, c := range []struct {
		name  string
		usage fleet.Usage
		loc   string
		hours int
	}{
		{"always", fleet.Usage{}, "UTC", 168},
		{"hoursPerMonth", fleet.Usage{HoursPerMonth: &hpm}, "UTC", 84},
		{"schedule", fleet.Usage{Schedule: &fleet.Schedule{Windows: []fleet.Window{{Days: []string{"mon", "tue", "wed", "thu", "fri"}, Start: "08:00", End: "20:00"}}}}, "UTC", 60},
		{"schedule in Berlin", fleet.Usage{Schedule: &fleet.Schedule{Timezone: "Europe/Berlin", Windows: []fleet.Window{{Days: []string{"sat"}, Start: "00:00", End: "24:00"}}}}, "Europe/Berlin", 24},
		{"half-hour zone", fleet.Usage{Schedule: &fleet.Schedule{Timezone: "Asia/Kolkata", Windows: []fleet.Window{{Days: []string{"mon"}, Start: "09:00", End: "17:00"}}}}, "Asia/Kolkata", 8},
	} {
		on, loc := RunningWeek(c.usage)
		if loc.String() != c.loc || CountHours(on) != c.hours {
			t.Errorf("%s: %d hours in %s, want %d in %s", c.name, CountHours(on), loc, c.hours, c.loc)
		}
	}
	// India is UTC+5:30: the hours start at :30 local, so 09:00–17:00 runs
	// the hours starting 09:30 … 16:30, i.e. UTC 04:00 … 11:00.
	on, loc := RunningWeek(fleet.Usage{Schedule: &fleet.Schedule{Timezone: "Asia/Kolkata", Windows: []fleet.Window{{Days: []string{"mon"}, Start: "09:00", End: "17:00"}}}})
	c := Clock{Loc: loc}
	monday := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	var utc []int
	for h := range 24 {
		if on[c.Slot(monday.Add(time.Duration(h)*time.Hour))] {
			utc = append(utc, h)
		}
	}
	if !slices.Equal(utc, slotRange(4, 12)) {
		t.Errorf("Kolkata Monday 09:00–17:00 runs UTC hours %v, want 4…11", utc)
	}
}

func TestClock(t *testing.T) {
	// The UTC fast path agrees with time's own weekday, before and after 1970.
	c, slow := Clock{Loc: time.UTC}, Clock{Loc: time.FixedZone("UTC0", 0)}
	for _, at := range []time.Time{
		time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC),
		time.Date(1969, 12, 31, 23, 0, 0, 0, time.UTC),
		time.Date(1960, 2, 29, 5, 0, 0, 0, time.UTC),
	} {
		if c.Slot(at) != slow.Slot(at) || c.Slot(at) != int(at.Weekday())*24+at.Hour() {
			t.Errorf("%s: slot %d, want %d", at, c.Slot(at), int(at.Weekday())*24+at.Hour())
		}
	}
	// A window clock repeats every n hours from its anchor, also backwards.
	anchor := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	w := Clock{Anchor: anchor, N: 168}
	for _, c := range []struct {
		hours, want int
	}{{0, 0}, {5, 5}, {168, 0}, {-1, 167}, {-168 * 3, 0}, {-170, 166}} {
		if got := w.Slot(anchor.Add(time.Duration(c.hours) * time.Hour)); got != c.want {
			t.Errorf("anchor%+dh: slot %d, want %d", c.hours, got, c.want)
		}
	}
}

// minutesUp counts the minutes of [a, z) outside the down spans.
func minutesUp(a, z time.Time, down []Span) int {
	n := 0
	upRuns(a, z, down, 0, func(a, z time.Time, _ float64) { n += int(z.Sub(a) / time.Minute) })
	return n
}

func TestRunLog(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 14, 20, 30, 0, time.UTC)
	hour := func(h int) time.Time { return time.Date(2026, 11, 30, h, 0, 0, 0, time.UTC) }
	// Stopped at 14:20:30: the minute 14:20 ran in part and keeps its
	// datapoint; 13:00 and 14:00 have datapoints, 15:00 none.
	r := runLog{stopped: true, since: t0}
	for _, c := range []struct {
		h, minutes int
	}{{13, 60}, {14, 21}, {15, 0}} {
		if got := minutesUp(hour(c.h), hour(c.h+1), r.down()); got != c.minutes {
			t.Errorf("stopped at 14:20:30: hour %d has %d minutes, want %d", c.h, got, c.minutes)
		}
	}
	// Started again at 18:40:10: 15, 16 and 17 are gone, 18 ran from 18:40.
	r = runLog{gaps: []Span{{t0, t0.Add(4*time.Hour + 19*time.Minute + 40*time.Second)}}}
	var down []int
	for h := 12; h < 21; h++ {
		if minutesUp(hour(h), hour(h+1), r.down()) == 0 {
			down = append(down, h)
		}
	}
	if !slices.Equal(down, []int{15, 16, 17}) {
		t.Errorf("hours without data %v, want 15 16 17", down)
	}
	if got := minutesUp(hour(18), hour(19), r.down()); got != 20 {
		t.Errorf("started at 18:40:10: %d minutes in hour 18, want 20 (18:40 … 18:59)", got)
	}
	if (View{Stopped: true}).RanAfter(time.Time{}.Add(time.Hour)) {
		t.Error("an instance stopped since ever ran")
	}
	if minutesUp(hour(0), hour(1), (runLog{stopped: true}).down()) != 0 {
		t.Error("an instance stopped since ever has datapoints")
	}
}
