package report

import (
	"bytes"
	"os"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/internal/purchasetest"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/recommend"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
)

// TestUnusedCommitmentsAddUp: the unused commitment no instance carries is
// part of the current and optimized costs, through Verify, currency
// conversion and merge.
func TestUnusedCommitmentsAddUp(t *testing.T) {
	plan := testPlan()
	unused := decimal.RequireFromString("1606.00")
	plan.Summary.UnusedCommitmentMonthly = unused
	plan.Summary.CurrentMonthly = plan.Summary.CurrentMonthly.Add(unused)
	plan.Summary.OptimizedMonthly = plan.Summary.OptimizedMonthly.Add(unused)
	plan.Summary.SavingsPercent = plan.Summary.MonthlySavings.Mul(decimal.NewFromInt(100)).Div(plan.Summary.CurrentMonthly).Round(1)
	r := New(plan, testMeta())
	if u := r.Summary.UnusedCommitmentMonthlyCost; u == nil || !u.d.Equal(unused) {
		t.Fatalf("unused %v", u)
	}
	if err := r.Verify(); err != nil {
		t.Fatal(err)
	}
	eur, err := Convert(r, Conversion{Currency: "EUR", Rate: decimal.RequireFromString("0.5"), Source: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if err := eur.Verify(); err != nil {
		t.Fatalf("converted: %v", err)
	}
	if u := eur.Summary.UnusedCommitmentMonthlyCost; u == nil || !u.d.Equal(decimal.RequireFromString("803")) {
		t.Errorf("converted unused %v", u)
	}
	// Without the line, the sum of the instances no longer adds up.
	r.Summary.UnusedCommitmentMonthlyCost = nil
	if r.Verify() == nil {
		t.Error("Verify accepts a summary above its instances")
	}
}

// TestCommitmentsHeldSection: the worked example's commitments reach the
// report with their figures, through JSON, Load and currency conversion.
func TestCommitmentsHeldSection(t *testing.T) {
	const path = "../../testdata/commitments/worked-example.yaml"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := fleet.Parse(path, b)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	if err := pricing.Complete(f, cat); err != nil {
		t.Fatal(err)
	}
	r := New(recommend.Run(f, cat, recommend.DefaultPolicy().WithPurchases(purchasetest.Purchases())), testMeta())
	if err := r.Verify(); err != nil {
		t.Fatal(err)
	}
	h := r.CommitmentsHeld
	if h == nil || len(h.Commitments) != 5 {
		t.Fatalf("section %+v", h)
	}
	a := h.Commitments[3]
	if a.ID != "res-a100" || a.PaidMonthlyCost.String() != "3212.00" || a.UnusedMonthlyCost.String() != "1606.00" || a.UnusedHourlyCost.d.String() != "2.2" || a.UtilizationPercent != 50 {
		t.Errorf("res-a100: %+v", a)
	}
	var buf bytes.Buffer
	if err := Write(&buf, r, "json", PrintOptions{}); err != nil {
		t.Fatal(err)
	}
	back, err := Load(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if back.CommitmentsHeld == nil || back.CommitmentsHeld.Commitments[3].UnusedMonthlyCost.String() != "1606.00" || back.CommitmentsHeld.CoveragePercent.d.String() != h.CoveragePercent.d.String() {
		t.Errorf("read back: %+v", back.CommitmentsHeld)
	}
	eur, err := Convert(r, Conversion{Currency: "EUR", Rate: decimal.RequireFromString("0.5"), Source: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if err := eur.Verify(); err != nil {
		t.Fatal(err)
	}
	if c := eur.CommitmentsHeld.Commitments[3]; c.UnusedMonthlyCost.String() != "803.00" || c.UnusedHourlyCost.d.String() != "1.1" {
		t.Errorf("converted: %+v", c)
	}
	if r.CommitmentsHeld.Commitments[3].UnusedMonthlyCost.String() != "1606.00" {
		t.Error("Convert changed the USD report")
	}
}

// TestMergeCommitmentsHeld: each shard's commitments and unused line join
// in the merge, and its coverage is recomputed from the sums.
func TestMergeCommitmentsHeld(t *testing.T) {
	shard := func(i int, id, covered, od, unused string) Part {
		u := NewMoney(decimal.RequireFromString(unused))
		r := &Report{SchemaVersion: SchemaVersion, Shard: &Shard{Index: i, Count: 2}, Instances: []Instance{}, Recommendations: []Recommendation{},
			CommitmentsHeld: &CommitmentsHeld{CoveredOnDemandMonthlyCost: NewMoney(decimal.RequireFromString(covered)), OnDemandMonthlyCost: NewMoney(decimal.RequireFromString(od)),
				Commitments: []HeldCommitment{{ID: id, UnusedMonthlyCost: u}}}}
		r.Summary = sumSummary(r)
		r.Summary.UnusedCommitmentMonthlyCost = &u
		r.Summary.CurrentMonthlyCost, r.Summary.OptimizedMonthlyCost = u, u
		return Part{Name: id + ".json", Report: r}
	}
	m, err := Merge([]Part{shard(1, "ri-1", "30", "100", "10"), shard(2, "ri-2", "0", "100", "5")})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Verify(); err != nil {
		t.Fatal(err)
	}
	h := m.CommitmentsHeld
	if h == nil || len(h.Commitments) != 2 || h.CoveragePercent.d.String() != "15" || m.Summary.UnusedCommitmentMonthlyCost.String() != "15.00" || m.Summary.CurrentMonthlyCost.String() != "15.00" {
		t.Errorf("merged %+v, summary %+v", h, m.Summary)
	}
}
