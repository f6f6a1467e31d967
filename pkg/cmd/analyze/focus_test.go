package analyze

import (
	"context"
	"encoding/csv"
	"strings"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/billing"
	"github.com/gpufinops/gpufinops/pkg/report"
	"github.com/gpufinops/gpufinops/pkg/testutil"
)

// -o focus of the demo: one row per instance in the report's header, and
// the FOCUS reader loads it back with the report's totals.
func TestAnalyzeFOCUS(t *testing.T) {
	opts, out := demoOptions(t, report.FormatFOCUS, false)
	if err := analyzeRun(opts); err != nil {
		t.Fatal(err)
	}
	testutil.AssertGolden(t, "testdata/demo-focus.csv", out.Bytes())
	rows, err := csv.NewReader(strings.NewReader(out.String())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	jopts, jout := demoOptions(t, "json", false)
	if err := analyzeRun(jopts); err != nil {
		t.Fatal(err)
	}
	rep, err := report.Load(strings.NewReader(jout.String()))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(rep.Instances)+1 {
		t.Fatalf("%d rows for %d instances", len(rows)-1, len(rep.Instances))
	}
	s, err := billing.ReadCSV(context.Background(), "focus.csv", strings.NewReader(out.String()), billing.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !s.EffectiveCost.Equal(rep.Summary.CurrentMonthlyCost.Decimal()) || s.Versions[0] != billing.V11 {
		t.Errorf("read back: effective %s, report current %s; version %v", s.EffectiveCost, rep.Summary.CurrentMonthlyCost, s.Versions)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	for _, c := range []string{"x_GpuModel", "x_GpuCount", "x_GpuHours", "x_GpuUtilization", "x_RecommendedAction", "x_MonthlySavings"} {
		if _, ok := col[c]; !ok {
			t.Errorf("no %s column", c)
		}
	}
	saved := 0
	for _, r := range rows[1:] {
		if r[col["x_MonthlySavings"]] != "0" && r[col["x_MonthlySavings"]] != "0.00" && r[col["x_RecommendedAction"]] == "" {
			t.Errorf("%s saves %s without an action", r[col["ResourceId"]], r[col["x_MonthlySavings"]])
		}
		if r[col["x_RecommendedAction"]] != "" {
			saved++
		}
	}
	if saved == 0 {
		t.Error("no instance has a recommended action")
	}
}
