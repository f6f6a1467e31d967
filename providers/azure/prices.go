package azure

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/cache"
	"github.com/gpufinops/gpufinops/providers"
)

// The Retail Prices API: public, no credentials.
const (
	pricesAPIVersion = "2023-01-01-preview" // savings plan prices need it
	pricesSource     = "Azure Retail Prices API"
	// maxPricePages bounds one query's NextPageLink chain.
	maxPricePages = 50
	// maxPriceURL is the longest query URL (bytes, encoded) the adapter
	// sends: a region's sizes are split into several or-queries under it.
	// The API states no limit; 2,048 is the limit of the clients and
	// proxies a URL may pass through (IIS's default maxQueryString, the
	// old browsers' URL limit), and at about 50 bytes a size it still
	// takes 35 sizes a query, more than a region usually has.
	maxPriceURL = 2048
)

// Hours in a reservation term: the API's reservation price is the total for
// the whole term, per instance, though its unitOfMeasure reads "1 Hour"
// (research: cloud-apis.md §2.7, "divide by the hours in the term"). The
// hourly rate is that total ÷ the term's hours, a year being 8,760 hours
// (365 × 24; a leap year's 8,784 would lower the rate by 0.27 %) and three
// years 26,280: the convention of the embedded reservation data
// (pricing/catalog/data/SOURCES.md, whose source pipeline divides by 8760
// and 26280), so a live and an embedded rate of one price agree.
var termHours = map[string]decimal.Decimal{"1 Year": decimal.NewFromInt(8760), "3 Years": decimal.NewFromInt(26280)}

// priceFilterBase is the filter of a region's VM rows, before the sizes.
// Filter values are case-sensitive from api-version 2023-01-01-preview: the
// service and region are spelt as Azure lists them (armRegionName is
// lower-case; providers/azure/sim/FACTS.md).
func priceFilterBase(region string) string {
	return fmt.Sprintf("serviceName eq 'Virtual Machines' and armRegionName eq '%s'", odata(strings.ToLower(region)))
}

// priceFilter is the filter of sizes in a region: one size compared alone,
// several or-ed in parentheses (OData's and binds tighter than or).
func priceFilter(region string, sizes []string) string {
	terms := make([]string, len(sizes))
	for i, s := range sizes {
		terms[i] = fmt.Sprintf("armSkuName eq '%s'", odata(s))
	}
	if len(terms) == 1 {
		return priceFilterBase(region) + " and " + terms[0]
	}
	return priceFilterBase(region) + " and (" + strings.Join(terms, " or ") + ")"
}

// orRefusedNote is the note of a Retail Prices API that refused an or
// query: prices are then read one query per size.
const orRefusedNote = "Azure Retail Prices API: an $filter joining sizes with 'or' was refused (HTTP 400); prices are read with one query per size and region instead"

var _ providers.PriceReader = (*Provider)(nil)

// ReadPrices reads the scope region's retail prices of instanceTypes
// through the price cache: one filtered query for all of them
// (serviceName, armRegionName, and the sizes or-ed together), split where
// the URL would pass maxPriceURL, each paged with NextPageLink. When the
// API answers 400 to an or query, the region's sizes are read one query
// each (and so are every later region's), with a note. Of the rows it
// takes Linux consumption (on-demand), Spot (else Low Priority) as spot,
// and 1- and 3-year commitment rates: reservations' (term price ÷ hours in
// the term) and the consumption row's savings plan prices, each naming its
// kind (pricing.Reservation, pricing.AzureSavingsPlan).
// Windows and DevTest rows are left out.
func (p *Provider) ReadPrices(ctx context.Context, scope providers.Scope, instanceTypes []string) ([]pricing.Price, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	types := append([]string(nil), instanceTypes...)
	sort.Strings(types)
	types = slices.Compact(types)
	var c *cache.Cache
	if p.opts.CacheDir != "" {
		c = cache.New(p.opts.CacheDir, p.opts.CacheTTL, p.opts.Now)
	}
	k := cache.Key{Provider: fleet.Azure, Region: scope.Region, Types: types, Kind: "retail", Origin: p.opts.Endpoint}
	res, err := c.Load(ctx, k, func(ctx context.Context) ([]pricing.Price, error) {
		items, err := p.regionItems(ctx, scope.Region, types)
		if err != nil {
			return nil, err
		}
		bySize := map[string][]RetailItem{}
		for _, it := range items {
			s := strings.ToLower(it.ARMSkuName)
			bySize[s] = append(bySize[s], it)
		}
		var out []pricing.Price
		for _, t := range types {
			out = append(out, PricesOf(bySize[strings.ToLower(t)], scope.Region, t, p.opts.Now().UTC())...)
		}
		return out, nil
	})
	if err != nil {
		return nil, fmt.Errorf("retail prices: %w", err)
	}
	return res.Prices, nil
}

