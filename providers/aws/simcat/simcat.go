// Package simcat feeds the AWS simulator from the embedded catalog: the
// instance types as DescribeInstanceTypes reports them and the prices the
// Price List, spot price history and Savings Plans serve. cmd/cloudsim and the
// adapter's end-to-end tests share it, so the simulator always describes the
// same hardware and prices as the catalog the engine uses.
package simcat

import (
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/providers/aws/sim"
)

// Savings Plans discounts the simulator serves for a type the catalog has no
// commitment rate for. Types with a rate are served the catalog's Compute
// Savings Plan rate (no upfront) so that a scan through the simulator and
// the same fleet read from a file price commitments alike.
var (
	SavingsPlanDiscount1y = decimal.RequireFromString("0.35")
	SavingsPlanDiscount3y = decimal.RequireFromString("0.55")
)

// savingsPlanRate is the Compute Savings Plan no-upfront rate of a type for
// a term: the catalog's rate where its on-demand price is the one served,
// else that rate scaled by the served on-demand price over the rate's own
// (the exact ratio, not its discount rounded to 2 places), else the
// fallback discount.
func savingsPlanRate(cat pricing.Catalog, region, instanceType, term string, od, fallback decimal.Decimal) string {
	one := decimal.NewFromInt(1)
	if r, ok := pricing.LookupCommitment(cat, pricing.CommitmentQuery{Provider: fleet.AWS, Region: region, InstanceType: instanceType,
		Kind: pricing.ComputeSavingsPlan, Term: term, Payment: pricing.PayNoUpfront}); ok && r.DiscountPercent > 0 && r.OnDemandHourly.IsPositive() {
		if r.OnDemandHourly.Equal(od) {
			return r.Hourly.String()
		}
		return od.Mul(r.Hourly).DivRound(r.OnDemandHourly, 6).String()
	}
	return od.Mul(one.Sub(fallback)).String()
}

// Options derives the simulator's instance types and prices from the
// catalog, for the AWS instance types of the fleet in the regions where the
// fleet runs them:
//
//   - Types: GPU (or Neuron device) name, maker, count and memory per device
//     in MiB, vCPUs and memory in MiB, from the catalog's instance type. GPU
//     names are as DescribeInstanceTypes reports them: without the catalog's
//     memory suffix ("A100-80GB" on p4de is "A100" with 81920 MiB). A type the
//     catalog does not know (a fleet entry that describes its own hardware)
//     takes the fleet's gpu block, vCPUs and memory. The instance store is
//     the fleet's instanceStoreGB when set, else the type's (instanceStore).
//   - Prices: the catalog's on-demand price; its spot price in the zone it was
//     read in (AZ IDs such as use1-az2 are named as zones, us-east-1b); and
//     Compute Savings Plans 1y/3y rates of on-demand × (1 − 0.35) and
//     × (1 − 0.55), gpufinops's default policy discounts, since the catalog
//     has no Savings Plans rates. A type the catalog has no offer for in a
//     region is priced as the fleet prices it there (FleetPrices), as the
//     Price List prices every type AWS sells; without a fleet price it gets
//     no price row.
//   - SageMaker prices: a SageMaker item's ml.* type is an AmazonSageMaker
//     product of its component (Hosting for an endpoint, Notebook, Studio-
//     JupyterLab, Training, Processing) at the catalog's price (its
//     estimate), else the fleet's hourlyPrice; none otherwise, so the sim
//     serves what the file run prices and nothing else.
func Options(f *fleet.Fleet, cat pricing.Catalog) sim.Options {
	var opts sim.Options
	types := map[string]bool{}
	offers := map[[2]string]bool{}
	for _, in := range f.Instances {
		if in.Provider != fleet.AWS || in.InstanceType == "" {
			continue
		}
		if in.IsManaged() {
			// A SageMaker item's ml.* type is no EC2 type: EC2 does not
			// describe it, and EC2 prices and Savings Plans rates do not
			// cover it. It is an AmazonSageMaker product of its component.
			if row, ok := sageMakerRow(in, cat); ok && !offers[[2]string{in.Region, row.InstanceType + "/" + row.Component}] {
				offers[[2]string{in.Region, row.InstanceType + "/" + row.Component}] = true
				opts.SageMakerPrices = append(opts.SageMakerPrices, row)
			}
			continue
		}
		if !types[in.InstanceType] {
			types[in.InstanceType] = true
			opts.Types = append(opts.Types, typeInfo(in, cat))
		}
		key := [2]string{in.Region, in.InstanceType}
		if offers[key] {
			continue
		}
		offers[key] = true
		if row, ok := priceRow(in.Region, in.InstanceType, cat); ok {
			opts.Prices = append(opts.Prices, row)
		} else if row, ok := fleetPriceRow(f, in.Region, in.InstanceType); ok {
			opts.Prices = append(opts.Prices, row)
		}
	}
	sort.Slice(opts.Types, func(i, j int) bool { return opts.Types[i].Name < opts.Types[j].Name })
	sort.Slice(opts.SageMakerPrices, func(i, j int) bool {
		a, b := opts.SageMakerPrices[i], opts.SageMakerPrices[j]
		return a.Region+a.InstanceType+a.Component < b.Region+b.InstanceType+b.Component
	})
	sort.Slice(opts.Prices, func(i, j int) bool {
		a, b := opts.Prices[i], opts.Prices[j]
		if a.Region != b.Region {
			return a.Region < b.Region
		}
		return a.InstanceType < b.InstanceType
	})
	return opts
}

