package governance

import (
	"math"
	"sort"

	"github.com/shopspring/decimal"

	moneyfmt "github.com/gpufinops/gpufinops/pkg/money"
)

// Metrics are the AI cost metrics of a fleet: how much of the paid GPU time
// did work, and what a busy GPU-hour, a million output tokens, a thousand
// requests and a training run cost. A figure is left out (nil) where the
// snapshot lacks what it needs.
//
// Money is rounded to cents, cost per 1M tokens and per 1,000 requests to four
// decimals; hours are rounded to two decimals, percentages to one.
type Metrics struct {
	Fleet        FleetMetrics      `json:"fleet"`
	Instances    []InstanceMetrics `json:"instances"`
	TrainingRuns []TrainingRun     `json:"trainingRuns"`
}

// InstanceMetrics are one instance's AI cost metrics for a month.
type InstanceMetrics struct {
	ResourceID string `json:"resourceId"`
	// Model is the fleet's model name, else the ModelName tag.
	Model        string  `json:"model,omitempty"`
	GPUCount     float64 `json:"gpuCount"`
	MonthlyHours float64 `json:"monthlyHours"`
	MonthlyCost  Money   `json:"monthlyCost"`
	Priced       bool    `json:"priced"`
	// PaidGPUHours = GPUs × billed hours a month.
	PaidGPUHours float64 `json:"paidGpuHours"`
	// GPUUtilAvg is the average utilization of the busiest GPU, percent.
	GPUUtilAvg *float64 `json:"gpuUtilAvg,omitempty"`
	// BusyGPUHours = GPUUtilAvg / 100 × PaidGPUHours. The utilization is of the
	// busiest GPU, so for several GPUs this is an upper bound.
	BusyGPUHours *float64 `json:"busyGpuHours,omitempty"`
	// EfficiencyPercent = BusyGPUHours / PaidGPUHours × 100.
	EfficiencyPercent *float64 `json:"gpuEfficiencyPercent,omitempty"`
	// CostPerGPUHour = MonthlyCost / PaidGPUHours.
	CostPerGPUHour *Money `json:"costPerGpuHour,omitempty"`
	// CostPerBusyGPUHour = MonthlyCost / BusyGPUHours.
	CostPerBusyGPUHour *Money `json:"costPerBusyGpuHour,omitempty"`
	// TokensPerSecond and RequestsPerSecond are the snapshot's throughput.
	TokensPerSecond   *float64 `json:"tokensPerSecond,omitempty"`
	RequestsPerSecond *float64 `json:"requestsPerSecond,omitempty"`
	// MonthlyOutputTokens = TokensPerSecond × 3600 × billed hours, and
	// MonthlyRequests likewise.
	MonthlyOutputTokens *float64 `json:"monthlyOutputTokens,omitempty"`
	MonthlyRequests     *float64 `json:"monthlyRequests,omitempty"`
	// CostPerMillionTokens = MonthlyCost / MonthlyOutputTokens × 1,000,000.
	CostPerMillionTokens *UnitCost `json:"costPerMillionTokens,omitempty"`
	// CostPerThousandRequests = MonthlyCost / MonthlyRequests × 1,000.
	CostPerThousandRequests *UnitCost `json:"costPerThousandRequests,omitempty"`
	// TrainingRun is the run the instance works on, if any.
	TrainingRun string `json:"trainingRun,omitempty"`
}

