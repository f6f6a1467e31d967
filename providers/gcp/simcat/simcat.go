// Package simcat feeds the GCP simulator from the embedded catalog: the
// machine types as machineTypes.get reports them and Billing Catalog SKUs
// whose vCPU, RAM and GPU rates add up to the catalog's prices of the
// fleet's types, so that a scan through the simulator and the same fleet
// read from a file price alike. cmd/cloudsim and the adapter's tests share
// it.
package simcat

import (
	"flag"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
	"github.com/gpufinops/gpufinops/providers/gcp/sim"
	"github.com/gpufinops/gpufinops/providers/simkit"
)

var projectFlag string

var projectID = regexp.MustCompile(`^[a-z][a-z0-9-]{4,28}[a-z0-9]$`)

func init() {
	simkit.Register(simkit.Simulator{
		Name: "gcp", Title: "GCP", Provider: fleet.GCP, EndpointEnv: "GPUFINOPS_PROVIDERS_GCP_ENDPOINT",
		Ops: sim.Ops,
		Flags: func(fs *flag.FlagSet) func() error {
			fs.StringVar(&projectFlag, "gcp-project", "", "GCP project of instances that name none (default: the fleet's most common GCP account, else "+sim.DefaultProject+")")
			return func() error {
				if projectFlag != "" && !projectID.MatchString(projectFlag) {
					return fmt.Errorf("--gcp-project %q is not a GCP project ID", projectFlag)
				}
				return nil
			}
		},
		Build: func(f *fleet.Fleet, env simkit.Env) (simkit.Sim, error) {
			cat, err := catalog.Embedded()
			if err != nil {
				return nil, fmt.Errorf("loading the catalog: %w", err)
			}
			opts := Options(f, cat)
			opts.Project, opts.Kit, opts.Now = projectFlag, env.Kit, env.Now
			return sim.New(f, opts), nil
		},
	})
}

