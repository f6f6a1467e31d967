package recommend

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/shopspring/decimal"
)

// referenceSort is the order sortRecommendations keeps: strategy, savings
// (largest first), resource ID, stable.
func referenceSort(recs []Recommendation) {
	sort.SliceStable(recs, func(i, j int) bool {
		a, b := recs[i], recs[j]
		if kindOrder[a.Kind] != kindOrder[b.Kind] {
			return kindOrder[a.Kind] < kindOrder[b.Kind]
		}
		if c := a.MonthlySavings.Cmp(b.MonthlySavings); c != 0 {
			return c > 0
		}
		return a.ResourceID < b.ResourceID
	})
}

// TestSortRecommendationsIsReference compares the key sort with the
// reference on random plans full of ties: savings that differ beyond a
// float64's precision, equal savings, equal resource IDs (kept in their
// order), kinds in any order.
func TestSortRecommendationsIsReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	savings := []decimal.Decimal{
		decimal.Zero, decimal.RequireFromString("0.01"), decimal.RequireFromString("-3.5"),
		decimal.RequireFromString("1234567.89"), decimal.RequireFromString("1234567.8900000000001"),
		decimal.RequireFromString("1234567.8900000000002"), decimal.RequireFromString("1e400"),
		decimal.RequireFromString("2e400"), decimal.RequireFromString("-1e400"),
	}
	for round := range 500 {
		n := rng.IntN(60)
		recs := make([]Recommendation, n)
		for i := range recs {
			s := savings[rng.IntN(len(savings))]
			if rng.IntN(3) == 0 {
				s = decimal.NewFromFloat(rng.Float64() * 1000).Round(2)
			}
			recs[i] = Recommendation{
				Kind:           Kinds[rng.IntN(len(Kinds))],
				MonthlySavings: s,
				ResourceID:     fmt.Sprintf("r-%d", rng.IntN(8)),
				ID:             fmt.Sprint(i), // tells ties apart
			}
			if rng.IntN(10) == 0 {
				recs[i].Kind = "unknown-kind"
			}
		}
		want := slices.Clone(recs)
		referenceSort(want)
		sortRecommendations(recs)
		for i := range recs {
			if recs[i].ID != want[i].ID {
				t.Fatalf("round %d: at %d got %s, want %s", round, i, recs[i].ID, want[i].ID)
			}
		}
	}
}

// TestPermute: every permutation moves each element to its place.
func TestPermute(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 9))
	for range 300 {
		n := rng.IntN(30)
		order := rng.Perm(n)
		in := make([]int, n)
		for i := range in {
			in[i] = i * 10
		}
		got := slices.Clone(in)
		permute(got, slices.Clone(order))
		for i := range got {
			if got[i] != in[order[i]] {
				t.Fatalf("order %v: got %v", order, got)
			}
		}
	}
}

// TestHoursDecimalIsNewFromFloat: the cached conversion is the conversion,
// digits and exponent alike, on first use and after, for typical and odd
// hours.
func TestHoursDecimalIsNewFromFloat(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 1))
	hours := []float64{0, math.Copysign(0, -1), 730, 744, 412.35, 1e-9, 0.1 + 0.2, 5e300, -3}
	for range 2000 {
		hours = append(hours, rng.Float64()*744, float64(rng.IntN(745)), math.Round(rng.Float64()*74400)/100)
	}
	for round := range 2 {
		for _, h := range hours {
			got, want := hoursDecimal(h), decimal.NewFromFloat(h)
			if got.String() != want.String() || got.Exponent() != want.Exponent() || got.Coefficient().Cmp(want.Coefficient()) != 0 {
				t.Fatalf("round %d: hoursDecimal(%v) = %s (exp %d), want %s (exp %d)", round, h, got, got.Exponent(), want, want.Exponent())
			}
		}
	}
}
