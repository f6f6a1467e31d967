package gcp

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"sync"
	"time"

	"cloud.google.com/go/monitoring/apiv3/v2/monitoringpb"
	gax "github.com/googleapis/gax-go/v2"
	"google.golang.org/api/iterator"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers"
)

// The metrics read: the Ops Agent's NVML receiver, its DCGM receiver (read
// only for VMs the first has nothing of) , Compute Engine's host CPU and the agent's host memory.
const (
	MetricGPUUtil    = "agent.googleapis.com/gpu/utilization"               // percent
	MetricGPUMemory  = "agent.googleapis.com/gpu/memory/bytes_used"         // label memory_state used|free
	MetricDCGMUtil   = "workload.googleapis.com/gpu.dcgm.utilization"       // ratio 0–1
	MetricDCGMMemory = "workload.googleapis.com/gpu.dcgm.memory.bytes_used" // label state used|free
	MetricCPU        = "compute.googleapis.com/instance/cpu/utilization"    // ratio 0–1
	MetricMemory     = "agent.googleapis.com/memory/percent_used"           // label state used|free|…
	resourceType     = "gce_instance"
	labelInstanceID  = "resource.label.instance_id"
	labelGPUNumber   = "metric.label.gpu_number"
)

// metric is one ListTimeSeries request: a metric, how its values become a
// percentage, and the labels it is grouped by.
type metric struct {
	name string
	// scale turns a value into percent.
	scale float64
	// stateLabel, for memory, is the label saying used or free.
	stateLabel string
	perGPU     bool
	// only keeps the series whose label (key) has the value.
	only [2]string
}

var (
	nvmlUtil = metric{name: MetricGPUUtil, scale: 1, perGPU: true}
	nvmlMem  = metric{name: MetricGPUMemory, scale: 1, perGPU: true, stateLabel: "memory_state"}
	dcgmUtil = metric{name: MetricDCGMUtil, scale: 100, perGPU: true}
	dcgmMem  = metric{name: MetricDCGMMemory, scale: 1, perGPU: true, stateLabel: "state"}
	hostCPU  = metric{name: MetricCPU, scale: 100}
	hostMem  = metric{name: MetricMemory, scale: 1, only: [2]string{"state", "used"}}
)

// filter is the metric's filter over a project's VMs, in one region when
// region is set.
func (m metric) filter(region string) string {
	f := fmt.Sprintf(`metric.type = %q AND resource.type = %q`, m.name, resourceType)
	if region != "" {
		f += fmt.Sprintf(` AND resource.label.zone = starts_with(%q)`, region+"-")
	}
	return f
}

// groupBy are the labels a reduction keeps.
func (m metric) groupBy() []string {
	g := []string{labelInstanceID}
	if m.perGPU {
		g = append(g, labelGPUNumber)
	}
	if m.stateLabel != "" {
		g = append(g, "metric.label."+m.stateLabel)
	}
	if m.only[0] != "" {
		g = append(g, "metric.label."+m.only[0])
	}
	return g
}

// grid is one instance's values of a metric per period of the window:
// GPU number → one value per period, NaN where there is none (a host
// metric uses GPU number 0). Dense slices, not maps per point: a region's
// answer holds hundreds of thousands of points.
type grid map[int][]float64

// set stores v for the period slot of n and the GPU.
func (g grid) set(n, slot, gpu int, v float64) {
	vals := g[gpu]
	if vals == nil {
		vals = providers.NaNRow(n)
		g[gpu] = vals
	}
	vals[slot] = v
}

// at is the value of the period slot for the GPU.
func (g grid) at(slot, gpu int) (float64, bool) {
	vals := g[gpu]
	if vals == nil || math.IsNaN(vals[slot]) {
		return 0, false
	}
	return vals[slot], true
}

// periods is the window's periods, from its start.
type periods struct {
	start, step int64 // Unix seconds
	n           int
}

// slot is the period starting at Unix second t, or false outside the window.
func (ps periods) slot(t int64) (int, bool) {
	if t < ps.start || (t-ps.start)%ps.step != 0 {
		return 0, false
	}
	i := (t - ps.start) / ps.step
	return int(i), i < int64(ps.n)
}

