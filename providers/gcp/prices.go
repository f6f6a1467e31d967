package gcp

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"cloud.google.com/go/billing/apiv1/billingpb"
	"cloud.google.com/go/compute/apiv1/computepb"
	"github.com/shopspring/decimal"
	"google.golang.org/api/iterator"
	"google.golang.org/protobuf/proto"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/cache"
	"github.com/gpufinops/gpufinops/pricing/catalog"
	"github.com/gpufinops/gpufinops/providers"
)

// ComputeService is Compute Engine in the Billing Catalog.
const ComputeService = "services/6F81-5844-456A"

// skuPageSize is the Billing Catalog's largest page.
const skuPageSize = 5000

// priceSource names the live prices.
const priceSource = "Cloud Billing Catalog (Compute Engine SKUs)"

// part is what a SKU prices: a vCPU or a GiB of RAM of a machine family,
// or one GPU of a model.
type part struct {
	kind   string // "core", "ram", "gpu"
	family string // lower case, e.g. "a2"; "" for GPUs
	model  string // GPU model; "" for cores and RAM
}

// rate is a SKU's hourly price of one unit under one purchase option.
type rate struct {
	part   part
	option pricing.Option
	region string
	hourly decimal.Decimal
	asOf   string
}

// skuTable is the Compute Engine SKUs, read once per provider.
type skuTable struct {
	rates map[rateKey]rate
}

type rateKey struct {
	part   part
	option pricing.Option
	region string
}

// ReadPrices implements providers.PriceReader: on-demand, spot and 1- and
// 3-year commitment prices of the scope's accelerator-optimized machine
// types, each the sum of its vCPUs, RAM and GPUs at the Billing Catalog's
// rates in the region. The whole Compute Engine SKU list has no server-side
// filter, so it is read once per provider and the prices of each region are
// cached on disk (Options.CacheDir) for the cache's TTL. A type whose parts
// are not all priced (N1 with attached GPUs, whose GPUs the type does not
// say) is left to the embedded catalog.
func (p *Provider) ReadPrices(ctx context.Context, scope providers.Scope, instanceTypes []string) ([]pricing.Price, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var types, vertex []string
	for _, t := range instanceTypes {
		switch {
		case strings.HasPrefix(t, "vertex-ai/"):
			vertex = append(vertex, t)
		case bundlesGPUs(t):
			types = append(types, t)
		}
	}
	var vertexOut []pricing.Price
	if len(vertex) > 0 {
		var err error
		if vertexOut, err = p.vertexPrices(ctx, scope, vertex); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			// The VMs' prices go on; the Vertex AI items have none (the
			// engine warns of each).
			p.note(fmt.Sprintf("gcp %s Vertex AI prices not read: %v", scope.Region, classify(err)))
		}
	}
	if len(types) == 0 {
		return vertexOut, nil
	}
	var c *cache.Cache
	if p.opts.CacheDir != "" {
		c = cache.New(p.opts.CacheDir, p.opts.CacheTTL, p.opts.Now)
	}
	// "-units": the entries carry the per-resource unit prices too; a cache
	// written before they were read is not reused.
	key := cache.Key{Provider: fleet.GCP, Region: scope.Region, Types: types, Kind: "billing-catalog-units", Origin: p.opts.Endpoint}
	res, err := c.Load(ctx, key, func(ctx context.Context) ([]pricing.Price, error) {
		return p.livePrices(ctx, scope, types)
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("gcp %s live prices: %w", scope.Region, classify(err))
	}
	return append(res.Prices, vertexOut...), nil
}

// livePrices prices types in the scope's region from the SKU table.
func (p *Provider) livePrices(ctx context.Context, scope providers.Scope, types []string) ([]pricing.Price, error) {
	t, err := p.skuList(ctx)
	if err != nil {
		return nil, err
	}
	var out []pricing.Price
	seen := map[string]bool{}
	for _, typ := range types {
		info, err := p.machineTypeAnywhere(ctx, scope.Account, typ)
		if err != nil {
			if errors.Is(err, providers.ErrNotFound) {
				continue
			}
			return nil, err
		}
		out = append(out, t.prices(scope.Region, typ, info)...)
		out = append(out, t.resourcePrices(scope.Region, typ, info, seen)...)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Resource != out[j].Resource {
			return out[i].Resource < out[j].Resource
		}
		if out[i].InstanceType != out[j].InstanceType {
			return out[i].InstanceType < out[j].InstanceType
		}
		return out[i].Option < out[j].Option
	})
	return out, nil
}

// options are the purchase options priced, in order.
var options = []pricing.Option{pricing.OnDemand, pricing.Spot, pricing.SavingsPlan1y, pricing.SavingsPlan3y}

