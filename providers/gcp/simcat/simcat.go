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
	"regexp"
	"sort"
	"strings"

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
//     commitments: catalog.GCPUnitRates of the catalog's offers, the same
//     rates the offline catalog gives as per-resource prices, so that every
//     type prices as in the catalog, to the last of its 6 places, wherever
//     the catalog's prices are linear in vCPUs, GiB and GPUs, as the
//     Billing Catalog's are. A fleet type the catalog lacks is priced the
//     same way from the fleet's own hourlyPrice (fleetOffers), as the
//     Billing Catalog prices every machine Compute Engine sells; its
//     offers come after the catalog's, so that they set the first guess
//     of no family the catalog has.
func Options(f *fleet.Fleet, cat pricing.Catalog) sim.Options {
	var opts sim.Options
	seen := map[string]bool{}
	for _, in := range f.Instances {
		if in.Provider == fleet.GCP && !seen[in.InstanceType] {
			seen[in.InstanceType] = true
			if _, ok := cat.InstanceType(fleet.GCP, in.InstanceType); !ok && in.VCPUs > 0 && in.MemoryGiB > 0 {
				opts.Types = append(opts.Types, sim.MachineType{Name: in.InstanceType, VCPUs: int(in.VCPUs), MemoryMB: int(in.MemoryGiB * 1024),
					Accelerator: sim.AcceleratorType(in.GPU.Model), AcceleratorCount: int(in.GPU.Count)})
			}
		}
	}
	offers := append(cat.Offers(pricing.Query{Provider: fleet.GCP}), fleetOffers(f, cat)...)
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
	for i, u := range catalog.GCPUnitRates(cat, offers) {
		usage := map[pricing.Option]string{pricing.OnDemand: "OnDemand", pricing.Spot: "Preemptible", pricing.SavingsPlan1y: "Commit1Yr", pricing.SavingsPlan3y: "Commit3Yr"}[u.Option]
		sku := sim.SKU{ID: fmt.Sprintf("%04X-%04X-%04X", i/65536%65536, i%65536, len(u.Region)), UsageType: usage, Regions: []string{u.Region}, Unit: "h", Price: u.Hourly.String()}
		prefix := map[string]string{"OnDemand": "", "Preemptible": "Spot Preemptible ", "Commit1Yr": "Commitment v1: ", "Commit3Yr": "Commitment v1: "}[usage]
		suffix := map[string]string{"Commit1Yr": " for 1 Year", "Commit3Yr": " for 3 Years"}[usage]
		switch u.Resource {
		case pricing.ResourceVCPU:
			sku.ResourceGroup, sku.Description = "CPU", prefix+strings.ToUpper(u.Name)+" Instance Core running in "+u.Region+suffix
		case pricing.ResourceMemory:
			sku.ResourceGroup, sku.Unit, sku.Description = "RAM", "GiBy.h", prefix+strings.ToUpper(u.Name)+" Instance Ram running in "+u.Region+suffix
		case pricing.ResourceGPU:
			sku.ResourceGroup, sku.Description = "GPU", prefix+gpuSKUName(u.Name)+" running in "+u.Region+suffix
		}
		opts.SKUs = append(opts.SKUs, sku)
	}
	return opts
}

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
