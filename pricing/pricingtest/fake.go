// Package pricingtest provides an in-memory pricing.Catalog for tests of the
// engine and the commands.
package pricingtest

import (
	"sort"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
)

// Catalog is a hand-filled catalog. The zero value is empty and usable.
type Catalog struct {
	GPUs   map[string]pricing.GPUSpec
	List   []pricing.Offer
	Advice map[string]pricing.SpotAdvice // key: provider/region/type
	// Commitments are the commitment rates CommitmentRate answers from.
	Commitments []pricing.CommitmentRate
}

// AddCommitment registers the rate of a type in a region under one
// commitment kind and term, given as a discount percent off the on-demand
// price registered with AddOffer (which must come first). Payment is
// pricing.PayNoUpfront for Savings Plan kinds, else the kind's own.
func (c *Catalog) AddCommitment(p fleet.Provider, region, typ string, kind pricing.CommitmentKind, term string, discountPercent float64) *Catalog {
	o, ok := c.Offer(p, region, typ)
	if !ok || o.OnDemand == nil {
		panic("pricingtest: AddCommitment before AddOffer for " + typ)
	}
	pay := pricing.PayNoUpfront
	switch kind {
	case pricing.Reservation:
		pay = pricing.PayUpfrontOrMonthly
	case pricing.ResourceCUD:
		pay = pricing.PayMonthly
	}
	od := o.OnDemand.Hourly
	hourly := od.Mul(decimal.NewFromFloat(1 - discountPercent/100)).Round(6)
	c.Commitments = append(c.Commitments, pricing.CommitmentRate{
		Provider: p, Region: region, InstanceType: typ, Kind: kind, Term: term, Payment: pay,
		Hourly: hourly, OnDemandHourly: od, DiscountPercent: discountPercent,
		Source: "test commitment rates", Origin: "test", AsOf: "2026-11-30",
	})
	return c
}

// CommitmentRate returns the first registered rate matching q (names
// without case; an empty q.Payment matches any).
func (c *Catalog) CommitmentRate(q pricing.CommitmentQuery) (pricing.CommitmentRate, bool) {
	for _, r := range c.Commitments {
		if r.Provider == q.Provider && strings.EqualFold(r.Region, q.Region) && strings.EqualFold(r.InstanceType, q.InstanceType) &&
			r.Kind == q.Kind && r.Term == q.Term && (q.Payment == "" || q.Payment == r.Payment) {
			return r, true
		}
	}
	return pricing.CommitmentRate{}, false
}

// AddGPU registers a GPU model.
func (c *Catalog) AddGPU(g pricing.GPUSpec) *Catalog {
	if c.GPUs == nil {
		c.GPUs = map[string]pricing.GPUSpec{}
	}
	c.GPUs[g.Name] = g
	return c
}

// AddOffer registers a type in a region at an on-demand and spot price; an
// empty price string means none.
func (c *Catalog) AddOffer(t pricing.InstanceType, region, onDemand, spot string) *Catalog {
	o := pricing.Offer{Type: t, Region: region}
	if t.Arch == "" {
		o.Type.Arch = "x86_64"
	}
	mk := func(v string, opt pricing.Option) *pricing.Price {
		if v == "" {
			return nil
		}
		return &pricing.Price{
			Provider: t.Provider, Region: region, InstanceType: t.Name, Option: opt,
			Hourly: decimal.RequireFromString(v), Currency: pricing.Currency, Unit: pricing.UnitHour,
			Source: "test catalog", AsOf: "2026-11-30",
		}
	}
	o.OnDemand = mk(onDemand, pricing.OnDemand)
	o.Spot = mk(spot, pricing.Spot)
	c.List = append(c.List, o)
	return c
}

// AddAdvice registers spot advice for a type in a region.
func (c *Catalog) AddAdvice(p fleet.Provider, region, typ string, a pricing.SpotAdvice) *Catalog {
	if c.Advice == nil {
		c.Advice = map[string]pricing.SpotAdvice{}
	}
	c.Advice[string(p)+"/"+region+"/"+typ] = a
	return c
}

// GPU implements pricing.Catalog.
func (c *Catalog) GPU(name string) (pricing.GPUSpec, bool) {
	g, ok := c.GPUs[name]
	return g, ok
}

// InstanceType implements pricing.Catalog.
func (c *Catalog) InstanceType(p fleet.Provider, name string) (pricing.InstanceType, bool) {
	for _, o := range c.List {
		if o.Type.Provider == p && o.Type.Name == name {
			return o.Type, true
		}
	}
	return pricing.InstanceType{}, false
}

// Offer implements pricing.Catalog.
func (c *Catalog) Offer(p fleet.Provider, region, typ string) (pricing.Offer, bool) {
	for _, o := range c.List {
		if o.Type.Provider == p && o.Region == region && o.Type.Name == typ {
			return o, true
		}
	}
	return pricing.Offer{}, false
}

// Offers implements pricing.Catalog.
func (c *Catalog) Offers(q pricing.Query) []pricing.Offer {
	var out []pricing.Offer
	for _, o := range c.List {
		if q.Matches(o) {
			out = append(out, o)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Type.Provider != b.Type.Provider {
			return a.Type.Provider < b.Type.Provider
		}
		if a.Region != b.Region {
			return a.Region < b.Region
		}
		return a.Type.Name < b.Type.Name
	})
	return out
}

// SpotAdvice implements pricing.Catalog.
func (c *Catalog) SpotAdvice(p fleet.Provider, region, typ string) (pricing.SpotAdvice, bool) {
	a, ok := c.Advice[string(p)+"/"+region+"/"+typ]
	return a, ok
}

// Corrections implements pricing.Catalog; the test catalog has none.
func (c *Catalog) Corrections() []pricing.Correction { return nil }

// Sources implements pricing.Catalog.
func (c *Catalog) Sources() []pricing.Source {
	return []pricing.Source{{Name: "test catalog", Origin: "pricingtest", AsOf: "2026-11-30"}}
}

var _ pricing.Catalog = (*Catalog)(nil)
