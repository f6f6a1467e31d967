package gcp

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"time"

	"cloud.google.com/go/monitoring/apiv3/v2/monitoringpb"
	"google.golang.org/api/iterator"
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

// filter is the metric's filter in one region of the project.
func (m metric) filter(region string) string {
	return fmt.Sprintf(`metric.type = %q AND resource.type = %q AND resource.label.zone = starts_with(%q)`, m.name, resourceType, region+"-")
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

// hourly is one instance's values per period: the period's start (Unix
// seconds) → GPU number → value (a host metric uses GPU number 0).
type hourly map[int64]map[int]float64

// ReadUtilization reads GPU utilization, GPU memory (used over used plus
// free), host CPU and the agent's host memory of the scope's running VMs:
// one ListTimeSeries request per metric for the project's region, aligned
// on the server per hour (per minute for windows up to minuteWindow) with
// ALIGN_MEAN and reduced (REDUCE_MEAN) per instance and GPU, however many
// VMs there are. DCGM metrics are asked for only when some VM has no NVML
// data. A VM without GPU data keeps a nil Utilization and is named in the
// notes; a GPU that does not report is left out of the samples, never read
// as idle.
func (p *Provider) ReadUtilization(ctx context.Context, scope providers.Scope, instances []fleet.Instance, window fleet.TimeRange) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
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
	return p.readUtilization(ctx, scope, instances, want, window, monitoringpb.Aggregation_ALIGN_MEAN)
}

// ReadPeakUtilization is ReadUtilization with each period's maximum
// (ALIGN_MAX) instead of its mean, for idle-stop's re-check right before a
// stop.
func (p *Provider) ReadPeakUtilization(ctx context.Context, scope providers.Scope, instances []fleet.Instance, window fleet.TimeRange) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	want := p.wanted(scope, instances)
	if len(want) == 0 {
		return nil, nil
	}
	return p.readUtilization(ctx, scope, instances, want, window, monitoringpb.Aggregation_ALIGN_MAX)
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

func (p *Provider) readUtilization(ctx context.Context, scope providers.Scope, instances []fleet.Instance, want map[string]int, window fleet.TimeRange, aligner monitoringpb.Aggregation_Aligner) ([]string, error) {
	window, period := p.metricWindow(window)
	read := func(m metric) (map[string]hourly, error) { return p.readMetric(ctx, scope, m, window, period, aligner) }
	util, err := read(nvmlUtil)
	if err != nil {
		return nil, err
	}
	mem, err := read(nvmlMem)
	if err != nil {
		return nil, err
	}
	missing := false
	for id := range want {
		missing = missing || len(util[id]) == 0
	}
	if missing {
		du, err := read(dcgmUtil)
		if err != nil {
			return nil, err
		}
		dm, err := read(dcgmMem)
		if err != nil {
			return nil, err
		}
		for id := range want {
			if len(util[id]) == 0 && len(du[id]) > 0 {
				util[id], mem[id] = du[id], dm[id]
			}
		}
	}
	cpu, err := read(hostCPU)
	if err != nil {
		return nil, err
	}
	hostMemory, err := read(hostMem)
	if err != nil {
		return nil, err
	}
	var notes []string
	for id, i := range want {
		in := &instances[i]
		samples, periods := toSamples(util[id], mem[id], cpu[id], hostMemory[id])
		if periods > 0 {
			h := float64(periods) * period.Hours() / window.Hours() * fleet.HoursPerMonth
			in.Usage = fleet.Usage{HoursPerMonth: &h}
		}
		if len(util[id]) == 0 {
			in.Utilization = nil
			continue
		}
		w := window
		in.Utilization = &fleet.Utilization{Window: &w, Samples: samples, Source: p.MetricsSource()}
	}
	for _, in := range instances {
		if in.State != fleet.Stopped && in.Utilization == nil {
			notes = append(notes, fmt.Sprintf("%s: no GPU metrics in Cloud Monitoring: install the Ops Agent with its NVML (or DCGM) receiver (%s)", in.ID, opsAgentDoc))
		}
	}
	sort.Strings(notes)
	return notes, nil
}

// opsAgentDoc is where Google says how to add GPU metrics.
const opsAgentDoc = "https://cloud.google.com/compute/docs/gpus/monitor-gpus"

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