// ReadUtilization reads GPU utilization, GPU memory (used over used plus
// free), host CPU and the agent's host memory of the scope's running VMs,
// aligned on the server per hour (per minute for windows up to
// minuteWindow) with ALIGN_MEAN and reduced (REDUCE_MEAN) per instance and
// GPU, however many VMs there are: one ListTimeSeries read per metric over
// every region of the project, which the project's region scopes of the
// scan share (with --region, and for a region read a second time, one per
// metric for the region). DCGM metrics are asked for only when some VM has
// no NVML data. A VM without GPU data keeps a nil Utilization and is named
// in the notes; a GPU that does not report is left out of the samples,
// never read as idle.
func (p *Provider) ReadUtilization(ctx context.Context, scope providers.Scope, instances []fleet.Instance, window fleet.TimeRange) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var vertex []*fleet.Instance
	var vms []fleet.Instance
	var at []int
	for i := range instances {
		if isVertexItem(instances[i]) {
			if instances[i].State != fleet.Stopped {
				vertex = append(vertex, &instances[i])
			}
			continue
		}
		vms = append(vms, instances[i])
		at = append(at, i)
	}
	if len(vertex) == 0 {
		return p.readVMUtilization(ctx, scope, instances, window)
	}
	notes, err := p.readVertexUtilization(ctx, scope, vertex, window)
	if err != nil {
		return nil, err
	}
	more, err := p.readVMUtilization(ctx, scope, vms, window)
	for j, i := range at {
		instances[i] = vms[j]
	}
	notes = append(notes, more...)
	sort.Strings(notes)
	return notes, err
}

// readVMUtilization is ReadUtilization of VMs.
func (p *Provider) readVMUtilization(ctx context.Context, scope providers.Scope, instances []fleet.Instance, window fleet.TimeRange) ([]string, error) {
	if len(instances) == 0 {
		return nil, nil
	}
	want := p.wanted(scope, instances)
	if len(want) == 0 {
		var notes []string
		for _, in := range instances {
			if in.State != fleet.Stopped {
				notes = append(notes, fmt.Sprintf("%s: no GPU metrics: the VM was not listed by this scan", in.ID))
			}
		}
		return notes, nil
	}
	return p.readUtilization(ctx, scope, instances, want, window, monitoringpb.Aggregation_ALIGN_MEAN, len(p.opts.Regions) == 0)
}

// ReadPeakUtilization is ReadUtilization with each period's maximum
// (ALIGN_MAX) instead of its mean, for idle-stop's re-check right before a
// stop: read for the scope's region alone, fresh.
func (p *Provider) ReadPeakUtilization(ctx context.Context, scope providers.Scope, instances []fleet.Instance, window fleet.TimeRange) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	want := p.wanted(scope, instances)
	if len(want) == 0 {
		return nil, nil
	}
	return p.readUtilization(ctx, scope, instances, want, window, monitoringpb.Aggregation_ALIGN_MAX, false)
}

// wanted maps the numeric IDs of the running instances this provider
// listed to their index.
func (p *Provider) wanted(scope providers.Scope, instances []fleet.Instance) map[string]int {
	want := map[string]int{}
	for i, in := range instances {
		if in.State == fleet.Stopped {
			continue
		}
		p.idMu.Lock()
		id, ok := p.ids[scope.Account+"/"+in.ID]
		p.idMu.Unlock()
		if ok {
			want[id] = i
		}
	}
	return want
}