// FleetMetrics are the fleet's AI cost metrics: sums over the instances that
// have the data, so idle and busy instances weigh by their GPU-hours and cost.
type FleetMetrics struct {
	// PaidGPUHours sums every instance's; MeasuredGPUHours those with
	// utilization data; BusyGPUHours their busy GPU-hours.
	PaidGPUHours     float64 `json:"paidGpuHours"`
	MeasuredGPUHours float64 `json:"measuredGpuHours"`
	BusyGPUHours     float64 `json:"busyGpuHours"`
	// EfficiencyPercent = BusyGPUHours / MeasuredGPUHours × 100.
	EfficiencyPercent *float64 `json:"gpuEfficiencyPercent,omitempty"`
	// CostPerBusyGPUHour = the monthly cost of the priced, measured instances /
	// their busy GPU-hours.
	CostPerBusyGPUHour *Money `json:"costPerBusyGpuHour,omitempty"`
	// MonthlyOutputTokens and MonthlyRequests sum the instances that report
	// throughput.
	MonthlyOutputTokens float64 `json:"monthlyOutputTokens"`
	MonthlyRequests     float64 `json:"monthlyRequests"`
	// CostPerMillionTokens = the cost of the priced instances that report
	// tokens / their tokens × 1,000,000; CostPerThousandRequests likewise.
	CostPerMillionTokens    *UnitCost `json:"costPerMillionTokens,omitempty"`
	CostPerThousandRequests *UnitCost `json:"costPerThousandRequests,omitempty"`
}

// TrainingRun is the cost of one training run: the instances whose workload
// (or TrainingRun tag) names it.
type TrainingRun struct {
	ID        string   `json:"id"`
	Instances []string `json:"instances"`
	GPUCount  float64  `json:"gpuCount"`
	// MonthlyCost sums the instances' current monthly costs.
	MonthlyCost Money `json:"monthlyCost"`
	// Priced is false when an instance of the run has no price; the costs then
	// leave it out and RunCost is not given.
	Priced bool `json:"priced"`
	// ExpectedHours is the longest trainingRunHours of the run's instances.
	ExpectedHours *float64 `json:"expectedHours,omitempty"`
	// RunCost = Σ hourly price × the instance's trainingRunHours (the run's
	// ExpectedHours where an instance gives none): what the whole run costs.
	RunCost *Money `json:"runCost,omitempty"`
}

var (
	secondsPerHour = decimal.NewFromInt(3600)
	million        = decimal.NewFromInt(1_000_000)
	thousand       = decimal.NewFromInt(1_000)
)

func dec(f float64) decimal.Decimal { return decimal.NewFromFloat(f) }

func ptr[T any](v T) *T { return &v }

// ComputeMetrics computes the AI cost metrics of items.
func ComputeMetrics(items []Item) Metrics {
	mb := newMetricsBuilder(items)
	ps := newPass(Policy{}, nil)
	for i := range items {
		v := ps.read(&items[i])
		mb.add(&items[i], ps, &v)
	}
	return mb.finish()
}

// metricsBuilder measures items one by one for ComputeMetrics. An
// instance's figures are a function of a few of its numbers (GPUs, hours,
// utilization, throughput, cost), which most instances share with others:
// each distinct figure is computed once, and the fleet's sums add each
// distinct figure times the number of instances that have it. Sums of
// decimals are exact, so the order of the terms does not matter.
type metricsBuilder struct {
	m     Metrics
	items []Item
	base  map[baseKey]*baseFigures
	busy  map[busyKey]*busyFigures
	// rates are the token and the request figures.
	rates [2]map[rateKey]*rateFigures
	// perGPUHour are the costs per GPU-hour by their inputs. (Costs per
	// busy GPU-hour, 1M tokens or 1,000 requests are rarely shared.)
	perGPUHour boundedMemo[baseKey, Money]
	// The fleet's sums: of costs in cents, and of the figures flushed from
	// the maps above.
	busyCost, tokenCost, requestCost                                                   sum
	paid, measured, busyHours, pricedBusyHours, tokens, pricedTokens, reqs, pricedReqs decimal.Decimal
	runs                                                                               map[string][]int
	runIDs                                                                             []string
	floats                                                                             slab[float64]
	moneys                                                                             slab[Money]
	units                                                                              slab[UnitCost]
}

// baseKey is what an instance's paid GPU-hours depend on: its GPUs and
// billed hours (as bits).
type baseKey struct{ gpus, hours uint64 }

type baseFigures struct {
	hours, paid       decimal.Decimal
	hoursR, paidR     float64
	hoursPos, paidPos bool
	n                 int64
}

// busyKey adds the utilization to a baseKey.
type busyKey struct {
	base baseKey
	util uint64
}

type busyFigures struct {
	paid, busy decimal.Decimal
	busyR, eff float64
	busyPos    bool
	n, nPriced int64
}

