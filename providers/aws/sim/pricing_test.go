package sim

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/pricing"
	ptypes "github.com/aws/aws-sdk-go-v2/service/pricing/types"
	"github.com/aws/aws-sdk-go-v2/service/savingsplans"
	sptypes "github.com/aws/aws-sdk-go-v2/service/savingsplans/types"
	"github.com/shopspring/decimal"
)

// priceDoc is the part of a Price List document a client reads.
type priceDoc struct {
	Product struct {
		ProductFamily string            `json:"productFamily"`
		SKU           string            `json:"sku"`
		Attributes    map[string]string `json:"attributes"`
	} `json:"product"`
	ServiceCode string `json:"serviceCode"`
	Terms       map[string]map[string]struct {
		SKU             string            `json:"sku"`
		TermAttributes  map[string]string `json:"termAttributes"`
		PriceDimensions map[string]struct {
			Unit         string            `json:"unit"`
			PricePerUnit map[string]string `json:"pricePerUnit"`
		} `json:"priceDimensions"`
	} `json:"terms"`
}

func termMatch(field, value string) ptypes.Filter {
	return ptypes.Filter{Type: ptypes.FilterTypeTermMatch, Field: aws.String(field), Value: aws.String(value)}
}

// linuxFilters pin one Linux on-demand row, the way adapters ask.
func linuxFilters(extra ...ptypes.Filter) []ptypes.Filter {
	return append([]ptypes.Filter{
		termMatch("operatingSystem", "Linux"), termMatch("tenancy", "Shared"), termMatch("preInstalledSw", "NA"),
		termMatch("capacitystatus", "Used"), termMatch("marketoption", "OnDemand"), termMatch("licenseModel", "No License required"),
		termMatch("productFamily", "Compute Instance"),
	}, extra...)
}

func getProducts(t *testing.T, c *pricing.Client, pageSize int32, filters []ptypes.Filter) (docs []priceDoc, pages int) {
	t.Helper()
	p := pricing.NewGetProductsPaginator(c, &pricing.GetProductsInput{
		ServiceCode: aws.String("AmazonEC2"), FormatVersion: aws.String("aws_v1"), Filters: filters, MaxResults: aws.Int32(pageSize),
	})
	for p.HasMorePages() {
		out, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, s := range out.PriceList {
			var d priceDoc
			if err := json.Unmarshal([]byte(s), &d); err != nil {
				t.Fatalf("PriceList item is not a JSON document: %v\n%s", err, s)
			}
			docs = append(docs, d)
		}
	}
	return docs, pages
}

