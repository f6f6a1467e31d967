package recommend

import (
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/internal/purchasetest"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
)

// g2Live are live GCP prices in europe-west4 as the adapter reads them from
// the Billing Catalog: per-unit G2 vCPU, GiB and L4 SKUs (on demand, 1 and
// 3 years), and the machine types' on-demand sums.
func g2Live() []pricing.Price {
	mk := func(name, resource string, o pricing.Option, v string) pricing.Price {
		p := pricing.Price{Provider: fleet.GCP, Region: "europe-west4", InstanceType: name, Resource: resource, Option: o, Hourly: decimal.RequireFromString(v),
			Currency: pricing.Currency, Unit: pricing.UnitHour, Source: "Cloud Billing Catalog (test SKUs)", AsOf: "2026-11-30"}
		if _, ok := pricing.CommitmentTerm(o); ok {
			p.Commitment = pricing.ResourceCUD
		}
		return p
	}
	return []pricing.Price{
		mk("g2", pricing.ResourceVCPU, pricing.OnDemand, "0.03"), mk("g2", pricing.ResourceVCPU, pricing.SavingsPlan1y, "0.02"), mk("g2", pricing.ResourceVCPU, pricing.SavingsPlan3y, "0.014"),
		mk("g2", pricing.ResourceMemory, pricing.OnDemand, "0.004"), mk("g2", pricing.ResourceMemory, pricing.SavingsPlan1y, "0.0025"), mk("g2", pricing.ResourceMemory, pricing.SavingsPlan3y, "0.0018"),
		mk("L4", pricing.ResourceGPU, pricing.OnDemand, "0.6"), mk("L4", pricing.ResourceGPU, pricing.SavingsPlan1y, "0.4"), mk("L4", pricing.ResourceGPU, pricing.SavingsPlan3y, "0.27"),
		// 4 × 0.03 + 16 × 0.004 + 0.6, and 48 × 0.03 + 192 × 0.004 + 4 × 0.6.
		mk("g2-standard-4", "", pricing.OnDemand, "0.784"), mk("g2-standard-48", "", pricing.OnDemand, "4.608"),
	}
}

// TestResourceCUDSizedPerResource: a g2-standard-48 (48 vCPUs, 192 GiB, 4
// L4) and a g2-standard-4 (4, 16, 1) running all month in europe-west4. A
// resource-based CUD buys vCPUs, memory and GPUs, so the advice buys what
// they use, 52 vCPUs, 208 GiB and 5 L4s, at the live unit rates: 52 × 0.02
// + 208 × 0.0025 + 5 × 0.4 = $3.56/h, for $5.392/h of on-demand usage,
// saving (5.392 − 3.56) × 730 = $1,337.36 a month. Sized in machine
// counts it bought 7 × g2-standard-4: 7 L4s where 5 are used.
func TestResourceCUDSizedPerResource(t *testing.T) {
	base, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	cat := pricing.Overlay(base, g2Live())
	var ins []fleet.Instance
	for _, it := range []struct{ id, typ string }{{"big", "g2-standard-48"}, {"small", "g2-standard-4"}} {
		ins = append(ins, inst(it.id, it.typ, withUtil(agg(busy, memHigh, hostMid, hostMid)), func(in *fleet.Instance) {
			in.Provider, in.Region, in.Zone = fleet.GCP, "europe-west4", "europe-west4-a"
		}))
	}
	f := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind, Instances: ins}
	if err := pricing.Complete(f, cat); err != nil {
		t.Fatal(err)
	}
	p := Run(f, cat, DefaultPolicy().WithPurchases(purchasetest.Purchases()))
	checkSums(t, p)
	saved := decimal.Zero
	n := 0
	for _, r := range p.Recommendations {
		if r.Kind != KindCommitment {
			continue
		}
		n++
		saved = saved.Add(r.MonthlySavings)
		pu := r.Evidence.Purchase
		if pu.VCPUs != 52 || pu.MemoryGiB != 208 || pu.GPUs != 5 || pu.GPUModel != "L4" || pu.Term != "1y" {
			t.Errorf("%s buys %v vCPUs, %v GiB, %v × %s (%s); want 52, 208, 5 × L4, 1y", r.ResourceID, pu.VCPUs, pu.MemoryGiB, pu.GPUs, pu.GPUModel, pu.Term)
		}
		if !pu.CommitmentHourly.Equal(decimal.RequireFromString("3.56")) || !pu.CoversOnDemandHourly.Equal(decimal.RequireFromString("5.392")) {
			t.Errorf("%s: pays %s/h for %s/h; want 3.56 for 5.392", r.ResourceID, pu.CommitmentHourly, pu.CoversOnDemandHourly)
		}
		for _, want := range []string{"--plan=12-month", "--type=graphics-optimized", "--resources=vcpu=52,memory=208GB", "--resources-accelerator=type=nvidia-l4,count=5", "52 × $0.02 + 208 × $0.0025 + 5 × $0.4"} {
			if !strings.Contains(r.Action, want) {
				t.Errorf("%s: action %q lacks %q", r.ResourceID, r.Action, want)
			}
		}
	}
	if want := decimal.RequireFromString("1337.36"); n != 2 || !saved.Equal(want) {
		t.Errorf("%d commitment recommendations saving %s a month; want 2 saving %s", n, saved, want)
	}
}

