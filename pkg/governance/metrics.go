package governance

import (
	"sort"
	"strings"

	"github.com/shopspring/decimal"
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
	m := Metrics{Instances: make([]InstanceMetrics, 0, len(items)), TrainingRuns: []TrainingRun{}}
	var paid, measured, busy, busyCost, busyHours decimal.Decimal
	var tokens, tokenCost, pricedTokens, requests, requestCost, pricedRequests decimal.Decimal
	for _, it := range items {
		im, x := instanceMetrics(it)
		m.Instances = append(m.Instances, im)
		paid = paid.Add(x.paid)
		if x.busy != nil {
			measured = measured.Add(x.paid)
			busy = busy.Add(*x.busy)
			if it.Priced && x.paid.IsPositive() {
				busyCost = busyCost.Add(x.cost)
				busyHours = busyHours.Add(*x.busy)
			}
		}
		if x.tokens != nil {
			tokens = tokens.Add(*x.tokens)
			if it.Priced {
				tokenCost = tokenCost.Add(x.cost)
				pricedTokens = pricedTokens.Add(*x.tokens)
			}
		}
		if x.requests != nil {
			requests = requests.Add(*x.requests)
			if it.Priced {
				requestCost = requestCost.Add(x.cost)
				pricedRequests = pricedRequests.Add(*x.requests)
			}
		}
	}
	f := &m.Fleet
	f.PaidGPUHours, f.MeasuredGPUHours, f.BusyGPUHours = round2(paid), round2(measured), round2(busy)
	if measured.IsPositive() {
		f.EfficiencyPercent = ptr(busy.Mul(hundred).Div(measured).Round(1).InexactFloat64())
	}
	if busyHours.IsPositive() {
		f.CostPerBusyGPUHour = ptr(NewMoney(busyCost.Div(busyHours)))
	}
	f.MonthlyOutputTokens = tokens.Round(0).InexactFloat64()
	f.MonthlyRequests = requests.Round(0).InexactFloat64()
	if pricedTokens.IsPositive() {
		f.CostPerMillionTokens = ptr(NewUnitCost(tokenCost.Mul(million).Div(pricedTokens)))
	}
	if pricedRequests.IsPositive() {
		f.CostPerThousandRequests = ptr(NewUnitCost(requestCost.Mul(thousand).Div(pricedRequests)))
	}
	m.TrainingRuns = trainingRuns(items)
	return m
}

// exact holds an instance's figures before rounding, for the fleet's sums.
type exact struct {
	cost, paid       decimal.Decimal
	busy             *decimal.Decimal
	tokens, requests *decimal.Decimal
}

func instanceMetrics(it Item) (InstanceMetrics, exact) {
	cost, _ := costs(it)
	hours := dec(it.MonthlyHours)
	x := exact{cost: cost, paid: dec(it.GPUCount).Mul(hours)}
	im := InstanceMetrics{
		ResourceID:   it.ID,
		Model:        modelOf(it),
		GPUCount:     it.GPUCount,
		MonthlyHours: round2(hours),
		MonthlyCost:  NewMoney(cost),
		Priced:       it.Priced,
		PaidGPUHours: round2(x.paid),
		TrainingRun:  runOf(it),
	}
	if it.Priced && x.paid.IsPositive() {
		im.CostPerGPUHour = ptr(NewMoney(cost.Div(x.paid)))
	}
	if it.GPUUtilAvg != nil && x.paid.IsPositive() {
		u := *it.GPUUtilAvg
		b := dec(u).Mul(x.paid).Div(hundred)
		x.busy = &b
		im.GPUUtilAvg = ptr(u)
		im.BusyGPUHours = ptr(round2(b))
		im.EfficiencyPercent = ptr(b.Mul(hundred).Div(x.paid).Round(1).InexactFloat64())
		if it.Priced && b.IsPositive() {
			im.CostPerBusyGPUHour = ptr(NewMoney(cost.Div(b)))
		}
	}
	if w := it.Workload; w != nil && hours.IsPositive() {
		if w.TokensPerSecond > 0 {
			t := dec(w.TokensPerSecond).Mul(secondsPerHour).Mul(hours)
			x.tokens = &t
			im.TokensPerSecond = ptr(w.TokensPerSecond)
			im.MonthlyOutputTokens = ptr(t.Round(0).InexactFloat64())
			if it.Priced {
				im.CostPerMillionTokens = ptr(NewUnitCost(cost.Mul(million).Div(t)))
			}
		}
		if w.RequestsPerSecond > 0 {
			r := dec(w.RequestsPerSecond).Mul(secondsPerHour).Mul(hours)
			x.requests = &r
			im.RequestsPerSecond = ptr(w.RequestsPerSecond)
			im.MonthlyRequests = ptr(r.Round(0).InexactFloat64())
			if it.Priced {
				im.CostPerThousandRequests = ptr(NewUnitCost(cost.Mul(thousand).Div(r)))
			}
		}
	}
	return im, x
}

// modelOf is the fleet's model name, else the ModelName tag.
func modelOf(it Item) string {
	if it.Workload != nil && strings.TrimSpace(it.Workload.Model) != "" {
		return strings.TrimSpace(it.Workload.Model)
	}
	return strings.TrimSpace(lookup(it.Tags, TagModelName).value)
}

// runOf is the fleet's training run, else the TrainingRun tag.
func runOf(it Item) string {
	if it.Workload != nil && strings.TrimSpace(it.Workload.TrainingRun) != "" {
		return strings.TrimSpace(it.Workload.TrainingRun)
	}
	return strings.TrimSpace(lookup(it.Tags, TagTrainingRun).value)
}

// trainingRuns groups the items by run, sorted by run id.
func trainingRuns(items []Item) []TrainingRun {
	byID := map[string][]Item{}
	var ids []string
	for _, it := range items {
		id := runOf(it)
		if id == "" {
			continue
		}
		if _, ok := byID[id]; !ok {
			ids = append(ids, id)
		}
		byID[id] = append(byID[id], it)
	}
	sort.Strings(ids)
	runs := make([]TrainingRun, 0, len(ids))
	for _, id := range ids {
		run := TrainingRun{ID: id, Priced: true}
		monthly := decimal.Zero
		var expected float64
		for _, it := range byID[id] {
			run.Instances = append(run.Instances, it.ID)
			run.GPUCount += it.GPUCount
			c, _ := costs(it)
			monthly = monthly.Add(c)
			if !it.Priced {
				run.Priced = false
			}
			if it.Workload != nil {
				expected = max(expected, it.Workload.TrainingRunHours)
			}
		}
		run.MonthlyCost = NewMoney(monthly)
		if expected > 0 {
			run.ExpectedHours = ptr(expected)
			if run.Priced {
				total := decimal.Zero
				for _, it := range byID[id] {
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
