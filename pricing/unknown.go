package pricing

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/suggest"
)

// What an unknown-type warning says is missing.
const (
	MissingGPUModel = "GPU model"
	MissingGPUCount = "GPU count"
	MissingPrice    = "price"
)

// UnknownTypes names what is missing of the instance types base does not
// know, after Complete: one warning (code fleet.ScanUnknownType) per
// provider, region and type whose instances lack a GPU model or count (the
// cloud's answer or the fleet file gave none) or a price (no hourlyPrice or
// commitment rate of their own, and no offer in priced, the catalog with any
// live prices laid over it). Each warning lists its instances and, for a
// name close to one base knows, "did you mean". Types base knows are left to
// the engine, which warns of a region it has no price for. Warnings come in
// provider, type, region order.
func UnknownTypes(f *fleet.Fleet, base, priced Catalog) []fleet.ScanWarning {
	if f == nil || base == nil {
		return nil
	}
	if priced == nil {
		priced = base
	}
	type key struct {
		provider    fleet.Provider
		typ, region string
		missing     string
	}
	var order []key
	groups := map[key]*fleet.ScanWarning{}
	names := typeNames{cat: base}
	for i := range f.Instances {
		in := &f.Instances[i]
		if !in.Provider.Valid() || in.InstanceType == "" {
			continue
		}
		if _, ok := base.InstanceType(in.Provider, TypeNameOf(base, in)); ok {
			continue
		}
		missing := missingFacts(in, priced)
		if len(missing) == 0 {
			continue
		}
		k := key{in.Provider, in.InstanceType, in.Region, strings.Join(missing, ", ")}
		w := groups[k]
		if w == nil {
			reason := fmt.Sprintf("instance type %q is not in the catalog; missing: %s", in.InstanceType, k.missing)
			if slices.Contains(missing, MissingGPUModel) || slices.Contains(missing, MissingGPUCount) {
				reason += suggest.Phrase(in.InstanceType, names.of(in.Provider), strconv.Quote)
			}
			w = &fleet.ScanWarning{Code: fleet.ScanUnknownType, Provider: in.Provider, Region: in.Region, Reason: reason}
			groups[k] = w
			order = append(order, k)
		}
		w.Instances = append(w.Instances, in.ID)
	}
	slices.SortFunc(order, func(a, b key) int {
		return cmp.Or(cmp.Compare(a.provider, b.provider), cmp.Compare(a.typ, b.typ),
			cmp.Compare(a.region, b.region), cmp.Compare(a.missing, b.missing))
	})
	out := make([]fleet.ScanWarning, 0, len(order))
	for _, k := range order {
		out = append(out, *groups[k])
	}
	return out
}

// missingFacts lists what an instance of a type the catalog lacks still
// misses: its GPU model, its GPU count, its price.
func missingFacts(in *fleet.Instance, priced Catalog) []string {
	var missing []string
	if strings.TrimSpace(in.GPU.Model) == "" {
		missing = append(missing, MissingGPUModel)
	}
	if !(in.GPU.Count > 0) {
		missing = append(missing, MissingGPUCount)
	}
	if !hasPrice(in, priced) {
		missing = append(missing, MissingPrice)
	}
	return missing
}

// hasPrice reports whether the engine can price the instance: its own
// hourlyPrice or commitment rate, or an offer with a price for its purchase
// option (on-demand for committed capacity without a rate).
func hasPrice(in *fleet.Instance, cat Catalog) bool {
	if in.HourlyPrice != nil {
		return true
	}
	if in.Lifecycle == fleet.Committed && in.Commitment != nil && in.Commitment.HourlyRate != nil {
		return true
	}
	o, ok := cat.Offer(in.Provider, in.Region, TypeNameOf(cat, in))
	if !ok {
		return false
	}
	if in.Lifecycle == fleet.Spot {
		return o.Spot != nil || o.OnDemand != nil
	}
	return o.OnDemand != nil
}

// TypesOf returns the hardware the fleet's instances give of their types:
// one InstanceType per provider and type name (the first instance's
// figures, which may lack the GPU model or count where the cloud does not
// say them), in provider and name order. After a live scan these are the
// cloud's own answer (DescribeInstanceTypes, Resource SKUs, machineTypes and
// guestAccelerators).
func TypesOf(f *fleet.Fleet) []InstanceType {
	if f == nil {
		return nil
	}
	seen := map[typeKey]bool{}
	var out []InstanceType
	for i := range f.Instances {
		in := &f.Instances[i]
		if !in.Provider.Valid() || in.InstanceType == "" {
			continue
		}
		k := typeKey{in.Provider, strings.ToLower(in.InstanceType)}
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, InstanceType{
			Provider: in.Provider, Name: in.InstanceType, GPUModel: in.GPU.Model, GPUCount: in.GPU.Count,
			GPUMemoryGiB: in.GPU.MemoryGiB, VCPUs: in.VCPUs, MemoryGiB: in.MemoryGiB,
		})
	}
	slices.SortFunc(out, func(a, b InstanceType) int {
		return cmp.Or(cmp.Compare(a.Provider, b.Provider), cmp.Compare(a.Name, b.Name))
	})
	return out
}

type typeKey struct {
	provider fleet.Provider
	name     string // lower case
}

// WithTypes returns a Catalog that answers like base and also knows the
// hardware of types base lacks (TypesOf a scanned fleet), so that live
// prices of those types (Overlay) make offers the engine prices them by.
// base's own types win; the added ones have no offers of their own.
func WithTypes(base Catalog, types []InstanceType) Catalog {
	if base == nil {
		base = emptyCatalog{}
	}
	extra := map[typeKey]InstanceType{}
	for _, t := range types {
		if _, ok := base.InstanceType(t.Provider, t.Name); ok {
			continue
		}
		extra[typeKey{t.Provider, strings.ToLower(t.Name)}] = t
	}
	if len(extra) == 0 {
		return base
	}
	return &withTypes{Catalog: base, extra: extra}
}

type withTypes struct {
	Catalog
	extra map[typeKey]InstanceType
}

// InstanceType is base's type, else the added one.
func (c *withTypes) InstanceType(p fleet.Provider, name string) (InstanceType, bool) {
	if t, ok := c.Catalog.InstanceType(p, name); ok {
		return t, true
	}
	t, ok := c.extra[typeKey{p, strings.ToLower(name)}]
	return t, ok
}

// CommitmentRate is base's.
func (c *withTypes) CommitmentRate(q CommitmentQuery) (CommitmentRate, bool) {
	return LookupCommitment(c.Catalog, q)
}

// ResourcePrice is base's.
func (c *withTypes) ResourcePrice(q ResourceQuery) (Price, bool) {
	return LookupResource(c.Catalog, q)
}

// WithoutPriced returns ws less the instances priced otherwise (priced says
// which, e.g. those a bill gives a rate) in the warnings whose only missing
// fact is the price; such a warning left without instances is dropped.
// Other warnings are kept as they are.
func WithoutPriced(ws []fleet.ScanWarning, priced func(id string) bool) []fleet.ScanWarning {
	out := ws[:0:0]
	for _, w := range ws {
		if w.Code != fleet.ScanUnknownType || !strings.HasSuffix(w.Reason, "; missing: "+MissingPrice) {
			out = append(out, w)
			continue
		}
		var left []string
		for _, id := range w.Instances {
			if !priced(id) {
				left = append(left, id)
			}
		}
		if len(left) == 0 {
			continue
		}
		w.Instances = left
		out = append(out, w)
	}
	return out
}
