package aws

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers"
)

// The metrics ReadUtilization reads. The GPU ones are what the CloudWatch
// agent's nvidia_gpu plugin publishes (memory in MiB) with append_dimensions
// adding InstanceId and InstanceType to its index and name dimensions; host
// memory comes from the agent's mem plugin and CPU from EC2 itself.
const (
	MetricGPUUtilization = "nvidia_smi_utilization_gpu"
	MetricGPUMemoryUsed  = "nvidia_smi_memory_used"
	MetricGPUMemoryTotal = "nvidia_smi_memory_total"
	MetricMemoryUsed     = "mem_used_percent"
	MetricCPU            = "CPUUtilization"
	// NamespaceEC2 is where EC2 publishes CPUUtilization.
	NamespaceEC2 = "AWS/EC2"
)

// CloudWatch limits the reads are shaped by.
const (
	// maxQueriesPerCall is GetMetricData's limit on MetricDataQueries.
	maxQueriesPerCall = 500
	// maxDatapointsPerCall is GetMetricData's default (and largest)
	// MaxDatapoints; a call that would return more is paginated.
	maxDatapointsPerCall = 100800
	// metricPeriod is one datapoint per hour: CloudWatch keeps hourly data
	// for 455 days, so the period is valid for any window it still has.
	metricPeriod = 3600
	// hourlyRetention is how long CloudWatch keeps hourly data.
	hourlyRetention = 455 * 24 * time.Hour
)

// metricKind is what a series measures.
type metricKind int

const (
	kindGPU metricKind = iota
	kindGPUMemUsed
	kindGPUMemTotal
	kindMemory
	kindCPU
)

// metricSource is one metric name to discover with ListMetrics.
type metricSource struct {
	kind   metricKind
	name   string
	prefix string // GetMetricData query Id prefix
	gpu    bool   // per-GPU series with an index dimension
	agent  bool   // in the agent's namespace, else AWS/EC2
}

var metricSources = []metricSource{
	{kindGPU, MetricGPUUtilization, "g", true, true},
	{kindGPUMemUsed, MetricGPUMemoryUsed, "u", true, true},
	{kindGPUMemTotal, MetricGPUMemoryTotal, "t", true, true},
	{kindMemory, MetricMemoryUsed, "m", false, true},
	{kindCPU, MetricCPU, "c", false, false},
}

// series is one CloudWatch metric (exact dimension set) of one instance.
type series struct {
	id     string // GetMetricData query Id
	inst   int    // index into the instances being read
	kind   metricKind
	gpu    int // the index dimension; -1 when absent
	metric cwtypes.Metric
}

// hourData is what one instance reported in one hour.
type hourData struct {
	gpu, used, total map[int]float64
	cpu, mem         *float64
}

// ReadUtilization reads the window's hourly GPU, GPU memory, CPU and host
// memory utilization of the scope's running instances into their
// Utilization.Samples, and their running hours (hours with any datapoint in
// the window) into Usage.HoursPerMonth. Series are found with ListMetrics per
// metric name (not per instance) and read with GetMetricData, up to 500
// queries a call, period 3600, statistic Average, over the window aligned to
// the hour. Instances without GPU series keep a nil Utilization and are named
// in the notes; stopped instances are skipped. A zero window means the
// configured lookback up to now.
func (p *Provider) ReadUtilization(ctx context.Context, scope providers.Scope, instances []fleet.Instance, window fleet.TimeRange) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	running := false
	for _, in := range instances {
		running = running || in.State != fleet.Stopped
	}
	if !running {
		return nil, nil
	}
	c, err := p.cloudWatchClient(scope)
	if err != nil {
		return nil, err
	}
	return p.readUtilization(ctx, c, instances, window)
}

// metricsAPI is the part of the CloudWatch client ReadUtilization uses.
type metricsAPI interface {
	cloudwatch.ListMetricsAPIClient
	cloudwatch.GetMetricDataAPIClient
}

func (p *Provider) readUtilization(ctx context.Context, c metricsAPI, instances []fleet.Instance, window fleet.TimeRange) ([]string, error) {
	want := map[string]int{}
	for i, in := range instances {
		if in.State != fleet.Stopped {
			want[in.ID] = i
		}
	}
	var notes []string
	window, note := p.metricWindow(window)
	if note != "" {
		notes = append(notes, note)
	}
	all, err := p.discoverSeries(ctx, c, want)
	if err != nil {
		return nil, err
	}
	data, err := p.readSeries(ctx, c, all, window)
	if err != nil {
		return nil, err
	}
	windowHours := window.Hours()
	for i := range instances {
		in := &instances[i]
		if _, ok := want[in.ID]; !ok {
			continue
		}
		samples, running := toSamples(data[i])
		if running > 0 {
			h := float64(running) / windowHours * fleet.HoursPerMonth
			in.Usage = fleet.Usage{HoursPerMonth: &h}
		}
		if !hasGPU(samples) {
			in.Utilization = nil
			notes = append(notes, fmt.Sprintf("%s: no GPU metrics in %s: install the CloudWatch agent with the nvidia_gpu block (append_dimensions InstanceId)", in.ID, p.opts.MetricsNamespace))
			continue
		}
		w := window
		in.Utilization = &fleet.Utilization{Window: &w, Samples: samples}
	}
	return notes, nil
}

