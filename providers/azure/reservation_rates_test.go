package azure

import (
	"context"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/providers"
	"github.com/gpufinops/gpufinops/providers/azure/sim"
)

// TestLiveReservationRatesAnswerCommitmentQueries: the Retail Prices API's
// Reservation rows, read through the SDK from the simulator, become the
// Reserved VM Instance rates of the catalog the engine asks, in a region
// the embedded reservation data (9 APAC regions) does not cover: the term
// total ÷ 8,760 or 26,280 hours, live, dated, paid up front or monthly. A
// size with savings-plan prices only is no reservation rate.
func TestLiveReservationRatesAnswerCommitmentQueries(t *testing.T) {
	const size, spOnly = "Standard_NC24ads_A100_v4", "Standard_NC48ads_A100_v4"
	rows := []sim.PriceRow{
		{Region: "eastus", Size: size, OnDemand: "3.673", Spot: "0.9", Reservation1y: "20300", Reservation3y: "39000", SavingsPlan1y: "2.9"},
		{Region: "eastus", Size: spOnly, OnDemand: "7.346", SavingsPlan1y: "5.8", SavingsPlan3y: "4.1"},
	}
	_, url := startPriceSim(t, rows, false)
	p := testProvider(t, url, providers.Options{})
	got, err := p.ReadPrices(context.Background(), providers.Scope{Provider: fleet.Azure, Account: subA, Region: "eastus"}, []string{size, spOnly})
	if err != nil {
		t.Fatal(err)
	}
	base := testCatalog(t)
	for _, term := range []string{pricing.Term1y, pricing.Term3y} {
		if _, ok := pricing.LookupCommitment(base, pricing.CommitmentQuery{Provider: fleet.Azure, Region: "eastus", InstanceType: size, Kind: pricing.Reservation, Term: term}); ok {
			t.Fatalf("the embedded catalog has a %s eastus reservation rate: the test must use a region it lacks", term)
		}
	}
	cat := pricing.Overlay(base, got)
	for _, tc := range []struct {
		term, hourly, hours string
	}{{pricing.Term1y, "2.317352", "8760"}, {pricing.Term3y, "1.484018", "26280"}} {
		r, ok := pricing.LookupCommitment(cat, pricing.CommitmentQuery{Provider: fleet.Azure, Region: "eastus", InstanceType: size, Kind: pricing.Reservation, Term: tc.term})
		if !ok {
			t.Fatalf("%s: no reservation rate from the live Reservation rows", tc.term)
		}
		if !r.Live || r.Hourly.String() != tc.hourly || r.Payment != pricing.PayUpfrontOrMonthly || r.AsOf != simNow.Format("2006-01-02") ||
			!strings.Contains(r.Source, "Azure Retail Prices API (reservation") || !strings.Contains(r.Source, tc.hours+" h") {
			t.Errorf("%s: %+v, want live %s/h (term total ÷ %s h), upfront-or-monthly, dated %s", tc.term, r, tc.hourly, tc.hours, simNow.Format("2006-01-02"))
		}
		if !r.OnDemandHourly.Equal(decimal.RequireFromString("3.673")) || r.DiscountPercent <= 0 {
			t.Errorf("%s: on-demand %s, discount %v: want the live consumption price beside it", tc.term, r.OnDemandHourly, r.DiscountPercent)
		}
	}
	if r, ok := pricing.LookupCommitment(cat, pricing.CommitmentQuery{Provider: fleet.Azure, Region: "eastus", InstanceType: spOnly, Kind: pricing.Reservation, Term: pricing.Term1y}); ok {
		t.Errorf("a savings-plan price answered a reservation query: %+v", r)
	}
	if _, ok := pricing.LookupCommitment(cat, pricing.CommitmentQuery{Provider: fleet.Azure, Region: "eastus", InstanceType: size, Kind: pricing.Reservation, Term: pricing.Term1y, Payment: pricing.PayNoUpfront}); ok {
		t.Error("a reservation rate answered a no-upfront query: Azure prices it up front or monthly")
	}
}