// typeInfo is what DescribeInstanceTypes says of the instance's type.
func typeInfo(in fleet.Instance, cat pricing.Catalog) sim.TypeInfo {
	model, count, memGiB, vcpus, hostGiB := in.GPU.Model, in.GPU.Count, in.GPU.MemoryGiB, in.VCPUs, in.MemoryGiB
	if t, ok := cat.InstanceType(fleet.AWS, in.InstanceType); ok {
		model, count, memGiB, vcpus, hostGiB = t.GPUModel, t.GPUCount, t.GPUMemoryGiB, t.VCPUs, t.MemoryGiB
	}
	vendor := ""
	if g, ok := cat.GPU(model); ok {
		vendor = g.Vendor
	}
	maker, neuron := manufacturer(vendor, model)
	store := instanceStore[in.InstanceType]
	if in.InstanceStoreGB > 0 {
		store = [2]int{int(math.Round(in.InstanceStoreGB)), 1}
	}
	return sim.TypeInfo{
		InstanceStoreGB:    store[0],
		InstanceStoreDisks: store[1],
		Name:               in.InstanceType,
		GPUName:            awsGPUName(model),
		GPUManufacturer:    maker,
		GPUCount:           count,
		GPUMemoryMiB:       mib(memGiB),
		Neuron:             neuron,
		VCPUs:              int(math.Round(vcpus)),
		MemoryMiB:          mib(hostGiB),
	}
}

func mib(gib float64) int { return int(math.Round(gib * 1024)) }

// manufacturer is the maker DescribeInstanceTypes names for a catalog vendor,
// and whether the device is a Neuron device (NeuronInfo, not GpuInfo).
func manufacturer(vendor, model string) (string, bool) {
	switch strings.ToLower(vendor) {
	case "nvidia":
		return "NVIDIA", false
	case "amd":
		return "AMD", false
	case "intel":
		// Gaudi accelerators are reported under Habana Labs' name.
		return "Habana", false
	case "aws":
		return "AWS", true
	case "xilinx":
		return "Xilinx", false
	case "":
		if strings.HasPrefix(strings.ToLower(model), "inferentia") || strings.HasPrefix(strings.ToLower(model), "trainium") {
			return "AWS", true
		}
		return "NVIDIA", false
	}
	return vendor, false
}

var memorySuffix = regexp.MustCompile(`-\d+GB$`)

// awsGPUName drops the catalog's memory suffix: AWS names a p4de's GPU
// "A100" and tells the 80 GB apart by its memory size.
func awsGPUName(model string) string { return memorySuffix.ReplaceAllString(model, "") }

