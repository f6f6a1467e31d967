package providers

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestNaNRow(t *testing.T) {
	for n := range 70 {
		r := NaNRow(n)
		if len(r) != n {
			t.Fatalf("NaNRow(%d) has %d values", n, len(r))
		}
		for k, v := range r {
			if !math.IsNaN(v) {
				t.Fatalf("NaNRow(%d)[%d] = %v", n, k, v)
			}
		}
	}
}

// TestMarkPresent: a period is marked exactly when some row has a value in
// it.
func TestMarkPresent(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 7))
	for range 500 {
		steps := r.IntN(40)
		rows := make([][]float64, r.IntN(4))
		for i := range rows {
			if r.IntN(5) == 0 {
				continue // nil
			}
			rows[i] = NaNRow(steps)
			for k := range rows[i] {
				if r.IntN(3) == 0 {
					rows[i][k] = r.Float64()
				}
			}
		}
		present := make([]bool, steps)
		for _, row := range rows {
			MarkPresent(present, row)
		}
		for k := range steps {
			want := slices.ContainsFunc(rows, func(row []float64) bool { return row != nil && !math.IsNaN(row[k]) })
			if present[k] != want {
				t.Fatalf("period %d: marked %v, want %v", k, present[k], want)
			}
		}
	}
}

func TestRowIndexes(t *testing.T) {
	got := RowIndexes(map[int][]float64{3: nil, -1: nil, 0: nil})
	if !slices.Equal(got, []int{-1, 0, 3}) {
		t.Fatalf("RowIndexes = %v", got)
	}
}
