package aws

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	awspricing "github.com/aws/aws-sdk-go-v2/service/pricing"
	pricingtypes "github.com/aws/aws-sdk-go-v2/service/pricing/types"
	"github.com/aws/aws-sdk-go-v2/service/savingsplans"
	sptypes "github.com/aws/aws-sdk-go-v2/service/savingsplans/types"
	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/cache"
	"github.com/gpufinops/gpufinops/providers"
)

var _ providers.PriceReader = (*Provider)(nil)

// Cache kinds of the three price lists ReadPrices reads.
const (
	kindOnDemand     = "on-demand"
	kindSpot         = "spot"
	kindSavingsPlans = "savings-plans"
)

// Price-reading limits and conventions.
const (
	// perTypeQueryMax: up to this many types, on-demand prices are read with
	// one GetProducts query per type (one small page each); above it, with
	// one paginated query for the whole region, filtered here. A region's
	// Linux on-demand list is about a thousand products, ten pages of 100.
	perTypeQueryMax = 8
	// productsPageSize is GetProducts' page size (its documented maximum).
	productsPageSize = 100
	// spotWindow is how far back spot history is read.
	spotWindow = 30 * 24 * time.Hour
	// spotTypesBatch is how many types go into one DescribeSpotPriceHistory query.
	spotTypesBatch = 100
	// spotPageSize is DescribeSpotPriceHistory's page size (its maximum).
	spotPageSize = 1000
	// ratesTypesBatch is how many types go into one offering-rates filter:
	// each type has four rates (Compute and EC2 Instance, 1 and 3 years), so
	// 250 types fill one 1,000-row page. Smaller batches cost a request
	// each however few rows they hold (50 cost a region of 196 types four).
	ratesTypesBatch = 250
	// ratesPageSize is DescribeSavingsPlansOfferingRates' page size.
	ratesPageSize = 1000
	// maxPages stops a pagination that never ends.
	maxPages = 200
	// linuxUNIX is the spot and Savings Plans product description priced.
	linuxUNIX = "Linux/UNIX"
	// year1 and year3 are the Savings Plans durations in seconds (365 days a year).
	year1 = 365 * 24 * 3600
	year3 = 3 * year1
)

// Sources named in the prices ReadPrices returns.
const (
	sourceOnDemand     = "AWS Price List API GetProducts (Linux, shared tenancy), live"
	sourceSpot         = "EC2 DescribeSpotPriceHistory (Linux/UNIX), live"
	sourceSavingsPlans = "AWS Savings Plans DescribeSavingsPlansOfferingRates"
)

// The Price List and Savings Plans APIs are global, their throttling limits
// unpublished: calls to each are bounded process-wide, across every scope.
var (
	productsCalls = make(chan struct{}, 2)
	ratesCalls    = make(chan struct{}, 2)
)

