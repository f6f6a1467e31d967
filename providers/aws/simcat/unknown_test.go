package simcat

import (
	"testing"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// A type the catalog lacks is described from the fleet's figures and priced
// from its hourlyPrice, as DescribeInstanceTypes and the Price List would;
// without a price it has no price row.
func TestOptionsUnknownTypes(t *testing.T) {
	cat := embedded(t)
	price := decimal.RequireFromString("1.75")
	spot := decimal.RequireFromString("0.6")
	z9 := fleet.GPU{Model: "Z9", Count: 1, MemoryGiB: 48}
	f := &fleet.Fleet{Instances: []fleet.Instance{
		{ID: "i-1", Provider: fleet.AWS, Region: "us-east-1", Zone: "us-east-1c", InstanceType: "g9z.4xlarge", GPU: z9, VCPUs: 16, MemoryGiB: 64, Lifecycle: fleet.Spot, HourlyPrice: &spot},
		{ID: "i-2", Provider: fleet.AWS, Region: "us-east-1", InstanceType: "g9z.4xlarge", GPU: z9, VCPUs: 16, MemoryGiB: 64, Lifecycle: fleet.OnDemand, HourlyPrice: &price},
		{ID: "i-3", Provider: fleet.AWS, Region: "us-west-2", InstanceType: "g9z.4xlarge", GPU: z9, VCPUs: 16, MemoryGiB: 64, Lifecycle: fleet.OnDemand},
		{ID: "i-4", Provider: fleet.AWS, Region: "us-west-2", InstanceType: "p9x.48xlarge", GPU: fleet.GPU{Model: "Inferentia9", Count: 16, MemoryGiB: 96}, VCPUs: 192, MemoryGiB: 2048, Lifecycle: fleet.OnDemand, HourlyPrice: &price},
	}}
	opts := Options(f, cat)
	g9z := findType(t, opts.Types, "g9z.4xlarge")
	if g9z.GPUName != "Z9" || g9z.GPUCount != 1 || g9z.GPUMemoryMiB != 48*1024 || g9z.VCPUs != 16 || g9z.MemoryMiB != 64*1024 || g9z.Neuron {
		t.Errorf("g9z.4xlarge: %+v", g9z)
	}
	if p9 := findType(t, opts.Types, "p9x.48xlarge"); !p9.Neuron || p9.GPUManufacturer != "AWS" {
		t.Errorf("p9x.48xlarge: %+v, want a Neuron device", p9)
	}
	rows := map[string]int{}
	for i, r := range opts.Prices {
		rows[r.Region+"/"+r.InstanceType] = i
	}
	i, ok := rows["us-east-1/g9z.4xlarge"]
	if !ok {
		t.Fatalf("no price row for g9z.4xlarge in us-east-1: %+v", opts.Prices)
	}
	r := opts.Prices[i]
	if r.OnDemand != "1.75" || r.Spot["us-east-1c"] != "0.6" || r.SavingsPlan1y != "1.1375" || r.SavingsPlan3y != "0.7875" {
		t.Errorf("g9z.4xlarge us-east-1: %+v", r)
	}
	if _, ok := rows["us-west-2/g9z.4xlarge"]; ok {
		t.Error("a price row for g9z.4xlarge in us-west-2, where the fleet gives no price")
	}
	if _, ok := rows["us-west-2/p9x.48xlarge"]; !ok {
		t.Error("no price row for p9x.48xlarge in us-west-2")
	}
}
