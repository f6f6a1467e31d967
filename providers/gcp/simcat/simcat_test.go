package simcat

import (
	"math"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
	"github.com/gpufinops/gpufinops/providers/file"
)

// TestSKUsAddUpToTheCatalog: the demo fleet's GCP types, priced from the
// SKUs as vCPUs × core + GiB × RAM + GPUs × GPU, cost what the catalog says,
// on demand and on spot.
func TestSKUsAddUpToTheCatalog(t *testing.T) {
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	demo, err := file.Demo()
	if err != nil {
		t.Fatal(err)
	}
	opts := Options(demo, cat)
	rate := func(region, usage, desc string) decimal.Decimal {
		for _, s := range opts.SKUs {
			if s.Regions[0] == region && s.UsageType == usage && strings.Contains(s.Description, desc) {
				return decimal.RequireFromString(s.Price)
			}
		}
		t.Fatalf("no %s SKU %q in %s", usage, desc, region)
		return decimal.Decimal{}
	}
	checked := 0
	for _, in := range demo.Instances {
		if in.Provider != fleet.GCP {
			continue
		}
		typ, _ := cat.InstanceType(fleet.GCP, in.InstanceType)
		offer, ok := cat.Offer(fleet.GCP, in.Region, in.InstanceType)
		if !ok {
			t.Fatalf("no catalog offer of %s in %s", in.InstanceType, in.Region)
		}
		family := strings.ToUpper(strings.Split(in.InstanceType, "-")[0])
		for usage, want := range map[string]*pricing.Price{"OnDemand": offer.OnDemand, "Preemptible": offer.Spot} {
			if want == nil {
				continue
			}
			gpu := gpuSKUName(typ.GPUModel) + " running"
			got := rate(in.Region, usage, family+" Instance Core").Mul(decimal.NewFromFloat(typ.VCPUs)).
				Add(rate(in.Region, usage, family+" Instance Ram").Mul(decimal.NewFromFloat(typ.MemoryGiB))).
				Add(rate(in.Region, usage, gpu).Mul(decimal.NewFromFloat(typ.GPUCount))).Round(6)
			if !got.Equal(want.Hourly) {
				t.Errorf("%s %s in %s: the SKUs add up to %s, the catalog says %s", in.InstanceType, usage, in.Region, got, want.Hourly)
			}
			checked++
		}
	}
	if checked < 2 {
		t.Fatalf("checked %d prices", checked)
	}
}

// TestFurtherGPUModelOfAFamily: a2-ultragpu-1g (A100 80GB), after
// a2-highgpu-1g (A100) has set the A2 vCPU and RAM rates, gets a GPU rate of
// its own, so its SKUs add up to its catalog price; it had none before.
func TestFurtherGPUModelOfAFamily(t *testing.T) {
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	const region = "us-central1"
	f := &fleet.Fleet{Instances: []fleet.Instance{
		{ID: "a", Provider: fleet.GCP, Region: region, InstanceType: "a2-highgpu-1g"},
		{ID: "b", Provider: fleet.GCP, Region: region, InstanceType: "a2-ultragpu-1g"},
	}}
	opts := Options(f, cat)
	rate := func(desc string) decimal.Decimal {
		for _, s := range opts.SKUs {
			if s.Regions[0] == region && s.UsageType == "OnDemand" && strings.Contains(s.Description, desc) {
				return decimal.RequireFromString(s.Price)
			}
		}
		t.Fatalf("no SKU %q in %s", desc, region)
		return decimal.Decimal{}
	}
	typ, _ := cat.InstanceType(fleet.GCP, "a2-ultragpu-1g")
	offer, ok := cat.Offer(fleet.GCP, region, "a2-ultragpu-1g")
	if !ok || offer.OnDemand == nil {
		t.Skip("the catalog has no a2-ultragpu-1g on-demand price in " + region)
	}
	got := rate("A2 Instance Core").Mul(decimal.NewFromFloat(typ.VCPUs)).
		Add(rate("A2 Instance Ram").Mul(decimal.NewFromFloat(typ.MemoryGiB))).
		Add(rate(gpuSKUName(typ.GPUModel) + " running").Mul(decimal.NewFromFloat(typ.GPUCount))).Round(6)
	if got.Sub(offer.OnDemand.Hourly).Abs().GreaterThan(decimal.New(1, -6)) {
		t.Fatalf("a2-ultragpu-1g: the SKUs add up to %s, the catalog says %s", got, offer.OnDemand.Hourly)
	}
}

