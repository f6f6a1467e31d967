package report

import (
	"testing"

	"github.com/shopspring/decimal"
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
