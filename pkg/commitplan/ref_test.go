package commitplan

// The curve as Build first laid it, before its buffers and caches: the
// reference TestCurveMatchesReference holds the new one to.

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

func refRound(v float64, places int) float64 {
	p := math.Pow(10, float64(places))
	r := math.Round(v*p) / p
	if r == 0 {
		return 0
	}
	return r
}

// refScheduleCache parses each distinct schedule once, as the plan did.
type refScheduleCache map[string]*schedule

func (c refScheduleCache) parse(s *fleet.Schedule) (*schedule, error) {
	key := scheduleKey(s)
	if sc, ok := c[key]; ok {
		return sc, nil
	}
	sc, err := parseSchedule(s)
	if err != nil {
		return nil, err
	}
	c[key] = sc
	return sc, nil
}

// refGroupItems splits items by provider, region and family, each group's
// items by ID, as copies.
func refGroupItems(items []Item) [][]Item {
	sorted := slices.Clone(items)
	slices.SortFunc(sorted, func(a, b Item) int {
		return cmp.Or(compareProviders(a.Provider, b.Provider), cmp.Compare(a.Region, b.Region),
			cmp.Compare(a.Family, b.Family), cmp.Compare(a.ID, b.ID))
	})
	var groups [][]Item
	for i, it := range sorted {
		if i == 0 || it.Provider != sorted[i-1].Provider || it.Region != sorted[i-1].Region || it.Family != sorted[i-1].Family {
			groups = append(groups, nil)
		}
		groups[len(groups)-1] = append(groups[len(groups)-1], it)
	}
	return groups
}

// samplesOf returns the item's samples when they can place its hours: it has
// no schedule and they (or its window) cover at least a week.
func refSamplesOf(it Item) (sampleSpan, bool) {
	if it.Schedule != nil || len(it.Samples) == 0 {
		return sampleSpan{}, false
	}
	s := slices.Clone(it.Samples)
	slices.SortStableFunc(s, func(a, b fleet.Sample) int { return a.Time.Compare(b.Time) })
	sp := sampleSpan{sorted: s, step: fleet.SampleStep(s), window: fleet.SampleWindow(s)}
	if it.Window != nil && it.Window.End.After(it.Window.Start) {
		sp.window = *it.Window
	}
	return sp, sp.window.Hours() >= fleet.HoursPerWeek-1e-9
}