func (p *Provider) readUtilization(ctx context.Context, scope providers.Scope, instances []fleet.Instance, want map[string]int, window fleet.TimeRange, aligner monitoringpb.Aggregation_Aligner, shared bool) ([]string, error) {
	window, period := p.metricWindow(window)
	var d metricData
	var pm *projectMetrics
	if shared {
		var err error
		if pm, err = p.projectRead(ctx, scope, window, period, aligner); err != nil {
			return nil, err
		}
	}
	if pm != nil {
		var err error
		if d, err = pm.take(ctx, p, scope.Account, want, window, period, aligner); err != nil {
			return nil, err
		}
	} else {
		var err error
		if d, err = p.readRegion(ctx, scope, want, window, period, aligner); err != nil {
			return nil, err
		}
	}
	util, mem, cpu, hostMemory := d.util, d.mem, d.cpu, d.host
	var notes []string
	for id, i := range want {
		in := &instances[i]
		samples, periods := toSamples(windowPeriods(window, period), util[id], mem[id], cpu[id], hostMemory[id])
		if periods > 0 {
			h := float64(periods) * period.Hours() / window.Hours() * fleet.HoursPerMonth
			in.Usage = fleet.Usage{HoursPerMonth: &h}
		}
		if len(util[id]) == 0 {
			in.Utilization = nil
			continue
		}
		w := window
		in.Utilization = &fleet.Utilization{Window: &w, Samples: samples, Source: p.MetricsSource(), Coverage: fleet.SampleCoverage(samples, in.GPU.Count)}
	}
	for _, in := range instances {
		if in.State != fleet.Stopped && in.Utilization == nil {
			notes = append(notes, fmt.Sprintf("%s: no GPU metrics in Cloud Monitoring: install the Ops Agent with its NVML (or DCGM) receiver (%s)", in.ID, opsAgentDoc))
		}
	}
	sort.Strings(notes)
	return notes, nil
}

