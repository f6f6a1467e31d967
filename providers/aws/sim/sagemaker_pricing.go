package sim

import (
	"bytes"
	_ "embed"
	"encoding/csv"
	"fmt"
	"sort"
	"strings"

	"github.com/shopspring/decimal"
)

// SageMakerPrice is an ml.* type's on-demand price for one SageMaker
// component in one region (USD per instance-hour), as the Price List's
// AmazonSageMaker offer has it (productFamily "ML Instance").
type SageMakerPrice struct {
	Region, InstanceType string
	// Component is the Price List's component attribute: Hosting,
	// Notebook, Training, Processing, Studio-JupyterLab, AsyncInference.
	Component string
	OnDemand  string
}

const sageMakerServiceCode = "AmazonSageMaker"

// sageMakerCSV is shared/data/managed-ai/aws-sagemaker.csv, whose first
// line names its source.
//
//go:embed testdata/aws-sagemaker.csv
var sageMakerCSV []byte

// DefaultSageMakerPrices are the rows of the vendored cross-check file.
func DefaultSageMakerPrices() []SageMakerPrice {
	body := sageMakerCSV
	if bytes.HasPrefix(body, []byte("#")) {
		_, body, _ = bytes.Cut(body, []byte("\n"))
	}
	rows, err := csv.NewReader(bytes.NewReader(body)).ReadAll()
	if err != nil || len(rows) == 0 {
		panic(fmt.Sprintf("aws sim: testdata/aws-sagemaker.csv: %v", err))
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	var out []SageMakerPrice
	for _, r := range rows[1:] {
		out = append(out, SageMakerPrice{Region: r[col["region"]], InstanceType: r[col["instance_type"]], Component: r[col["component"]], OnDemand: r[col["price_usd_per_hour"]]})
	}
	return out
}

// usageTypePrefix is the Price List's usage type prefix of a SageMaker
// component (shared/data/managed-ai/metrics.md §1.3).
var usageTypePrefix = map[string]string{
	"Hosting": "Host", "Notebook": "Notebk", "Training": "Train", "Processing": "Processing",
	"Studio-JupyterLab": "Studio:JupyterLab", "AsyncInference": "AsyncInf",
}

// sageMakerProducts are the AmazonSageMaker products of
// Options.SageMakerPrices (DefaultSageMakerPrices when nil).
func (s *Server) sageMakerProducts() []product {
	rows := s.opts.SageMakerPrices
	if rows == nil {
		rows = DefaultSageMakerPrices()
	}
	rows = append([]SageMakerPrice(nil), rows...)
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		return a.Region+a.InstanceType+a.Component < b.Region+b.InstanceType+b.Component
	})
	var out []product
	for _, r := range rows {
		od, err := decimal.NewFromString(r.OnDemand)
		if err != nil || !od.IsPositive() {
			continue
		}
		prefix := usageTypePrefix[r.Component]
		if prefix == "" {
			prefix = r.Component
		}
		sep := ":"
		if strings.Contains(prefix, ":") {
			sep = "-"
		}
		attrs := map[string]string{
			"servicecode":  sageMakerServiceCode,
			"servicename":  "Amazon SageMaker",
			"instanceName": r.InstanceType,
			"component":    r.Component,
			"regionCode":   r.Region,
			"location":     regionLocation(r.Region),
			"locationType": "AWS Region",
			"usagetype":    regionPrefix(r.Region) + "-" + prefix + sep + r.InstanceType,
			"operation":    "RunInstance",
		}
		out = append(out, product{service: sageMakerServiceCode, sku: upperID(16, "sku", "sagemaker", r.Region, r.InstanceType, r.Component), family: "ML Instance",
			attributes: attrs, row: PriceRow{Region: r.Region, InstanceType: r.InstanceType}, onDemand: od})
	}
	return out
}