func TestGetProducts(t *testing.T) {
	_, srv := serveFixture(t, fixtureFleet(), Options{})
	c := pricingClient(srv)

	docs, _ := getProducts(t, c, 100, linuxFilters(termMatch("regionCode", "us-east-1"), termMatch("instanceType", "g5.xlarge")))
	if len(docs) != 1 {
		t.Fatalf("%d products, want 1", len(docs))
	}
	d := docs[0]
	a := d.Product.Attributes
	if d.ServiceCode != "AmazonEC2" || d.Product.ProductFamily != "Compute Instance" || a["instanceType"] != "g5.xlarge" ||
		a["location"] != "US East (N. Virginia)" || a["vcpu"] != "4" || a["memory"] != "16 GiB" || a["gpu"] != "1" ||
		a["gpuMemory"] != "24 GiB" || a["usagetype"] != "BoxUsage:g5.xlarge" {
		t.Errorf("product %+v", d.Product)
	}
	var onDemand, ri1, ri3 decimal.Decimal
	for _, term := range d.Terms["OnDemand"] {
		if term.SKU != d.Product.SKU {
			t.Errorf("term SKU %s, product %s", term.SKU, d.Product.SKU)
		}
		for _, dim := range term.PriceDimensions {
			if dim.Unit == "Hrs" {
				onDemand = decimal.RequireFromString(dim.PricePerUnit["USD"])
			}
		}
	}
	for _, term := range d.Terms["Reserved"] {
		for _, dim := range term.PriceDimensions {
			v := decimal.RequireFromString(dim.PricePerUnit["USD"])
			if term.TermAttributes["PurchaseOption"] != "No Upfront" || dim.Unit != "Hrs" {
				t.Errorf("reserved term %+v", term.TermAttributes)
			}
			switch term.TermAttributes["LeaseContractLength"] {
			case "1yr":
				ri1 = v
			case "3yr":
				ri3 = v
			}
		}
	}
	if !onDemand.Equal(decimal.RequireFromString("1.006")) {
		t.Errorf("on-demand %s", onDemand)
	}
	if !ri1.Equal(decimal.RequireFromString("0.6539")) || !ri3.Equal(decimal.RequireFromString("0.4527")) {
		t.Errorf("reserved 1yr %s 3yr %s", ri1, ri3)
	}

	// By location name; Neuron and partitioned types.
	docs, _ = getProducts(t, c, 100, linuxFilters(termMatch("location", "US West (Oregon)")))
	if len(docs) != 2 || docs[0].Product.Attributes["regionCode"] != "us-west-2" {
		t.Errorf("us-west-2 by location: %d products", len(docs))
	}
	docs, _ = getProducts(t, c, 100, linuxFilters(termMatch("instanceType", "g6f.large")))
	if len(docs) != 1 || docs[0].Product.Attributes["gpu"] != "0.125" {
		t.Errorf("g6f.large: %+v", docs)
	}
	// Paginated: every product, one at a time.
	docs, pages := getProducts(t, c, 1, nil)
	if len(docs) != len(fixturePrices) || pages != len(fixturePrices) {
		t.Errorf("all products: %d in %d pages", len(docs), pages)
	}
	// Windows and other services are not simulated.
	if docs, _ := getProducts(t, c, 100, []ptypes.Filter{termMatch("operatingSystem", "Windows")}); len(docs) != 0 {
		t.Errorf("windows: %d products", len(docs))
	}
	// A bad page size and a bad token are client errors.
	_, err := c.GetProducts(context.Background(), &pricing.GetProductsInput{ServiceCode: aws.String("AmazonEC2"), MaxResults: aws.Int32(101)})
	if code := errorCode(t, err); code != "InvalidParameterException" {
		t.Errorf("MaxResults 101: %v", err)
	}
	_, err = c.GetProducts(context.Background(), &pricing.GetProductsInput{ServiceCode: aws.String("AmazonEC2"), NextToken: aws.String("x")})
	if code := errorCode(t, err); code != "InvalidNextTokenException" {
		t.Errorf("bad token: %v", err)
	}

	svc, err := c.DescribeServices(context.Background(), &pricing.DescribeServicesInput{ServiceCode: aws.String("AmazonEC2")})
	if err != nil || len(svc.Services) != 1 || len(svc.Services[0].AttributeNames) < 10 {
		t.Errorf("DescribeServices: %v %+v", err, svc)
	}
}

