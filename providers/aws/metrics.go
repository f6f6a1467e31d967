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
	// How long CloudWatch keeps data at each period: 60 s for 15 days, 300 s
	// for 63 days, 3600 s for 455 days. A period finer than the data still
	// kept for a time returns nothing for it.
	minuteRetention     = 15 * 24 * time.Hour
	fiveMinuteRetention = 63 * 24 * time.Hour
	hourlyRetention     = 455 * 24 * time.Hour
	// minuteWindow is the longest window read at 60 s.
	minuteWindow = 3 * time.Hour
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

// metricSource is one metric ReadUtilization reads.
type metricSource struct {
	kind   metricKind
	name   string
	prefix string // GetMetricData query Id prefix
	gpu    bool   // per-GPU series with an index dimension
	agent  bool   // in the agent's namespace, else AWS/EC2
}

// metricSources are indexed by kind.
var metricSources = []metricSource{
	{kindGPU, MetricGPUUtilization, "g", true, true},
	{kindGPUMemUsed, MetricGPUMemoryUsed, "u", true, true},
	{kindGPUMemTotal, MetricGPUMemoryTotal, "t", true, true},
	{kindMemory, MetricMemoryUsed, "m", false, true},
	{kindCPU, MetricCPU, "c", false, false},
}

// agentSources are the metric sources in the agent's namespace by name:
// the ones one listing of the namespace finds.
var agentSources = func() map[string]metricSource {
	out := map[string]metricSource{}
	for _, src := range metricSources {
		if src.agent {
			out[src.name] = src
		}
	}
	return out
}()

// series is one CloudWatch metric (exact dimension set) of one instance.
type series struct {
	id     string // GetMetricData query Id
	inst   int    // index into the instances being read
	kind   metricKind
	gpu    int // the index dimension; -1 when absent
	metric cwtypes.Metric
}

// grid is what one instance reported over the window: per series kind (and
// GPU index, -1 for a series without one) one value per period, NaN where
// there was no datapoint.
type grid struct {
	gpu, used, total map[int][]float64
	cpu, mem         []float64
}

// merge lays a series' row over the grid's row for its kind and GPU index:
// the first such series' row becomes the grid's (not copied: the caller
// reads it no more), a later one's values replace it where not NaN.
func (g *grid) merge(kind metricKind, gpu int, row []float64) {
	var m *map[int][]float64
	var cells []float64
	switch kind {
	case kindGPU:
		m = &g.gpu
	case kindGPUMemUsed:
		m = &g.used
	case kindGPUMemTotal:
		m = &g.total
	case kindMemory:
		if g.mem == nil {
			g.mem = row
			return
		}
		cells = g.mem
	default:
		if g.cpu == nil {
			g.cpu = row
			return
		}
		cells = g.cpu
	}
	if m != nil {
		if *m == nil {
			*m = map[int][]float64{}
		}
		if cells = (*m)[gpu]; cells == nil {
			(*m)[gpu] = row
			return
		}
	}
	for k, v := range row {
		if !math.IsNaN(v) {
			cells[k] = v
		}
	}
}

// ReadUtilization reads the window's GPU, GPU memory, CPU and host memory
// utilization of the scope's running instances into their
// Utilization.Samples, and their running hours into Usage.HoursPerMonth.
// The agent's series are found with one ListMetrics listing of its
// namespace (not per metric name or instance), CPU's from the instance IDs,
// and all are read with GetMetricData, up to 500 queries a call (fewer when a call would
// exceed 100,800 datapoints), statistic Average (ReadPeakUtilization:
// Maximum). A GPU whose series has no datapoint in a period is absent from
// that sample's per-GPU values (never 0), so a caller sees fewer GPUs than
// the instance has.
//
// The period follows the window (see metricWindow): 60 s for windows up to
// 3 hours (idle-stop's recent window), 300 s for other windows up to 15 days
// that are not a whole number of hours, else 3600 s (analyze's lookback),
// each only while CloudWatch still keeps data at that period (60 s: 15 days,
// 300 s: 63 days), else the next coarser one. The window is aligned down to
// the period; Utilization.Window is the aligned window.
//
// There is one sample per period with any datapoint, at the period's start:
// the samples carry their real timestamps, and periods without a datapoint
// (a stopped or not yet reporting agent, data not yet published) are simply
// absent, so a caller judging recent data (idle-stop) computes staleness and
// coverage from the samples' timestamps against the window itself. Running
// hours are the periods with any datapoint × the period, scaled from the
// window to a month. Instances without GPU series keep a nil Utilization and
// are named in the notes; stopped instances are skipped. A zero window means
// the configured lookback up to now. SageMaker items are read from
// SageMaker's own metrics (readSageMaker).
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

