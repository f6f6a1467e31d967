package root

import (
	"fmt"
	"io"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/gpufinops/gpufinops/pkg/cmdutil"
)

// MemoryLimitEnv sets the Go runtime's soft memory limit (debug.SetMemoryLimit),
// in GOMEMLIMIT's syntax (e.g. 2GiB, 512MiB) or "off".
const MemoryLimitEnv = "GPUFINOPS_MEMORY_LIMIT"

// DebugEnv, when set to anything, makes an internal error print its stack.
const DebugEnv = "GPUFINOPS_DEBUG"

// cgroupShare is the share of a container's memory limit the soft limit is
// set to when nothing else sets it, leaving room for what is not Go heap.
const cgroupShare = 0.9

// applyMemoryLimit sets the soft memory limit, highest first, from
// GPUFINOPS_MEMORY_LIMIT, else GOMEMLIMIT (the runtime has already read it),
// else 90% of the cgroup (container) memory limit when there is one. Near the
// limit the garbage collector works harder instead of growing the heap.
func applyMemoryLimit(getenv func(string) string, cgroupLimit func() (int64, bool)) error {
	if v := strings.TrimSpace(getenv(MemoryLimitEnv)); v != "" {
		n, err := parseMemoryLimit(v)
		if err != nil {
			return cmdutil.FlagErrorf("%s=%q: %v", MemoryLimitEnv, v, err)
		}
		debug.SetMemoryLimit(n)
		return nil
	}
	if getenv("GOMEMLIMIT") != "" {
		return nil
	}
	if n, ok := cgroupLimit(); ok {
		debug.SetMemoryLimit(int64(float64(n) * cgroupShare))
	}
	return nil
}

// parseMemoryLimit reads a byte count with an optional B, KiB, MiB, GiB or
// TiB suffix, or "off" (no limit).
func parseMemoryLimit(s string) (int64, error) {
	if strings.EqualFold(s, "off") {
		return math.MaxInt64, nil
	}
	units := []struct {
		suffix string
		scale  float64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}}
	num, scale := s, 1.0
	for _, u := range units {
		if strings.HasSuffix(s, u.suffix) {
			num, scale = strings.TrimSuffix(s, u.suffix), u.scale
			break
		}
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	bytes := v * scale
	if err != nil || math.IsNaN(bytes) || math.IsInf(bytes, 0) || bytes < 64<<20 || bytes > 1<<50 {
		return 0, fmt.Errorf("want a size from 64MiB to 1024TiB such as 2GiB or 512MiB, or off")
	}
	return int64(bytes), nil
}

// cgroupMemoryLimit reads the memory limit of the process's cgroup (v2, then
// v1); ok is false when there is none.
func cgroupMemoryLimit() (int64, bool) {
	for _, p := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil || n <= 0 || n >= 1<<60 { // "max", or v1's "unlimited" (a huge number)
			return 0, false
		}
		return n, true
	}
	return 0, false
}

// internalError reports a recovered panic: one line saying it is a bug, not
// bad input, and the stack only when GPUFINOPS_DEBUG is set. It returns exit
// code 1.
func internalError(w io.Writer, getenv func(string) string, r any, stack []byte) cmdutil.ExitCode {
	msg := strings.Join(strings.Fields(fmt.Sprint(r)), " ")
	fmt.Fprintf(w, "gpufinops: internal error: %s; this is a bug in gpufinops, not a problem with the input: please report it (set %s=1 to print the stack)\n", msg, DebugEnv)
	if getenv(DebugEnv) != "" {
		w.Write(stack)
	}
	return cmdutil.ExitError
}
