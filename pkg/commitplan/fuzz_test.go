package commitplan

import (
	"fmt"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// FuzzBuildMoney decodes bytes into a fleet of items (price, billed hours,
// per-item discounts, sampled hours that may disagree with the bill, whole
// instances or dollars) and checks the money guards: every saving is ≥ 0 and
// at most its discount of the instance's billed cost, a group's total is
// never below its commitment's cost, and allocations add up to the saving.
func FuzzBuildMoney(f *testing.F) {
	f.Add([]byte{10, 255, 30, 50, 0, 0, 20, 100, 40, 60, 1, 1})
	f.Add([]byte{200, 128, 90, 10, 3, 2, 5, 255, 1, 1, 2, 0, 77, 77, 77, 77, 77, 77})
	f.Add([]byte{1, 1, 1, 1, 1, 1})
	start := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, b []byte) {
		var items []Item
		billed := map[string]decimal.Decimal{}
		for i := 0; i+6 <= len(b) && len(items) < 12; i += 6 {
			id := fmt.Sprintf("i%02d", len(items))
			price := decimal.NewFromInt(int64(b[i]) + 1).Div(decimal.NewFromInt(16))
			hours := float64(b[i+1]) * fleet.HoursPerMonth / 255
			it := Item{ID: id, Provider: fleet.AWS, Region: "r", Family: []string{"a", "b"}[b[i+5]%2], InstanceType: fmt.Sprint("t", b[i]%3),
				OnDemandHourly: price, MonthlyHours: hours, Eligible: true,
				Discounts: Terms{Term1y: float64(b[i+2]%95) / 100, Term3y: float64(b[i+3]%95) / 100}, PerInstance: b[i+4]&1 == 1}
			if b[i+4]&2 != 0 {
				// Samples over 1–3 weeks that start and stop anywhere.
				from, to := int(b[i+4]>>2)%200, 168+int(b[i+5])*2
				for h := from; h < to; h += 1 + int(b[i+2]%5) {
					it.Samples = append(it.Samples, fleet.Sample{Time: start.Add(time.Duration(h) * time.Hour)})
				}
			}
			items = append(items, it)
			billed[id] = monthly(price, hours)
		}
		p, err := Build(items, nil, Options{})
		if err != nil {
			t.Fatalf("valid items refused: %v", err)
		}
		for _, g := range p.Groups {
			for _, tp := range g.Terms {
				name := fmt.Sprintf("%s %s", g.Family, tp.Term)
				if tp.SavingsMonthly.IsNegative() || tp.TotalMonthly.LessThan(tp.CommittedMonthly) {
					t.Fatalf("%s: saving %s, total %s, committed %s", name, tp.SavingsMonthly, tp.TotalMonthly, tp.CommittedMonthly)
				}
				sum := decimal.Zero
				for _, a := range tp.Allocations {
					sum = sum.Add(a.SavingsMonthly)
					limit := billed[a.ID].Mul(decimal.NewFromFloat(tp.Discount)).Add(decimal.NewFromFloat(0.02))
					if a.SavingsMonthly.IsNegative() || a.SavingsMonthly.GreaterThan(limit) {
						t.Fatalf("%s: %s saves %s of a %s bill at %v off", name, a.ID, a.SavingsMonthly, billed[a.ID], tp.Discount)
					}
				}
				if len(tp.Allocations) > 0 && !sum.Equal(tp.SavingsMonthly) {
					t.Fatalf("%s: allocations %s ≠ saving %s", name, sum, tp.SavingsMonthly)
				}
			}
		}
	})
}
