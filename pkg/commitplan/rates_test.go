package commitplan

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// TestPerFamilyRatesAgainstBruteForce: random multi-family fleets whose
// types have their own discounts. Each group commits at its lowest discount,
// and its total is the brute-force minimum over all levels at that discount
// (over whole multiples of the unit for groups bought as instances).
func TestPerFamilyRatesAgainstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 3))
	families := []string{"g5", "p4d", "g6"}
	for trial := range 80 {
		var items []Item
		own := map[string]Terms{}
		perInstance := rng.IntN(2) == 0
		for i := range 1 + rng.IntN(10) {
			fam := families[rng.IntN(len(families))]
			price := fmt.Sprintf("%d.%03d", 1+rng.IntN(4), rng.IntN(1000))
			id := fmt.Sprintf("i%02d", i)
			d1 := math.Round((0.1+rng.Float64()*0.4)*1e4) / 1e4
			terms := Terms{Term1y: d1, Term3y: math.Min(0.9, d1+rng.Float64()*0.3)}
			if rng.IntN(8) == 0 {
				delete(terms, Term3y)
			}
			hours := 730.0
			if rng.IntN(3) == 0 {
				hours = float64(100 + rng.IntN(630))
			}
			it := item(id, price, hours, func(it *Item) {
				it.Family, it.InstanceType, it.Discounts, it.PerInstance = fam, fam+".x"+price, terms, perInstance
			})
			items = append(items, it)
			own[id] = terms
		}
		p, err := Build(items, nil, Options{})
		if err != nil {
			t.Fatal(err)
		}
		checkIdentities(t, p)
		for _, g := range p.Groups {
			for _, tp := range g.Terms {
				lowest := 1.0
				for _, id := range g.Items {
					d, ok := own[id][tp.Term]
					if !ok {
						t.Fatalf("trial %d %s: term %s planned but %s has no rate for it", trial, g.Family, tp.Term, id)
					}
					lowest = math.Min(lowest, d)
				}
				if tp.Discount != lowest {
					t.Fatalf("trial %d %s %s: discount %v, lowest item rate %v", trial, g.Family, tp.Term, tp.Discount, lowest)
				}
				prices, seg := onDemandOnly(g.HourlyUsage)
				levels := candidates(prices, seg)
				if perInstance {
					if tp.UnitHourly.IsZero() || !tp.CommitHourly.Equal(tp.UnitHourly.Mul(decimalInt(tp.Quantity))) {
						t.Fatalf("trial %d %s: commit %s is not %d × %s", trial, g.Family, tp.CommitHourly, tp.Quantity, tp.UnitHourly)
					}
					u := tp.UnitHourly.InexactFloat64()
					levels = nil
					for k := 0; float64(k)*u <= g.Usage.Max+u; k++ {
						levels = append(levels, float64(k)*u)
					}
				}
				best := math.Inf(1)
				for _, x := range levels {
					best = math.Min(best, bruteCost(prices, seg, tp.Discount, x)*fleet.HoursPerMonth/float64(p.Hours))
				}
				if got := tp.TotalMonthly.InexactFloat64(); math.Abs(got-best) > 0.02 {
					t.Fatalf("trial %d %s %s: total %v, brute-force minimum %v", trial, g.Family, tp.Term, got, best)
				}
			}
		}
	}
}

// An item whose type has no rate for any term is left out, never given an
// assumed discount.
func TestNoRateIsExcluded(t *testing.T) {
	items := []Item{
		item("rated", "1", 730, func(it *Item) { it.Discounts = Terms{Term1y: 0.3} }),
		item("unrated", "1", 730, func(it *Item) { it.Discounts = Terms{} }),
	}
	p := mustBuild(t, items, nil)
	g := p.Groups[0]
	if fmt.Sprint(g.Items) != "[rated]" || len(g.Excluded) != 1 || g.Excluded[0].Reason != ReasonNoRate {
		t.Fatalf("items %v excluded %v", g.Items, g.Excluded)
	}
	if len(g.Terms) != 1 || g.Terms[0].Discount != 0.3 || !g.Terms[0].CommitHourly.Equal(dec("1")) {
		t.Errorf("terms %+v", g.Terms)
	}
}

// An item billed for fewer hours than its samples show is counted at its
// billed hours: the saving never exceeds the discount of what it costs.
func TestCurveCappedToBilledHours(t *testing.T) {
	start := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	var samples []fleet.Sample
	for h := range 168 {
		samples = append(samples, fleet.Sample{Time: start.Add(time.Duration(h) * time.Hour)})
	}
	it := item("x", "2", 365, func(it *Item) { it.Samples = samples })
	p := mustBuild(t, []Item{it}, awsTerms)
	if got := p.Groups[0].Usage.Mean; math.Abs(got-1) > 1e-6 {
		t.Errorf("mean usage %v, want 2 × 365/730 = 1", got)
	}
	for _, tp := range p.Groups[0].Terms {
		if billed := 2 * 365.0; tp.SavingsMonthly.InexactFloat64() > tp.Discount*billed+0.01 {
			t.Errorf("%s saves %s of a %v bill", tp.Term, tp.SavingsMonthly, billed)
		}
	}
}

// A fleet that shrank from 4 to 2 machines in the last of three weeks is
// committed at 2, with the trend reported; one that grew is committed at the
// new level; a steady one has no trend.
func TestTrendSizesOnTheLastWeek(t *testing.T) {
	start := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	window := &fleet.TimeRange{Start: start, End: start.Add(3 * week)}
	machine := func(id string, from, to int) Item {
		var s []fleet.Sample
		for h := from; h < to; h++ {
			s = append(s, fleet.Sample{Time: start.Add(time.Duration(h) * time.Hour)})
		}
		return item(id, "1", 730, func(it *Item) { it.Samples, it.Window = s, window })
	}
	for _, tc := range []struct {
		name   string
		items  []Item
		dir    string
		commit string
	}{
		{"shrank", []Item{machine("a", 0, 504), machine("b", 0, 504), machine("c", 0, 336), machine("d", 0, 336)}, TrendFell, "2"},
		{"grew", []Item{machine("a", 0, 504), machine("b", 336, 504), machine("c", 336, 504)}, TrendRose, "3"},
		{"steady", []Item{machine("a", 0, 504), machine("b", 0, 504)}, "", "2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := mustBuild(t, tc.items, awsTerms)
			g := p.Groups[0]
			if (g.Trend == nil) != (tc.dir == "") || (g.Trend != nil && g.Trend.Direction != tc.dir) {
				t.Fatalf("trend %+v, want %q", g.Trend, tc.dir)
			}
			if tc.dir != "" && !strings.Contains(strings.Join(p.Assumptions, "\n"), "sized on the last week") {
				t.Errorf("assumptions %q", p.Assumptions)
			}
			for _, tp := range g.Terms {
				if tp.CommitHourly.String() != tc.commit {
					t.Errorf("%s: commit %s, want %s", tp.Term, tp.CommitHourly, tc.commit)
				}
			}
		})
	}
}

func decimalInt(n int) decimal.Decimal { return decimal.NewFromInt(int64(n)) }
