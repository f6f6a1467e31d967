package catalog

import (
	"fmt"
	"math"
	"math/big"
	"slices"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
)

// UnitRate is the price of one unit of a GCP resource (a vCPU or a GiB of
// a machine family, one GPU of a model) in a region under a purchase
// option, derived from the catalog's machine prices: GCP prices a machine
// as vCPUs × core rate + GiB × RAM rate + GPUs × GPU rate, so each region's
// machine prices are a linear system whose solution is the unit rates.
type UnitRate struct {
	Region string
	// Resource is pricing.ResourceVCPU, ResourceMemory or ResourceGPU.
	Resource string
	// Name is the machine family ("g2") of a vCPU or GiB, the GPU model
	// ("L4") of a GPU.
	Name   string
	Option pricing.Option
	Hourly decimal.Decimal
	// Exact is true where the rate is solved from its region's machine
	// prices and the solved rates give every one of them to the last of
	// its 6 places; false where the prices are inconsistent (no rates
	// give them all) or leave no positive rates, and the rate is a first
	// guess (the split of the family's first type: GPUs 60 %, of the rest
	// vCPUs ¾ and RAM ¼).
	Exact bool
	// Split, on an exact vCPU or memory rate, says that the prices fix
	// only a sum of rates (g2's vCPUs and GiB are always 1 : 4), whose
	// split between the two is the first guess's.
	Split bool
	// Types is how many machine prices the rate is solved from; Source
	// and AsOf are theirs (sources joined, the latest date).
	Types  int
	Source string
	AsOf   string
}

// Price is the rate as a per-resource catalog price, its source saying how
// it was derived.
func (u UnitRate) Price() pricing.Price {
	unit := map[string]string{pricing.ResourceVCPU: "vCPU", pricing.ResourceMemory: "GiB", pricing.ResourceGPU: "GPU"}[u.Resource]
	src := fmt.Sprintf(pricing.DerivedSource+"%s by solving machine price = Σ unit price × amount over %d %s prices in %s (per %s-hour)",
		u.Source, u.Types, u.Option, u.Region, unit)
	if u.Split {
		src += "; the prices fix only the sum of the vCPU and GiB rates, split as the first type's"
	}
	p := pricing.Price{Provider: fleet.GCP, Region: u.Region, InstanceType: u.Name, Resource: u.Resource, Option: u.Option,
		Hourly: u.Hourly, Currency: pricing.Currency, Unit: pricing.UnitHour, Source: src, AsOf: u.AsOf}
	if _, ok := pricing.CommitmentTerm(u.Option); ok {
		p.Commitment = pricing.ResourceCUD
	}
	return p
}

// unitOptions are the purchase options unit rates are derived for.
var unitOptions = []pricing.Option{pricing.OnDemand, pricing.Spot, pricing.SavingsPlan1y, pricing.SavingsPlan3y}

