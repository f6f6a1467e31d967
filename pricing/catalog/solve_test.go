package catalog

import (
	"testing"

	"github.com/shopspring/decimal"
)

// TestSolveRatesReproducesRoundedPrices: the G2 machines' on-demand prices
// in us-central1, which the Billing Catalog makes from 9-place rates
// (Cyclenerd's raw figures: 0.706832255 … 8.003330296) and the catalog
// keeps to 6 places, come back to the last place from the solved rates,
// though the shapes are proportional (vCPUs and RAM always 1 : 4), the
// least-squares rates of the rounded prices miss g2-standard-24's by
// $0.000001 (2.000832 for 2.000833) and the first guess is the fixed split
// of g2-standard-4; the rates stay positive, with 9 places.
func TestSolveRatesReproducesRoundedPrices(t *testing.T) {
	d := decimal.RequireFromString
	shapes := []struct {
		v, m, g int64
		price   string
	}{
		{4, 16, 1, "0.706832"}, {8, 32, 1, "0.853624"}, {12, 48, 1, "1.000416"}, {16, 64, 1, "1.147208"},
		{24, 96, 2, "2.000833"}, {32, 128, 1, "1.734376"}, {48, 192, 4, "4.001665"}, {96, 384, 8, "8.00333"},
	}
	var eqs []equation
	for _, s := range shapes {
		eqs = append(eqs, equation{coef: map[int]decimal.Decimal{0: decimal.NewFromInt(s.v), 1: decimal.NewFromInt(s.m), 2: decimal.NewFromInt(s.g)}, price: d(s.price)})
	}
	// g2-standard-4's price split: 60 % the GPU, ¾ of the rest 4 vCPUs, ¼ 16 GiB.
	first := d("0.706832")
	g := first.Mul(d("0.6")).Round(9)
	c := first.Sub(g).Mul(d("0.75")).Div(d("4")).Round(9)
	r := first.Sub(g).Sub(c.Mul(d("4"))).Div(d("16")).Round(9)
	x, exact := solveRates(3, eqs, []decimal.Decimal{c, r, g})
	if !exact[0] || !exact[1] || !exact[2] {
		t.Errorf("exact = %v, want every rate exact", exact)
	}
	for i, v := range x {
		if !v.IsPositive() || !v.Equal(v.Round(9)) {
			t.Errorf("rate %d = %s: not a positive 9-place rate", i, v)
		}
	}
	for i, e := range eqs {
		sum := decimal.Zero
		for j, c := range e.coef {
			sum = sum.Add(c.Mul(x[j]))
		}
		if !sum.Round(6).Equal(e.price) {
			t.Errorf("shape %v: the rates %v give %s, the price is %s", shapes[i].v, x, sum, e.price)
		}
	}
}
