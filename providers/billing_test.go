package providers

import (
	"context"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// TestProviderOfFOCUS: a bill's ProviderName finds its cloud by the cloud's
// registered name, FOCUSName or FOCUSNames whole (any case) before any
// cloud's FOCUSNameWords; a cloud without billing facts is found by its
// name only, and an unknown name by none.
func TestProviderOfFOCUS(t *testing.T) {
	Register(&RegInfo{Name: "billa", Billing: &Billing{FOCUSName: "Alpha Cloud", FOCUSNames: []string{"Alpha"}, FOCUSNameWords: []string{"beta"}}})
	Register(&RegInfo{Name: "billb", Billing: &Billing{FOCUSName: "Beta Cloud", FOCUSNameWords: []string{"alpha"},
		Warehouse: &Warehouse{Scheme: "bwh", Form: "bwh://T", Dialect: "postgres", Open: func(context.Context, string) (WarehouseTable, error) { return nil, nil }}}})
	Register(&RegInfo{Name: "billc"})
	for name, want := range map[string]fleet.Provider{
		"Alpha Cloud": "billa", " ALPHA ": "billa", "billa": "billa", "Beta Cloud": "billb",
		"Alpha Beta Inc.": "billa", // no whole match: the first cloud whose word it contains
		"alphabet":        "billb", // billa has no word in it; billb's "alpha" is
		"BillC":           "billc", "Gamma": "", "": "",
	} {
		got, ok := ProviderOfFOCUS(name)
		if got != want || ok != (want != "") {
			t.Errorf("ProviderOfFOCUS(%q) = %q, %v; want %q", name, got, ok, want)
		}
	}
	if FOCUSName("billa") != "Alpha Cloud" || FOCUSName("billc") != "billc" || FOCUSName("nowhere") != "nowhere" {
		t.Errorf("FOCUSName: %q %q %q", FOCUSName("billa"), FOCUSName("billc"), FOCUSName("nowhere"))
	}
	found := false
	for _, w := range Warehouses() {
		found = found || w.Scheme == "bwh"
	}
	if !found || BillingOf("billc") != nil || BillingOf("nowhere") != nil {
		t.Errorf("Warehouses %v; BillingOf(billc) %v", Warehouses(), BillingOf("billc"))
	}
}
