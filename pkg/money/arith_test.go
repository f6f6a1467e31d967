package money

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/shopspring/decimal"
)

// same reports whether got is decimal's want to the coefficient and the
// exponent, not only in value.
func same(got, want decimal.Decimal) bool {
	return got.Exponent() == want.Exponent() && got.Coefficient().Cmp(want.Coefficient()) == 0
}

// randomDecimal draws amounts like the engine's (cents, prices to six
// decimals, hours) and the edges: zero values, 18- and 19-digit
// coefficients, int64's limits and coefficients past them.
func randomDecimal(r *rand.Rand) decimal.Decimal {
	e := int32(r.IntN(24)) - 20
	switch r.IntN(10) {
	case 0:
		return decimal.Decimal{}
	case 1:
		return decimal.New([]int64{math.MaxInt64, math.MinInt64, math.MaxInt64 - 4, 999999999999999999, -999999999999999999, 1e18, 5, -5, 15, -15, 45, 95}[r.IntN(12)], e)
	case 2:
		v := new(big.Int).Lsh(big.NewInt(r.Int64()), uint(r.IntN(40)))
		if r.IntN(2) == 0 {
			v.Neg(v)
		}
		return decimal.NewFromBigInt(v, e)
	case 3:
		return decimal.New(r.Int64N(1<<62)-1<<61, e)
	case 4:
		return decimal.New(r.Int64N(2e6)-1e6, int32(r.IntN(5))-2)
	}
	c := r.Int64N(int64(math.Pow10(1 + r.IntN(12))))
	if r.IntN(4) == 0 {
		c = -c
	}
	return decimal.New(c, -int32(r.IntN(9)))
}

func checkArith(t *testing.T, a, b decimal.Decimal, places int32) {
	t.Helper()
	if got, want := Add(a, b), a.Add(b); !same(got, want) {
		t.Fatalf("Add(%v, %v) = %v (exp %d), decimal %v (exp %d)", a, b, got, got.Exponent(), want, want.Exponent())
	}
	if got, want := Sub(a, b), a.Sub(b); !same(got, want) {
		t.Fatalf("Sub(%v, %v) = %v (exp %d), decimal %v (exp %d)", a, b, got, got.Exponent(), want, want.Exponent())
	}
	if got, want := Mul(a, b), a.Mul(b); !same(got, want) {
		t.Fatalf("Mul(%v, %v) = %v (exp %d), decimal %v (exp %d)", a, b, got, got.Exponent(), want, want.Exponent())
	}
	if got, want := MulRound(a, b, places), a.Mul(b).Round(places); !same(got, want) {
		t.Fatalf("MulRound(%v, %v, %d) = %v (exp %d), decimal %v (exp %d)", a, b, places, got, got.Exponent(), want, want.Exponent())
	}
	if !b.IsZero() {
		if got, want := QuoRound(a, b, places), a.Div(b).Round(places); !same(got, want) {
			t.Fatalf("QuoRound(%v, %v, %d) = %v (exp %d), decimal %v (exp %d)", a, b, places, got, got.Exponent(), want, want.Exponent())
		}
	}
	if c, ok := MulRoundCoefficient(a, b, places); ok {
		if got, want := decimal.New(c, -places), a.Mul(b).Round(places); !same(got, want) {
			t.Fatalf("MulRoundCoefficient(%v, %v, %d) = %d, decimal %v (exp %d)", a, b, places, c, want, want.Exponent())
		}
	}
	if c, e, ok := SubParts(a, b); ok {
		if got, want := decimal.New(c, e), a.Sub(b); !same(got, want) {
			t.Fatalf("SubParts(%v, %v) = %d×10^%d, decimal %v (exp %d)", a, b, c, e, want, want.Exponent())
		}
	}
	if got, want := RoundPlaces(a, places), a.Round(places); !same(got, want) {
		t.Fatalf("RoundPlaces(%v, %d) = %v (exp %d), decimal %v (exp %d)", a, places, got, got.Exponent(), want, want.Exponent())
	}
}

// TestArithIsDecimal holds the fast paths to decimal's own results over
// 200,000 random pairs.
func TestArithIsDecimal(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		checkArith(t, randomDecimal(r), randomDecimal(r), int32(r.IntN(12))-3)
	}
}

// TestArithEdges covers the rounding of halves both ways, results that
// just fit int64 or just do not, and a product of 19 digits rounded back.
func TestArithEdges(t *testing.T) {
	for _, c := range []struct {
		a, b   decimal.Decimal
		places int32
	}{
		{decimal.New(5, -3), decimal.New(1, 0), 2},
		{decimal.New(-5, -3), decimal.New(1, 0), 2},
		{decimal.New(-15, -3), decimal.New(1, 0), 2},
		{decimal.New(14999, -6), decimal.New(1, 0), 2},
		{decimal.New(math.MaxInt64, 0), decimal.New(1, 0), 0},
		{decimal.New(math.MaxInt64, -2), decimal.New(1, -2), 2},
		{decimal.New(math.MinInt64, 0), decimal.New(-1, 0), 0},
		{decimal.New(999999999999999999, -9), decimal.New(99, -1), 2},
		{decimal.New(4294967296, -10), decimal.New(4294967295, -10), 2},
		{decimal.New(1, -30), decimal.New(1, 0), 2},
		{decimal.New(1, 25), decimal.New(3, -2), 2},
		{decimal.New(0, 25), decimal.New(3, -2), 2},
		{decimal.Decimal{}, decimal.Decimal{}, 2},
		{decimal.New(7, 0), decimal.New(1, -maxFastExp-1), 2},
		// quotients whose 17th decimal is exactly a half (Div rounds it
		// away from zero), and one a hair under it
		{decimal.New(1, 0), decimal.New(2, 16), 16},
		{decimal.New(-3, 0), decimal.New(2, 16), 16},
		{decimal.New(3, 0), decimal.New(-2, 16), 20},
		{decimal.New(1, 0), decimal.New(20000000000000001, 0), 16},
		{decimal.New(125, -3), decimal.New(1, 0), 2},
		// a cost over busy GPU-hours that Div left with 16 decimals: the
		// dividend is scaled by 10^30, past 128 bits
		{decimal.New(2772556, -2), decimal.New(1234567890123456789, -16), 2},
		{decimal.New(-99999999999999, -2), decimal.New(3, -16), 2},
		{decimal.New(99999999999999999, -2), decimal.New(1, -20), 2},
		// 35×10^37 carries into the dividend's third word
		{decimal.New(35, 1), decimal.New(999999999999999999, -20), 2},
	} {
		checkArith(t, c.a, c.b, c.places)
	}
}

func FuzzArith(f *testing.F) {
	f.Add(int64(14250), int32(-4), int64(730), int32(0), int32(2))
	f.Add(int64(-5), int32(-3), int64(1), int32(0), int32(2))
	f.Add(int64(math.MaxInt64), int32(0), int64(math.MinInt64), int32(-1), int32(0))
	f.Add(int64(999999999999999999), int32(-18), int64(10), int32(3), int32(-2))
	f.Fuzz(func(t *testing.T, ca int64, ea int32, cb int64, eb int32, places int32) {
		ea, eb, places = ea%40, eb%40, places%40
		checkArith(t, decimal.New(ca, ea), decimal.New(cb, eb), places)
	})
}
