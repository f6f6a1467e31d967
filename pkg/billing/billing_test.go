package billing

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/csv"
	"errors"
	"github.com/shopspring/decimal"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

const sample = "../../testdata/billing/focus-1.0-sample.csv"

// sampleGPUs knows the two GPU types the sample holds.
func sampleGPUs(p fleet.Provider, t string) (float64, bool) {
	if p == fleet.AWS && (t == "g5.4xlarge" || t == "g3.4xlarge") {
		return 1, true
	}
	return 0, false
}

// oracle sums the sample's GPU rows with encoding/csv and big.Rat, finding
// them by a whole word of ChargeDescription: no code shared with the reader.
func oracle(t *testing.T) (rows int, billed, effective, list, hours *big.Rat) {
	t.Helper()
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
	billed, effective, list, hours = new(big.Rat), new(big.Rat), new(big.Rat), new(big.Rat)
	add := func(sum *big.Rat, v string) {
		if v == "NULL" || v == "" {
			return
		}
		r, ok := new(big.Rat).SetString(v)
		if !ok {
			t.Fatalf("oracle: %q", v)
		}
		sum.Add(sum, r)
	}
	for _, rec := range recs[1:] {
		words := strings.Fields(rec[col["ChargeDescription"]])
		if !slices.Contains(words, "g5.4xlarge") && !slices.Contains(words, "g3.4xlarge") {
			continue
		}
		rows++
		add(billed, rec[col["BilledCost"]])
		add(effective, rec[col["EffectiveCost"]])
		add(list, rec[col["ListCost"]])
		add(hours, rec[col["ConsumedQuantity"]])
	}
	return rows, billed, effective, list, hours
}

func TestSampleMatchesOracle(t *testing.T) {
	s, err := Read(context.Background(), sample, Options{GPUs: sampleGPUs})
	if err != nil {
		t.Fatal(err)
	}
	rows, billed, effective, list, hours := oracle(t)
	if rows != 10 || s.GPURows != int64(rows) {
		t.Fatalf("GPU rows: reader %d, oracle %d, README 10", s.GPURows, rows)
	}
	if s.Rows != 1000 {
		t.Errorf("rows read %d, want 1000", s.Rows)
	}
	for name, pair := range map[string][2]string{
		"billed":    {s.BilledCost.String(), billed.FloatString(12)},
		"effective": {s.EffectiveCost.String(), effective.FloatString(12)},
		"list":      {s.ListCost.String(), list.FloatString(12)},
		"hours":     {s.Hours.String(), hours.FloatString(15)},
	} {
		got, _ := new(big.Rat).SetString(pair[0])
		want, _ := new(big.Rat).SetString(pair[1])
		if got.Cmp(want) != 0 {
			t.Errorf("%s: reader %s, oracle %s", name, pair[0], pair[1])
		}
	}
	if !slices.Equal(s.Versions, []string{V10}) || s.Currency != "USD" {
		t.Errorf("versions %v currency %s", s.Versions, s.Currency)
	}
	types := map[string]int{}
	for _, r := range s.Resources {
		if r.Provider != fleet.AWS {
			t.Errorf("%s: provider %s", r.ResourceID, r.Provider)
		}
		types[r.InstanceType]++
	}
	if types["g5.4xlarge"] == 0 || types["g3.4xlarge"] == 0 || len(types) != 2 {
		t.Errorf("types %v", types)
	}
}

// header10 is a minimal FOCUS 1.0 header.
const header10 = "BilledCost,EffectiveCost,ListCost,ChargeCategory,ChargePeriodStart,ChargePeriodEnd,ResourceId,ProviderName,ConsumedQuantity,ConsumedUnit,PricingCategory,CommitmentDiscountId,CommitmentDiscountStatus,ChargeDescription,ServiceCategory,BillingCurrency\n"

