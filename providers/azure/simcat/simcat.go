// Package simcat feeds the Azure simulator from the embedded catalog: the
// VM sizes as Resource SKUs reports them and the rows the Retail Prices API
// serves, and registers the simulator for cmd/cloudsim. The adapter's tests
// and cmd/cloudsim share it, so the simulator describes the same hardware
// and prices as the catalog the engine uses.
package simcat

import (
	"flag"
	"fmt"
	"math"
	"regexp"
	"sort"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
	"github.com/gpufinops/gpufinops/providers/azure/sim"
	"github.com/gpufinops/gpufinops/providers/simkit"
)

// Hours of the reservation terms: the Retail Prices API lists the whole
// term's price.
var termHours = map[string]decimal.Decimal{pricing.Term1y: decimal.NewFromInt(8760), pricing.Term3y: decimal.NewFromInt(26280)}

// Options derives the simulator's sizes and prices from the catalog, for
// the fleet's Azure sizes in the regions where it runs them: GPUs, vCPUs and
// memory from the catalog's type (else the fleet's gpu block); the catalog's
// on-demand and spot prices; and reservations from the catalog's commitment
// rates (hourly × hours in the term, as the API lists them). A size the
// catalog has no offer for in a region is priced as the fleet prices it
// there (the first on-demand and spot instances' hourlyPrice), as the Retail
// Prices API lists every size Azure sells; without a fleet price it has no
// row.
func Options(f *fleet.Fleet, cat pricing.Catalog) sim.Options {
	var opts sim.Options
	sizes := map[string]bool{}
	offers := map[[2]string]bool{}
	for _, in := range f.Instances {
		if in.Provider != fleet.Azure || in.InstanceType == "" {
			continue
		}
		if !sizes[in.InstanceType] {
			sizes[in.InstanceType] = true
			z := sim.Size{Name: in.InstanceType, GPUs: in.GPU.Count, VCPUs: in.VCPUs, Mem: in.MemoryGiB}
			if t, ok := cat.InstanceType(fleet.Azure, in.InstanceType); ok {
				z = sim.Size{Name: in.InstanceType, GPUs: t.GPUCount, VCPUs: t.VCPUs, Mem: t.MemoryGiB}
			}
			// The fleet's instanceStoreGB is the size's local NVMe disk.
			z.NvmeMiB = math.Round(in.InstanceStoreGB * 1e9 / (1 << 20))
			opts.Sizes = append(opts.Sizes, z)
		}
		k := [2]string{in.Region, in.InstanceType}
		if offers[k] {
			continue
		}
		offers[k] = true
		if row, ok := priceRow(cat, in.Region, in.InstanceType); ok {
			opts.Prices = append(opts.Prices, row)
		} else if row, ok := fleetPriceRow(f, in.Region, in.InstanceType); ok {
			opts.Prices = append(opts.Prices, row)
		}
	}
	sort.Slice(opts.Sizes, func(i, j int) bool { return opts.Sizes[i].Name < opts.Sizes[j].Name })
	return opts
}

func priceRow(cat pricing.Catalog, region, size string) (sim.PriceRow, bool) {
	off, ok := cat.Offer(fleet.Azure, region, size)
	if !ok || (off.OnDemand == nil && off.Spot == nil) {
		return sim.PriceRow{}, false
	}
	row := sim.PriceRow{Region: region, Size: size}
	// A size priced on spot only still has its Spot row in the Retail
	// Prices API.
	if off.OnDemand != nil {
		row.OnDemand = off.OnDemand.Hourly.String()
	}
	if off.Spot != nil {
		row.Spot = off.Spot.Hourly.String()
	}
	for term, dst := range map[string]*string{pricing.Term1y: &row.Reservation1y, pricing.Term3y: &row.Reservation3y} {
		if r, ok := pricing.LookupCommitment(cat, pricing.CommitmentQuery{Provider: fleet.Azure, Region: region, InstanceType: size, Kind: pricing.Reservation, Term: term}); ok && r.Hourly.IsPositive() {
			*dst = r.Hourly.Mul(termHours[term]).String()
		}
	}
	return row, true
}

// fleetPriceRow is a size's row from the fleet's hourlyPrice in a region.
func fleetPriceRow(f *fleet.Fleet, region, size string) (sim.PriceRow, bool) {
	row := sim.PriceRow{Region: region, Size: size}
	for _, in := range f.Instances {
		if in.Provider != fleet.Azure || in.Region != region || in.InstanceType != size || in.HourlyPrice == nil || !in.HourlyPrice.IsPositive() {
			continue
		}
		switch {
		case in.Lifecycle == fleet.OnDemand && row.OnDemand == "":
			row.OnDemand = in.HourlyPrice.String()
		case in.Lifecycle == fleet.Spot && row.Spot == "":
			row.Spot = in.HourlyPrice.String()
		}
	}
	return row, row.OnDemand != ""
}

var subscriptionID = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// subscription is cloudsim's --subscription.
var subscription string

func init() {
	simkit.Register(simkit.Simulator{
		Name: "azure", Title: "Azure", Provider: fleet.Azure, EndpointEnv: "GPUFINOPS_PROVIDERS_AZURE_ENDPOINT",
		Ops: sim.Ops, ProxyHosts: []string{sim.EntraHost},
		Flags: func(fs *flag.FlagSet) func() error {
			fs.StringVar(&subscription, "subscription", "", "Azure subscription of the fleet's instances that name none (default "+sim.DefaultSubscription+")")
			return func() error {
				if subscription != "" && !subscriptionID.MatchString(subscription) {
					return fmt.Errorf("--subscription %q is not a subscription ID (a GUID)", subscription)
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
			opts.Subscription = subscription
			opts.Kit = env.Kit
			opts.Now = env.Now
			return sim.New(f, opts), nil
		},
	})
}