// rateKey is what a month's tokens or requests depend on: the rate per
// second and the billed hours.
type rateKey struct{ rate, hours uint64 }

type rateFigures struct {
	total      decimal.Decimal
	totalR     float64
	n, nPriced int64
}

// costKey adds a cost in cents to a key.
type costKey[K comparable] struct {
	k     K
	cents int64
}

// maxFigures bounds the maps of figures: they are added to the sums and
// emptied when one is full. Tests lower it.
var maxFigures = 1 << 16

func newMetricsBuilder(items []Item) *metricsBuilder {
	mb := &metricsBuilder{
		m:     Metrics{Instances: make([]InstanceMetrics, 0, len(items)), TrainingRuns: []TrainingRun{}},
		items: items,
		base:  map[baseKey]*baseFigures{},
		busy:  map[busyKey]*busyFigures{},
		rates: [2]map[rateKey]*rateFigures{{}, {}},
		runs:  map[string][]int{},
	}
	for _, d := range []*decimal.Decimal{&mb.paid, &mb.measured, &mb.busyHours, &mb.pricedBusyHours, &mb.tokens, &mb.pricedTokens, &mb.reqs, &mb.pricedReqs} {
		*d = decimal.Zero
	}
	return mb
}

// zeroMoney is what an unpriced instance costs a month.
var zeroMoney = NewMoney(decimal.Zero)

// add measures the item v views.
func (mb *metricsBuilder) add(it *Item, ps *pass, v *view) {
	model, run := ps.modelRun(it, v)
	if run != "" {
		if _, ok := mb.runs[run]; !ok {
			mb.runIDs = append(mb.runIDs, run)
		}
		mb.runs[run] = append(mb.runs[run], len(mb.m.Instances))
	}
	cost := v.cur
	bk := baseKey{math.Float64bits(it.GPUCount), math.Float64bits(it.MonthlyHours)}
	bf := mb.baseOf(bk, it)
	bf.n++
	im := InstanceMetrics{
		ResourceID:   it.ID,
		Model:        model,
		GPUCount:     it.GPUCount,
		MonthlyHours: bf.hoursR,
		MonthlyCost:  zeroMoney,
		Priced:       it.Priced,
		PaidGPUHours: bf.paidR,
		TrainingRun:  run,
	}
	if it.Priced {
		im.MonthlyCost = Money{cost.d}
		if bf.paidPos {
			im.CostPerGPUHour = mb.moneys.ptr(mb.perGPUHour.get(bk, cost, func() Money { return moneyQuo(cost.d, bf.paid) }))
		}
	}
	if it.GPUUtilAvg != nil && bf.paidPos {
		u := *it.GPUUtilAvg
		k := busyKey{bk, math.Float64bits(u)}
		f := mb.busyOf(k, u, bf)
		f.n++
		im.GPUUtilAvg, im.BusyGPUHours, im.EfficiencyPercent = mb.floats.ptr(u), mb.floats.ptr(f.busyR), mb.floats.ptr(f.eff)
		if it.Priced {
			f.nPriced++
			mb.busyCost.add(cost)
			if f.busyPos {
				im.CostPerBusyGPUHour = mb.moneys.ptr(moneyQuo(cost.d, f.busy))
			}
		}
	}
	if w := it.Workload; w != nil && bf.hoursPos {
		if w.TokensPerSecond > 0 {
			f := mb.rateOf(0, w.TokensPerSecond, it.MonthlyHours, bf)
			im.TokensPerSecond, im.MonthlyOutputTokens = mb.floats.ptr(w.TokensPerSecond), mb.floats.ptr(f.totalR)
			if it.Priced {
				f.nPriced++
				mb.tokenCost.add(cost)
				im.CostPerMillionTokens = mb.units.ptr(unitCostPer(cost.d, million, f.total))
			}
		}
		if w.RequestsPerSecond > 0 {
			f := mb.rateOf(1, w.RequestsPerSecond, it.MonthlyHours, bf)
			im.RequestsPerSecond, im.MonthlyRequests = mb.floats.ptr(w.RequestsPerSecond), mb.floats.ptr(f.totalR)
			if it.Priced {
				f.nPriced++
				mb.requestCost.add(cost)
				im.CostPerThousandRequests = mb.units.ptr(unitCostPer(cost.d, thousand, f.total))
			}
		}
	}
	mb.m.Instances = append(mb.m.Instances, im)
}

