package azure

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

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
	// maxPricePages bounds one type's NextPageLink chain.
	maxPricePages = 50
)

// Hours in a reservation term: the API's reservation price is the whole term.
var termHours = map[string]decimal.Decimal{"1 Year": decimal.NewFromInt(8760), "3 Years": decimal.NewFromInt(26280)}

var _ providers.PriceReader = (*Provider)(nil)

// ReadPrices reads the scope region's retail prices of instanceTypes, one
// filtered query per type (serviceName, armRegionName, armSkuName) paged
// with NextPageLink, through the price cache: Linux consumption (on-demand),
// Spot (else Low Priority) as spot, and 1- and 3-year commitment rates from
// reservations (term price ÷ hours in the term), else from the consumption
// row's savings plan prices. Windows and DevTest rows are left out.
func (p *Provider) ReadPrices(ctx context.Context, scope providers.Scope, instanceTypes []string) ([]pricing.Price, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	types := append([]string(nil), instanceTypes...)
	sort.Strings(types)
	var c *cache.Cache
	if p.opts.CacheDir != "" {
		c = cache.New(p.opts.CacheDir, p.opts.CacheTTL, p.opts.Now)
	}
	k := cache.Key{Provider: fleet.Azure, Region: scope.Region, Types: types, Kind: "retail", Origin: p.opts.Endpoint}
	res, err := c.Load(ctx, k, func(ctx context.Context) ([]pricing.Price, error) {
		var out []pricing.Price
		for _, t := range types {
			items, err := p.retailItems(ctx, scope.Region, t)
			if err != nil {
				return nil, err
			}
			out = append(out, PricesOf(items, scope.Region, t, p.opts.Now().UTC())...)
		}
		return out, nil
	})
	if err != nil {
		return nil, fmt.Errorf("retail prices: %w", err)
	}
	return res.Prices, nil
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

// retailItems reads every page of one type's rows in a region.
func (p *Provider) retailItems(ctx context.Context, region, size string) ([]RetailItem, error) {
	base, err := url.Parse(p.endpoints.prices)
	if err != nil {
		return nil, err
	}
	q := url.Values{}
	q.Set("api-version", pricesAPIVersion)
	q.Set("currencyCode", "'USD'")
	q.Set("$filter", fmt.Sprintf("serviceName eq 'Virtual Machines' and armRegionName eq '%s' and armSkuName eq '%s'", odata(region), odata(size)))
	next := base.String() + "?" + q.Encode()
	pl := runtime.NewPipeline("gpufinops-azure-prices", "v1", runtime.PipelineOptions{}, p.plain)
	var out []RetailItem
	for pages := 0; next != ""; pages++ {
		if pages >= maxPricePages {
			return nil, fmt.Errorf("%s %s: more than %d pages", region, size, maxPricePages)
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
			pr.Source = pricesSource + " (reservation)"
			out = append(out, pr)
		} else if v, ok := plans[t.term]; ok {
			pr := mk(t.o, v)
			pr.Source = pricesSource + " (savings plan)"
			out = append(out, pr)
		}
	}
	return out
}

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
