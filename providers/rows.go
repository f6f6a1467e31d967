package providers

import (
	"math"
	"slices"
)

// The helpers below are for adapters that lay a metric's datapoints on a
// grid of periods, NaN where a period has none.

// NaNRow returns n NaNs, filled by doubling copies rather than one store at
// a time: a large scan's rows are megabytes.
func NaNRow(n int) []float64 {
	r := make([]float64, n)
	if n == 0 {
		return r
	}
	r[0] = math.NaN()
	for i := 1; i < n; i *= 2 {
		copy(r[i:], r[:i])
	}
	return r
}

// MarkPresent sets present[k] for every period k that row has a value in;
// a nil row marks nothing.
func MarkPresent(present []bool, row []float64) {
	for k, v := range row {
		if !math.IsNaN(v) {
			present[k] = true
		}
	}
}

// RowIndexes lists the indexes (GPU numbers; -1 for an aggregate) of a
// grid's rows in ascending order.
func RowIndexes(m map[int][]float64) []int {
	keys := make([]int, 0, len(m))
	for i := range m {
		keys = append(keys, i)
	}
	slices.Sort(keys)
	return keys
}
