package billing

import (
	"context"
	"encoding/csv"
	"errors"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// FuzzReadCSV feeds rows under a FOCUS header: the reader never panics,
// an error is an *Error, and a summary's totals are its resources' sums.
func FuzzReadCSV(f *testing.F) {
	f.Add("1,1,1,Usage,2025-01-01 00:00:00,,i-1,AWS,1,Hours,Standard,,,g5.xlarge,Compute,USD\n")
	f.Add("NULL,NULL,NULL,Usage,2025-01-01,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL\n")
	f.Add("1e3,-0.5,.5,Usage,2025-01-01T00:00:00Z,,arn:aws:ec2:r:1:instance/i-2,Amazon,0.296111,Hours,Dynamic,sp,Used,p4d.24xlarge,Compute,USD\n")
	f.Add("0,2,0,Usage,2025-01-01,,,AWS,,,Committed,ri-1,Unused,g5.xlarge,Compute,USD\n\"a\"\"b,1\n")
	f.Add("1e300,1e15,-1e15,Usage,2025-01-01,,i-1,AWS,1e18,Hours,Standard,,,g5.xlarge,Compute,USD\n")
	gpus := func(p fleet.Provider, t string) (float64, bool) {
		return 1, p == fleet.AWS && strings.Contains(t, ".")
	}
	f.Fuzz(func(t *testing.T, rows string) {
		s, err := ReadCSV(context.Background(), "f.csv", strings.NewReader(header10+rows), Options{GPUs: gpus})
		if err != nil {
			var be *Error
			if !errors.As(err, &be) || !strings.HasPrefix(err.Error(), "f.csv: ") {
				t.Fatalf("error %v is not a located *Error", err)
			}
			return
		}
		var eff, hours decimal.Decimal
		var n int64
		for _, r := range s.Resources {
			eff, hours, n = eff.Add(r.EffectiveCost), hours.Add(r.Hours), n+r.Rows
			// Each cell is at most maxAmount; a resource sums its rows.
			if lim := maxAmount.Mul(decimal.NewFromInt(max(r.Rows, 1))); r.EffectiveCost.Abs().GreaterThan(lim) || r.BilledCost.Abs().GreaterThan(lim) {
				t.Fatalf("%s: effective %s, billed %s over %d rows", r.ResourceID, r.EffectiveCost, r.BilledCost, r.Rows)
			}
			if r.CommitmentShare() < 0 && r.Hours.IsPositive() {
				t.Fatalf("share %v", r.CommitmentShare())
			}
		}
		if !eff.Equal(s.EffectiveCost) || !hours.Equal(s.Hours) || n != s.GPURows || s.GPURows > s.Rows {
			t.Fatalf("totals: %s/%s %s/%s %d/%d/%d", eff, s.EffectiveCost, hours, s.Hours, n, s.GPURows, s.Rows)
		}
	})
}

// FuzzNormalizeID: normalising is idempotent and keys of one provider
// never collide across providers.
func FuzzNormalizeID(f *testing.F) {
	for _, s := range []string{"arn:aws:ec2:us-east-1:1:instance/i-1", "/subscriptions/A/x", "https://www.googleapis.com/compute/v1/projects/p/zones/z/instances/n", "arn:", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		for _, p := range []fleet.Provider{fleet.AWS, fleet.Azure, fleet.GCP, "oracle"} {
			n := NormalizeID(p, id)
			if NormalizeID(p, n) != n {
				t.Fatalf("%s: %q → %q → %q", p, id, n, NormalizeID(p, n))
			}
			if !strings.HasPrefix(Key(p, id), string(p)+"|") {
				t.Fatal("key without provider")
			}
		}
	})
}

// FuzzFoldAggregates feeds a warehouse's result rows: never a panic, an
// error is a located *Error, and totals are the resources' sums.
func FuzzFoldAggregates(f *testing.F) {
	f.Add("AWS,i-1,1,us-east-1,USD,Usage,d,Compute,Standard,,,,,,\"{\"\"InstanceType\"\":\"\"p5.48xlarge\"\",\"\"GpuCount\"\":8}\",Hours,1.5,1.25,2,2,1,1,2025-01-01 00:00:00,2025-01-01 01:00:00,1")
	f.Add("AWS,,,,USD,Usage,,Compute,Committed,sp-1,Unused,Savings Plan,,,,,0,4,0,0,,0,2025-01-01T00:00:00Z,,3")
	f.Add(",,,,,,,,,,,,,,NULL,,x,1,1,1,1,1,bad,,0")
	f.Fuzz(func(t *testing.T, rows string) {
		r := csv.NewReader(strings.NewReader(rows))
		r.FieldsPerRecord = len(aggregateHeader)
		next := func() ([]string, error) { return r.Read() }
		s, err := FoldAggregates(context.Background(), "q", aggregateHeader, next, Options{})
		if err != nil {
			var be *Error
			if !errors.As(err, &be) || !strings.HasPrefix(err.Error(), "q: ") {
				t.Fatalf("error %v is not a located *Error", err)
			}
			return
		}
		var eff decimal.Decimal
		var n int64
		for _, res := range s.Resources {
			eff, n = eff.Add(res.EffectiveCost), n+res.Rows
		}
		if !eff.Equal(s.EffectiveCost) || n != s.GPURows || s.GPURows > s.Rows {
			t.Fatalf("totals: %s/%s %d/%d/%d", eff, s.EffectiveCost, n, s.GPURows, s.Rows)
		}
	})
}

var aggregateHeader = strings.Split("provider_name,resource_id,account,region,currency,charge_category,charge_description,service_category,pricing_category,commitment_id,commitment_status,commitment_type,capacity_id,capacity_status,sku_price_details,consumed_unit,billed,effective,list,contracted,consumed,consumed_rows,first_start,last_end,row_count", ",")