// Options derives the simulator's machine types and SKUs from the catalog:
//
//   - Types: every GCP type of the catalog (vCPUs, memory, bundled GPUs) and
//     the fleet's own types the catalog lacks (from the fleet's figures).
//   - SKUs: per region and family, core and RAM rates, and per region and
//     GPU model a GPU rate, for on-demand, spot and 1- and 3-year
//     commitments. A first guess splits the family's first type in the
//     region (the fleet's types there first): the GPUs take 60 % of its
//     price, the vCPUs three quarters of the rest and the RAM a quarter.
//     Then solveRates solves the rates from every type of the family in
//     the region (and the other families sharing a GPU model), nearest the
//     guess where the prices leave a choice, so that every type prices as
//     in the catalog, to the last of its 6 places, wherever the catalog's
//     prices are linear in vCPUs, GiB and GPUs, as the Billing Catalog's
//     are. Where they are not (a3-edgegpu-8g, from SkyPilot, beside
//     a3-highgpu-8g, from the Billing Catalog, with the same 208 vCPUs,
//     1,872 GiB and 8 H100s at another price), the Billing Catalog's
//     price wins (weightOf).
//     A fleet type the catalog lacks is priced the same way from the fleet's
//     own hourlyPrice (fleetOffers), as the Billing Catalog prices every
//     machine Compute Engine sells.
func Options(f *fleet.Fleet, cat pricing.Catalog) sim.Options {
	var opts sim.Options
	seen := map[string]bool{}
	rank := map[string]int{} // region/type of the fleet → order
	for _, in := range f.Instances {
		if k := in.Region + "/" + in.InstanceType; in.Provider == fleet.GCP && rank[k] == 0 {
			rank[k] = len(rank) + 1
		}
		if in.Provider == fleet.GCP && !seen[in.InstanceType] {
			seen[in.InstanceType] = true
			if _, ok := cat.InstanceType(fleet.GCP, in.InstanceType); !ok && in.VCPUs > 0 && in.MemoryGiB > 0 {
				opts.Types = append(opts.Types, sim.MachineType{Name: in.InstanceType, VCPUs: int(in.VCPUs), MemoryMB: int(in.MemoryGiB * 1024),
					Accelerator: sim.AcceleratorType(in.GPU.Model), AcceleratorCount: int(in.GPU.Count)})
			}
		}
	}
	offers := append(fleetOffers(f, cat), cat.Offers(pricing.Query{Provider: fleet.GCP})...)
	typeSeen := map[string]bool{}
	for _, t := range opts.Types {
		typeSeen[t.Name] = true
	}
	for _, o := range offers {
		t := o.Type
		if typeSeen[t.Name] {
			continue
		}
		typeSeen[t.Name] = true
		opts.Types = append(opts.Types, sim.MachineType{Name: t.Name, VCPUs: int(t.VCPUs), MemoryMB: int(t.MemoryGiB * 1024),
			Accelerator: sim.AcceleratorType(t.GPUModel), AcceleratorCount: int(t.GPUCount)})
	}
	sort.Slice(opts.Types, func(i, j int) bool { return opts.Types[i].Name < opts.Types[j].Name })
	// The fleet's types in their regions first, then the rest in catalog order.
	sort.SliceStable(offers, func(i, j int) bool {
		ri, rj := rank[offers[i].Region+"/"+offers[i].Type.Name], rank[offers[j].Region+"/"+offers[j].Type.Name]
		if (ri > 0) != (rj > 0) {
			return ri > 0
		}
		return ri < rj
	})
	type key struct{ region, what, usage string }
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
		family, _, _ := strings.Cut(t.Name, "-")
		if t.GPUCount <= 0 || t.VCPUs <= 0 || t.MemoryGiB <= 0 {
			continue
		}
		for _, usage := range []string{"OnDemand", "Preemptible", "Commit1Yr", "Commit3Yr"} {
			price, ok := priceOf(cat, o, usage)
			if !ok || !price.IsPositive() {
				continue
			}
			fk := key{o.Region, "family:" + family, usage}
			gk := key{o.Region, "gpu:" + t.GPUModel, usage}
			n, v, m := decimal.NewFromFloat(t.GPUCount), decimal.NewFromFloat(t.VCPUs), decimal.NewFromFloat(t.MemoryGiB)
			if c, done := rates[fk]; done {
				// A GPU model the family has no rate for yet (a2-ultragpu's
				// A100 80GB after a2-highgpu's A100) takes what its first
				// type's price leaves after the family's vCPU and RAM rates.
				if _, ok := rates[gk]; !ok {
					r := rates[key{o.Region, "ram:" + family, usage}]
					if g := price.Sub(c.Mul(v)).Sub(r.Mul(m)).Div(n).Round(9); g.IsPositive() {
						set(gk, g)
					}
				}
				continue
			}
			g, ok := rates[gk]
			if !ok {
				g = price.Mul(gpuShare).Div(n).Round(9)
				set(gk, g)
			}
			host := price.Sub(g.Mul(n))
			if !host.IsPositive() {
				continue
			}
			c := host.Mul(coreShare).Div(v).Round(9)
			r := host.Sub(c.Mul(v)).Div(m).Round(9)
			set(fk, c)
			set(key{o.Region, "ram:" + family, usage}, r)
		}
	}
	// Refine the first types' rates into those that price all the
	// family's types (solveRates), per region and purchase option.
	type system struct {
		region, usage string
		unknowns      []string // key.what
		index         map[string]int
		eqs           []equation
	}
	systems := map[[2]string]*system{}
	var sysOrder [][2]string
	for _, o := range offers {
		t := o.Type
		family, _, _ := strings.Cut(t.Name, "-")
		if t.GPUCount <= 0 || t.GPUCount != math.Trunc(t.GPUCount) || t.VCPUs <= 0 || t.MemoryGiB <= 0 {
			// A share of a GPU (g4-standard-6/12/24) is no count
			// machineTypes can state, so no price the rates must give.
			continue
		}
		for _, usage := range []string{"OnDemand", "Preemptible", "Commit1Yr", "Commit3Yr"} {
			price, ok := priceOf(cat, o, usage)
			if !ok || !price.IsPositive() {
				continue
			}
			sk := [2]string{o.Region, usage}
			sys := systems[sk]
			if sys == nil {
				sys = &system{region: o.Region, usage: usage, index: map[string]int{}}
				systems[sk] = sys
				sysOrder = append(sysOrder, sk)
			}
			eq := equation{coef: map[int]decimal.Decimal{}, price: price, weight: weightOf(o, usage)}
			for what, units := range map[string]float64{"family:" + family: t.VCPUs, "ram:" + family: t.MemoryGiB, "gpu:" + t.GPUModel: t.GPUCount} {
				i, ok := sys.index[what]
				if !ok {
					i = len(sys.unknowns)
					sys.index[what] = i
					sys.unknowns = append(sys.unknowns, what)
				}
				eq.coef[i] = decimal.NewFromFloat(units)
			}
			sys.eqs = append(sys.eqs, eq)
		}
	}
	for _, sk := range sysOrder {
		sys := systems[sk]
		x0 := make([]decimal.Decimal, len(sys.unknowns))
		for i, what := range sys.unknowns {
			x0[i] = rates[key{sys.region, what, sys.usage}]
		}
		x := solveRates(len(x0), sys.eqs, x0)
		ok := true
		for _, v := range x {
			ok = ok && v.Round(9).IsPositive()
		}
		if !ok {
			continue // keep the first types' rates
		}
		for i, what := range sys.unknowns {
			k := key{sys.region, what, sys.usage}
			if _, had := rates[k]; !had {
				order = append(order, k)
			}
			rates[k] = x[i].Round(9)
		}
	}
	for i, k := range order {
		what, name, _ := strings.Cut(k.what, ":")
		sku := sim.SKU{ID: fmt.Sprintf("%04X-%04X-%04X", i/65536%65536, i%65536, len(k.region)), UsageType: k.usage, Regions: []string{k.region}, Unit: "h", Price: rates[k].String()}
		prefix := map[string]string{"OnDemand": "", "Preemptible": "Spot Preemptible ", "Commit1Yr": "Commitment v1: ", "Commit3Yr": "Commitment v1: "}[k.usage]
		suffix := map[string]string{"Commit1Yr": " for 1 Year", "Commit3Yr": " for 3 Years"}[k.usage]
		switch what {
		case "family":
			sku.ResourceGroup, sku.Description = "CPU", prefix+strings.ToUpper(name)+" Instance Core running in "+k.region+suffix
		case "ram":
			sku.ResourceGroup, sku.Unit, sku.Description = "RAM", "GiBy.h", prefix+strings.ToUpper(name)+" Instance Ram running in "+k.region+suffix
		case "gpu":
			sku.ResourceGroup, sku.Description = "GPU", prefix+gpuSKUName(name)+" running in "+k.region+suffix
		}
		opts.SKUs = append(opts.SKUs, sku)
	}
	return opts
}