// prices composes a type's prices in a region: vCPUs × core + GiB × RAM +
// GPUs × GPU, for each option whose three rates exist.
func (t *skuTable) prices(region, typ string, info machineInfo) []pricing.Price {
	family, _, _ := strings.Cut(typ, "-")
	var out []pricing.Price
	for _, o := range options {
		core, ok1 := t.rates[rateKey{part{kind: "core", family: family}, o, region}]
		ram, ok2 := t.rates[rateKey{part{kind: "ram", family: family}, o, region}]
		gpu, ok3 := t.rates[rateKey{part{kind: "gpu", model: gpuKey(info.gpuModel)}, o, region}]
		if !ok1 || !ok2 || !ok3 || info.gpuCount <= 0 {
			continue
		}
		hourly := core.hourly.Mul(decimal.NewFromFloat(info.vcpus)).
			Add(ram.hourly.Mul(decimal.NewFromFloat(info.memoryGiB))).
			Add(gpu.hourly.Mul(decimal.NewFromFloat(info.gpuCount))).Round(6)
		asOf := slices.Max([]string{core.asOf, ram.asOf, gpu.asOf})
		pr := pricing.Price{
			Provider: fleet.GCP, Region: region, InstanceType: typ, Option: o, Hourly: hourly,
			Currency: pricing.Currency, Unit: pricing.UnitHour, Source: priceSource + ", host+accelerator", AsOf: asOf,
		}
		if term, ok := pricing.CommitmentTerm(o); ok {
			// The "Commitment v1" SKUs: a resource-based CUD's rate per
			// vCPU, GiB and GPU, summed over the type's resources.
			pr.Commitment = pricing.ResourceCUD
			pr.Source = fmt.Sprintf("%s, %s resource-based CUD (Commitment v1: %s vCPU × $%s + %s GiB × $%s + %s GPU × $%s)", priceSource, term,
				num(info.vcpus), core.hourly, num(info.memoryGiB), ram.hourly, num(info.gpuCount), gpu.hourly)
		}
		out = append(out, pr)
	}
	return out
}

// resourcePrices are the per-unit prices of a type's resources in a region,
// each once (seen): a vCPU and a GiB of its family, one of its GPUs, under
// each option the Billing Catalog prices. A resource-based CUD is bought in
// these units, so the engine sizes and prices it per resource with them.
func (t *skuTable) resourcePrices(region, typ string, info machineInfo, seen map[string]bool) []pricing.Price {
	family, _, _ := strings.Cut(typ, "-")
	var out []pricing.Price
	for _, r := range []struct {
		resource, name string
		part           part
	}{
		{pricing.ResourceVCPU, family, part{kind: "core", family: family}},
		{pricing.ResourceMemory, family, part{kind: "ram", family: family}},
		{pricing.ResourceGPU, gpuKey(info.gpuModel), part{kind: "gpu", model: gpuKey(info.gpuModel)}},
	} {
		if r.name == "" || seen[r.resource+"/"+r.name] {
			continue
		}
		seen[r.resource+"/"+r.name] = true
		for _, o := range options {
			rt, ok := t.rates[rateKey{r.part, o, region}]
			if !ok {
				continue
			}
			pr := pricing.Price{Provider: fleet.GCP, Region: region, InstanceType: r.name, Resource: r.resource, Option: o, Hourly: rt.hourly,
				Currency: pricing.Currency, Unit: pricing.UnitHour, Source: priceSource + ", " + r.resource + " SKU", AsOf: rt.asOf}
			if term, ok := pricing.CommitmentTerm(o); ok {
				pr.Commitment = pricing.ResourceCUD
				pr.Source = priceSource + ", Commitment v1 " + r.resource + " SKU (" + term + ")"
			}
			out = append(out, pr)
		}
	}
	return out
}

// before orders two rates of the same part, option and region: the lower
// rate first, then the earlier date. The Cloud Billing API documents no
// order for services.skus.list, so of several SKUs pricing the same thing
// (a variant beside the plain SKU) the lowest rate is kept: a choice that
// depends on the SKUs only, never on the order they are listed in.
func (r rate) before(o rate) bool {
	if c := r.hourly.Cmp(o.hourly); c != 0 {
		return c < 0
	}
	return r.asOf < o.asOf
}

