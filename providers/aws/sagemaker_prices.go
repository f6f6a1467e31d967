package aws

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awspricing "github.com/aws/aws-sdk-go-v2/service/pricing"
	pricingtypes "github.com/aws/aws-sdk-go-v2/service/pricing/types"
	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pricing"
)

// SageMaker's on-demand prices come from the Price List's AmazonSageMaker
// offer: productFamily "ML Instance", attributes instanceName (the ml.*
// type), regionCode and component (Hosting, Notebook, Training, …;
// shared/data/managed-ai/metrics.md §1.3). The components of a type share
// one price (shared/data/managed-ai/README.md §1): Hosting is taken, else
// the first other component in sageMakerComponents. SageMaker has no spot
// price (managed spot training bills a discount AWS does not publish per
// type) and no Compute Savings Plan rate.
const (
	sageMakerServiceCode = "AmazonSageMaker"
	sourceSageMaker      = "AWS Price List API (AmazonSageMaker)"
	kindSageMaker        = "sagemaker"
)

// sageMakerComponents are the components a price is taken from, in order
// of preference; the free tiers and Processing_Geo are never.
var sageMakerComponents = []string{"Hosting", "Training", "Notebook", "Studio-JupyterLab", "Processing", "AsyncInference"}

// isSageMakerType reports whether a type is SageMaker's (ml.*).
func isSageMakerType(t string) bool { return strings.HasPrefix(t, "ml.") }

// sageMakerFilters pin an ml.* type's ML Instance products in a region.
func sageMakerFilters(region, instanceType string) []pricingtypes.Filter {
	term := func(field, value string) pricingtypes.Filter {
		return pricingtypes.Filter{Field: aws.String(field), Type: pricingtypes.FilterTypeTermMatch, Value: aws.String(value)}
	}
	return []pricingtypes.Filter{
		term("regionCode", region),
		term("productFamily", "ML Instance"),
		term("instanceName", instanceType),
	}
}

// readSageMakerOnDemand reads the ml.* types' on-demand prices, one query
// a type.
func readSageMakerOnDemand(ctx context.Context, api awspricing.GetProductsAPIClient, region string, types []string, now time.Time) ([]pricing.Price, error) {
	var docs []string
	for _, t := range types {
		d, err := getServiceProducts(ctx, api, sageMakerServiceCode, sageMakerFilters(region, t))
		if err != nil {
			return nil, err
		}
		docs = append(docs, d...)
	}
	return sageMakerFromPriceList(docs, region, types, now)
}

// sageMakerFromPriceList picks each wanted type's hourly rate from the
// AmazonSageMaker documents (component preference as above); a malformed
// document is skipped, and if none can be read that is an error.
func sageMakerFromPriceList(docs []string, region string, types []string, now time.Time) ([]pricing.Price, error) {
	wanted := map[string]bool{}
	for _, t := range types {
		wanted[t] = true
	}
	rank := map[string]int{}
	for i, c := range sageMakerComponents {
		rank[strings.ToLower(c)] = i + 1
	}
	type pick struct {
		hourly decimal.Decimal
		rank   int
	}
	best := map[string]pick{}
	parsed := 0
	var firstErr error
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
		typ := a["instanceName"]
		r := rank[strings.ToLower(a["component"])]
		if !wanted[typ] || r == 0 {
			continue
		}
		if rc, ok := a["regionCode"]; ok && rc != region {
			continue
		}
		hourly, ok := hourlyRate(d.Terms.OnDemand)
		if !ok {
			continue
		}
		if cur, ok := best[typ]; ok && (cur.rank < r || cur.rank == r && cur.hourly.LessThanOrEqual(hourly)) {
			continue
		}
		best[typ] = pick{hourly, r}
	}
	if parsed == 0 && firstErr != nil {
		return nil, fmt.Errorf("none of %d SageMaker price list documents could be read: %v", len(docs), firstErr)
	}
	var out []pricing.Price
	for _, t := range types {
		if b, ok := best[t]; ok {
			out = append(out, newPrice(region, t, pricing.OnDemand, b.hourly, sourceSageMaker, now))
		}
	}
	return out, nil
}
