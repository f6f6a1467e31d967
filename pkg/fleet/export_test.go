package fleet

// SetPiecewise turns the piecewise JSON and streamed YAML readers on or
// off, for the benchmarks of the external test package; it returns the
// setting before.
func SetPiecewise(on bool) (was bool) {
	was, piecewise = piecewise, on
	return was
}

// YAMLLibraryInstances reads data, a YAML fleet, streamed and returns how
// many of its instances the YAML library converted; streamed is false when
// the whole-tree reader would read it.
func YAMLLibraryInstances(data []byte) (n int, streamed bool) {
	conv := &yamlConverter{}
	_, _, streamed = streamYAMLWith(data, conv)
	return conv.slow, streamed
}
