package governance

import (
	"math"
	"math/rand"
	"testing"

	"github.com/shopspring/decimal"
)

// centsNear are amounts at the edges of what an int64 of cents holds.
func centsNear(rng *rand.Rand) decimal.Decimal {
	edge := []int64{math.MaxInt64, math.MinInt64, math.MaxInt64 / 2, math.MinInt64 / 2, 0, 1, -1}
	n := edge[rng.Intn(len(edge))] - rng.Int63n(3) + 1
	return decimal.New(n, -2)
}

// checkSum adds amounts as sum does and as decimals do, rounding each to
// cents as the report does, and fails where the two differ.
func checkSum(t *testing.T, ds []decimal.Decimal) {
	t.Helper()
	var s sum
	want := decimal.Zero
	for _, d := range ds {
		c := centsOf(d)
		r := d.Round(2)
		if !c.d.Equal(r) || (c.small && !decimal.New(c.n, -2).Equal(r)) {
			t.Fatalf("centsOf(%s) = %+v, want %s", d, c, r)
		}
		s.add(c)
		want = want.Add(r)
		if got := s.value(); !got.Equal(want) {
			t.Fatalf("after %s: sum %s, want %s", d, got, want)
		}
	}
	for i := 1; i < len(ds); i++ {
		a, b := centsOf(ds[i-1]), centsOf(ds[i])
		if got, want := compareCents(a, b), a.d.Cmp(b.d); got != want {
			t.Fatalf("compareCents(%s, %s) = %d, want %d", a.d, b.d, got, want)
		}
	}
}

// TestCentsSum: sums of random amounts (many decimals, ties, negatives,
// past int64) are the decimal sums, whichever way the int64 overflows.
func TestCentsSum(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for range 3000 {
		ds := make([]decimal.Decimal, 1+rng.Intn(12))
		for i := range ds {
			if rng.Intn(3) == 0 {
				ds[i] = centsNear(rng)
			} else {
				ds[i] = randomAmount(rng)
			}
		}
		checkSum(t, ds)
	}
}

func FuzzCentsSum(f *testing.F) {
	f.Add("92233720368547758.07", "0.01", "-0.005")
	f.Add("-92233720368547758.08", "-0.01", "0.005")
	f.Add("884.755", "-884.745", "1e30")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		var ds []decimal.Decimal
		for _, s := range []string{a, b, c} {
			d, err := decimal.NewFromString(s)
			if err != nil || len(s) > 80 || d.Exponent() < -60 || d.Exponent() > 60 {
				t.Skip()
			}
			ds = append(ds, d)
		}
		checkSum(t, append(ds, ds...))
	})
}
