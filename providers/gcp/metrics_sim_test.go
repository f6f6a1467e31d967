package gcp

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
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

// spreadVMs is manyVMs over three regions: VM i in regions[i%3], so
// that every project has VMs in each region.
func spreadVMs(n int, projects ...string) *fleet.Fleet {
	f := manyVMs(n, projects...)
	regions := []string{"europe-west4", "us-central1", "us-east4"}
	for i := range f.Instances {
		r := regions[(i/len(projects))%len(regions)]
		f.Instances[i].Region, f.Instances[i].Zone = r, r+"-b"
	}
	return f
}

// scanWeek scans f's simulator for a week, with the regions given or
// every region of each project.
func scanWeek(t *testing.T, f *fleet.Fleet, opts sim.Options, regions []string, projects ...string) (*providers.Result, map[string]map[string]int) {
	t.Helper()
	s := sim.New(f, opts)
	p := newProvider(t, startSim(t, s), regions, projects...)
	week := fleet.TimeRange{Start: simNow.Add(-7 * 24 * time.Hour).Truncate(time.Hour), End: simNow.Truncate(time.Hour)}
	res, err := providers.Collect(context.Background(), p, providers.CollectOptions{Window: week, SkipPrices: true})
	if err != nil {
		t.Fatal(err)
	}
	return res, s.Counts()
}

// TestProjectReadIsSharedByRegions: without --region a project's regions
// share one read per metric, however many regions there are; the
// instances, utilization and notes are those of reading each region on its
// own. The DCGM utilization is read once a project when some VM has no NVML
// data, its memory only where some VM has DCGM data.
func TestProjectReadIsSharedByRegions(t *testing.T) {
	projects := []string{"proj-alpha", "proj-bravo"}
	f := spreadVMs(24, projects...)
	f.Instances[5].Utilization = nil // proj-bravo: no agent
	f.Instances[7].State = fleet.Stopped
	opts := simOptions(t, f)
	opts.DCGM = []string{f.Instances[2].ID} // proj-alpha
	shared, c := scanWeek(t, f, opts, nil, projects...)
	if len(shared.Failures) > 0 {
		t.Fatal(shared.Failures)
	}
	// Per project the four metrics and DCGM utilization; DCGM memory for
	// proj-alpha alone.
	if got, want := c["monitoring"]["ListTimeSeries"], len(projects)*5+1; got != want {
		t.Errorf("%d ListTimeSeries requests, want %d", got, want)
	}
	alone, c := scanWeek(t, f, opts, []string{"europe-west4", "us-central1", "us-east4"}, projects...)
	// Per region the four metrics; DCGM utilization in the two regions of
	// the VMs without NVML data, DCGM memory in the DCGM VM's.
	if got, want := c["monitoring"]["ListTimeSeries"], len(projects)*3*4+2+1; got != want {
		t.Errorf("read region by region: %d ListTimeSeries requests, want %d", got, want)
	}
	if len(shared.Fleet.Instances) != len(f.Instances) {
		t.Fatalf("listed %d of %d VMs", len(shared.Fleet.Instances), len(f.Instances))
	}
	if !reflect.DeepEqual(shared.Fleet.Instances, alone.Fleet.Instances) {
		t.Error("the shared read gives other instances than the reads per region")
	}
	if !reflect.DeepEqual(shared.Notes, alone.Notes) || len(shared.Notes) != 1 {
		t.Errorf("notes %q, per region %q", shared.Notes, alone.Notes)
	}
	with := 0
	for _, in := range shared.Fleet.Instances {
		if in.Utilization != nil && len(in.Utilization.Samples) > 0 {
			with++
		}
	}
	if with != len(f.Instances)-2 {
		t.Errorf("%d VMs with utilization, want %d (all but the stopped one and the one without an agent)", with, len(f.Instances)-2)
	}
}

// TestProjectReadFailureFailsItsRegions: a project whose read fails fails
// the metrics of each of its regions, naming their VMs, which are kept;
// the other project is read.
func TestProjectReadFailureFailsItsRegions(t *testing.T) {
	projects := []string{"proj-alpha", "proj-bravo"}
	f := spreadVMs(12, projects...)
	opts := simOptions(t, f)
	opts.Fault = func(service, op, scope string) (int, string) {
		if service == "monitoring" && scope == "proj-bravo" {
			return 403, "forbidden"
		}
		return 0, ""
	}
	res, _ := scanWeek(t, f, opts, nil, projects...)
	if len(res.Fleet.Instances) != len(f.Instances) {
		t.Fatalf("listed %d of %d VMs", len(res.Fleet.Instances), len(f.Instances))
	}
	failed := map[string][]string{}
	for _, e := range res.Failures {
		if !e.Metrics || e.Scope.Account != "proj-bravo" || !errors.Is(e, providers.ErrPermission) {
			t.Errorf("failure %v (metrics %v)", e, e.Metrics)
		}
		failed[e.Scope.Region] = e.Instances
	}
	want := map[string][]string{}
	for _, in := range f.Instances {
		if in.Account == "proj-bravo" {
			want[in.Region] = append(want[in.Region], in.ID)
		}
	}
	if !reflect.DeepEqual(failed, want) {
		t.Errorf("failed metrics %v, want every proj-bravo region with its VMs %v", failed, want)
	}
	for _, in := range res.Fleet.Instances {
		if got := in.Utilization != nil; got != (in.Account == "proj-alpha") {
			t.Errorf("%s of %s: utilization read %v", in.ID, in.Account, got)
		}
	}
}

// TestRegionReadAgainIsFresh: a region that asks for the same window a
// second time in a scan is read on its own (the shared read handed its
// VMs over the first time), with the same values.
func TestRegionReadAgainIsFresh(t *testing.T) {
	f := spreadVMs(6, "proj-alpha")
	s := sim.New(f, simOptions(t, f))
	p := newProvider(t, startSim(t, s), nil, "proj-alpha")
	ctx := context.Background()
	if _, err := p.Scopes(ctx); err != nil {
		t.Fatal(err)
	}
	scope := providers.Scope{Provider: fleet.GCP, Account: "proj-alpha", Region: "us-central1"}
	listed, err := p.ListGPUInstances(ctx, scope)
	if err != nil || len(listed) != 2 {
		t.Fatal(listed, err)
	}
	week := fleet.TimeRange{Start: simNow.Add(-7 * 24 * time.Hour).Truncate(time.Hour), End: simNow.Truncate(time.Hour)}
	first := slices.Clone(listed)
	if _, err := p.ReadUtilization(ctx, scope, first, week); err != nil {
		t.Fatal(err)
	}
	again := slices.Clone(listed)
	if _, err := p.ReadUtilization(ctx, scope, again, week); err != nil {
		t.Fatal(err)
	}
	if first[0].Utilization == nil || !reflect.DeepEqual(first, again) {
		t.Errorf("read again: %+v, first %+v", again, first)
	}
	if got := s.Counts()["monitoring"]["ListTimeSeries"]; got != 8 {
		t.Errorf("%d ListTimeSeries requests, want 8 (the project's four, then the region's four)", got)
	}
}
