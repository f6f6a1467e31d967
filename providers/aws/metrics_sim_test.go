package aws

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers"
	"github.com/gpufinops/gpufinops/providers/aws/sim"
)

// The tests in this file read recent, per-minute utilization (idle-stop's
// window) through the real SDK from the simulator.

// simClock is a clock a test moves; the simulator and the adapter share it.
type simClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *simClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *simClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// recentNow is a Friday afternoon, in the middle of a minute.
var recentNow = time.Date(2026, 11, 27, 14, 15, 30, 0, time.UTC)

// lastMinutes is idle-stop's window: n minutes up to the last whole minute.
func lastMinutes(now time.Time, n int) fleet.TimeRange {
	end := now.Truncate(time.Minute)
	return fleet.TimeRange{Start: end.Add(-time.Duration(n) * time.Minute), End: end}
}

// readScope lists a region's instances and reads their utilization.
func readScope(t testing.TB, p *Provider, region string, window fleet.TimeRange) []fleet.Instance {
	t.Helper()
	scope := scopeOf(t, p, region)
	got, err := p.ListGPUInstances(context.Background(), scope)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.ReadUtilization(context.Background(), scope, got, window); err != nil {
		t.Fatal(err)
	}
	return got
}

func byID(instances []fleet.Instance) map[string]fleet.Instance {
	out := map[string]fleet.Instance{}
	for _, in := range instances {
		out[in.ID] = in
	}
	return out
}

func TestSimRecentMinutes(t *testing.T) {
	clock := &simClock{now: recentNow}
	srv, _ := scanSim(t, scanDemo(t), sim.Options{Now: clock.Now})
	p := scanProvider(t, srv.URL, "us-east-1")
	p.opts.Now = clock.Now

	// The hours' values: an hourly read of 08:00–15:00 (clock at 16:00).
	clock.Set(recentNow.Truncate(time.Hour).Add(2 * time.Hour))
	hourly := byID(readScope(t, p, "us-east-1", fleet.TimeRange{Start: recentNow.Truncate(time.Hour).Add(-6 * time.Hour), End: recentNow.Truncate(time.Hour).Add(time.Hour)}))
	clock.Set(recentNow)
	window := lastMinutes(recentNow, 30) // 13:45 … 14:14
	recent := readScope(t, p, "us-east-1", window)

	full := 0
	for _, in := range recent {
		if in.State == fleet.Stopped || in.Utilization == nil {
			continue
		}
		u := in.Utilization
		if !u.Window.Start.Equal(window.Start) || !u.Window.End.Equal(window.End) {
			t.Errorf("%s: window %v, want %v", in.ID, u.Window, window)
		}
		hours := map[time.Time]fleet.Sample{}
		for _, s := range hourly[in.ID].Utilization.Samples {
			hours[s.Time] = s
		}
		want := 0
		for _, h := range []time.Time{window.Start.Truncate(time.Hour), window.End.Truncate(time.Hour)} {
			if _, ok := hours[h]; ok {
				want += 15
			}
		}
		if len(u.Samples) != want {
			t.Errorf("%s: %d minute samples, want %d", in.ID, len(u.Samples), want)
			continue
		}
		for _, s := range u.Samples {
			h := hours[s.Time.Truncate(time.Hour)]
			if s.Time.Second() != 0 || s.Time.Before(window.Start) || !s.Time.Before(window.End) ||
				!slices.Equal(s.GPU, h.GPU) || !slices.Equal(s.GPUMemory, h.GPUMemory) || !sameReading(s.CPU, h.CPU) || (s.Memory == nil) != (h.Memory == nil) {
				t.Errorf("%s %s: %+v, the hour's sample is %+v", in.ID, s.Time.Format("15:04"), s, h)
				break
			}
		}
		if want == 30 {
			full++
			if h := in.Usage.HoursPerMonth; h == nil || *h != fleet.HoursPerMonth {
				t.Errorf("%s reported every minute: %v hours a month", in.ID, in.Usage)
			}
		}
	}
	if full < 5 {
		t.Errorf("only %d instances reported the whole half hour", full)
	}
}

