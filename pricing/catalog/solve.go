package catalog

import (
	"math/big"

	"github.com/shopspring/decimal"
)

// A priced type is one equation in a region's rates under one purchase
// option: vCPUs × core + GiB × RAM + GPUs × GPU = its catalog price.
type equation struct {
	coef  map[int]decimal.Decimal // unknown → units of it the type has
	price decimal.Decimal
	// weight scales the equation's residual in the least squares: a
	// price from the Billing Catalog itself outweighs one put together
	// elsewhere (see Options). 0 means 1.
	weight int64
}

// solveRates is the rates x that price the equations best: of the rates
// whose sums are nearest the prices in the least-squares sense (exactly at
// them where the prices are linear in the units), the ones nearest the
// prior x0. Where a family's types are proportional (a2-highgpu-1g, 2g, 4g
// and 8g; g2's vCPUs and RAM always 1 : 4) the prices fix only some sums
// of the rates, and any split of them is as exact as another: the prior
// (the fixed split of a family's first type, see Options) decides it, so
// the split is deterministic and stays plausible. Computed in exact
// rationals (solveLinked): x = x0 + y, y the least-squares solution of
// A y ≈ b − A x0 of least norm in proportion to x0.
//
// The equations fall apart into families that share no rate (a GPU model
// is one family's, mostly), each solved on its own, so that one family's
// prices that no rates fit leave the others' exact. A family whose solved
// rates are not all positive keeps the prior. exact[j] says whether x[j]'s
// family is priced to the last place by the rates: every price of it
// reproduced.
func solveRates(n int, eqs []equation, x0 []decimal.Decimal) (x []decimal.Decimal, exact []bool) {
	parent := make([]int, n)
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		if parent[i] != i {
			parent[i] = find(parent[i])
		}
		return parent[i]
	}
	for _, e := range eqs {
		first := -1
		for j := range e.coef {
			if first < 0 {
				first = j
			} else {
				parent[find(j)] = find(first)
			}
		}
	}
	parts := map[int][]equation{}
	for _, e := range eqs {
		for j := range e.coef {
			parts[find(j)] = append(parts[find(j)], e)
			break
		}
	}
	out := append([]decimal.Decimal(nil), x0...)
	exact = make([]bool, n)
	for root, part := range parts {
		var members []int
		units := map[int]decimal.Decimal{}
		for j := 0; j < n; j++ {
			if find(j) == root {
				members = append(members, j)
			}
		}
		for _, e := range part {
			for j, v := range e.coef {
				units[j] = units[j].Add(v.Abs())
			}
		}
		// The prices have 6 places, rounded from sums of 9-place rates
		// (Cyclenerd's raw g2-standard-24 in us-central1 is 2.000832574):
		// the least-squares rates of the rounded prices can miss one by
		// a unit of the 6th place. Where they do, the missed price's
		// target moves by the miss and the rates are solved again, up to
		// 50 times, keeping the rates that miss fewest; only misses under
		// $0.00001 move, not prices that no rates fit.
		targets := append([]equation(nil), part...)
		var best map[int]decimal.Decimal
		bestMisses := -1
		for iter := 0; iter < 50; iter++ {
			x, ok := roundedSolve(n, targets, x0, members, units)
			if !ok {
				break
			}
			misses, moved := 0, false
			for i, e := range part {
				sum := decimal.Zero
				for j, v := range e.coef {
					sum = sum.Add(v.Mul(x[j]))
				}
				if miss := e.price.Sub(sum); !sum.Round(6).Equal(e.price) {
					misses++
					if miss.Abs().LessThan(decimal.New(1, -5)) {
						targets[i].price = targets[i].price.Add(miss)
						moved = true
					}
				}
			}
			if bestMisses < 0 || misses < bestMisses {
				best, bestMisses = x, misses
			}
			if !moved {
				break
			}
		}
		for j, v := range best {
			out[j] = v
			exact[j] = bestMisses == 0
		}
	}
	return out, exact
}