// buildCurve lays the items' usage on the axis. A schedule places hours
// exactly; else samples (a sample = it ran, over the sampling step) when they
// cover a week; else 730 h a month is every hour; else the hour count is
// placed where the group's other usage is highest, which makes the curve least
// steady, so the saving is a lower bound.
func refBuildCurve(ax axis, items []Item, scheds refScheduleCache) (*curve, []string, error) {
	c := &curve{hours: ax.hours}
	var notes []string
	known := make([]float64, ax.hours)
	var pending []Item
	use := map[string][]float64{}
	for _, it := range items {
		price := it.OnDemandHourly.InexactFloat64()
		var frac []float64
		switch sp, sampled := refSamplesOf(it); {
		case it.Schedule != nil:
			sched, err := scheds.parse(it.Schedule)
			if err != nil {
				return nil, nil, fmt.Errorf("commitplan: item %s: schedule %w", it.ID, err)
			}
			frac = sched.fractions(ax)
		case sampled:
			frac = refSampledFractions(ax, sp)
			if n := sumOf(frac) * fleet.HoursPerMonth / float64(ax.hours); math.Abs(n-it.MonthlyHours) > math.Max(1, it.MonthlyHours/100) {
				notes = append(notes, fmt.Sprintf("%s: its samples show %s h a month, the fleet bills %s h; the usage curve follows the samples",
					it.ID, num(n), num(it.MonthlyHours)))
			}
		case it.MonthlyHours >= fleet.HoursPerMonth-1e-9:
			frac = make([]float64, ax.hours)
			for h := range frac {
				frac[h] = 1
			}
			if it.MonthlyHours > fleet.HoursPerMonth+1e-9 {
				notes = append(notes, fmt.Sprintf("%s: %s h a month is more than the 730 of a billing month; the usage curve counts every hour once", it.ID, num(it.MonthlyHours)))
			}
		default:
			pending = append(pending, it)
			why := "only its hours are known"
			if len(it.Samples) > 0 {
				why = "its samples cover less than a week"
			}
			notes = append(notes, fmt.Sprintf("%s: %s (%s h a month); placement assumed in the hours the rest of its group runs most, which never makes usage look steadier than it might be",
				it.ID, why, num(it.MonthlyHours)))
			continue
		}
		capToBilled(frac, it.MonthlyHours)
		u := make([]float64, ax.hours)
		for h, f := range frac {
			u[h] = refRound(price*f, 9)
			known[h] += u[h]
		}
		use[it.ID] = u
	}
	// Every assumed item goes on the same ranking of hours, so their blocks
	// nest and coincide with the known peaks: the least steady arrangement.
	rank := make([]int, ax.hours)
	for h := range rank {
		rank[h] = h
	}
	slices.SortStableFunc(rank, func(a, b int) int { return -cmpFloat(known[a], known[b]) })
	for _, it := range pending {
		price := it.OnDemandHourly.InexactFloat64()
		hrs := it.MonthlyHours * float64(ax.hours) / fleet.HoursPerMonth
		full := int(math.Floor(hrs + 1e-9))
		u := make([]float64, ax.hours)
		for i := 0; i < full && i < ax.hours; i++ {
			u[rank[i]] = refRound(price, 9)
		}
		if rest := hrs - float64(full); rest > 1e-9 && full < ax.hours {
			u[rank[full]] = refRound(price*rest, 9)
		}
		use[it.ID] = u
		c.assumed = append(c.assumed, it.ID)
	}

	classOf := map[string]float64{}
	for _, it := range items {
		p := 1.0
		if it.SpotEligible && it.SpotHourly.IsPositive() && it.SpotHourly.LessThan(it.OnDemandHourly) {
			p = refRound(it.SpotHourly.Div(it.OnDemandHourly).InexactFloat64(), 9)
		}
		classOf[it.ID] = p
		if !slices.Contains(c.prices, p) {
			c.prices = append(c.prices, p)
		}
	}
	slices.SortFunc(c.prices, func(a, b float64) int { return -cmpFloat(a, b) })
	for _, it := range items {
		c.items = append(c.items, curveItem{id: it.ID, class: slices.Index(c.prices, classOf[it.ID]), use: use[it.ID], price: it.OnDemandHourly.InexactFloat64(), monthlyHours: it.MonthlyHours})
	}
	refStack(c)
	return c, notes, nil
}

// stack sums the items' usage per hour and price class into seg and cum.
func refStack(c *curve) {
	c.seg = make([][]float64, c.hours)
	c.cum = make([][]float64, c.hours)
	for h := range c.seg {
		c.seg[h] = make([]float64, len(c.prices))
		c.cum[h] = make([]float64, len(c.prices))
	}
	for _, ci := range c.items {
		for h, v := range ci.use {
			c.seg[h][ci.class] += v
		}
	}
	for h := range c.seg {
		level := 0.0
		for k := range c.seg[h] {
			c.seg[h][k] = refRound(c.seg[h][k], 9)
			level = refRound(level+c.seg[h][k], 9)
			c.cum[h][k] = level
		}
	}
}

// sampledFractions is the share of each hour of the axis the samples cover,
// each sample standing for one sampling step. Hours outside the samples'
// window are 0: samples are never stretched over time they do not cover (a
// machine that left, or joined, runs only where it was seen).
func refSampledFractions(ax axis, sp sampleSpan) []float64 {
	frac := make([]float64, ax.hours)
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
		frac[h] = math.Min(frac[h], 1)
	}
	return frac
}