// skuList reads the Compute Engine SKUs once per provider; of several SKUs
// with a rate for the same part, option and region it keeps the lowest
// (rate.before), whatever the listing's order.
func (p *Provider) skuList(ctx context.Context) (*skuTable, error) {
	p.priceMu.Lock()
	defer p.priceMu.Unlock()
	if p.skus != nil {
		return p.skus, nil
	}
	t := &skuTable{rates: map[rateKey]rate{}}
	today := p.opts.Now().UTC().Format(time.DateOnly)
	ctx, done := p.withCall(ctx)
	defer done()
	it := p.catalog.ListSkus(ctx, &billingpb.ListSkusRequest{Parent: ComputeService, CurrencyCode: "USD", PageSize: skuPageSize})
	for {
		sku, err := it.Next()
		if errors.Is(err, iterator.Done) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("services.skus.list: %w", callError(ctx, err))
		}
		for _, r := range SKURates(sku, today) {
			if r.part.kind == "gpu" {
				r.part.model = gpuKey(r.part.model)
			}
			k := rateKey{r.part, r.option, r.region}
			if old, dup := t.rates[k]; !dup || r.before(old) {
				t.rates[k] = r
			}
		}
	}
	p.skus = t
	return t, nil
}

// gpuKey is the name a GPU's rates are kept under: the catalog's spec name
// where the catalog knows the model, so that the names a SKU, a machine
// type and the catalog give one GPU (the g4's "RTX PRO Server 6000" and
// "RTXPRO6000") find the same rate. A model the Billing Catalog prices
// under SKUs of its own keeps its name even where the catalog says which
// GPU it is: "Nvidia H100 80GB Mega GPU" (a3-megagpu) is priced apart from
// "Nvidia H100 80GB GPU" (a3-highgpu, a3-edgegpu), at another rate, and
// keyed as H100 both would take the lower of the two.
func gpuKey(model string) string {
	keys := gpuKeys()
	if k, ok := keys.of[model]; ok {
		return k
	}
	if g, ok := keys.cat.GPU(model); ok {
		return g.Name
	}
	return model
}

// gpuKeyTable is the key of each model gpuNames reads from SKU
// descriptions, worked out once, and the catalog for the other names.
type gpuKeyTable struct {
	of  map[string]string
	cat pricing.Catalog
}

// gpuKeys loads the embedded catalog on the first price read, not when the
// package loads: a command that reads no GCP price never parses it for this.
var gpuKeys = sync.OnceValue(func() gpuKeyTable {
	t := gpuKeyTable{of: map[string]string{}, cat: pricing.Overlay(nil, nil)}
	if cat, err := catalog.Embedded(); err == nil {
		t.cat = cat
	}
	names := map[string]bool{}
	for _, g := range gpuNames {
		names[g.model] = true
	}
	for m := range names {
		t.of[m] = m
		// A model whose spec name is another SKU model has SKUs of its own
		// and keeps its name; the rest take the spec name.
		if g, ok := t.cat.GPU(m); ok && !(g.Name != m && names[g.Name]) {
			t.of[m] = g.Name
		}
	}
	return t
})

var (
	familyWord = regexp.MustCompile(`(?i)\b(a2|a3|a4x|a4|g2|g4|n1)\b`)
	coreWord   = regexp.MustCompile(`(?i)\b(core|cpu)\b`)
	ramWord    = regexp.MustCompile(`(?i)\b(ram|memory)\b`)
)

// gpuNames match GPU SKU descriptions to models, most specific first.
var gpuNames = []struct {
	re    *regexp.Regexp
	model string
}{
	{regexp.MustCompile(`(?i)\bA100 80GB\b`), "A100-80GB"},
	{regexp.MustCompile(`(?i)\bA100\b`), "A100"},
	{regexp.MustCompile(`(?i)\bH100 80GB Mega\b|\bH100 Mega\b`), "H100-MEGA"},
	{regexp.MustCompile(`(?i)\bH100\b`), "H100"},
	{regexp.MustCompile(`(?i)\bH200\b`), "H200"},
	{regexp.MustCompile(`(?i)\bGB200\b`), "GB200"},
	{regexp.MustCompile(`(?i)\bB200\b`), "B200"},
	{regexp.MustCompile(`(?i)\bL4\b`), "L4"},
	{regexp.MustCompile(`(?i)\bT4\b`), "T4"},
	{regexp.MustCompile(`(?i)\bV100\b`), "V100"},
	{regexp.MustCompile(`(?i)\bP100\b`), "P100"},
	{regexp.MustCompile(`(?i)\bP4\b`), "P4"},
	{regexp.MustCompile(`(?i)\bRTX (PRO )?6000\b`), "RTX PRO Server 6000"},
}