// roundedSolve solves the equations' rates with 9 places: as the rates
// have 9 places, and 9-place rounding times 1,360 GiB of RAM is more than
// the prices' 6 places allow, it rounds one rate at a time, the one priced
// by the most units first, and solves the rest anew given it, the GPU rate
// (fewest units) last. False when a rate comes out zero or negative.
func roundedSolve(n int, eqs []equation, x0 []decimal.Decimal, members []int, units map[int]decimal.Decimal) (map[int]decimal.Decimal, bool) {
	fixed := map[int]decimal.Decimal{}
	for len(fixed) < len(members) {
		x := solveLinked(n, reduce(eqs, fixed), x0)
		next := -1
		for _, j := range members {
			if _, done := fixed[j]; done {
				continue
			}
			if !x[j].Round(9).IsPositive() {
				return nil, false
			}
			if next < 0 || units[j].GreaterThan(units[next]) {
				next = j
			}
		}
		fixed[next] = x[next].Round(9)
	}
	return fixed, true
}

// reduce is the equations with the fixed rates' part of each price taken
// out.
func reduce(eqs []equation, fixed map[int]decimal.Decimal) []equation {
	out := make([]equation, 0, len(eqs))
	for _, e := range eqs {
		r := equation{coef: map[int]decimal.Decimal{}, price: e.price, weight: e.weight}
		for j, v := range e.coef {
			if f, ok := fixed[j]; ok {
				r.price = r.price.Sub(v.Mul(f))
			} else {
				r.coef[j] = v
			}
		}
		if len(r.coef) > 0 {
			out = append(out, r)
		}
	}
	return out
}

// solveLinked is solveRates for equations that share rates; the unknowns
// no equation names keep the prior.
func solveLinked(n int, eqs []equation, x0 []decimal.Decimal) []decimal.Decimal {
	rat := func(d decimal.Decimal) *big.Rat { return d.Rat() }
	// The unknowns are solved as multiples of the prior (y_j = x_j/x0_j − 1),
	// so that the nearest rates are the nearest in proportion: a change
	// the prices call for goes to each rate in its share of them, not
	// mostly to the rate with the most units (RAM).
	prior, scale := make([]*big.Rat, n), make([]*big.Rat, n)
	for i := range prior {
		prior[i] = rat(x0[i])
		scale[i] = big.NewRat(1, 1)
		if prior[i].Sign() > 0 {
			scale[i] = prior[i]
		}
	}
	// Normal equations of A y ≈ d: N = AᵀA, c = Aᵀd.
	N := make([][]*big.Rat, n)
	for i := range N {
		N[i] = make([]*big.Rat, n)
		for j := range N[i] {
			N[i][j] = new(big.Rat)
		}
	}
	c := make([]*big.Rat, n)
	for i := range c {
		c[i] = new(big.Rat)
	}
	for _, e := range eqs {
		w := big.NewRat(max(e.weight, 1), 1)
		d := new(big.Rat).Mul(rat(e.price), w)
		a := map[int]*big.Rat{}
		for j, v := range e.coef {
			a[j] = new(big.Rat).Mul(rat(v), w)
			d.Sub(d, new(big.Rat).Mul(a[j], prior[j]))
			a[j].Mul(a[j], scale[j])
		}
		for i, ai := range a {
			c[i].Add(c[i], new(big.Rat).Mul(ai, d))
			for j, aj := range a {
				N[i][j].Add(N[i][j], new(big.Rat).Mul(ai, aj))
			}
		}
	}
	// The minimum-norm solution lies in N's column space: y = N_B w, B a
	// basis of N's columns, and N N_B w = c has an exact solution (c is in
	// the row space of A, which is N's column space); its normal equations
	// N_Bᵀ N N_B w = N_Bᵀ c are square and regular.
	B := pivots(N)
	k := len(B)
	if k == 0 {
		return x0
	}
	NB := make([][]*big.Rat, n) // n × k
	for i := range NB {
		NB[i] = make([]*big.Rat, k)
		for j, b := range B {
			NB[i][j] = N[i][b]
		}
	}
	NNB := mul(N, NB) // n × k
	M := make([][]*big.Rat, k)
	rhs := make([]*big.Rat, k)
	for i := 0; i < k; i++ {
		M[i] = make([]*big.Rat, k+1)
		for j := 0; j < k; j++ {
			s := new(big.Rat)
			for r := 0; r < n; r++ {
				s.Add(s, new(big.Rat).Mul(NB[r][i], NNB[r][j]))
			}
			M[i][j] = s
		}
		s := new(big.Rat)
		for r := 0; r < n; r++ {
			s.Add(s, new(big.Rat).Mul(NB[r][i], c[r]))
		}
		rhs[i] = s
		M[i][k] = s
	}
	w, ok := gauss(M)
	if !ok {
		return x0
	}
	out := make([]decimal.Decimal, n)
	for i := 0; i < n; i++ {
		x := new(big.Rat).Set(prior[i])
		for j := 0; j < k; j++ {
			x.Add(x, new(big.Rat).Mul(new(big.Rat).Mul(NB[i][j], w[j]), scale[i]))
		}
		out[i] = decimal.NewFromBigRat(x, 12)
	}
	return out
}