// regionItems reads the rows of sizes in a region: or-queries of as many
// sizes as maxPriceURL allows, else (once the API refused one) a query per
// size.
func (p *Provider) regionItems(ctx context.Context, region string, sizes []string) ([]RetailItem, error) {
	var out []RetailItem
	for rest := sizes; len(rest) > 0; {
		n := 1
		if !p.orRefused.Load() {
			n = p.sizesFitting(region, rest)
		}
		items, err := p.retailItems(ctx, region, priceFilter(region, rest[:n]))
		if err != nil && n > 1 && isBadRequest(err) {
			p.refuseOr()
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, items...)
		rest = rest[n:]
	}
	return out, nil
}

// sizesFitting is how many of sizes (at least one) one query's URL holds
// under maxPriceURL.
func (p *Provider) sizesFitting(region string, sizes []string) int {
	n := 1
	for n < len(sizes) && len(p.pricesURL(priceFilter(region, sizes[:n+1]))) <= maxPriceURL {
		n++
	}
	return n
}

// pricesURL is the first page's URL of a filter.
func (p *Provider) pricesURL(filter string) string {
	q := url.Values{}
	q.Set("api-version", pricesAPIVersion)
	q.Set("currencyCode", "'USD'")
	q.Set("$filter", filter)
	return p.endpoints.prices + "?" + q.Encode()
}

// refuseOr makes later price reads ask one size a query, and notes it once.
func (p *Provider) refuseOr() {
	if p.orRefused.Swap(true) {
		return
	}
	p.mu.Lock()
	p.pendingNotes = append(p.pendingNotes, orRefusedNote)
	p.mu.Unlock()
}

var _ providers.ScanNoter = (*Provider)(nil)

// TakeScanNotes returns the notes of the scan not tied to a scope, once.
func (p *Provider) TakeScanNotes() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.pendingNotes
	p.pendingNotes = nil
	return out
}

func isBadRequest(err error) bool {
	var re *azcore.ResponseError
	return errors.As(err, &re) && re.StatusCode == http.StatusBadRequest
}

// RetailItem is one row of the Retail Prices API.
type RetailItem struct {
	CurrencyCode    string      `json:"currencyCode"`
	RetailPrice     json.Number `json:"retailPrice"`
	ARMRegionName   string      `json:"armRegionName"`
	ARMSkuName      string      `json:"armSkuName"`
	ProductName     string      `json:"productName"`
	SkuName         string      `json:"skuName"`
	MeterName       string      `json:"meterName"`
	ServiceName     string      `json:"serviceName"`
	UnitOfMeasure   string      `json:"unitOfMeasure"`
	Type            string      `json:"type"`
	ReservationTerm string      `json:"reservationTerm"`
	SavingsPlan     []struct {
		RetailPrice json.Number `json:"retailPrice"`
		Term        string      `json:"term"`
	} `json:"savingsPlan"`
}

type retailPage struct {
	Items        []RetailItem `json:"Items"`
	NextPageLink *string      `json:"NextPageLink"`
}

// retailItems reads every page of a filter's rows in a region.
func (p *Provider) retailItems(ctx context.Context, region, filter string) ([]RetailItem, error) {
	base, err := url.Parse(p.endpoints.prices)
	if err != nil {
		return nil, err
	}
	next := p.pricesURL(filter)
	pl := runtime.NewPipeline("gpufinops-azure-prices", "v1", runtime.PipelineOptions{}, p.plain)
	var out []RetailItem
	for pages := 0; next != ""; pages++ {
		if pages >= maxPricePages {
			return nil, fmt.Errorf("%s: more than %d pages", region, maxPricePages)
		}
		u, err := url.Parse(next)
		if err != nil || u.Host != base.Host {
			return nil, fmt.Errorf("NextPageLink %q does not continue %s", next, base.Host)
		}
		req, err := runtime.NewRequest(ctx, http.MethodGet, next)
		if err != nil {
			return nil, err
		}
		resp, err := pl.Do(req)
		if err != nil {
			return nil, classify(err)
		}
		if !runtime.HasStatusCode(resp, http.StatusOK) {
			return nil, classify(runtime.NewResponseError(resp))
		}
		var page retailPage
		if err := runtime.UnmarshalAsJSON(resp, &page); err != nil {
			return nil, err
		}
		out = append(out, page.Items...)
		next = ""
		if page.NextPageLink != nil {
			next = *page.NextPageLink
		}
	}
	return out, nil
}