func TestErrorsNameFileRowColumn(t *testing.T) {
	for _, tc := range []struct {
		name, csv, want string
	}{
		{"missing", "BilledCost,ResourceId\n1,i-1\n", "b.csv: missing required FOCUS column(s) EffectiveCost, ListCost, ChargeCategory, ChargePeriodStart, ProviderName (or ServiceProviderName from 1.3)"},
		{"number", header10 + "1,1,1,Usage,2025-01-01 00:00:00,,i-1,AWS,1,Hours,Standard,,,g5.xlarge,Compute,USD\n" +
			"x1,1,1,Usage,2025-01-01 00:00:00,,i-1,AWS,1,Hours,Standard,,,g5.xlarge,Compute,USD\n", `b.csv: row 2: column BilledCost: "x1" is not a number`},
		{"absurd cost", header10 + "1e300,1,1,Usage,2025-01-01 00:00:00,,i-1,AWS,1,Hours,Standard,,,g5.xlarge,Compute,USD\n", `b.csv: row 1: column BilledCost: "1e300" is beyond ±1000000000000000: not a plausible value`},
		{"absurd credit", header10 + "1,-1e16,1,Usage,2025-01-01 00:00:00,,i-1,AWS,1,Hours,Standard,,,g5.xlarge,Compute,USD\n", `b.csv: row 1: column EffectiveCost: "-1e16" is beyond ±1000000000000000`},
		{"absurd quantity", header10 + "1,1,1,Usage,2025-01-01 00:00:00,,i-1,AWS,1e19,Hours,Standard,,,g5.xlarge,Compute,USD\n", `b.csv: row 1: column ConsumedQuantity: "1e19" is beyond ±1000000000000000000`},
		{"time", header10 + "1,1,1,Usage,yesterday,,i-1,AWS,1,Hours,Standard,,,g5.xlarge,Compute,USD\n", `b.csv: row 1: column ChargePeriodStart: "yesterday" is not a date-time`},
		{"currency", header10 + "1,1,1,Usage,2025-01-01,,i-1,AWS,1,Hours,Standard,,,p4d.24xlarge,Compute,USD\n1,1,1,Usage,2025-01-01,,i-2,AWS,1,Hours,Standard,,,p4d.24xlarge,Compute,EUR\n", "b.csv: row 2: column BillingCurrency: EUR after USD"},
		{"version", "x_FocusVersion," + header10 + "9.9,1,1,1,Usage,2025-01-01,,i-1,AWS,1,Hours,Standard,,,g5.xlarge,Compute,USD\n", `b.csv: row 1: column x_FocusVersion: unknown FOCUS version "9.9"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadCSV(context.Background(), "b.csv", strings.NewReader(tc.csv), Options{GPUs: anyGPU})
			var be *Error
			if !errors.As(err, &be) || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("error %v, want prefix %q", err, tc.want)
			}
		})
	}
	_, err := ReadCSV(context.Background(), "b.csv", strings.NewReader(header10), Options{Version: "2.0"})
	if err == nil || !strings.Contains(err.Error(), `FOCUS version "2.0" is not one of`) {
		t.Errorf("version option: %v", err)
	}
}

// anyGPU takes p4d. and g5. types for 8-GPU types.
func anyGPU(p fleet.Provider, t string) (float64, bool) {
	if strings.HasPrefix(t, "p4d.") || strings.HasPrefix(t, "g5.") {
		return 8, true
	}
	return 0, false
}

func TestQuirksAreData(t *testing.T) {
	in := header10 +
		// NULL and empty cells, the lower-case Usage-based spelling lives in ChargeFrequency (not read).
		"2,1.5,3,Usage,2025-01-01 00:00:00,2025-01-01 01:00:00,arn:aws:ec2:us-east-1:1:instance/i-1,AWS,1,Hours,Committed,sp-1,Used,g5.xlarge,Compute,USD\n" +
		"1,1,1,Usage,2025-01-01T01:00:00Z,NULL,i-1,Amazon Web Services,1,Hours,Dynamic,NULL,NULL,g5.xlarge,Compute,\n" +
		"0,4,0,Usage,2025-01-01,,sp-1,AWS,NULL,NULL,Committed,sp-1,Unused,,Compute,USD\n" +
		"9,9,9,Purchase,2025-01-01,,sp-1,AWS,,,Standard,sp-1,,,Compute,USD\n" +
		"5,5,5,Usage,2025-01-01,,vol-1,AWS,1,GB-Mo,Standard,,,EBS gp3,Storage,USD\n"
	s, err := ReadCSV(context.Background(), "q.csv", strings.NewReader(in), Options{GPUs: anyGPU})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Resources) != 1 {
		t.Fatalf("resources %+v", s.Resources)
	}
	r := s.Resources[0]
	if r.Key != "aws|i-1" || r.Hours.String() != "2" || r.EffectiveCost.String() != "2.5" || r.CommitmentShare() != 0.5 || r.SpotShare() != 0.5 {
		t.Errorf("resource %+v", r)
	}
	if h, _ := r.EffectiveHourly(); h.String() != "1.25" {
		t.Errorf("hourly %s", h)
	}
	if len(s.Unused) != 1 || s.Unused[0].UnusedEffectiveCost.String() != "4" {
		t.Errorf("unused %+v", s.Unused)
	}
}

func TestGzipAndFolder(t *testing.T) {
	raw, err := os.ReadFile(sample)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	sub := filepath.Join(dir, "data", "BILLING_PERIOD=2024-09")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	var z bytes.Buffer
	w := gzip.NewWriter(&z)
	w.Write(raw)
	w.Close()
	for name, b := range map[string][]byte{"part-0.csv.gz": z.Bytes(), "part-1.csv": raw, "manifest.json": []byte("{}")} {
		if err := os.WriteFile(filepath.Join(sub, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	one, err := Read(context.Background(), sample, Options{GPUs: sampleGPUs})
	if err != nil {
		t.Fatal(err)
	}
	two, err := Read(context.Background(), dir, Options{GPUs: sampleGPUs})
	if err != nil {
		t.Fatal(err)
	}
	if len(two.Files) != 2 || !two.EffectiveCost.Equal(one.EffectiveCost.Mul(decimalTwo)) || two.GPURows != 20 {
		t.Errorf("folder: files %v effective %s (one file %s) rows %d", two.Files, two.EffectiveCost, one.EffectiveCost, two.GPURows)
	}
}

func TestNormalizeID(t *testing.T) {
	for _, tc := range []struct {
		p        fleet.Provider
		in, want string
	}{
		{fleet.AWS, "arn:aws:ec2:us-east-1:123456789012:instance/i-0abc", "i-0abc"},
		{fleet.AWS, "arn:aws-cn:ec2:cn-north-1:1:instance/i-9", "i-9"},
		{fleet.AWS, "i-0abc", "i-0abc"},
		{fleet.AWS, "arn:aws:sagemaker:us-east-1:1:endpoint/e/variant/AllTraffic", "arn:aws:sagemaker:us-east-1:1:endpoint/e/variant/AllTraffic"},
		{fleet.AWS, "arn:aws:sagemaker:us-east-1:1:notebook-instance/nb", "arn:aws:sagemaker:us-east-1:1:notebook-instance/nb"},
		{fleet.GCP, "//aiplatform.googleapis.com/projects/p/locations/us-central1/endpoints/42", "projects/p/locations/us-central1/endpoints/42"},
		{fleet.Azure, "/subscriptions/S/resourceGroups/RG/providers/Microsoft.Compute/virtualMachines/VM1", "/subscriptions/s/resourcegroups/rg/providers/microsoft.compute/virtualmachines/vm1"},
		{fleet.GCP, "https://www.googleapis.com/compute/v1/projects/p/zones/us-central1-a/instances/vm", "projects/p/zones/us-central1-a/instances/vm"},
		{fleet.GCP, "//compute.googleapis.com/projects/p/zones/us-central1-a/instances/vm", "projects/p/zones/us-central1-a/instances/vm"},
		{fleet.GCP, "projects/p/zones/us-central1-a/instances/vm", "projects/p/zones/us-central1-a/instances/vm"},
	} {
		if got := NormalizeID(tc.p, tc.in); got != tc.want {
			t.Errorf("NormalizeID(%s, %q) = %q, want %q", tc.p, tc.in, got, tc.want)
		}
		if got := NormalizeID(tc.p, tc.want); got != tc.want {
			t.Errorf("not idempotent: %q → %q", tc.want, got)
		}
	}
}

func TestDetect(t *testing.T) {
	for want, extra := range map[string]string{V10: "", V11: ",SkuPriceDetails", V12: ",SkuPriceDetails,InvoiceId", V13: ",InvoiceId,ServiceProviderName"} {
		s, err := newSchema(strings.Split(strings.TrimSpace(header10)+extra, ","), "")
		if err != nil || s.version != want {
			t.Errorf("%s: %v %v", want, s, err)
		}
	}
}

var decimalTwo = mustDec("2")

func mustDec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// TestSkuDetailsGPUCount: GpuCount, a number or a string, is between 0 and
// the most GPUs an instance has.
func TestSkuDetailsGPUCount(t *testing.T) {
	for _, tc := range []struct {
		v    string
		want float64
		err  string
	}{
		{`{"InstanceType": "p5.48xlarge", "GpuCount": 8}`, 8, ""},
		{`{"GpuCount": "0.5"}`, 0.5, ""},
		{`{"GpuCount": 1e300}`, 0, "GpuCount 1e+300 is above 64"},
		{`{"GpuCount": "65"}`, 0, "GpuCount 65 is above 64"},
		{`{"GpuCount": -1}`, 0, "GpuCount -1 is negative"},
		{`{"GpuCount": "NaN"}`, 0, `GpuCount "NaN" is not a number`},
	} {
		_, got, err := skuDetails(tc.v)
		if tc.err == "" && (err != nil || got != tc.want) || tc.err != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.err)) {
			t.Errorf("skuDetails(%s) = %v, %v; want %v, %q", tc.v, got, err, tc.want, tc.err)
		}
	}
}
