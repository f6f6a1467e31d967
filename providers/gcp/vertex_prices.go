package gcp

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"cloud.google.com/go/billing/apiv1/billingpb"
	"github.com/shopspring/decimal"
	"google.golang.org/api/iterator"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/providers"
)

// VertexService is Vertex AI in the Billing Catalog.
const VertexService = "services/C7E2-9256-1C43"

// vertexPriceSource names the Vertex AI prices.
const vertexPriceSource = "GCP Billing Catalog (Vertex AI)"

// vertexRateKey is one Vertex AI rate: prediction or training, a part, a
// region (on-demand only: Spot and reservations bill Compute Engine's SKUs
// plus a management fee, which is not the node price).
type vertexRateKey struct {
	use    string // "prediction", "training"
	part   part
	region string
}

// vertexTable is the Vertex AI SKUs, read once per provider.
type vertexTable struct {
	rates map[vertexRateKey]rate
}

// vertexUse is what a Vertex AI SKU prices: "prediction", "training", or
// "" (a management fee, or something else).
func vertexUse(desc string) string {
	d := strings.ToLower(desc)
	switch {
	case strings.Contains(d, "management fee"):
		return ""
	case strings.Contains(d, "prediction"):
		return "prediction"
	case strings.Contains(d, "training"):
		return "training"
	}
	return ""
}

// vertexSKUs reads Vertex AI's SKUs once: their per-vCPU, per-GiB and
// per-GPU on-demand rates, read as Compute Engine's are (SKURates).
func (p *Provider) vertexSKUs(ctx context.Context) (*vertexTable, error) {
	p.priceMu.Lock()
	defer p.priceMu.Unlock()
	if p.vertexRates != nil {
		return p.vertexRates, nil
	}
	t := &vertexTable{rates: map[vertexRateKey]rate{}}
	today := p.opts.Now().UTC().Format(time.DateOnly)
	ctx, done := p.withCall(ctx)
	defer done()
	it := p.catalog.ListSkus(ctx, &billingpb.ListSkusRequest{Parent: VertexService, CurrencyCode: "USD", PageSize: skuPageSize})
	for {
		sku, err := it.Next()
		if errors.Is(err, iterator.Done) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("services.skus.list %s: %w", VertexService, callError(ctx, err))
		}
		use := vertexUse(sku.GetDescription())
		if use == "" {
			continue
		}
		for _, r := range SKURates(sku, today) {
			if r.option != pricing.OnDemand {
				continue
			}
			if r.part.kind == "gpu" {
				r.part.model = gpuKey(r.part.model)
			}
			k := vertexRateKey{use, r.part, r.region}
			if old, dup := t.rates[k]; !dup || r.before(old) {
				t.rates[k] = r
			}
		}
	}
	p.vertexRates = t
	return t, nil
}

// parseVertexPriceType reads vertex-ai/<use>/<machineType>[+<n>x<ENUM>].
func parseVertexPriceType(pt string) (use, machine string, count float64, model string, ok bool) {
	rest, found := strings.CutPrefix(pt, "vertex-ai/")
	if !found {
		return "", "", 0, "", false
	}
	use, rest, found = strings.Cut(rest, "/")
	if !found || (use != "prediction" && use != "training") {
		return "", "", 0, "", false
	}
	machine, acc, withAcc := strings.Cut(rest, "+")
	if machine == "" {
		return "", "", 0, "", false
	}
	if withAcc {
		n, enum, found := strings.Cut(acc, "x")
		c, err := strconv.Atoi(n)
		if !found || err != nil || c <= 0 || !strings.HasPrefix(enum, "NVIDIA_") || vertexGPU(enum) == "" {
			return "", "", 0, "", false
		}
		count, model = float64(c), vertexGPU(enum)
	}
	return use, machine, count, model, true
}

// vertexPrices prices Vertex AI price types in the scope's region: the
// machine's vCPUs and GiB (machineTypes) and its GPUs at Vertex AI's own
// rates for prediction or training. A type with a part the catalog does
// not price gets no price (the engine warns), never Compute Engine's.
func (p *Provider) vertexPrices(ctx context.Context, scope providers.Scope, types []string) ([]pricing.Price, error) {
	t, err := p.vertexSKUs(ctx)
	if err != nil {
		return nil, err
	}
	var out []pricing.Price
	for _, pt := range types {
		use, machine, count, model, ok := parseVertexPriceType(pt)
		if !ok {
			continue
		}
		info, err := p.machineTypeAnywhere(ctx, scope.Account, machine)
		if err != nil {
			if errors.Is(err, providers.ErrNotFound) {
				continue
			}
			return nil, err
		}
		if count == 0 {
			count, model = info.gpuCount, info.gpuModel
		}
		family, _, _ := strings.Cut(machine, "-")
		core, ok1 := t.rates[vertexRateKey{use, part{kind: "core", family: family}, scope.Region}]
		ram, ok2 := t.rates[vertexRateKey{use, part{kind: "ram", family: family}, scope.Region}]
		gpu, ok3 := t.rates[vertexRateKey{use, part{kind: "gpu", model: gpuKey(model)}, scope.Region}]
		if !ok1 || !ok2 || !ok3 || count <= 0 || info.vcpus <= 0 {
			continue
		}
		hourly := core.hourly.Mul(decimal.NewFromFloat(info.vcpus)).
			Add(ram.hourly.Mul(decimal.NewFromFloat(info.memoryGiB))).
			Add(gpu.hourly.Mul(decimal.NewFromFloat(count))).Round(6)
		out = append(out, pricing.Price{
			Provider: fleet.GCP, Region: scope.Region, InstanceType: pt, Option: pricing.OnDemand, Hourly: hourly,
			Currency: pricing.Currency, Unit: pricing.UnitHour, AsOf: slices.Max([]string{core.asOf, ram.asOf, gpu.asOf}),
			Source: fmt.Sprintf("%s, %s: %s vCPU × $%s + %s GiB × $%s + %s GPU × $%s", vertexPriceSource, use,
				num(info.vcpus), core.hourly, num(info.memoryGiB), ram.hourly, num(count), gpu.hourly),
		})
	}
	return out, nil
}
