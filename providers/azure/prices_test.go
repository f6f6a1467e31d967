package azure

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	neturl "net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/providers"
	"github.com/gpufinops/gpufinops/providers/azure/sim"
)

// priceSim serves prices of sizes in regions; refuseOr answers 400 (the
// simulator's error body) to a filter with "or"; it records every URL.
type priceSim struct {
	h        http.Handler
	refuseOr bool
	mu       sync.Mutex
	urls     []string
}

func (s *priceSim) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.urls = append(s.urls, r.URL.String())
	s.mu.Unlock()
	if s.refuseOr && strings.Contains(r.URL.Query().Get("$filter"), " or ") {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"code": "InvalidFilter", "message": "or is not supported"}})
		return
	}
	s.h.ServeHTTP(w, r)
}

func (s *priceSim) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.urls...)
}

// priceRows are the simulator's prices of sizes in regions, each size its
// own on-demand, spot, reservation and savings plan prices.
func priceRows(regions, sizes []string) []sim.PriceRow {
	var out []sim.PriceRow
	for ri, r := range regions {
		for i, s := range sizes {
			out = append(out, sim.PriceRow{Region: r, Size: s, OnDemand: fmt.Sprintf("%d.%03d", 1+i, ri), Spot: fmt.Sprintf("0.%03d", 100+i),
				Reservation1y: fmt.Sprint(8760 * (1 + i)), SavingsPlan1y: fmt.Sprintf("0.%03d", 500+i), SavingsPlan3y: fmt.Sprintf("0.%03d", 300+i)})
		}
	}
	return out
}

func startPriceSim(t *testing.T, rows []sim.PriceRow, refuseOr bool) (*priceSim, string) {
	t.Helper()
	ps := &priceSim{h: strictSim(t, &fleet.Fleet{}, sim.Options{Prices: rows, Subscription: subA}), refuseOr: refuseOr}
	srv := httptest.NewServer(ps)
	t.Cleanup(srv.Close)
	return ps, srv.URL
}

// perSizePrices is what one query per size reads: the adapter's way before
// or queries, the reference the region queries must equal.
func perSizePrices(t *testing.T, p *Provider, region string, sizes []string) []pricing.Price {
	t.Helper()
	var out []pricing.Price
	sorted := append([]string(nil), sizes...)
	sort.Strings(sorted)
	for _, s := range sorted {
		items, err := p.retailItems(context.Background(), region, priceFilter(region, []string{s}))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, PricesOf(items, region, s, simNow)...)
	}
	return out
}

