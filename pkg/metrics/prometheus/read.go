package prometheus

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/metrics"
)

// The series the source reads.
const (
	MetricGPUUtil       = "DCGM_FI_DEV_GPU_UTIL"
	MetricGREngine      = "DCGM_FI_PROF_GR_ENGINE_ACTIVE"
	MetricFBUsed        = "DCGM_FI_DEV_FB_USED"
	MetricFBFree        = "DCGM_FI_DEV_FB_FREE"
	MetricNodeCPU       = "node_cpu_seconds_total"
	MetricMemAvailable  = "node_memory_MemAvailable_bytes"
	MetricMemTotal      = "node_memory_MemTotal_bytes"
	MetricKubeNodeInfo  = "kube_node_info"
	kubeProviderIDLabel = "provider_id"
)

// MaxPoints is Prometheus' limit of points per series of a range query.
const MaxPoints = 11000

// StepFor is the step for a window of this length: 60 s up to 3 hours, 300 s
// up to 2 days, else 3600 s; longer when needed to stay within MaxPoints.
func StepFor(length time.Duration) time.Duration {
	step := time.Hour
	switch {
	case length <= 3*time.Hour:
		step = time.Minute
	case length <= 48*time.Hour:
		step = 5 * time.Minute
	}
	return fitPoints(length, step)
}

// fitPoints makes step (whole seconds) long enough that the window holds at
// most MaxPoints steps.
func fitPoints(length, step time.Duration) time.Duration {
	step = max(step.Round(time.Second), time.Second)
	if least := (length + MaxPoints - 1) / MaxPoints; step < least {
		step = (least + time.Second - 1).Truncate(time.Second)
	}
	return step
}

// kind is what a query measures.
type kind int

const (
	kindGPU kind = iota
	kindGPUMem
	kindCPU
	kindMem
)

// query is one fleet-wide range query.
type query struct {
	kind kind
	expr string
}

// queries builds the range queries for a step: GPU (with GR_ENGINE_ACTIVE
// preferred when grEngine), GPU memory, and host CPU and memory when
// node-exporter's series exist. Each aggregates by the mapping labels.
func (s *Source) queries(step time.Duration, grEngine, nodeCPU, nodeMem bool) []query {
	by := fmt.Sprintf("by (%s, %s, %s)", s.opts.InstanceLabel, s.opts.HostLabel, s.opts.NodeLabel)
	r := fmt.Sprintf("[%ds]", int64(step/time.Second))
	gpu := fmt.Sprintf("max %s (avg_over_time(%s%s))", by, MetricGPUUtil, r)
	if grEngine {
		gpu = fmt.Sprintf("max %s (avg_over_time(%s%s)) * 100 or %s", by, MetricGREngine, r, gpu)
	}
	qs := []query{
		{kindGPU, gpu},
		{kindGPUMem, fmt.Sprintf("max %s (avg_over_time(%s%s) / (avg_over_time(%s%s) + avg_over_time(%s%s)) * 100)",
			by, MetricFBUsed, r, MetricFBUsed, r, MetricFBFree, r)},
	}
	if nodeCPU {
		qs = append(qs, query{kindCPU, fmt.Sprintf(`100 * (1 - avg %s (rate(%s{mode="idle"}%s)))`, by, MetricNodeCPU, r)})
	}
	if nodeMem {
		qs = append(qs, query{kindMem, fmt.Sprintf("100 * (1 - sum %s (avg_over_time(%s%s)) / sum %s (avg_over_time(%s%s)))",
			by, MetricMemAvailable, r, by, MetricMemTotal, r)})
	}
	return qs
}

// point is what one instance reported in one step.
type point struct {
	v [4]*float64
}

