package warehousesim

import (
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/internal/focusgen"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
)

// The simulated bill's terms: a negotiated discount, a quarter of each
// on-demand instance's hours on a savings plan, and an hour's unused part.
var (
	Discount           = decimal.RequireFromString("0.12")
	Committed          = decimal.RequireFromString("0.25")
	CommitmentDiscount = decimal.RequireFromString("0.28")
	UnusedCommitment   = decimal.RequireFromString("1.25")
)

// Bill is the export cmd/cloudsim writes for the fleet it serves: the
// catalog's on-demand prices on the terms above, hours hourly rows per
// running instance from start, a storage row per instance-hour.
func Bill(start time.Time, hours int, cat pricing.Catalog) focusgen.Options {
	return focusgen.Options{
		Start: start, Hours: hours,
		List: func(in *fleet.Instance) (decimal.Decimal, bool) {
			off, ok := cat.Offer(in.Provider, in.Region, in.PriceKey())
			if !ok || off.OnDemand == nil || in.State == fleet.Stopped {
				return decimal.Zero, false
			}
			return off.OnDemand.Hourly, true
		},
		Discount: Discount, Committed: Committed, CommitmentDiscount: CommitmentDiscount,
		UnusedCommitment: UnusedCommitment, Noise: 1,
	}
}
