// Package catalog is the embedded, dated catalog of GPU specs, instance types,
// per-region prices and AWS spot advice that ships inside the gpufinops binary.
//
// The data lives in data/ as the source files (SkyPilot price extracts, a GPU
// spec table, the AWS Spot Instance Advisor feed) plus small tables written for
// gpufinops: the GCP machine-type map, accelerator makers, host architectures
// and corrections.csv. Corrections are applied at load time and reported by
// Corrections(); the source files themselves are never edited. See
// docs/catalog.md and data/SOURCES.md.
package catalog

import (
	"embed"
	"fmt"
	"io/fs"
	"strings"
	"sync"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
)

//go:embed data
var dataFS embed.FS

var embedded = sync.OnceValues(func() (pricing.Catalog, error) {
	sub, err := fs.Sub(dataFS, "data")
	if err != nil {
		return nil, fmt.Errorf("embedded catalog: %w", err)
	}
	c, err := load(sub)
	if err != nil {
		return nil, fmt.Errorf("embedded catalog: %w", err)
	}
	cat, err := withSnapshot(c, snapshotFS)
	if err != nil {
		return nil, fmt.Errorf("embedded catalog: %w", err)
	}
	return cat, nil
})

// Embedded returns the catalog built into the binary. It is parsed once, on
// first use, and shared; it is safe for concurrent use.
func Embedded() (pricing.Catalog, error) { return embedded() }

// catalog implements pricing.Catalog over data loaded once and never changed.
type catalog struct {
	gpus        map[string]pricing.GPUSpec // key: lower-case name
	types       map[typeKey]pricing.InstanceType
	offers      []pricing.Offer // sorted by provider, region, type
	offerIndex  map[offerKey]int
	advice      map[offerKey]pricing.SpotAdvice
	corrections []pricing.Correction
	sources     []pricing.Source
	commitments map[commitKey]pricing.CommitmentRate
	// units are the derived GCP unit prices, per region (lower case) →
	// map[unitKey]pricing.Price; see ResourcePrice.
	units sync.Map
}

type typeKey struct {
	provider fleet.Provider
	name     string // lower case
}

type offerKey struct {
	provider fleet.Provider
	region   string // lower case
	name     string // lower case
}

func keyOf(p fleet.Provider, name string) typeKey {
	return typeKey{p, strings.ToLower(name)}
}

func offerKeyOf(p fleet.Provider, region, name string) offerKey {
	return offerKey{p, strings.ToLower(region), strings.ToLower(name)}
}

// GPU returns a GPU model's specs; the name is matched case-insensitively. An
// alias such as GCP's H100-MEGA returns the spec of the GPU it is (H100).
func (c *catalog) GPU(name string) (pricing.GPUSpec, bool) {
	g, ok := c.gpus[strings.ToLower(name)]
	if !ok {
		return pricing.GPUSpec{}, false
	}
	g.MIGProfiles = append([]pricing.MIGProfile(nil), g.MIGProfiles...)
	return g, true
}

// InstanceType returns a type's hardware; the name is matched case-insensitively.
func (c *catalog) InstanceType(provider fleet.Provider, name string) (pricing.InstanceType, bool) {
	t, ok := c.types[keyOf(provider, name)]
	return t, ok
}

// Offer returns a type's prices in one region.
func (c *catalog) Offer(provider fleet.Provider, region, instanceType string) (pricing.Offer, bool) {
	i, ok := c.offerIndex[offerKeyOf(provider, region, instanceType)]
	if !ok {
		return pricing.Offer{}, false
	}
	return cloneOffer(c.offers[i]), true
}

// Offers returns the offers matching q in provider, region, type order.
func (c *catalog) Offers(q pricing.Query) []pricing.Offer {
	var out []pricing.Offer
	for _, o := range c.offers {
		if q.Matches(o) {
			out = append(out, cloneOffer(o))
		}
	}
	return out
}

// SpotAdvice returns the AWS Spot Instance Advisor's figures (Linux) for a type
// in a region. Other clouds publish no such data.
func (c *catalog) SpotAdvice(provider fleet.Provider, region, instanceType string) (pricing.SpotAdvice, bool) {
	a, ok := c.advice[offerKeyOf(provider, region, instanceType)]
	return a, ok
}

// Corrections lists every change made to the source data, explicit
// (corrections.csv) and by the generic rules, sorted by provider, type,
// region and field.
func (c *catalog) Corrections() []pricing.Correction {
	return append([]pricing.Correction(nil), c.corrections...)
}

// Sources lists the data sets behind the catalog, in sources.json order.
func (c *catalog) Sources() []pricing.Source {
	return append([]pricing.Source(nil), c.sources...)
}

func cloneOffer(o pricing.Offer) pricing.Offer {
	if o.OnDemand != nil {
		p := *o.OnDemand
		o.OnDemand = &p
	}
	if o.Spot != nil {
		p := *o.Spot
		o.Spot = &p
	}
	return o
}
