package billing_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/gpufinops/gpufinops/internal/billingtest"
	"github.com/gpufinops/gpufinops/internal/focusgen"
	"github.com/gpufinops/gpufinops/pkg/billing"
)

// TestGeneratedExport reads a generated export as CSV and as Parquet: the
// totals are the generator's, to the last digit, and both agree.
func TestGeneratedExport(t *testing.T) {
	dir := t.TempDir()
	fl := billingtest.Fleet()
	var totals [2]focusgen.Totals
	for i, name := range []string{"focus.csv", "focus.parquet"} {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			totals[i], err = focusgen.WriteCSV(f, fl, billingtest.Options())
		} else {
			totals[i], err = focusgen.WriteParquet(f, fl, billingtest.Options())
		}
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	opts := billing.Options{Keep: billing.Keys(fl)}
	var got [2]*billing.Summary
	for i, name := range []string{"focus.csv", "focus.parquet"} {
		s, err := billing.Read(context.Background(), filepath.Join(dir, name), opts)
		if err != nil {
			t.Fatal(err)
		}
		got[i] = s
		want := totals[i]
		if s.Rows != want.Rows || s.GPURows != want.GPURows || !s.EffectiveCost.Equal(want.GPUEffective) ||
			!s.ListCost.Equal(want.GPUList) || !s.Hours.Equal(want.GPUHours) || len(s.Resources) != 5 {
			t.Fatalf("%s: rows %d/%d GPU %d/%d effective %s/%s list %s/%s hours %s/%s resources %d",
				name, s.Rows, want.Rows, s.GPURows, want.GPURows, s.EffectiveCost, want.GPUEffective, s.ListCost, want.GPUList, s.Hours, want.GPUHours, len(s.Resources))
		}
		if len(s.Unused) != 1 || !s.Unused[0].UnusedEffectiveCost.Equal(want.Unused) {
			t.Errorf("%s: unused %+v, want %s", name, s.Unused, want.Unused)
		}
		j := s.Join(fl)
		if len(j.ByInstance) != 4 || !j.UnmatchedSum.Equal(want.ExtraEffective) {
			t.Errorf("%s: matched %d, unmatched %s want %s", name, len(j.ByInstance), j.UnmatchedSum, want.ExtraEffective)
		}
		for id, eff := range want.Effective {
			if r := j.ByInstance[id]; r == nil || !r.EffectiveCost.Equal(eff) {
				t.Errorf("%s: %s effective %v, want %s", name, id, r, eff)
			}
		}
		a := j.ByInstance["i-aaa"]
		if a.CommitmentShare() != 0.25 || a.SpotShare() != 0 || j.ByInstance["i-bbb"].SpotShare() != 1 {
			t.Errorf("%s: shares %v %v", name, a.CommitmentShare(), j.ByInstance["i-bbb"].SpotShare())
		}
	}
	if got[0].Versions[0] != billing.V12 || got[1].Versions[0] != billing.V12 {
		t.Errorf("versions %v %v", got[0].Versions, got[1].Versions)
	}
}
