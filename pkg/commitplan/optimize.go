package commitplan

import (
	"cmp"
	"math"
	"slices"

	"github.com/shopspring/decimal"
)

// optimum returns the smallest commitment level c minimising
//
//	cost(c) = c·(1−d)·H + Σ_h Σ_k p_k · (usage of class k above c in hour h).
//
// cost is convex and piecewise linear: its slope just above c is
// (1−d)·H − Σ_h p_h(c), where p_h(c) is the price of the usage at height c in
// hour h (0 above the stack). Stacking the dearest usage at the bottom makes
// p_h fall with c, so the slope only rises, and the optimum is the first
// level where it is no longer negative. With on-demand usage only, Σ_h p_h(c)
// is the number of hours usage exceeds c: the optimum is the level exceeded in
// a share (1−d) of the hours. Where the slope is exactly 0 the cost is flat
// and the smaller commitment is taken. It is 0 when committing never pays.
func (c *curve) optimum(d float64) float64 {
	H := float64(c.hours)
	target := (1 - d) * H
	tol := 1e-9 * math.Max(H, 1)
	var events []event
	if c.events != nil {
		events = (*c.events)[:0]
		defer func() { *c.events = events[:0] }()
	}
	var sum float64 // Σ_h p_h just above the current level
	for h := range c.seg {
		below := -1.0
		for k, l := range c.seg[h] {
			if l <= 0 {
				continue
			}
			p := c.prices[k]
			if below < 0 {
				sum += p
			} else {
				events = append(events, event{c.levelBelow(h, k), below - p})
			}
			below = p
		}
		if below >= 0 {
			events = append(events, event{c.top(h), below})
		}
	}
	if target-sum >= -tol {
		return 0
	}
	slices.SortFunc(events, func(a, b event) int { return cmp.Compare(a.level, b.level) })
	for i := 0; i < len(events); {
		j := i
		for ; j < len(events) && events[j].level == events[i].level; j++ {
			sum -= events[j].drop
		}
		if target-sum >= -tol {
			return events[i].level
		}
		i = j
	}
	// Unreachable for d > 0: above the peak the slope is (1−d)·H.
	return c.peak()
}

// event is where the slope of the cost rises: at level, by drop.
type event struct{ level, drop float64 }

// levelBelow is the stack's height at the bottom of class k in hour h.
func (c *curve) levelBelow(h, k int) float64 {
	if k == 0 {
		return 0
	}
	return c.cum[h][k-1]
}

func (c *curve) peak() float64 {
	var m float64
	for h := range c.seg {
		m = max(m, c.top(h))
	}
	return m
}

// usage is a curve's usage at a commitment level, summed over the axis, in
// on-demand USD·hours.
type usage struct {
	covered    float64 // usage the commitment covers
	onDemand   float64 // usage above it on demand
	spotUsage  float64 // spot-eligible usage above it, at on-demand value
	spotCost   float64 // the same at spot prices
	totalUsage float64
}

// evaluate sums hour by hour, class by class; the builtin max and min are
// math.Max and math.Min without the call.
func (c *curve) evaluate(level float64) usage {
	var u usage
	prices := c.prices
	for _, cum := range c.cum {
		lo := 0.0
		for k, hi := range cum {
			above := max(0, hi-max(lo, level))
			if p := prices[k]; p >= 1 {
				u.onDemand += above
			} else {
				u.spotUsage += above
				u.spotCost += above * p
			}
			lo = hi
		}
		top := 0.0
		if len(cum) > 0 {
			top = cum[len(cum)-1]
		}
		u.covered += min(top, level)
		u.totalUsage += top
	}
	return u
}

// reaching counts the hours usage reaches the level.
func (c *curve) reaching(level float64) int {
	n := 0
	for h := range c.seg {
		if c.top(h) >= level-1e-9 {
			n++
		}
	}
	return n
}

// cost is a term's monthly money at one level, each part rounded to cents.
type cost struct {
	committed, onDemand, spot, total decimal.Decimal
	use                              usage
}

// toMonth converts a sum over the axis (USD·hours) to USD a month, in cents.
func (c *curve) toMonth(v float64) decimal.Decimal {
	if c.hours == 0 {
		return decimal.Zero
	}
	return decimal.NewFromFloat(v).Mul(hoursPerMonth).Div(decimal.NewFromInt(int64(c.hours))).Round(2)
}

