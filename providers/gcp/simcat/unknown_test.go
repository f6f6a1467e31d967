package simcat

import (
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing/catalog"
)

// A machine type the catalog lacks is served with the fleet's figures
// (machineTypes.get) and, alone in its family and GPU model in a region,
// priced by SKUs that add up to its hourlyPrice.
func TestOptionsUnknownMachineTypes(t *testing.T) {
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	price := decimal.RequireFromString("12.5")
	f := &fleet.Fleet{Instances: []fleet.Instance{
		{ID: "z-1", Provider: fleet.GCP, Region: "us-central1", InstanceType: "z9-zgpu-2g", GPU: fleet.GPU{Model: "Z9", Count: 2, MemoryGiB: 96}, VCPUs: 24, MemoryGiB: 340, Lifecycle: fleet.OnDemand, HourlyPrice: &price},
		{ID: "z-2", Provider: fleet.GCP, Region: "us-central1", InstanceType: "z9-zgpu-4g", GPU: fleet.GPU{Model: "Z9", Count: 4}, VCPUs: 48, MemoryGiB: 680, Lifecycle: fleet.OnDemand},
	}}
	opts := Options(f, cat)
	found := 0
	for _, mt := range opts.Types {
		if mt.Name == "z9-zgpu-2g" {
			found++
			if mt.VCPUs != 24 || mt.MemoryMB != 340*1024 || mt.AcceleratorCount != 2 || mt.Accelerator == "" {
				t.Errorf("z9-zgpu-2g: %+v", mt)
			}
		}
	}
	if found != 1 {
		t.Errorf("z9-zgpu-2g served %d times", found)
	}
	rate := func(desc string) decimal.Decimal {
		for _, s := range opts.SKUs {
			if s.Regions[0] == "us-central1" && s.UsageType == "OnDemand" && strings.Contains(s.Description, desc) {
				return decimal.RequireFromString(s.Price)
			}
		}
		t.Fatalf("no on-demand SKU %q in us-central1", desc)
		return decimal.Decimal{}
	}
	got := rate("Z9 Instance Core").Mul(decimal.NewFromInt(24)).Add(rate("Z9 Instance Ram").Mul(decimal.NewFromInt(340))).
		Add(rate(gpuSKUName("Z9") + " running").Mul(decimal.NewFromInt(2))).Round(6)
	if !got.Equal(price) {
		t.Errorf("the SKUs add up to %s, the fleet says %s", got, price)
	}
}
