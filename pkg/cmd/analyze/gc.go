package analyze

import "runtime/debug"

// gcFloorInstances is the fleet size up to which analyze leaves the garbage
// collector at its default target (GOGC=100: the heap may grow to twice the
// live data between collections).
const gcFloorInstances = 10000

// minGCPercent is the lowest target analyze sets (reached at 100,000
// instances). At 150,000 instances it keeps the peak under 1 GiB (879 MiB
// mapped, against 1,083 MiB at 20) in about the same wall time, since each
// collection has less garbage to sweep; lower, collections dominate.
const minGCPercent = 10

// gcPercent is the collector target for a fleet of n instances: the default
// for a small fleet; for a larger one, the target that keeps the garbage
// allowed between collections about what a gcFloorInstances fleet's is,
// since the live data grows with the fleet (some 4–5 KiB an instance).
func gcPercent(n int) int {
	if n <= gcFloorInstances {
		return 100
	}
	return max(minGCPercent, 100*gcFloorInstances/n)
}

// tuneGC lowers the collector target for a large fleet unless GOGC sets it,
// and returns the function that restores the previous target.
func tuneGC(getenv func(string) string, instances int) (restore func()) {
	p := gcPercent(instances)
	if getenv("GOGC") != "" || p == 100 {
		return func() {}
	}
	prev := debug.SetGCPercent(p)
	return func() { debug.SetGCPercent(prev) }
}