func (mb *metricsBuilder) baseOf(k baseKey, it *Item) *baseFigures {
	if f, ok := mb.base[k]; ok {
		return f
	}
	if len(mb.base) >= maxFigures {
		mb.flush()
	}
	hours := dec(it.MonthlyHours)
	paid := dec(it.GPUCount).Mul(hours)
	f := &baseFigures{hours: hours, paid: paid, hoursR: round2(hours), paidR: round2(paid), hoursPos: hours.IsPositive(), paidPos: paid.IsPositive()}
	mb.base[k] = f
	return f
}

func (mb *metricsBuilder) busyOf(k busyKey, u float64, bf *baseFigures) *busyFigures {
	if f, ok := mb.busy[k]; ok {
		return f
	}
	if len(mb.busy) >= maxFigures {
		mb.flush()
	}
	b := percentOf(moneyfmt.Mul(dec(u), bf.paid))
	f := &busyFigures{paid: bf.paid, busy: b, busyR: round2(b), eff: b.Mul(hundred).Div(bf.paid).Round(1).InexactFloat64(), busyPos: b.IsPositive()}
	mb.busy[k] = f
	return f
}

// percentOf is p.Div(hundred) in value. When p has at most
// decimal.DivisionPrecision-2 decimals the quotient is exact, and it is p
// with its exponent lowered by two: no 20-digit coefficient (p at
// DivisionPrecision decimals) that the cost per busy GPU-hour divides by.
func percentOf(p decimal.Decimal) decimal.Decimal {
	if p.Exponent()-2 >= -int32(decimal.DivisionPrecision) {
		return p.Shift(-2)
	}
	return p.Div(hundred)
}

// rateOf counts an instance with rate tokens (which 0) or requests (1) a
// second.
func (mb *metricsBuilder) rateOf(which int, rate, hours float64, bf *baseFigures) *rateFigures {
	k := rateKey{math.Float64bits(rate), math.Float64bits(hours)}
	f, ok := mb.rates[which][k]
	if !ok {
		if len(mb.rates[which]) >= maxFigures {
			mb.flush()
		}
		t := dec(rate).Mul(secondsPerHour).Mul(bf.hours)
		f = &rateFigures{total: t, totalR: t.Round(0).InexactFloat64()}
		mb.rates[which][k] = f
	}
	f.n++
	return f
}

// flush adds the figures counted so far to the fleet's sums and forgets
// them.
func (mb *metricsBuilder) flush() {
	times := func(d decimal.Decimal, n int64) decimal.Decimal {
		if n == 1 {
			return d
		}
		return d.Mul(decimal.NewFromInt(n))
	}
	for _, f := range mb.base {
		if f.n > 0 {
			mb.paid = mb.paid.Add(times(f.paid, f.n))
		}
	}
	for _, f := range mb.busy {
		if f.n > 0 {
			mb.measured = mb.measured.Add(times(f.paid, f.n))
			mb.busyHours = mb.busyHours.Add(times(f.busy, f.n))
		}
		if f.nPriced > 0 {
			mb.pricedBusyHours = mb.pricedBusyHours.Add(times(f.busy, f.nPriced))
		}
	}
	sums := [2][2]*decimal.Decimal{{&mb.tokens, &mb.pricedTokens}, {&mb.reqs, &mb.pricedReqs}}
	for which, rates := range mb.rates {
		for _, f := range rates {
			if f.n > 0 {
				*sums[which][0] = sums[which][0].Add(times(f.total, f.n))
			}
			if f.nPriced > 0 {
				*sums[which][1] = sums[which][1].Add(times(f.total, f.nPriced))
			}
		}
		clear(rates)
	}
	clear(mb.base)
	clear(mb.busy)
}

