package gcp

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers"
	"github.com/gpufinops/gpufinops/providers/gcp/sim"
)

// manyVMs is a fleet of n running a2-highgpu-1g VMs with GPU metrics, spread
// over the projects, all in us-central1.
func manyVMs(n int, projects ...string) *fleet.Fleet {
	f := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind}
	w := fleet.TimeRange{Start: simNow.Add(-7 * 24 * time.Hour).Truncate(time.Hour), End: simNow.Truncate(time.Hour)}
	for i := range n {
		f.Instances = append(f.Instances, fleet.Instance{
			ID: fmt.Sprintf("vm-%04d", i), Provider: fleet.GCP, Account: projects[i%len(projects)], Region: "us-central1", Zone: "us-central1-a",
			InstanceType: "a2-highgpu-1g", GPU: fleet.GPU{Model: "A100", Count: 1, MemoryGiB: 40}, Lifecycle: fleet.OnDemand, State: fleet.Running,
			Utilization: &fleet.Utilization{Window: &w, GPU: &fleet.Stats{Avg: 40, P95: 60, Max: 70}, GPUMemory: &fleet.Stats{Avg: 30, P95: 40, Max: 50}},
		})
	}
	return f
}

// TestMonitoringRequestsGrowWithProjectsAndMetrics: a scan asks Cloud
// Monitoring one request per project (and region) and metric, however many
// VMs there are.
func TestMonitoringRequestsGrowWithProjectsAndMetrics(t *testing.T) {
	week := fleet.TimeRange{Start: simNow.Add(-7 * 24 * time.Hour).Truncate(time.Hour), End: simNow.Truncate(time.Hour)}
	projects := []string{"proj-alpha", "proj-bravo"}
	// GPU utilization, GPU memory, host CPU, host memory.
	const metrics = 4
	for _, n := range []int{2, 40, 400, 1100} {
		f := manyVMs(n, projects...)
		s := sim.New(f, simOptions(t, f))
		p := newProvider(t, startSim(t, s), []string{"us-central1"}, projects...)
		res, err := providers.Collect(context.Background(), p, providers.CollectOptions{Window: week, SkipPrices: true})
		if err != nil || len(res.Failures) > 0 {
			t.Fatal(err, res.Failures)
		}
		read := 0
		for _, in := range res.Fleet.Instances {
			if in.Utilization != nil {
				read++
			}
		}
		if read != n {
			t.Fatalf("%d VMs: utilization of %d read", n, read)
		}
		c := s.Counts()
		// Past 100,000 points a metric takes a second page (550 VMs ×
		// 2 memory states × 168 hours): pages grow with points, not calls.
		if got, want := c["monitoring"]["ListTimeSeries"], len(projects)*metrics; n <= 400 && got != want || n > 400 && got > 2*want {
			t.Errorf("%d VMs in %d projects: %d ListTimeSeries requests, want %d (projects × metrics)", n, len(projects), got, want)
		}
		if got, want := c["compute"]["instances.aggregatedList"], len(projects)*((n/len(projects)+499)/500); got != want {
			t.Errorf("%d VMs: %d aggregatedList pages, want %d", n, got, want)
		}
		t.Logf("%d VMs: %v", n, c)
	}
}

// TestThrottledMonitoringIsRetried: with 40 % of requests throttled
// (Compute's 403 rateLimitExceeded, Monitoring's RESOURCE_EXHAUSTED, the
// Billing Catalog's 429) a full scan still reads every VM, its utilization
// and live prices.
func TestThrottledMonitoringIsRetried(t *testing.T) {
	f := testFleet(t)
	opts := simOptions(t, f)
	opts.ThrottleRate, opts.Seed = 0.4, 7
	s := sim.New(f, opts)
	p := newProvider(t, startSim(t, s), []string{"europe-west4", "us-central1"})
	week := fleet.TimeRange{Start: simNow.Add(-7 * 24 * time.Hour).Truncate(time.Hour), End: simNow.Truncate(time.Hour)}
	res, err := providers.Collect(context.Background(), p, providers.CollectOptions{Window: week})
	if err != nil || len(res.Failures) > 0 {
		t.Fatal(err, res.Failures)
	}
	read := 0
	for _, in := range res.Fleet.Instances {
		if in.Utilization != nil {
			read++
		}
	}
	if len(res.Fleet.Instances) != len(f.Instances) || read < 4 || len(res.Prices) == 0 {
		t.Errorf("%d of %d VMs, %d with utilization, %d prices; notes %q", len(res.Fleet.Instances), len(f.Instances), read, len(res.Prices), res.Notes)
	}
}

// TestDCGMMetrics: a VM whose agent runs the DCGM receiver is read from the
// DCGM metrics, asked for only because some VM has no NVML data; its
// ratio is read as percent.
func TestDCGMMetrics(t *testing.T) {
	f := manyVMs(4, "proj-alpha")
	opts := simOptions(t, f)
	opts.DCGM = []string{"vm-0002"}
	s := sim.New(f, opts)
	p := newProvider(t, startSim(t, s), []string{"us-central1"}, "proj-alpha")
	week := fleet.TimeRange{Start: simNow.Add(-7 * 24 * time.Hour).Truncate(time.Hour), End: simNow.Truncate(time.Hour)}
	res, err := providers.Collect(context.Background(), p, providers.CollectOptions{Window: week, SkipPrices: true})
	if err != nil || len(res.Failures) > 0 {
		t.Fatal(err, res.Failures)
	}
	for _, in := range res.Fleet.Instances {
		if in.Utilization == nil || len(in.Utilization.Samples) == 0 {
			t.Fatalf("%s: no utilization; notes %q", in.ID, res.Notes)
		}
		var sum float64
		var n int
		for _, smp := range in.Utilization.Samples {
			for _, v := range smp.GPU {
				sum += v
				n++
			}
		}
		if avg := sum / float64(n); avg < 36 || avg > 44 {
			t.Errorf("%s: mean GPU utilization %.1f, the fleet says 40", in.ID, avg)
		}
	}
	// NVML utilization and memory, DCGM's two, host CPU and memory.
	if got := s.Counts()["monitoring"]["ListTimeSeries"]; got != 6 {
		t.Errorf("%d ListTimeSeries requests, want 6", got)
	}
}