// priceRow is a type's prices in a region, from the catalog's offer.
func priceRow(region, instanceType string, cat pricing.Catalog) (sim.PriceRow, bool) {
	o, ok := cat.Offer(fleet.AWS, region, instanceType)
	if !ok || (o.OnDemand == nil && o.Spot == nil) {
		return sim.PriceRow{}, false
	}
	row := sim.PriceRow{Region: region, InstanceType: instanceType}
	// A type sold without an on-demand list price (p5e, trn2 in some
	// regions) still has a spot price history, as on AWS.
	if o.OnDemand != nil {
		od := o.OnDemand.Hourly
		row.OnDemand = od.String()
		row.SavingsPlan1y = savingsPlanRate(cat, region, instanceType, pricing.Term1y, od, SavingsPlanDiscount1y)
		row.SavingsPlan3y = savingsPlanRate(cat, region, instanceType, pricing.Term3y, od, SavingsPlanDiscount3y)
	}
	if o.Spot != nil {
		row.Spot = map[string]string{zoneName(region, o.Spot.Zone): o.Spot.Hourly.String()}
	}
	return row, true
}

var azID = regexp.MustCompile(`^[a-z]+[0-9]+-az([0-9]+)$`)

// zoneName turns the catalog's zone into an availability zone name: zone
// names stay, AZ IDs (use1-az2) become the region and a letter (us-east-1b),
// anything else (a Local Zone ID, or no zone) becomes the region's first
// zone. AWS maps AZ IDs to names per account, so any mapping is as good.
func zoneName(region, zone string) string {
	if strings.HasPrefix(zone, region) && len(zone) == len(region)+1 {
		return zone
	}
	if m := azID.FindStringSubmatch(zone); m != nil {
		if n, err := strconv.Atoi(m[1]); err == nil && n >= 1 && n <= 26 {
			return region + string(rune('a'+n-1))
		}
	}
	return region + "a"
}

// fleetPriceRow prices a type the catalog has no offer for from the fleet's
// hourlyPrice there: the first on-demand instance's is the on-demand price,
// the first spot instance's the spot price in its zone; Savings Plans take
// the fallback discounts. No on-demand price, no row.
func fleetPriceRow(f *fleet.Fleet, region, instanceType string) (sim.PriceRow, bool) {
	row := sim.PriceRow{Region: region, InstanceType: instanceType}
	for _, in := range f.Instances {
		if in.Provider != fleet.AWS || in.IsManaged() || in.Region != region || in.InstanceType != instanceType || in.HourlyPrice == nil || !in.HourlyPrice.IsPositive() {
			continue
		}
		switch in.Lifecycle {
		case fleet.OnDemand:
			if row.OnDemand == "" {
				row.OnDemand = in.HourlyPrice.String()
			}
		case fleet.Spot:
			if row.Spot == nil {
				row.Spot = map[string]string{zoneName(region, in.Zone): in.HourlyPrice.String()}
			}
		}
	}
	if row.OnDemand == "" {
		return sim.PriceRow{}, false
	}
	od := decimal.RequireFromString(row.OnDemand)
	one := decimal.NewFromInt(1)
	row.SavingsPlan1y = od.Mul(one.Sub(SavingsPlanDiscount1y)).String()
	row.SavingsPlan3y = od.Mul(one.Sub(SavingsPlanDiscount3y)).String()
	return row, true
}

// sageMakerComponent is the Price List component a SageMaker item bills
// under.
var sageMakerComponent = map[fleet.ManagedKind]string{
	fleet.KindEndpoint: "Hosting", fleet.KindNotebook: "Notebook", fleet.KindStudioApp: "Studio-JupyterLab",
	fleet.KindTrainingJob: "Training", fleet.KindProcessingJob: "Processing",
}

// sageMakerRow is a SageMaker item's AmazonSageMaker price row.
func sageMakerRow(in fleet.Instance, cat pricing.Catalog) (sim.SageMakerPrice, bool) {
	comp := sageMakerComponent[in.Managed.Kind]
	if in.Managed.Service != fleet.SageMaker || comp == "" {
		return sim.SageMakerPrice{}, false
	}
	row := sim.SageMakerPrice{Region: in.Region, InstanceType: in.InstanceType, Component: comp}
	switch o, ok := cat.Offer(fleet.AWS, in.Region, in.InstanceType); {
	case ok && o.OnDemand != nil:
		row.OnDemand = o.OnDemand.Hourly.String()
	case in.HourlyPrice != nil:
		row.OnDemand = in.HourlyPrice.String()
	default:
		return row, false
	}
	return row, true
}
