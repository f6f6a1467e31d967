package root

import (
	"context"
	"errors"
	"math"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pricing"
)

// TestPanicIsInternalError: a panic anywhere under a command (here the
// catalog, an index out of range, a nil map write, an allocation too large, a
// custom value) exits 1
// with one line on stderr, no goroutine dump.
func TestPanicIsInternalError(t *testing.T) {
	for _, tc := range []struct {
		name string
		boom func()
		want string
	}{
		{"index out of range", func() {
			var a [157]uint64
			i := 157
			_ = a[i%len(a)+len(a)*0+i-i+func() int { return i - 157 + 157 }()-i+i]
		}, "index out of range [157] with length 157"},
		{"nil map", func() { var m map[string]int; m["x"] = 1 }, "assignment to entry in nil map"},
		// An allocation the runtime refuses (a size from a huge input)
		// panics rather than dying: one line, exit 1.
		{"allocation too large", func() { n := int(^uint(0) >> 1); _ = make([]uint64, n) }, "makeslice: len out of range"},
		{"error value", func() { panic(errors.New("engine: two\nlines")) }, "engine: two lines"},
		{"string", func() { panic("boom") }, "boom"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, _, errOut := testFactory()
			f.Catalog = func() (pricing.Catalog, error) { tc.boom(); return nil, nil }
			code := Run(context.Background(), f, []string{"analyze", "--demo"})
			if code != cmdutil.ExitError {
				t.Errorf("exit code %d, want 1", code)
			}
			got := errOut.String()
			if strings.Count(got, "\n") != 1 || !strings.HasPrefix(got, "gpufinops: internal error: ") || !strings.Contains(got, tc.want) {
				t.Errorf("stderr %q: want one line, internal error, %q", got, tc.want)
			}
			if strings.Contains(got, "goroutine") {
				t.Errorf("stack on stderr without %s: %s", DebugEnv, got)
			}
		})
	}
}

func TestInternalErrorDebugStack(t *testing.T) {
	var b strings.Builder
	env := map[string]string{DebugEnv: "1"}
	code := internalError(&b, func(k string) string { return env[k] }, "boom", debug.Stack())
	if code != cmdutil.ExitError || !strings.Contains(b.String(), "goroutine") || !strings.HasPrefix(b.String(), "gpufinops: internal error: boom;") {
		t.Errorf("code %d, output %q", code, b.String())
	}
}

func TestParseMemoryLimit(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
	}{
		{"2GiB", 2 << 30}, {"512MiB", 512 << 20}, {"1.5GiB", 3 << 29}, {"1TiB", 1 << 40},
		{"1073741824", 1 << 30}, {"1073741824B", 1 << 30}, {"65536KiB", 64 << 20}, {"off", math.MaxInt64}, {"OFF", math.MaxInt64},
	} {
		if got, err := parseMemoryLimit(tc.in); err != nil || got != tc.want {
			t.Errorf("parseMemoryLimit(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "2GB", "two GiB", "-1GiB", "NaN", "NaNGiB", "InfGiB", "+Inf", "1MiB", "0", "1e300", "2 G", "GiB"} {
		if _, err := parseMemoryLimit(bad); err == nil {
			t.Errorf("parseMemoryLimit(%q): no error", bad)
		}
	}
}

func TestApplyMemoryLimit(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	noCgroup := func() (int64, bool) { return 0, false }
	cgroup := func() (int64, bool) { return 4 << 30, true }
	for _, tc := range []struct {
		name   string
		env    map[string]string
		cgroup func() (int64, bool)
		want   int64 // -1: unchanged
	}{
		{"flag-like variable wins", map[string]string{MemoryLimitEnv: "1GiB", "GOMEMLIMIT": "3GiB"}, cgroup, 1 << 30},
		{"GOMEMLIMIT is left to the runtime", map[string]string{"GOMEMLIMIT": "3GiB"}, cgroup, -1},
		{"container limit", nil, cgroup, int64(4 << 30 * 9 / 10)},
		{"nothing set", nil, noCgroup, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const sentinel = 77 << 30
			debug.SetMemoryLimit(sentinel)
			if err := applyMemoryLimit(func(k string) string { return tc.env[k] }, tc.cgroup); err != nil {
				t.Fatal(err)
			}
			got, want := debug.SetMemoryLimit(-1), tc.want
			if want == -1 {
				want = sentinel
			}
			if got != want {
				t.Errorf("limit %d, want %d", got, want)
			}
		})
	}
	err := applyMemoryLimit(func(k string) string { return map[string]string{MemoryLimitEnv: "lots"}[k] }, noCgroup)
	if cmdutil.ExitCodeFor(err) != cmdutil.ExitUsage || !strings.Contains(err.Error(), MemoryLimitEnv) {
		t.Errorf("bad value: %v (exit %d), want a usage error naming %s", err, cmdutil.ExitCodeFor(err), MemoryLimitEnv)
	}
}
