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
	// AzureSavingsPlan is an Azure savings plan for compute: a $/hour
	// commitment that follows usage across VM sizes, series and regions.
	AzureSavingsPlan CommitmentKind = "azure-savings-plan"
)

// CommitmentKinds lists every kind, in documentation order.
var CommitmentKinds = []CommitmentKind{ComputeSavingsPlan, EC2InstanceSavingsPlan, StandardRI, ConvertibleRI, CapacityBlock, Reservation, AzureSavingsPlan, ResourceCUD}

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
	case AzureSavingsPlan:
		return "Azure savings plan for compute"
	}
	return string(k)
}

// PerHour reports whether the kind is bought as a dollar amount per hour (a
// Savings Plan) rather than as a number of instances or resources.
func (k CommitmentKind) PerHour() bool {
	return k == ComputeSavingsPlan || k == EC2InstanceSavingsPlan || k == AzureSavingsPlan
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
	if s := o.slot(q.Provider, q.Region, q.InstanceType); s != nil && s.rateOf(q) != nil {
		p := s.rateOf(q)
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

// rateOf is the slot's live commitment price that may answer q: the one of
// q's kind where a price names its kind (an Azure reservation and savings
// plan of one term both), else the term's.
func (s *liveSlot) rateOf(q CommitmentQuery) *Price {
	if p := s.byKind[kindTerm{q.Kind, q.Term}]; p != nil {
		return p
	}
	return s.commitments[q.Term]
}

// livePayment is the one payment option a live commitment rate of a kind
// is for: Savings Plans rates are read no upfront, an Azure reservation
// costs the same up front or monthly, a GCP CUD is billed monthly.
var livePayment = map[CommitmentKind]string{
	ComputeSavingsPlan: PayNoUpfront, EC2InstanceSavingsPlan: PayNoUpfront,
	Reservation: PayUpfrontOrMonthly, AzureSavingsPlan: PayUpfrontOrMonthly, ResourceCUD: PayMonthly,
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

// The resources a per-resource price (Price.Resource) is for.
const (
	ResourceVCPU   = "vcpu"
	ResourceMemory = "memory"
	ResourceGPU    = "gpu"
)

// DerivedSource begins the Source of a per-resource price the catalog
// derived from machine prices rather than read from the cloud.
const DerivedSource = "derived from "

// ResourceQuery selects the price of one unit of a resource: a vCPU or a
// GiB of memory of a machine family, or one GPU of a model, in a region,
// under a purchase option (on-demand, or a commitment term's option).
type ResourceQuery struct {
	Provider fleet.Provider
	Region   string
	Resource string
	// Name is the machine family ("g2") for vCPUs and memory, the GPU model
	// ("L4") for GPUs.
	Name   string
	Option Option
}

// ResourceCatalog is implemented by catalogs that know per-resource prices.
type ResourceCatalog interface {
	// ResourcePrice returns the price q selects.
	ResourcePrice(q ResourceQuery) (Price, bool)
}

// LookupResource asks c for a per-resource price; false when c knows none.
func LookupResource(c Catalog, q ResourceQuery) (Price, bool) {
	rc, ok := c.(ResourceCatalog)
	if !ok {
		return Price{}, false
	}
	return rc.ResourcePrice(q)
}

// resourceKey indexes an overlay's per-resource prices.
type resourceKey struct {
	provider               fleet.Provider
	region, resource, name string // lower case
	option                 Option
}

func resourceKeyOf(p fleet.Provider, region, resource, name string, o Option) resourceKey {
	return resourceKey{p, strings.ToLower(region), resource, strings.ToLower(name), o}
}

// ResourcePrice answers from the live per-resource prices, else from base.
func (o *overlay) ResourcePrice(q ResourceQuery) (Price, bool) {
	if p, ok := o.resources[resourceKeyOf(q.Provider, q.Region, q.Resource, q.Name, q.Option)]; ok {
		return *p, true
	}
	return LookupResource(o.Catalog, q)
}

// cudTypes are the commitment types (gcloud compute commitments create
// --type) of the machine series a GCP resource-based CUD covers, by the
// series of the type name; a3-megagpu has a type of its own.
var cudTypes = map[string]string{
	"a2": "accelerator-optimized", "a3": "accelerator-optimized-a3", "a3-megagpu": "accelerator-optimized-a3-mega",
	"a3-ultragpu": "accelerator-optimized-a3-ultra", "a4": "accelerator-optimized-a4",
	"g2": "graphics-optimized", "g4": "graphics-optimized-g4", "n1": "general-purpose",
}

// CUDSeries is the series a GCP machine type's vCPUs and memory are
// committed under, and its commitment type ("" when not known): the first
// word of the type's name, a3-megagpu and a3-ultragpu apart.
func CUDSeries(instanceType string) (series, commitmentType string) {
	first, rest, _ := strings.Cut(instanceType, "-")
	second, _, _ := strings.Cut(rest, "-")
	if f := first + "-" + second; cudTypes[f] != "" {
		return f, cudTypes[f]
	}
	return first, cudTypes[first]
}

// cudAccelerators are GCP's accelerator type names of the catalog's GPU
// models, as a commitment's --resources-accelerator type names them.
var cudAccelerators = map[string]string{
	"L4": "nvidia-l4", "T4": "nvidia-tesla-t4", "V100": "nvidia-tesla-v100", "P100": "nvidia-tesla-p100", "P4": "nvidia-tesla-p4",
	"A100": "nvidia-tesla-a100", "A100-80GB": "nvidia-a100-80gb", "H100": "nvidia-h100-80gb", "H100-MEGA": "nvidia-h100-mega-80gb",
	"H200": "nvidia-h200-141gb", "B200": "nvidia-b200", "RTX PRO Server 6000": "nvidia-rtx-pro-6000",
}

// CUDAccelerator is GCP's accelerator type name of a GPU model, or the
// model itself when it is not known.
func CUDAccelerator(model string) string {
	if a, ok := cudAccelerators[model]; ok {
		return a
	}
	return model
}
