package gcp

import (
	"context"
	"errors"
	"sync"
	"time"

	"cloud.google.com/go/monitoring/apiv3/v2/monitoringpb"
	notebooks "google.golang.org/api/notebooks/v2"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers"
)

// scanState is what the region scopes of one scan share: each project's
// metric reads and resource policies. PartialScopes starts a new one, so nothing read for one
// scan serves the next.
type scanState struct {
	mu      sync.Mutex
	metrics map[metricsKey]*projectMetrics
	// policies are each project's resource policy kinds (policies.go).
	policies map[string]*flight[policyKinds]
	// workbench are each project's Workbench instances (vertex.go).
	workbench map[string]*flight[map[string]*notebooks.Instance]
	// vertexSeries are each project's Vertex AI series by query and
	// window (vertex_metrics.go).
	vertexSeries map[string]*flight[map[string][]float64]
}

func newScan() *scanState {
	return &scanState{metrics: map[metricsKey]*projectMetrics{}, policies: map[string]*flight[policyKinds]{}}
}

// currentScan is the scan in progress (the last PartialScopes').
func (p *Provider) currentScan() *scanState {
	p.scanMu.Lock()
	defer p.scanMu.Unlock()
	return p.scan
}

// startScan drops what the previous scan shared, its projects' listings
// included: a region the previous scan did not read gets a new one.
func (p *Provider) startScan() {
	p.scanMu.Lock()
	p.scan = newScan()
	p.scanMu.Unlock()
	p.listMu.Lock()
	clear(p.lists)
	p.listMu.Unlock()
}

// flight is one call shared by concurrent callers: the first runs it, the
// others wait for its answer.
type flight[T any] struct {
	done chan struct{}
	val  T
	err  error
}

func newFlight[T any]() *flight[T] { return &flight[T]{done: make(chan struct{})} }

// wait returns the call's answer, or ctx's error if ctx ends first.
func (f *flight[T]) wait(ctx context.Context) (T, error) {
	select {
	case <-f.done:
		return f.val, f.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// endedElsewhere reports whether err is another caller's context ending
// while ctx goes on: the call is worth making again.
func endedElsewhere(ctx context.Context, err error) bool {
	return ctx.Err() == nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded))
}

// metricsKey names one project's read of one window.
type metricsKey struct {
	project    string
	start, end time.Time
	period     time.Duration
	aligner    monitoringpb.Aggregation_Aligner
}

// metricData is a read's values per numeric instance ID: GPU utilization,
// GPU memory, host CPU and host memory.
type metricData struct {
	util, mem, cpu, host map[string]grid
}

// projectMetrics is one ListTimeSeries read per metric over every region
// of a project, shared by the project's region scopes: each region takes
// its VMs' values once (and they are dropped from the read), and a region
// that asks again is read on its own. The DCGM receiver's utilization is
// read, once for the project, when some region's VM has no NVML data, and
// its memory when some such VM has DCGM utilization.
type projectMetrics struct {
	nvml *flight[metricData]

	mu       sync.Mutex
	taken    map[string]bool // regions served
	dcgmUtil *flight[map[string]grid]
	dcgmMem  *flight[map[string]grid]
}