// monthly prices the curve at a level: c·(1−d)·730 committed, the usage above
// it on demand or on spot, plus the instances already on spot (spotFixed).
func (c *curve) monthly(level, d float64, spotFixed decimal.Decimal) cost {
	p := c.price(level)
	out := cost{use: p.use}
	out.committed = decimal.NewFromFloat(level).Mul(oneMinus(d)).Mul(hoursPerMonth).Round(2)
	out.onDemand = p.onDemand
	out.spot = p.spot.Add(spotFixed)
	out.total = out.committed.Add(out.onDemand).Add(out.spot)
	return out
}

// priced is the usage at a level and its on-demand and spot money a month,
// which do not depend on the term.
type priced struct {
	use            usage
	onDemand, spot decimal.Decimal
}

// price is the usage at a level, evaluated once per level (the terms' cost
// curves share their levels).
func (c *curve) price(level float64) priced {
	key := math.Float64bits(level)
	if p, ok := c.priced[key]; ok {
		return p
	}
	u := c.evaluate(level)
	p := priced{use: u, onDemand: c.toMonth(u.onDemand), spot: c.toMonth(u.spotCost)}
	if c.priced == nil {
		c.priced = map[uint64]priced{}
	}
	c.priced[key] = p
	return p
}

// layers splits the usage: base (covered by the commitment), burst (on spot:
// spot-eligible usage above it and the instances already on spot), reserve
// (on demand above it). spotOD is the instances already on spot at
// on-demand prices.
func (c *curve) layers(level float64, k cost, spotOD decimal.Decimal) Layers {
	l := Layers{
		Base:    Layer{UsageMonthly: c.toMonth(k.use.covered), CostMonthly: k.committed},
		Burst:   Layer{UsageMonthly: c.toMonth(k.use.spotUsage).Add(spotOD), CostMonthly: k.spot},
		Reserve: Layer{UsageMonthly: c.toMonth(k.use.onDemand), CostMonthly: k.onDemand},
	}
	total := l.Base.UsageMonthly.Add(l.Burst.UsageMonthly).Add(l.Reserve.UsageMonthly)
	if total.IsPositive() {
		share := func(v decimal.Decimal) float64 { return round(v.Div(total).InexactFloat64(), 4) }
		l.Base.Share, l.Burst.Share, l.Reserve.Share = share(l.Base.UsageMonthly), share(l.Burst.UsageMonthly), share(l.Reserve.UsageMonthly)
	}
	return l
}

// allocate splits a saving over the items in proportion to their usage inside
// the committed band [0, level], valued at their price without the
// commitment. In each hour the band fills from the bottom of the stack; items
// of one price class share their class's part pro rata.
func (c *curve) allocate(level float64, saving decimal.Decimal) []Allocation {
	if level <= 0 || !saving.IsPositive() {
		return nil
	}
	band := make([]float64, len(c.items))
	byClass := make([][]int, len(c.prices))
	for i, it := range c.items {
		byClass[it.class] = append(byClass[it.class], i)
	}
	for h := range c.seg {
		left := level
		for k, l := range c.seg[h] {
			if l <= 0 || left <= 0 {
				continue
			}
			in := min(l, left)
			for _, i := range byClass[k] {
				band[i] += c.items[i].use[h] * in / l
			}
			left -= in
		}
	}
	var ids []string
	var weights, raw []float64
	var total float64
	for i, it := range c.items {
		if band[i] <= 1e-12 {
			continue
		}
		ids = append(ids, it.id)
		weights = append(weights, band[i]*c.prices[it.class])
		raw = append(raw, band[i])
		total += band[i]
	}
	parts := splitCents(saving, ids, weights)
	out := make([]Allocation, len(ids))
	for i, id := range ids {
		out[i] = Allocation{ID: id, BandShare: round(raw[i]/total, 4), SavingsMonthly: parts[i]}
	}
	return out
}

// costCurve samples the total monthly cost at n+1 even levels from 0 to the
// peak, and at the chosen level.
func (c *curve) costCurve(level, d float64, spotFixed decimal.Decimal, n int) []CurvePoint {
	peak := c.peak()
	levels := []float64{0, level}
	for i := 1; i <= n && peak > 0; i++ {
		levels = append(levels, round(peak*float64(i)/float64(n), 6))
	}
	slices.Sort(levels)
	levels = slices.Compact(levels)
	out := make([]CurvePoint, len(levels))
	for i, l := range levels {
		out[i] = CurvePoint{CommitHourly: l, TotalMonthly: c.monthly(l, d, spotFixed).total}
	}
	return out
}
