// Package pricing defines what gpufinops knows about hardware and prices: GPU
// specs, instance types, dated hourly prices per region and purchase option,
// spot interruption advice, and the Catalog interface that serves them.
package pricing

import (
	"strings"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// Currency is the currency of every catalog price.
const Currency = "USD"

// UnitHour is the unit of every catalog price: one instance-hour.
const UnitHour = "hour"

// Option is a purchase option a price applies to.
type Option string

// The purchase options the catalog prices.
const (
	OnDemand Option = "on-demand"
	Spot     Option = "spot"
	// SavingsPlan1y and SavingsPlan3y are a cloud's commitment rates
	// (AWS Savings Plans, no upfront): the effective hourly price of the
	// type under a 1- or 3-year plan.
	SavingsPlan1y Option = "savings-plan-1y"
	SavingsPlan3y Option = "savings-plan-3y"
)

// Price is an hourly price with everything needed to say where it came from.
type Price struct {
	Provider     fleet.Provider  `json:"provider"`
	Region       string          `json:"region"`
	InstanceType string          `json:"instanceType"`
	Option       Option          `json:"option"`
	Hourly       decimal.Decimal `json:"hourly"`
	Currency     string          `json:"currency"`
	Unit         string          `json:"unit"`
	// Zone is the zone the price was read in, when the source is per zone
	// (spot prices are the cheapest zone's).
	Zone string `json:"zone,omitempty"`
	// Source names the data set, e.g. "SkyPilot catalog v8 (AWS)".
	Source string `json:"source"`
	// AsOf is the date (YYYY-MM-DD) the price was taken.
	AsOf string `json:"asOf"`
	// Commitment, on a commitment price (savings-plan-1y/3y options), names
	// the kind of commitment the rate is for (an Azure reservation, a GCP
	// resource-based CUD), so that a query for that kind finds it; empty
	// where the source says it only in Source (AWS Savings Plans).
	Commitment CommitmentKind `json:"commitment,omitempty"`
	// Resource, when set, makes the price one unit of a resource rather than
	// an instance-hour: "vcpu" or "memory" (one GiB) of the machine family
	// InstanceType names, or "gpu" of the GPU model it names. GCP's Billing
	// Catalog prices (and its resource-based CUDs buy) these.
	Resource string `json:"resource,omitempty"`
	// History, when set, summarises the price over a trailing window (live
	// spot prices: the cheapest zone's last 30 days, and the median over
	// every zone).
	History *PriceHistory `json:"history,omitempty"`
}

// PriceHistory is a price's range over a window: its lowest, time-weighted
// average and highest value.
type PriceHistory struct {
	Min decimal.Decimal `json:"min"`
	Avg decimal.Decimal `json:"avg"`
	Max decimal.Decimal `json:"max"`
	// Since and Until bound the window (YYYY-MM-DD).
	Since string `json:"since"`
	Until string `json:"until"`
	// Points is the number of price changes read in the window.
	Points int `json:"points"`
	// Median, when set, is the time-weighted median over every zone of the
	// region and the whole window: what a machine placed in any zone
	// typically paid. The engine plans spot with it rather than the
	// cheapest zone's current price.
	Median decimal.Decimal `json:"median,omitempty"`
	// Zones is the number of zones Median is taken over.
	Zones int `json:"zones,omitempty"`
}

// InstanceType is the hardware of one cloud instance type.
type InstanceType struct {
	Provider fleet.Provider `json:"provider"`
	Name     string         `json:"instanceType"`
	// Family is the type's family, e.g. "g5" or "a2-highgpu" or "NCads_A100_v4".
	Family   string  `json:"family,omitempty"`
	GPUModel string  `json:"gpuModel"`
	GPUCount float64 `json:"gpuCount"`
	// GPUMemoryGiB is per GPU (for a partitioned GPU, per partition).
	GPUMemoryGiB float64 `json:"gpuMemoryGiB"`
	VCPUs        float64 `json:"vcpus"`
	MemoryGiB    float64 `json:"memoryGiB"`
	// Arch is the host CPU architecture: x86_64 or arm64.
	Arch string `json:"arch"`
	// Retired, when set, says why the type is retired or retiring (the
	// cloud announced its end). Such a type is still priced where it runs,
	// but never advised as a move target.
	Retired string `json:"retired,omitempty"`
	// Promo, when set, says why the type is a promotional size (Azure's
	// _Promo sizes): priced, never advised as a move target.
	Promo string `json:"promo,omitempty"`
	// Service, when set, is the managed AI service that sells the type
	// under this name (SageMaker's ml.* types, Vertex AI's priced machine
	// types); empty for the cloud's own virtual machines.
	Service fleet.ManagedService `json:"service,omitempty"`
}

// Fractional reports whether the type has a partition of a GPU rather than whole GPUs.
func (t InstanceType) Fractional() bool { return t.GPUCount > 0 && t.GPUCount < 1 }

// MoveTarget reports whether advice may move a workload onto the type, or
// buy a commitment for it: false for retired, retiring and promotional sizes.
func (t InstanceType) MoveTarget() bool { return t.Retired == "" && t.Promo == "" }

// GPUSpec is one GPU model's hardware.
type GPUSpec struct {
	Name string `json:"name"`
	// Vendor is "nvidia", "amd", or another accelerator maker.
	Vendor             string       `json:"vendor"`
	MemoryGiB          float64      `json:"memoryGiB"`
	MemoryBandwidthGBs float64      `json:"memoryBandwidthGBs"`
	FP16TFLOPS         *float64     `json:"fp16TFLOPS,omitempty"`
	INT8TOPS           *float64     `json:"int8TOPS,omitempty"`
	MIGProfiles        []MIGProfile `json:"migProfiles,omitempty"`
	Source             string       `json:"source"`
	Notes              string       `json:"notes,omitempty"`
}

// MIGProfile is one NVIDIA Multi-Instance GPU profile, e.g. 3g.40gb.
type MIGProfile struct {
	Name string `json:"name"`
	// Slices is the number of compute slices (the leading digit).
	Slices int `json:"slices"`
	// MemoryGB is the profile's memory in GB as named (40 for 3g.40gb).
	MemoryGB float64 `json:"memoryGB"`
	// MediaExtensions is true for the "+me" variants.
	MediaExtensions bool `json:"mediaExtensions,omitempty"`
}

// Offer is an instance type as sold in one region.
type Offer struct {
	Type     InstanceType `json:"type"`
	Region   string       `json:"region"`
	OnDemand *Price       `json:"onDemand,omitempty"`
	Spot     *Price       `json:"spot,omitempty"`
	// Commitments, when known, maps a commitment term ("1y", "3y") to the
	// effective hourly rate under it (AWS: a Savings Plan, no upfront).
	// Only live prices fill it; see Overlay.
	Commitments map[string]*Price `json:"commitments,omitempty"`
}

// SpotAdvice is a cloud's own view of spot for one type and region.
type SpotAdvice struct {
	// SavingsPercent is the typical saving over on-demand across the month.
	SavingsPercent int `json:"savingsPercent"`
	// Band is the interruption-frequency band label, e.g. "<5%" or ">20%".
	Band string `json:"band"`
	// BandIndex orders the bands, 0 (rarest interruptions) to 4.
	BandIndex int `json:"bandIndex"`
	// MaxInterruptPercent is the band's upper bound.
	MaxInterruptPercent int    `json:"maxInterruptPercent"`
	Source              string `json:"source"`
	AsOf                string `json:"asOf"`
}

// Correction records a change the catalog makes to its source data, and why.
type Correction struct {
	Provider     fleet.Provider `json:"provider"`
	InstanceType string         `json:"instanceType,omitempty"`
	Region       string         `json:"region,omitempty"`
	Field        string         `json:"field"`
	From         string         `json:"from"`
	To           string         `json:"to"`
	Reason       string         `json:"reason"`
}

// Source describes one data set behind the catalog.
type Source struct {
	Name     string `json:"name"`
	Provider string `json:"provider,omitempty"`
	Origin   string `json:"origin"`
	AsOf     string `json:"asOf"`
	Note     string `json:"note,omitempty"`
}

// Query filters offers. Empty fields match everything.
type Query struct {
	Provider     fleet.Provider
	Region       string
	GPUModel     string
	InstanceType string
	// MinGPUMemoryGiB keeps types whose per-GPU memory is at least this.
	MinGPUMemoryGiB float64
	// Service keeps the types a managed AI service sells; empty keeps the
	// cloud's own virtual machines only (never a service's types).
	Service fleet.ManagedService
}

// Catalog serves hardware facts and prices. Implementations are safe for
// concurrent use and return results in a stable order.
type Catalog interface {
	// GPU returns a GPU model's specs.
	GPU(name string) (GPUSpec, bool)
	// InstanceType returns a type's hardware.
	InstanceType(provider fleet.Provider, name string) (InstanceType, bool)
	// Offer returns a type's prices in one region.
	Offer(provider fleet.Provider, region, instanceType string) (Offer, bool)
	// Offers returns every offer matching q, sorted by provider, region, type.
	Offers(q Query) []Offer
	// SpotAdvice returns the cloud's spot savings and interruption band.
	SpotAdvice(provider fleet.Provider, region, instanceType string) (SpotAdvice, bool)
	// Corrections lists the changes made to the source data.
	Corrections() []Correction
	// Sources lists the data sets behind the catalog.
	Sources() []Source
}

// Matches is the Catalog contract's filter: empty fields match everything
// but Service (empty matches virtual machines only), names compare without
// case, and MinGPUMemoryGiB is per GPU.
func (q Query) Matches(o Offer) bool {
	switch {
	case o.Type.Service != q.Service:
		return false
	case q.Provider != "" && o.Type.Provider != q.Provider:
		return false
	case q.Region != "" && !strings.EqualFold(o.Region, q.Region):
		return false
	case q.GPUModel != "" && !strings.EqualFold(o.Type.GPUModel, q.GPUModel):
		return false
	case q.InstanceType != "" && !strings.EqualFold(o.Type.Name, q.InstanceType):
		return false
	case q.MinGPUMemoryGiB > 0 && o.Type.GPUMemoryGiB < q.MinGPUMemoryGiB:
		return false
	}
	return true
}