// projectRead returns the scan's shared read of the scope's project, or
// nil when the scope's region was served by it already.
func (p *Provider) projectRead(ctx context.Context, scope providers.Scope, w fleet.TimeRange, period time.Duration, aligner monitoringpb.Aggregation_Aligner) (*projectMetrics, error) {
	s := p.currentScan()
	key := metricsKey{project: scope.Account, start: w.Start, end: w.End, period: period, aligner: aligner}
	for {
		s.mu.Lock()
		pm := s.metrics[key]
		mine := pm == nil
		if mine {
			pm = &projectMetrics{nvml: newFlight[metricData](), taken: map[string]bool{}}
			s.metrics[key] = pm
		}
		s.mu.Unlock()
		if mine {
			pm.nvml.val, pm.nvml.err = p.readMetrics(ctx, scope.Account, "", w, period, aligner)
			close(pm.nvml.done)
		}
		if _, err := pm.nvml.wait(ctx); err != nil {
			s.mu.Lock()
			if s.metrics[key] == pm {
				delete(s.metrics, key) // a failed read is not kept
			}
			s.mu.Unlock()
			if !mine && endedElsewhere(ctx, err) {
				continue
			}
			return nil, err
		}
		pm.mu.Lock()
		taken := pm.taken[scope.Region]
		pm.taken[scope.Region] = true
		pm.mu.Unlock()
		if taken {
			return nil, nil
		}
		return pm, nil
	}
}

// take hands over the values of the wanted VMs, each VM without NVML data
// read from the DCGM metrics, and drops them from the shared read.
func (pm *projectMetrics) take(ctx context.Context, p *Provider, project string, want map[string]int, w fleet.TimeRange, period time.Duration, aligner monitoringpb.Aggregation_Aligner) (metricData, error) {
	nvml := pm.nvml.val
	read := func(m metric) func(context.Context) (map[string]grid, error) {
		return func(ctx context.Context) (map[string]grid, error) {
			return p.readMetric(ctx, project, "", m, w, period, aligner)
		}
	}
	var du, dm map[string]grid
	if pm.needs(want, func(id string) bool { return len(nvml.util[id]) == 0 }) {
		var err error
		if du, err = pm.shared(ctx, &pm.dcgmUtil, read(dcgmUtil)); err != nil {
			return metricData{}, err
		}
		if pm.needs(want, func(id string) bool { return len(nvml.util[id]) == 0 && len(du[id]) > 0 }) {
			if dm, err = pm.shared(ctx, &pm.dcgmMem, read(dcgmMem)); err != nil {
				return metricData{}, err
			}
		}
	}
	out := metricData{util: map[string]grid{}, mem: map[string]grid{}, cpu: map[string]grid{}, host: map[string]grid{}}
	pm.mu.Lock()
	defer pm.mu.Unlock()
	for id := range want {
		u, m := nvml.util[id], nvml.mem[id]
		if len(u) == 0 && len(du[id]) > 0 {
			u, m = du[id], dm[id]
		}
		set(out.util, id, u)
		set(out.mem, id, m)
		set(out.cpu, id, nvml.cpu[id])
		set(out.host, id, nvml.host[id])
		for _, g := range []map[string]grid{nvml.util, nvml.mem, nvml.cpu, nvml.host, du, dm} {
			delete(g, id)
		}
	}
	return out, nil
}

// needs reports whether some wanted VM matches, reading the shared values
// under the lock.
func (pm *projectMetrics) needs(want map[string]int, match func(id string) bool) bool {
	pm.mu.Lock()
	defer pm.mu.Unlock()
	for id := range want {
		if match(id) {
			return true
		}
	}
	return false
}

// shared runs read once for the project in *slot, the other callers
// waiting for it; a failed read is not kept, so the next caller asks again.
func (pm *projectMetrics) shared(ctx context.Context, slot **flight[map[string]grid], read func(context.Context) (map[string]grid, error)) (map[string]grid, error) {
	for {
		pm.mu.Lock()
		f := *slot
		mine := f == nil
		if mine {
			f = newFlight[map[string]grid]()
			*slot = f
		}
		pm.mu.Unlock()
		if mine {
			f.val, f.err = read(ctx)
			close(f.done)
		}
		v, err := f.wait(ctx)
		if err == nil {
			return v, nil
		}
		pm.mu.Lock()
		if *slot == f {
			*slot = nil
		}
		pm.mu.Unlock()
		if mine || !endedElsewhere(ctx, err) {
			return nil, err
		}
	}
}

func set(m map[string]grid, id string, g grid) {
	if g != nil {
		m[id] = g
	}
}