// sameAsHighGPU are the catalog's types whose price no per-resource rates
// can give beside another type's: a3-edgegpu-8g and its -nolssd twin come
// from SkyPilot (host + 8 × its H100 price), a3-highgpu-8g from the
// Billing Catalog's whole-machine price (Cyclenerd), and both have 208
// vCPUs, 1,872 GiB and 8 H100s, on the same A3 core, RAM and H100 SKUs
// (SkyPilot's own host prices of the two are equal), so where a region has
// both at different prices the rates give a3-highgpu-8g's to both.
var sameAsHighGPU = map[string]string{"a3-edgegpu-8g": "a3-highgpu-8g", "a3-edgegpu-8g-nolssd": "a3-highgpu-8g"}

// TestSKUsPriceEveryCatalogType: every GCP type that bundles a whole
// number of GPUs, in every region, priced from the SKUs as vCPUs × core +
// GiB × RAM + GPUs × GPU and rounded to 6 places as the adapter rounds,
// costs exactly what the catalog says, on demand and on spot: the rates are
// solved from all of a family's types, not its first. The one exception is
// sameAsHighGPU's, which price as their a3-highgpu twin.
func TestSKUsPriceEveryCatalogType(t *testing.T) {
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	opts := Options(&fleet.Fleet{}, cat)
	rates := map[string]decimal.Decimal{}
	for _, s := range opts.SKUs {
		rates[s.UsageType+"|"+s.Description] = decimal.RequireFromString(s.Price)
	}
	prefix := map[string]string{"OnDemand": "", "Preemptible": "Spot Preemptible "}
	checked, twins := 0, 0
	for _, o := range cat.Offers(pricing.Query{Provider: fleet.GCP}) {
		typ := o.Type
		family, _, _ := strings.Cut(typ.Name, "-")
		if !map[string]bool{"a2": true, "a3": true, "a4": true, "a4x": true, "g2": true, "g4": true}[family] || typ.GPUCount != math.Trunc(typ.GPUCount) {
			continue
		}
		for usage, want := range map[string]*pricing.Price{"OnDemand": o.OnDemand, "Preemptible": o.Spot} {
			if want == nil {
				continue
			}
			in := " running in " + o.Region
			F := strings.ToUpper(family)
			core, ok1 := rates[usage+"|"+prefix[usage]+F+" Instance Core"+in]
			ram, ok2 := rates[usage+"|"+prefix[usage]+F+" Instance Ram"+in]
			gpu, ok3 := rates[usage+"|"+prefix[usage]+gpuSKUName(typ.GPUModel)+in]
			if !ok1 || !ok2 || !ok3 {
				t.Errorf("%s %s in %s: no SKU for its core, RAM or GPU", typ.Name, usage, o.Region)
				continue
			}
			got := core.Mul(decimal.NewFromFloat(typ.VCPUs)).Add(ram.Mul(decimal.NewFromFloat(typ.MemoryGiB))).
				Add(gpu.Mul(decimal.NewFromFloat(typ.GPUCount))).Round(6)
			checked++
			if got.Equal(want.Hourly) {
				continue
			}
			if twin, ok := sameAsHighGPU[typ.Name]; ok {
				if tw, ok := cat.Offer(fleet.GCP, o.Region, twin); ok {
					tp := map[string]*pricing.Price{"OnDemand": tw.OnDemand, "Preemptible": tw.Spot}[usage]
					if tp != nil && got.Equal(tp.Hourly) {
						twins++
						continue
					}
				}
			}
			t.Errorf("%s %s in %s: the SKUs add up to %s, the catalog says %s", typ.Name, usage, o.Region, got, want.Hourly)
		}
	}
	t.Logf("%d prices checked, %d exact, %d priced as their a3-highgpu twin", checked, checked-twins, twins)
	if checked < 1000 {
		t.Fatalf("checked %d prices", checked)
	}
}