// TestCurveMatchesReference: every group of random fleets gets the curve the
// reference lays (same classes, stack, items' usage, assumptions and notes),
// with the buffers reused from group to group, and the same groups.
func TestCurveMatchesReference(t *testing.T) {
	for seed := range 120 {
		r := rand.New(rand.NewPCG(uint64(seed), 78))
		items, _, opts := randomItems(r, 1+r.IntN(200))
		if opts.MaxWeeks == 0 {
			opts.MaxWeeks = 4
		}
		b := newBuilder()
		if err := validate(items, nil, b); err != nil {
			t.Fatalf("fleet %d: %v", seed, err)
		}
		ax, _ := newAxis(items, opts.MaxWeeks, b.spans)
		b.ax = ax
		refs, scheds := refGroupItems(items), refScheduleCache{}
		groups := groupItems(items)
		if len(groups) != len(refs) {
			t.Fatalf("fleet %d: %d groups, reference %d", seed, len(groups), len(refs))
		}
		for gi, g := range groups {
			var mine []*Item
			var theirs []Item
			for i, it := range g {
				if it.ID != refs[gi][i].ID {
					t.Fatalf("fleet %d group %d: item %d is %s, reference %s", seed, gi, i, it.ID, refs[gi][i].ID)
				}
				if ok, _ := committable(it); ok {
					mine, theirs = append(mine, it), append(theirs, refs[gi][i])
				}
			}
			got, gotNotes, err := b.buildCurve(mine)
			want, wantNotes, werr := refBuildCurve(ax, theirs, scheds)
			if (err == nil) != (werr == nil) {
				t.Fatalf("fleet %d group %d: error %v, reference %v", seed, gi, err, werr)
			}
			if err != nil {
				continue
			}
			if d := curveDiff(got, want); d != "" || !slices.Equal(gotNotes, wantNotes) {
				t.Fatalf("fleet %d group %d: %s; notes %q, reference %q", seed, gi, d, gotNotes, wantNotes)
			}
		}
	}
}

func curveDiff(a, b *curve) string {
	switch {
	case a.hours != b.hours:
		return fmt.Sprintf("%d hours, reference %d", a.hours, b.hours)
	case !slices.Equal(a.prices, b.prices):
		return fmt.Sprintf("prices %v, reference %v", a.prices, b.prices)
	case !slices.Equal(a.assumed, b.assumed):
		return fmt.Sprintf("assumed %v, reference %v", a.assumed, b.assumed)
	case len(a.items) != len(b.items):
		return fmt.Sprintf("%d items, reference %d", len(a.items), len(b.items))
	}
	for h := range a.hours {
		if !slices.Equal(a.seg[h], b.seg[h]) || !slices.Equal(a.cum[h], b.cum[h]) {
			return fmt.Sprintf("hour %d: seg %v cum %v, reference %v %v", h, a.seg[h], a.cum[h], b.seg[h], b.cum[h])
		}
	}
	for i, x := range a.items {
		y := b.items[i]
		if x.id != y.id || x.class != y.class || x.price != y.price || x.monthlyHours != y.monthlyHours || !slices.Equal(x.use, y.use) {
			return fmt.Sprintf("item %d: %+v, reference %+v", i, x, y)
		}
	}
	return ""
}

// TestRoundPowers: the table round uses holds math.Pow's powers of ten, so
// it rounds as math.Pow did.
func TestRoundPowers(t *testing.T) {
	for n, p := range pow10 {
		if q := math.Pow(10, float64(n)); p != q {
			t.Errorf("10^%d: %v, math.Pow %v", n, p, q)
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 100000 {
		v := (r.Float64() - 0.5) * math.Pow(10, float64(r.IntN(12)-3))
		places := r.IntN(12)
		if got, want := round(v, places), refRound(v, places); got != want || math.Signbit(got) != math.Signbit(want) {
			t.Fatalf("round(%v, %d) = %v, reference %v", v, places, got, want)
		}
	}
}

// FuzzRound: round with the table of powers gives what math.Pow's gave, for
// any value and number of places.
func FuzzRound(f *testing.F) {
	f.Add(0.1234567895, 9)
	f.Add(-2.5e-7, 6)
	f.Add(1e300, 4)
	f.Add(math.Inf(-1), 2)
	f.Fuzz(func(t *testing.T, v float64, places int) {
		places %= 24
		got, want := round(v, places), refRound(v, places)
		if math.Float64bits(got) != math.Float64bits(want) && !(math.IsNaN(got) && math.IsNaN(want)) {
			t.Fatalf("round(%v, %d) = %v, reference %v", v, places, got, want)
		}
	})
}