// priceOf is the catalog's price of an offer under a usage type.
// fleetOffers are offers of the fleet's GCP types the catalog lacks, made
// from the fleet's figures and hourlyPrice (on-demand instances price
// on-demand, spot ones spot), one per region and type that has an
// on-demand price, GPUs, vCPUs and memory.
func fleetOffers(f *fleet.Fleet, cat pricing.Catalog) []pricing.Offer {
	type key struct{ region, typ string }
	var order []key
	out := map[key]*pricing.Offer{}
	for _, in := range f.Instances {
		if in.Provider != fleet.GCP || in.HourlyPrice == nil || !in.HourlyPrice.IsPositive() || in.GPU.Count <= 0 || in.VCPUs <= 0 || in.MemoryGiB <= 0 {
			continue
		}
		if _, known := cat.InstanceType(fleet.GCP, in.InstanceType); known {
			continue
		}
		k := key{in.Region, in.InstanceType}
		o := out[k]
		if o == nil {
			o = &pricing.Offer{Region: in.Region, Type: pricing.InstanceType{Provider: fleet.GCP, Name: in.InstanceType,
				GPUModel: in.GPU.Model, GPUCount: in.GPU.Count, GPUMemoryGiB: in.GPU.MemoryGiB, VCPUs: in.VCPUs, MemoryGiB: in.MemoryGiB}}
			out[k] = o
			order = append(order, k)
		}
		p := &pricing.Price{Provider: fleet.GCP, Region: in.Region, InstanceType: in.InstanceType, Hourly: *in.HourlyPrice,
			Currency: pricing.Currency, Unit: pricing.UnitHour, Source: "fleet file (hourlyPrice)"}
		switch {
		case in.Lifecycle == fleet.OnDemand && o.OnDemand == nil:
			p.Option, o.OnDemand = pricing.OnDemand, p
		case in.Lifecycle == fleet.Spot && o.Spot == nil:
			p.Option, o.Spot = pricing.Spot, p
		}
	}
	var offers []pricing.Offer
	for _, k := range order {
		if o := out[k]; o.OnDemand != nil {
			offers = append(offers, *o)
		}
	}
	return offers
}

