package fleet

// SetPiecewise turns the piecewise JSON and streamed YAML readers on or
// off, for the benchmarks of the external test package; it returns the
// setting before.
func SetPiecewise(on bool) (was bool) {
	was, piecewise = piecewise, on
	return was
}