// The GetMetricData statistics the reads use.
const (
	statAverage = "Average"
	statMaximum = "Maximum"
)

// ReadPeakUtilization is ReadUtilization with statistic Maximum: each
// sample holds the highest value of its period, not the average, for
// idle-stop's re-check right before a stop. The window may end after now
// (the current, partial minute): CloudWatch answers what it has.
func (p *Provider) ReadPeakUtilization(ctx context.Context, scope providers.Scope, instances []fleet.Instance, window fleet.TimeRange) ([]string, error) {
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
	return p.readUtilizationStat(ctx, c, instances, window, statMaximum)
}

func (p *Provider) readUtilization(ctx context.Context, c metricsAPI, instances []fleet.Instance, window fleet.TimeRange) ([]string, error) {
	return p.readUtilizationStat(ctx, c, instances, window, statAverage)
}

func (p *Provider) readUtilizationStat(ctx context.Context, c metricsAPI, instances []fleet.Instance, window fleet.TimeRange, stat string) ([]string, error) {
	want := map[string]int{}
	var managed []int
	for i, in := range instances {
		switch {
		case in.State == fleet.Stopped:
		case isSageMaker(&in):
			managed = append(managed, i)
		case in.Managed == nil:
			want[in.ID] = i
		}
	}
	var notes []string
	window, period, note := p.metricWindow(window)
	if note != "" {
		notes = append(notes, note)
	}
	if len(managed) > 0 {
		smNotes, err := p.readSageMaker(ctx, c, instances, managed, window, period, stat)
		if err != nil {
			return nil, err
		}
		notes = append(notes, smNotes...)
	}
	if len(want) == 0 {
		return notes, nil
	}
	all, err := p.discoverSeries(ctx, c, want)
	if err != nil {
		return nil, err
	}
	data, steps, err := p.readSeries(ctx, c, all, window, period, stat)
	if err != nil {
		return nil, err
	}
	base := window.Start.UTC().Truncate(period)
	windowHours := window.Hours()
	for i := range instances {
		in := &instances[i]
		if _, ok := want[in.ID]; !ok {
			continue
		}
		samples, running := toSamples(data[i], base, period, steps)
		if running > 0 {
			h := float64(running) * period.Hours() / windowHours * fleet.HoursPerMonth
			in.Usage = fleet.Usage{HoursPerMonth: &h}
		}
		if !hasGPU(samples) {
			in.Utilization = nil
			notes = append(notes, fmt.Sprintf("%s: no GPU metrics in %s: install the CloudWatch agent with the nvidia_gpu block (append_dimensions InstanceId)", in.ID, p.aws.metricsNamespace))
			continue
		}
		w := window
		in.Utilization = &fleet.Utilization{Window: &w, Samples: samples, Coverage: fleet.SampleCoverage(samples, in.GPU.Count)}
	}
	return notes, nil
}

// metricWindow defaults the window to the lookback, picks the period (see
// metricPeriod), aligns the window down to it, and clamps it to what
// CloudWatch still keeps at an hourly period.
func (p *Provider) metricWindow(w fleet.TimeRange) (fleet.TimeRange, time.Duration, string) {
	now := p.opts.Now().UTC()
	if w.End.IsZero() {
		w = fleet.TimeRange{Start: now.Add(-p.opts.Lookback), End: now}
	}
	w = fleet.TimeRange{Start: w.Start.UTC(), End: w.End.UTC()}
	period := metricPeriod(w, now)
	w = fleet.TimeRange{Start: w.Start.Truncate(period), End: w.End.Truncate(period)}
	var note string
	if oldest := now.Add(-hourlyRetention).Truncate(time.Hour); w.Start.Before(oldest) {
		w.Start = oldest
		note = fmt.Sprintf("utilization window starts at %s: CloudWatch keeps hourly data for 455 days", oldest.Format(time.RFC3339))
	}
	if !w.End.After(w.Start) {
		w.End = w.Start.Add(period)
	}
	return w, period, note
}

// metricPeriod picks the GetMetricData period for a window (before
// alignment): 60 s up to 3 hours; 300 s up to 15 days when the window is not
// a whole number of hours; else 3600 s. A period is used only when the
// window starts within CloudWatch's retention for it (60 s: 15 days, 300 s:
// 63 days); otherwise the next coarser one is.
func metricPeriod(w fleet.TimeRange, now time.Time) time.Duration {
	length, age := w.End.Sub(w.Start), now.Sub(w.Start)
	switch {
	case length <= minuteWindow && age <= minuteRetention:
		return time.Minute
	case length <= minuteWindow || (length <= minuteRetention && length%time.Hour != 0):
		if age <= fiveMinuteRetention {
			return 5 * time.Minute
		}
	}
	return time.Hour
}