// GCPUnitRates derives the unit rates of the GCP offers given, per region
// and purchase option (on-demand, spot, 1- and 3-year resource-based CUD
// from cat's commitment rates), in the order the rates are first set. It
// is the one derivation behind both the offline catalog's per-resource
// prices and the GCP simulator's Billing Catalog SKUs, so that a scan
// through the simulator and the same fleet read from a file price alike.
//
// A first guess splits a family's first offer in the region: the GPUs take
// 60 % of its price, the vCPUs three quarters of the rest and the RAM a
// quarter. Then solveRates solves the rates from every type of the family
// in the region (and the other families sharing a GPU model), nearest the
// guess where the prices leave a choice. Where they are not linear in
// vCPUs, GiB and GPUs (a3-edgegpu-8g, from SkyPilot, beside a3-highgpu-8g,
// from the Billing Catalog, with the same 208 vCPUs, 1,872 GiB and 8 H100s
// at another price), the Billing Catalog's price wins (weightOf) and the
// rates are not Exact. The rates of one region depend on that region's
// offers only, in the order given.
func GCPUnitRates(cat pricing.Catalog, offers []pricing.Offer) []UnitRate {
	type key struct {
		region, what string
		option       pricing.Option
	}
	rates := map[key]decimal.Decimal{}
	var order []key
	set := func(k key, v decimal.Decimal) {
		if _, ok := rates[k]; !ok {
			rates[k] = v
			order = append(order, k)
		}
	}
	gpuShare, coreShare := decimal.RequireFromString("0.6"), decimal.RequireFromString("0.75")
	for _, o := range offers {
		t := o.Type
		if o.Type.Provider != fleet.GCP || t.GPUCount <= 0 || t.VCPUs <= 0 || t.MemoryGiB <= 0 {
			continue
		}
		family, _, _ := strings.Cut(t.Name, "-")
		for _, opt := range unitOptions {
			price, ok := machinePrice(cat, o, opt)
			if !ok {
				continue
			}
			fk := key{o.Region, "family:" + family, opt}
			gk := key{o.Region, "gpu:" + t.GPUModel, opt}
			n, v, m := decimal.NewFromFloat(t.GPUCount), decimal.NewFromFloat(t.VCPUs), decimal.NewFromFloat(t.MemoryGiB)
			if c, done := rates[fk]; done {
				// A GPU model the family has no rate for yet (a2-ultragpu's
				// A100 80GB after a2-highgpu's A100) takes what its first
				// type's price leaves after the family's vCPU and RAM rates.
				if _, ok := rates[gk]; !ok {
					r := rates[key{o.Region, "ram:" + family, opt}]
					if g := price.Hourly.Sub(c.Mul(v)).Sub(r.Mul(m)).Div(n).Round(9); g.IsPositive() {
						set(gk, g)
					}
				}
				continue
			}
			g, ok := rates[gk]
			if !ok {
				g = price.Hourly.Mul(gpuShare).Div(n).Round(9)
				set(gk, g)
			}
			host := price.Hourly.Sub(g.Mul(n))
			if !host.IsPositive() {
				continue
			}
			c := host.Mul(coreShare).Div(v).Round(9)
			r := host.Sub(c.Mul(v)).Div(m).Round(9)
			set(fk, c)
			set(key{o.Region, "ram:" + family, opt}, r)
		}
	}
	// Refine the first guesses into the rates that price all the family's
	// types (solveRates), per region and purchase option.
	type system struct {
		region   string
		option   pricing.Option
		unknowns []string // key.what
		index    map[string]int
		eqs      []equation
		prices   []pricing.Price // eqs[i]'s price
	}
	systems := map[key]*system{}
	var sysOrder []key
	for _, o := range offers {
		t := o.Type
		if o.Type.Provider != fleet.GCP || t.GPUCount <= 0 || t.GPUCount != math.Trunc(t.GPUCount) || t.VCPUs <= 0 || t.MemoryGiB <= 0 {
			// A share of a GPU (g4-standard-6/12/24) is no count a
			// machine type states, so no price the rates must give.
			continue
		}
		family, _, _ := strings.Cut(t.Name, "-")
		for _, opt := range unitOptions {
			price, ok := machinePrice(cat, o, opt)
			if !ok {
				continue
			}
			sk := key{region: o.Region, option: opt}
			sys := systems[sk]
			if sys == nil {
				sys = &system{region: o.Region, option: opt, index: map[string]int{}}
				systems[sk] = sys
				sysOrder = append(sysOrder, sk)
			}
			eq := equation{coef: map[int]decimal.Decimal{}, price: price.Hourly, weight: weightOf(o, opt)}
			for _, u := range []struct {
				what  string
				units float64
			}{{"family:" + family, t.VCPUs}, {"ram:" + family, t.MemoryGiB}, {"gpu:" + t.GPUModel, t.GPUCount}} {
				i, ok := sys.index[u.what]
				if !ok {
					i = len(sys.unknowns)
					sys.index[u.what] = i
					sys.unknowns = append(sys.unknowns, u.what)
				}
				eq.coef[i] = decimal.NewFromFloat(u.units)
			}
			sys.eqs = append(sys.eqs, eq)
			sys.prices = append(sys.prices, price)
		}
	}
	exact := map[key]bool{}
	split := map[key]bool{}
	types := map[key]int{}
	sources := map[key][]string{}
	asOf := map[key]string{}
	for _, sk := range sysOrder {
		sys := systems[sk]
		x0 := make([]decimal.Decimal, len(sys.unknowns))
		for i, what := range sys.unknowns {
			x0[i] = rates[key{sys.region, what, sys.option}]
		}
		x, ex := solveRates(len(x0), sys.eqs, x0)
		ok := true
		for _, v := range x {
			ok = ok && v.Round(9).IsPositive()
		}
		if !ok {
			continue // keep the first guesses
		}
		fixed := determined(len(x0), sys.eqs)
		for i, what := range sys.unknowns {
			k := key{sys.region, what, sys.option}
			if _, had := rates[k]; !had {
				order = append(order, k)
			}
			rates[k] = x[i].Round(9)
			exact[k] = ex[i]
			split[k] = !fixed[i]
			for e, eq := range sys.eqs {
				if _, in := eq.coef[i]; !in {
					continue
				}
				types[k]++
				p := sys.prices[e]
				if src := cmpOr(p.Source, "the catalog"); !slices.Contains(sources[k], src) {
					sources[k] = append(sources[k], src)
				}
				asOf[k] = max(asOf[k], p.AsOf)
			}
		}
	}
	out := make([]UnitRate, 0, len(order))
	for _, k := range order {
		what, name, _ := strings.Cut(k.what, ":")
		resource := map[string]string{"family": pricing.ResourceVCPU, "ram": pricing.ResourceMemory, "gpu": pricing.ResourceGPU}[what]
		slices.Sort(sources[k])
		out = append(out, UnitRate{Region: k.region, Resource: resource, Name: name, Option: k.option, Hourly: rates[k],
			Exact: exact[k], Split: exact[k] && split[k] && resource != pricing.ResourceGPU, Types: types[k],
			Source: strings.Join(sources[k], " + "), AsOf: asOf[k]})
	}
	return out
}

