package sim_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers/azure/sim"
)

// TestReservationsAreTheTenants holds the facts of FACTS.md: reservations
// are listed tenant-wide (GET /providers/Microsoft.Capacity/reservations,
// no subscription in the path; the built-in Reservations Reader "lets one
// read all the reservations in a tenant"), expired ones included with
// provisioningState Expired (ReservationSummary counts expiredCount), a
// page at a time by nextLink; a savings plan's commitment is an hourly
// amount (Commitment.grain Hourly).
func TestReservationsAreTheTenants(t *testing.T) {
	f := fleetOf(1)
	at := func(y int) *time.Time { t := time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC); return &t }
	amount := decimal.RequireFromString("4.75")
	f.Commitments = []fleet.Held{
		{ID: "/providers/Microsoft.Capacity/reservationOrders/o1/reservations/r1", Provider: fleet.Azure, Kind: "reservation", Scope: fleet.HeldScope{Level: "shared", Region: "eastus"}, Term: "1y", Start: at(2026), End: at(2027), InstanceType: "Standard_NC24ads_A100_v4", Count: 2, SizeFlexible: true},
		{ID: "/providers/Microsoft.Capacity/reservationOrders/o2/reservations/r2", Provider: fleet.Azure, Kind: "reservation", Scope: fleet.HeldScope{Level: "account", Region: "eastus", Accounts: []string{sub}}, Term: "3y", Start: at(2023), End: at(2026), InstanceType: "Standard_NC24ads_A100_v4", Count: 1},
		{ID: "/providers/Microsoft.BillingBenefits/savingsPlanOrders/o3/savingsPlans/p3", Provider: fleet.Azure, Kind: "savings-plan", Scope: fleet.HeldScope{Level: "shared"}, Term: "3y", Payment: "monthly", Start: at(2026), End: at(2029), HourlyCommitment: &amount},
	}
	srv, _ := start(t, f, sim.Options{CommitmentPage: 1})
	get := func(url string, v any) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		req.Header.Set("Authorization", "Bearer x")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: HTTP %d", url, resp.StatusCode)
		}
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
			t.Fatal(err)
		}
	}
	type page struct {
		Value []struct {
			ID         string
			SKU        struct{ Name string }
			Properties struct {
				ProvisioningState, AppliedScopeType, Term, InstanceFlexibility string
				Quantity                                                       float64
				Commitment                                                     struct {
					Grain  string
					Amount float64
				}
			}
		}
		NextLink string
		Summary  struct{ SucceededCount, ExpiredCount int }
	}
	states := map[string]string{}
	next := srv.URL + "/providers/Microsoft.Capacity/reservations?api-version=2022-11-01"
	pages := 0
	for next != "" {
		var p page
		get(next, &p)
		pages++
		for _, r := range p.Value {
			states[r.ID] = r.Properties.ProvisioningState + " " + r.Properties.AppliedScopeType + " " + r.Properties.Term + " " + r.Properties.InstanceFlexibility
		}
		if p.Summary.SucceededCount != 1 || p.Summary.ExpiredCount != 1 {
			t.Errorf("summary %+v", p.Summary)
		}
		next = p.NextLink
	}
	if pages != 2 || states[f.Commitments[0].ID] != "Succeeded Shared P1Y On" || states[f.Commitments[1].ID] != "Expired Single P3Y Off" {
		t.Errorf("%d pages, %v", pages, states)
	}
	var sp page
	get(srv.URL+"/providers/Microsoft.BillingBenefits/savingsPlans?api-version=2022-11-01", &sp)
	if len(sp.Value) != 1 || sp.Value[0].Properties.Commitment.Grain != "Hourly" || sp.Value[0].Properties.Commitment.Amount != 4.75 {
		t.Errorf("savings plans %+v", sp.Value)
	}
}
