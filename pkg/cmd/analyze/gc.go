package analyze

import (
	"math"
	"runtime/debug"
)

// gcFloorInstances is the fleet size up to which analyze leaves the garbage
// collector at its default target (GOGC=100: the heap may grow to twice the
// live data between collections).
const gcFloorInstances = 10000

// minGCPercent is the lowest target analyze sets (reached at 100,000
// instances). At 150,000 instances it keeps the peak under 1 GiB (879 MiB
// mapped, against 1,083 MiB at 20) in about the same wall time, since each
// collection has less garbage to sweep; lower, collections dominate.
const minGCPercent = 10

// gcSoftLimit is the soft memory limit analyze sets for a large fleet when
// no limit is set: the collector keeps its default target and works harder
// only near the limit, instead of collecting after every few MiB. On
// 100,000 instances this took 88 s of CPU and peaked at 1,002 MiB, against
// 141 s and 1,536 MiB with GOGC=10 (a loaded 2-core machine).
const gcSoftLimit = 896 << 20

// liveBytesPerInstance is about how much live data an instance of a fleet
// file keeps during analysis (a 100,000-instance fleet: some 600 MB).
const liveBytesPerInstance = 6 << 10

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

// softLimitFits reports whether a fleet of n instances leaves the
// collector room under gcSoftLimit: its live data at most three quarters
// of it. A larger fleet would make the collector run without pause.
func softLimitFits(n int) bool {
	return n*liveBytesPerInstance <= gcSoftLimit/4*3
}

// limitGoverns reports whether a fleet of n instances is expected to keep
// live data of at least half of gcSoftLimit, so that the heap reaches the
// limit whatever the target.
func limitGoverns(n int) bool {
	return 2*n*liveBytesPerInstance >= gcSoftLimit
}

// limitTarget is the target for a fleet whose heap reaches the soft limit
// anyway (limitGoverns): a goal five times the live heap, so that the
// limit, not the heap's doubling while the plan and report grow, decides
// when the collector runs. On 100,000 instances: 6.60 → 6.16 s of CPU over
// seven alternating runs, at a peak of 929 MiB against 862; off entirely
// it was no faster and faulted more pages in.
const limitTarget = 400

// startSoftLimit sets the soft memory limit gcSoftLimit before the fleet
// is read, when neither GOGC nor a limit (GPUFINOPS_MEMORY_LIMIT,
// GOMEMLIMIT or a container's) is set: reading a large fleet file is the
// run's peak. It returns whether it set the limit and how to undo it.
func startSoftLimit(getenv func(string) string) (set bool, restore func()) {
	if getenv("GOGC") != "" || getenv("GPUFINOPS_MEMORY_LIMIT") != "" || getenv("GOMEMLIMIT") != "" || debug.SetMemoryLimit(-1) != math.MaxInt64 {
		return false, func() {}
	}
	prev := debug.SetMemoryLimit(gcSoftLimit)
	return true, func() { debug.SetMemoryLimit(prev) }
}

// pauseTarget turns the collector's proportional target off while a fleet
// file is read under the soft limit of startSoftLimit (limited), and
// returns the function that turns it back on. Nearly all that reading
// allocates is the fleet, which stays live: the collections the target
// would start as the heap grows (eight on 100,000 instances) find little
// to free. The limit still bounds the heap. A scan, whose SDK responses are
// mostly garbage, keeps the target.
func pauseTarget(limited, scan bool) (restore func()) {
	if !limited || scan {
		return func() {}
	}
	prev := debug.SetGCPercent(-1)
	return func() { debug.SetGCPercent(prev) }
}

// tuneGC tunes the collector for the fleet read unless GOGC sets it, and
// returns the function that restores what it changed. With the soft limit
// of startSoftLimit (limited) a fleet that fits under it keeps the limit
// and the default target, or limitTarget where the limit governs
// (limitGoverns); one too large for it, or a run with a limit of the
// user's, gets a lower target instead (and the limit is lifted, which
// unlimit does).
func tuneGC(getenv func(string) string, instances int, limited bool, unlimit func()) (restore func()) {
	p := gcPercent(instances)
	if getenv("GOGC") != "" || p == 100 {
		return func() {}
	}
	if limited && softLimitFits(instances) {
		if !limitGoverns(instances) {
			return func() {}
		}
		prev := debug.SetGCPercent(limitTarget)
		return func() { debug.SetGCPercent(prev) }
	}
	if limited {
		unlimit()
	}
	prev := debug.SetGCPercent(p)
	return func() { debug.SetGCPercent(prev) }
}