func priceOf(cat pricing.Catalog, o pricing.Offer, usage string) (decimal.Decimal, bool) {
	switch usage {
	case "OnDemand":
		if o.OnDemand != nil {
			return o.OnDemand.Hourly, true
		}
	case "Preemptible":
		if o.Spot != nil {
			return o.Spot.Hourly, true
		}
	case "Commit1Yr", "Commit3Yr":
		term := map[string]string{"Commit1Yr": "1y", "Commit3Yr": "3y"}[usage]
		if r, ok := pricing.LookupCommitment(cat, pricing.CommitmentQuery{Provider: fleet.GCP, Region: o.Region, InstanceType: o.Type.Name, Kind: pricing.ResourceCUD, Term: term}); ok {
			return r.Hourly, true
		}
	}
	return decimal.Decimal{}, false
}

// weightOf is how much an offer's price counts in solveRates: a price the
// Billing Catalog gave for the whole machine (Cyclenerd's) or the fleet's
// own outweighs, a million to one, one put together elsewhere (SkyPilot's
// host + accelerator), so that where the two disagree beyond any rates
// (a3-edgegpu-8g and a3-highgpu-8g have the same 208 vCPUs, 1,872 GiB and
// 8 H100s at different prices) the rates give the Billing Catalog's.
func weightOf(o pricing.Offer, usage string) int64 {
	p := o.OnDemand
	if usage == "Preemptible" {
		p = o.Spot
	}
	if p != nil && (strings.Contains(p.Source, "Billing Catalog") || strings.HasPrefix(p.Source, "fleet file")) {
		return 1_000_000
	}
	return 1
}

// gpuSKUName is how the Billing Catalog names a GPU model's SKUs.
func gpuSKUName(model string) string {
	switch model {
	case "A100":
		return "Nvidia Tesla A100 GPU"
	case "A100-80GB":
		return "Nvidia Tesla A100 80GB GPU"
	case "H100":
		return "Nvidia H100 80GB GPU"
	case "H100-MEGA":
		return "Nvidia H100 80GB Mega GPU"
	case "T4", "V100", "P100", "P4":
		return "Nvidia Tesla " + model + " GPU"
	case "RTXPRO6000", "RTX PRO Server 6000":
		// The catalog's names of the g4 machines' GPU (SkyPilot's and the
		// GCP adapter's); the Billing Catalog spells the product out.
		return "Nvidia RTX PRO 6000 GPU"
	}
	return "Nvidia " + model + " GPU"
}