func (mb *metricsBuilder) finish() Metrics {
	mb.flush()
	m := &mb.m
	f := &m.Fleet
	paid, measured, busy := mb.paid, mb.measured, mb.busyHours
	f.PaidGPUHours, f.MeasuredGPUHours, f.BusyGPUHours = round2(paid), round2(measured), round2(busy)
	if measured.IsPositive() {
		f.EfficiencyPercent = ptr(busy.Mul(hundred).Div(measured).Round(1).InexactFloat64())
	}
	if mb.pricedBusyHours.IsPositive() {
		f.CostPerBusyGPUHour = ptr(moneyQuo(mb.busyCost.value(), mb.pricedBusyHours))
	}
	f.MonthlyOutputTokens = mb.tokens.Round(0).InexactFloat64()
	f.MonthlyRequests = mb.reqs.Round(0).InexactFloat64()
	if mb.pricedTokens.IsPositive() {
		f.CostPerMillionTokens = ptr(unitCostPer(mb.tokenCost.value(), million, mb.pricedTokens))
	}
	if mb.pricedReqs.IsPositive() {
		f.CostPerThousandRequests = ptr(unitCostPer(mb.requestCost.value(), thousand, mb.pricedReqs))
	}
	m.TrainingRuns = mb.trainingRuns()
	return *m
}

// boundedMemo holds values computed from a key and a cost in cents, up to
// maxFigures of them.
type boundedMemo[K comparable, V any] struct{ m map[costKey[K]]V }

// get is the value for k and cost, made by mk when not held (always when
// the cost does not fit an int64 of cents).
func (b *boundedMemo[K, V]) get(k K, cost cents, mk func() V) V {
	if !cost.small {
		return mk()
	}
	ck := costKey[K]{k, cost.n}
	if v, ok := b.m[ck]; ok {
		return v
	}
	if b.m == nil || len(b.m) >= maxFigures {
		b.m = map[costKey[K]]V{}
	}
	v := mk()
	b.m[ck] = v
	return v
}

// slab hands out pointers to values held in shared arrays, one allocation
// per 256 of them.
type slab[T any] struct{ buf []T }

func (s *slab[T]) ptr(v T) *T {
	if len(s.buf) == cap(s.buf) {
		s.buf = make([]T, 0, 256)
	}
	s.buf = append(s.buf, v)
	return &s.buf[len(s.buf)-1]
}

// trainingRuns groups the items by run, sorted by run id.
func (mb *metricsBuilder) trainingRuns() []TrainingRun {
	ids := mb.runIDs
	sort.Strings(ids)
	runs := make([]TrainingRun, 0, len(ids))
	for _, id := range ids {
		members := mb.runs[id]
		run := TrainingRun{ID: id, Priced: true, Instances: make([]string, 0, len(members))}
		var monthly sum
		var expected float64
		for _, i := range members {
			it := &mb.items[i]
			run.Instances = append(run.Instances, it.ID)
			run.GPUCount += it.GPUCount
			if it.Priced {
				monthly.add(centsOf(it.MonthlyCost))
			} else {
				run.Priced = false
			}
			if it.Workload != nil {
				expected = max(expected, it.Workload.TrainingRunHours)
			}
		}
		run.MonthlyCost = NewMoney(monthly.value())
		if expected > 0 {
			run.ExpectedHours = ptr(expected)
			if run.Priced {
				total := decimal.Zero
				for _, i := range members {
					it := mb.items[i]
					h := expected
					if it.Workload != nil && it.Workload.TrainingRunHours > 0 {
						h = it.Workload.TrainingRunHours
					}
					total = total.Add(hourly(it).Mul(dec(h)))
				}
				run.RunCost = ptr(NewMoney(total))
			}
		}
		runs = append(runs, run)
	}
	return runs
}

// hourly is an item's price per instance-hour: HourlyPrice, else its monthly
// cost over its billed hours.
func hourly(it Item) decimal.Decimal {
	if !it.HourlyPrice.IsZero() || it.MonthlyHours <= 0 {
		return it.HourlyPrice
	}
	return it.MonthlyCost.Div(dec(it.MonthlyHours))
}
