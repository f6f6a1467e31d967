package analyze

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/internal/focusgen"
	"github.com/gpufinops/gpufinops/pkg/cmd/factory"
	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/cmdutil/cmdtest"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/pkg/report"
	"github.com/gpufinops/gpufinops/pkg/testutil"
	"github.com/gpufinops/gpufinops/pricing/catalog"
)

// demoBill writes a FOCUS export of the demo fleet at a 12 % discount, a
// quarter of the on-demand hours on a savings plan, an unused part of it,
// and one GPU instance in an account the fleet lacks.
func demoBill(t *testing.T, parquet bool) (string, focusgen.Totals) {
	t.Helper()
	ios, _, _, _ := iostreams.Test()
	fl, err := factory.FileFleet(ios)("", true)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	o := focusgen.Options{
		Start: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), Hours: 72,
		List: func(in *fleet.Instance) (decimal.Decimal, bool) {
			off, ok := cat.Offer(in.Provider, in.Region, in.PriceKey())
			if !ok || off.OnDemand == nil {
				return decimal.Zero, false
			}
			return off.OnDemand.Hourly, true
		},
		Discount: decimal.RequireFromString("0.12"), Committed: decimal.RequireFromString("0.25"),
		CommitmentDiscount: decimal.RequireFromString("0.28"), UnusedCommitment: decimal.RequireFromString("1.25"), Noise: 1,
		Extra: []fleet.Instance{{ID: "i-unscanned", Provider: fleet.AWS, Account: "999988887777", Region: "eu-west-1",
			InstanceType: "p4d.24xlarge", GPU: fleet.GPU{Count: 8}}},
	}
	name, write := "focus.csv", focusgen.WriteCSV
	if parquet {
		name, write = "focus.parquet", focusgen.WriteParquet
	}
	path := filepath.Join(t.TempDir(), name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tot, err := write(f, fl.Instances, o)
	if err != nil {
		t.Fatal(err)
	}
	return path, tot
}

func TestAnalyzeBillingReconciles(t *testing.T) {
	var reports [2]report.Report
	for i, pq := range []bool{false, true} {
		path, tot := demoBill(t, pq)
		opts, out := demoOptions(t, "json", false)
		opts.Billing = path
		if err := analyzeRun(opts); err != nil {
			t.Fatal(err)
		}
		testutil.ValidateJSON(t, "../../../docs/schema/report.schema.json", out.String())
		var r report.Report
		if err := json.Unmarshal(out.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		b := r.Billing
		if b == nil {
			t.Fatal("no billing section")
		}
		if want := tot.GPUEffective.Round(2); !b.BillEffectiveCost.Decimal().Equal(want) {
			t.Errorf("bill %s, export's GPU EffectiveCost %s", b.BillEffectiveCost, want)
		}
		if want := tot.ExtraEffective.Round(2); !b.UnmatchedEffectiveCost.Decimal().Equal(want) || !b.Difference.Decimal().Equal(want) || !b.Reconciled {
			t.Errorf("unmatched %s difference %s reconciled %v, want %s: %s", b.UnmatchedEffectiveCost, b.Difference, b.Reconciled, want, b.Line)
		}
		if len(b.Unmatched) != 1 || b.Unmatched[0].Account != "999988887777" || len(b.UnusedCommitments) != 1 {
			t.Errorf("unmatched %+v unused %+v", b.Unmatched, b.UnusedCommitments)
		}
		matched := decimal.Zero
		for _, in := range r.Instances {
			if eff, ok := tot.Effective[in.ResourceID]; ok {
				if in.PriceBasis != "bill" || !strings.HasPrefix(in.HourlyPrice.Source, "FOCUS bill ") {
					t.Errorf("%s: basis %q source %q", in.ResourceID, in.PriceBasis, in.HourlyPrice.Source)
				}
				matched = matched.Add(eff)
			} else if in.Priced && in.PriceBasis != "list" {
				t.Errorf("%s: not in the bill but basis %q", in.ResourceID, in.PriceBasis)
			}
		}
		if !b.ReportWindowCost.Decimal().Equal(matched.Round(2)) {
			t.Errorf("report window cost %s, matched export %s", b.ReportWindowCost, matched.Round(2))
		}
		reports[i] = r
	}
	// CSV and Parquet: the same report but for the file named.
	a, b := reports[0], reports[1]
	if !a.Summary.CurrentMonthlyCost.Decimal().Equal(b.Summary.CurrentMonthlyCost.Decimal()) ||
		!a.Summary.MonthlySavings.Decimal().Equal(b.Summary.MonthlySavings.Decimal()) ||
		!a.Billing.ReportWindowCost.Decimal().Equal(b.Billing.ReportWindowCost.Decimal()) {
		t.Errorf("csv %s/%s vs parquet %s/%s", a.Summary.CurrentMonthlyCost, a.Summary.MonthlySavings, b.Summary.CurrentMonthlyCost, b.Summary.MonthlySavings)
	}
}

func TestAnalyzeBillingTableLine(t *testing.T) {
	path, _ := demoBill(t, false)
	opts, out := demoOptions(t, "table", false)
	opts.Billing = path
	if err := analyzeRun(opts); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "\nBill: GPU EffectiveCost ") || !strings.Contains(out.String(), "accounts or regions not scanned: aws 999988887777 eu-west-1") {
		t.Errorf("no bill line:\n%s", out.String()[:min(600, out.Len())])
	}
}