// metricWindow aligns the window to the hour, defaults it to the lookback
// and clamps it to what CloudWatch still keeps at an hourly period.
func (p *Provider) metricWindow(w fleet.TimeRange) (fleet.TimeRange, string) {
	now := p.opts.Now().UTC()
	if w.End.IsZero() {
		w = fleet.TimeRange{Start: now.Add(-p.opts.Lookback), End: now}
	}
	w = fleet.TimeRange{Start: w.Start.UTC().Truncate(time.Hour), End: w.End.UTC().Truncate(time.Hour)}
	var note string
	if oldest := now.Add(-hourlyRetention).Truncate(time.Hour); w.Start.Before(oldest) {
		w.Start = oldest
		note = fmt.Sprintf("utilization window starts at %s: CloudWatch keeps hourly data for 455 days", oldest.Format(time.RFC3339))
	}
	if !w.End.After(w.Start) {
		w.End = w.Start.Add(time.Hour)
	}
	return w, note
}

// discoverSeries lists every series of the metric sources that belongs to
// one of the wanted instances (InstanceId → index) and gives each a query Id.
func (p *Provider) discoverSeries(ctx context.Context, c cloudwatch.ListMetricsAPIClient, want map[string]int) ([]series, error) {
	found := make([][]series, len(metricSources))
	err := parallel(ctx, len(metricSources), p.opts.Concurrency, func(ctx context.Context, k int) error {
		src := metricSources[k]
		ns := NamespaceEC2
		if src.agent {
			ns = p.opts.MetricsNamespace
		}
		pg := cloudwatch.NewListMetricsPaginator(c, &cloudwatch.ListMetricsInput{
			Namespace:  aws.String(ns),
			MetricName: aws.String(src.name),
			Dimensions: []cwtypes.DimensionFilter{{Name: aws.String("InstanceId")}},
		})
		for pg.HasMorePages() {
			page, err := pg.NextPage(ctx)
			if err != nil {
				return callError(ctx, "ListMetrics "+ns+" "+src.name, err)
			}
			for _, m := range page.Metrics {
				s, ok := seriesOf(src, m, want)
				if ok {
					found[k] = append(found[k], s)
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var all []series
	for _, f := range found {
		all = append(all, f...)
	}
	sort.SliceStable(all, func(i, j int) bool {
		a, b := all[i], all[j]
		if a.inst != b.inst {
			return a.inst < b.inst
		}
		if a.kind != b.kind {
			return a.kind < b.kind
		}
		return a.gpu < b.gpu
	})
	n := map[int]int{}
	for i := range all {
		s := &all[i]
		s.id = metricSources[s.kind].prefix + strconv.Itoa(s.inst) + "_" + strconv.Itoa(n[s.inst])
		n[s.inst]++
	}
	return all, nil
}

// seriesOf keeps a listed metric when its InstanceId is wanted.
func seriesOf(src metricSource, m cwtypes.Metric, want map[string]int) (series, bool) {
	s := series{kind: src.kind, gpu: -1, metric: m, inst: -1}
	for _, d := range m.Dimensions {
		switch aws.ToString(d.Name) {
		case "InstanceId":
			if i, ok := want[aws.ToString(d.Value)]; ok {
				s.inst = i
			}
		case "index":
			if src.gpu {
				if i, err := strconv.Atoi(aws.ToString(d.Value)); err == nil && i >= 0 {
					s.gpu = i
				}
			}
		}
	}
	return s, s.inst >= 0
}

// readSeries reads every series with GetMetricData, batched so that a call
// holds at most 500 queries and needs no second page for the window, and
// returns per instance index the hourly data.
func (p *Provider) readSeries(ctx context.Context, c cloudwatch.GetMetricDataAPIClient, all []series, window fleet.TimeRange) (map[int]map[int64]*hourData, error) {
	hours := max(int(window.Hours()), 1)
	batch := min(maxQueriesPerCall, max(1, maxDatapointsPerCall/hours))
	nBatches := (len(all) + batch - 1) / batch
	type point struct {
		t time.Time
		v float64
	}
	results := make([]map[string][]point, nBatches)
	err := parallel(ctx, nBatches, p.opts.Concurrency, func(ctx context.Context, b int) error {
		part := all[b*batch : min((b+1)*batch, len(all))]
		queries := make([]cwtypes.MetricDataQuery, len(part))
		for i, s := range part {
			m := s.metric
			queries[i] = cwtypes.MetricDataQuery{
				Id: aws.String(s.id),
				MetricStat: &cwtypes.MetricStat{
					Metric: &m,
					Period: aws.Int32(metricPeriod),
					Stat:   aws.String("Average"),
				},
				ReturnData: aws.Bool(true),
			}
		}
		got := map[string][]point{}
		pg := cloudwatch.NewGetMetricDataPaginator(c, &cloudwatch.GetMetricDataInput{
			MetricDataQueries: queries,
			StartTime:         aws.Time(window.Start),
			EndTime:           aws.Time(window.End),
		})
		for pg.HasMorePages() {
			page, err := pg.NextPage(ctx)
			if err != nil {
				return callError(ctx, "GetMetricData", err)
			}
			for _, r := range page.MetricDataResults {
				id := aws.ToString(r.Id)
				for k, t := range r.Timestamps {
					if k < len(r.Values) {
						got[id] = append(got[id], point{t, r.Values[k]})
					}
				}
			}
		}
		results[b] = got
		return nil
	})
	if err != nil {
		return nil, err
	}
	byID := make(map[string]*series, len(all))
	for i := range all {
		byID[all[i].id] = &all[i]
	}
	out := map[int]map[int64]*hourData{}
	for _, got := range results {
		for id, points := range got {
			s := byID[id]
			if s == nil {
				continue
			}
			hoursOf := out[s.inst]
			if hoursOf == nil {
				hoursOf = map[int64]*hourData{}
				out[s.inst] = hoursOf
			}
			for _, pt := range points {
				if pt.t.Before(window.Start) || !pt.t.Before(window.End) || math.IsNaN(pt.v) {
					continue
				}
				h := pt.t.UTC().Truncate(time.Hour).Unix()
				d := hoursOf[h]
				if d == nil {
					d = &hourData{gpu: map[int]float64{}, used: map[int]float64{}, total: map[int]float64{}}
					hoursOf[h] = d
				}
				v := pt.v
				switch s.kind {
				case kindGPU:
					d.gpu[s.gpu] = v
				case kindGPUMemUsed:
					d.used[s.gpu] = v
				case kindGPUMemTotal:
					d.total[s.gpu] = v
				case kindMemory:
					d.mem = &v
				case kindCPU:
					d.cpu = &v
				}
			}
		}
	}
	return out, nil
}

// toSamples turns an instance's hourly data into time-ordered samples, and
// counts the hours with any datapoint. Readings are kept within 0–100 (the
// fleet format's range). GPU values are in index order; a
// series without an index dimension (an aggregate) is used only when there
// are no per-index ones. GPU memory is used / total × 100 per index; a total
// missing in some hour is taken from the other hours (it does not change).
func toSamples(hours map[int64]*hourData) ([]fleet.Sample, int) {
	if len(hours) == 0 {
		return nil, 0
	}
	keys := make([]int64, 0, len(hours))
	totals := map[int]float64{}
	for h, d := range hours {
		keys = append(keys, h)
		for i, t := range d.total {
			totals[i] = max(totals[i], t)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	samples := make([]fleet.Sample, 0, len(keys))
	for _, h := range keys {
		d := hours[h]
		s := fleet.Sample{Time: time.Unix(h, 0).UTC(), CPU: percentPtr(d.cpu), Memory: percentPtr(d.mem)}
		s.GPU = perIndex(d.gpu, func(_ int, v float64) (float64, bool) { return percent(v), true })
		s.GPUMemory = perIndex(d.used, func(i int, used float64) (float64, bool) {
			total := d.total[i]
			if total <= 0 {
				total = totals[i]
			}
			if total <= 0 {
				return 0, false
			}
			return percent(round6(used / total * 100)), true
		})
		samples = append(samples, s)
	}
	return samples, len(keys)
}

// perIndex lists f of the values in index order, leaving out the aggregate
// (index -1) when per-index values exist.
func perIndex(values map[int]float64, f func(i int, v float64) (float64, bool)) fleet.PerGPU {
	if len(values) == 0 {
		return nil
	}
	idx := make([]int, 0, len(values))
	for i := range values {
		if i >= 0 {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		idx = append(idx, -1)
	}
	sort.Ints(idx)
	var out fleet.PerGPU
	for _, i := range idx {
		if v, ok := f(i, values[i]); ok {
			out = append(out, v)
		}
	}
	return out
}

// hasGPU reports whether any sample has a GPU utilization value.
func hasGPU(samples []fleet.Sample) bool {
	for _, s := range samples {
		if len(s.GPU) > 0 {
			return true
		}
	}
	return false
}

// percent keeps a reading within 0–100, as the fleet format requires
// (e.g. a GPU memory total read in another hour than the used figure).
func percent(v float64) float64 { return min(max(v, 0), 100) }

func percentPtr(v *float64) *float64 {
	if v == nil {
		return nil
	}
	p := percent(*v)
	return &p
}

// round6 drops the floating-point noise of a ratio.
func round6(v float64) float64 { return math.Round(v*1e6) / 1e6 }

// parallel runs fn for 0..n-1, at most limit at once, and returns the first
// error; the others are cancelled then. A cancelled parent returns ctx.Err().
func parallel(ctx context.Context, n, limit int, fn func(ctx context.Context, i int) error) error {
	if limit <= 0 {
		limit = 1
	}
	inner, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	sem := make(chan struct{}, limit)
loop:
	for i := 0; i < n; i++ {
		select {
		case sem <- struct{}{}:
		case <-inner.Done():
			break loop
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := fn(inner, i); err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
				cancel()
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	return firstErr
}
