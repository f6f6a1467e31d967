package pricing

import (
	"strings"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// CommitmentKind is what a commitment buys, in the cloud's own terms.
type CommitmentKind string

// The commitment kinds the catalog and live prices know.
const (
	// ComputeSavingsPlan is an AWS Compute Savings Plan: a $/hour commitment
	// that follows usage across families and regions.
	ComputeSavingsPlan CommitmentKind = "compute-savings-plan"
	// EC2InstanceSavingsPlan is an AWS EC2 Instance Savings Plan: a $/hour
	// commitment to one instance family in one region.
	EC2InstanceSavingsPlan CommitmentKind = "ec2-instance-savings-plan"
	// StandardRI and ConvertibleRI are AWS Reserved Instances.
	StandardRI    CommitmentKind = "standard-reserved-instance"
	ConvertibleRI CommitmentKind = "convertible-reserved-instance"
	// CapacityBlock is an AWS EC2 Capacity Block for ML (days to weeks).
	CapacityBlock CommitmentKind = "capacity-block"
	// Reservation is an Azure Reserved VM Instance: a quantity of a VM size.
	Reservation CommitmentKind = "reservation"
	// ResourceCUD is a GCP resource-based committed use discount: counts of
	// vCPUs, memory and GPUs in a region.
	ResourceCUD CommitmentKind = "resource-cud"
)

// CommitmentKinds lists every kind, in documentation order.
var CommitmentKinds = []CommitmentKind{ComputeSavingsPlan, EC2InstanceSavingsPlan, StandardRI, ConvertibleRI, CapacityBlock, Reservation, ResourceCUD}

// Valid reports whether k is a known kind.
func (k CommitmentKind) Valid() bool {
	for _, v := range CommitmentKinds {
		if v == k {
			return true
		}
	}
	return false
}

// Label is the kind as the cloud's console names it.
func (k CommitmentKind) Label() string {
	switch k {
	case ComputeSavingsPlan:
		return "Compute Savings Plan"
	case EC2InstanceSavingsPlan:
		return "EC2 Instance Savings Plan"
	case StandardRI:
		return "Standard Reserved Instance"
	case ConvertibleRI:
		return "Convertible Reserved Instance"
	case CapacityBlock:
		return "Capacity Block for ML"
	case Reservation:
		return "Reserved VM Instance"
	case ResourceCUD:
		return "resource-based committed use discount"
	}
	return string(k)
}

// PerHour reports whether the kind is bought as a dollar amount per hour (a
// Savings Plan) rather than as a number of instances or resources.
func (k CommitmentKind) PerHour() bool {
	return k == ComputeSavingsPlan || k == EC2InstanceSavingsPlan
}

// Payment options of commitments. Azure reservations cost the same paid up
// front or monthly; GCP CUDs are billed monthly.
const (
	PayNoUpfront        = "no-upfront"
	PayPartialUpfront   = "partial-upfront"
	PayAllUpfront       = "all-upfront"
	PayUpfrontOrMonthly = "upfront-or-monthly"
	PayMonthly          = "monthly"
)

// CommitmentQuery selects one commitment rate. Payment may be empty: the
// catalog then answers with the one payment option it has, or the first of
// no-upfront, partial-upfront, all-upfront.
type CommitmentQuery struct {
	Provider     fleet.Provider
	Region       string
	InstanceType string
	Kind         CommitmentKind
	Term         string
	Payment      string
}

// CommitmentRate is the price of one instance type under one commitment.
type CommitmentRate struct {
	Provider     fleet.Provider `json:"provider"`
	Region       string         `json:"region"`
	InstanceType string         `json:"instanceType"`
	Kind         CommitmentKind `json:"kind"`
	Term         string         `json:"term"`
	Payment      string         `json:"payment"`
	// Hourly is the effective USD per instance-hour (upfront amortised).
	Hourly decimal.Decimal `json:"hourly"`
	// OnDemandHourly is the on-demand price the same source states; zero when
	// it states none.
	OnDemandHourly decimal.Decimal `json:"onDemandHourly,omitzero"`
	// DiscountPercent is 100 × (1 − Hourly/OnDemandHourly), both from the
	// same source; zero when the source has no on-demand price.
	DiscountPercent float64 `json:"discountPercent"`
	// Source names the data set; Origin the file and line (or "live").
	Source string `json:"source"`
	Origin string `json:"origin"`
	// AsOf is the source's date (YYYY-MM-DD).
	AsOf string `json:"asOf"`
	// Live is true for a rate read from the cloud's API on this run.
	Live bool `json:"live,omitempty"`
	// Approximation, when set, says the rate stands in for the kind asked
	// for (offline, a Compute Savings Plan is priced at the Convertible RI
	// rate of the same term and payment option).
	Approximation string `json:"approximation,omitempty"`
}

// CommitmentCatalog is implemented by catalogs that know commitment rates.
type CommitmentCatalog interface {
	// CommitmentRate returns the rate q selects.
	CommitmentRate(q CommitmentQuery) (CommitmentRate, bool)
}

// LookupCommitment asks c for a commitment rate; false when c knows none.
func LookupCommitment(c Catalog, q CommitmentQuery) (CommitmentRate, bool) {
	cc, ok := c.(CommitmentCatalog)
	if !ok {
		return CommitmentRate{}, false
	}
	return cc.CommitmentRate(q)
}

// CommitmentRate answers from the live commitment rates laid over the base
// catalog where one fits the query, else from base. A live price fits when
// it names the kind asked for (Price.Commitment: Azure reservations, GCP
// resource-based CUDs), or, naming none, when its Source names the Savings
// Plan asked for (AWS, no upfront).
func (o *overlay) CommitmentRate(q CommitmentQuery) (CommitmentRate, bool) {
	if s := o.slot(q.Provider, q.Region, q.InstanceType); s != nil && s.commitments[q.Term] != nil {
		p := s.commitments[q.Term]
		if payment, ok := liveFits(p, q); ok {
			r := CommitmentRate{
				Provider: q.Provider, Region: p.Region, InstanceType: p.InstanceType, Kind: q.Kind,
				Term: q.Term, Payment: payment, Hourly: p.Hourly, Source: p.Source, Origin: "live", AsOf: p.AsOf, Live: true,
			}
			if s.onDemand != nil && s.onDemand.Hourly.IsPositive() {
				r.OnDemandHourly = s.onDemand.Hourly
				r.DiscountPercent = DiscountPercent(p.Hourly, s.onDemand.Hourly)
			}
			return r, true
		}
	}
	return LookupCommitment(o.Catalog, q)
}

// livePayment is the one payment option a live commitment rate of a kind
// is for: Savings Plans rates are read no upfront, an Azure reservation
// costs the same up front or monthly, a GCP CUD is billed monthly.
var livePayment = map[CommitmentKind]string{
	ComputeSavingsPlan: PayNoUpfront, EC2InstanceSavingsPlan: PayNoUpfront,
	Reservation: PayUpfrontOrMonthly, ResourceCUD: PayMonthly,
}

// liveFits reports whether a live commitment price answers q, and the
// payment option it is for.
func liveFits(p *Price, q CommitmentQuery) (string, bool) {
	payment, ok := livePayment[q.Kind]
	if !ok || (q.Payment != "" && q.Payment != payment) {
		return "", false
	}
	switch {
	case p.Commitment != "":
		return payment, p.Commitment == q.Kind
	case q.Kind.PerHour():
		return payment, strings.Contains(p.Source, q.Kind.Label()+" "+q.Term)
	}
	return "", false
}

// DiscountPercent is 100 × (1 − rate/onDemand) rounded to 2 places.
func DiscountPercent(rate, onDemand decimal.Decimal) float64 {
	if !onDemand.IsPositive() {
		return 0
	}
	return decimal.NewFromInt(1).Sub(rate.Div(onDemand)).Mul(decimal.NewFromInt(100)).Round(2).InexactFloat64()
}
