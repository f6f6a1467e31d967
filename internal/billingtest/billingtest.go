// Package billingtest holds the fixtures the bill reader's tests share with
// the adapters' warehouse tests: a small fleet of the three clouds, its
// generated FOCUS export (internal/focusgen) loaded into PostgreSQL, and a
// comparison of two summaries by value.
package billingtest

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/internal/focusgen"
	"github.com/gpufinops/gpufinops/internal/pgtest"
	"github.com/gpufinops/gpufinops/pkg/billing"
	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// Fleet is four GPU instances: two on AWS, one on Azure, one on GCP.
func Fleet() []fleet.Instance {
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

// Options generate Fleet's export: two days from 1 January 2025, with
// discounts, commitments, unused commitment and an instance the fleet lacks.
func Options() focusgen.Options {
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

// WriteExport writes Fleet's export as CSV in a temporary folder of t and
// returns the fleet and the file.
func WriteExport(t testing.TB) ([]fleet.Instance, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "focus.csv")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	fl := Fleet()
	if _, err := focusgen.WriteCSV(f, fl, Options()); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return fl, path
}

// LoadedExport is WriteExport, the file also loaded into table of db, for
// the push-down tests.
func LoadedExport(t testing.TB, db *pgtest.DB, table string) ([]fleet.Instance, string) {
	t.Helper()
	fl, path := WriteExport(t)
	db.LoadFOCUS(t, table, focusgen.Header, path)
	return fl, path
}

// EqualSummaries compares what the push-down must reproduce, decimals by
// value.
func EqualSummaries(a, b *billing.Summary) bool {
	if a.GPURows != b.GPURows || !a.EffectiveCost.Equal(b.EffectiveCost) || !a.BilledCost.Equal(b.BilledCost) ||
		!a.ListCost.Equal(b.ListCost) || !a.Hours.Equal(b.Hours) || len(a.Resources) != len(b.Resources) || len(a.Unused) != len(b.Unused) {
		return false
	}
	for i := range a.Resources {
		x, y := a.Resources[i], b.Resources[i]
		if x.Key != y.Key || x.InstanceType != y.InstanceType || x.GPUCount != y.GPUCount || x.Account != y.Account || x.Region != y.Region ||
			!x.BilledCost.Equal(y.BilledCost) || !x.EffectiveCost.Equal(y.EffectiveCost) || !x.ListCost.Equal(y.ListCost) ||
			!x.ContractedCost.Equal(y.ContractedCost) || !x.Hours.Equal(y.Hours) || !x.CommittedHours.Equal(y.CommittedHours) ||
			!x.SpotHours.Equal(y.SpotHours) || !x.ReservedHours.Equal(y.ReservedHours) || x.Rows != y.Rows ||
			!x.First.Equal(y.First) || !x.Last.Equal(y.Last) || !slices.Equal(x.Commitments, y.Commitments) {
			return false
		}
	}
	for i := range a.Unused {
		if a.Unused[i].ID != b.Unused[i].ID || !a.Unused[i].UnusedEffectiveCost.Equal(b.Unused[i].UnusedEffectiveCost) || a.Unused[i].Rows != b.Unused[i].Rows {
			return false
		}
	}
	return true
}