func TestSavingsPlansOfferingRates(t *testing.T) {
	_, srv := serveFixture(t, fixtureFleet(), Options{})
	c := savingsPlansClient(srv)
	ctx := context.Background()

	out, err := c.DescribeSavingsPlansOfferingRates(ctx, &savingsplans.DescribeSavingsPlansOfferingRatesInput{
		Products:                  []sptypes.SavingsPlanProductType{sptypes.SavingsPlanProductTypeEc2},
		ServiceCodes:              []sptypes.SavingsPlanRateServiceCode{sptypes.SavingsPlanRateServiceCodeEc2},
		SavingsPlanTypes:          []sptypes.SavingsPlanType{sptypes.SavingsPlanTypeCompute},
		SavingsPlanPaymentOptions: []sptypes.SavingsPlanPaymentOption{sptypes.SavingsPlanPaymentOptionNoUpfront},
		Filters: []sptypes.SavingsPlanOfferingRateFilterElement{
			{Name: sptypes.SavingsPlanRateFilterAttributeRegion, Values: []string{"us-east-1"}},
			{Name: sptypes.SavingsPlanRateFilterAttributeInstanceType, Values: []string{"g5.xlarge"}},
			{Name: sptypes.SavingsPlanRateFilterAttributeProductDescription, Values: []string{"Linux/UNIX"}},
			{Name: sptypes.SavingsPlanRateFilterAttributeTenancy, Values: []string{"shared"}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.SearchResults) != 2 {
		t.Fatalf("%d rates, want 1y and 3y", len(out.SearchResults))
	}
	byTerm := map[int64]string{}
	for _, r := range out.SearchResults {
		o := r.SavingsPlanOffering
		if o.PlanType != sptypes.SavingsPlanTypeCompute || o.PaymentOption != sptypes.SavingsPlanPaymentOptionNoUpfront ||
			o.Currency != sptypes.CurrencyCodeUsd || aws.ToString(o.OfferingId) == "" ||
			r.Unit != sptypes.SavingsPlanRateUnitHours || aws.ToString(r.UsageType) != "USE1-BoxUsage:g5.xlarge" ||
			aws.ToString(r.Operation) != "RunInstances" || r.ProductType != sptypes.SavingsPlanProductTypeEc2 || r.ServiceCode != sptypes.SavingsPlanRateServiceCodeEc2 {
			t.Errorf("rate %+v offering %+v", r, o)
		}
		props := map[string]string{}
		for _, p := range r.Properties {
			props[aws.ToString(p.Name)] = aws.ToString(p.Value)
		}
		if props["region"] != "us-east-1" || props["instanceType"] != "g5.xlarge" || props["tenancy"] != "shared" {
			t.Errorf("properties %v", props)
		}
		byTerm[o.DurationSeconds] = aws.ToString(r.Rate)
	}
	if byTerm[31536000] != "0.724" || byTerm[94608000] != "0.497" {
		t.Errorf("rates by term %v", byTerm)
	}

	// EC2 Instance plans are derived, 8% under Compute.
	out, err = c.DescribeSavingsPlansOfferingRates(ctx, &savingsplans.DescribeSavingsPlansOfferingRatesInput{
		SavingsPlanTypes: []sptypes.SavingsPlanType{sptypes.SavingsPlanTypeEc2Instance},
		Filters: []sptypes.SavingsPlanOfferingRateFilterElement{
			{Name: sptypes.SavingsPlanRateFilterAttributeRegion, Values: []string{"us-east-1"}},
			{Name: sptypes.SavingsPlanRateFilterAttributeInstanceType, Values: []string{"p4d.24xlarge"}},
		},
	})
	if err != nil || len(out.SearchResults) != 2 {
		t.Fatalf("EC2 Instance rates: %v %d", err, len(out.SearchResults))
	}
	for _, r := range out.SearchResults {
		if r.SavingsPlanOffering.DurationSeconds == 31536000 && aws.ToString(r.Rate) != "21.16" {
			t.Errorf("EC2 Instance 1y rate %s, want 21.16", aws.ToString(r.Rate))
		}
	}

	// Every rate, three at a time (the SDK has no paginator here).
	var all []sptypes.SavingsPlanOfferingRate
	var token *string
	pages := 0
	for {
		out, err := c.DescribeSavingsPlansOfferingRates(ctx, &savingsplans.DescribeSavingsPlansOfferingRatesInput{MaxResults: 3, NextToken: token})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		all = append(all, out.SearchResults...)
		if aws.ToString(out.NextToken) == "" {
			break
		}
		token = out.NextToken
	}
	// Rates given: 5 one-year and 3 three-year, for two plan types.
	if len(all) != 16 || pages != 6 {
		t.Errorf("%d rates in %d pages, want 16 in 6", len(all), pages)
	}

	// Upfront options are not simulated; unknown filters are rejected.
	out, err = c.DescribeSavingsPlansOfferingRates(ctx, &savingsplans.DescribeSavingsPlansOfferingRatesInput{
		SavingsPlanPaymentOptions: []sptypes.SavingsPlanPaymentOption{sptypes.SavingsPlanPaymentOptionAllUpfront},
	})
	if err != nil || len(out.SearchResults) != 0 {
		t.Errorf("All Upfront: %v %d", err, len(out.SearchResults))
	}
	_, err = c.DescribeSavingsPlansOfferingRates(ctx, &savingsplans.DescribeSavingsPlansOfferingRatesInput{
		Filters: []sptypes.SavingsPlanOfferingRateFilterElement{{Name: "color", Values: []string{"red"}}},
	})
	if code := errorCode(t, err); code != "ValidationException" {
		t.Errorf("unknown filter: %v", err)
	}
}
