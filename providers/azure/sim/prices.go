package sim

// The Retail Prices API: GET /api/retail/prices?$filter=… (OData: terms
// "field eq 'value'" and "contains(field, 'value')" joined by "and"),
// paged 100 items at a time with an absolute NextPageLink ($skip). No
// credentials. Each size has the rows Azure lists: Linux and Windows
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

// pricePage is the Retail Prices API's page size.
const pricePage = 100

var (
	reEq       = regexp.MustCompile(`^(\w+)\s+eq\s+'([^']*)'$`)
	reContains = regexp.MustCompile(`^contains\((\w+),\s*'([^']*)'\)$`)
	reRegion   = regexp.MustCompile(`(?i)armRegionName\s+eq\s+'([^']+)'`)
)

func filterRegion(f string) string {
	if m := reRegion.FindStringSubmatch(f); m != nil {
		return strings.ToLower(m[1])
	}
	return ""
}

type term struct {
	field, value string
	contains     bool
}

// parseFilter reads the OData subset; false for anything else.
func parseFilter(f string) ([]term, bool) {
	if strings.TrimSpace(f) == "" {
		return nil, true
	}
	var out []term
	for _, part := range regexp.MustCompile(`(?i)\s+and\s+`).Split(strings.TrimSpace(f), -1) {
		part = strings.TrimSpace(part)
		if m := reEq.FindStringSubmatch(part); m != nil {
			out = append(out, term{field: strings.ToLower(m[1]), value: m[2]})
			continue
		}
		if m := reContains.FindStringSubmatch(part); m != nil {
			out = append(out, term{field: strings.ToLower(m[1]), value: m[2], contains: true})
			continue
		}
		return nil, false
	}
	return out, true
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

func matches(it map[string]any, terms []term) bool {
	for _, t := range terms {
		var got string
		for k, v := range it {
			if strings.EqualFold(k, t.field) {
				if s, ok := v.(string); ok {
					got = s
				}
			}
		}
		if t.field == "pricetype" {
			got, _ = it["type"].(string)
		}
		if t.contains {
			if !strings.Contains(got, t.value) {
				return false
			}
		} else if !strings.EqualFold(got, t.value) {
			return false
		}
	}
	return true
}

func (s *Server) servePrices(w http.ResponseWriter, req request) {
	q := req.r.URL.Query()
	terms, ok := parseFilter(q.Get("$filter"))
	if !ok {
		writeError(w, http.StatusBadRequest, "InvalidFilter", "gpufinops azure sim: the $filter must be terms joined by and: field eq 'value' or contains(field, 'value')")
		return
	}
	var items []map[string]any
	for _, p := range s.opts.Prices {
		for _, it := range priceItems(p) {
			if matches(it, terms) {
				items = append(items, it)
			}
		}
	}
	skip, _ := strconv.Atoi(q.Get("$skip"))
	if skip < 0 || skip > len(items) {
		skip = len(items)
	}
	end := min(skip+pricePage, len(items))
	body := map[string]any{"BillingCurrency": "USD", "CustomerEntityId": "Default", "CustomerEntityType": "Retail",
		"Items": append([]map[string]any{}, items[skip:end]...), "Count": end - skip, "NextPageLink": nil}
	if end < len(items) {
		q.Set("$skip", strconv.Itoa(end))
		body["NextPageLink"] = baseURL(req.r) + req.r.URL.Path + "?" + q.Encode()
	}
	writeJSON(w, body)
}

func simkitDigest(parts ...string) []byte { return simkit.Digest(parts...) }
