package simcat

import (
	"testing"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing/catalog"
)

// A size the catalog lacks is served with the fleet's GPU count, vCPUs and
// memory (Resource SKUs) and priced from its hourlyPrice (Retail Prices);
// without a price it has no row.
func TestOptionsUnknownSizes(t *testing.T) {
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	price, spot := decimal.RequireFromString("6.5"), decimal.RequireFromString("2.1")
	f := &fleet.Fleet{Instances: []fleet.Instance{
		{ID: "a", Provider: fleet.Azure, Region: "westeurope", InstanceType: "Standard_NV9zz_v9", GPU: fleet.GPU{Model: "Z9", Count: 2}, VCPUs: 36, MemoryGiB: 440, Lifecycle: fleet.OnDemand, HourlyPrice: &price},
		{ID: "b", Provider: fleet.Azure, Region: "westeurope", InstanceType: "Standard_NV9zz_v9", GPU: fleet.GPU{Model: "Z9", Count: 2}, VCPUs: 36, MemoryGiB: 440, Lifecycle: fleet.Spot, HourlyPrice: &spot},
		{ID: "c", Provider: fleet.Azure, Region: "eastus", InstanceType: "Standard_NV9zz_v9", GPU: fleet.GPU{Model: "Z9", Count: 2}, VCPUs: 36, MemoryGiB: 440, Lifecycle: fleet.OnDemand},
	}}
	o := Options(f, cat)
	if len(o.Sizes) != 1 || o.Sizes[0].GPUs != 2 || o.Sizes[0].VCPUs != 36 || o.Sizes[0].Mem != 440 {
		t.Errorf("sizes %+v", o.Sizes)
	}
	if len(o.Prices) != 1 || o.Prices[0].Region != "westeurope" || o.Prices[0].OnDemand != "6.5" || o.Prices[0].Spot != "2.1" {
		t.Errorf("prices %+v, want one westeurope row at 6.5 and spot 2.1", o.Prices)
	}
}