// readMetrics reads the NVML GPU metrics, host CPU and host memory of a
// project (or one region of it), the four reads at once; the first failure
// in that order is the answer's.
func (p *Provider) readMetrics(ctx context.Context, project, region string, w fleet.TimeRange, period time.Duration, aligner monitoringpb.Aggregation_Aligner) (metricData, error) {
	ms := []metric{nvmlUtil, nvmlMem, hostCPU, hostMem}
	grids := make([]map[string]grid, len(ms))
	errs := make([]error, len(ms))
	var wg sync.WaitGroup
	for i, m := range ms {
		wg.Go(func() { grids[i], errs[i] = p.readMetric(ctx, project, region, m, w, period, aligner) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return metricData{}, err
		}
	}
	return metricData{util: grids[0], mem: grids[1], cpu: grids[2], host: grids[3]}, nil
}

// readRegion reads the scope's region alone: the four metrics, DCGM's
// utilization when one of the wanted VMs has no NVML data, and DCGM's
// memory when one of those has DCGM utilization.
func (p *Provider) readRegion(ctx context.Context, scope providers.Scope, want map[string]int, w fleet.TimeRange, period time.Duration, aligner monitoringpb.Aggregation_Aligner) (metricData, error) {
	d, err := p.readMetrics(ctx, scope.Account, scope.Region, w, period, aligner)
	if err != nil {
		return metricData{}, err
	}
	missing := false
	for id := range want {
		missing = missing || len(d.util[id]) == 0
	}
	if !missing {
		return d, nil
	}
	du, err := p.readMetric(ctx, scope.Account, scope.Region, dcgmUtil, w, period, aligner)
	if err != nil {
		return metricData{}, err
	}
	var found []string
	for id := range want {
		if len(d.util[id]) == 0 && len(du[id]) > 0 {
			found = append(found, id)
		}
	}
	if len(found) == 0 {
		return d, nil
	}
	dm, err := p.readMetric(ctx, scope.Account, scope.Region, dcgmMem, w, period, aligner)
	if err != nil {
		return metricData{}, err
	}
	for _, id := range found {
		d.util[id], d.mem[id] = du[id], dm[id]
	}
	return d, nil
}

// opsAgentDoc is where Google says how to add GPU metrics.
const opsAgentDoc = "https://cloud.google.com/compute/docs/gpus/monitor-gpus"

// timeSeriesPage is the most points ListTimeSeries returns a page (view
// FULL).
const timeSeriesPage = 100000

// minuteWindow is the longest window read per minute (idle-stop's
// windows); longer ones are read per hour.
const minuteWindow = 3 * time.Hour

// metricWindow defaults the window to the lookback, picks the alignment
// period (a minute up to minuteWindow, else an hour) and aligns the window
// to it.
func (p *Provider) metricWindow(w fleet.TimeRange) (fleet.TimeRange, time.Duration) {
	if w.End.IsZero() {
		now := p.opts.Now().UTC()
		w = fleet.TimeRange{Start: now.Add(-p.opts.Lookback), End: now}
	}
	period := time.Hour
	if w.End.Sub(w.Start) <= minuteWindow {
		period = time.Minute
	}
	w = fleet.TimeRange{Start: w.Start.UTC().Truncate(period), End: w.End.UTC().Truncate(period)}
	if !w.End.After(w.Start) {
		w.End = w.Start.Add(period)
	}
	return w, period
}

// windowPeriods are the periods of an aligned window.
func windowPeriods(w fleet.TimeRange, period time.Duration) periods {
	step := int64(period / time.Second)
	return periods{start: w.Start.Unix(), step: step, n: int((w.End.Unix() - w.Start.Unix()) / step)}
}

// readMetric runs one ListTimeSeries over the project (or one region of
// it), paged at the most points the API returns a page, and returns
// numeric instance ID → values in percent per period of the window. A
// point outside the window is dropped.
func (p *Provider) readMetric(ctx context.Context, project, region string, m metric, w fleet.TimeRange, period time.Duration, aligner monitoringpb.Aggregation_Aligner) (map[string]grid, error) {
	reducer := monitoringpb.Aggregation_REDUCE_MEAN
	if aligner == monitoringpb.Aggregation_ALIGN_MAX {
		reducer = monitoringpb.Aggregation_REDUCE_MAX
	}
	if m.stateLabel != "" {
		reducer = monitoringpb.Aggregation_REDUCE_SUM
	}
	req := &monitoringpb.ListTimeSeriesRequest{
		Name:     "projects/" + project,
		Filter:   m.filter(region),
		Interval: &monitoringpb.TimeInterval{StartTime: timestamppb.New(w.Start), EndTime: timestamppb.New(w.End)},
		Aggregation: &monitoringpb.Aggregation{
			AlignmentPeriod:    durationpb.New(period),
			PerSeriesAligner:   aligner,
			CrossSeriesReducer: reducer,
			GroupByFields:      m.groupBy(),
		},
		View:     monitoringpb.ListTimeSeriesRequest_FULL,
		PageSize: timeSeriesPage,
	}
	ps := windowPeriods(w, period)
	step := int64(period / time.Second)
	out := map[string]grid{}
	// used and free bytes, for memory: ID → [used, free]
	bytes := map[string]*[2]grid{}
	// One codec for the iterator's pages: each page's points, in compact
	// form, reuse the arrays of the page before, which the loop below is
	// done with.
	slabs := &pageSlabs{compact: true}
	it := p.metrics.ListTimeSeries(ctx, req, gax.WithGRPCOptions(grpc.ForceCodecV2(timeSeriesCodec{reuse: slabs})))
	for {
		ts, err := it.Next()
		if errors.Is(err, iterator.Done) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("ListTimeSeries %s: %w", m.name, callError(ctx, err))
		}
		id := ts.GetResource().GetLabels()["instance_id"]
		if id == "" {
			continue
		}
		gpu := 0
		if m.perGPU {
			n, err := strconv.Atoi(ts.GetMetric().GetLabels()["gpu_number"])
			if err != nil || n < 0 {
				continue
			}
			gpu = n
		}
		if m.only[0] != "" && ts.GetMetric().GetLabels()[m.only[0]] != m.only[1] {
			continue
		}
		var dst grid
		if m.stateLabel == "" {
			if dst = out[id]; dst == nil {
				dst = grid{}
				out[id] = dst
			}
		} else {
			b := bytes[id]
			if b == nil {
				b = &[2]grid{{}, {}}
				bytes[id] = b
			}
			switch ts.GetMetric().GetLabels()[m.stateLabel] {
			case "used":
				dst = b[0]
			case "free":
				dst = b[1]
			default:
				continue
			}
		}
		add := func(end int64, v float64) {
			if math.IsNaN(v) {
				return
			}
			// An aligned point stands for the period that ends at its end time.
			slot, ok := ps.slot(end - step)
			if !ok {
				return
			}
			if m.stateLabel == "" {
				v = clampPercent(v * m.scale)
			}
			dst.set(ps.n, slot, gpu, v)
		}
		if pts, ok := slabs.pointsOf(ts); ok {
			for _, pt := range pts {
				add(pt.end, pt.v)
			}
		} else {
			for _, pt := range ts.GetPoints() {
				add(pt.GetInterval().GetEndTime().GetSeconds(), pointValue(pt.GetValue()))
			}
		}
	}
	for id, b := range bytes {
		for gpu, used := range b[0] {
			for slot, u := range used {
				f, ok := b[1].at(slot, gpu)
				if math.IsNaN(u) || !ok || u+f <= 0 {
					continue
				}
				if out[id] == nil {
					out[id] = grid{}
				}
				out[id].set(ps.n, slot, gpu, clampPercent(100*u/(u+f)))
			}
		}
	}
	return out, nil
}