// TestResourceCUDOfflineByResource: the same two G2 machines analysed
// offline, where the catalog derives the G2 vCPU, GiB and L4 unit rates from
// its machine prices (catalog.GCPUnitRates), are bought per resource as a
// scan buys them: 52 vCPUs, 208 GiB and 5 L4s, at what the two machines'
// 1-year CUD rates add up to ($2.649749 + $0.468037 = $3.117786/h, to the
// rates' 9 places). In machine counts of the smallest type they bought 7 ×
// g2-standard-4 (7 L4s) and claimed $1,221.00 a month.
func TestResourceCUDOfflineByResource(t *testing.T) {
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	var ins []fleet.Instance
	for _, it := range []struct{ id, typ string }{{"big", "g2-standard-48"}, {"small", "g2-standard-4"}} {
		ins = append(ins, inst(it.id, it.typ, withUtil(agg(busy, memHigh, hostMid, hostMid)), func(in *fleet.Instance) {
			in.Provider, in.Region, in.Zone = fleet.GCP, "europe-west4", "europe-west4-a"
		}))
	}
	f := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind, Instances: ins}
	if err := pricing.Complete(f, cat); err != nil {
		t.Fatal(err)
	}
	p := Run(f, cat, DefaultPolicy().WithPurchases(purchasetest.Purchases()))
	checkSums(t, p)
	n := 0
	for _, r := range p.Recommendations {
		if r.Kind != KindCommitment {
			continue
		}
		n++
		pu := r.Evidence.Purchase
		if pu.VCPUs != 52 || pu.MemoryGiB != 208 || pu.GPUs != 5 || pu.GPUModel != "L4" || pu.Live {
			t.Errorf("%s buys %v vCPUs, %v GiB, %v × %s (live %v); want 52, 208, 5 × L4 from the catalog", r.ResourceID, pu.VCPUs, pu.MemoryGiB, pu.GPUs, pu.GPUModel, pu.Live)
		}
		if pu.CommitmentHourly.Sub(decimal.RequireFromString("3.117786")).Abs().GreaterThan(decimal.New(1, -6)) {
			t.Errorf("%s pays %s/h; want 2.649749 + 0.468037", r.ResourceID, pu.CommitmentHourly)
		}
		if !strings.Contains(pu.RateSource, "derived from") {
			t.Errorf("%s: rate source %q does not say it is derived", r.ResourceID, pu.RateSource)
		}
	}
	if n != 2 {
		t.Errorf("%d commitment recommendations, want 2", n)
	}
}
