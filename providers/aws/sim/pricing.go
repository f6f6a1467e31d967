package sim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/providers/simkit"
)

// Reserved Instance rows are derived from the on-demand price: standard, No
// Upfront, 35% off for one year and 55% off for three. They are plausible,
// not AWS's figures.
var (
	reserved1yFactor = decimal.RequireFromString("0.65")
	reserved3yFactor = decimal.RequireFromString("0.45")
	// ec2InstanceSPFactor derives EC2 Instance Savings Plan rates from the
	// Compute Savings Plan rates of Options.Prices (8% lower: an EC2
	// Instance plan is tied to a family and region and so discounts more).
	ec2InstanceSPFactor = decimal.RequireFromString("0.92")
)

// Offer term and rate codes as the Price List uses them; clients should key
// off unit and termAttributes, never these.
const (
	onDemandOffer    = "JRTCKXETXF"
	reserved1yOffer  = "4NA7Y494T4"
	reserved3yOffer  = "BPH4J8HBKS"
	hrsRateCode      = "6YS6EN2CT7"
	priceListFormat  = "aws_v1"
	jsonContentType  = "application/x-amz-json-1.1"
	ec2ServiceCode   = "AmazonEC2"
	maxPriceListPage = 100
)

// servePricing answers the Price List Query API (AWS JSON 1.1): GetProducts
// and DescribeServices for AmazonEC2, GetProducts for AmazonSageMaker
// (sagemaker_pricing.go).
func (s *Server) servePricing(w http.ResponseWriter, req request) {
	switch req.op {
	case "GetProducts":
		s.getProducts(w, req)
	case "DescribeServices":
		s.describeServices(w, req)
	default:
		writeError(w, req, http.StatusBadRequest, "UnknownOperationException", "the simulator does not serve AWSPriceListService."+req.op)
	}
}

// product is one Price List product with the attributes filters look at.
type product struct {
	// service is the offer's service code (AmazonEC2 when empty).
	service     string
	sku, family string
	attributes  map[string]string
	row         PriceRow
	onDemand    decimal.Decimal
}

// products are the simulated Linux, shared-tenancy, used-capacity products:
// one per row of Options.Prices with a valid on-demand price, by region and
// type.
func (s *Server) products() []product {
	rows := append([]PriceRow(nil), s.opts.Prices...)
	sort.SliceStable(rows, func(i, j int) bool {
		if rows[i].Region != rows[j].Region {
			return rows[i].Region < rows[j].Region
		}
		return rows[i].InstanceType < rows[j].InstanceType
	})
	var out []product
	for _, r := range rows {
		od, err := decimal.NewFromString(r.OnDemand)
		if err != nil || od.IsNegative() {
			continue
		}
		sku := upperID(16, "sku", r.Region, r.InstanceType)
		attrs := map[string]string{
			"servicecode":       ec2ServiceCode,
			"servicename":       "Amazon Elastic Compute Cloud",
			"instanceType":      r.InstanceType,
			"instancesku":       upperID(16, "instancesku", r.Region, r.InstanceType),
			"regionCode":        r.Region,
			"location":          regionLocation(r.Region),
			"locationType":      "AWS Region",
			"operatingSystem":   "Linux",
			"tenancy":           "Shared",
			"preInstalledSw":    "NA",
			"capacitystatus":    "Used",
			"licenseModel":      "No License required",
			"marketoption":      "OnDemand",
			"usagetype":         boxUsage(r.Region, r.InstanceType, true),
			"operation":         "RunInstances",
			"currentGeneration": "Yes",
		}
		family := "Compute Instance"
		if t, ok := s.types[r.InstanceType]; ok {
			attrs["vcpu"] = strconv.Itoa(t.VCPUs)
			attrs["memory"] = strconv.FormatFloat(float64(t.MemoryMiB)/1024, 'f', -1, 64) + " GiB"
			if t.GPUCount > 0 {
				attrs["gpu"] = strconv.FormatFloat(t.GPUCount, 'f', -1, 64)
				total := float64(t.GPUMemoryMiB) * max(1, t.GPUCount)
				attrs["gpuMemory"] = strconv.FormatFloat(total/1024, 'f', -1, 64) + " GiB"
				attrs["instanceFamily"] = "GPU instance"
				if t.Neuron {
					attrs["instanceFamily"] = "Machine Learning ASIC Instances"
				}
			}
		}
		out = append(out, product{sku: sku, family: family, attributes: attrs, row: r, onDemand: od})
	}
	return out
}