func TestAnalyzeBillingErrors(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "b.csv")
	os.WriteFile(bad, []byte("BilledCost,EffectiveCost,ListCost,ChargeCategory,ChargePeriodStart,ResourceId,ProviderName\nx,1,1,Usage,2025-01-01,i-1,AWS\n"), 0o644)
	opts, _ := demoOptions(t, "json", false)
	opts.Billing = bad
	err := analyzeRun(opts)
	if err == nil || !strings.Contains(err.Error(), `b.csv: row 1: column BilledCost: "x" is not a number`) || cmdutil.ExitCodeFor(err) != cmdutil.ExitUsage {
		t.Errorf("error %v", err)
	}
	for args, want := range map[string]string{
		"--demo --billing-start 2025-01-01":                 "--billing-start and --billing-end bound the --billing export: add --billing SOURCE",
		"--demo --billing f.csv --billing-end 2025-02-30":   `--billing-end: "2025-02-30" is not a date`,
		"--demo --billing f.csv --billing-start 2025-01-01": "",
	} {
		got, err := cmdtest.Parse(t, NewCmdAnalyze, strings.Fields(args))
		if cmdtest.CheckErr(t, err, want) {
			continue
		}
		if got.Billing != "f.csv" || !got.BillingStart.Equal(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)) {
			t.Errorf("%s: %+v", args, got)
		}
	}
}

// Markdown and HTML print the bill line too.
func TestAnalyzeBillingMarkdownHTML(t *testing.T) {
	path, _ := demoBill(t, false)
	for format, want := range map[string]string{"markdown": "**Bill:** GPU EffectiveCost ", "html": `<p class="bill">Bill: GPU EffectiveCost `} {
		opts, out := demoOptions(t, format, false)
		opts.Billing = path
		if err := analyzeRun(opts); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), want) {
			t.Errorf("-o %s lacks %q", format, want)
		}
	}
}

// TestAnalyzeBillingCoverageDiffers (issue 33): with a bill and a fleet that
// lists its commitments, an instance the bill shows covered otherwise than
// the commitments held cover it is named in billing.coverageDiffers, both
// shares side by side, and the billing line says so; a fleet that lists no
// commitments has nothing to compare.
func TestAnalyzeBillingCoverageDiffers(t *testing.T) {
	path, _ := demoBill(t, false)
	run := func(held bool) *report.Billing {
		t.Helper()
		opts, out := demoOptions(t, "json", false)
		opts.Billing = path
		var covered string
		if held {
			load := opts.Fleet
			opts.Fleet = func(p string, demo bool) (*fleet.Fleet, error) {
				f, err := load(p, demo)
				if err != nil {
					return nil, err
				}
				for _, in := range f.Instances {
					if in.Provider == fleet.AWS && in.Lifecycle == fleet.OnDemand && in.State == fleet.Running {
						rate := decimal.RequireFromString("1")
						f.Commitments = append(f.Commitments, fleet.Held{ID: "ri-test", Provider: fleet.AWS, Kind: fleet.HeldStandardRI,
							Term: "1y", InstanceType: in.InstanceType, Count: 1, Scope: fleet.HeldScope{Level: "region", Region: in.Region}, HourlyRate: &rate})
						covered = in.ID
						break
					}
				}
				return f, nil
			}
		}
		if err := analyzeRun(opts); err != nil {
			t.Fatal(err)
		}
		testutil.ValidateJSON(t, "../../../docs/schema/report.schema.json", out.String())
		var r report.Report
		if err := json.Unmarshal(out.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		if held {
			var found bool
			for _, c := range r.Billing.CoverageDiffers {
				if c.ResourceID == covered {
					found = true
					if c.HeldShare.Decimal().String() != "1" || !c.BillShare.Decimal().LessThan(decimal.RequireFromString("0.5")) || len(c.CoveredBy) != 1 || c.CoveredBy[0] != "ri-test" {
						t.Errorf("%s: %+v", covered, c)
					}
				}
			}
			if !found || !strings.Contains(r.Billing.Line, "covered otherwise in the bill than by the commitments read") {
				t.Errorf("the instance the reservation covers, which the bill covers a quarter of, is not named: %+v; %s", r.Billing.CoverageDiffers, r.Billing.Line)
			}
		}
		return r.Billing
	}
	if b := run(false); len(b.CoverageDiffers) != 0 {
		t.Errorf("no commitments listed, yet coverage differs: %+v", b.CoverageDiffers)
	}
	run(true)
}
