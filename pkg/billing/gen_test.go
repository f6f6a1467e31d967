package billing_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/internal/focusgen"
	"github.com/gpufinops/gpufinops/internal/pgtest"
	"github.com/gpufinops/gpufinops/pkg/billing"
	"github.com/gpufinops/gpufinops/pkg/fleet"
)

func genFleet() []fleet.Instance {
	mk := func(id string, p fleet.Provider, account, region, typ string, gpus float64, l fleet.Lifecycle) fleet.Instance {
		return fleet.Instance{ID: id, Provider: p, Account: account, Region: region, InstanceType: typ, GPU: fleet.GPU{Count: gpus}, Lifecycle: l}
	}
	return []fleet.Instance{
		mk("i-aaa", fleet.AWS, "111", "us-east-1", "p4d.24xlarge", 8, fleet.OnDemand),
		mk("i-bbb", fleet.AWS, "111", "us-east-1", "g5.xlarge", 1, fleet.Spot),
		mk("/subscriptions/S1/resourceGroups/RG/providers/Microsoft.Compute/virtualMachines/NC1", fleet.Azure, "S1", "eastus", "Standard_NC24ads_A100_v4", 1, fleet.OnDemand),
		mk("train-1", fleet.GCP, "proj", "us-central1", "a2-highgpu-1g", 1, fleet.OnDemand),
	}
}

// loadedExport writes genFleet's generated export as CSV and loads it into
// table of db, for the push-down tests; it returns the fleet and the file.
func loadedExport(t *testing.T, db *pgtest.DB, table string) ([]fleet.Instance, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "focus.csv")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	fl := genFleet()
	if _, err := focusgen.WriteCSV(f, fl, genOptions()); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	db.LoadFOCUS(t, table, focusgen.Header, path)
	return fl, path
}

func genOptions() focusgen.Options {
	return focusgen.Options{
		Start: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), Hours: 48,
		List: func(in *fleet.Instance) (decimal.Decimal, bool) {
			return decimal.NewFromFloat(in.GPU.Count * 1.375), true
		},
		Discount: decimal.RequireFromString("0.1"), Committed: decimal.RequireFromString("0.25"),
		CommitmentDiscount: decimal.RequireFromString("0.3"), UnusedCommitment: decimal.RequireFromString("0.5"), Noise: 2,
		Extra: []fleet.Instance{{ID: "i-zzz", Provider: fleet.AWS, Account: "999", Region: "eu-west-1", InstanceType: "p5.48xlarge", GPU: fleet.GPU{Count: 8}}},
	}
}

// TestGeneratedExport reads a generated export as CSV and as Parquet: the
// totals are the generator's, to the last digit, and both agree.
func TestGeneratedExport(t *testing.T) {
	dir := t.TempDir()
	fl := genFleet()
	var totals [2]focusgen.Totals
	for i, name := range []string{"focus.csv", "focus.parquet"} {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			totals[i], err = focusgen.WriteCSV(f, fl, genOptions())
		} else {
			totals[i], err = focusgen.WriteParquet(f, fl, genOptions())
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
