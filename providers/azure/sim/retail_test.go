package sim_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/gpufinops/gpufinops/providers/azure/sim"
)

// TestRetailFilterCaseAndSavingsPlansByVersion holds two documented facts
// of the Retail Prices API: from api-version 2023-01-01-preview on, filter
// values are case-sensitive ("serviceName eq 'virtual machines'" matches
// nothing; before that version it matched), and savings-plan rates are
// returned only with that version.
// Source: https://learn.microsoft.com/rest/api/cost-management/retail-prices/azure-retail-prices
// ("Filter values are case sensitive"; "Rates for savings plans are only
// available with ... api-version=2023-01-01-preview").
func TestRetailFilterCaseAndSavingsPlansByVersion(t *testing.T) {
	srv, _ := start(t, fleetOf(1), sim.Options{Prices: []sim.PriceRow{{Region: "eastus", Size: "Standard_NC24ads_A100_v4",
		OnDemand: "3.673", SavingsPlan1y: "2.9", SavingsPlan3y: "2.1"}}})
	get := func(version, filter string) (n, plans int) {
		t.Helper()
		q := url.Values{"$filter": {filter}}
		if version != "" {
			q.Set("api-version", version)
		}
		resp, err := http.Get(srv.URL + "/api/retail/prices?" + q.Encode())
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body struct {
			Items []struct {
				SavingsPlan []any `json:"savingsPlan"`
			}
		}
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d: %v", resp.StatusCode, err)
		}
		for _, it := range body.Items {
			if len(it.SavingsPlan) > 0 {
				plans++
			}
		}
		return len(body.Items), plans
	}
	const exact = "serviceName eq 'Virtual Machines' and armRegionName eq 'eastus' and armSkuName eq 'Standard_NC24ads_A100_v4'"
	const folded = "serviceName eq 'virtual machines' and armRegionName eq 'eastus' and armSkuName eq 'standard_nc24ads_a100_v4'"
	for _, tc := range []struct {
		version, filter string
		rows, plans     bool
	}{
		{"2023-01-01-preview", exact, true, true},
		{"2023-01-01-preview", folded, false, false},
		{"2021-10-01-preview", exact, true, false},
		{"2021-10-01-preview", folded, true, false},
		{"", folded, true, false},
	} {
		n, plans := get(tc.version, tc.filter)
		if (n > 0) != tc.rows || (plans > 0) != tc.plans {
			t.Errorf("api-version %q, %q: %d rows, %d with savings plans; want rows %v, savings plans %v", tc.version, tc.filter, n, plans, tc.rows, tc.plans)
		}
	}
}