func pricesJSON(t *testing.T, prs []pricing.Price) string {
	t.Helper()
	b, err := json.Marshal(prs)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestPricesOneQueryPerRegion: a region's sizes are read in one or query
// (one page), and give exactly the prices of one query per size, a size
// without rows included.
func TestPricesOneQueryPerRegion(t *testing.T) {
	sizes := []string{"Standard_NC24ads_A100_v4", "Standard_ND96asr_v4", "Standard_NC4as_T4_v3", "Standard_NV36ads_A10_v5", "Standard_NC48ads_A100_v4"}
	ps, url := startPriceSim(t, priceRows([]string{"eastus", "westus2"}, sizes), false)
	p := testProvider(t, url, providers.Options{})
	asked := append([]string{"Standard_NoSuchSize"}, sizes...)
	got, err := p.ReadPrices(context.Background(), providers.Scope{Provider: fleet.Azure, Account: subA, Region: "eastus"}, asked)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(ps.requests()); n != 1 {
		t.Errorf("%d Retail Prices requests for %d sizes, want 1", n, len(asked))
	}
	if len(got) != 5*len(sizes) {
		t.Errorf("%d prices, want 5 a size (on-demand, spot, 1-year reservation, 1- and 3-year savings plan)", len(got))
	}
	if a, b := pricesJSON(t, got), pricesJSON(t, perSizePrices(t, p, "eastus", asked)); a != b {
		t.Errorf("the region query's prices differ from one query per size:\n region   %s\n per size %s", a, b)
	}
	if notes := p.TakeScanNotes(); len(notes) != 0 {
		t.Errorf("notes %q without a refusal", notes)
	}
}

var reSkuTerm = regexp.MustCompile(`armSkuName eq '((?:[^']|'')*)'`)

// TestPricesSplitUnderTheURLLimit: many sizes take several queries, each
// URL at most maxPriceURL, each as full as the limit allows, every size
// asked once, and the prices those of one query per size.
func TestPricesSplitUnderTheURLLimit(t *testing.T) {
	var sizes []string
	for i := range 120 {
		sizes = append(sizes, fmt.Sprintf("Standard_NC%d'ads_A100_v%d", i, i%7))
	}
	ps, url := startPriceSim(t, priceRows([]string{"eastus"}, sizes), false)
	p := testProvider(t, url, providers.Options{})
	got, err := p.ReadPrices(context.Background(), providers.Scope{Provider: fleet.Azure, Account: subA, Region: "eastus"}, sizes)
	if err != nil {
		t.Fatal(err)
	}
	reqs := ps.requests()
	if len(reqs) < 2 {
		t.Fatalf("%d requests for 120 sizes: no split", len(reqs))
	}
	asked := map[string]int{}
	sorted := append([]string(nil), sizes...)
	sort.Strings(sorted)
	for i, u := range reqs {
		full := url + u
		if len(full) > maxPriceURL {
			t.Errorf("request %d: %d bytes, over %d", i, len(full), maxPriceURL)
		}
		n := strings.Count(u, "armSkuName")
		if i < len(reqs)-1 {
			// One more size would not have fitted.
			if next := priceFilter("eastus", sorted[:n+1]); len(p.pricesURL(next)) <= maxPriceURL {
				t.Errorf("request %d holds %d sizes; %d fit", i, n, n+1)
			}
		}
		sorted = sorted[n:]
		q, err := neturl.ParseQuery(strings.TrimPrefix(u[strings.Index(u, "?"):], "?"))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range reSkuTerm.FindAllStringSubmatch(q.Get("$filter"), -1) {
			asked[strings.ReplaceAll(m[1], "''", "'")]++
		}
	}
	for _, s := range sizes {
		if asked[s] != 1 {
			t.Errorf("%s asked %d times", s, asked[s])
		}
	}
	if a, b := pricesJSON(t, got), pricesJSON(t, perSizePrices(t, p, "eastus", sizes)); a != b {
		t.Error("the split queries' prices differ from one query per size")
	}
}

// TestPricesFallBackWhenOrIsRefused: an API that answers 400 to an or
// query gets one query per size, the same prices, one note for the scan,
// and later regions are asked one size a query without another refusal.
func TestPricesFallBackWhenOrIsRefused(t *testing.T) {
	sizes := []string{"Standard_NC24ads_A100_v4", "Standard_ND96asr_v4", "Standard_NC4as_T4_v3"}
	regions := []string{"eastus", "westus2"}
	ps, url := startPriceSim(t, priceRows(regions, sizes), true)
	p := testProvider(t, url, providers.Options{})
	ref := testProvider(t, url, providers.Options{})
	for i, r := range regions {
		before := len(ps.requests())
		got, err := p.ReadPrices(context.Background(), providers.Scope{Provider: fleet.Azure, Account: subA, Region: r}, sizes)
		if err != nil {
			t.Fatal(err)
		}
		want := len(sizes)
		if i == 0 {
			want++ // the refused or query
		}
		if n := len(ps.requests()) - before; n != want {
			t.Errorf("%s: %d requests, want %d", r, n, want)
		}
		if a, b := pricesJSON(t, got), pricesJSON(t, perSizePrices(t, ref, r, sizes)); a != b {
			t.Errorf("%s: the fallback's prices differ from one query per size", r)
		}
	}
	notes := p.TakeScanNotes()
	if len(notes) != 1 || notes[0] != orRefusedNote {
		t.Errorf("notes %q, want the refusal once", notes)
	}
	if again := p.TakeScanNotes(); len(again) != 0 {
		t.Errorf("the note came twice: %q", again)
	}
}

// TestPricesBadRequestOfOneSizeIsAnError: a 400 to a query without or is
// no refusal of or: it is the error it was.
func TestPricesBadRequestOfOneSizeIsAnError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error":{"code":"InvalidFilter","message":"no"}}`))
	}))
	t.Cleanup(srv.Close)
	p := testProvider(t, srv.URL, providers.Options{})
	if _, err := p.ReadPrices(context.Background(), providers.Scope{Provider: fleet.Azure, Account: subA, Region: "eastus"}, []string{"Standard_NC6"}); err == nil {
		t.Error("no error")
	}
	if p.orRefused.Load() {
		t.Error("a one-size 400 was taken for a refusal of or")
	}
}

