// Package governance audits the tags of GPU instances against a tag policy,
// allocates their monthly cost to teams, projects, workload types,
// environments and clouds, and computes AI cost metrics: GPU utilization
// efficiency, cost per busy GPU-hour, cost per 1M output tokens, cost per
// 1,000 requests and cost per training run. docs/governance.md documents every
// rule and formula.
//
// The package is pure: the same items and policy give the same report. It sees
// the fleet snapshot and the costs the engine computed, nothing else.
package governance

import (
	"fmt"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	moneyfmt "github.com/gpufinops/gpufinops/pkg/money"
)

// Report is the governance part of a plan: the tag audit, the cost allocation
// and the AI cost metrics.
type Report struct {
	Audit      Audit      `json:"audit"`
	Allocation Allocation `json:"allocation"`
	Metrics    Metrics    `json:"metrics"`
}

// Build audits, allocates and measures items under a policy.
func Build(items []Item, p Policy) Report { return BuildEach(items, p, nil) }

// BuildEach is Build handing each instance's violations to each as
// AuditTagsEach does. It reads each item once for the three parts, so each
// must not change the items.
func BuildEach(items []Item, p Policy, each func(*InstanceViolations)) Report {
	au := newAuditor(p, len(items), each)
	ps := newPass(p, au.memo.keys)
	al := newAllocator()
	mb := newMetricsBuilder(items)
	for i := range items {
		it := &items[i]
		v := ps.read(it)
		au.add(it, &v)
		al.add(it, ps, &v)
		mb.add(it, ps, &v)
	}
	return Report{Audit: au.finish(), Allocation: al.finish(), Metrics: mb.finish()}
}

// Item is one instance as governance sees it: what the snapshot says about it
// and what the engine says it costs. NewItem fills the snapshot part; the
// caller sets the costs.
type Item struct {
	ID           string
	Provider     fleet.Provider
	Account      string
	Region       string
	InstanceType string
	Tags         map[string]string
	Workload     *fleet.Workload
	// GPUCount is the number of GPUs (fractional for a partition).
	GPUCount float64
	// MonthlyHours are the billed hours a month; 0 when stopped.
	MonthlyHours float64
	// GPUUtilAvg is the average GPU utilization in percent over the window, of
	// the busiest GPU at each instant; nil without GPU data.
	GPUUtilAvg *float64
	// HourlyPrice is the USD price per instance-hour the cost was computed from.
	HourlyPrice decimal.Decimal
	// MonthlyCost is the current USD cost a month.
	MonthlyCost decimal.Decimal
	// OptimizedCost is the USD cost a month once the plan is applied.
	OptimizedCost decimal.Decimal
	// Priced is false when no price was found; the costs are then zero.
	Priced bool
}

// NewItem takes from an instance everything but its costs.
func NewItem(in *fleet.Instance) Item {
	return NewItemSummarized(in, in.Utilization.Summarize(), in.MonthlyHours())
}

// NewItemSummarized is NewItem for an instance whose utilization summary
// (Utilization.Summarize) and billed hours (MonthlyHours) are known.
func NewItemSummarized(in *fleet.Instance, summary *fleet.Summary, hours float64) Item {
	it := Item{
		ID:           in.ID,
		Provider:     in.Provider,
		Account:      in.Account,
		Region:       in.Region,
		InstanceType: in.InstanceType,
		Tags:         in.Tags,
		Workload:     in.Workload,
		GPUCount:     in.GPU.Count,
		MonthlyHours: hours,
	}
	if summary != nil && summary.GPU != nil {
		avg := summary.GPU.Avg
		it.GPUUtilAvg = &avg
	}
	return it
}

// Money is an amount in USD rounded to cents. JSON writes it as a number with
// two decimals, e.g. 884.76.
type Money struct{ decimal.Decimal }

// NewMoney rounds d to cents, half away from zero.
func NewMoney(d decimal.Decimal) Money { return Money{moneyfmt.RoundPlaces(d, moneyPlaces)} }

// moneyQuo is NewMoney(a.Div(b)), without the 16-decimal quotient between.
func moneyQuo(a, b decimal.Decimal) Money { return Money{moneyfmt.QuoRound(a, b, moneyPlaces)} }

// moneyPlaces and unitCostPlaces are the decimals Money and UnitCost keep.
const (
	moneyPlaces    = 2
	unitCostPlaces = 4
)

// MarshalJSON writes the amount as an unquoted number with two decimals.
func (m Money) MarshalJSON() ([]byte, error) { return []byte(m.StringFixed(2)), nil }

// UnmarshalJSON reads a number and rounds it to cents.
func (m *Money) UnmarshalJSON(b []byte) error {
	d, err := decimal.NewFromString(strings.Trim(string(b), `"`))
	if err != nil {
		return fmt.Errorf("governance: %s is not an amount", b)
	}
	*m = NewMoney(d)
	return nil
}

// UnitCost is a cost per unit of output (1M tokens, 1,000 requests) in USD,
// rounded to four decimals: such amounts are often below a cent. JSON writes it
// as a number with four decimals, e.g. 1.1222.
type UnitCost struct{ decimal.Decimal }

// NewUnitCost rounds d to four decimals, half away from zero.
func NewUnitCost(d decimal.Decimal) UnitCost {
	return UnitCost{moneyfmt.RoundPlaces(d, unitCostPlaces)}
}

// unitCostPer is NewUnitCost(cost.Mul(per).Div(units)): the cost of per
// units when units cost cost.
func unitCostPer(cost, per, units decimal.Decimal) UnitCost {
	return UnitCost{moneyfmt.QuoRound(moneyfmt.Mul(cost, per), units, unitCostPlaces)}
}

// MarshalJSON writes the cost as an unquoted number with four decimals.
func (u UnitCost) MarshalJSON() ([]byte, error) { return []byte(u.StringFixed(4)), nil }

// UnmarshalJSON reads a number and rounds it to four decimals.
func (u *UnitCost) UnmarshalJSON(b []byte) error {
	d, err := decimal.NewFromString(strings.Trim(string(b), `"`))
	if err != nil {
		return fmt.Errorf("governance: %s is not an amount", b)
	}
	*u = NewUnitCost(d)
	return nil
}

// Dollars formats an amount for sentences: "$71,773.60", "-$5.00".
func Dollars(d decimal.Decimal) string { return moneyfmt.Format(d, moneyfmt.USD) }

var hundred = decimal.NewFromInt(100)

// percent is part / whole × 100 rounded to one decimal; 100 when whole is 0
// (nothing to measure means nothing is missing).
func percent(part, whole decimal.Decimal) float64 {
	if whole.IsZero() {
		return 100
	}
	return part.Mul(hundred).Div(whole).Round(1).InexactFloat64()
}

// round2 rounds a decimal to two places and returns it as a float64, for
// hours and other figures that are not money.
func round2(d decimal.Decimal) float64 { return d.Round(2).InexactFloat64() }
