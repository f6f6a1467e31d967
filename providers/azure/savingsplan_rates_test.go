package azure

import (
	"context"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/internal/purchasetest"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/recommend"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/providers"
	"github.com/gpufinops/gpufinops/providers/azure/sim"
)

// TestLiveSavingsPlanRatesThroughTheSimulator: a consumption row's
// savingsPlan prices, read through the SDK from the simulator, become the
// Azure savings plan rates the engine weighs against reservations. In
// eastus (no embedded commitment data), NC48ads has no reservation row and
// runs all month beside an NC24ads running half the day: the savings plan
// commits to the series' steady $11.04/h at 25 % off and is bought, at the
// live rate; the reservation of the small size would save nothing. Offline
// (the embedded catalog alone) nothing is bought and the plan says there is
// no savings-plan rate offline.
func TestLiveSavingsPlanRatesThroughTheSimulator(t *testing.T) {
	const small, big = "Standard_NC24ads_A100_v4", "Standard_NC48ads_A100_v4"
	rows := []sim.PriceRow{
		{Region: "eastus", Size: small, OnDemand: "5.52", Reservation1y: "30484.8", SavingsPlan1y: "4.14", SavingsPlan3y: "2.76"},
		{Region: "eastus", Size: big, OnDemand: "11.04", SavingsPlan1y: "8.28", SavingsPlan3y: "5.52"},
	}
	_, url := startPriceSim(t, rows, false)
	p := testProvider(t, url, providers.Options{})
	got, err := p.ReadPrices(context.Background(), providers.Scope{Provider: fleet.Azure, Account: subA, Region: "eastus"}, []string{small, big})
	if err != nil {
		t.Fatal(err)
	}
	base := testCatalog(t)
	cat := pricing.Overlay(base, got)
	r, ok := pricing.LookupCommitment(cat, pricing.CommitmentQuery{Provider: fleet.Azure, Region: "eastus", InstanceType: big, Kind: pricing.AzureSavingsPlan, Term: pricing.Term1y})
	if !ok || r.Hourly.String() != "8.28" || !r.Live || r.DiscountPercent != 25 || !strings.Contains(r.Source, "savings plan for compute, 1 Year") {
		t.Fatalf("savings plan rate %+v %v, want the live 8.28/h, 25 %% off", r, ok)
	}
	window := &fleet.TimeRange{Start: simNow.AddDate(0, 0, -7), End: simNow}
	vm := func(id, size string, schedule *fleet.Schedule) fleet.Instance {
		return fleet.Instance{ID: id, Provider: fleet.Azure, Account: subA, Region: "eastus", InstanceType: size, Lifecycle: fleet.OnDemand, State: fleet.Running,
			Usage: fleet.Usage{Schedule: schedule},
			Utilization: &fleet.Utilization{Window: window, GPU: &fleet.Stats{Avg: 80, P95: 95, Max: 100}, GPUMemory: &fleet.Stats{Avg: 60, P95: 70, Max: 80},
				CPU: &fleet.Stats{Avg: 40, P95: 60, Max: 80}, Memory: &fleet.Stats{Avg: 40, P95: 60, Max: 80}},
			Workload: &fleet.Workload{Type: fleet.Inference}}
	}
	half := &fleet.Schedule{Timezone: "UTC", Windows: []fleet.Window{{Days: []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}, Start: "08:00", End: "20:00"}}}
	f := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind, Instances: []fleet.Instance{vm("big", big, nil), vm("small", small, half)}}
	if err := pricing.Complete(f, cat); err != nil {
		t.Fatal(err)
	}
	pol := recommend.DefaultPolicy().WithPurchases(purchasetest.Purchases())
	plan := recommend.Run(f, cat, pol)
	saved := decimal.Zero
	for _, rec := range plan.Recommendations {
		if rec.Kind != recommend.KindCommitment {
			continue
		}
		pu := rec.Evidence.Purchase
		if pu.Kind != string(pricing.AzureSavingsPlan) || !pu.Live || !strings.Contains(pu.RateSource, "savings plan for compute") {
			t.Errorf("%s buys %+v", rec.ResourceID, pu)
		}
		saved = saved.Add(rec.MonthlySavings)
	}
	if want := decimal.RequireFromString("2014.8"); !saved.Equal(want) {
		t.Errorf("savings plan advice saves %s, want 11.04 × 0.25 × 730 = %s: %+v", saved, want, plan.Commitments.Groups)
	}
	offline := recommend.Run(f, base, pol)
	for _, rec := range offline.Recommendations {
		if rec.Kind == recommend.KindCommitment && rec.Evidence.Purchase.Kind == string(pricing.AzureSavingsPlan) {
			t.Errorf("offline, %s buys a savings plan at a rate nobody read: %+v", rec.ResourceID, rec.Evidence.Purchase)
		}
	}
	if !strings.Contains(strings.Join(offline.Commitments.Assumptions, " "), "no Azure savings-plan rate offline") {
		t.Errorf("offline assumptions %q", offline.Commitments.Assumptions)
	}
}
