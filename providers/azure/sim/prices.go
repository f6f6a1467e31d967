package sim

// The Retail Prices API: GET /api/retail/prices?$filter=… (OData: terms
// "field eq 'value'" and "contains(field, 'value')" joined by "and" and
// "or", with parentheses; odata.go), paged 1,000 items at a time (100 before
// api-version 2023-01-01-preview) with an absolute NextPageLink ($skip). No
// credentials. From api-version 2023-01-01-preview filter values are
// case-sensitive and the savings-plan rates are served (FACTS.md). Each
// size has the rows Azure lists: Linux and Windows
// consumption (the Linux row with its savingsPlan terms), Spot, Low
// Priority, DevTest, and 1- and 3-year reservations whose retailPrice is the
// whole term.

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/gpufinops/gpufinops/providers/simkit"
)

// The Retail Prices API's page sizes: 1,000 items in current versions,
// 100 in older ones (../shared/research/cloud-apis.md §2.7).
const (
	pricePage       = 1000
	legacyPricePage = 100
)

// pageSize is the page of an api-version: the current page from
// 2023-01-01-preview on, the older one without a version or before it.
func pageSize(version string) int {
	if currentVersion(version) {
		return pricePage
	}
	return legacyPricePage
}

var reRegion = regexp.MustCompile(`(?i)armRegionName\s+eq\s+'([^']+)'`)

// filterRegion is the region a filter names, the request's fault scope.
func filterRegion(f string) string {
	if m := reRegion.FindStringSubmatch(f); m != nil {
		return strings.ToLower(m[1])
	}
	return ""
}

// priceItems are the rows of one PriceRow.
func priceItems(p PriceRow) []map[string]any {
	base := strings.TrimPrefix(p.Size, "Standard_")
	pretty := strings.ReplaceAll(base, "_", " ")
	series := "Virtual Machines " + pretty + " Series"
	date := p.EffectiveDate
	if date == "" {
		date = "2026-11-01"
	}
	item := func(typ, sku, product, price string) map[string]any {
		return map[string]any{"currencyCode": "USD", "tierMinimumUnits": 0.0, "retailPrice": num(price), "unitPrice": num(price),
			"armRegionName": p.Region, "location": p.Region, "effectiveStartDate": date + "T00:00:00Z",
			"meterId": string(hexID(p.Region, p.Size, typ, sku, product)), "meterName": sku, "productId": "DZH318Z0" + strings.ToUpper(base[:min(4, len(base))]),
			"skuId": "DZH318Z0/" + sku, "productName": product, "skuName": sku, "serviceName": "Virtual Machines", "serviceId": "DZH313Z7MMC8",
			"serviceFamily": "Compute", "unitOfMeasure": "1 Hour", "type": typ, "isPrimaryMeterRegion": true, "armSkuName": p.Size}
	}
	var out []map[string]any
	if p.OnDemand != "" {
		linux := item("Consumption", pretty, series, p.OnDemand)
		var plans []map[string]any
		if p.SavingsPlan1y != "" {
			plans = append(plans, map[string]any{"unitPrice": num(p.SavingsPlan1y), "retailPrice": num(p.SavingsPlan1y), "term": "1 Year"})
		}
		if p.SavingsPlan3y != "" {
			plans = append(plans, map[string]any{"unitPrice": num(p.SavingsPlan3y), "retailPrice": num(p.SavingsPlan3y), "term": "3 Years"})
		}
		if plans != nil {
			linux["savingsPlan"] = plans
		}
		out = append(out, linux)
		od, _ := strconv.ParseFloat(p.OnDemand, 64)
		win := strconv.FormatFloat(od*1.2, 'f', 4, 64)
		out = append(out, item("Consumption", pretty, series+" Windows", win))
		out = append(out, item("DevTestConsumption", pretty, series, p.OnDemand))
	}
	if p.Spot != "" {
		out = append(out, item("Consumption", pretty+" Spot", series, p.Spot))
	}
	if p.LowPriority != "" {
		out = append(out, item("Consumption", pretty+" Low Priority", series, p.LowPriority))
	}
	for _, r := range []struct{ term, price string }{{"1 Year", p.Reservation1y}, {"3 Years", p.Reservation3y}} {
		if r.price != "" {
			it := item("Reservation", pretty, series, r.price)
			it["reservationTerm"] = r.term
			out = append(out, it)
		}
	}
	return out
}

func num(s string) any {
	f, _ := strconv.ParseFloat(s, 64)
	return f
}

func hexID(parts ...string) []byte {
	d := []byte{}
	for _, b := range simkitDigest(parts...)[:16] {
		d = append(d, "0123456789abcdef"[b>>4], "0123456789abcdef"[b&15])
	}
	return d
}

// matches evaluates a filter on one row: fields are matched without case,
// priceType is the row's type; values are compared with case from
// api-version 2023-01-01-preview on (cs), without before it (FACTS.md).
func matches(it map[string]any, f filterExpr, cs bool) bool {
	if f == nil {
		return true
	}
	return f.match(func(name string) string {
		if name == "pricetype" {
			name = "type"
		}
		for k, v := range it {
			if strings.EqualFold(k, name) {
				s, _ := v.(string)
				return s
			}
		}
		return ""
	}, cs)
}

// currentVersion is true from api-version 2023-01-01-preview on: filter
// values are case-sensitive and consumption rows carry their savings-plan
// rates (FACTS.md).
func currentVersion(version string) bool { return version >= "2023-01-01" }

func (s *Server) servePrices(w http.ResponseWriter, req request) {
	q := req.r.URL.Query()
	filter, err := parseODataFilter(q.Get("$filter"))
	if err != nil {
		writeError(w, http.StatusBadRequest, "InvalidFilter", "Invalid $filter: "+err.Error()+" (gpufinops azure sim: field eq 'value' and contains(field, 'value') joined by and, or and parentheses)")
		return
	}
	current := currentVersion(q.Get("api-version"))
	var items []map[string]any
	for _, p := range s.opts.Prices {
		for _, it := range priceItems(p) {
			if !current {
				delete(it, "savingsPlan")
			}
			if matches(it, filter, current) {
				items = append(items, it)
			}
		}
	}
	skip, _ := strconv.Atoi(q.Get("$skip"))
	if skip < 0 || skip > len(items) {
		skip = len(items)
	}
	end := min(skip+pageSize(q.Get("api-version")), len(items))
	body := map[string]any{"BillingCurrency": "USD", "CustomerEntityId": "Default", "CustomerEntityType": "Retail",
		"Items": append([]map[string]any{}, items[skip:end]...), "Count": end - skip, "NextPageLink": nil}
	if end < len(items) {
		q.Set("$skip", strconv.Itoa(end))
		body["NextPageLink"] = baseURL(req.r) + req.r.URL.Path + "?" + q.Encode()
	}
	writeJSON(w, body)
}

func simkitDigest(parts ...string) []byte { return simkit.Digest(parts...) }