// Read fills the Utilization (one sample per step with data, timed at the
// step's start) of the running instances the series map to, and their
// running hours when the fleet gives none. A zero window is the last 14 days.
// Instances without data are named in the notes; an error (wrapping
// ErrFailed) means the whole source failed.
func (s *Source) Read(ctx context.Context, instances []fleet.Instance, window fleet.TimeRange) (metrics.Result, error) {
	res := metrics.Result{Coverage: map[string]metrics.Coverage{}}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	var running []int
	for i, in := range instances {
		if in.State != fleet.Stopped {
			running = append(running, i)
		}
	}
	if len(running) == 0 {
		return res, nil
	}
	w, step := s.window(window)

	names, err := s.labelValues(ctx, "__name__",
		fmt.Sprintf(`{__name__=~"%s"}`, strings.Join([]string{MetricGPUUtil, MetricGREngine, MetricFBUsed,
			MetricNodeCPU, MetricMemAvailable, MetricKubeNodeInfo}, "|")), w.Start, w.End)
	if err != nil {
		return res, s.callError(ctx, "listing metric names", err)
	}
	has := map[string]bool{}
	for _, n := range names {
		has[string(n)] = true
	}
	if !has[MetricGPUUtil] && !has[MetricGREngine] {
		return res, s.fail(fmt.Sprintf("no %s or %s series from %s to %s; is the DCGM exporter scraped?",
			MetricGPUUtil, MetricGREngine, w.Start.Format(time.RFC3339), w.End.Format(time.RFC3339)), nil)
	}

	qs := s.queries(step, has[MetricGREngine], has[MetricNodeCPU], has[MetricMemAvailable])
	results := make([][]series, len(qs))
	var nodes map[string]string
	errs := make([]error, len(qs)+1)
	var wg sync.WaitGroup
	// Each step [t, t+step) is evaluated at its last millisecond, so the
	// *_over_time ranges cover the step whether the server's ranges are
	// left-closed (Prometheus 2) or left-open (3).
	start, end := w.Start.Add(step-time.Millisecond), w.End.Add(-time.Millisecond)
	for i, q := range qs {
		wg.Go(func() {
			m, err := s.queryRange(ctx, q.expr, start, end, step)
			if err != nil {
				errs[i] = s.callError(ctx, "query "+q.expr, err)
				return
			}
			results[i] = m
		})
	}
	if has[MetricKubeNodeInfo] {
		wg.Go(func() {
			nodes, errs[len(qs)] = s.kubeNodes(ctx, w)
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return res, err
		}
	}

	m := s.newMapper(instances, running, nodes)
	data := map[int]map[int64]*point{}
	var seen []string
	matchedAny := false
	for qi, q := range qs {
		for _, ss := range results[qi] {
			idx, ok := m.resolve(ss.Metric)
			if !ok {
				if q.kind == kindGPU && len(seen) < 3 {
					seen = append(seen, s.describe(ss.Metric))
				}
				continue
			}
			if q.kind == kindGPU {
				matchedAny = true
			}
			d := data[idx]
			if d == nil {
				d = map[int64]*point{}
				data[idx] = d
			}
			for _, sp := range ss.Values {
				v := sp.V
				if math.IsNaN(v) || math.IsInf(v, 0) {
					continue
				}
				v = percent(round6(v))
				t := sp.T.Add(time.Millisecond - step).Unix()
				p := d[t]
				if p == nil {
					p = &point{}
					d[t] = p
				}
				if old := p.v[q.kind]; old == nil || v > *old {
					p.v[q.kind] = &v
				}
			}
		}
	}
	gpuSeries := len(results[0])
	if !matchedAny {
		if gpuSeries == 0 {
			return res, s.fail(fmt.Sprintf("no GPU series from %s to %s", w.Start.Format(time.RFC3339), w.End.Format(time.RFC3339)), nil)
		}
		return res, s.fail(fmt.Sprintf("label %s matched none of the %d instances (nor %s or %s; series have %s); set metrics.prometheus.instance_label",
			s.opts.InstanceLabel, len(running), s.opts.HostLabel, s.opts.NodeLabel, strings.Join(seen, ", ")), nil)
	}

	total := int(w.End.Sub(w.Start) / step)
	for _, i := range running {
		in := &instances[i]
		samples, gpuSteps := toSamples(data[i])
		if gpuSteps == 0 {
			res.Notes = append(res.Notes, fmt.Sprintf("%s: no DCGM series in prometheus (labels %s, %s, %s)",
				in.ID, s.opts.InstanceLabel, s.opts.HostLabel, s.opts.NodeLabel))
			continue
		}
		win := w
		// Each sample holds the busiest GPU's value alone, so the coverage
		// (hours with GPU data ÷ hours with any data) is set here: the
		// engine would read one value as one GPU reporting.
		in.Utilization = &fleet.Utilization{Window: &win, Samples: samples, Coverage: fleet.SampleCoverage(samples, 1)}
		if in.Usage == (fleet.Usage{}) {
			h := math.Round(float64(gpuSteps)*step.Hours()/w.Hours()*fleet.HoursPerMonth*100) / 100
			in.Usage = fleet.Usage{HoursPerMonth: &h}
		}
		frac := math.Round(float64(gpuSteps)/float64(total)*1e4) / 1e4
		res.Coverage[in.ID] = metrics.Coverage{Source: Name, Fraction: min(frac, 1)}
		if frac < 1 {
			res.Notes = append(res.Notes, fmt.Sprintf("%s: prometheus has GPU data for %.0f%% of the window", in.ID, frac*100))
		}
	}
	return res, nil
}

// window defaults the window to the lookback, picks the step and aligns the
// window down to it.
func (s *Source) window(w fleet.TimeRange) (fleet.TimeRange, time.Duration) {
	if w.End.IsZero() {
		now := s.opts.Now()
		w = fleet.TimeRange{Start: now.Add(-DefaultLookback), End: now}
	}
	w = fleet.TimeRange{Start: w.Start.UTC(), End: w.End.UTC()}
	length := w.End.Sub(w.Start)
	step := StepFor(length)
	if s.opts.Step > 0 {
		step = fitPoints(length, s.opts.Step)
	}
	w = fleet.TimeRange{Start: w.Start.Truncate(step), End: w.End.Truncate(step)}
	if !w.End.After(w.Start) {
		w.End = w.Start.Add(step)
	}
	return w, step
}

// kubeNodes maps Kubernetes node names to their providerID, from
// kube-state-metrics' kube_node_info.
func (s *Source) kubeNodes(ctx context.Context, w fleet.TimeRange) (map[string]string, error) {
	sets, err := s.seriesSets(ctx, MetricKubeNodeInfo, w.Start, w.End)
	if err != nil {
		return nil, s.callError(ctx, "series "+MetricKubeNodeInfo, err)
	}
	out := map[string]string{}
	for _, ls := range sets {
		if n, p := ls["node"], ls[kubeProviderIDLabel]; n != "" && p != "" {
			out[n] = p
		}
	}
	return out, nil
}

// describe names a series by its mapping labels, for error messages.
func (s *Source) describe(m map[string]string) string {
	var parts []string
	for _, l := range []string{s.opts.InstanceLabel, s.opts.HostLabel, s.opts.NodeLabel} {
		if v := m[l]; v != "" {
			parts = append(parts, fmt.Sprintf("%s=%q", l, v))
		}
	}
	if len(parts) == 0 {
		return "no mapping label"
	}
	return strings.Join(parts, " ")
}

// toSamples orders the steps and counts those with GPU data.
func toSamples(d map[int64]*point) ([]fleet.Sample, int) {
	keys := make([]int64, 0, len(d))
	for k := range d {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var out []fleet.Sample
	gpuSteps := 0
	for _, k := range keys {
		p := d[k]
		s := fleet.Sample{Time: time.Unix(k, 0).UTC(), CPU: p.v[kindCPU], Memory: p.v[kindMem]}
		if v := p.v[kindGPU]; v != nil {
			s.GPU = fleet.PerGPU{*v}
			gpuSteps++
		}
		if v := p.v[kindGPUMem]; v != nil {
			s.GPUMemory = fleet.PerGPU{*v}
		}
		out = append(out, s)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.Before(out[j].Time) })
	return out, gpuSteps
}

// percent keeps a reading within 0–100, as the fleet format requires.
func percent(v float64) float64 { return min(max(v, 0), 100) }

// round6 drops the floating-point noise of a ratio.
func round6(v float64) float64 { return math.Round(v*1e6) / 1e6 }