// odata quotes a value for an OData string literal.
func odata(s string) string { return strings.ReplaceAll(s, "'", "''") }

// PricesOf picks a size's prices from its retail rows (see ReadPrices),
// converting exactly with decimals.
func PricesOf(items []RetailItem, region, size string, now time.Time) []pricing.Price {
	mk := func(o pricing.Option, v decimal.Decimal) pricing.Price {
		return pricing.Price{Provider: fleet.Azure, Region: region, InstanceType: size, Option: o, Hourly: v, Currency: pricing.Currency,
			Unit: pricing.UnitHour, Source: pricesSource, AsOf: now.Format(time.DateOnly)}
	}
	var onDemand, spot, low *decimal.Decimal
	reserved := map[string]decimal.Decimal{}
	plans := map[string]decimal.Decimal{}
	for _, it := range items {
		if it.CurrencyCode != "USD" || !strings.EqualFold(it.ARMSkuName, size) || !strings.EqualFold(it.ARMRegionName, region) {
			continue
		}
		v, err := decimal.NewFromString(it.RetailPrice.String())
		if err != nil || !v.IsPositive() {
			continue
		}
		name := it.SkuName + " " + it.MeterName
		switch {
		case it.Type == "Reservation":
			if h, ok := termHours[it.ReservationTerm]; ok {
				reserved[termOf(it.ReservationTerm)] = v.Div(h).Round(6)
			}
		case it.Type != "Consumption" || it.UnitOfMeasure != "1 Hour" || strings.HasSuffix(it.ProductName, " Windows"):
		case strings.Contains(name, "Spot"):
			spot = lower(spot, v)
		case strings.Contains(name, "Low Priority"):
			low = lower(low, v)
		default:
			onDemand = lower(onDemand, v)
			for _, sp := range it.SavingsPlan {
				if r, err := decimal.NewFromString(sp.RetailPrice.String()); err == nil && r.IsPositive() {
					plans[termOf(sp.Term)] = r
				}
			}
		}
	}
	var out []pricing.Price
	if onDemand != nil {
		out = append(out, mk(pricing.OnDemand, *onDemand))
	}
	if spot == nil {
		spot = low
	}
	if spot != nil {
		out = append(out, mk(pricing.Spot, *spot))
	}
	for _, t := range []struct {
		term string
		o    pricing.Option
	}{{pricing.Term1y, pricing.SavingsPlan1y}, {pricing.Term3y, pricing.SavingsPlan3y}} {
		if v, ok := reserved[t.term]; ok {
			pr := mk(t.o, v)
			pr.Source = pricesSource + " (reservation: " + reservedTerms[t.term] + " price ÷ " + termHours[reservedTerms[t.term]].String() + " h)"
			pr.Commitment = pricing.Reservation
			out = append(out, pr)
		}
		if v, ok := plans[t.term]; ok {
			// The savings plan's hourly rate of this size: what an hour of
			// it costs under the plan (the API's savingsPlan retailPrice).
			pr := mk(t.o, v)
			pr.Source = pricesSource + " (savings plan for compute, " + reservedTerms[t.term] + ")"
			pr.Commitment = pricing.AzureSavingsPlan
			out = append(out, pr)
		}
	}
	return out
}

// reservedTerms is the API's reservationTerm of a term.
var reservedTerms = map[string]string{pricing.Term1y: "1 Year", pricing.Term3y: "3 Years"}

func termOf(s string) string {
	switch s {
	case "1 Year":
		return pricing.Term1y
	case "3 Years":
		return pricing.Term3y
	}
	return s
}

func lower(cur *decimal.Decimal, v decimal.Decimal) *decimal.Decimal {
	if cur == nil || v.LessThan(*cur) {
		return &v
	}
	return cur
}
