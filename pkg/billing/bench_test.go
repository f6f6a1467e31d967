package billing_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/internal/focusgen"
	"github.com/gpufinops/gpufinops/pkg/billing"
	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// benchMiB is the size of the generated export: GPUFINOPS_BENCH_FOCUS_MB,
// 64 unless set (2048 for the 2 GB figure in docs/billing.md).
func benchMiB(b *testing.B) int {
	v := os.Getenv("GPUFINOPS_BENCH_FOCUS_MB")
	if v == "" {
		return 64
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		b.Fatalf("GPUFINOPS_BENCH_FOCUS_MB=%q is not a positive number of MiB", v)
	}
	return n
}

// peakRSS is the process's peak resident set (VmHWM), in MiB; resetPeak
// starts it again from the current size (Linux; elsewhere both do nothing).
func peakRSS() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}

func resetPeak() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// BenchmarkAggregate aggregates a generated FOCUS CSV export of 2,000 GPU
// instances with four storage rows per instance-hour, and reports its
// size, throughput and the peak RSS of the read: memory is bounded by the
// resources, not the rows.
func BenchmarkAggregate(b *testing.B) {
	mib := benchMiB(b)
	instances := make([]fleet.Instance, 2000)
	for i := range instances {
		instances[i] = fleet.Instance{ID: fmt.Sprintf("i-%06d", i), Provider: fleet.AWS, Account: strconv.Itoa(100000 + i%40),
			Region: "us-east-1", InstanceType: "p4d.24xlarge", GPU: fleet.GPU{Count: 8}, Lifecycle: fleet.OnDemand}
	}
	// One instance-hour with its storage rows is about 2 KiB.
	hours := max(1, mib*1024/(2*len(instances)))
	path := filepath.Join(b.TempDir(), "focus.csv")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	tot, err := focusgen.WriteCSV(f, instances, focusgen.Options{
		Start: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), Hours: hours,
		List:     func(*fleet.Instance) (decimal.Decimal, bool) { return decimal.RequireFromString("21.957642"), true },
		Discount: decimal.RequireFromString("0.1"), Committed: decimal.RequireFromString("0.3"),
		CommitmentDiscount: decimal.RequireFromString("0.25"), UnusedCommitment: decimal.RequireFromString("2"), Noise: 4,
	})
	f.Close()
	if err != nil {
		b.Fatal(err)
	}
	st, _ := os.Stat(path)
	b.Logf("generated %.0f MiB, %d rows, in %s", float64(st.Size())/(1<<20), tot.Rows, time.Since(start).Round(time.Millisecond))
	b.SetBytes(st.Size())
	runtime.GC()
	resetPeak()
	base := peakRSS()
	b.ResetTimer()
	for range b.N {
		s, err := billing.Read(context.Background(), path, billing.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if !s.EffectiveCost.Equal(tot.GPUEffective) || len(s.Resources) != len(instances) {
			b.Fatalf("effective %s, want %s; %d resources", s.EffectiveCost, tot.GPUEffective, len(s.Resources))
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(tot.Rows), "rows")
	b.ReportMetric(peakRSS(), "peak-RSS-MiB")
	b.ReportMetric(peakRSS()-base, "RSS-growth-MiB")
}
