package e2e

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// bigFleet is n idle-looking g4dn.xlarge machines in us-east-1.
func bigFleet(n int) *fleet.Fleet {
	f := mixedFleet()
	proto := f.Instances[0]
	f.Instances = f.Instances[:0]
	for i := range n {
		in := proto
		in.ID = fmt.Sprintf("i-%05d", i)
		in.Tags = map[string]string{"Team": "ml", "AutoShutdown": "true"}
		f.Instances = append(f.Instances, in)
	}
	return f
}

// TestIdleStopBatchesMetricCalls: a dry run over many machines reads their
// GPU metrics in GetMetricData calls of up to 500 series, not one per machine.
func TestIdleStopBatchesMetricCalls(t *testing.T) {
	const n = 2000
	e := startSim(t, bigFleet(n), nil)
	opts, out, _ := e.options(t, false, "", nil)
	max := n + 1
	opts.MaxStops = &max
	if err := idleStopRunForTest(opts); err != nil {
		t.Fatal(err)
	}
	if r := decode(t, out.String()); r.Summary.Considered != n || r.Summary.Stop != n {
		t.Fatalf("summary %+v", r.Summary)
	}
	counts := e.sim.Counts()["monitoring"]
	// Series per machine: 3 GPU metrics (one GPU) + host memory + CPU = 5.
	want := int(math.Ceil(float64(n*5) / 500))
	if got := counts["GetMetricData"]; got != want {
		t.Errorf("GetMetricData calls = %d, want ⌈%d series / 500⌉ = %d (counts %v)", got, n*5, want, counts)
	}
}

// BenchmarkIdleStopDryRun10000 runs a dry run over 10,000 simulated machines
// and reports the simulator's request counts per operation.
func BenchmarkIdleStopDryRun10000(b *testing.B) {
	const n = 10000
	e := startSim(b, bigFleet(n), nil)
	for b.Loop() {
		e.sim.ResetCounts()
		opts, _, _ := e.options(b, false, "", nil)
		max := n + 1
		opts.MaxStops = &max
		start := time.Now()
		if err := idleStopRunForTest(opts); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(time.Since(start).Milliseconds()), "ms/run")
	}
	counts := e.sim.Counts()
	var rows []string
	total := 0
	for svc, ops := range counts {
		for op, c := range ops {
			rows = append(rows, fmt.Sprintf("  %-13s %-26s %6d", svc, op, c))
			total += c
		}
	}
	sort.Strings(rows)
	b.Logf("requests for one dry run over %d machines:\n%s\n  %-40s %6d", n, strings.Join(rows, "\n"), "total", total)
	b.ReportMetric(float64(counts["monitoring"]["GetMetricData"]), "GetMetricData/run")
}