// TestPricesFilterSpeltAsAzureLists: filter values are case-sensitive from
// the api-version the adapter sends (providers/azure/sim/FACTS.md), so the
// filter names the service and the region as Azure lists them, whatever the
// scope's spelling of the region.
func TestPricesFilterSpeltAsAzureLists(t *testing.T) {
	sizes := []string{"Standard_NC24ads_A100_v4"}
	ps, url := startPriceSim(t, priceRows([]string{"eastus"}, sizes), false)
	p := testProvider(t, url, providers.Options{})
	got, err := p.ReadPrices(context.Background(), providers.Scope{Provider: fleet.Azure, Account: subA, Region: "EastUS"}, sizes)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 5 {
		t.Errorf("%d prices, want 5 (on-demand, spot, 1-year reservation, 1- and 3-year savings plan)", len(got))
	}
	for _, raw := range ps.requests() {
		u, err := neturl.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		f := u.Query().Get("$filter")
		if !strings.Contains(f, "serviceName eq 'Virtual Machines'") || !strings.Contains(f, "armRegionName eq 'eastus'") || u.Query().Get("api-version") != "2023-01-01-preview" {
			t.Errorf("request %s: want serviceName 'Virtual Machines', armRegionName 'eastus', api-version 2023-01-01-preview", raw)
		}
	}
}

// TestSavingsPlanRowsAsDocumented pins the shape of a consumption row's
// savings plan prices as Microsoft documents them (the Retail Prices API
// has no OpenAPI model; https://learn.microsoft.com/rest/api/cost-management/retail-prices/azure-retail-prices,
// "savingsPlan": [{"unitPrice", "retailPrice", "term": "1 Year" | "3 Years"}],
// returned only with api-version 2023-01-01-preview): each term is a
// savings-plan price of its own, beside the reservation of the same term,
// each naming its kind.
func TestSavingsPlanRowsAsDocumented(t *testing.T) {
	const rows = `{"Items": [
	 {"currencyCode": "USD", "retailPrice": 3.673, "unitPrice": 3.673, "armRegionName": "eastus", "armSkuName": "Standard_NC24ads_A100_v4",
	  "productName": "NCads A100 v4 Series", "skuName": "Standard_NC24ads_A100_v4", "meterName": "NC24ads A100 v4", "serviceName": "Virtual Machines",
	  "unitOfMeasure": "1 Hour", "type": "Consumption",
	  "savingsPlan": [{"unitPrice": 1.8542, "retailPrice": 1.8542, "term": "3 Years"}, {"unitPrice": 2.6213, "retailPrice": 2.6213, "term": "1 Year"}]},
	 {"currencyCode": "USD", "retailPrice": 20330, "unitPrice": 20330, "armRegionName": "eastus", "armSkuName": "Standard_NC24ads_A100_v4",
	  "productName": "NCads A100 v4 Series", "skuName": "Standard_NC24ads_A100_v4", "meterName": "NC24ads A100 v4", "serviceName": "Virtual Machines",
	  "unitOfMeasure": "1 Hour", "type": "Reservation", "reservationTerm": "1 Year"}
	], "NextPageLink": null}`
	var page retailPage
	if err := json.Unmarshal([]byte(rows), &page); err != nil {
		t.Fatal(err)
	}
	got := map[string]pricing.Price{}
	for _, p := range PricesOf(page.Items, "eastus", "Standard_NC24ads_A100_v4", simNow) {
		got[string(p.Option)+" "+string(p.Commitment)] = p
	}
	want := map[string]string{
		"on-demand ":                         "3.673",
		"savings-plan-1y reservation":        "2.320776", // 20,330 ÷ 8,760
		"savings-plan-1y azure-savings-plan": "2.6213",
		"savings-plan-3y azure-savings-plan": "1.8542",
	}
	if len(got) != len(want) {
		t.Errorf("prices %v, want %v", got, want)
	}
	for k, v := range want {
		if p, ok := got[k]; !ok || p.Hourly.String() != v {
			t.Errorf("%s: %+v, want %s/h", k, p, v)
		}
	}
	if p := got["savings-plan-3y azure-savings-plan"]; !strings.Contains(p.Source, "savings plan for compute, 3 Years") {
		t.Errorf("source %q", p.Source)
	}
}
