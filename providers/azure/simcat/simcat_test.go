package simcat

import (
	"testing"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
	"github.com/gpufinops/gpufinops/pricing/pricingtest"
	"github.com/gpufinops/gpufinops/providers/simkit"
)

// TestOptionsFromCatalog: sizes and prices are the catalog's, and a
// reservation is listed as the whole term's price.
func TestOptionsFromCatalog(t *testing.T) {
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	f := &fleet.Fleet{Instances: []fleet.Instance{
		{ID: "a", Provider: fleet.Azure, Region: "eastus", InstanceType: "Standard_NC24ads_A100_v4"},
		{ID: "b", Provider: fleet.Azure, Region: "eastus", InstanceType: "Standard_NC24ads_A100_v4"},
		{ID: "c", Provider: fleet.AWS, Region: "us-east-1", InstanceType: "g5.xlarge"},
	}}
	o := Options(f, cat)
	if len(o.Sizes) != 1 || o.Sizes[0].GPUs != 1 || o.Sizes[0].VCPUs != 24 {
		t.Errorf("sizes %+v", o.Sizes)
	}
	if len(o.Prices) != 1 {
		t.Fatalf("prices %+v", o.Prices)
	}
	off, _ := cat.Offer(fleet.Azure, "eastus", "Standard_NC24ads_A100_v4")
	if o.Prices[0].OnDemand != off.OnDemand.Hourly.String() {
		t.Errorf("on-demand %s, catalog %s", o.Prices[0].OnDemand, off.OnDemand.Hourly)
	}
	if r, ok := pricing.LookupCommitment(cat, pricing.CommitmentQuery{Provider: fleet.Azure, Region: "eastus", InstanceType: "Standard_NC24ads_A100_v4", Kind: pricing.Reservation, Term: pricing.Term1y}); ok {
		total, _ := decimal.NewFromString(o.Prices[0].Reservation1y)
		if !total.Div(decimal.NewFromInt(8760)).Equal(r.Hourly) {
			t.Errorf("1-year reservation %s for an hourly rate of %s", total, r.Hourly)
		}
	}
}

// TestRegistered: cmd/cloudsim finds the Azure simulator.
func TestRegistered(t *testing.T) {
	for _, s := range simkit.Registered() {
		if s.Name == "azure" && s.Provider == fleet.Azure && s.EndpointEnv != "" {
			return
		}
	}
	t.Error("the Azure simulator is not registered")
}

// An offer with a spot price and no on-demand price gets its Spot row only;
// an offer with neither, or none at all, gets no row.
func TestSpotOnlyOffer(t *testing.T) {
	c := &pricingtest.Catalog{}
	nc := pricing.InstanceType{Provider: fleet.Azure, Name: "Standard_NC24ads_A100_v4", GPUModel: "A100-80GB", GPUCount: 1, GPUMemoryGiB: 80, VCPUs: 24, MemoryGiB: 220}
	c.AddOffer(nc, "westeurope", "", "1.1")
	row, ok := priceRow(c, "westeurope", "Standard_NC24ads_A100_v4")
	if !ok || row.OnDemand != "" || row.Spot != "1.1" {
		t.Fatalf("spot-only offer: %+v, %v", row, ok)
	}
	if _, ok := priceRow(c, "eastus", "Standard_NC24ads_A100_v4"); ok {
		t.Fatal("a row for an offer the catalog does not have")
	}
}
