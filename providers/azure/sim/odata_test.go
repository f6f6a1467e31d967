package sim

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// row is a field lookup over a map, as matches reads a price row.
func row(m map[string]string) func(string) string {
	return func(name string) string {
		for k, v := range m {
			if strings.EqualFold(k, name) {
				return v
			}
		}
		return ""
	}
}

func TestODataFilterPrecedenceAndQuotes(t *testing.T) {
	r := row(map[string]string{"serviceName": "Virtual Machines", "armRegionName": "eastus", "armSkuName": "Standard_NC6", "meterName": "NC6 Spot", "note": "it's"})
	for _, c := range []struct {
		filter string
		want   bool
	}{
		{"", true},
		{"armRegionName eq 'eastus'", true},
		{"armRegionName eq 'EastUS'", false}, // values are case-sensitive in the current API (FACTS.md)
		{"armRegionName eq 'westus'", false},
		// and binds tighter than or: false and false or true.
		{"armRegionName eq 'westus' and armSkuName eq 'x' or armSkuName eq 'Standard_NC6'", true},
		// (westus) and (x or NC6) is false.
		{"armRegionName eq 'westus' and (armSkuName eq 'x' or armSkuName eq 'Standard_NC6')", false},
		// westus or (NC6 and x) is false; without parentheses the same.
		{"armRegionName eq 'westus' or armSkuName eq 'Standard_NC6' and armSkuName eq 'x'", false},
		{"(armRegionName eq 'westus' or armSkuName eq 'Standard_NC6') and armSkuName eq 'x'", false},
		{"(armRegionName eq 'westus' or armSkuName eq 'Standard_NC6') and serviceName eq 'Virtual Machines'", true},
		{"serviceName eq 'Virtual Machines' and armRegionName eq 'eastus' and (armSkuName eq 'A' or armSkuName eq 'Standard_NC6')", true},
		{"((armSkuName eq 'Standard_NC6'))", true},
		{"contains(meterName, 'Spot') and armSkuName eq 'Standard_NC6'", true},
		{"contains(meterName, 'spot')", false}, // contains is exact
		{"note eq 'it''s'", true},
		{"note eq 'it'", false},
		{"missing eq ''", true},
		{"armSkuName EQ 'Standard_NC6' AND armRegionName Eq 'eastus' OR armSkuName eq 'x'", true},
	} {
		f, err := parseODataFilter(c.filter)
		if err != nil {
			t.Errorf("%q: %v", c.filter, err)
			continue
		}
		if got := f == nil || f.match(r, true); got != c.want {
			t.Errorf("%q = %v, want %v", c.filter, got, c.want)
		}
	}
}

func TestODataFilterRefusesWhatItCannotParse(t *testing.T) {
	for _, f := range []string{
		"armSkuName eq 'x",
		"armSkuName ne 'x'",
		"armSkuName eq x",
		"armSkuName eq 'x' and",
		"or armSkuName eq 'x'",
		"(armSkuName eq 'x'",
		"armSkuName eq 'x')",
		"armSkuName eq 'x' armRegionName eq 'y'",
		"contains(meterName 'Spot')",
		"contains(meterName, Spot)",
		"and eq 'x'",
		"1abc eq 'x'",
		"armSkuName eq 'x' or ()",
		"retailPrice lt 1",
		"armSkuName eq \"x\"",
		strings.Repeat("(", maxFilterDepth+1) + "a eq 'b'" + strings.Repeat(")", maxFilterDepth+1),
	} {
		if _, err := parseODataFilter(f); err == nil {
			t.Errorf("%q parsed", f)
		}
	}
	deep := strings.Repeat("(", maxFilterDepth) + "a eq 'b'" + strings.Repeat(")", maxFilterDepth)
	if _, err := parseODataFilter(deep); err != nil {
		t.Errorf("%d parentheses: %v", maxFilterDepth, err)
	}
}

// quote is an OData string literal.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// FuzzODataFilter: any filter parses or is an error, never a panic; one
// that parses prints back (canonically) to a filter that parses to the
// same evaluation on a fixed row.
func FuzzODataFilter(f *testing.F) {
	for _, s := range []string{
		"serviceName eq 'Virtual Machines' and armRegionName eq 'eastus' and (armSkuName eq 'A' or armSkuName eq 'B')",
		"contains(meterName, 'Spot') or priceType eq 'Reservation'",
		"a eq 'it''s' or (b eq '' and c eq 'x')",
		"((a eq 'b')",
		"a eq 'b' or",
		"",
	} {
		f.Add(s)
	}
	r := row(map[string]string{"a": "b", "b": "", "c": "x", "meterName": "NC6 Spot", "armSkuName": "A", "note": "it's"})
	f.Fuzz(func(t *testing.T, s string) {
		e, err := parseODataFilter(s)
		if err != nil || e == nil {
			return
		}
		printed := printFilter(e)
		again, err := parseODataFilter(printed)
		if err != nil {
			t.Fatalf("%q printed as %q, which does not parse: %v", s, printed, err)
		}
		if printFilter(again) != printed || again.match(r, true) != e.match(r, true) {
			t.Fatalf("%q printed as %q reads back as %q", s, printed, printFilter(again))
		}
	})
}