// pivots are the indexes of a basis of m's columns (Gaussian elimination).
func pivots(m [][]*big.Rat) []int {
	n := len(m)
	a := make([][]*big.Rat, n)
	for i := range m {
		a[i] = make([]*big.Rat, len(m[i]))
		for j := range m[i] {
			a[i][j] = new(big.Rat).Set(m[i][j])
		}
	}
	var out []int
	row := 0
	for col := 0; col < n && row < n; col++ {
		p := -1
		for r := row; r < n; r++ {
			if a[r][col].Sign() != 0 {
				p = r
				break
			}
		}
		if p < 0 {
			continue
		}
		a[row], a[p] = a[p], a[row]
		for r := row + 1; r < n; r++ {
			if a[r][col].Sign() == 0 {
				continue
			}
			f := new(big.Rat).Quo(a[r][col], a[row][col])
			for j := col; j < n; j++ {
				a[r][j].Sub(a[r][j], new(big.Rat).Mul(f, a[row][j]))
			}
		}
		out = append(out, col)
		row++
	}
	return out
}

func mul(a, b [][]*big.Rat) [][]*big.Rat {
	out := make([][]*big.Rat, len(a))
	for i := range a {
		out[i] = make([]*big.Rat, len(b[0]))
		for j := range b[0] {
			s := new(big.Rat)
			for r := range b {
				s.Add(s, new(big.Rat).Mul(a[i][r], b[r][j]))
			}
			out[i][j] = s
		}
	}
	return out
}

// gauss solves the augmented k × (k+1) system m; false when it is singular.
func gauss(m [][]*big.Rat) ([]*big.Rat, bool) {
	k := len(m)
	for col := 0; col < k; col++ {
		p := -1
		for r := col; r < k; r++ {
			if m[r][col].Sign() != 0 {
				p = r
				break
			}
		}
		if p < 0 {
			return nil, false
		}
		m[col], m[p] = m[p], m[col]
		for r := 0; r < k; r++ {
			if r == col || m[r][col].Sign() == 0 {
				continue
			}
			f := new(big.Rat).Quo(m[r][col], m[col][col])
			for j := col; j <= k; j++ {
				m[r][j].Sub(m[r][j], new(big.Rat).Mul(f, m[col][j]))
			}
		}
	}
	out := make([]*big.Rat, k)
	for i := range out {
		out[i] = new(big.Rat).Quo(m[i][k], m[i][i])
	}
	return out, true
}
