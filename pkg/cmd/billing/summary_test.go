package billing

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/cmdutil/cmdtest"
	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/pkg/testutil"
	"github.com/gpufinops/gpufinops/pricing/catalog"
)

const sample = "../../../testdata/billing/focus-1.0-sample.csv"

func TestNewCmdSummary(t *testing.T) {
	for _, tc := range []struct {
		args, wantErr string
	}{
		{args: "--billing f.csv"},
		{args: "--billing f.csv --start 2025-01-01 --end 2025-02-01T00:00:00Z -o json"},
		{args: "", wantErr: "--billing: give a FOCUS export file or folder"},
		{args: "--billing f.csv --start 2025-13-01", wantErr: `--start: "2025-13-01" is not a date (want YYYY-MM-DD or RFC 3339)`},
		{args: "--billing f.csv --start 2025-02-01 --end 2025-01-01", wantErr: "--end 2025-01-01 is not after --start 2025-02-01"},
		{args: "--billing f.csv --focus-version 2.0", wantErr: `--focus-version: "2.0" is not one of 1.0, 1.1, 1.2, 1.3`},
		{args: "--billing f.csv -o yaml", wantErr: `"yaml" is not one of table, json, csv`},
	} {
		t.Run(tc.args, func(t *testing.T) {
			got, err := cmdtest.Parse(t, NewCmdSummary, strings.Fields(tc.args))
			if cmdtest.CheckErr(t, err, tc.wantErr) {
				return
			}
			if got.Source != "f.csv" {
				t.Errorf("source %q", got.Source)
			}
		})
	}
}

func run(t *testing.T, source, format string) (string, string, error) {
	t.Helper()
	ios, _, out, errOut := iostreams.Test()
	err := summaryRun(&SummaryOptions{IO: ios, Catalog: catalog.Embedded, Source: source, Format: format, Ctx: t.Context()})
	return out.String(), errOut.String(), err
}

func TestSummaryGolden(t *testing.T) {
	for _, f := range []struct{ format, ext string }{{"table", ".txt"}, {"json", ".json"}, {"csv", ".csv"}} {
		out, errOut, err := run(t, sample, f.format)
		if err != nil {
			t.Fatal(err)
		}
		testutil.AssertGolden(t, "testdata/summary-"+f.format+f.ext, []byte(out))
		if f.format == "table" {
			testutil.AssertGolden(t, "testdata/summary-table.stderr.txt", []byte(errOut))
		}
		if f.format == "json" {
			testutil.ValidateJSON(t, "../../../docs/schema/billing-summary.schema.json", out)
			var d struct {
				Resources []struct {
					InstanceType string `json:"instanceType"`
				} `json:"resources"`
				GPURows int `json:"gpuRows"`
			}
			// 10 GPU rows: the catalog knows every GPU type of the sample,
			// g3.4xlarge included.
			if err := json.Unmarshal([]byte(out), &d); err != nil || d.GPURows != 10 {
				t.Errorf("json: %v, gpuRows %d", err, d.GPURows)
			}
		}
	}
}

func TestSummaryBadInput(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.csv")
	os.WriteFile(bad, []byte("BilledCost,EffectiveCost\n1,2\n"), 0o644)
	for src, want := range map[string]string{
		bad:                      "bad.csv: missing required FOCUS column(s) ListCost, ChargeCategory",
		"nowhere.csv":            "nowhere.csv: no such file or directory",
		"bigquery://p.d":         "want bigquery://PROJECT.DATASET.TABLE",
		"s3x://bucket/focus.csv": `unknown scheme "s3x"`,
	} {
		_, _, err := run(t, src, "json")
		if err == nil || !strings.Contains(err.Error(), want) || cmdutil.ExitCodeFor(err) != cmdutil.ExitUsage {
			t.Errorf("%s: %v (exit %d), want %q and exit 2", src, err, cmdutil.ExitCodeFor(err), want)
		}
	}
}
