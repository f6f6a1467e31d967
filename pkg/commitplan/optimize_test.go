package commitplan

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// testCurve builds a curve from per-hour usage of each price class (prices
// descending, 1 = on demand), stacked as buildCurve stacks them.
func testCurve(prices []float64, seg [][]float64) *curve {
	c := &curve{hours: len(seg), prices: prices, seg: seg, cum: make([][]float64, len(seg))}
	for h := range seg {
		c.cum[h] = make([]float64, len(prices))
		level := 0.0
		for k := range prices {
			seg[h][k] = round(seg[h][k], 9)
			level = round(level+seg[h][k], 9)
			c.cum[h][k] = level
		}
	}
	return c
}

// bruteCost is the cost model written out directly, independent of evaluate:
// c·(1−d)·H + Σ_h Σ_k p_k·(max(top_k − c, 0) − max(bottom_k − c, 0)); with one
// on-demand class it is c·(1−d)·H + Σ_h max(u_h − c, 0).
func bruteCost(prices []float64, seg [][]float64, d, c float64) float64 {
	total := c * (1 - d) * float64(len(seg))
	for h := range seg {
		bottom := 0.0
		for k, p := range prices {
			top := bottom + seg[h][k]
			total += p * (math.Max(top-c, 0) - math.Max(bottom-c, 0))
			bottom = top
		}
	}
	return total
}

