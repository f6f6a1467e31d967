package azure

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
)

// FuzzParseSizes: a size table either parses into rows with a model, a
// positive memory and a count in (0, 64] or none, or is an error.
func FuzzParseSizes(f *testing.F) {
	f.Add(sizesCSV)
	f.Add("pattern,model,memory_gib,gpus,source\n^Standard_X$,A10,4,0.5,src\n")
	f.Add("pattern,model,memory_gib,gpus,source\n(,A10,4,,src\n")
	f.Fuzz(func(t *testing.T, data string) {
		rules, err := parseSizes(strings.NewReader(data))
		if err != nil {
			return
		}
		for _, r := range rules {
			if r.model == "" || r.memoryGiB <= 0 || r.gpus < 0 || r.gpus > 64 {
				t.Fatalf("row %+v accepted", r)
			}
		}
	})
}

// FuzzLookupSize: any name is looked up without panic; a match has a model
// and memory, and a count that is a fraction only for partitioned sizes.
func FuzzLookupSize(f *testing.F) {
	for _, s := range []string{"Standard_NV6ads_A10_v5", "Standard_ND96isr_H100_v5", "Standard_D4s_v5", "", "standard_nc24ads_a100_v4"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, size string) {
		info, ok := LookupSize(size)
		if !ok {
			return
		}
		if info.Model == "" || info.MemoryGiB <= 0 || info.GPUs < 0 {
			t.Fatalf("%q = %+v", size, info)
		}
		if c := gpuCount(info, 0); info.GPUs > 0 && c != info.GPUs {
			t.Fatalf("%q: count %v, table %v", size, c, info.GPUs)
		}
	})
}

// FuzzParseQuotaReset: hh:mm:ss or refused, never negative.
func FuzzParseQuotaReset(f *testing.F) {
	for _, s := range []string{"00:00:05", "01:02:03", "5", "::", "-1:00:00", "00:99:00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if d, ok := parseQuotaReset(s); ok && (d < 0 || d > 25*time.Hour) {
			t.Fatalf("%q = %s", s, d)
		}
	})
}

// FuzzPowerOf: a code is never read as stopped unless it says deallocated.
func FuzzPowerOf(f *testing.F) {
	for _, s := range []string{"PowerState/running", "PowerState/stopped", "PowerState/deallocated", "PowerState/deallocating", "", "PowerState/unknown"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, code string) {
		p := PowerOf(code)
		if p.State == fleet.Stopped && !strings.Contains(strings.ToLower(code), "dealloc") {
			t.Fatalf("%q read as stopped", code)
		}
	})
}

// FuzzPricesOf: any retail row gives positive USD hourly prices only.
func FuzzPricesOf(f *testing.F) {
	f.Add(`{"currencyCode":"USD","retailPrice":3.673,"armRegionName":"eastus","armSkuName":"S","type":"Consumption","unitOfMeasure":"1 Hour","skuName":"S","meterName":"S"}`)
	f.Add(`{"currencyCode":"USD","retailPrice":20148,"armRegionName":"eastus","armSkuName":"S","type":"Reservation","reservationTerm":"1 Year"}`)
	f.Add(`{"currencyCode":"USD","retailPrice":-1,"armRegionName":"eastus","armSkuName":"S","type":"Consumption","unitOfMeasure":"1 Hour","savingsPlan":[{"term":"3 Years","retailPrice":1e400}]}`)
	f.Add(`{"currencyCode":"USD","retailPrice":3.673,"armRegionName":"eastus","armSkuName":"S","type":"Consumption","unitOfMeasure":"1 Hour","skuName":"S","meterName":"S","savingsPlan":[{"unitPrice":1.85,"retailPrice":1.85,"term":"3 Years"},{"unitPrice":2.62,"retailPrice":2.62,"term":"1 Year"},{"retailPrice":2.5,"term":"1 Year"}]}`)
	f.Fuzz(func(t *testing.T, row string) {
		var it RetailItem
		if json.Unmarshal([]byte(row), &it) != nil {
			return
		}
		seen := map[string]bool{}
		for _, p := range PricesOf([]RetailItem{it}, "eastus", "S", time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)) {
			if !p.Hourly.IsPositive() || p.Currency != "USD" || p.Region != "eastus" {
				t.Fatalf("%s → %+v", row, p)
			}
			// One price per option and kind; a commitment price names its
			// kind, so a savings plan never answers a reservation query.
			k := string(p.Option) + " " + string(p.Commitment)
			if seen[k] {
				t.Fatalf("%s → two %s prices", row, k)
			}
			seen[k] = true
			if _, ok := pricing.CommitmentTerm(p.Option); ok != (p.Commitment == pricing.Reservation || p.Commitment == pricing.AzureSavingsPlan) {
				t.Fatalf("%s → %+v: a commitment price must name its kind, and only it", row, p)
			}
		}
	})
}
