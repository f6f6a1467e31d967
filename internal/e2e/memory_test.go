package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/internal/fleetgen"
	"github.com/gpufinops/gpufinops/pkg/cmd/factory"
	"github.com/gpufinops/gpufinops/pkg/cmd/root"
	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/iostreams"
)

// bigFleetOptions is the realistic large fleet: mixed providers, regions,
// types, lifecycles, workloads and tags; summary utilization for most
// machines and a day of hourly samples for one in a hundred.
func bigFleetOptions(n int) fleetgen.Options {
	return fleetgen.Options{Instances: n, Seed: 150, SampleShare: 0.01, MaxSamples: 24}
}

// writeBigFleet writes a generated fleet of n instances as a JSON file and
// returns its path and size.
func writeBigFleet(tb testing.TB, n int) (string, int64) {
	tb.Helper()
	f := fleetgen.Generate(bigFleetOptions(n))
	path := filepath.Join(tb.TempDir(), fmt.Sprintf("fleet-%d.json", n))
	w, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	if err := json.NewEncoder(w).Encode(f); err != nil {
		tb.Fatal(err)
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		tb.Fatal(err)
	}
	return path, st.Size()
}

type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// analyzeFile runs `gpufinops analyze --fleet path -o format` in-process and
// returns the bytes it wrote on stdout.
func analyzeFile(tb testing.TB, path, format string) int64 {
	tb.Helper()
	return analyzeArgs(tb, []string{"analyze", "--fleet", path, "-o", format})
}

// analyzeArgs runs gpufinops with args in-process, fails unless it exits 0,
// and returns the bytes it wrote on stdout.
func analyzeArgs(tb testing.TB, args []string) int64 {
	tb.Helper()
	ios, _, _, stderr := iostreams.Test()
	out := &countingWriter{}
	ios.Out = out
	f := factory.New()
	f.IOStreams = ios
	f.Fleet = factory.FileFleet(ios)
	f.Now = func() time.Time { return time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC) }
	if code := root.Run(context.Background(), f, args); code != cmdutil.ExitOK {
		tb.Fatalf("%v exited %d: %s", args, code, stderr)
	}
	return out.n
}

// peakSampler records the largest heap and total Go memory seen while it runs.
type peakSampler struct {
	stop        chan struct{}
	wg          sync.WaitGroup
	heap, total uint64
}

func startPeakSampler() *peakSampler {
	p := &peakSampler{stop: make(chan struct{})}
	samples := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/total:bytes"}}
	read := func() {
		metrics.Read(samples)
		p.heap = max(p.heap, samples[0].Value.Uint64())
		p.total = max(p.total, samples[1].Value.Uint64())
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				read()
				return
			case <-t.C:
				read()
			}
		}
	}()
	return p
}

func (p *peakSampler) finish() { close(p.stop); p.wg.Wait() }

// memoryFleetSize is the fleet of the memory budget: 150,000 instances.
const memoryFleetSize = 150000

// memoryBudget is what analysing memoryFleetSize instances may take.
const memoryBudget = 1 << 30

// BenchmarkAnalyze150k runs `analyze --fleet FILE -o json` on a generated
// 150,000-instance fleet file and reports bytes/op, the peak heap and the
// peak of all memory the Go runtime holds (about the process's RSS).
func BenchmarkAnalyze150k(b *testing.B) {
	path, size := writeBigFleet(b, memoryFleetSize)
	b.ReportMetric(float64(size)/(1<<20), "file-MiB")
	runtime.GC()
	b.ResetTimer()
	for b.Loop() {
		p := startPeakSampler()
		analyzeFile(b, path, "json")
		p.finish()
		b.ReportMetric(float64(p.heap)/(1<<20), "peak-heap-MiB")
		b.ReportMetric(float64(p.total)/(1<<20), "peak-total-MiB")
	}
}

// TestAnalyze150kMemory asserts the memory budget: analysing a 150,000-instance
// fleet file keeps all memory the Go runtime holds under 1 GiB. It takes
// minutes, so it runs only with GPUFINOPS_MEMORY_TEST=1 (and never under
// -short).
func TestAnalyze150kMemory(t *testing.T) {
	if testing.Short() || os.Getenv("GPUFINOPS_MEMORY_TEST") == "" {
		t.Skip("set GPUFINOPS_MEMORY_TEST=1 to analyse a 150,000-instance fleet (minutes)")
	}
	path, size := writeBigFleet(t, memoryFleetSize)
	runtime.GC()
	p := startPeakSampler()
	n := analyzeFile(t, path, "json")
	p.finish()
	t.Logf("fleet file %d MiB, report %d MiB; peak heap %d MiB, peak Go memory %d MiB", size>>20, n>>20, p.heap>>20, p.total>>20)
	if p.total > memoryBudget {
		t.Errorf("peak Go memory %d MiB, over the budget of %d MiB", p.total>>20, memoryBudget>>20)
	}
}
