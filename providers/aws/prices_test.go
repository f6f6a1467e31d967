package aws

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	sptypes "github.com/aws/aws-sdk-go-v2/service/savingsplans/types"
	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/providers"
	"github.com/gpufinops/gpufinops/providers/aws/sim"
)

// --- a fake of the three price APIs, in their real wire formats ---

// fakeSpot is one spot price change.
type fakeSpot struct {
	typ, zone, price string
	at               time.Time
}

// fakeRate is one Savings Plans offering rate.
type fakeRate struct {
	typ, region, plan, payment string
	seconds                    int64
	rate                       string
	operation, usageType       string
	productDescription         string
	tenancy                    string
}

// fakePriceAPIs answers GetProducts (AWS JSON 1.1), DescribeSpotPriceHistory
// (EC2 query, XML) and DescribeSavingsPlansOfferingRates (REST JSON).
type fakePriceAPIs struct {
	mu       sync.Mutex
	calls    map[string]int
	products map[string][]string // region → Price List documents
	spot     []fakeSpot
	rates    []fakeRate
	// fail answers an operation with an error code.
	fail map[string]string
	// ratesPage forces the Savings Plans page size (to exercise nextToken).
	ratesPage int
	// lastProductFilters records the last GetProducts filters.
	lastProductFilters map[string]string
}

func newFakePriceAPIs() *fakePriceAPIs {
	return &fakePriceAPIs{calls: map[string]int{}, products: map[string][]string{}, fail: map[string]string{}}
}

func (f *fakePriceAPIs) count(op string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[op]
}

func (f *fakePriceAPIs) total() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.calls {
		n += c
	}
	return n
}

func (f *fakePriceAPIs) setFail(op, code string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if code == "" {
		delete(f.fail, op)
	} else {
		f.fail[op] = code
	}
}

var scopeRegion = regexp.MustCompile(`Credential=[^/]+/\d{8}/([a-z0-9-]+)/`)

func (f *fakePriceAPIs) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	region := "us-east-1"
	if m := scopeRegion.FindStringSubmatch(r.Header.Get("Authorization")); m != nil {
		region = m[1]
	}
	var op string
	switch {
	case r.Header.Get("X-Amz-Target") == "AWSPriceListService.GetProducts":
		op = "GetProducts"
	case r.URL.Path == "/DescribeSavingsPlansOfferingRates":
		op = "DescribeSavingsPlansOfferingRates"
	default:
		form, _ := url.ParseQuery(string(body))
		op = form.Get("Action")
	}
	f.mu.Lock()
	f.calls[op]++
	code := f.fail[op]
	f.mu.Unlock()
	switch op {
	case "GetProducts":
		if code != "" {
			w.Header().Set("Content-Type", "application/x-amz-json-1.1")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"__type":%q,"message":"simulated %s"}`, code, code)
			return
		}
		f.getProducts(w, body)
	case "DescribeSavingsPlansOfferingRates":
		if code != "" {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("X-Amzn-ErrorType", code)
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"message":"simulated %s"}`, code)
			return
		}
		f.offeringRates(w, body)
	case "DescribeSpotPriceHistory":
		if code != "" {
			w.Header().Set("Content-Type", "text/xml")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `<Response><Errors><Error><Code>%s</Code><Message>simulated</Message></Error></Errors><RequestID>x</RequestID></Response>`, code)
			return
		}
		form, _ := url.ParseQuery(string(body))
		f.spotHistory(w, form, region)
	default:
		http.Error(w, "unexpected "+op, http.StatusBadRequest)
	}
}