// printFilter writes a parsed filter back, every boolean fully parenthesised.
func printFilter(e filterExpr) string {
	switch e := e.(type) {
	case cmpExpr:
		if e.contains {
			return "contains(" + e.field + ", " + quote(e.value) + ")"
		}
		return e.field + " eq " + quote(e.value)
	case boolExpr:
		op := " and "
		if e.or {
			op = " or "
		}
		parts := make([]string, len(e.terms))
		for i, t := range e.terms {
			parts[i] = printFilter(t)
		}
		return "(" + strings.Join(parts, op) + ")"
	}
	return "?"
}

// TestOrQueryIsTheUnionOfSingleSizeQueries: for random sets of sizes (some
// unknown, some with quotes), the or query of a region answers exactly the
// rows of the single-size queries together, over every page.
func TestOrQueryIsTheUnionOfSingleSizeQueries(t *testing.T) {
	sizes := []string{"Standard_NC6", "Standard_NC24ads_A100_v4", "Standard_ND96asr_v4", "Standard_NV6ads_A10_v5", "Standard_O'Brien", "Standard_NC4as_T4_v3"}
	var prices []PriceRow
	for i, s := range sizes {
		for _, r := range []string{"eastus", "westus2"} {
			prices = append(prices, PriceRow{Region: r, Size: s, OnDemand: fmt.Sprint(1 + i), Spot: "0.5", LowPriority: "0.7", Reservation1y: "8760", Reservation3y: "20000", SavingsPlan1y: "0.9"})
		}
	}
	srv := httptest.NewServer(New(&fleet.Fleet{}, Options{Prices: prices}))
	defer srv.Close()
	rng := rand.New(rand.NewSource(7))
	for range 40 {
		var pick []string
		for _, s := range append(sizes, "Standard_Unknown") {
			if rng.Intn(2) == 0 {
				pick = append(pick, s)
			}
		}
		if len(pick) == 0 {
			continue
		}
		region := []string{"eastus", "westus2", "nowhere"}[rng.Intn(3)]
		base := "serviceName eq 'Virtual Machines' and armRegionName eq " + quote(region)
		var terms []string
		var want []string
		for _, s := range pick {
			terms = append(terms, "armSkuName eq "+quote(s))
			want = append(want, retailIDs(t, srv.URL, base+" and armSkuName eq "+quote(s), "")...)
		}
		// The current api-version's pages and the legacy ones of 100.
		got := retailIDs(t, srv.URL, base+" and ("+strings.Join(terms, " or ")+")", "2023-01-01-preview")
		legacy := retailIDs(t, srv.URL, base+" and ("+strings.Join(terms, " or ")+")", "")
		sort.Strings(want)
		sort.Strings(got)
		sort.Strings(legacy)
		if strings.Join(got, ",") != strings.Join(want, ",") || strings.Join(legacy, ",") != strings.Join(want, ",") {
			t.Fatalf("%s %q: or query %d rows, legacy %d, single queries %d", region, pick, len(got), len(legacy), len(want))
		}
	}
}

// retailIDs reads every page of a filter and returns its rows, each as its
// meter ID, reservation term and price.
func retailIDs(t *testing.T, base, filter, version string) []string {
	t.Helper()
	q := url.Values{"$filter": {filter}}
	if version != "" {
		q.Set("api-version", version)
	}
	next := base + "/api/retail/prices?" + q.Encode()
	var out []string
	for next != "" {
		resp, err := http.Get(next)
		if err != nil {
			t.Fatal(err)
		}
		var page struct {
			Items        []map[string]any
			NextPageLink *string
		}
		err = json.NewDecoder(resp.Body).Decode(&page)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s: HTTP %d %v", filter, resp.StatusCode, err)
		}
		for _, it := range page.Items {
			out = append(out, fmt.Sprint(it["meterId"]))
		}
		next = ""
		if page.NextPageLink != nil {
			next = *page.NextPageLink
		}
	}
	return out
}

func TestBadFilterIsA400WithAzuresErrorBody(t *testing.T) {
	srv := httptest.NewServer(New(&fleet.Fleet{}, Options{}))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/api/retail/prices?" + url.Values{"$filter": {"armSkuName eq 'a' or"}}.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Error struct{ Code, Message string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 400 || body.Error.Code != "InvalidFilter" || body.Error.Message == "" {
		t.Errorf("HTTP %d, error %+v", resp.StatusCode, body.Error)
	}
}
