package governance

import (
	"cmp"
	"math"

	"github.com/shopspring/decimal"
)

// cents is an amount rounded to cents, half away from zero: the rounded
// decimal, and its count of cents where an int64 holds it (small).
type cents struct {
	d     decimal.Decimal
	n     int64
	small bool
}

var (
	maxCents = decimal.New(math.MaxInt64, -2)
	minCents = decimal.New(math.MinInt64, -2)
	// noCents is what an unpriced instance costs.
	noCents = cents{d: decimal.Zero, small: true}
)

// centsOf is d rounded to cents. An amount already in cents is not copied.
func centsOf(d decimal.Decimal) cents {
	r := d.Round(2)
	// Round(2) leaves the exponent at -2, so these compare coefficients.
	if r.Cmp(maxCents) <= 0 && r.Cmp(minCents) >= 0 {
		return cents{d: r, n: r.CoefficientInt64(), small: true}
	}
	return cents{d: r}
}

// compareCents orders two amounts by value.
func compareCents(a, b cents) int {
	if a.small && b.small {
		return cmp.Compare(a.n, b.n)
	}
	return a.d.Cmp(b.d)
}

// sum adds amounts in cents exactly: in an int64 while it holds the sum, in
// a decimal from the first addition that would overflow it on.
type sum struct {
	n   int64
	d   decimal.Decimal
	big bool
}

func (s *sum) add(c cents) {
	if !s.big && c.small {
		if r := s.n + c.n; (c.n >= 0) == (r >= s.n) {
			s.n = r
			return
		}
	}
	if !s.big {
		s.d, s.big = decimal.New(s.n, -2), true
	}
	s.d = s.d.Add(c.d)
}

// value is the sum as a decimal.
func (s sum) value() decimal.Decimal {
	if s.big {
		return s.d
	}
	return decimal.New(s.n, -2)
}