func cmpOr(s, or string) string {
	if s != "" {
		return s
	}
	return or
}

// determined reports, per unknown, whether the equations fix it alone
// (its unit vector lies in the row space of their coefficients), not only
// a sum of it and others.
func determined(n int, eqs []equation) []bool {
	rows := func(extra int) int {
		m := make([][]*big.Rat, 0, len(eqs)+1)
		add := func(coef map[int]decimal.Decimal) {
			r := make([]*big.Rat, n)
			for j := range r {
				r[j] = new(big.Rat)
				if v, ok := coef[j]; ok {
					r[j] = v.Rat()
				}
			}
			m = append(m, r)
		}
		for _, e := range eqs {
			add(e.coef)
		}
		if extra >= 0 {
			add(map[int]decimal.Decimal{extra: decimal.NewFromInt(1)})
		}
		return rank(m, n)
	}
	base := rows(-1)
	out := make([]bool, n)
	for j := range out {
		out[j] = rows(j) == base
	}
	return out
}

// rank is the rank of the rows × n matrix m (Gaussian elimination; m is
// changed).
func rank(m [][]*big.Rat, n int) int {
	r := 0
	for col := 0; col < n && r < len(m); col++ {
		p := -1
		for i := r; i < len(m); i++ {
			if m[i][col].Sign() != 0 {
				p = i
				break
			}
		}
		if p < 0 {
			continue
		}
		m[r], m[p] = m[p], m[r]
		for i := r + 1; i < len(m); i++ {
			if m[i][col].Sign() == 0 {
				continue
			}
			f := new(big.Rat).Quo(m[i][col], m[r][col])
			for j := col; j < n; j++ {
				m[i][j].Sub(m[i][j], new(big.Rat).Mul(f, m[r][j]))
			}
		}
		r++
	}
	return r
}

// machinePrice is an offer's machine price under a purchase option: its
// on-demand or spot price, or cat's resource-based CUD rate of the term.
func machinePrice(cat pricing.Catalog, o pricing.Offer, opt pricing.Option) (pricing.Price, bool) {
	var p *pricing.Price
	switch opt {
	case pricing.OnDemand:
		p = o.OnDemand
	case pricing.Spot:
		p = o.Spot
	default:
		term, ok := pricing.CommitmentTerm(opt)
		if !ok {
			return pricing.Price{}, false
		}
		r, ok := pricing.LookupCommitment(cat, pricing.CommitmentQuery{Provider: fleet.GCP, Region: o.Region, InstanceType: o.Type.Name, Kind: pricing.ResourceCUD, Term: term})
		if !ok {
			return pricing.Price{}, false
		}
		p = &pricing.Price{Hourly: r.Hourly, Source: r.Source, AsOf: r.AsOf}
	}
	if p == nil || !p.Hourly.IsPositive() {
		return pricing.Price{}, false
	}
	return *p, true
}

// weightOf is how much an offer's price counts in solveRates: a price the
// Billing Catalog gave for the whole machine (Cyclenerd's) or the fleet's
// own outweighs, a million to one, one put together elsewhere (SkyPilot's
// host + accelerator), so that where the two disagree beyond any rates
// (a3-edgegpu-8g and a3-highgpu-8g have the same 208 vCPUs, 1,872 GiB and
// 8 H100s at different prices) the rates give the Billing Catalog's.
func weightOf(o pricing.Offer, opt pricing.Option) int64 {
	p := o.OnDemand
	if opt == pricing.Spot {
		p = o.Spot
	}
	if p != nil && (strings.Contains(p.Source, "Billing Catalog") || strings.HasPrefix(p.Source, "fleet file")) {
		return 1_000_000
	}
	return 1
}

// unitKey indexes the catalog's derived unit prices of a region.
type unitKey struct {
	resource, name string // name lower case
	option         pricing.Option
}

// ResourcePrice is the GCP per-resource price q selects, derived from the
// region's machine prices (GCPUnitRates); only Exact rates are given: where
// the region's prices are inconsistent there is none. Derived once per
// region, on first use.
func (c *catalog) ResourcePrice(q pricing.ResourceQuery) (pricing.Price, bool) {
	if q.Provider != fleet.GCP {
		return pricing.Price{}, false
	}
	region := strings.ToLower(q.Region)
	v, ok := c.units.Load(region)
	if !ok {
		m := map[unitKey]pricing.Price{}
		for _, u := range GCPUnitRates(c, c.Offers(pricing.Query{Provider: fleet.GCP, Region: region})) {
			if u.Exact {
				m[unitKey{u.Resource, strings.ToLower(u.Name), u.Option}] = u.Price()
			}
		}
		v, _ = c.units.LoadOrStore(region, m)
	}
	p, ok := v.(map[unitKey]pricing.Price)[unitKey{q.Resource, strings.ToLower(q.Name), q.Option}]
	return p, ok
}