// discoverSeries finds every series of the metric sources that belongs to
// one of the wanted instances (InstanceId → index) and gives each a query
// Id. The agent's series are found with one paginated ListMetrics of its
// namespace (every metric with an InstanceId dimension, filtered here by
// name), which gives their exact dimension sets; CPUUtilization is EC2's,
// whose one dimension is InstanceId, so it needs no listing.
func (p *Provider) discoverSeries(ctx context.Context, c cloudwatch.ListMetricsAPIClient, want map[string]int) ([]series, error) {
	ns := p.aws.metricsNamespace
	pg := cloudwatch.NewListMetricsPaginator(c, &cloudwatch.ListMetricsInput{
		Namespace:  aws.String(ns),
		Dimensions: []cwtypes.DimensionFilter{{Name: aws.String("InstanceId")}},
	})
	var all []series
	for pg.HasMorePages() {
		page, err := pg.NextPage(ctx)
		if err != nil {
			return nil, callError(ctx, "ListMetrics "+ns, err)
		}
		for _, m := range page.Metrics {
			src, ok := agentSources[aws.ToString(m.MetricName)]
			if !ok {
				continue
			}
			if s, ok := seriesOf(src, m, want); ok {
				all = append(all, s)
			}
		}
	}
	cpu := metricSources[kindCPU]
	for id, i := range want {
		all = append(all, series{inst: i, kind: kindCPU, gpu: -1, metric: cwtypes.Metric{
			Namespace:  aws.String(NamespaceEC2),
			MetricName: aws.String(cpu.name),
			Dimensions: []cwtypes.Dimension{{Name: aws.String("InstanceId"), Value: aws.String(id)}},
		}})
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

// readSeries reads every series with GetMetricData at the period, batched
// so that no call exceeds CloudWatch's query or datapoint limits, and
// returns each instance's grid (by index into the instances read) over the
// periods from window.Start. Each series' values land in its own row, so
// the batches run in parallel without sharing memory; a series repeated
// (the same instance, metric and GPU under other dimensions) fills in the
// periods the earlier ones left empty, later series winning, in the
// deterministic order of discoverSeries.
func (p *Provider) readSeries(ctx context.Context, c cloudwatch.GetMetricDataAPIClient, all []series, window fleet.TimeRange, period time.Duration, stat string) (map[int]*grid, int, error) {
	base := window.Start.UTC().Truncate(period)
	steps := max(int((window.End.Sub(base)+period-1)/period), 1)
	batch := min(maxQueriesPerCall, max(1, maxDatapointsPerCall/steps))
	nBatches := (len(all) + batch - 1) / batch
	slab := providers.NaNRow(len(all) * steps)
	rowOf := func(i int) []float64 { return slab[i*steps : (i+1)*steps : (i+1)*steps] }
	err := parallel(ctx, nBatches, p.opts.Concurrency, func(ctx context.Context, b int) error {
		first := b * batch
		part := all[first:min(first+batch, len(all))]
		queries := make([]cwtypes.MetricDataQuery, len(part))
		index := make(map[string]int, len(part))
		for i, s := range part {
			m := s.metric
			queries[i] = cwtypes.MetricDataQuery{
				Id: aws.String(s.id),
				MetricStat: &cwtypes.MetricStat{
					Metric: &m,
					Period: aws.Int32(int32(period / time.Second)),
					Stat:   aws.String(stat),
				},
				ReturnData: aws.Bool(true),
			}
			index[s.id] = first + i
		}
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
				si, ok := index[aws.ToString(r.Id)]
				if !ok {
					continue
				}
				row := rowOf(si)
				for k, t := range r.Timestamps {
					if k >= len(r.Values) || t.Before(window.Start) || !t.Before(window.End) || math.IsNaN(r.Values[k]) {
						continue
					}
					// base is a multiple of the period at or before
					// window.Start, so this is t's period less base's.
					if at := int(t.Sub(base) / period); at >= 0 && at < steps {
						row[at] = r.Values[k]
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	out := map[int]*grid{}
	for i, s := range all {
		row := rowOf(i)
		if !hasValue(row) {
			continue
		}
		g := out[s.inst]
		if g == nil {
			g = &grid{}
			out[s.inst] = g
		}
		g.merge(s.kind, s.gpu, row)
	}
	return out, steps, nil
}

func hasValue(row []float64) bool {
	for _, v := range row {
		if !math.IsNaN(v) {
			return true
		}
	}
	return false
}

// toSamples turns an instance's grid into time-ordered samples, one per
// period with any datapoint (the first at base), and counts those periods.
// Readings are kept within 0–100 (the fleet format's range). GPU values are
// in index order; a series without an index dimension (an aggregate) is
// used only in a period without per-index ones. GPU memory is used / total
// × 100 per index; a total missing in some period is taken from the others
// (it does not change). The samples share a few backing arrays, so an
// instance's readings are a handful of allocations, not several a sample.
func toSamples(g *grid, base time.Time, period time.Duration, steps int) ([]fleet.Sample, int) {
	if g == nil {
		return nil, 0
	}
	present := make([]bool, steps)
	for _, m := range []map[int][]float64{g.gpu, g.used, g.total} {
		for _, r := range m {
			providers.MarkPresent(present, r)
		}
	}
	providers.MarkPresent(present, g.cpu)
	providers.MarkPresent(present, g.mem)
	n := 0
	for _, p := range present {
		if p {
			n++
		}
	}
	if n == 0 {
		return nil, 0
	}
	gpuIdx, usedIdx := providers.RowIndexes(g.gpu), providers.RowIndexes(g.used)
	gpuRows := rowsOf(g.gpu, gpuIdx)
	usedRows, totalRows := rowsOf(g.used, usedIdx), rowsOf(g.total, usedIdx)
	// totals are each index's largest total, for the periods without one.
	totals := make([]float64, len(usedIdx))
	for j, r := range totalRows {
		for _, v := range r {
			if !math.IsNaN(v) {
				totals[j] = max(totals[j], v)
			}
		}
	}
	samples := make([]fleet.Sample, 0, n)
	gpuSlab := make([]float64, 0, n*len(gpuIdx))
	memSlab := make([]float64, 0, n*len(usedIdx))
	hostSlab := make([]float64, 0, 2*n)
	var at []int // the positions in usedIdx read in a period
	base = base.UTC()
	for k := 0; k < steps; k++ {
		if !present[k] {
			continue
		}
		s := fleet.Sample{Time: base.Add(time.Duration(k) * period)}
		if g.cpu != nil && !math.IsNaN(g.cpu[k]) {
			hostSlab = append(hostSlab, percent(g.cpu[k]))
			s.CPU = &hostSlab[len(hostSlab)-1]
		}
		if g.mem != nil && !math.IsNaN(g.mem[k]) {
			hostSlab = append(hostSlab, percent(g.mem[k]))
			s.Memory = &hostSlab[len(hostSlab)-1]
		}
		from := len(gpuSlab)
		for _, j := range positionsAt(gpuIdx, gpuRows, k, &at) {
			gpuSlab = append(gpuSlab, percent(gpuRows[j][k]))
		}
		if len(gpuSlab) > from {
			s.GPU = fleet.PerGPU(gpuSlab[from:len(gpuSlab):len(gpuSlab)])
		}
		from = len(memSlab)
		for _, j := range positionsAt(usedIdx, usedRows, k, &at) {
			total := 0.0
			if r := totalRows[j]; r != nil && !math.IsNaN(r[k]) {
				total = r[k]
			}
			if total <= 0 {
				total = totals[j]
			}
			if total > 0 {
				memSlab = append(memSlab, percent(round6(usedRows[j][k]/total*100)))
			}
		}
		if len(memSlab) > from {
			s.GPUMemory = fleet.PerGPU(memSlab[from:len(memSlab):len(memSlab)])
		}
		samples = append(samples, s)
	}
	return samples, n
}

// rowsOf lists a grid's rows in the order of keys (nil for a key without
// one).
func rowsOf(m map[int][]float64, keys []int) [][]float64 {
	rows := make([][]float64, len(keys))
	for j, i := range keys {
		rows[j] = m[i]
	}
	return rows
}

// positionsAt lists, into *buf, the positions in keys (sorted, the
// aggregate -1 first) of the rows with a value in period k: the per-index
// ones, or the aggregate's when there are none.
func positionsAt(keys []int, rows [][]float64, k int, buf *[]int) []int {
	out := (*buf)[:0]
	agg := -1
	for j, i := range keys {
		if math.IsNaN(rows[j][k]) {
			continue
		}
		if i < 0 {
			agg = j
			continue
		}
		out = append(out, j)
	}
	if len(out) == 0 && agg >= 0 {
		out = append(out, agg)
	}
	*buf = out
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