// field is a product's value for a filter field (attributes, productFamily,
// sku, serviceCode); field names match case-insensitively.
func (p product) field(name string) (string, bool) {
	switch strings.ToLower(name) {
	case "productfamily":
		return p.family, true
	case "sku":
		return p.sku, true
	case "servicecode":
		return p.serviceCode(), true
	}
	for k, v := range p.attributes {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	return "", false
}

func (p product) serviceCode() string {
	if p.service == "" {
		return ec2ServiceCode
	}
	return p.service
}

type priceFilter struct {
	Type  string `json:"Type"`
	Field string `json:"Field"`
	Value string `json:"Value"`
}

// match applies a filter; TERM_MATCH and EQUALS compare case-insensitively,
// CONTAINS looks for a substring, ANY_OF and NONE_OF take comma-separated
// values.
func (f priceFilter) match(p product) bool {
	v, ok := p.field(f.Field)
	switch f.Type {
	case "TERM_MATCH", "EQUALS":
		return ok && strings.EqualFold(v, f.Value)
	case "CONTAINS":
		return ok && strings.Contains(strings.ToLower(v), strings.ToLower(f.Value))
	case "ANY_OF", "NONE_OF":
		in := false
		for _, x := range strings.Split(f.Value, ",") {
			if ok && strings.EqualFold(v, strings.TrimSpace(x)) {
				in = true
			}
		}
		return in == (f.Type == "ANY_OF")
	}
	return false
}

type getProductsInput struct {
	ServiceCode   string        `json:"ServiceCode"`
	Filters       []priceFilter `json:"Filters"`
	FormatVersion string        `json:"FormatVersion"`
	NextToken     string        `json:"NextToken"`
	MaxResults    *int          `json:"MaxResults"`
}

type getProductsOutput struct {
	FormatVersion string   `json:"FormatVersion"`
	PriceList     []string `json:"PriceList"`
	NextToken     string   `json:"NextToken,omitempty"`
}

func pricingFail(w http.ResponseWriter, req request, code, format string, args ...any) {
	writeError(w, req, http.StatusBadRequest, code, fmt.Sprintf(format, args...))
}

func (s *Server) getProducts(w http.ResponseWriter, req request) {
	var in getProductsInput
	if err := json.Unmarshal(req.body, &in); err != nil {
		pricingFail(w, req, "InvalidParameterException", "invalid request body: %v", err)
		return
	}
	if in.ServiceCode == "" {
		pricingFail(w, req, "InvalidParameterException", "ServiceCode is required")
		return
	}
	if in.FormatVersion != "" && in.FormatVersion != priceListFormat {
		pricingFail(w, req, "InvalidParameterException", "unsupported FormatVersion %q (only aws_v1)", in.FormatVersion)
		return
	}
	for _, f := range in.Filters {
		switch f.Type {
		case "TERM_MATCH", "EQUALS", "CONTAINS", "ANY_OF", "NONE_OF":
		default:
			pricingFail(w, req, "InvalidParameterException", "invalid filter type %q", f.Type)
			return
		}
	}
	size := maxPriceListPage
	if in.MaxResults != nil {
		if *in.MaxResults < 1 || *in.MaxResults > maxPriceListPage {
			pricingFail(w, req, "InvalidParameterException", "MaxResults must be between 1 and %d", maxPriceListPage)
			return
		}
		size = *in.MaxResults
	}
	query := jsonFingerprint([]any{in.ServiceCode, in.Filters, in.FormatVersion})
	off, ok := simkit.DecodeToken(in.NextToken, query)
	if !ok {
		pricingFail(w, req, "InvalidNextTokenException", "The NextToken is invalid")
		return
	}
	var kept []product
	var offer []product
	switch in.ServiceCode {
	case ec2ServiceCode:
		offer = s.products()
	case sageMakerServiceCode:
		offer = s.sageMakerProducts()
	}
	for _, p := range offer {
		keep := true
		for _, f := range in.Filters {
			if !f.match(p) {
				keep = false
				break
			}
		}
		if keep {
			kept = append(kept, p)
		}
	}
	from, to, next := simkit.Page(len(kept), off, size)
	out := getProductsOutput{FormatVersion: priceListFormat, PriceList: []string{}}
	for _, p := range kept[from:to] {
		out.PriceList = append(out.PriceList, s.productDocument(p))
	}
	if next >= 0 {
		out.NextToken = simkit.EncodeToken(next, query)
	}
	writeJSONResponse(w, jsonContentType, out)
}

type priceDimension struct {
	RateCode     string            `json:"rateCode"`
	Description  string            `json:"description"`
	BeginRange   string            `json:"beginRange"`
	EndRange     string            `json:"endRange"`
	Unit         string            `json:"unit"`
	PricePerUnit map[string]string `json:"pricePerUnit"`
	AppliesTo    []string          `json:"appliesTo"`
}

type offerTerm struct {
	OfferTermCode   string                    `json:"offerTermCode"`
	SKU             string                    `json:"sku"`
	EffectiveDate   string                    `json:"effectiveDate"`
	PriceDimensions map[string]priceDimension `json:"priceDimensions"`
	TermAttributes  map[string]string         `json:"termAttributes"`
}

type productDocument struct {
	Product struct {
		ProductFamily string            `json:"productFamily"`
		Attributes    map[string]string `json:"attributes"`
		SKU           string            `json:"sku"`
	} `json:"product"`
	ServiceCode string `json:"serviceCode"`
	Terms       struct {
		OnDemand map[string]offerTerm `json:"OnDemand"`
		Reserved map[string]offerTerm `json:"Reserved"`
	} `json:"terms"`
	Version         string `json:"version"`
	PublicationDate string `json:"publicationDate"`
}

// productDocument renders a product as the Price List's JSON document.
func (s *Server) productDocument(p product) string {
	day := s.opts.Now().UTC().Truncate(24 * time.Hour)
	effective := day.AddDate(0, -1, 0).Format("2006-01-02T15:04:05Z")
	var d productDocument
	d.Product.ProductFamily = p.family
	d.Product.Attributes = p.attributes
	d.Product.SKU = p.sku
	d.ServiceCode = p.serviceCode()
	d.Version = day.Format("20060102150405")
	d.PublicationDate = day.Format("2006-01-02T15:04:05Z")
	t := p.row.InstanceType
	term := func(offer string, rate decimal.Decimal, desc string, attrs map[string]string) map[string]offerTerm {
		code := p.sku + "." + offer
		return map[string]offerTerm{code: {
			OfferTermCode: offer,
			SKU:           p.sku,
			EffectiveDate: effective,
			PriceDimensions: map[string]priceDimension{code + "." + hrsRateCode: {
				RateCode:     code + "." + hrsRateCode,
				Description:  desc,
				BeginRange:   "0",
				EndRange:     "Inf",
				Unit:         "Hrs",
				PricePerUnit: map[string]string{"USD": rate.StringFixed(10)},
				AppliesTo:    []string{},
			}},
			TermAttributes: attrs,
		}}
	}
	if p.serviceCode() == sageMakerServiceCode {
		d.Terms.OnDemand = term(onDemandOffer, p.onDemand,
			fmt.Sprintf("$%s per %s %s hour in %s", p.onDemand.StringFixed(3), p.attributes["component"], t, p.attributes["location"]), map[string]string{})
		d.Terms.Reserved = map[string]offerTerm{}
		b, _ := json.Marshal(d)
		return string(b)
	}
	d.Terms.OnDemand = term(onDemandOffer, p.onDemand,
		fmt.Sprintf("$%s per On Demand Linux %s Instance Hour", p.onDemand.StringFixed(3), t), map[string]string{})
	d.Terms.Reserved = map[string]offerTerm{}
	for _, r := range []struct {
		offer, length string
		factor        decimal.Decimal
	}{{reserved1yOffer, "1yr", reserved1yFactor}, {reserved3yOffer, "3yr", reserved3yFactor}} {
		for k, v := range term(r.offer, p.onDemand.Mul(r.factor), "Linux/UNIX (Amazon VPC), "+t+" reserved instance applied",
			map[string]string{"LeaseContractLength": r.length, "OfferingClass": "standard", "PurchaseOption": "No Upfront"}) {
			d.Terms.Reserved[k] = v
		}
	}
	b, _ := json.Marshal(d)
	return string(b)
}

type describeServicesInput struct {
	ServiceCode   string `json:"ServiceCode"`
	FormatVersion string `json:"FormatVersion"`
}

type serviceInfo struct {
	ServiceCode    string   `json:"ServiceCode"`
	AttributeNames []string `json:"AttributeNames"`
}

type describeServicesOutput struct {
	Services      []serviceInfo `json:"Services"`
	FormatVersion string        `json:"FormatVersion"`
}

// describeServices lists AmazonEC2 (the one simulated service) with its
// product attribute names.
func (s *Server) describeServices(w http.ResponseWriter, req request) {
	var in describeServicesInput
	if len(req.body) > 0 {
		if err := json.Unmarshal(req.body, &in); err != nil {
			pricingFail(w, req, "InvalidParameterException", "invalid request body: %v", err)
			return
		}
	}
	out := describeServicesOutput{FormatVersion: priceListFormat, Services: []serviceInfo{}}
	if in.ServiceCode == "" || in.ServiceCode == ec2ServiceCode {
		names := map[string]bool{}
		for _, p := range s.products() {
			for k := range p.attributes {
				names[k] = true
			}
		}
		var list []string
		for k := range names {
			list = append(list, k)
		}
		sort.Strings(list)
		out.Services = append(out.Services, serviceInfo{ServiceCode: ec2ServiceCode, AttributeNames: list})
	}
	writeJSONResponse(w, jsonContentType, out)
}

// --- Savings Plans ---

const (
	spYear       = 31536000
	spThreeYears = 94608000
	spNoUpfront  = "No Upfront"
)

type spFilter struct {
	Name   string   `json:"name"`
	Values []string `json:"values"`
}

type spRatesInput struct {
	SavingsPlanOfferingIDs    []string   `json:"savingsPlanOfferingIds"`
	SavingsPlanPaymentOptions []string   `json:"savingsPlanPaymentOptions"`
	SavingsPlanTypes          []string   `json:"savingsPlanTypes"`
	Products                  []string   `json:"products"`
	ServiceCodes              []string   `json:"serviceCodes"`
	UsageTypes                []string   `json:"usageTypes"`
	Operations                []string   `json:"operations"`
	Filters                   []spFilter `json:"filters"`
	MaxResults                *int       `json:"maxResults"`
	NextToken                 string     `json:"nextToken"`
}

type spOffering struct {
	OfferingID      string `json:"offeringId"`
	PaymentOption   string `json:"paymentOption"`
	PlanType        string `json:"planType"`
	DurationSeconds int64  `json:"durationSeconds"`
	Currency        string `json:"currency"`
	PlanDescription string `json:"planDescription"`
}

type spProperty struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type spRate struct {
	SavingsPlanOffering spOffering   `json:"savingsPlanOffering"`
	Rate                string       `json:"rate"`
	Unit                string       `json:"unit"`
	ProductType         string       `json:"productType"`
	ServiceCode         string       `json:"serviceCode"`
	UsageType           string       `json:"usageType"`
	Operation           string       `json:"operation"`
	Properties          []spProperty `json:"properties"`
}

type spRatesOutput struct {
	SearchResults []spRate `json:"searchResults"`
	NextToken     string   `json:"nextToken,omitempty"`
}

// spFilterNames are the rate filters the simulator knows.
var spFilterNames = map[string]bool{
	"region": true, "instanceType": true, "instanceFamily": true, "productDescription": true, "tenancy": true, "productId": true,
}

// savingsPlanRates are the No Upfront rates of Options.Prices, for Compute
// plans as given and for EC2 Instance plans derived, by region, type, plan
// type and term.
func (s *Server) savingsPlanRates() []spRate {
	rows := append([]PriceRow(nil), s.opts.Prices...)
	sort.SliceStable(rows, func(i, j int) bool {
		if rows[i].Region != rows[j].Region {
			return rows[i].Region < rows[j].Region
		}
		return rows[i].InstanceType < rows[j].InstanceType
	})
	var out []spRate
	for _, r := range rows {
		for _, plan := range []string{"Compute", "EC2Instance"} {
			for _, term := range []struct {
				rate    string
				seconds int64
				years   string
			}{{r.SavingsPlan1y, spYear, "1 year"}, {r.SavingsPlan3y, spThreeYears, "3 year"}} {
				rate, err := decimal.NewFromString(term.rate)
				if err != nil || rate.IsNegative() {
					continue
				}
				if plan == "EC2Instance" {
					rate = rate.Mul(ec2InstanceSPFactor)
				}
				planName := "Compute"
				if plan == "EC2Instance" {
					planName = "EC2 Instance"
				}
				out = append(out, spRate{
					SavingsPlanOffering: spOffering{
						OfferingID:      uuidID("offering", plan, strconv.FormatInt(term.seconds, 10), spNoUpfront),
						PaymentOption:   spNoUpfront,
						PlanType:        plan,
						DurationSeconds: term.seconds,
						Currency:        "USD",
						PlanDescription: term.years + " " + spNoUpfront + " " + planName + " Savings Plan",
					},
					Rate:        rate.Round(6).String(),
					Unit:        "Hrs",
					ProductType: "EC2",
					ServiceCode: ec2ServiceCode,
					UsageType:   boxUsage(r.Region, r.InstanceType, false),
					Operation:   "RunInstances",
					Properties: []spProperty{
						{Name: "region", Value: r.Region},
						{Name: "instanceType", Value: r.InstanceType},
						{Name: "instanceFamily", Value: instanceFamily(r.InstanceType)},
						{Name: "productDescription", Value: linuxUNIX},
						{Name: "tenancy", Value: "shared"},
					},
				})
			}
		}
	}
	return out
}

// anyFold reports whether v equals one of list, ignoring case; an empty
// list matches everything.
func anyFold(list []string, v string) bool {
	if len(list) == 0 {
		return true
	}
	for _, x := range list {
		if strings.EqualFold(x, v) {
			return true
		}
	}
	return false
}

func (r spRate) property(name string) string {
	for _, p := range r.Properties {
		if p.Name == name {
			return p.Value
		}
	}
	return ""
}

// decodeSP reads a Savings Plans request body (REST JSON) into in and
// refuses a filter name known does not hold (filters points at in's
// filters), answering ValidationException as the service does.
func decodeSP(w http.ResponseWriter, req request, in any, filters *[]spFilter, known map[string]bool) bool {
	if len(req.body) > 0 {
		if err := json.Unmarshal(req.body, in); err != nil {
			writeError(w, req, http.StatusBadRequest, "ValidationException", "invalid request body: "+err.Error())
			return false
		}
	}
	for _, f := range *filters {
		if !known[f.Name] {
			writeError(w, req, http.StatusBadRequest, "ValidationException", "invalid filter name "+strconv.Quote(f.Name))
			return false
		}
	}
	return true
}

// serveSavingsPlans answers the Savings Plans API (REST JSON):
// DescribeSavingsPlansOfferingRates.
func (s *Server) serveSavingsPlans(w http.ResponseWriter, req request) {
	if req.op != "DescribeSavingsPlansOfferingRates" {
		writeError(w, req, http.StatusBadRequest, "ValidationException", "the simulator does not serve "+req.op)
		return
	}
	var in spRatesInput
	if !decodeSP(w, req, &in, &in.Filters, spFilterNames) {
		return
	}
	size := 1000
	if in.MaxResults != nil {
		if *in.MaxResults < 0 || *in.MaxResults > 1000 {
			writeError(w, req, http.StatusBadRequest, "ValidationException", "maxResults must be between 0 and 1000")
			return
		}
		if *in.MaxResults > 0 {
			size = *in.MaxResults
		}
	}
	paging := in
	paging.MaxResults, paging.NextToken = nil, ""
	query := jsonFingerprint(paging)
	off, ok := simkit.DecodeToken(in.NextToken, query)
	if !ok {
		writeError(w, req, http.StatusBadRequest, "ValidationException", "invalid nextToken")
		return
	}
	var kept []spRate
	for _, r := range s.savingsPlanRates() {
		o := r.SavingsPlanOffering
		if !anyFold(in.SavingsPlanOfferingIDs, o.OfferingID) || !anyFold(in.SavingsPlanPaymentOptions, o.PaymentOption) ||
			!anyFold(in.SavingsPlanTypes, o.PlanType) || !anyFold(in.Products, r.ProductType) ||
			!anyFold(in.ServiceCodes, r.ServiceCode) || !anyFold(in.UsageTypes, r.UsageType) || !anyFold(in.Operations, r.Operation) {
			continue
		}
		keep := true
		for _, f := range in.Filters {
			if f.Name == "productId" {
				keep = false // no product IDs are simulated
				continue
			}
			keep = keep && len(f.Values) > 0 && anyFold(f.Values, r.property(f.Name))
		}
		if keep {
			kept = append(kept, r)
		}
	}
	from, to, next := simkit.Page(len(kept), off, size)
	out := spRatesOutput{SearchResults: kept[from:to]}
	if out.SearchResults == nil {
		out.SearchResults = []spRate{}
	}
	if next >= 0 {
		out.NextToken = simkit.EncodeToken(next, query)
	}
	writeJSONResponse(w, "application/json", out)
}
