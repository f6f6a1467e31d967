package simkit

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// TestEachUnixIsEach: over random patterns, clocks, ranges, down spans and
// loads on the minute, EachUnix gives Each's runs.
func TestEachUnixIsEach(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	base := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	minute := func(span int) time.Time {
		return base.Add(time.Duration(r.IntN(2*span+1)-span) * time.Minute)
	}
	type run struct {
		a, z int64
		v    uint64
	}
	runs := 0
	for i := range 3000 {
		var c Clock
		switch r.IntN(4) {
		case 0, 1:
			c = Clock{Loc: time.UTC}
		case 2:
			c = Clock{Loc: time.FixedZone("IST", 5*3600+1800)}
		default:
			c = Clock{Anchor: minute(400 * 24 * 60).Truncate(time.Duration(1+r.IntN(2)) * time.Hour), N: 1 + r.IntN(500)}
		}
		values := make([]float64, c.Size())
		for j := range values {
			values[j] = float64(r.IntN(1000)) / 10
			if r.IntN(5) == 0 {
				values[j] = math.NaN()
			}
		}
		from := minute(60 * 24 * 60)
		to := from.Add(time.Duration(r.IntN(30*24*60)) * time.Minute)
		var down []Span
		t0 := from.Add(-time.Duration(r.IntN(5*24*60)) * time.Minute)
		for range r.IntN(5) {
			a := t0.Add(time.Duration(r.IntN(10*24*60)) * time.Minute)
			z := a.Add(time.Duration(1+r.IntN(3*24*60)) * time.Minute)
			down = append(down, Span{From: a, To: z})
			t0 = z
		}
		if r.IntN(4) == 0 {
			down = append(down, Span{From: t0.Add(time.Duration(r.IntN(10*24*60)) * time.Minute), To: farFuture})
		}
		var loads []Load
		t0 = from.Add(-time.Duration(r.IntN(5*24*60)) * time.Minute)
		for range r.IntN(6) {
			t0 = t0.Add(time.Duration(1+r.IntN(5*24*60)) * time.Minute)
			loads = append(loads, Load{From: t0, GPU: float64(r.IntN(101))})
		}
		var want, got []run
		Each(values, c, from, to, down, loads, func(a, z time.Time, v float64) {
			want = append(want, run{a.Unix(), z.Unix(), math.Float64bits(v)})
		})
		EachUnix(values, c, from.Unix(), to.Unix(), down, loads, func(a, z int64, v float64) {
			got = append(got, run{a, z, math.Float64bits(v)})
		})
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("case %d (clock %+v, [%v, %v), down %v, loads %v):\n got %v\nwant %v", i, c, from, to, down, loads, got, want)
		}
		runs += len(want)
	}
	if runs < 100000 {
		t.Fatalf("only %d runs in all", runs)
	}
}