func pointValue(v *monitoringpb.TypedValue) float64 {
	switch x := v.GetValue().(type) {
	case *monitoringpb.TypedValue_DoubleValue:
		return x.DoubleValue
	case *monitoringpb.TypedValue_Int64Value:
		return float64(x.Int64Value)
	}
	return math.NaN()
}

func clampPercent(v float64) float64 { return math.Max(0, math.Min(100, v)) }

// toSamples joins the values into samples in time order, each GPU list
// holding the GPUs that reported, in GPU-number order; the count is of the
// periods with any datapoint (CPU included). The samples of an instance
// share one backing array for their values.
func toSamples(ps periods, util, mem, cpu, host grid) ([]fleet.Sample, int) {
	uGPUs, mGPUs := gpuNumbers(util), gpuNumbers(mem)
	var out []fleet.Sample
	var vals []float64
	count := 0
	for slot := 0; slot < ps.n; slot++ {
		any := false
		for _, g := range []grid{util, mem, cpu, host} {
			for _, v := range g {
				if !math.IsNaN(v[slot]) {
					any = true
					break
				}
			}
		}
		if !any {
			continue
		}
		count++
		if vals == nil {
			vals = make([]float64, 0, (ps.n-slot)*(len(uGPUs)+len(mGPUs)+2))
		}
		s := fleet.Sample{Time: time.Unix(ps.start+int64(slot)*ps.step, 0).UTC()}
		s.GPU, vals = appendGPUs(vals, util, uGPUs, slot)
		s.GPUMemory, vals = appendGPUs(vals, mem, mGPUs, slot)
		if v, ok := cpu.at(slot, 0); ok {
			vals = append(vals, v)
			s.CPU = &vals[len(vals)-1]
		}
		if v, ok := host.at(slot, 0); ok {
			vals = append(vals, v)
			s.Memory = &vals[len(vals)-1]
		}
		if s.GPU == nil && s.GPUMemory == nil && s.CPU == nil && s.Memory == nil {
			continue
		}
		out = append(out, s)
	}
	return out, count
}

// gpuNumbers are the grid's GPU numbers in order.
func gpuNumbers(g grid) []int {
	nums := make([]int, 0, len(g))
	for n := range g {
		nums = append(nums, n)
	}
	sort.Ints(nums)
	return nums
}

// appendGPUs appends the slot's values of the GPUs that have one to vals
// and returns them as a list (nil when none) sliced from vals.
func appendGPUs(vals []float64, g grid, gpus []int, slot int) (fleet.PerGPU, []float64) {
	from := len(vals)
	for _, n := range gpus {
		if v, ok := g.at(slot, n); ok {
			vals = append(vals, v)
		}
	}
	if len(vals) == from {
		return nil, vals
	}
	return fleet.PerGPU(vals[from:len(vals):len(vals)]), vals
}
