package recommend

import (
	"testing"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/internal/purchasetest"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
)

// An instance the bill prices costs its effective rate and says so; one it
// does not is at list; one the bill shows committed gets no new commitment.
func TestBilledRates(t *testing.T) {
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	steady := withUtil(agg(busy, memHigh, hostMid, hostMid))
	inference := withWorkload(fleet.Inference, nil)
	f := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind, Instances: []fleet.Instance{
		inst("billed", "p5.48xlarge", steady, inference),
		inst("listed", "p5.48xlarge", steady, inference),
		inst("covered", "p5.48xlarge", steady, inference),
	}}
	if err := pricing.Complete(f, cat); err != nil {
		t.Fatal(err)
	}
	rate := func(h string) pricing.Price {
		return pricing.Price{Provider: fleet.AWS, Region: "us-east-1", InstanceType: "p5.48xlarge", Option: pricing.Option(fleet.OnDemand),
			Hourly: decimal.RequireFromString(h), Currency: pricing.Currency, Unit: pricing.UnitHour, Source: "FOCUS export", AsOf: "2025-01-31"}
	}
	pol := DefaultPolicy().WithPurchases(purchasetest.Purchases())
	plain := Run(f, cat, pol)
	p := RunWith(f, cat, pol, Options{Billed: map[string]BilledRate{
		"billed":  {Price: rate("40")},
		"covered": {Price: rate("35"), CommittedShare: 0.9},
	}})
	checkSums(t, p)
	by := map[string]InstanceCost{}
	for _, ic := range p.Instances {
		by[ic.ResourceID] = ic
	}
	want := map[string]string{"billed": BasisBill, "listed": BasisList, "covered": BasisBill}
	for id, basis := range want {
		if by[id].PriceBasis != basis {
			t.Errorf("%s: basis %q, want %q", id, by[id].PriceBasis, basis)
		}
	}
	if h := by["billed"].MonthlyHours; !by["billed"].MonthlyCost.Equal(decimal.NewFromInt(40).Mul(decimal.NewFromFloat(h)).Round(2)) {
		t.Errorf("billed cost %s over %v h", by["billed"].MonthlyCost, h)
	}
	if !by["listed"].MonthlyCost.Equal(plain.Instances[1].MonthlyCost) || plain.Instances[1].PriceBasis != "" {
		t.Errorf("listed %s vs plain %s (%q)", by["listed"].MonthlyCost, plain.Instances[1].MonthlyCost, plain.Instances[1].PriceBasis)
	}
	for _, r := range p.Recommendations {
		if r.Kind == KindCommitment && r.ResourceID == "covered" {
			t.Errorf("commitment advised on an instance the bill shows 90%% committed: %s", r.Action)
		}
	}
}

// Without the bill's coverage the same instance does get a commitment: the
// test above is not vacuous.
func TestBilledCoverageMatters(t *testing.T) {
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	f := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind, Instances: []fleet.Instance{
		inst("covered", "p5.48xlarge", withUtil(agg(busy, memHigh, hostMid, hostMid)), withWorkload(fleet.Inference, nil)),
	}}
	if err := pricing.Complete(f, cat); err != nil {
		t.Fatal(err)
	}
	od, _ := cat.Offer(fleet.AWS, "us-east-1", "p5.48xlarge")
	pol := DefaultPolicy().WithPurchases(purchasetest.Purchases())
	for share, want := range map[float64]bool{0: true, 0.4: true, 0.5: false} {
		p := RunWith(f, cat, pol, Options{Billed: map[string]BilledRate{"covered": {Price: *od.OnDemand, CommittedShare: share}}})
		got := false
		for _, r := range p.Recommendations {
			got = got || r.Kind == KindCommitment
		}
		if got != want {
			t.Errorf("committed share %v: commitment advised %v, want %v", share, got, want)
		}
	}
}