func TestSimSetLoadChangesTheNextRead(t *testing.T) {
	clock := &simClock{now: recentNow}
	srv, s := scanSim(t, scanDemo(t), sim.Options{Now: clock.Now})
	p := scanProvider(t, srv.URL, "us-east-1")
	p.opts.Now = clock.Now
	busiest := func(in fleet.Instance) float64 {
		return in.Utilization.Summarize().GPU.Max
	}
	const id = "infer-g5-1"
	before := byID(readScope(t, p, "us-east-1", lastMinutes(clock.Now(), 30)))[id]
	if err := s.SetLoad(id, 85); err != nil {
		t.Fatal(err)
	}
	// Same clock: the last 30 minutes are history and stay.
	same := byID(readScope(t, p, "us-east-1", lastMinutes(clock.Now(), 30)))[id]
	if busiest(same) != busiest(before) {
		t.Errorf("SetLoad changed the past: max %v, was %v", busiest(same), busiest(before))
	}
	// Ten minutes on: the last ten minutes are busy, the 20 before as they were.
	clock.Set(recentNow.Add(10 * time.Minute))
	after := byID(readScope(t, p, "us-east-1", lastMinutes(clock.Now(), 30)))[id]
	samples := after.Utilization.Samples
	if len(samples) != 30 {
		t.Fatalf("%d samples", len(samples))
	}
	for i, smp := range samples {
		busy := !smp.Time.Before(recentNow.Truncate(time.Minute))
		if g, _ := smp.GPU.Max(); (g == 85) != busy {
			t.Errorf("%s: GPU %v (busy from %s)", smp.Time.Format("15:04"), smp.GPU, recentNow.Truncate(time.Minute).Format("15:04"))
		}
		if i > 0 && !smp.Time.Equal(samples[i-1].Time.Add(time.Minute)) {
			t.Errorf("samples %d and %d are not a minute apart", i-1, i)
		}
	}
	// Back to idle over HTTP (POST /_sim/load), read twenty minutes later.
	if err := postJSON(srv.URL+"/_sim/load", `{"id": "infer-g5-1", "gpu": 2}`); err != nil {
		t.Fatal(err)
	}
	clock.Set(recentNow.Add(30 * time.Minute))
	idle := byID(readScope(t, p, "us-east-1", lastMinutes(clock.Now(), 20)))[id]
	if st := idle.Utilization.Summarize().GPU; st.Max != 2 || st.Avg != 2 || len(idle.Utilization.Samples) != 20 {
		t.Errorf("after gpu 2: %+v over %d samples", st, len(idle.Utilization.Samples))
	}
}

// recentRead reads the last 30 minutes of a generated fleet through Collect
// (inventory and utilization, as idle-stop does) and returns the requests
// made, per service and operation.
func recentRead(t testing.TB, n int) (*providers.Result, *fleet.Fleet, map[string]map[string]int, time.Duration) {
	t.Helper()
	f := scanFleet(t, n)
	regions := []string{"eu-west-1", "us-east-1", "us-west-2"}
	srv, s := scanSim(t, f, sim.Options{})
	p, retries := retryCountedProvider(t, srv.URL, regions...)
	s.ResetCounts()
	start := time.Now()
	res, err := providers.Collect(context.Background(), scanOnly(p), providers.CollectOptions{Window: lastMinutes(simNow, 30)})
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Failures) > 0 {
		t.Fatalf("failures: %v", res.Failures)
	}
	return res, f, retries.calls(t, s.Counts()), took
}

