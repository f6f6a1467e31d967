package billing

import (
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
)

// pqRow is the sample's columns that the reader uses, typed as Data
// Exports write them: doubles, UTC timestamps and optional strings.
type pqRow struct {
	BilledCost               float64   `parquet:"BilledCost"`
	EffectiveCost            float64   `parquet:"EffectiveCost"`
	ListCost                 float64   `parquet:"ListCost"`
	ChargeCategory           string    `parquet:"ChargeCategory"`
	ChargeDescription        *string   `parquet:"ChargeDescription,optional"`
	ChargePeriodStart        time.Time `parquet:"ChargePeriodStart,timestamp(millisecond:utc)"`
	ResourceID               *string   `parquet:"ResourceId,optional"`
	ProviderName             string    `parquet:"ProviderName"`
	ConsumedQuantity         *float64  `parquet:"ConsumedQuantity,optional"`
	ConsumedUnit             *string   `parquet:"ConsumedUnit,optional"`
	PricingCategory          *string   `parquet:"PricingCategory,optional"`
	CommitmentDiscountID     *string   `parquet:"CommitmentDiscountId,optional"`
	CommitmentDiscountStatus *string   `parquet:"CommitmentDiscountStatus,optional"`
	BillingCurrency          string    `parquet:"BillingCurrency"`
}

// TestParquetEqualsCSV writes the sample as Parquet and reads both: the
// same summary.
func TestParquetEqualsCSV(t *testing.T) {
	f, err := os.Open(sample)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	str := func(rec []string, c string) *string {
		v := rec[col[c]]
		if v == "NULL" || v == "" {
			return nil
		}
		return &v
	}
	num := func(rec []string, c string) float64 {
		v, _ := strconv.ParseFloat(rec[col[c]], 64)
		return v
	}
	rows := make([]pqRow, 0, len(recs)-1)
	for _, rec := range recs[1:] {
		start, err := time.Parse("2006-01-02 15:04:05", rec[col["ChargePeriodStart"]])
		if err != nil {
			t.Fatal(err)
		}
		r := pqRow{BilledCost: num(rec, "BilledCost"), EffectiveCost: num(rec, "EffectiveCost"), ListCost: num(rec, "ListCost"),
			ChargeCategory: rec[col["ChargeCategory"]], ChargeDescription: str(rec, "ChargeDescription"), ChargePeriodStart: start,
			ResourceID: str(rec, "ResourceId"), ProviderName: rec[col["ProviderName"]], ConsumedUnit: str(rec, "ConsumedUnit"),
			PricingCategory: str(rec, "PricingCategory"), CommitmentDiscountID: str(rec, "CommitmentDiscountId"),
			CommitmentDiscountStatus: str(rec, "CommitmentDiscountStatus"), BillingCurrency: rec[col["BillingCurrency"]]}
		if q := str(rec, "ConsumedQuantity"); q != nil {
			v, _ := strconv.ParseFloat(*q, 64)
			r.ConsumedQuantity = &v
		}
		rows = append(rows, r)
	}
	path := filepath.Join(t.TempDir(), "part-0.snappy.parquet")
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := parquet.NewGenericWriter[pqRow](out, parquet.Compression(&parquet.Snappy), parquet.MaxRowsPerRowGroup(300))
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	out.Close()
	fromCSV, err := Read(context.Background(), sample, Options{GPUs: sampleGPUs})
	if err != nil {
		t.Fatal(err)
	}
	fromPQ, err := Read(context.Background(), path, Options{GPUs: sampleGPUs})
	if err != nil {
		t.Fatal(err)
	}
	if fromPQ.Rows != 1000 || fromPQ.GPURows != fromCSV.GPURows || !fromPQ.EffectiveCost.Equal(fromCSV.EffectiveCost) ||
		!fromPQ.Hours.Equal(fromCSV.Hours) || len(fromPQ.Resources) != len(fromCSV.Resources) {
		t.Fatalf("parquet %d rows %d GPU %s eff %s h; csv %d GPU %s eff %s h",
			fromPQ.Rows, fromPQ.GPURows, fromPQ.EffectiveCost, fromPQ.Hours, fromCSV.GPURows, fromCSV.EffectiveCost, fromCSV.Hours)
	}
	for i := range fromPQ.Resources {
		a, b := fromPQ.Resources[i], fromCSV.Resources[i]
		if a.Key != b.Key || !a.First.Equal(b.First) || !a.BilledCost.Equal(b.BilledCost) {
			t.Errorf("resource %d: %+v vs %+v", i, a, b)
		}
	}
}
