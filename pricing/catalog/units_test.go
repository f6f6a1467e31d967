package catalog

import (
	"math"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
)

// TestUnitPricesRecomposeMachinePrices (property): in every region, under
// every purchase option, every GCP machine of whole GPUs whose vCPU, GiB
// and GPU rates the embedded catalog derives costs, as vCPUs × core + GiB ×
// RAM + GPUs × GPU, its catalog price within a cent (to the 6th place in
// fact); each derived price says where it comes from. The G2 and A2
// families of us-central1 and europe-west4 must be among them.
func TestUnitPricesRecomposeMachinePrices(t *testing.T) {
	c := embeddedForTest(t)
	checked := map[pricing.Option]int{}
	must := map[string]bool{"us-central1/g2-standard-4": false, "us-central1/a2-highgpu-1g": false, "europe-west4/g2-standard-48": false}
	worst := decimal.Zero
	for _, o := range c.Offers(pricing.Query{Provider: fleet.GCP}) {
		ty := o.Type
		if ty.GPUCount < 1 || ty.GPUCount != math.Trunc(ty.GPUCount) {
			continue
		}
		family, _, _ := strings.Cut(ty.Name, "-")
		for _, opt := range unitOptions {
			want, ok := machinePrice(c, o, opt)
			if !ok {
				continue
			}
			sum, all := decimal.Zero, true
			for _, r := range []struct {
				resource, name string
				units          float64
			}{{pricing.ResourceVCPU, family, ty.VCPUs}, {pricing.ResourceMemory, family, ty.MemoryGiB}, {pricing.ResourceGPU, ty.GPUModel, ty.GPUCount}} {
				p, ok := pricing.LookupResource(c, pricing.ResourceQuery{Provider: fleet.GCP, Region: strings.ToUpper(o.Region), Resource: r.resource, Name: r.name, Option: opt})
				if !ok {
					all = false
					break
				}
				if !p.Hourly.IsPositive() || p.Resource != r.resource || p.Option != opt || p.AsOf == "" || !strings.HasPrefix(p.Source, "derived from ") || !strings.Contains(p.Source, o.Region) {
					t.Fatalf("%s %s %s in %s: price %+v", r.resource, r.name, opt, o.Region, p)
				}
				if _, commit := pricing.CommitmentTerm(opt); commit != (p.Commitment == pricing.ResourceCUD) {
					t.Fatalf("%s %s %s: commitment %q", r.resource, r.name, opt, p.Commitment)
				}
				sum = sum.Add(p.Hourly.Mul(decimal.NewFromFloat(r.units)))
			}
			if !all {
				continue
			}
			miss := sum.Sub(want.Hourly).Abs()
			if miss.GreaterThan(decimal.New(1, -2)) {
				t.Errorf("%s %s in %s: the unit prices add up to %s, the catalog says %s", ty.Name, opt, o.Region, sum, want.Hourly)
			}
			worst = decimal.Max(worst, miss)
			checked[opt]++
			if _, ok := must[o.Region+"/"+ty.Name]; ok && opt == pricing.OnDemand {
				must[o.Region+"/"+ty.Name] = true
			}
		}
	}
	for k, ok := range must {
		if !ok {
			t.Errorf("%s: no derived unit prices", k)
		}
	}
	for _, opt := range unitOptions {
		if checked[opt] < 20 {
			t.Errorf("%s: %d machine prices recomposed", opt, checked[opt])
		}
	}
	t.Logf("recomposed %v machine prices, worst miss $%s/h", checked, worst)
}

// TestUnitRatesInconsistent: where no rates give a family's prices (two
// machines of one shape at two prices, from equal sources) its rates are
// not Exact and the catalog would give none; a consistent family in the
// same region keeps exact rates, and g2's vCPU and GiB rates, which its
// prices fix only in sum (always 1 : 4), say so.
func TestUnitRatesInconsistent(t *testing.T) {
	offer := func(name, model string, gpus, vcpus, mem float64, price string) pricing.Offer {
		return pricing.Offer{Region: "r1", Type: pricing.InstanceType{Provider: fleet.GCP, Name: name, GPUModel: model, GPUCount: gpus, VCPUs: vcpus, MemoryGiB: mem},
			OnDemand: &pricing.Price{Hourly: decimal.RequireFromString(price), Source: "test", AsOf: "2026-01-02"}}
	}
	offers := []pricing.Offer{
		offer("x9-a-1", "Z1", 1, 8, 64, "2.000000"), offer("x9-b-1", "Z1", 1, 8, 64, "2.500000"), offer("x9-c-2", "Z1", 2, 16, 128, "4.000000"),
		offer("g2-standard-4", "L4", 1, 4, 16, "0.706832"), offer("g2-standard-8", "L4", 1, 8, 32, "0.853624"), offer("g2-standard-24", "L4", 2, 24, 96, "2.000833"),
	}
	got := map[string]UnitRate{}
	for _, u := range GCPUnitRates(nil, offers) {
		got[u.Resource+"/"+u.Name] = u
	}
	for _, k := range []string{"vcpu/x9", "memory/x9", "gpu/Z1"} {
		if u, ok := got[k]; !ok || u.Exact {
			t.Errorf("%s: %+v, want an inexact rate", k, u)
		}
	}
	for _, k := range []string{"vcpu/g2", "memory/g2", "gpu/L4"} {
		u, ok := got[k]
		if !ok || !u.Exact || u.Types != 3 || u.AsOf != "2026-01-02" || u.Source != "test" {
			t.Errorf("%s: %+v, want an exact rate from 3 types", k, u)
		}
		if u.Split != (k != "gpu/L4") {
			t.Errorf("%s: split %v", k, u.Split)
		}
		if p := u.Price(); !strings.Contains(p.Source, "derived from test by solving") {
			t.Errorf("%s: source %q", k, p.Source)
		}
	}
	// The L4's rate is fixed: g2-standard-8 − g2-standard-4 is 4 vCPUs +
	// 16 GiB = 0.146792, so the L4 is 0.706832 − 0.146792.
	if g := got["gpu/L4"].Hourly; !g.Round(6).Equal(decimal.RequireFromString("0.56004")) {
		t.Errorf("L4 rate %s, want 0.560040", g)
	}
}

// TestResourcePriceOtherClouds: the derived prices are GCP's alone, and an
// unknown family or option has none.
func TestResourcePriceOtherClouds(t *testing.T) {
	c := embeddedForTest(t)
	for _, q := range []pricing.ResourceQuery{
		{Provider: fleet.AWS, Region: "us-central1", Resource: pricing.ResourceGPU, Name: "L4", Option: pricing.OnDemand},
		{Provider: fleet.GCP, Region: "us-central1", Resource: pricing.ResourceVCPU, Name: "zz9", Option: pricing.OnDemand},
		{Provider: fleet.GCP, Region: "us-central1", Resource: pricing.ResourceGPU, Name: "L4", Option: "weekly"},
		{Provider: fleet.GCP, Region: "nowhere-1", Resource: pricing.ResourceGPU, Name: "L4", Option: pricing.OnDemand},
	} {
		if p, ok := pricing.LookupResource(c, q); ok {
			t.Errorf("%+v: %+v, want none", q, p)
		}
	}
	if _, ok := pricing.LookupResource(c, pricing.ResourceQuery{Provider: fleet.GCP, Region: "us-central1", Resource: pricing.ResourceGPU, Name: "l4", Option: pricing.OnDemand}); !ok {
		t.Error("no L4 price in us-central1 (model matched without case)")
	}
}