// checkRecentRead checks a generated fleet's 30-minute read: 30 samples per
// running instance with GPU metrics, ⌈series/500⌉ GetMetricData calls per
// region and one ListMetrics page per 500 series of the agent's namespace.
func checkRecentRead(t testing.TB, res *providers.Result, f *fleet.Fleet, counts map[string]map[string]int) {
	t.Helper()
	want := awsOnly(f)
	for _, in := range res.Fleet.Instances {
		w := want[in.ID]
		switch {
		case in.State == fleet.Stopped || w.Utilization == nil:
			if in.Utilization != nil {
				t.Errorf("%s: utilization without GPU metrics or while stopped", in.ID)
			}
		case in.Utilization == nil || len(in.Utilization.Samples) != 30:
			t.Fatalf("%s: %v, want 30 samples a minute apart", in.ID, in.Utilization)
		}
	}
	wantGet, wantList := 0, 0
	for _, r := range []string{"eu-west-1", "us-east-1", "us-west-2"} {
		all := expectedSeries(f, r)
		wantGet += (all + maxQueriesPerCall - 1) / maxQueriesPerCall
		cpus := 0
		for _, in := range f.Instances {
			if in.Provider == fleet.AWS && in.Region == r && in.State != fleet.Stopped {
				cpus++
			}
		}
		// One listing of the agent's namespace; CPU needs none.
		wantList += max((all-cpus+listMetricsPageSize-1)/listMetricsPageSize, 1)
	}
	if got := counts["monitoring"]["GetMetricData"]; got != wantGet {
		t.Errorf("GetMetricData calls = %d, want ⌈series/500⌉ per region = %d", got, wantGet)
	}
	if got := counts["monitoring"]["ListMetrics"]; got != wantList {
		t.Errorf("ListMetrics calls = %d, want one per 500 agent series a region = %d", got, wantList)
	}
}

// listMetricsPageSize is what a ListMetrics page holds.
const listMetricsPageSize = 500

func formatCounts(counts map[string]map[string]int) string {
	var ops []string
	for svc, byOp := range counts {
		for op, n := range byOp {
			ops = append(ops, fmt.Sprintf("%-40s %6d", svc+"."+op, n))
		}
	}
	sort.Strings(ops)
	return strings.Join(ops, "\n")
}

func TestSimRecentRead1000(t *testing.T) {
	res, f, counts, took := recentRead(t, 1000)
	checkRecentRead(t, res, f, counts)
	t.Logf("1,000 instances, the last 30 minutes at 60 s in %s:\n%s", took.Round(time.Millisecond), formatCounts(counts))
}

// TestSimRecentRead10000 reads 10,000 instances' last 30 minutes and prints
// the requests per operation.
func TestSimRecentRead10000(t *testing.T) {
	if testing.Short() {
		t.Skip("10,000 instances")
	}
	res, f, counts, took := recentRead(t, 10000)
	checkRecentRead(t, res, f, counts)
	t.Logf("10,000 instances, the last 30 minutes at 60 s in %s:\n%s", took.Round(time.Millisecond), formatCounts(counts))
}

// BenchmarkRecentRead10000 is idle-stop's scan of 10,000 instances: the
// inventory and the last 30 minutes of utilization.
func BenchmarkRecentRead10000(b *testing.B) {
	f := scanFleet(b, 10000)
	regions := []string{"eu-west-1", "us-east-1", "us-west-2"}
	srv, s := scanSim(b, f, sim.Options{})
	p := scanProvider(b, srv.URL, regions...)
	s.ResetCounts()
	b.ResetTimer()
	for b.Loop() {
		res, err := providers.Collect(context.Background(), scanOnly(p), providers.CollectOptions{Window: lastMinutes(simNow, 30)})
		if err != nil || len(res.Failures) > 0 {
			b.Fatal(err, res.Failures)
		}
	}
	b.StopTimer()
	counts := s.Counts()
	for _, byOp := range counts {
		for op, n := range byOp {
			b.ReportMetric(float64(n)/float64(b.N), op+"/scan")
		}
	}
	b.Logf("requests for %d scans:\n%s", b.N, formatCounts(counts))
}

// postJSON posts a JSON body and fails on a status other than 200.
func postJSON(url, body string) error {
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("POST %s: %s: %s", url, resp.Status, msg)
	}
	return nil
}

// sameReading reports whether two optional readings are both absent or equal
// (a SageMaker endpoint publishes no host CPU beside its GPU figures).
func sameReading(a, b *float64) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}