// readMetric runs one ListTimeSeries over the scope's region and returns
// numeric instance ID → hourly values in percent.
func (p *Provider) readMetric(ctx context.Context, scope providers.Scope, m metric, w fleet.TimeRange, period time.Duration, aligner monitoringpb.Aggregation_Aligner) (map[string]hourly, error) {
	reducer := monitoringpb.Aggregation_REDUCE_MEAN
	if aligner == monitoringpb.Aggregation_ALIGN_MAX {
		reducer = monitoringpb.Aggregation_REDUCE_MAX
	}
	if m.stateLabel != "" {
		reducer = monitoringpb.Aggregation_REDUCE_SUM
	}
	req := &monitoringpb.ListTimeSeriesRequest{
		Name:     "projects/" + scope.Account,
		Filter:   m.filter(scope.Region),
		Interval: &monitoringpb.TimeInterval{StartTime: timestamppb.New(w.Start), EndTime: timestamppb.New(w.End)},
		Aggregation: &monitoringpb.Aggregation{
			AlignmentPeriod:    durationpb.New(period),
			PerSeriesAligner:   aligner,
			CrossSeriesReducer: reducer,
			GroupByFields:      m.groupBy(),
		},
		View: monitoringpb.ListTimeSeriesRequest_FULL,
	}
	out := map[string]hourly{}
	// used and free bytes, for memory: ID → hour → GPU → [used, free]
	bytes := map[string]map[int64]map[int]*[2]float64{}
	it := p.metrics.ListTimeSeries(ctx, req)
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
		state := ts.GetMetric().GetLabels()[m.stateLabel]
		for _, pt := range ts.GetPoints() {
			v := pointValue(pt.GetValue())
			if math.IsNaN(v) {
				continue
			}
			// An aligned point stands for the period that ends at its end time.
			hour := pt.GetInterval().GetEndTime().AsTime().Add(-period).Unix()
			if m.stateLabel == "" {
				if out[id] == nil {
					out[id] = hourly{}
				}
				if out[id][hour] == nil {
					out[id][hour] = map[int]float64{}
				}
				out[id][hour][gpu] = clampPercent(v * m.scale)
				continue
			}
			if bytes[id] == nil {
				bytes[id] = map[int64]map[int]*[2]float64{}
			}
			if bytes[id][hour] == nil {
				bytes[id][hour] = map[int]*[2]float64{}
			}
			b := bytes[id][hour][gpu]
			if b == nil {
				b = &[2]float64{math.NaN(), math.NaN()}
				bytes[id][hour][gpu] = b
			}
			switch state {
			case "used":
				b[0] = v
			case "free":
				b[1] = v
			}
		}
	}
	for id, hours := range bytes {
		for hour, gpus := range hours {
			for gpu, b := range gpus {
				if math.IsNaN(b[0]) || math.IsNaN(b[1]) || b[0]+b[1] <= 0 {
					continue
				}
				if out[id] == nil {
					out[id] = hourly{}
				}
				if out[id][hour] == nil {
					out[id][hour] = map[int]float64{}
				}
				out[id][hour][gpu] = clampPercent(100 * b[0] / (b[0] + b[1]))
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

// toSamples joins the hourly values into samples in time order, each GPU
// list holding the GPUs that reported, in GPU-number order; hours counts
// the hours with any datapoint (CPU included).
func toSamples(util, mem, cpu, host hourly) ([]fleet.Sample, int) {
	hours := map[int64]bool{}
	for _, h := range []hourly{util, mem, cpu, host} {
		for hour := range h {
			hours[hour] = true
		}
	}
	keys := make([]int64, 0, len(hours))
	for h := range hours {
		keys = append(keys, h)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	var out []fleet.Sample
	for _, h := range keys {
		s := fleet.Sample{Time: time.Unix(h, 0).UTC(), GPU: perGPU(util[h]), GPUMemory: perGPU(mem[h])}
		if v, ok := cpu[h][0]; ok {
			s.CPU = &v
		}
		if v, ok := host[h][0]; ok {
			s.Memory = &v
		}
		if s.GPU == nil && s.GPUMemory == nil && s.CPU == nil && s.Memory == nil {
			continue
		}
		out = append(out, s)
	}
	return out, len(keys)
}

func perGPU(m map[int]float64) fleet.PerGPU {
	if len(m) == 0 {
		return nil
	}
	nums := make([]int, 0, len(m))
	for n := range m {
		nums = append(nums, n)
	}
	sort.Ints(nums)
	out := make(fleet.PerGPU, len(nums))
	for i, n := range nums {
		out[i] = m[n]
	}
	return out
}