func acquire(ctx context.Context, sem chan struct{}) (release func(), err error) {
	select {
	case sem <- struct{}{}:
		return func() { <-sem }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// offeringRatesAPI is the Savings Plans operation ReadPrices uses.
type offeringRatesAPI interface {
	DescribeSavingsPlansOfferingRates(context.Context, *savingsplans.DescribeSavingsPlansOfferingRatesInput, ...func(*savingsplans.Options)) (*savingsplans.DescribeSavingsPlansOfferingRatesOutput, error)
}

// priceAPIs are the three AWS APIs prices come from.
type priceAPIs struct {
	products awspricing.GetProductsAPIClient
	spot     ec2.DescribeSpotPriceHistoryAPIClient
	rates    offeringRatesAPI
}

// ReadPrices reads live prices for instance types in the scope's region:
//
//   - on-demand from the Price List API (GetProducts: Linux, shared tenancy,
//     no pre-installed software, used capacity, the hourly OnDemand rate);
//   - spot from DescribeSpotPriceHistory (Linux/UNIX, the last 30 days): the
//     cheapest zone's current price, with that zone's 30-day minimum,
//     time-weighted average and maximum in Price.History, and the
//     time-weighted median over every zone and the window (History.Median,
//     the price the engine plans spot with);
//   - Savings Plans no-upfront rates (DescribeSavingsPlansOfferingRates) as
//     options savings-plan-1y and savings-plan-3y: the Compute Savings Plan
//     rate, or the EC2 Instance Savings Plan rate where no Compute rate is
//     offered;
//   - SageMaker's ml.* types: on-demand only, from the Price List's
//     AmazonSageMaker offer (readSageMakerOnDemand).
//
// Each list is read through the on-disk cache when Options.CacheDir is set
// (TTL Options.CacheTTL, default 24h). When an API fails and the cache holds
// an expired list, those prices are returned, their Source saying so;
// otherwise the failure is the error. A type with no price of a kind simply
// has none (never zero).
func (p *Provider) ReadPrices(ctx context.Context, scope providers.Scope, instanceTypes []string) ([]pricing.Price, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	types := normalizeTypes(instanceTypes)
	if len(types) == 0 {
		return nil, nil
	}
	if scope.Region == "" {
		return nil, errors.New("aws prices: the scope has no region")
	}
	pc, err := p.pricingClient(scope)
	if err != nil {
		return nil, err
	}
	ec, err := p.ec2Client(scope)
	if err != nil {
		return nil, err
	}
	sp, err := p.savingsPlansClient(scope)
	if err != nil {
		return nil, err
	}
	return p.readPrices(ctx, priceAPIs{products: pc, spot: ec, rates: sp}, scope.Region, types)
}

// priceCache is the configured cache, or nil (no caching).
func (p *Provider) priceCache() *cache.Cache {
	if p.opts.CacheDir == "" {
		return nil
	}
	return cache.New(p.opts.CacheDir, p.opts.CacheTTL, p.now)
}

func (p *Provider) now() time.Time {
	if p.opts.Now != nil {
		return p.opts.Now()
	}
	return time.Now()
}

// readPrices reads the three lists concurrently, each through the cache.
func (p *Provider) readPrices(ctx context.Context, api priceAPIs, region string, types []string) ([]pricing.Price, error) {
	now := p.now().UTC()
	c := p.priceCache()
	var ml []string
	types, ml = splitSageMakerTypes(types)
	type list struct {
		kind  string
		what  string
		types []string
		fetch func(context.Context) ([]pricing.Price, error)
	}
	lists := []list{
		{kindOnDemand, "on-demand prices (Price List GetProducts)", types, func(ctx context.Context) ([]pricing.Price, error) {
			return readOnDemand(ctx, api.products, region, types, now)
		}},
		{kindSpot, "spot prices (DescribeSpotPriceHistory)", types, func(ctx context.Context) ([]pricing.Price, error) {
			return readSpot(ctx, api.spot, region, types, now)
		}},
		{kindSavingsPlans, "Savings Plans rates (DescribeSavingsPlansOfferingRates)", types, func(ctx context.Context) ([]pricing.Price, error) {
			return readSavingsPlans(ctx, api.rates, region, types, now)
		}},
		{kindSageMaker, "SageMaker prices (Price List GetProducts, AmazonSageMaker)", ml, func(ctx context.Context) ([]pricing.Price, error) {
			return readSageMakerOnDemand(ctx, api.products, region, ml, now)
		}},
	}
	results := make([][]pricing.Price, len(lists))
	errs := make([]error, len(lists))
	var wg sync.WaitGroup
	for i, l := range lists {
		if len(l.types) == 0 {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := cache.Key{Provider: fleet.AWS, Region: region, Types: l.types, Kind: l.kind, Origin: p.opts.Endpoint}
			res, err := c.Load(ctx, key, l.fetch)
			if err != nil {
				errs[i] = fmt.Errorf("%s: %w", l.what, classify(err))
				return
			}
			results[i] = res.Prices
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var failed []error
	for _, err := range errs {
		if err != nil {
			failed = append(failed, err)
		}
	}
	if len(failed) > 0 {
		return nil, fmt.Errorf("aws %s live prices: %w", region, oneLine(failed))
	}
	var out []pricing.Price
	for _, r := range results {
		out = append(out, r...)
	}
	sortPrices(out)
	return out, nil
}

// lineErrors joins errors on one line, keeping them for errors.Is and As.
type lineErrors []error

func (e lineErrors) Error() string {
	parts := make([]string, len(e))
	for i, err := range e {
		parts[i] = err.Error()
	}
	return strings.Join(parts, "; ")
}

func (e lineErrors) Unwrap() []error { return e }

func oneLine(errs []error) error {
	if len(errs) == 1 {
		return errs[0]
	}
	return lineErrors(errs)
}

var optionOrder = map[pricing.Option]int{pricing.OnDemand: 0, pricing.Spot: 1, pricing.SavingsPlan1y: 2, pricing.SavingsPlan3y: 3}

func sortPrices(ps []pricing.Price) {
	slices.SortStableFunc(ps, func(a, b pricing.Price) int {
		return cmp.Or(cmp.Compare(a.InstanceType, b.InstanceType), cmp.Compare(optionOrder[a.Option], optionOrder[b.Option]))
	})
}

// splitSageMakerTypes parts EC2 types from SageMaker's ml.* ones, which
// have no EC2 spot or Savings Plans price.
func splitSageMakerTypes(types []string) (ec2Types, ml []string) {
	for _, t := range types {
		if isSageMakerType(t) {
			ml = append(ml, t)
		} else {
			ec2Types = append(ec2Types, t)
		}
	}
	return ec2Types, ml
}

// normalizeTypes sorts the types and drops blanks and duplicates.
func normalizeTypes(in []string) []string {
	var out []string
	for _, t := range in {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func newPrice(region, typ string, opt pricing.Option, hourly decimal.Decimal, source string, now time.Time) pricing.Price {
	return pricing.Price{
		Provider: fleet.AWS, Region: region, InstanceType: typ, Option: opt, Hourly: hourly,
		Currency: pricing.Currency, Unit: pricing.UnitHour, Source: source, AsOf: now.Format(time.DateOnly),
	}
}

// --- on-demand: the Price List API ---

// productFilters pin one Linux on-demand product per type and region.
func productFilters(region, instanceType string) []pricingtypes.Filter {
	term := func(field, value string) pricingtypes.Filter {
		return pricingtypes.Filter{Field: aws.String(field), Type: pricingtypes.FilterTypeTermMatch, Value: aws.String(value)}
	}
	f := []pricingtypes.Filter{
		term("regionCode", region),
		term("operatingSystem", "Linux"),
		term("tenancy", "Shared"),
		term("preInstalledSw", "NA"),
		term("capacitystatus", "Used"),
		term("marketoption", "OnDemand"),
	}
	if instanceType != "" {
		f = append(f, term("instanceType", instanceType))
	}
	return f
}

// readOnDemand queries per type for a few types, per region for many.
func readOnDemand(ctx context.Context, api awspricing.GetProductsAPIClient, region string, types []string, now time.Time) ([]pricing.Price, error) {
	var docs []string
	if len(types) <= perTypeQueryMax {
		for _, t := range types {
			d, err := getProducts(ctx, api, productFilters(region, t))
			if err != nil {
				return nil, err
			}
			docs = append(docs, d...)
		}
	} else {
		d, err := getProducts(ctx, api, productFilters(region, ""))
		if err != nil {
			return nil, err
		}
		docs = d
	}
	return onDemandFromPriceList(docs, region, types, now)
}

// getProducts reads every page of one AmazonEC2 query.
func getProducts(ctx context.Context, api awspricing.GetProductsAPIClient, filters []pricingtypes.Filter) ([]string, error) {
	return getServiceProducts(ctx, api, "AmazonEC2", filters)
}

// getServiceProducts reads every page of one query of a service's offer.
func getServiceProducts(ctx context.Context, api awspricing.GetProductsAPIClient, service string, filters []pricingtypes.Filter) ([]string, error) {
	pager := awspricing.NewGetProductsPaginator(api, &awspricing.GetProductsInput{
		ServiceCode:   aws.String(service),
		FormatVersion: aws.String("aws_v1"),
		Filters:       filters,
		MaxResults:    aws.Int32(productsPageSize),
	}, func(o *awspricing.GetProductsPaginatorOptions) { o.StopOnDuplicateToken = true })
	var docs []string
	for pages := 0; pager.HasMorePages(); pages++ {
		if pages == maxPages {
			return nil, fmt.Errorf("GetProducts returned more than %d pages", maxPages)
		}
		release, err := acquire(ctx, productsCalls)
		if err != nil {
			return nil, err
		}
		out, err := pager.NextPage(ctx)
		release()
		if err != nil {
			return nil, err
		}
		docs = append(docs, out.PriceList...)
	}
	return docs, nil
}

// priceListProduct is the part of a Price List document read here.
type priceListProduct struct {
	Product struct {
		SKU        string            `json:"sku"`
		Attributes map[string]string `json:"attributes"`
	} `json:"product"`
	Terms struct {
		OnDemand map[string]priceListTerm `json:"OnDemand"`
	} `json:"terms"`
}

type priceListTerm struct {
	PriceDimensions map[string]struct {
		Unit         string            `json:"unit"`
		PricePerUnit map[string]string `json:"pricePerUnit"`
	} `json:"priceDimensions"`
}

// productAttrs are the attributes an on-demand product must have, where the
// document states them (the query asked for them; a region-wide answer is
// checked here as well).
var productAttrs = map[string]string{
	"operatingSystem": "Linux",
	"tenancy":         "Shared",
	"preInstalledSw":  "NA",
	"capacitystatus":  "Used",
	"marketoption":    "OnDemand",
	"licenseModel":    "No License required",
}

// onDemandFromPriceList turns Price List documents into on-demand prices
// for the wanted types: the OnDemand term's hourly ("Hrs") USD rate. Reserved
// terms, other regions, other types and zero rates are skipped. Where several
// products fit one type, the plain Linux operation (RunInstances) wins, then
// the lower rate. A malformed document is skipped; if none can be read, that
// is an error.
func onDemandFromPriceList(docs []string, region string, types []string, now time.Time) ([]pricing.Price, error) {
	wanted := map[string]bool{}
	for _, t := range types {
		wanted[t] = true
	}
	type pick struct {
		hourly decimal.Decimal
		plain  bool
	}
	best := map[string]pick{}
	var firstErr error
	parsed := 0
	for _, doc := range docs {
		var d priceListProduct
		if err := json.Unmarshal([]byte(doc), &d); err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		parsed++
		a := d.Product.Attributes
		typ := a["instanceType"]
		if !wanted[typ] {
			continue
		}
		if rc, ok := a["regionCode"]; ok && rc != region {
			continue
		}
		if !attrsMatch(a) {
			continue
		}
		hourly, ok := hourlyRate(d.Terms.OnDemand)
		if !ok {
			continue
		}
		cand := pick{hourly: hourly, plain: a["operation"] == "" || a["operation"] == "RunInstances"}
		if cur, ok := best[typ]; ok {
			if cur.plain && !cand.plain || cur.plain == cand.plain && cur.hourly.LessThanOrEqual(cand.hourly) {
				continue
			}
		}
		best[typ] = cand
	}
	if parsed == 0 && firstErr != nil {
		return nil, fmt.Errorf("none of %d price list documents could be read: %v", len(docs), firstErr)
	}
	out := make([]pricing.Price, 0, len(best))
	for _, t := range types {
		if b, ok := best[t]; ok {
			out = append(out, newPrice(region, t, pricing.OnDemand, b.hourly, sourceOnDemand, now))
		}
	}
	return out, nil
}

func attrsMatch(a map[string]string) bool {
	for k, want := range productAttrs {
		if v, ok := a[k]; ok && !strings.EqualFold(v, want) {
			return false
		}
	}
	return true
}

// hourlyRate is the first positive USD "Hrs" rate of the terms, in key order.
func hourlyRate(terms map[string]priceListTerm) (decimal.Decimal, bool) {
	for _, tk := range sortedKeys(terms) {
		dims := terms[tk].PriceDimensions
		keys := make([]string, 0, len(dims))
		for k := range dims {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, dk := range keys {
			dim := dims[dk]
			if !strings.EqualFold(dim.Unit, "Hrs") {
				continue
			}
			v, err := decimal.NewFromString(dim.PricePerUnit["USD"])
			if err == nil && v.IsPositive() {
				return v, true
			}
		}
	}
	return decimal.Decimal{}, false
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// --- spot: DescribeSpotPriceHistory ---

// spotPoint is one price change.
type spotPoint struct {
	at    time.Time
	price decimal.Decimal
}

// zoneSpot is one type's spot price in one zone: now and over the window.
type zoneSpot struct {
	zone     string
	current  decimal.Decimal
	min, max decimal.Decimal
	avg      decimal.Decimal // time-weighted
	points   int
}

// readSpot reads 30 days of Linux/UNIX spot history and prices each type at
// its cheapest zone's current price.
func readSpot(ctx context.Context, api ec2.DescribeSpotPriceHistoryAPIClient, region string, types []string, now time.Time) ([]pricing.Price, error) {
	start := now.Add(-spotWindow)
	history := map[string]map[string][]spotPoint{} // type → zone → points
	for b := 0; b < len(types); b += spotTypesBatch {
		batch := types[b:min(b+spotTypesBatch, len(types))]
		in := &ec2.DescribeSpotPriceHistoryInput{
			ProductDescriptions: []string{linuxUNIX},
			StartTime:           aws.Time(start),
			EndTime:             aws.Time(now),
			MaxResults:          aws.Int32(spotPageSize),
		}
		for _, t := range batch {
			in.InstanceTypes = append(in.InstanceTypes, ec2types.InstanceType(t))
		}
		pager := ec2.NewDescribeSpotPriceHistoryPaginator(api, in, func(o *ec2.DescribeSpotPriceHistoryPaginatorOptions) { o.StopOnDuplicateToken = true })
		for pages := 0; pager.HasMorePages(); pages++ {
			if pages == maxPages {
				return nil, fmt.Errorf("DescribeSpotPriceHistory returned more than %d pages", maxPages)
			}
			out, err := pager.NextPage(ctx)
			if err != nil {
				return nil, err
			}
			for _, sp := range out.SpotPriceHistory {
				typ, zone := string(sp.InstanceType), aws.ToString(sp.AvailabilityZone)
				price, err := decimal.NewFromString(aws.ToString(sp.SpotPrice))
				if typ == "" || zone == "" || sp.Timestamp == nil || err != nil || !price.IsPositive() {
					continue
				}
				if pd := string(sp.ProductDescription); pd != "" && pd != linuxUNIX {
					continue
				}
				if history[typ] == nil {
					history[typ] = map[string][]spotPoint{}
				}
				history[typ][zone] = append(history[typ][zone], spotPoint{at: *sp.Timestamp, price: price})
			}
		}
	}
	var out []pricing.Price
	for _, t := range types {
		zones := spotByZone(history[t], start, now)
		if len(zones) == 0 {
			continue
		}
		best := zones[0]
		for _, z := range zones[1:] {
			if z.current.LessThan(best.current) {
				best = z
			}
		}
		median := spotMedian(history[t], start, now)
		src := fmt.Sprintf("%s; cheapest of %d zones; 30-day min %s, avg %s, max %s; median over the zones and the window %s",
			sourceSpot, len(zones), best.min, best.avg, best.max, median)
		p := newPrice(region, t, pricing.Spot, best.current, src, now)
		p.Zone = best.zone
		p.History = &pricing.PriceHistory{
			Min: best.min, Avg: best.avg, Max: best.max,
			Since: start.Format(time.DateOnly), Until: now.Format(time.DateOnly), Points: best.points,
			Median: median, Zones: len(zones),
		}
		out = append(out, p)
	}
	return out, nil
}

// spotMedian is the time-weighted median spot price over every zone and
// the window [start, end]: each zone-second counts once, so a zone whose
// price sat high for most of the month pulls the median up as it would a
// machine placed there. A point holds until the zone's next one (one from
// before start counts from start). With no time held in the window (a
// single point at end), it is the median of the zones' latest prices.
func spotMedian(byZone map[string][]spotPoint, start, end time.Time) decimal.Decimal {
	type held struct {
		price   decimal.Decimal
		seconds int64
	}
	var all []held
	var total int64
	var latest []decimal.Decimal
	for _, zone := range sortedKeys(byZone) {
		pts := slices.Clone(byZone[zone])
		slices.SortStableFunc(pts, func(a, b spotPoint) int { return a.at.Compare(b.at) })
		latest = append(latest, pts[len(pts)-1].price)
		for i, pt := range pts {
			from, to := pt.at, end
			if i+1 < len(pts) {
				to = pts[i+1].at
			}
			if from.Before(start) {
				from = start
			}
			if to.After(end) {
				to = end
			}
			if s := int64(to.Sub(from) / time.Second); s > 0 {
				all = append(all, held{pt.price, s})
				total += s
			}
		}
	}
	if total == 0 {
		if len(latest) == 0 {
			return decimal.Zero
		}
		slices.SortFunc(latest, func(a, b decimal.Decimal) int { return a.Cmp(b) })
		return latest[(len(latest)-1)/2]
	}
	slices.SortStableFunc(all, func(a, b held) int { return a.price.Cmp(b.price) })
	var acc int64
	for _, h := range all {
		acc += h.seconds
		if 2*acc >= total {
			return h.price
		}
	}
	return all[len(all)-1].price
}

// spotByZone summarises each zone's history over [start, end], sorted by
// zone. The current price is the latest point; each point's price holds
// until the next one, so the average is weighted by how long each held (a
// point from before start counts from start). Minimum and maximum are over
// the prices that held during the window.
func spotByZone(byZone map[string][]spotPoint, start, end time.Time) []zoneSpot {
	var out []zoneSpot
	for _, zone := range sortedKeys(byZone) {
		pts := slices.Clone(byZone[zone])
		slices.SortStableFunc(pts, func(a, b spotPoint) int { return a.at.Compare(b.at) })
		// Keep the last point at or before start and every point after it.
		first := 0
		for i, pt := range pts {
			if !pt.at.After(start) {
				first = i
			}
		}
		pts = pts[first:]
		z := zoneSpot{zone: zone, current: pts[len(pts)-1].price, min: pts[0].price, max: pts[0].price}
		var weighted decimal.Decimal
		var total int64
		for i, pt := range pts {
			from := pt.at
			if from.Before(start) {
				from = start
			}
			to := end
			if i+1 < len(pts) {
				to = pts[i+1].at
			}
			if to.After(end) {
				to = end
			}
			held := int64(to.Sub(from) / time.Second)
			if held <= 0 && i+1 < len(pts) {
				continue // replaced at once (or after the window)
			}
			z.points++
			z.min = decimal.Min(z.min, pt.price)
			z.max = decimal.Max(z.max, pt.price)
			if held > 0 {
				weighted = weighted.Add(pt.price.Mul(decimal.NewFromInt(held)))
				total += held
			}
		}
		z.avg = z.current
		if total > 0 {
			z.avg = weighted.DivRound(decimal.NewFromInt(total), 6)
		}
		out = append(out, z)
	}
	return out
}

// --- Savings Plans: DescribeSavingsPlansOfferingRates ---

// spRate is one usable offering rate.
type spRate struct {
	typ  string
	plan sptypes.SavingsPlanType
	term pricing.Option
	rate decimal.Decimal
}

// readSavingsPlans reads the no-upfront Compute and EC2 Instance Savings
// Plans rates of Linux, shared-tenancy usage and returns one price per type
// and term: the Compute rate, else the EC2 Instance rate.
func readSavingsPlans(ctx context.Context, api offeringRatesAPI, region string, types []string, now time.Time) ([]pricing.Price, error) {
	var rates []spRate
	for b := 0; b < len(types); b += ratesTypesBatch {
		batch := types[b:min(b+ratesTypesBatch, len(types))]
		in := &savingsplans.DescribeSavingsPlansOfferingRatesInput{
			SavingsPlanTypes:          []sptypes.SavingsPlanType{sptypes.SavingsPlanTypeCompute, sptypes.SavingsPlanTypeEc2Instance},
			SavingsPlanPaymentOptions: []sptypes.SavingsPlanPaymentOption{sptypes.SavingsPlanPaymentOptionNoUpfront},
			ServiceCodes:              []sptypes.SavingsPlanRateServiceCode{sptypes.SavingsPlanRateServiceCodeEc2},
			Products:                  []sptypes.SavingsPlanProductType{sptypes.SavingsPlanProductTypeEc2},
			Filters: []sptypes.SavingsPlanOfferingRateFilterElement{
				{Name: sptypes.SavingsPlanRateFilterAttributeRegion, Values: []string{region}},
				{Name: sptypes.SavingsPlanRateFilterAttributeInstanceType, Values: batch},
			},
			MaxResults: ratesPageSize,
		}
		seen := map[string]bool{}
		for pages := 0; ; pages++ {
			if pages == maxPages {
				return nil, fmt.Errorf("DescribeSavingsPlansOfferingRates returned more than %d pages", maxPages)
			}
			release, err := acquire(ctx, ratesCalls)
			if err != nil {
				return nil, err
			}
			out, err := api.DescribeSavingsPlansOfferingRates(ctx, in)
			release()
			if err != nil {
				return nil, err
			}
			for _, r := range out.SearchResults {
				if sr, ok := usableRate(r, region); ok {
					rates = append(rates, sr)
				}
			}
			next := aws.ToString(out.NextToken)
			if next == "" || seen[next] {
				break
			}
			seen[next] = true
			in.NextToken = aws.String(next)
		}
	}
	return savingsPlanPrices(rates, region, types, now), nil
}

// usableRate keeps the hourly, no-upfront, USD rates of Linux shared-tenancy
// usage in the region; properties and fields the answer leaves out are not
// held against it.
func usableRate(r sptypes.SavingsPlanOfferingRate, region string) (spRate, bool) {
	o := r.SavingsPlanOffering
	if o == nil || (r.Unit != "" && r.Unit != sptypes.SavingsPlanRateUnitHours) {
		return spRate{}, false
	}
	if o.PaymentOption != "" && o.PaymentOption != sptypes.SavingsPlanPaymentOptionNoUpfront {
		return spRate{}, false
	}
	if o.Currency != "" && o.Currency != sptypes.CurrencyCodeUsd {
		return spRate{}, false
	}
	if o.PlanType != sptypes.SavingsPlanTypeCompute && o.PlanType != sptypes.SavingsPlanTypeEc2Instance {
		return spRate{}, false
	}
	var term pricing.Option
	switch years := (o.DurationSeconds + year1/2) / year1; {
	case o.DurationSeconds <= 0:
		return spRate{}, false
	case years == 1:
		term = pricing.SavingsPlan1y
	case years == 3:
		term = pricing.SavingsPlan3y
	default:
		return spRate{}, false
	}
	if op := aws.ToString(r.Operation); op != "" && op != "RunInstances" {
		return spRate{}, false // another OS or licence
	}
	if ut := aws.ToString(r.UsageType); strings.Contains(ut, "DedicatedUsage") || strings.Contains(ut, "HostUsage") {
		return spRate{}, false
	}
	props := map[string]string{}
	for _, p := range r.Properties {
		props[aws.ToString(p.Name)] = aws.ToString(p.Value)
	}
	if v, ok := props["region"]; ok && v != region {
		return spRate{}, false
	}
	if v, ok := props["productDescription"]; ok && v != linuxUNIX {
		return spRate{}, false
	}
	if v, ok := props["tenancy"]; ok && !strings.EqualFold(v, "shared") && !strings.EqualFold(v, "default") {
		return spRate{}, false
	}
	typ := props["instanceType"]
	rate, err := decimal.NewFromString(aws.ToString(r.Rate))
	if typ == "" || err != nil || !rate.IsPositive() {
		return spRate{}, false
	}
	return spRate{typ: typ, plan: o.PlanType, term: term, rate: rate}, true
}

// savingsPlanPrices picks, per type and term, the Compute Savings Plan rate
// (it survives a change of instance family, which rightsizing may bring),
// else the EC2 Instance Savings Plan rate; the Source names the plan and,
// when both exist, gives the other rate.
func savingsPlanPrices(rates []spRate, region string, types []string, now time.Time) []pricing.Price {
	type slot struct{ compute, instance *decimal.Decimal }
	lowest := func(cur *decimal.Decimal, v decimal.Decimal) *decimal.Decimal {
		if cur == nil || v.LessThan(*cur) {
			return &v
		}
		return cur
	}
	slots := map[string]map[pricing.Option]*slot{}
	for _, r := range rates {
		if slots[r.typ] == nil {
			slots[r.typ] = map[pricing.Option]*slot{}
		}
		s := slots[r.typ][r.term]
		if s == nil {
			s = &slot{}
			slots[r.typ][r.term] = s
		}
		if r.plan == sptypes.SavingsPlanTypeCompute {
			s.compute = lowest(s.compute, r.rate)
		} else {
			s.instance = lowest(s.instance, r.rate)
		}
	}
	var out []pricing.Price
	for _, t := range types {
		for _, term := range []pricing.Option{pricing.SavingsPlan1y, pricing.SavingsPlan3y} {
			s := slots[t][term]
			if s == nil {
				continue
			}
			years := "1y"
			if term == pricing.SavingsPlan3y {
				years = "3y"
			}
			var rate decimal.Decimal
			var src string
			switch {
			case s.compute != nil:
				rate = *s.compute
				src = fmt.Sprintf("%s, Compute Savings Plan %s No Upfront, live", sourceSavingsPlans, years)
				if s.instance != nil {
					src += fmt.Sprintf(" (EC2 Instance Savings Plan: %s)", s.instance)
				}
			default:
				rate = *s.instance
				src = fmt.Sprintf("%s, EC2 Instance Savings Plan %s No Upfront, live", sourceSavingsPlans, years)
			}
			out = append(out, newPrice(region, t, term, rate, src, now))
		}
	}
	return out
}
