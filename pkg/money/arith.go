package money

import (
	"math"
	"math/bits"

	"github.com/shopspring/decimal"
)

// The engine adds, multiplies and rounds millions of amounts a run, nearly
// all of them a few cents to a few million dollars. decimal.Decimal holds
// its coefficient in a big.Int, so each of its operations allocates two to
// ten objects. The functions below give decimal's result exactly (the same
// coefficient and the same exponent) and compute it in int64 when the
// operands and the result fit. Otherwise they call decimal.

// maxFastExp bounds the exponents the fast paths take; decimal itself
// handles (and panics on) exponents near int32's limits.
const maxFastExp = 1 << 20

// pow10u are the powers of ten that fit a uint64.
var pow10u = func() (p [20]uint64) {
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return p
}()

// small returns d's coefficient and exponent when the coefficient has at
// most 18 digits, which NumDigits finds without allocating.
func small(d decimal.Decimal) (c int64, e int32, ok bool) {
	e = d.Exponent()
	if e > maxFastExp || e < -maxFastExp || d.NumDigits() > 18 {
		return 0, 0, false
	}
	return d.CoefficientInt64(), e, true
}

// abs splits c into its magnitude and sign.
func abs(c int64) (u uint64, neg bool) {
	if c < 0 {
		return -uint64(c), true
	}
	return uint64(c), false
}

// signed is u with the sign neg when it fits an int64 (its magnitude at
// most MaxInt64).
func signed(u uint64, neg bool) (int64, bool) {
	if u > math.MaxInt64 {
		return 0, false
	}
	if neg {
		return -int64(u), true
	}
	return int64(u), true
}

// scale multiplies u by 10^k when the product fits a uint64.
func scale(u uint64, k int32) (uint64, bool) {
	if k == 0 || u == 0 {
		return u, true
	}
	if k < 0 || k >= int32(len(pow10u)) {
		return 0, false
	}
	hi, lo := bits.Mul64(u, pow10u[k])
	return lo, hi == 0
}

// roundU rounds the 128-bit hi:lo × 10^e to the exponent -places as
// decimal's Round does: truncated to one digit more, then half away from
// zero.
func roundU(hi, lo uint64, e, places int32) (uint64, bool) {
	target := -places
	if e >= target {
		if hi != 0 {
			return 0, false
		}
		return scale(lo, e-target)
	}
	for d := target - 1 - e; d > 0 && hi|lo != 0; { // the digits truncated
		k := min(d, int32(len(pow10u)-1))
		hi, lo = div128(hi, lo, pow10u[k])
		d -= k
	}
	if hi != 0 || lo > math.MaxUint64-5 {
		return 0, false
	}
	return (lo + 5) / 10, true
}

// div128 is hi:lo / p, truncated.
func div128(hi, lo, p uint64) (qhi, qlo uint64) {
	qhi, r := hi/p, hi%p
	qlo, _ = bits.Div64(r, lo, p)
	return qhi, qlo
}

// Mul is a.Mul(b).
func Mul(a, b decimal.Decimal) decimal.Decimal {
	if hi, lo, neg, e, ok := product(a, b); ok && hi == 0 {
		if c, ok := signed(lo, neg); ok {
			return decimal.New(c, e)
		}
	}
	return a.Mul(b)
}

// MulRound is a.Mul(b).Round(places).
func MulRound(a, b decimal.Decimal, places int32) decimal.Decimal {
	if c, ok := MulRoundCoefficient(a, b, places); ok {
		return decimal.New(c, -places)
	}
	return a.Mul(b).Round(places)
}

// MulRoundCoefficient is the coefficient of a.Mul(b).Round(places), whose
// exponent is -places, when the fast path computes it (ok); a caller that
// keeps equal amounts once looks it up before it makes a decimal.
func MulRoundCoefficient(a, b decimal.Decimal, places int32) (c int64, ok bool) {
	if hi, lo, neg, e, ok := product(a, b); ok && places <= maxFastExp && places >= -maxFastExp {
		if r, ok := roundU(hi, lo, e, places); ok {
			return signed(r, neg && r != 0)
		}
	}
	return 0, false
}

// product is the 128-bit magnitude, the sign and the exponent of a×b when
// both coefficients fit an int64.
func product(a, b decimal.Decimal) (hi, lo uint64, neg bool, e int32, ok bool) {
	ca, ea, ok1 := small(a)
	cb, eb, ok2 := small(b)
	if !ok1 || !ok2 {
		return 0, 0, false, 0, false
	}
	ua, na := abs(ca)
	ub, nb := abs(cb)
	hi, lo = bits.Mul64(ua, ub)
	return hi, lo, na != nb, ea + eb, true
}