func (f *fakePriceAPIs) getProducts(w http.ResponseWriter, body []byte) {
	var in struct {
		Filters    []struct{ Field, Type, Value string }
		MaxResults int
		NextToken  string
	}
	if err := json.Unmarshal(body, &in); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	filters := map[string]string{}
	for _, fl := range in.Filters {
		filters[fl.Field] = fl.Value
	}
	f.mu.Lock()
	f.lastProductFilters = filters
	docs := f.products[filters["regionCode"]]
	f.mu.Unlock()
	var match []string
	for _, d := range docs {
		var p priceListProduct
		_ = json.Unmarshal([]byte(d), &p)
		keep := true
		for k, v := range filters {
			if a, ok := p.Product.Attributes[k]; ok && a != v {
				keep = false
			}
		}
		if keep {
			match = append(match, d)
		}
	}
	off, _ := strconv.Atoi(in.NextToken)
	size := in.MaxResults
	if size <= 0 {
		size = 100
	}
	end := min(off+size, len(match))
	out := map[string]any{"FormatVersion": "aws_v1", "PriceList": match[off:end]}
	if end < len(match) {
		out["NextToken"] = strconv.Itoa(end)
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	_ = json.NewEncoder(w).Encode(out)
}

type spotItemXML struct {
	InstanceType       string `xml:"instanceType"`
	ProductDescription string `xml:"productDescription"`
	SpotPrice          string `xml:"spotPrice"`
	Timestamp          string `xml:"timestamp"`
	AvailabilityZone   string `xml:"availabilityZone"`
}

func (f *fakePriceAPIs) spotHistory(w http.ResponseWriter, form url.Values, region string) {
	wanted := map[string]bool{}
	for k, v := range form {
		if strings.HasPrefix(k, "InstanceType.") {
			wanted[v[0]] = true
		}
	}
	start, _ := time.Parse(time.RFC3339, form.Get("StartTime"))
	end, _ := time.Parse(time.RFC3339, form.Get("EndTime"))
	// Points in the window plus, per series, the last one before it.
	lastBefore := map[string]fakeSpot{}
	var items []fakeSpot
	f.mu.Lock()
	for _, s := range f.spot {
		if !strings.HasPrefix(s.zone, region) || !wanted[s.typ] || s.at.After(end) {
			continue
		}
		if s.at.Before(start) {
			k := s.typ + "/" + s.zone
			if cur, ok := lastBefore[k]; !ok || s.at.After(cur.at) {
				lastBefore[k] = s
			}
			continue
		}
		items = append(items, s)
	}
	f.mu.Unlock()
	for _, s := range lastBefore {
		items = append(items, s)
	}
	sort.SliceStable(items, func(i, j int) bool {
		if !items[i].at.Equal(items[j].at) {
			return items[i].at.After(items[j].at)
		}
		return items[i].zone+items[i].typ < items[j].zone+items[j].typ
	})
	off, _ := strconv.Atoi(form.Get("NextToken"))
	size, _ := strconv.Atoi(form.Get("MaxResults"))
	if size <= 0 {
		size = 1000
	}
	end2 := min(off+size, len(items))
	type resp struct {
		XMLName   xml.Name      `xml:"DescribeSpotPriceHistoryResponse"`
		Xmlns     string        `xml:"xmlns,attr"`
		RequestID string        `xml:"requestId"`
		Items     []spotItemXML `xml:"spotPriceHistorySet>item"`
		NextToken string        `xml:"nextToken,omitempty"`
	}
	out := resp{Xmlns: "http://ec2.amazonaws.com/doc/2016-11-15/", RequestID: "req"}
	for _, s := range items[off:end2] {
		out.Items = append(out.Items, spotItemXML{s.typ, "Linux/UNIX", s.price, s.at.UTC().Format("2006-01-02T15:04:05.000Z"), s.zone})
	}
	if end2 < len(items) {
		out.NextToken = strconv.Itoa(end2)
	}
	w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
	_ = xml.NewEncoder(w).Encode(out)
}

func (f *fakePriceAPIs) offeringRates(w http.ResponseWriter, body []byte) {
	var in struct {
		Filters []struct {
			Name   string   `json:"name"`
			Values []string `json:"values"`
		} `json:"filters"`
		SavingsPlanTypes          []string `json:"savingsPlanTypes"`
		SavingsPlanPaymentOptions []string `json:"savingsPlanPaymentOptions"`
		MaxResults                int      `json:"maxResults"`
		NextToken                 string   `json:"nextToken"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	has := func(list []string, v string) bool { return len(list) == 0 || inList(list, v) }
	filter := map[string][]string{}
	for _, fl := range in.Filters {
		filter[fl.Name] = fl.Values
	}
	var match []map[string]any
	f.mu.Lock()
	for _, r := range f.rates {
		if !has(in.SavingsPlanTypes, r.plan) || !has(in.SavingsPlanPaymentOptions, r.payment) ||
			!has(filter["region"], r.region) || !has(filter["instanceType"], r.typ) {
			continue
		}
		props := []map[string]string{{"name": "region", "value": r.region}, {"name": "instanceType", "value": r.typ}, {"name": "instanceFamily", "value": strings.Split(r.typ, ".")[0]}}
		if r.productDescription != "" {
			props = append(props, map[string]string{"name": "productDescription", "value": r.productDescription})
		}
		if r.tenancy != "" {
			props = append(props, map[string]string{"name": "tenancy", "value": r.tenancy})
		}
		match = append(match, map[string]any{
			"rate": r.rate, "unit": "Hrs", "usageType": r.usageType, "operation": r.operation,
			"productType": "EC2", "serviceCode": "AmazonEC2", "properties": props,
			"savingsPlanOffering": map[string]any{
				"offeringId": "off-" + r.plan, "planType": r.plan, "paymentOption": r.payment,
				"durationSeconds": r.seconds, "currency": "USD", "planDescription": r.plan + " plan",
			},
		})
	}
	size := f.ratesPage
	f.mu.Unlock()
	if size <= 0 {
		size = in.MaxResults
	}
	off, _ := strconv.Atoi(in.NextToken)
	end := min(off+size, len(match))
	out := map[string]any{"searchResults": match[off:end]}
	if end < len(match) {
		out["nextToken"] = strconv.Itoa(end)
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

func inList(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// productDoc is a Price List document shaped like AWS's: one OnDemand term
// (an hourly rate) and two Reserved terms (hourly plus upfront), which must
// be ignored.
func productDoc(region, typ, onDemand string, attrs map[string]string) string {
	sku := strings.ToUpper(strings.NewReplacer(".", "", "-", "").Replace(typ + region))
	a := map[string]string{
		"instanceType": typ, "regionCode": region, "location": "Somewhere", "operatingSystem": "Linux",
		"tenancy": "Shared", "preInstalledSw": "NA", "capacitystatus": "Used", "marketoption": "OnDemand",
		"licenseModel": "No License required", "operation": "RunInstances", "usagetype": "BoxUsage:" + typ,
		"servicecode": "AmazonEC2", "vcpu": "4", "gpu": "1",
	}
	for k, v := range attrs {
		if v == "" {
			delete(a, k)
		} else {
			a[k] = v
		}
	}
	doc := map[string]any{
		"product":     map[string]any{"productFamily": "Compute Instance", "sku": sku, "attributes": a},
		"serviceCode": "AmazonEC2",
		"terms": map[string]any{
			"OnDemand": map[string]any{
				sku + ".JRTCKXETXF": map[string]any{
					"offerTermCode": "JRTCKXETXF", "sku": sku, "effectiveDate": "2026-11-01T00:00:00Z", "termAttributes": map[string]any{},
					"priceDimensions": map[string]any{
						sku + ".JRTCKXETXF.6YS6EN2CT7": map[string]any{
							"unit": "Hrs", "endRange": "Inf", "beginRange": "0", "rateCode": sku + ".JRTCKXETXF.6YS6EN2CT7",
							"description":  "$" + onDemand + " per On Demand Linux " + typ + " Instance Hour",
							"pricePerUnit": map[string]string{"USD": onDemand},
						},
					},
				},
			},
			"Reserved": map[string]any{
				sku + ".38NPMPTW36": map[string]any{
					"offerTermCode": "38NPMPTW36", "sku": sku, "effectiveDate": "2026-11-01T00:00:00Z",
					"termAttributes": map[string]string{"LeaseContractLength": "3yr", "OfferingClass": "standard", "PurchaseOption": "Partial Upfront"},
					"priceDimensions": map[string]any{
						sku + ".38NPMPTW36.2TG2D8R56U": map[string]any{"unit": "Quantity", "description": "Upfront Fee", "pricePerUnit": map[string]string{"USD": "9999"}},
						sku + ".38NPMPTW36.6YS6EN2CT7": map[string]any{"unit": "Hrs", "description": "Linux reserved", "pricePerUnit": map[string]string{"USD": "0.0001"}},
					},
				},
				sku + ".4NA7Y494T4": map[string]any{
					"offerTermCode": "4NA7Y494T4", "sku": sku, "effectiveDate": "2026-11-01T00:00:00Z",
					"termAttributes": map[string]string{"LeaseContractLength": "1yr", "OfferingClass": "standard", "PurchaseOption": "No Upfront"},
					"priceDimensions": map[string]any{
						sku + ".4NA7Y494T4.6YS6EN2CT7": map[string]any{"unit": "Hrs", "description": "Linux reserved", "pricePerUnit": map[string]string{"USD": "0.0002"}},
					},
				},
			},
		},
		"version":         "20261101000000",
		"publicationDate": "2026-11-01T00:00:00Z",
	}
	b, _ := json.Marshal(doc)
	return string(b)
}

// reservedOnlyDoc is a product whose only terms are reserved.
func reservedOnlyDoc(region, typ string) string {
	var d map[string]any
	_ = json.Unmarshal([]byte(productDoc(region, typ, "1", nil)), &d)
	delete(d["terms"].(map[string]any), "OnDemand")
	b, _ := json.Marshal(d)
	return string(b)
}

// Linux, shared tenancy, no upfront: the rates that count.
func linuxRate(region, typ, plan string, seconds int64, rate string) fakeRate {
	return fakeRate{typ: typ, region: region, plan: plan, payment: "No Upfront", seconds: seconds, rate: rate,
		operation: "RunInstances", usageType: "USW2-BoxUsage:" + typ, productDescription: "Linux/UNIX", tenancy: "shared"}
}

// --- providers over the fake ---

var priceNow = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// priceClock is a settable clock.
type priceClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *priceClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *priceClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// priceProvider is a Provider on the given endpoint with one or more
// accounts, no retries.
func priceProvider(endpoint string, opts providers.Options, labels ...string) *Provider {
	if len(labels) == 0 {
		labels = []string{"default"}
	}
	opts.Endpoint = endpoint
	if opts.Now == nil {
		opts.Now = func() time.Time { return priceNow }
	}
	p := &Provider{opts: opts, ec2s: map[string]*ec2.Client{}, cws: map[string]*cloudwatch.Client{}, typeMap: map[string]*typeEntry{}}
	for i, l := range labels {
		p.accounts = append(p.accounts, &account{label: l, id: fmt.Sprintf("11112222333%d", i), cfg: aws.Config{
			Region:       "us-east-1",
			Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
			BaseEndpoint: aws.String(endpoint),
			Retryer:      func() aws.Retryer { return retry.AddWithMaxAttempts(retry.NewStandard(), 1) },
		}})
	}
	return p
}

func priceScope(region string) providers.Scope {
	return providers.Scope{Provider: fleet.AWS, Account: "111122223330", Region: region, Profile: "default"}
}

// standardFake serves three GPU types in us-west-2: on-demand for all,
// spot in two or three zones, Savings Plans rates.
func standardFake() *fakePriceAPIs {
	f := newFakePriceAPIs()
	r := "us-west-2"
	f.products[r] = []string{
		productDoc(r, "g5.xlarge", "1.0060000000", nil),
		productDoc(r, "p5.48xlarge", "98.3200000000", nil),
		productDoc(r, "g6.xlarge", "0.8048000000", nil),
		// Noise the filters or the parser must drop.
		productDoc(r, "g5.xlarge", "2.0000000000", map[string]string{"operatingSystem": "Windows", "operation": "RunInstances:0002"}),
		productDoc(r, "g5.xlarge", "0.0000000000", map[string]string{"capacitystatus": "UnusedCapacityReservation"}),
		productDoc(r, "m5.large", "0.0960000000", nil),
		reservedOnlyDoc(r, "p4d.24xlarge"),
	}
	f.products["us-east-1"] = []string{productDoc("us-east-1", "g5.xlarge", "1.0060000000", nil)}
	day := 24 * time.Hour
	f.spot = []fakeSpot{
		// g5.xlarge: us-west-2a is now cheapest; 2b was cheapest until 5 days ago.
		{"g5.xlarge", "us-west-2a", "0.4000", priceNow.Add(-40 * day)}, // before the window: holds from its start
		{"g5.xlarge", "us-west-2a", "0.5000", priceNow.Add(-20 * day)},
		{"g5.xlarge", "us-west-2a", "0.3000", priceNow.Add(-10 * day)},
		{"g5.xlarge", "us-west-2b", "0.2500", priceNow.Add(-25 * day)},
		{"g5.xlarge", "us-west-2b", "0.3500", priceNow.Add(-5 * day)},
		{"g5.xlarge", "us-west-2c", "0.6000", priceNow.Add(-2 * day)},
		// p5: one zone, one point.
		{"p5.48xlarge", "us-west-2b", "40.1234", priceNow.Add(-3 * day)},
		// other regions and types are not asked for
		{"g5.xlarge", "us-east-1a", "0.1000", priceNow.Add(-1 * day)},
		{"m5.large", "us-west-2a", "0.0300", priceNow.Add(-1 * day)},
	}
	f.rates = []fakeRate{
		linuxRate(r, "g5.xlarge", "Compute", year1, "0.7400"),
		linuxRate(r, "g5.xlarge", "Compute", year3, "0.5100"),
		linuxRate(r, "g5.xlarge", "EC2Instance", year1, "0.6300"),
		linuxRate(r, "g5.xlarge", "EC2Instance", year3, "0.4300"),
		// p5: only an EC2 Instance plan for 3y.
		linuxRate(r, "p5.48xlarge", "EC2Instance", year3, "55.0000"),
		// noise: Windows, dedicated, all upfront, another region
		{typ: "g5.xlarge", region: r, plan: "Compute", payment: "No Upfront", seconds: year1, rate: "1.1", operation: "RunInstances:0002", usageType: "USW2-BoxUsage:g5.xlarge", productDescription: "Windows", tenancy: "shared"},
		{typ: "g5.xlarge", region: r, plan: "Compute", payment: "No Upfront", seconds: year1, rate: "0.01", operation: "RunInstances", usageType: "USW2-DedicatedUsage:g5.xlarge", productDescription: "Linux/UNIX", tenancy: "dedicated"},
		{typ: "g5.xlarge", region: r, plan: "Compute", payment: "All Upfront", seconds: year1, rate: "0.02", operation: "RunInstances", usageType: "USW2-BoxUsage:g5.xlarge", productDescription: "Linux/UNIX", tenancy: "shared"},
		linuxRate("us-east-1", "g5.xlarge", "Compute", year1, "0.0300"),
	}
	f.ratesPage = 2 // make the client follow nextToken
	return f
}

func pricesByKey(ps []pricing.Price) map[string]pricing.Price {
	out := map[string]pricing.Price{}
	for _, p := range ps {
		out[p.InstanceType+"/"+string(p.Option)] = p
	}
	return out
}

func mustDec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// --- parsing ---

func TestOnDemandFromPriceList(t *testing.T) {
	r := "us-west-2"
	docs := []string{
		productDoc(r, "g5.xlarge", "1.0060000000", nil),
		reservedOnlyDoc(r, "p4d.24xlarge"),
		productDoc("eu-west-1", "g6.xlarge", "0.9", nil),
		productDoc(r, "g6.xlarge", "0.8048000000", map[string]string{"tenancy": "Dedicated"}),
		productDoc(r, "g6.xlarge", "0.0000000000", nil),
		productDoc(r, "p5.48xlarge", "99", map[string]string{"operation": "RunInstances:0004"}),
		productDoc(r, "p5.48xlarge", "98.32", nil),
		productDoc(r, "p5.48xlarge", "97", map[string]string{"operation": "RunInstances:0800"}),
		"{broken",
	}
	got, err := onDemandFromPriceList(docs, r, []string{"g5.xlarge", "g6.xlarge", "p4d.24xlarge", "p5.48xlarge"}, priceNow)
	if err != nil {
		t.Fatal(err)
	}
	m := pricesByKey(got)
	if len(got) != 2 {
		t.Errorf("got %d prices, want 2 (g5, p5): %+v", len(got), got)
	}
	g5 := m["g5.xlarge/on-demand"]
	if !g5.Hourly.Equal(mustDec("1.006")) || g5.Region != r || g5.Currency != "USD" || g5.Unit != "hour" || g5.AsOf != "2026-12-01" ||
		g5.Provider != fleet.AWS || !strings.Contains(g5.Source, "GetProducts") || !strings.Contains(g5.Source, "live") {
		t.Errorf("g5 = %+v", g5)
	}
	if p5 := m["p5.48xlarge/on-demand"]; !p5.Hourly.Equal(mustDec("98.32")) {
		t.Errorf("p5 = %s; want the plain RunInstances product's 98.32", p5.Hourly)
	}
	if _, ok := m["p4d.24xlarge/on-demand"]; ok {
		t.Error("a product with reserved terms only got an on-demand price")
	}
	if _, ok := m["g6.xlarge/on-demand"]; ok {
		t.Error("g6 priced from a dedicated, zero or foreign-region row")
	}

	if _, err := onDemandFromPriceList([]string{"{", "[]x"}, r, []string{"g5.xlarge"}, priceNow); err == nil || strings.Contains(err.Error(), "\n") {
		t.Errorf("all documents broken: err = %v; want a one-line error", err)
	}
	if got, err := onDemandFromPriceList(nil, r, []string{"g5.xlarge"}, priceNow); err != nil || len(got) != 0 {
		t.Errorf("no documents = %v, %v", got, err)
	}
}

func TestSpotByZone(t *testing.T) {
	start := priceNow.Add(-30 * 24 * time.Hour)
	day := 24 * time.Hour
	zones := spotByZone(map[string][]spotPoint{
		"us-west-2a": {
			{priceNow.Add(-10 * day), mustDec("0.3")},
			{priceNow.Add(-40 * day), mustDec("0.4")},
			{priceNow.Add(-50 * day), mustDec("9")}, // superseded before the window
			{priceNow.Add(-20 * day), mustDec("0.5")},
		},
		"us-west-2b": {{priceNow.Add(-3 * day), mustDec("0.25")}},
		"us-west-2c": {{priceNow, mustDec("0.7")}},
	}, start, priceNow)
	if len(zones) != 3 {
		t.Fatalf("zones = %+v", zones)
	}
	a := zones[0]
	// 0.4 for 10 days, 0.5 for 10 days, 0.3 for 10 days.
	if a.zone != "us-west-2a" || !a.current.Equal(mustDec("0.3")) || !a.min.Equal(mustDec("0.3")) || !a.max.Equal(mustDec("0.5")) || !a.avg.Equal(mustDec("0.4")) || a.points != 3 {
		t.Errorf("2a = %+v", a)
	}
	if b := zones[1]; !b.current.Equal(mustDec("0.25")) || !b.avg.Equal(mustDec("0.25")) || b.points != 1 {
		t.Errorf("2b = %+v", b)
	}
	if c := zones[2]; !c.current.Equal(mustDec("0.7")) || !c.avg.Equal(mustDec("0.7")) || !c.min.Equal(mustDec("0.7")) {
		t.Errorf("2c (one point at the end) = %+v", c)
	}
}

func TestSpotMedian(t *testing.T) {
	start := priceNow.Add(-30 * 24 * time.Hour)
	day := 24 * time.Hour
	for _, tc := range []struct {
		name   string
		zones  map[string][]spotPoint
		median string
	}{
		{"one zone, one price", map[string][]spotPoint{"a": {{priceNow.Add(-40 * day), mustDec("0.4")}}}, "0.4"},
		{"time-weighted, not by points", map[string][]spotPoint{
			"a": {{priceNow.Add(-30 * day), mustDec("0.1")}, {priceNow.Add(-29 * day), mustDec("0.2")}, {priceNow.Add(-28 * day), mustDec("0.9")}},
		}, "0.9"},
		{"over the zones: 0.4 for 10 days, 0.5 for 10, 0.3 for 10, 0.25 for 3", map[string][]spotPoint{
			"us-west-2a": {{priceNow.Add(-10 * day), mustDec("0.3")}, {priceNow.Add(-40 * day), mustDec("0.4")}, {priceNow.Add(-50 * day), mustDec("9")}, {priceNow.Add(-20 * day), mustDec("0.5")}},
			"us-west-2b": {{priceNow.Add(-3 * day), mustDec("0.25")}},
			"us-west-2c": {{priceNow, mustDec("0.7")}},
		}, "0.4"},
		{"a dear zone most of the month pulls it up", map[string][]spotPoint{
			"a": {{priceNow.Add(-30 * day), mustDec("0.2")}},
			"b": {{priceNow.Add(-30 * day), mustDec("1.0")}},
			"c": {{priceNow.Add(-30 * day), mustDec("1.0")}},
		}, "1"},
		{"no time held: the zones' latest prices", map[string][]spotPoint{
			"a": {{priceNow, mustDec("0.7")}}, "b": {{priceNow, mustDec("0.5")}}, "c": {{priceNow, mustDec("0.9")}},
		}, "0.7"},
	} {
		if got := spotMedian(tc.zones, start, priceNow); !got.Equal(mustDec(tc.median)) {
			t.Errorf("%s: median %s, want %s", tc.name, got, tc.median)
		}
	}
}

func TestUsableRate(t *testing.T) {
	r := "us-west-2"
	good := linuxRate(r, "g5.xlarge", "Compute", year1, "0.74")
	for name, tc := range map[string]struct {
		mutate func(*fakeRate)
		ok     bool
		term   pricing.Option
	}{
		"linux 1y":           {func(*fakeRate) {}, true, pricing.SavingsPlan1y},
		"linux 3y":           {func(f *fakeRate) { f.seconds = year3 }, true, pricing.SavingsPlan3y},
		"odd duration":       {func(f *fakeRate) { f.seconds = 2 * year1 }, false, ""},
		"windows":            {func(f *fakeRate) { f.operation, f.productDescription = "RunInstances:0002", "Windows" }, false, ""},
		"dedicated":          {func(f *fakeRate) { f.usageType, f.tenancy = "USW2-DedicatedUsage:g5.xlarge", "dedicated" }, false, ""},
		"partial upfront":    {func(f *fakeRate) { f.payment = "Partial Upfront" }, false, ""},
		"other region":       {func(f *fakeRate) { f.region = "eu-west-1" }, false, ""},
		"zero":               {func(f *fakeRate) { f.rate = "0" }, false, ""},
		"sagemaker plan":     {func(f *fakeRate) { f.plan = "SageMaker" }, false, ""},
		"sparse but enough":  {func(f *fakeRate) { f.operation, f.usageType, f.productDescription, f.tenancy = "", "", "", "" }, true, pricing.SavingsPlan1y},
		"garbage rate":       {func(f *fakeRate) { f.rate = "n/a" }, false, ""},
		"no instance type":   {func(f *fakeRate) { f.typ = "" }, false, ""},
		"default tenancy ok": {func(f *fakeRate) { f.tenancy = "default" }, true, pricing.SavingsPlan1y},
	} {
		fr := good
		tc.mutate(&fr)
		sr, ok := usableRate(toSDKRate(fr), r)
		if ok != tc.ok || (ok && (sr.term != tc.term || sr.typ != "g5.xlarge")) {
			t.Errorf("%s: usableRate = %+v, %v; want ok=%v term %s", name, sr, ok, tc.ok, tc.term)
		}
	}
}

// toSDKRate is the SDK's view of a fake rate.
func toSDKRate(fr fakeRate) sptypes.SavingsPlanOfferingRate {
	props := []sptypes.SavingsPlanOfferingRateProperty{
		{Name: aws.String("region"), Value: aws.String(fr.region)},
		{Name: aws.String("instanceType"), Value: aws.String(fr.typ)},
	}
	if fr.productDescription != "" {
		props = append(props, sptypes.SavingsPlanOfferingRateProperty{Name: aws.String("productDescription"), Value: aws.String(fr.productDescription)})
	}
	if fr.tenancy != "" {
		props = append(props, sptypes.SavingsPlanOfferingRateProperty{Name: aws.String("tenancy"), Value: aws.String(fr.tenancy)})
	}
	return sptypes.SavingsPlanOfferingRate{
		Rate: aws.String(fr.rate), Unit: sptypes.SavingsPlanRateUnitHours,
		Operation: aws.String(fr.operation), UsageType: aws.String(fr.usageType),
		ProductType: sptypes.SavingsPlanProductTypeEc2, ServiceCode: sptypes.SavingsPlanRateServiceCodeEc2,
		Properties: props,
		SavingsPlanOffering: &sptypes.ParentSavingsPlanOffering{
			PlanType: sptypes.SavingsPlanType(fr.plan), PaymentOption: sptypes.SavingsPlanPaymentOption(fr.payment),
			DurationSeconds: fr.seconds, Currency: sptypes.CurrencyCodeUsd,
		},
	}
}

// --- ReadPrices over the wire ---

func TestReadPricesWire(t *testing.T) {
	f := standardFake()
	srv := httptest.NewServer(f)
	defer srv.Close()
	p := priceProvider(srv.URL, providers.Options{})

	got, err := p.ReadPrices(context.Background(), priceScope("us-west-2"), []string{"p5.48xlarge", "g5.xlarge", "g5.xlarge", "g6.xlarge", "p4d.24xlarge"})
	if err != nil {
		t.Fatal(err)
	}
	m := pricesByKey(got)
	want := map[string]string{
		"g5.xlarge/on-demand":         "1.006",
		"g5.xlarge/spot":              "0.3",
		"g5.xlarge/savings-plan-1y":   "0.74",
		"g5.xlarge/savings-plan-3y":   "0.51",
		"g6.xlarge/on-demand":         "0.8048",
		"p5.48xlarge/on-demand":       "98.32",
		"p5.48xlarge/spot":            "40.1234",
		"p5.48xlarge/savings-plan-3y": "55",
	}
	if len(got) != len(want) {
		t.Errorf("got %d prices, want %d: %v", len(got), len(want), priceKeys(m))
	}
	for k, v := range want {
		if p, ok := m[k]; !ok || !p.Hourly.Equal(mustDec(v)) {
			t.Errorf("%s = %s, %v; want %s", k, p.Hourly, ok, v)
		}
	}
	for _, pr := range got {
		if pr.Provider != fleet.AWS || pr.Region != "us-west-2" || pr.Currency != "USD" || pr.Unit != "hour" || pr.AsOf != "2026-12-01" || !strings.Contains(pr.Source, "live") {
			t.Errorf("price lacks its provenance: %+v", pr)
		}
	}
	// Spot: the cheapest zone now, with that zone's 30 days.
	s := m["g5.xlarge/spot"]
	if s.Zone != "us-west-2a" || s.History == nil || !s.History.Min.Equal(mustDec("0.3")) || !s.History.Max.Equal(mustDec("0.5")) ||
		!s.History.Avg.Equal(mustDec("0.4")) || s.History.Since != "2026-11-01" || s.History.Until != "2026-12-01" {
		t.Errorf("g5 spot = %+v %+v", s, s.History)
	}
	// 0.25 held 20 zone-days, 0.3 10, 0.35 5, 0.4 10, 0.5 10, 0.6 2: the
	// 28.5th of 57 zone-days is at 0.3.
	if !s.History.Median.Equal(mustDec("0.3")) || s.History.Zones != 3 || !strings.Contains(s.Source, "median over the zones and the window 0.3") {
		t.Errorf("g5 spot median = %s over %d zones (%q), want 0.3 over 3", s.History.Median, s.History.Zones, s.Source)
	}
	if !strings.Contains(s.Source, "DescribeSpotPriceHistory") || !strings.Contains(s.Source, "cheapest of 3 zones; 30-day min 0.3, avg 0.4, max 0.5") {
		t.Errorf("g5 spot source = %q", s.Source)
	}
	// Savings Plans: Compute first; EC2 Instance where it is the only one.
	if src := m["g5.xlarge/savings-plan-1y"].Source; !strings.Contains(src, "Compute Savings Plan 1y No Upfront") || !strings.Contains(src, "EC2 Instance Savings Plan: 0.63") {
		t.Errorf("g5 1y source = %q", src)
	}
	if src := m["p5.48xlarge/savings-plan-3y"].Source; !strings.Contains(src, "EC2 Instance Savings Plan 3y No Upfront") {
		t.Errorf("p5 3y source = %q", src)
	}
	// Calls: one GetProducts per type (4 types), one spot query, the
	// Savings Plans pages (7 matching rows, 2 a page).
	if n := f.count("GetProducts"); n != 4 {
		t.Errorf("GetProducts calls = %d; want 4 (one per type)", n)
	}
	if n := f.count("DescribeSpotPriceHistory"); n != 1 {
		t.Errorf("DescribeSpotPriceHistory calls = %d; want 1", n)
	}
	if n := f.count("DescribeSavingsPlansOfferingRates"); n != 4 {
		t.Errorf("DescribeSavingsPlansOfferingRates calls = %d; want 4 (7 rows, 2 a page)", n)
	}
	// The query pins Linux on-demand rows.
	for k, v := range map[string]string{"regionCode": "us-west-2", "operatingSystem": "Linux", "tenancy": "Shared", "preInstalledSw": "NA", "capacitystatus": "Used", "marketoption": "OnDemand"} {
		if f.lastProductFilters[k] != v {
			t.Errorf("GetProducts filter %s = %q; want %q", k, f.lastProductFilters[k], v)
		}
	}
	if f.lastProductFilters["instanceType"] == "" {
		t.Error("per-type GetProducts without an instanceType filter")
	}
}

func priceKeys(m map[string]pricing.Price) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestReadPricesManyTypesBounded(t *testing.T) {
	f := newFakePriceAPIs()
	r := "us-east-1"
	var types []string
	for i := range 50 {
		typ := fmt.Sprintf("g%d.%dxlarge", 5+i%3, i+1)
		types = append(types, typ)
		f.products[r] = append(f.products[r], productDoc(r, typ, fmt.Sprintf("%d.5", i+1), nil))
		f.spot = append(f.spot, fakeSpot{typ, r + "a", "0.5", priceNow.Add(-time.Hour)})
		f.rates = append(f.rates, linuxRate(r, typ, "Compute", year1, "0.9"))
	}
	for i := range 230 { // the rest of the region's list: CPU types
		f.products[r] = append(f.products[r], productDoc(r, fmt.Sprintf("m%d.large", i), "0.1", nil))
	}
	srv := httptest.NewServer(f)
	defer srv.Close()
	got, err := priceProvider(srv.URL, providers.Options{}).ReadPrices(context.Background(), priceScope(r), types)
	if err != nil {
		t.Fatal(err)
	}
	m := pricesByKey(got)
	for i, typ := range types {
		if p, ok := m[typ+"/on-demand"]; !ok || !p.Hourly.Equal(mustDec(fmt.Sprintf("%d.5", i+1))) {
			t.Errorf("%s on-demand = %v, %v", typ, p.Hourly, ok)
		}
	}
	if len(got) != 150 {
		t.Errorf("%d prices; want 150 (on-demand, spot, 1y for 50 types)", len(got))
	}
	// One region-wide query: 280 products in pages of 100.
	if n := f.count("GetProducts"); n != 3 {
		t.Errorf("GetProducts calls for 50 types = %d; want 3 (pages of the region's list)", n)
	}
	if f.lastProductFilters["instanceType"] != "" {
		t.Error("the region-wide query filtered on one instance type")
	}
	if n := f.count("DescribeSpotPriceHistory"); n != 1 {
		t.Errorf("DescribeSpotPriceHistory calls = %d; want 1", n)
	}
	if n := f.count("DescribeSavingsPlansOfferingRates"); n != 1 {
		t.Errorf("DescribeSavingsPlansOfferingRates calls = %d; want 1", n)
	}
}

func TestReadPricesCache(t *testing.T) {
	f := standardFake()
	srv := httptest.NewServer(f)
	defer srv.Close()
	clk := &priceClock{t: priceNow}
	dir := t.TempDir()
	p := priceProvider(srv.URL, providers.Options{CacheDir: dir, CacheTTL: 24 * time.Hour, Now: clk.now})
	types := []string{"g5.xlarge", "p5.48xlarge"}
	ctx := context.Background()

	first, err := p.ReadPrices(ctx, priceScope("us-west-2"), types)
	if err != nil {
		t.Fatal(err)
	}
	calls := f.total()
	if calls == 0 {
		t.Fatal("no API calls on a cold cache")
	}
	for _, pr := range first {
		if strings.Contains(pr.Source, "cached") {
			t.Errorf("a fresh price says cached: %q", pr.Source)
		}
	}

	// A hit: no calls, the same prices, marked cached, AsOf kept.
	clk.add(6 * time.Hour)
	second, err := p.ReadPrices(ctx, priceScope("us-west-2"), []string{"p5.48xlarge", "g5.xlarge"})
	if err != nil {
		t.Fatal(err)
	}
	if n := f.total(); n != calls {
		t.Errorf("%d API calls on a warm cache; want none", n-calls)
	}
	if len(second) != len(first) {
		t.Fatalf("cached %d prices, live %d", len(second), len(first))
	}
	for i := range first {
		a, b := first[i], second[i]
		if !a.Hourly.Equal(b.Hourly) || a.Option != b.Option || a.Zone != b.Zone || b.AsOf != "2026-12-01" || b.Source != a.Source+" (cached 2026-12-01)" {
			t.Errorf("cached %+v; live %+v", b, a)
		}
	}
	// Another region is another key.
	if _, err := p.ReadPrices(ctx, priceScope("us-east-1"), types); err != nil {
		t.Fatal(err)
	}
	if f.total() == calls {
		t.Error("another region was served from this region's cache")
	}
	calls = f.total()

	// Expired: refreshed.
	clk.add(24 * time.Hour)
	third, err := p.ReadPrices(ctx, priceScope("us-west-2"), types)
	if err != nil {
		t.Fatal(err)
	}
	if f.total() == calls {
		t.Error("no API calls after the TTL")
	}
	for _, pr := range third {
		if strings.Contains(pr.Source, "cached") || pr.AsOf != "2026-12-02" {
			t.Errorf("refreshed price = %+v", pr)
		}
	}

	// Expired and the APIs fail: the stale prices, saying so, no error.
	clk.add(48 * time.Hour)
	f.setFail("GetProducts", "AccessDeniedException")
	f.setFail("DescribeSpotPriceHistory", "UnauthorizedOperation")
	f.setFail("DescribeSavingsPlansOfferingRates", "AccessDeniedException")
	stale, err := p.ReadPrices(ctx, priceScope("us-west-2"), types)
	if err != nil {
		t.Fatalf("stale fallback failed: %v", err)
	}
	if len(stale) != len(third) {
		t.Fatalf("stale %d prices; want %d", len(stale), len(third))
	}
	for _, pr := range stale {
		if !strings.HasSuffix(pr.Source, " (cached 2026-12-02, stale, refresh failed)") || pr.AsOf != "2026-12-02" {
			t.Errorf("stale price = %+v", pr)
		}
	}

	// Without any entry, the failure is the error.
	_, err = p.ReadPrices(ctx, priceScope("us-west-2"), []string{"g6.xlarge"})
	if !errors.Is(err, providers.ErrPermission) {
		t.Errorf("err = %v; want ErrPermission", err)
	}
}

func TestReadPricesErrors(t *testing.T) {
	f := standardFake()
	f.setFail("DescribeSavingsPlansOfferingRates", "AccessDeniedException")
	srv := httptest.NewServer(f)
	defer srv.Close()
	p := priceProvider(srv.URL, providers.Options{})
	_, err := p.ReadPrices(context.Background(), priceScope("us-west-2"), []string{"g5.xlarge"})
	if !errors.Is(err, providers.ErrPermission) {
		t.Fatalf("err = %v; want ErrPermission", err)
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") || !strings.Contains(msg, "aws us-west-2 live prices: Savings Plans rates") {
		t.Errorf("error = %q; want one line naming the region and the API", msg)
	}

	f.setFail("GetProducts", "ThrottlingException")
	_, err = p.ReadPrices(context.Background(), priceScope("us-west-2"), []string{"g5.xlarge"})
	if !errors.Is(err, providers.ErrThrottled) || !errors.Is(err, providers.ErrPermission) || strings.Contains(err.Error(), "\n") {
		t.Errorf("two failures: err = %v; want both, on one line", err)
	}
}

func TestReadPricesNothingToDo(t *testing.T) {
	f := standardFake()
	srv := httptest.NewServer(f)
	defer srv.Close()
	p := priceProvider(srv.URL, providers.Options{})
	for _, types := range [][]string{nil, {}, {"", "  "}} {
		if got, err := p.ReadPrices(context.Background(), priceScope("us-west-2"), types); err != nil || got != nil {
			t.Errorf("ReadPrices(%q) = %v, %v", types, got, err)
		}
	}
	if f.total() != 0 {
		t.Errorf("%d calls for no types", f.total())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.ReadPrices(ctx, priceScope("us-west-2"), []string{"g5.xlarge"}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err = %v", err)
	}
	if _, err := p.ReadPrices(context.Background(), providers.Scope{Provider: fleet.AWS, Account: "x", Profile: "default"}, []string{"g5.xlarge"}); err == nil {
		t.Error("a scope without a region read prices")
	}
}

func TestReadPricesConcurrentScopesShareTheCache(t *testing.T) {
	f := standardFake()
	srv := httptest.NewServer(f)
	defer srv.Close()
	labels := []string{"a", "b", "c", "d"}
	p := priceProvider(srv.URL, providers.Options{CacheDir: t.TempDir()}, labels...)
	var wg sync.WaitGroup
	results := make([][]pricing.Price, len(labels))
	errs := make([]error, len(labels))
	for i, l := range labels {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sc := providers.Scope{Provider: fleet.AWS, Account: p.accounts[i].id, Region: "us-west-2", Profile: l}
			results[i], errs[i] = p.ReadPrices(context.Background(), sc, []string{"g5.xlarge", "p5.48xlarge"})
		}()
	}
	wg.Wait()
	for i := range labels {
		if errs[i] != nil || len(results[i]) != 7 {
			t.Errorf("scope %d: %d prices, %v", i, len(results[i]), errs[i])
		}
	}
	// One account's reads fill the cache; the others wait and read it.
	if n := f.count("GetProducts"); n != 2 {
		t.Errorf("GetProducts calls = %d; want 2 (once per type, not per account)", n)
	}
	if n := f.count("DescribeSpotPriceHistory"); n != 1 {
		t.Errorf("DescribeSpotPriceHistory calls = %d; want 1", n)
	}
}

func TestOverlayOfReadPrices(t *testing.T) {
	f := standardFake()
	srv := httptest.NewServer(f)
	defer srv.Close()
	live, err := priceProvider(srv.URL, providers.Options{}).ReadPrices(context.Background(), priceScope("us-west-2"), []string{"g5.xlarge"})
	if err != nil {
		t.Fatal(err)
	}
	base := &fixedCatalog{offer: pricing.Offer{
		Type:     pricing.InstanceType{Provider: fleet.AWS, Name: "g5.xlarge", GPUModel: "A10G", GPUCount: 1},
		Region:   "us-west-2",
		OnDemand: &pricing.Price{Hourly: mustDec("1.2"), Source: "embedded", Option: pricing.OnDemand},
	}}
	o, ok := pricing.Overlay(base, live).Offer(fleet.AWS, "us-west-2", "g5.xlarge")
	if !ok || !o.OnDemand.Hourly.Equal(mustDec("1.006")) || !o.Spot.Hourly.Equal(mustDec("0.3")) ||
		!o.Commitments["1y"].Hourly.Equal(mustDec("0.74")) || !o.Commitments["3y"].Hourly.Equal(mustDec("0.51")) {
		t.Errorf("overlaid offer = %+v", o)
	}
}

// fixedCatalog has one offer.
type fixedCatalog struct{ offer pricing.Offer }

func (c *fixedCatalog) GPU(string) (pricing.GPUSpec, bool) { return pricing.GPUSpec{}, false }
func (c *fixedCatalog) InstanceType(p fleet.Provider, n string) (pricing.InstanceType, bool) {
	return c.offer.Type, p == c.offer.Type.Provider && n == c.offer.Type.Name
}
func (c *fixedCatalog) Offer(p fleet.Provider, r, n string) (pricing.Offer, bool) {
	if p == c.offer.Type.Provider && r == c.offer.Region && n == c.offer.Type.Name {
		return c.offer, true
	}
	return pricing.Offer{}, false
}
func (c *fixedCatalog) Offers(pricing.Query) []pricing.Offer { return []pricing.Offer{c.offer} }
func (c *fixedCatalog) SpotAdvice(fleet.Provider, string, string) (pricing.SpotAdvice, bool) {
	return pricing.SpotAdvice{}, false
}
func (c *fixedCatalog) Corrections() []pricing.Correction { return nil }
func (c *fixedCatalog) Sources() []pricing.Source         { return nil }

// --- against the simulator ---

// priceSimRows are two GPU types in us-east-1 with spot in two zones and
// Compute Savings Plans rates, plus n generated types.
func priceSimRows(n int) []sim.PriceRow {
	rows := []sim.PriceRow{
		{Region: "us-east-1", InstanceType: "g5.xlarge", OnDemand: "1.006",
			Spot: map[string]string{"us-east-1a": "0.4500", "us-east-1d": "0.3712"}, SavingsPlan1y: "0.7400", SavingsPlan3y: "0.5100"},
		{Region: "us-east-1", InstanceType: "p5.48xlarge", OnDemand: "98.32",
			Spot: map[string]string{"us-east-1b": "40.1234"}, SavingsPlan3y: "55.0000"},
	}
	// Real type names (the SDK's InstanceType enum, from the EC2 model):
	// the strict simulator refuses a request naming a type EC2 does not.
	var names []string
	for _, v := range ec2types.InstanceType("").Values() {
		if v != "g5.xlarge" && v != "p5.48xlarge" && len(names) < n {
			names = append(names, string(v))
		}
	}
	for i, name := range names {
		rows = append(rows, sim.PriceRow{Region: "us-east-1", InstanceType: name, OnDemand: fmt.Sprintf("%d.25", i+1),
			Spot: map[string]string{"us-east-1c": "0.3"}, SavingsPlan1y: "0.5"})
	}
	return rows
}

// priceSimProvider starts the simulator and an adapter built by New on it.
func priceSimProvider(t *testing.T, rows []sim.PriceRow, opts providers.Options) (*Provider, *sim.Server) {
	t.Helper()
	s := sim.New(&fleet.Fleet{}, strict(t, sim.Options{Regions: []string{"us-east-1"}, Prices: rows, Now: func() time.Time { return priceNow }}))
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	opts.Endpoint, opts.Regions = srv.URL, []string{"us-east-1"}
	if opts.Now == nil {
		opts.Now = func() time.Time { return priceNow }
	}
	p, err := New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return p.(*Provider), s
}

func priceSimScope(t *testing.T, p *Provider) providers.Scope {
	t.Helper()
	scopes, err := p.Scopes(context.Background())
	if err != nil || len(scopes) != 1 {
		t.Fatalf("scopes = %v, %v", scopes, err)
	}
	return scopes[0]
}

func TestReadPricesSim(t *testing.T) {
	p, s := priceSimProvider(t, priceSimRows(0), providers.Options{CacheDir: t.TempDir()})
	sc := priceSimScope(t, p)
	s.ResetCounts()
	got, err := p.ReadPrices(context.Background(), sc, []string{"g5.xlarge", "p5.48xlarge", "m5.large"})
	if err != nil {
		t.Fatal(err)
	}
	m := pricesByKey(got)
	want := map[string]string{
		"g5.xlarge/on-demand":         "1.006",
		"g5.xlarge/spot":              "0.3712",
		"g5.xlarge/savings-plan-1y":   "0.74",
		"g5.xlarge/savings-plan-3y":   "0.51",
		"p5.48xlarge/on-demand":       "98.32",
		"p5.48xlarge/spot":            "40.1234",
		"p5.48xlarge/savings-plan-3y": "55",
	}
	if len(got) != len(want) {
		t.Errorf("got %v; want %d prices", priceKeys(m), len(want))
	}
	for k, v := range want {
		if pr, ok := m[k]; !ok || !pr.Hourly.Equal(mustDec(v)) {
			t.Errorf("%s = %s, %v; want %s", k, pr.Hourly, ok, v)
		}
	}
	spot := m["g5.xlarge/spot"]
	if h := spot.History; spot.Zone != "us-east-1d" || h == nil || h.Min.GreaterThan(spot.Hourly) || h.Max.LessThan(spot.Hourly) || h.Points < 10 {
		t.Errorf("g5 spot = %+v, history %+v", spot, spot.History)
	}
	if src := m["g5.xlarge/savings-plan-1y"].Source; !strings.Contains(src, "Compute Savings Plan 1y") || !strings.Contains(src, "EC2 Instance Savings Plan: ") {
		t.Errorf("g5 1y source = %q", src)
	}
	c := s.Counts()
	if c["pricing"]["GetProducts"] != 3 || c["ec2"]["DescribeSpotPriceHistory"] != 1 || c["savingsplans"]["DescribeSavingsPlansOfferingRates"] != 1 {
		t.Errorf("calls = %v; want 3 GetProducts (one per type), 1 spot history, 1 rates", c)
	}

	// The second read is the cache's: no request reaches the simulator.
	s.ResetCounts()
	again, err := p.ReadPrices(context.Background(), sc, []string{"m5.large", "p5.48xlarge", "g5.xlarge"})
	if err != nil {
		t.Fatal(err)
	}
	if c := s.Counts(); len(c) != 0 {
		t.Errorf("a cached read made requests: %v", c)
	}
	if len(again) != len(got) || !strings.HasSuffix(again[0].Source, " (cached 2026-12-01)") {
		t.Errorf("cached read = %d prices, first source %q", len(again), again[0].Source)
	}
}

// invocations counts the SDK's calls per operation as the client sends
// them: every attempt of one call carries the same amz-sdk-invocation-id, so
// a retried attempt (a connection reset on a loaded machine) is one call.
type invocations struct {
	mu  sync.Mutex
	ids map[string]map[string]bool // operation → invocation IDs
}

func (v *invocations) RoundTrip(r *http.Request) (*http.Response, error) {
	var op string
	switch {
	case r.Header.Get("X-Amz-Target") != "":
		_, op, _ = strings.Cut(r.Header.Get("X-Amz-Target"), ".")
	case r.Header.Get("Content-Type") == "application/x-www-form-urlencoded":
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		form, _ := url.ParseQuery(string(body))
		op = form.Get("Action")
	default:
		op = r.URL.Path[strings.LastIndexByte(r.URL.Path, '/')+1:]
	}
	v.mu.Lock()
	if v.ids[op] == nil {
		v.ids[op] = map[string]bool{}
	}
	id := r.Header.Get("Amz-Sdk-Invocation-Id")
	if id == "" { // no ID: each attempt counts
		id = strconv.Itoa(len(v.ids[op]))
	}
	v.ids[op][id] = true
	v.mu.Unlock()
	return http.DefaultTransport.RoundTrip(r)
}

func (v *invocations) calls(op string) int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return len(v.ids[op])
}

func TestReadPricesSimFiftyTypes(t *testing.T) {
	rows := priceSimRows(48)
	calls := &invocations{ids: map[string]map[string]bool{}}
	p, s := priceSimProvider(t, rows, providers.Options{HTTPClient: &http.Client{Transport: calls}})
	sc := priceSimScope(t, p)
	var types []string
	for _, r := range rows {
		types = append(types, r.InstanceType)
	}
	s.ResetCounts()
	got, err := p.ReadPrices(context.Background(), sc, types)
	if err != nil {
		t.Fatal(err)
	}
	m := pricesByKey(got)
	for _, r := range rows {
		if pr, ok := m[r.InstanceType+"/on-demand"]; !ok || !pr.Hourly.Equal(mustDec(r.OnDemand)) {
			t.Errorf("%s on-demand = %s, %v; want %s", r.InstanceType, pr.Hourly, ok, r.OnDemand)
		}
		if _, ok := m[r.InstanceType+"/spot"]; !ok {
			t.Errorf("%s has no spot price", r.InstanceType)
		}
	}
	// Calls, not attempts: the simulator counts each attempt, and a retry
	// on a loaded machine is not a second query.
	c := s.Counts()
	for _, op := range []struct {
		service, name string
		min, max      int
		why           string
	}{
		{"pricing", "GetProducts", 1, 2, "the region's list, 50 products"},
		{"ec2", "DescribeSpotPriceHistory", 1, 1, "one query for every type"},
		{"savingsplans", "DescribeSavingsPlansOfferingRates", 1, 1, "one query for every type"},
	} {
		if n := calls.calls(op.name); n < op.min || n > op.max || c[op.service][op.name] < n {
			t.Errorf("%s calls for 48 types = %d (%d requests served); want %d to %d (%s)", op.name, n, c[op.service][op.name], op.min, op.max, op.why)
		}
	}
}

func TestReadPricesSimThrottled(t *testing.T) {
	s := sim.New(&fleet.Fleet{}, strict(t, sim.Options{Regions: []string{"us-east-1"}, Prices: priceSimRows(0), Now: func() time.Time { return priceNow }, ThrottleRate: 0.3, Seed: 7}))
	srv := httptest.NewServer(s)
	defer srv.Close()
	// Built by hand: New's own STS call would be throttled too.
	p := priceProvider(srv.URL, providers.Options{})
	for _, a := range p.accounts {
		a.cfg.Retryer = func() aws.Retryer {
			return retry.NewStandard(func(o *retry.StandardOptions) {
				o.MaxAttempts = 10
				o.MaxBackoff = 5 * time.Millisecond
				o.RateLimiter = noRateLimit{}
			})
		}
	}
	got, err := p.ReadPrices(context.Background(), priceScope("us-east-1"), []string{"g5.xlarge", "p5.48xlarge"})
	if err != nil {
		t.Fatalf("throttled reads were not retried: %v", err)
	}
	if len(got) != 7 {
		t.Errorf("%d prices; want 7", len(got))
	}
	total := 0
	for _, ops := range s.Counts() {
		for _, n := range ops {
			total += n
		}
	}
	if total <= 4 {
		t.Errorf("%d requests; the seed throttled none of the 4 calls", total)
	}
}

// noRateLimit lets every retry through.
type noRateLimit struct{}

func (noRateLimit) GetToken(context.Context, uint) (func() error, error) {
	return func() error { return nil }, nil
}
func (noRateLimit) AddTokens(uint) error { return nil }