// candidates are every level where the cost's slope can change, and 0.
func candidates(prices []float64, seg [][]float64) []float64 {
	out := []float64{0}
	for h := range seg {
		level := 0.0
		for k := range prices {
			level += seg[h][k]
			out = append(out, level)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// checkOptimum verifies the optimizer against brute force: no candidate level
// and no point of a fine grid costs less, and no smaller level costs as little.
func checkOptimum(t *testing.T, name string, prices []float64, seg [][]float64, d float64) float64 {
	t.Helper()
	raw := make([][]float64, len(seg))
	for h := range seg {
		raw[h] = slices.Clone(seg[h])
	}
	c := testCurve(prices, seg)
	got := c.optimum(d)
	best := bruteCost(prices, raw, d, got)
	scale := 1e-9 * math.Max(1, best)
	cands := candidates(prices, raw)
	if !slices.ContainsFunc(cands, func(x float64) bool { return math.Abs(x-got) < 1e-8 }) {
		t.Errorf("%s: optimum %v is not a candidate level", name, got)
	}
	for _, x := range cands {
		cx := bruteCost(prices, raw, d, x)
		if cx < best-scale {
			t.Fatalf("%s: d=%v: level %v costs %v, less than the optimum %v at %v", name, d, x, cx, best, got)
		}
		if x < got-1e-8 && cx <= best+scale {
			t.Fatalf("%s: d=%v: smaller level %v costs %v, as little as the optimum %v at %v", name, d, x, cx, best, got)
		}
	}
	peak := cands[len(cands)-1]
	for i := 0; i <= 1000; i++ {
		x := peak * 1.1 * float64(i) / 1000
		if cx := bruteCost(prices, raw, d, x); cx < best-scale {
			t.Fatalf("%s: d=%v: grid level %v costs %v, less than the optimum %v at %v", name, d, x, cx, best, got)
		}
	}
	// evaluate (used for the money) agrees with the written-out formula.
	u := c.evaluate(got)
	if model := got*(1-d)*float64(c.hours) + u.onDemand + u.spotCost; math.Abs(model-best) > 1e-6*math.Max(1, best) {
		t.Errorf("%s: evaluate gives %v, brute force %v", name, model, best)
	}
	return got
}

// onDemandOnly makes a one-class curve from hourly usage.
func onDemandOnly(u []float64) ([]float64, [][]float64) {
	seg := make([][]float64, len(u))
	for h, v := range u {
		seg[h] = []float64{v}
	}
	return []float64{1}, seg
}

func repeatWeek(day func(h int) float64) []float64 {
	u := make([]float64, 168)
	for h := range u {
		u[h] = day(h % 24)
	}
	return u
}

func TestOptimumHandComputed(t *testing.T) {
	// 4 units 24/7 plus 2 units 12 h a day: u = 6 in 84 hours, 4 in 84.
	// Commit c: each unit below 4 is used every hour (share 1 > 1−d), so it
	// pays for any d > 0. A unit between 4 and 6 is used in 84/168 = 50 % of
	// hours. It pays only when 50 % > 1−d:
	//   d = 0.35: break-even 65 % > 50 %  → c = 4
	//   d = 0.55: break-even 45 % < 50 %  → c = 6
	//   d = 0.50: break-even 50 % = 50 %  → flat between 4 and 6; the smaller, c = 4
	//   d = 0:    nothing pays            → c = 0
	twoLevels := repeatWeek(func(h int) float64 {
		if h < 12 {
			return 6
		}
		return 4
	})
	for _, tc := range []struct {
		name string
		u    []float64
		d    float64
		want float64
	}{
		{"4 + 2×12h, d=0.35", twoLevels, 0.35, 4},
		{"4 + 2×12h, d=0.55", twoLevels, 0.55, 6},
		{"4 + 2×12h, d=0.50 tie", twoLevels, 0.50, 4},
		{"4 + 2×12h, d=0", twoLevels, 0, 0},
		{"flat 3", repeatWeek(func(int) float64 { return 3 }), 0.35, 3},
		{"flat 3, d=0", repeatWeek(func(int) float64 { return 3 }), 0, 0},
		{"zero", repeatWeek(func(int) float64 { return 0 }), 0.35, 0},
		// Business hours only: 10 h a day on 7 days = 41.7 % < 65 %.
		{"10 h a day", repeatWeek(func(h int) float64 { return b2f(h >= 8 && h < 18) * 2 }), 0.35, 0},
		// 10 h a day = 41.7 % < 45 %: still no 3-year commitment.
		{"10 h a day 3y", repeatWeek(func(h int) float64 { return b2f(h >= 8 && h < 18) * 2 }), 0.55, 0},
		// 11 h a day = 45.8 % > 45 %: the 3-year commitment pays.
		{"11 h a day 3y", repeatWeek(func(h int) float64 { return b2f(h >= 8 && h < 19) * 2 }), 0.55, 2},
		// Steps 1..24 over the day, d = 0.5: the level exceeded in ≥ 12 of 24
		// hours is 12 (hours with u > 12 are 12 of 24 = 50 %: flat, the smaller).
		{"staircase", repeatWeek(func(h int) float64 { return float64(h + 1) }), 0.5, 12},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prices, seg := onDemandOnly(tc.u)
			if got := checkOptimum(t, tc.name, prices, seg, tc.d); math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("optimum %v, want %v", got, tc.want)
			}
		})
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func TestOptimumSpot(t *testing.T) {
	// Spot-eligible usage stacks on top. 2 on-demand units 24/7 plus 3
	// spot-eligible units 24/7 at 60 % off spot (price 0.4). A spot-eligible
	// unit committed costs 1−d = 0.65 (1y) against 0.4 on spot: never commit
	// it. The on-demand units are committed: c = 2.
	const H = 168
	seg := make([][]float64, H)
	for h := range seg {
		seg[h] = []float64{2, 3}
	}
	if got := checkOptimum(t, "spot on top", []float64{1, 0.4}, seg, 0.35); got != 2 {
		t.Errorf("optimum %v, want 2", got)
	}
	// With a spot discount below the commitment's (s = 0.2, price 0.8 >
	// 1−d = 0.45) spot-eligible usage used every hour is committed too.
	for h := range seg {
		seg[h] = []float64{2, 3}
	}
	if got := checkOptimum(t, "shallow spot", []float64{1, 0.8}, seg, 0.55); got != 5 {
		t.Errorf("optimum %v, want 5", got)
	}
	// Break-even against spot: a spot-eligible unit used a share f of hours
	// is worth committing when (1−s)·f > 1−d. s = 0.2, d = 0.55: f > 0.5625.
	// Used 100 of 168 hours (59.5 %): commit. Used 90 (53.6 %): do not.
	for _, tc := range []struct {
		hours int
		want  float64
	}{{100, 1}, {90, 0}} {
		for h := range seg {
			seg[h] = []float64{0, b2f(h < tc.hours)}
		}
		if got := checkOptimum(t, "spot break-even", []float64{1, 0.8}, seg, 0.55); got != tc.want {
			t.Errorf("%d hours: optimum %v, want %v", tc.hours, got, tc.want)
		}
	}
}

func TestOptimumRandomAgainstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(2026, 11))
	for trial := range 400 {
		H := []int{24, 168, 336}[rng.IntN(3)]
		nClasses := 1 + rng.IntN(3)
		prices := []float64{1}
		for len(prices) < nClasses {
			prices = append(prices, 0.1+0.85*rng.Float64())
		}
		slices.SortFunc(prices, func(a, b float64) int { return -cmpFloat(a, b) })
		prices = slices.Compact(prices)
		quantized := rng.IntN(2) == 0 // integer usage: many ties and flat stretches
		seg := make([][]float64, H)
		for h := range seg {
			seg[h] = make([]float64, len(prices))
			for k := range prices {
				switch {
				case rng.IntN(4) == 0:
					// off
				case quantized:
					seg[h][k] = float64(rng.IntN(4))
				default:
					seg[h][k] = 5 * rng.Float64()
				}
			}
		}
		d := []float64{0, 0.2, 0.35, 0.37, 0.5, 0.55, 0.72, rng.Float64() * 0.9}[rng.IntN(8)]
		checkOptimum(t, "random", prices, seg, d)
		if t.Failed() {
			t.Fatalf("trial %d failed", trial)
		}
	}
}

// TestOptimumIsExceedanceQuantile checks the closed form for on-demand usage:
// the optimum is the smallest level exceeded in at most (1−d)·H hours.
func TestOptimumIsExceedanceQuantile(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for range 200 {
		u := make([]float64, 168)
		for h := range u {
			u[h] = float64(rng.IntN(12)) * 0.25
		}
		d := rng.Float64() * 0.8
		prices, seg := onDemandOnly(u)
		got := testCurve(prices, seg).optimum(d)
		levels := append([]float64{0}, u...)
		slices.Sort(levels)
		want := levels[len(levels)-1]
		for _, l := range levels {
			above := 0
			for _, v := range u {
				if v > l {
					above++
				}
			}
			if float64(above) <= (1-d)*168+1e-9 {
				want = l
				break
			}
		}
		if got != want {
			t.Fatalf("d=%v: optimum %v, exceedance quantile %v", d, got, want)
		}
	}
}
