package commitplan

import (
	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// Final is what ItemFrom needs to know of an instance as the plan leaves it
// (after idle-stop, schedules, rightsizing and spot).
type Final struct {
	InstanceType string
	// Family is the final type's family; empty when the catalog does not
	// know it, and the instance type is its own scope.
	Family    string
	Lifecycle fleet.Lifecycle
	// Priced is false when no price is known.
	Priced bool
	// OnDemandHourly is the on-demand price of the final type, USD per hour.
	OnDemandHourly decimal.Decimal
	// Hourly is what it pays per hour in its final lifecycle (the spot price
	// when on spot).
	Hourly       decimal.Decimal
	MonthlyHours float64
	Stopped      bool
	// Schedule is the weekly schedule it runs on, when known.
	Schedule *fleet.Schedule
}

// Reasons an instance is not in a usage curve.
const (
	ReasonUnpriced      = "unpriced"
	ReasonStopped       = "stopped"
	ReasonCommitted     = "already covered by a commitment"
	ReasonSpot          = "runs on spot (the burst layer)"
	ReasonNoUtilization = "no utilization data: never judged idle, so never committed"
)

// ItemFrom turns a fleet instance and its final state into an Item, so that
// the engine and the commit-plan command choose the same instances: only
// priced, running instances on demand with utilization data are eligible
// (capacity the idle and rightsize rules have judged); spot instances are the
// burst layer; instances already committed, stopped or unpriced are left out.
// An eligible instance's samples (and their window) place its hours when it
// has no schedule.
func ItemFrom(in *fleet.Instance, f Final) Item {
	it := Item{
		ID:             in.ID,
		Provider:       in.Provider,
		Region:         in.Region,
		Family:         f.Family,
		InstanceType:   f.InstanceType,
		OnDemandHourly: f.OnDemandHourly,
		MonthlyHours:   f.MonthlyHours,
		Schedule:       f.Schedule,
	}
	if it.InstanceType == "" {
		it.InstanceType = in.InstanceType
	}
	if it.Family == "" {
		it.Family = it.InstanceType
	}
	switch {
	case !f.Priced:
		it.Reason = ReasonUnpriced
	case f.Stopped || in.State == fleet.Stopped:
		it.Reason = ReasonStopped
	case in.Lifecycle == fleet.Committed:
		it.Reason = ReasonCommitted
	case f.Lifecycle == fleet.Spot:
		it.Reason, it.SpotEligible, it.SpotHourly = ReasonSpot, true, f.Hourly
	case !hasUtilization(in.Utilization):
		it.Reason = ReasonNoUtilization
	default:
		it.Eligible = true
		it.Samples = in.Utilization.Samples
		it.Window = in.Utilization.Window
	}
	return it
}

// hasUtilization reports whether u.Summarize() is not nil, without the
// summary: samples of which one has a GPU reading, or else aggregate GPU
// figures.
func hasUtilization(u *fleet.Utilization) bool {
	switch {
	case u == nil:
		return false
	case len(u.Samples) > 0:
		for _, s := range u.Samples {
			if len(s.GPU) > 0 {
				return true
			}
		}
		return false
	}
	return u.GPU != nil
}