// SKURates reads the hourly rates a Compute Engine SKU gives, one per
// service region: what it prices (from the resource group and the
// description, since the wording varies by family), the purchase option
// (the usage type, or Spot/Preemptible/Commitment in the description) and
// the first tier's unit price, units + nanos converted exactly. A SKU that
// prices something else, per another unit, or in another currency gives
// none.
func SKURates(sku *billingpb.Sku, today string) []rate {
	desc := sku.GetDescription()
	cat := sku.GetCategory()
	if cat.GetResourceFamily() != "" && cat.GetResourceFamily() != "Compute" {
		return nil
	}
	var pt part
	switch {
	case cat.GetResourceGroup() == "GPU" || strings.Contains(strings.ToUpper(desc), "GPU"):
		for _, g := range gpuNames {
			if g.re.MatchString(desc) {
				pt = part{kind: "gpu", model: g.model}
				break
			}
		}
	default:
		fam := familyWord.FindString(desc)
		if fam == "" {
			return nil
		}
		switch {
		case coreWord.MatchString(desc):
			pt = part{kind: "core", family: strings.ToLower(fam)}
		case ramWord.MatchString(desc):
			pt = part{kind: "ram", family: strings.ToLower(fam)}
		}
	}
	if pt.kind == "" {
		return nil
	}
	opt, ok := optionOf(cat.GetUsageType(), desc)
	if !ok {
		return nil
	}
	infos := sku.GetPricingInfo()
	if len(infos) == 0 {
		return nil
	}
	info := infos[len(infos)-1]
	expr := info.GetPricingExpression()
	wantUnit := "h"
	if pt.kind == "ram" {
		wantUnit = "GiBy.h"
	}
	if expr.GetUsageUnit() != wantUnit {
		return nil
	}
	var price *billingpb.PricingExpression_TierRate
	for _, tr := range expr.GetTieredRates() {
		if tr.GetStartUsageAmount() == 0 {
			price = tr
			break
		}
	}
	if price == nil || (price.GetUnitPrice().GetCurrencyCode() != "" && price.GetUnitPrice().GetCurrencyCode() != pricing.Currency) {
		return nil
	}
	hourly := Money(price.GetUnitPrice().GetUnits(), price.GetUnitPrice().GetNanos())
	if !hourly.IsPositive() {
		return nil
	}
	asOf := today
	if t := info.GetEffectiveTime(); t != nil && t.IsValid() {
		asOf = t.AsTime().UTC().Format(time.DateOnly)
	}
	var out []rate
	for _, region := range sku.GetServiceRegions() {
		out = append(out, rate{part: pt, option: opt, region: region, hourly: hourly, asOf: asOf})
	}
	return out
}

// optionOf is the purchase option of a usage type, the description
// deciding when the usage type says nothing (some spot SKUs say OnDemand).
func optionOf(usage, desc string) (pricing.Option, bool) {
	d := strings.ToLower(desc)
	switch {
	case usage == "Commit1Yr" || strings.Contains(d, "commitment") && strings.Contains(d, "1 year"):
		return pricing.SavingsPlan1y, true
	case usage == "Commit3Yr" || strings.Contains(d, "commitment") && strings.Contains(d, "3 year"):
		return pricing.SavingsPlan3y, true
	case usage == "Preemptible" || strings.Contains(d, "spot") || strings.Contains(d, "preemptible"):
		return pricing.Spot, true
	case usage == "OnDemand" || usage == "":
		return pricing.OnDemand, true
	}
	return "", false
}

// num writes a resource count without a needless fraction.
func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// Money is units + nanos/10⁹ exactly, as google.type.Money gives it (the
// signs of both agree).
func Money(units int64, nanos int32) decimal.Decimal {
	return decimal.New(units, 0).Add(decimal.New(int64(nanos), -9))
}

// machineTypeAnywhere reads a machine type from whichever zone offers it
// (machineTypes.aggregatedList filtered by name), once per provider.
func (p *Provider) machineTypeAnywhere(ctx context.Context, project, name string) (machineInfo, error) {
	p.typeMu.Lock()
	info, ok := p.types[name]
	p.typeMu.Unlock()
	if ok {
		return info, nil
	}
	ctx, done := p.withCall(ctx)
	defer done()
	it := p.machineTypes.AggregatedList(ctx, &computepb.AggregatedListMachineTypesRequest{
		Project: project, Filter: proto.String(fmt.Sprintf("name = %q", name)), MaxResults: proto.Uint32(pageSize),
	})
	for {
		pair, err := it.Next()
		if errors.Is(err, iterator.Done) {
			break
		}
		if err != nil {
			return machineInfo{}, fmt.Errorf("machineTypes.aggregatedList %s: %w", name, callError(ctx, err))
		}
		for _, mt := range pair.Value.GetMachineTypes() {
			if mt.GetName() == name {
				return p.remember(mt), nil
			}
		}
	}
	return machineInfo{}, fmt.Errorf("%w: machine type %s", providers.ErrNotFound, name)
}