// RoundPlaces is d.Round(places).
func RoundPlaces(d decimal.Decimal, places int32) decimal.Decimal {
	if d.Exponent() == -places {
		return d
	}
	if places <= maxFastExp && places >= -maxFastExp {
		if c, e, ok := small(d); ok {
			u, neg := abs(c)
			if r, ok := roundU(0, u, e, places); ok {
				if c, ok := signed(r, neg && r != 0); ok {
					return decimal.New(c, -places)
				}
			}
		}
	}
	return d.Round(places)
}

// Add is a.Add(b).
func Add(a, b decimal.Decimal) decimal.Decimal {
	if c, e, ok := addSub(a, b, false); ok {
		return decimal.New(c, e)
	}
	return a.Add(b)
}

// Sub is a.Sub(b).
func Sub(a, b decimal.Decimal) decimal.Decimal {
	if c, e, ok := SubParts(a, b); ok {
		return decimal.New(c, e)
	}
	return a.Sub(b)
}

// SubParts is the coefficient and exponent of a.Sub(b) when the fast path
// computes them (ok).
func SubParts(a, b decimal.Decimal) (c int64, e int32, ok bool) { return addSub(a, b, true) }

// addSub brings a and b to the smaller exponent, as decimal does, and adds
// or subtracts their coefficients.
func addSub(a, b decimal.Decimal, sub bool) (int64, int32, bool) {
	ca, ea, ok1 := small(a)
	cb, eb, ok2 := small(b)
	if !ok1 || !ok2 {
		return 0, 0, false
	}
	e := min(ea, eb)
	ca, ok1 = scaleSigned(ca, ea-e)
	cb, ok2 = scaleSigned(cb, eb-e)
	if !ok1 || !ok2 {
		return 0, 0, false
	}
	var c int64
	var overflow bool
	if sub {
		c = ca - cb
		overflow = (ca >= 0) != (cb >= 0) && (c >= 0) != (ca >= 0)
	} else {
		c = ca + cb
		overflow = (ca >= 0) == (cb >= 0) && (c >= 0) != (ca >= 0)
	}
	return c, e, !overflow
}

func scaleSigned(c int64, k int32) (int64, bool) {
	u, neg := abs(c)
	u, ok := scale(u, k)
	if !ok {
		return 0, false
	}
	return signed(u, neg)
}

// QuoRound is a.Div(b).Round(places): the quotient rounded half away from
// zero to decimal.DivisionPrecision decimals, then to places. It panics,
// as Div does, when b is zero.
func QuoRound(a, b decimal.Decimal, places int32) decimal.Decimal {
	prec := int32(decimal.DivisionPrecision)
	if q, neg, ok := quo(a, b, prec); ok && places <= maxFastExp && places >= -maxFastExp {
		if r, ok := roundU(0, q, -prec, places); ok {
			if c, ok := signed(r, neg && r != 0); ok {
				return decimal.New(c, -places)
			}
		}
	}
	return a.Div(b).Round(places)
}

// quo is the magnitude and sign of a.DivRound(b, prec)'s coefficient when
// the dividend and divisor decimal scales them to fit 128 and 64 bits and
// the quotient fits 64. DivRound divides ca×10^e by cb (or ca by cb×10^-e),
// truncates and adds one away from zero when twice the remainder reaches
// the divisor.
func quo(a, b decimal.Decimal, prec int32) (q uint64, neg bool, ok bool) {
	ca, ea, ok1 := small(a)
	cb, eb, ok2 := small(b)
	if !ok1 || !ok2 || cb == 0 || prec > maxFastExp || prec < -maxFastExp {
		return 0, false, false
	}
	ua, na := abs(ca)
	ub, nb := abs(cb)
	// n2:n1:n0 is the dividend, ub the divisor.
	var n2, n1, n0 uint64
	e := ea - eb + prec
	switch {
	case e < 0:
		var ok bool
		if ub, ok = scale(ub, -e); !ok {
			return 0, false, false
		}
		n0 = ua
	case e < int32(len(pow10u)):
		n1, n0 = bits.Mul64(ua, pow10u[e])
	case e < 2*int32(len(pow10u))-1:
		hi, lo := bits.Mul64(ua, pow10u[len(pow10u)-1])
		k := pow10u[e-int32(len(pow10u))+1]
		var c uint64
		n1, n0 = bits.Mul64(lo, k)
		n2, c = bits.Mul64(hi, k)
		var carry uint64
		n1, carry = bits.Add64(n1, c, 0)
		n2 += carry
	default:
		return 0, false, false
	}
	if n2 != 0 || n1 >= ub { // the quotient needs more than 64 bits
		return 0, false, false
	}
	q, r := bits.Div64(n1, n0, ub)
	if r >= ub-r { // 2r ≥ divisor, without overflowing
		if q == math.MaxUint64 {
			return 0, false, false
		}
		q++
	}
	return q, na != nb, true
}
