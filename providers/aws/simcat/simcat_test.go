package simcat

import (
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
	"github.com/gpufinops/gpufinops/pricing/pricingtest"
	"github.com/gpufinops/gpufinops/providers/aws/sim"
	"github.com/gpufinops/gpufinops/providers/file"
)

func embedded(t *testing.T) pricing.Catalog {
	t.Helper()
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

func demo(t *testing.T, cat pricing.Catalog) *fleet.Fleet {
	t.Helper()
	f, err := file.Demo()
	if err != nil {
		t.Fatal(err)
	}
	if err := pricing.Complete(f, cat); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestBuildOptionsDemo(t *testing.T) {
	cat := embedded(t)
	f := demo(t, cat)
	opts := Options(f, cat)

	want := map[string]bool{}
	regions := map[[2]string]bool{}
	managed := 0
	for _, in := range f.Instances {
		if in.Provider == fleet.AWS && in.IsManaged() {
			managed++
		}
		if in.Provider == fleet.AWS && !in.IsManaged() {
			want[in.InstanceType] = true
			regions[[2]string{in.Region, in.InstanceType}] = true
		}
	}
	if len(opts.Types) != len(want) {
		t.Errorf("%d types, want %d (%v)", len(opts.Types), len(want), want)
	}
	for i, ty := range opts.Types {
		if i > 0 && opts.Types[i-1].Name >= ty.Name {
			t.Errorf("types not sorted: %s before %s", opts.Types[i-1].Name, ty.Name)
		}
		ct, ok := cat.InstanceType(fleet.AWS, ty.Name)
		if !ok || !want[ty.Name] {
			t.Errorf("type %s is not one of the fleet's catalog types", ty.Name)
			continue
		}
		if ty.GPUCount != ct.GPUCount || ty.GPUMemoryMiB != mib(ct.GPUMemoryGiB) || float64(ty.VCPUs) != ct.VCPUs || ty.MemoryMiB != mib(ct.MemoryGiB) {
			t.Errorf("%s: %+v does not match the catalog's %+v", ty.Name, ty, ct)
		}
		if ty.GPUName == "" || ty.GPUManufacturer == "" {
			t.Errorf("%s: GPU name or maker missing: %+v", ty.Name, ty)
		}
	}
	if managed == 0 || len(opts.Types) != len(want) {
		t.Errorf("%d EC2 types, want the %d of the demo's EC2 instances (and none of its %d SageMaker items)", len(opts.Types), len(want), managed)
	}
	p4d := findType(t, opts.Types, "p4d.24xlarge")
	if p4d.GPUName != "A100" || p4d.GPUManufacturer != "NVIDIA" || p4d.GPUCount != 8 || p4d.GPUMemoryMiB != 40960 || p4d.Neuron {
		t.Errorf("p4d.24xlarge: %+v", p4d)
	}

	if len(opts.Prices) != len(regions) {
		t.Errorf("%d price rows, want %d", len(opts.Prices), len(regions))
	}
	for _, row := range opts.Prices {
		o, ok := cat.Offer(fleet.AWS, row.Region, row.InstanceType)
		if !ok || !regions[[2]string{row.Region, row.InstanceType}] {
			t.Errorf("price row %s %s is not one of the fleet's offers", row.Region, row.InstanceType)
			continue
		}
		od := decimal.RequireFromString(row.OnDemand)
		if !od.Equal(o.OnDemand.Hourly) {
			t.Errorf("%s %s on-demand %s, catalog %s", row.Region, row.InstanceType, od, o.OnDemand.Hourly)
		}
		// The catalog's Compute Savings Plan rate (its offline stand-in),
		// scaled exactly to the catalog's on-demand price where the rate
		// states another.
		for _, tc := range []struct{ term, got string }{{"1y", row.SavingsPlan1y}, {"3y", row.SavingsPlan3y}} {
			r, ok := pricing.LookupCommitment(cat, pricing.CommitmentQuery{Provider: fleet.AWS, Region: row.Region, InstanceType: row.InstanceType, Kind: pricing.ComputeSavingsPlan, Term: tc.term, Payment: pricing.PayNoUpfront})
			if !ok {
				t.Errorf("%s %s: no catalog rate", row.InstanceType, tc.term)
				continue
			}
			want := r.Hourly
			if !r.OnDemandHourly.Equal(od) {
				want = od.Mul(r.Hourly).DivRound(r.OnDemandHourly, 6)
			}
			if sp := decimal.RequireFromString(tc.got); !sp.Equal(want) || !sp.LessThan(od) {
				t.Errorf("%s %s rate %s for on-demand %s, want %s", row.InstanceType, tc.term, sp, od, want)
			}
		}
		if o.Spot != nil {
			if len(row.Spot) != 1 {
				t.Errorf("%s spot %v, want one zone", row.InstanceType, row.Spot)
			}
			for zone, price := range row.Spot {
				if !strings.HasPrefix(zone, row.Region) || len(zone) != len(row.Region)+1 {
					t.Errorf("%s spot zone %q is not a zone of %s", row.InstanceType, zone, row.Region)
				}
				if !decimal.RequireFromString(price).Equal(o.Spot.Hourly) {
					t.Errorf("%s spot %s, catalog %s", row.InstanceType, price, o.Spot.Hourly)
				}
			}
		}
	}
}

func findType(t *testing.T, types []sim.TypeInfo, name string) sim.TypeInfo {
	t.Helper()
	for _, ty := range types {
		if ty.Name == name {
			return ty
		}
	}
	t.Fatalf("no type %s", name)
	return sim.TypeInfo{}
}

// The simulator's Savings Plans discounts are fractions, 3 years deeper than 1.
// (The policy no longer has default discounts: rates come from the catalog.)
func TestSavingsPlanDiscounts(t *testing.T) {
	d1, d3 := SavingsPlanDiscount1y.InexactFloat64(), SavingsPlanDiscount3y.InexactFloat64()
	if !(d1 > 0 && d1 < d3 && d3 < 1) {
		t.Errorf("discounts 1y %v, 3y %v", d1, d3)
	}
}

func TestTypeInfoAcrossMakers(t *testing.T) {
	cat := embedded(t)
	for _, tc := range []struct {
		typ, name, maker string
		neuron           bool
		memMiB           int
	}{
		{"p4de.24xlarge", "A100", "NVIDIA", false, 81920},
		{"p3dn.24xlarge", "V100", "NVIDIA", false, 32768},
		{"g4ad.16xlarge", "Radeon Pro V520", "AMD", false, 8192},
		{"inf2.24xlarge", "Inferentia2", "AWS", true, 32768},
		{"trn1.32xlarge", "Trainium", "AWS", true, 32768},
		{"dl1.24xlarge", "Gaudi HL-205", "Habana", false, 32768},
	} {
		got := typeInfo(fleet.Instance{Provider: fleet.AWS, InstanceType: tc.typ}, cat)
		if got.GPUName != tc.name || got.GPUManufacturer != tc.maker || got.Neuron != tc.neuron || got.GPUMemoryMiB != tc.memMiB || got.GPUCount == 0 {
			t.Errorf("%s: %+v, want %s by %s (neuron %v, %d MiB)", tc.typ, got, tc.name, tc.maker, tc.neuron, tc.memMiB)
		}
	}
	// A type the catalog does not know takes the fleet's own description.
	got := typeInfo(fleet.Instance{Provider: fleet.AWS, InstanceType: "p9.fake", GPU: fleet.GPU{Model: "H100", Count: 4, MemoryGiB: 80}, VCPUs: 64, MemoryGiB: 512}, cat)
	if got.GPUName != "H100" || got.GPUManufacturer != "NVIDIA" || got.GPUCount != 4 || got.GPUMemoryMiB != 81920 || got.VCPUs != 64 || got.MemoryMiB != 524288 {
		t.Errorf("self-described type: %+v", got)
	}
	if _, ok := priceRow("us-east-1", "p9.fake", cat); ok {
		t.Error("a type the catalog does not know got a price row")
	}
}

func TestZoneName(t *testing.T) {
	for zone, want := range map[string]string{
		"us-east-1c":    "us-east-1c",
		"use1-az2":      "us-east-1b",
		"apne1-az4":     "ap-northeast-1d",
		"use1-atl2-az1": "us-east-1a",
		"":              "us-east-1a",
	} {
		region := "us-east-1"
		if strings.HasPrefix(zone, "apne1") {
			region = "ap-northeast-1"
		}
		if got := zoneName(region, zone); got != want {
			t.Errorf("zoneName(%s, %q) = %q, want %q", region, zone, got, want)
		}
	}
}

// An offer with a spot price and no on-demand list price is served its spot
// history (AWS has one for such types), without Price List or Savings Plans
// rows; an offer with neither gets no row.
func TestSpotOnlyOffer(t *testing.T) {
	c := &pricingtest.Catalog{}
	it := pricing.InstanceType{Provider: fleet.AWS, Name: "p5e.48xlarge", GPUModel: "H200", GPUCount: 8, GPUMemoryGiB: 141, VCPUs: 192, MemoryGiB: 2048}
	c.AddOffer(it, "us-east-2", "", "18.7359")
	row, ok := priceRow("us-east-2", "p5e.48xlarge", c)
	if !ok || row.OnDemand != "" || row.SavingsPlan1y != "" || row.Spot["us-east-2a"] != "18.7359" {
		t.Fatalf("spot-only offer: %+v, %v", row, ok)
	}
	if _, ok := priceRow("us-west-2", "p5e.48xlarge", c); ok {
		t.Fatal("a row for an offer the catalog does not have")
	}
}
