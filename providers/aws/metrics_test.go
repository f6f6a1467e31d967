package aws

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/aws/smithy-go"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers"
)

// fakeCW is an in-memory CloudWatch: ListMetrics pages of 500 and
// GetMetricData over values from a function, one per query period.
type fakeCW struct {
	mu      sync.Mutex
	metrics []cwtypes.Metric
	value   func(m cwtypes.Metric, t time.Time) (float64, bool)
	err     error

	listCalls      map[string]int // by metric name ("" for a listing of every name)
	getCalls       int
	maxQueries     int
	maxDatapoints  int
	queried        map[string]bool // instance IDs in any query
	periods, stats map[string]bool
	starts, ends   []time.Time
}

func newFakeCW() *fakeCW {
	return &fakeCW{listCalls: map[string]int{}, queried: map[string]bool{}, periods: map[string]bool{}, stats: map[string]bool{}}
}

func metricDim(m cwtypes.Metric, name string) string {
	for _, d := range m.Dimensions {
		if aws.ToString(d.Name) == name {
			return aws.ToString(d.Value)
		}
	}
	return ""
}

func (f *fakeCW) add(ns, name string, dims ...string) {
	m := cwtypes.Metric{Namespace: aws.String(ns), MetricName: aws.String(name)}
	for i := 0; i+1 < len(dims); i += 2 {
		m.Dimensions = append(m.Dimensions, cwtypes.Dimension{Name: aws.String(dims[i]), Value: aws.String(dims[i+1])})
	}
	f.metrics = append(f.metrics, m)
}

// addGPUInstance adds the agent's series of an instance with n GPUs, and its
// host series.
func (f *fakeCW) addGPUInstance(id string, n int) {
	for i := range n {
		for _, name := range []string{MetricGPUUtilization, MetricGPUMemoryUsed, MetricGPUMemoryTotal} {
			f.add(DefaultNamespace, name, "InstanceId", id, "InstanceType", "g5.12xlarge", "index", strconv.Itoa(i), "name", "A10G")
		}
	}
	f.add(DefaultNamespace, MetricMemoryUsed, "InstanceId", id, "InstanceType", "g5.12xlarge")
	f.add(NamespaceEC2, MetricCPU, "InstanceId", id)
}

func (f *fakeCW) ListMetrics(ctx context.Context, in *cloudwatch.ListMetricsInput, _ ...func(*cloudwatch.Options)) (*cloudwatch.ListMetricsOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.listCalls[aws.ToString(in.MetricName)]++
	if f.err != nil {
		return nil, f.err
	}
	var match []cwtypes.Metric
	for _, m := range f.metrics {
		if aws.ToString(m.Namespace) != aws.ToString(in.Namespace) || (in.MetricName != nil && aws.ToString(m.MetricName) != *in.MetricName) {
			continue
		}
		ok := true
		for _, df := range in.Dimensions {
			v := metricDim(m, aws.ToString(df.Name))
			if v == "" || (df.Value != nil && v != *df.Value) {
				ok = false
			}
		}
		if ok {
			match = append(match, m)
		}
	}
	start, _ := strconv.Atoi(aws.ToString(in.NextToken))
	end := min(start+500, len(match))
	out := &cloudwatch.ListMetricsOutput{Metrics: match[start:end]}
	if end < len(match) {
		out.NextToken = aws.String(strconv.Itoa(end))
	}
	return out, nil
}

func sameMetric(a, b cwtypes.Metric) bool {
	if aws.ToString(a.Namespace) != aws.ToString(b.Namespace) || aws.ToString(a.MetricName) != aws.ToString(b.MetricName) || len(a.Dimensions) != len(b.Dimensions) {
		return false
	}
	for _, d := range a.Dimensions {
		if metricDim(b, aws.ToString(d.Name)) != aws.ToString(d.Value) {
			return false
		}
	}
	return true
}

func (f *fakeCW) GetMetricData(ctx context.Context, in *cloudwatch.GetMetricDataInput, _ ...func(*cloudwatch.Options)) (*cloudwatch.GetMetricDataOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.getCalls++
	if f.err != nil {
		return nil, f.err
	}
	if len(in.MetricDataQueries) > 500 {
		return nil, &smithy.GenericAPIError{Code: "ValidationError", Message: "too many queries"}
	}
	f.maxQueries = max(f.maxQueries, len(in.MetricDataQueries))
	f.starts = append(f.starts, *in.StartTime)
	f.ends = append(f.ends, *in.EndTime)
	out := &cloudwatch.GetMetricDataOutput{}
	points := 0
	for _, q := range in.MetricDataQueries {
		ms := q.MetricStat
		f.periods[strconv.Itoa(int(aws.ToInt32(ms.Period)))] = true
		f.stats[aws.ToString(ms.Stat)] = true
		f.queried[metricDim(*ms.Metric, "InstanceId")] = true
		r := cwtypes.MetricDataResult{Id: q.Id, StatusCode: cwtypes.StatusCodeComplete}
		for _, m := range f.metrics {
			if !sameMetric(m, *ms.Metric) {
				continue
			}
			step := time.Duration(aws.ToInt32(ms.Period)) * time.Second
			for t := in.EndTime.Add(-step); !t.Before(*in.StartTime); t = t.Add(-step) {
				if v, ok := f.value(m, t); ok {
					r.Timestamps = append(r.Timestamps, t)
					r.Values = append(r.Values, v)
				}
			}
		}
		points += len(r.Values)
		out.MetricDataResults = append(out.MetricDataResults, r)
	}
	f.maxDatapoints = max(f.maxDatapoints, points)
	return out, nil
}

// weekdaysEightToEight is a Mon–Fri 08:00–20:00 UTC schedule.
func weekdaysEightToEight(t time.Time) bool {
	wd := t.UTC().Weekday()
	return wd != time.Saturday && wd != time.Sunday && t.UTC().Hour() >= 8 && t.UTC().Hour() < 20
}

// demoWeek is the week the demo fleet's utilization covers (Monday to Monday).
var demoWeek = fleet.TimeRange{Start: time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC), End: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)}

func TestReadUtilizationUnit(t *testing.T) {
	f := newFakeCW()
	f.addGPUInstance("i-train", 4)
	f.addGPUInstance("i-stopped", 1)
	f.addGPUInstance("i-elsewhere", 1)
	f.add(NamespaceEC2, MetricCPU, "InstanceId", "i-noagent")
	// An aggregate series (aggregation_dimensions [["InstanceId"]]) next to
	// per-index ones is ignored; alone it stands for the instance's GPU.
	f.addGPUInstance("i-agg", 2)
	f.add(DefaultNamespace, MetricGPUUtilization, "InstanceId", "i-agg")
	f.add(DefaultNamespace, MetricGPUUtilization, "InstanceId", "i-aggonly")
	f.value = func(m cwtypes.Metric, t time.Time) (float64, bool) {
		id, idx := metricDim(m, "InstanceId"), metricDim(m, "index")
		k, _ := strconv.Atoi(idx)
		if id == "i-train" && !weekdaysEightToEight(t) {
			return 0, false
		}
		switch aws.ToString(m.MetricName) {
		case MetricGPUUtilization:
			if idx == "" {
				return 99, true
			}
			return 50 + float64(k), true
		case MetricGPUMemoryUsed:
			return (40 + float64(k)) / 100 * 16384, true
		case MetricGPUMemoryTotal:
			if t.Hour() == 9 { // a missing total is taken from the other hours
				return 0, false
			}
			return 16384, true
		case MetricMemoryUsed:
			return 40, true
		default:
			return 30, true
		}
	}
	instances := []fleet.Instance{
		{ID: "i-train", State: fleet.Running, Usage: fleet.Usage{HoursPerWeek: ptrOf(168.0)}},
		{ID: "i-noagent", State: fleet.Running},
		{ID: "i-stopped", State: fleet.Stopped},
		{ID: "i-agg", State: fleet.Running},
		{ID: "i-aggonly", State: fleet.Running},
		{ID: "i-nothing", State: fleet.Running},
	}
	p := unitProvider()
	// A window of whole hours off the hour is read hourly, aligned to the
	// hour.
	window := fleet.TimeRange{Start: demoWeek.Start.Add(20 * time.Minute), End: demoWeek.End.Add(20 * time.Minute)}
	notes, err := p.readUtilization(context.Background(), f, instances, window)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range f.starts {
		if !s.Equal(demoWeek.Start) {
			t.Errorf("StartTime = %v, want %v", s, demoWeek.Start)
		}
	}
	for _, e := range f.ends {
		if !e.Equal(demoWeek.End) {
			t.Errorf("EndTime = %v, want %v", e, demoWeek.End)
		}
	}
	if !f.periods["3600"] || len(f.periods) != 1 || !f.stats["Average"] || len(f.stats) != 1 {
		t.Errorf("periods %v, stats %v; want 3600 and Average only", f.periods, f.stats)
	}
	if f.queried["i-stopped"] || f.queried["i-elsewhere"] {
		t.Errorf("queried a stopped or unlisted instance: %v", f.queried)
	}
	// One listing of the agent's namespace, every name at once; CPU is
	// EC2's and needs none.
	if len(f.listCalls) != 1 || f.listCalls[""] != 1 {
		t.Errorf("ListMetrics calls by name %v, want one listing of every name", f.listCalls)
	}
	if f.getCalls != 1 {
		t.Errorf("GetMetricData calls = %d, want 1", f.getCalls)
	}

	train := instances[0]
	u := train.Utilization
	if u == nil || len(u.Samples) != 60 {
		t.Fatalf("i-train utilization = %+v, want 60 hourly samples", u)
	}
	if !u.Window.Start.Equal(demoWeek.Start) || !u.Window.End.Equal(demoWeek.End) {
		t.Errorf("window = %+v", u.Window)
	}
	s := u.Samples[0]
	if !s.Time.Equal(time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)) || !slices.Equal(s.GPU, fleet.PerGPU{50, 51, 52, 53}) ||
		!slices.Equal(s.GPUMemory, fleet.PerGPU{40, 41, 42, 43}) || *s.CPU != 30 || *s.Memory != 40 {
		t.Errorf("first sample = %+v (gpuMemory %v)", s, s.GPUMemory)
	}
	if !slices.Equal(u.Samples[1].GPUMemory, fleet.PerGPU{40, 41, 42, 43}) {
		t.Errorf("09:00 sample without a total: gpuMemory %v", u.Samples[1].GPUMemory)
	}
	if h := train.Usage.HoursPerMonth; h == nil || math.Abs(*h-60.0/168*730) > 1e-9 || train.Usage.HoursPerWeek != nil {
		t.Errorf("i-train usage = %+v, want 260.71 hours a month only", train.Usage)
	}
	sum := u.Summarize()
	if sum.GPU.Avg != 53 || sum.GPUMemory.Max != 43 || sum.CPU.Avg != 30 {
		t.Errorf("summary = %+v %+v %+v", sum.GPU, sum.GPUMemory, sum.CPU)
	}

	if instances[1].Utilization != nil {
		t.Errorf("i-noagent has utilization %+v", instances[1].Utilization)
	}
	if h := instances[1].Usage.HoursPerMonth; h == nil || *h != 730 {
		t.Errorf("i-noagent runs every hour: usage %+v", instances[1].Usage)
	}
	if instances[2].Utilization != nil || instances[2].Usage.HoursPerMonth != nil {
		t.Errorf("stopped instance touched: %+v", instances[2])
	}
	if g := instances[3].Utilization.Samples[0].GPU; !slices.Equal(g, fleet.PerGPU{50, 51}) {
		t.Errorf("i-agg GPU = %v, want the per-index values only", g)
	}
	if g := instances[4].Utilization.Samples[0].GPU; !slices.Equal(g, fleet.PerGPU{99}) {
		t.Errorf("i-aggonly GPU = %v, want the aggregate", g)
	}
	if instances[5].Utilization != nil || instances[5].Usage.HoursPerMonth != nil {
		t.Errorf("i-nothing = %+v", instances[5])
	}
	want := []string{
		"i-noagent: no GPU metrics in CWAgent: install the CloudWatch agent with the nvidia_gpu block (append_dimensions InstanceId)",
		"i-nothing: no GPU metrics in CWAgent: install the CloudWatch agent with the nvidia_gpu block (append_dimensions InstanceId)",
	}
	if !slices.Equal(notes, want) {
		t.Errorf("notes = %q\nwant %q", notes, want)
	}
}

func ptrOf[T any](v T) *T { return &v }

func TestReadUtilizationBatches(t *testing.T) {
	for _, tt := range []struct {
		days      int
		wantCalls int
	}{
		{7, 4},  // 1,600 series, 500 a call: 168 h × 500 fits in 100,800 datapoints
		{14, 6}, // 336 h: 300 series a call keep a call within 100,800 datapoints
	} {
		f := newFakeCW()
		var instances []fleet.Instance
		want := map[string]int{}
		for i := range 400 {
			id := "i-" + strconv.Itoa(i)
			for _, name := range []string{MetricGPUUtilization, MetricGPUMemoryUsed, MetricGPUMemoryTotal} {
				f.add(DefaultNamespace, name, "InstanceId", id, "InstanceType", "g5.xlarge", "index", "0", "name", "A10G")
			}
			f.add(NamespaceEC2, MetricCPU, "InstanceId", id)
			instances = append(instances, fleet.Instance{ID: id, State: fleet.Running})
			want[id] = i
		}
		f.value = func(cwtypes.Metric, time.Time) (float64, bool) { return 10, true }
		end := demoWeek.End
		w := fleet.TimeRange{Start: end.AddDate(0, 0, -tt.days), End: end}
		notes, err := unitProvider().readUtilization(context.Background(), f, instances, w)
		if err != nil {
			t.Fatal(err)
		}
		if f.getCalls != tt.wantCalls || f.maxQueries > 500 || f.maxDatapoints > 100800 {
			t.Errorf("%d days: %d GetMetricData calls (max %d queries, %d datapoints), want %d", tt.days, f.getCalls, f.maxQueries, f.maxDatapoints, tt.wantCalls)
		}
		if f.listCalls[""] != 3 {
			t.Errorf("ListMetrics pages for 1,200 series: %d, want 3", f.listCalls[""])
		}
		if len(notes) != 0 || len(instances[399].Utilization.Samples) != tt.days*24 {
			t.Errorf("%d days: notes %v, samples %d", tt.days, notes, len(instances[399].Utilization.Samples))
		}
	}
}

func TestReadUtilizationMinutes(t *testing.T) {
	now := time.Date(2026, 11, 30, 10, 30, 20, 0, time.UTC)
	f := newFakeCW()
	var instances []fleet.Instance
	for i := range 600 {
		id := "i-" + strconv.Itoa(i)
		for _, name := range []string{MetricGPUUtilization, MetricGPUMemoryUsed, MetricGPUMemoryTotal} {
			f.add(DefaultNamespace, name, "InstanceId", id, "InstanceType", "g5.xlarge", "index", "0", "name", "A10G")
		}
		f.add(NamespaceEC2, MetricCPU, "InstanceId", id)
		instances = append(instances, fleet.Instance{ID: id, State: fleet.Running})
	}
	// i-0's agent reports from 10:10 only; i-1 is busy from 10:25.
	f.value = func(m cwtypes.Metric, at time.Time) (float64, bool) {
		id := metricDim(m, "InstanceId")
		switch {
		case id == "i-0" && at.Minute() < 10:
			return 0, false
		case aws.ToString(m.MetricName) == MetricGPUMemoryTotal:
			return 1000, true
		case id == "i-1" && at.Minute() >= 25:
			return 90, true
		}
		return 5, true
	}
	p := unitProvider()
	p.opts.Now = func() time.Time { return now }
	// idle-stop's window: the last 30 minutes up to the last whole minute.
	end := now.Truncate(time.Minute)
	notes, err := p.readUtilization(context.Background(), f, instances, fleet.TimeRange{Start: end.Add(-30 * time.Minute), End: end})
	if err != nil || len(notes) != 0 {
		t.Fatal(notes, err)
	}
	if !f.periods["60"] || len(f.periods) != 1 {
		t.Errorf("periods %v, want 60 only", f.periods)
	}
	// 2,400 series: ⌈2400/500⌉ calls of at most 500 queries × 30 datapoints.
	if f.getCalls != 5 || f.maxQueries != 500 || f.maxDatapoints != 500*30 {
		t.Errorf("%d GetMetricData calls, at most %d queries and %d datapoints; want 5, 500, 15,000", f.getCalls, f.maxQueries, f.maxDatapoints)
	}
	for _, s := range f.starts {
		if !s.Equal(end.Add(-30*time.Minute)) || !f.ends[0].Equal(end) {
			t.Errorf("StartTime %v, EndTime %v", s, f.ends[0])
		}
	}
	u := instances[5].Utilization
	if u == nil || len(u.Samples) != 30 || !u.Samples[0].Time.Equal(end.Add(-30*time.Minute)) || !u.Samples[29].Time.Equal(end.Add(-time.Minute)) {
		t.Fatalf("i-5: %+v, want 30 samples a minute apart", u)
	}
	if h := instances[5].Usage.HoursPerMonth; h == nil || *h != 730 {
		t.Errorf("i-5 ran the whole window: %v hours a month", instances[5].Usage)
	}
	// Missing minutes are absent; the samples carry their real times, and
	// the running time is the minutes with data.
	u0 := instances[0].Utilization
	if len(u0.Samples) != 20 || !u0.Samples[0].Time.Equal(time.Date(2026, 11, 30, 10, 10, 0, 0, time.UTC)) {
		t.Errorf("i-0: %d samples from %v, want 20 from 10:10", len(u0.Samples), u0.Samples[0].Time)
	}
	if h := instances[0].Usage.HoursPerMonth; h == nil || math.Abs(*h-20.0/30*730) > 1e-9 {
		t.Errorf("i-0 reported 20 of 30 minutes: %v hours a month", *h)
	}
	s1 := instances[1].Utilization.Samples
	if s1[24].GPU[0] != 5 || s1[25].GPU[0] != 90 || s1[29].GPUMemory[0] != 9 {
		t.Errorf("i-1 at 10:24, 10:25, 10:29: %v %v %v", s1[24], s1[25], s1[29])
	}
}

func TestMetricWindow(t *testing.T) {
	now := time.Date(2026, 11, 30, 10, 30, 20, 0, time.UTC)
	p := unitProvider()
	p.opts.Now = func() time.Time { return now }
	w, period, note := p.metricWindow(fleet.TimeRange{})
	if !w.End.Equal(now.Truncate(time.Hour)) || w.Hours() != 14*24 || period != time.Hour || note != "" {
		t.Errorf("default window = %v – %v at %v (%q)", w.Start, w.End, period, note)
	}
	w, period, note = p.metricWindow(fleet.TimeRange{Start: now.AddDate(-2, 0, 0), End: now})
	if w.Hours() != 455*24 || period != time.Hour || !strings.Contains(note, "455 days") {
		t.Errorf("two-year window = %v hours at %v (%q), want 455 days", w.Hours(), period, note)
	}
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	day := 24 * time.Hour
	for _, c := range []struct {
		name       string
		w          fleet.TimeRange
		period     time.Duration
		start, end time.Time
	}{
		{"idle-stop's 30 minutes", fleet.TimeRange{Start: ago(30 * time.Minute), End: now}, time.Minute,
			time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC), time.Date(2026, 11, 30, 10, 30, 0, 0, time.UTC)},
		{"3 hours", fleet.TimeRange{Start: ago(3 * time.Hour), End: now}, time.Minute,
			time.Date(2026, 11, 30, 7, 30, 0, 0, time.UTC), time.Date(2026, 11, 30, 10, 30, 0, 0, time.UTC)},
		{"5 h 30", fleet.TimeRange{Start: ago(5*time.Hour + 30*time.Minute), End: now}, 5 * time.Minute,
			time.Date(2026, 11, 30, 5, 0, 0, 0, time.UTC), time.Date(2026, 11, 30, 10, 30, 0, 0, time.UTC)},
		{"6 hours", fleet.TimeRange{Start: ago(6 * time.Hour), End: now}, time.Hour,
			time.Date(2026, 11, 30, 4, 0, 0, 0, time.UTC), time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)},
		{"7 days 30 minutes", fleet.TimeRange{Start: ago(7*day + 30*time.Minute), End: now}, 5 * time.Minute,
			time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC), time.Date(2026, 11, 30, 10, 30, 0, 0, time.UTC)},
		{"16 days 30 minutes", fleet.TimeRange{Start: ago(16*day + 30*time.Minute), End: now}, time.Hour,
			time.Date(2026, 11, 14, 10, 0, 0, 0, time.UTC), time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)},
		// Past CloudWatch's retention for the finer periods.
		{"30 minutes 20 days ago", fleet.TimeRange{Start: ago(20*day + 30*time.Minute), End: ago(20 * day)}, 5 * time.Minute,
			time.Date(2026, 11, 10, 10, 0, 0, 0, time.UTC), time.Date(2026, 11, 10, 10, 30, 0, 0, time.UTC)},
		{"30 minutes 70 days ago", fleet.TimeRange{Start: ago(70*day + 30*time.Minute), End: ago(70 * day)}, time.Hour,
			time.Date(2026, 9, 21, 10, 0, 0, 0, time.UTC), time.Date(2026, 9, 21, 11, 0, 0, 0, time.UTC)},
		{"20 hours 30, 40 days ago", fleet.TimeRange{Start: ago(40*day + 20*time.Hour + 30*time.Minute), End: ago(40 * day)}, 5 * time.Minute,
			time.Date(2026, 10, 20, 14, 0, 0, 0, time.UTC), time.Date(2026, 10, 21, 10, 30, 0, 0, time.UTC)},
	} {
		w, period, note := p.metricWindow(c.w)
		if period != c.period || !w.Start.Equal(c.start) || !w.End.Equal(c.end) || note != "" {
			t.Errorf("%s: %v – %v at %v (%q), want %v – %v at %v", c.name, w.Start, w.End, period, note, c.start, c.end, c.period)
		}
	}
}

func TestReadUtilizationErrors(t *testing.T) {
	f := newFakeCW()
	f.err = &smithy.GenericAPIError{Code: "AccessDenied", Message: "no cloudwatch:ListMetrics"}
	instances := []fleet.Instance{{ID: "i-1", State: fleet.Running}}
	_, err := unitProvider().readUtilization(context.Background(), f, instances, demoWeek)
	if !errors.Is(err, providers.ErrPermission) || !strings.Contains(err.Error(), "ListMetrics") {
		t.Errorf("err = %v, want ErrPermission naming ListMetrics", err)
	}
	// Only stopped instances: nothing to read, no client needed.
	notes, err := unitProvider().ReadUtilization(context.Background(), providers.Scope{}, []fleet.Instance{{ID: "i-1", State: fleet.Stopped}}, demoWeek)
	if err != nil || notes != nil {
		t.Errorf("stopped only: %v, %v", notes, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := unitProvider().ReadUtilization(ctx, providers.Scope{}, instances, demoWeek); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

func TestParallel(t *testing.T) {
	var mu sync.Mutex
	running, peak := 0, 0
	err := parallel(context.Background(), 20, 3, func(ctx context.Context, i int) error {
		mu.Lock()
		running++
		peak = max(peak, running)
		mu.Unlock()
		time.Sleep(2 * time.Millisecond)
		mu.Lock()
		running--
		mu.Unlock()
		return nil
	})
	if err != nil || peak > 3 {
		t.Errorf("err %v, peak %d", err, peak)
	}
	boom := errors.New("boom")
	err = parallel(context.Background(), 50, 4, func(ctx context.Context, i int) error {
		if i == 2 {
			return boom
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
			return nil
		}
	})
	if !errors.Is(err, boom) {
		t.Errorf("err = %v, want boom", err)
	}
}

func TestToSamplesKeepsPercentages(t *testing.T) {
	base := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	g := &grid{}
	for kind, vals := range map[metricKind][2]float64{kindGPU: {100, 7}, kindGPUMemUsed: {23000, 0}, kindGPUMemTotal: {22888, 22888}} {
		for i, v := range vals {
			g.cells(kind, i, 1)[0] = v
		}
	}
	g.cells(kindCPU, -1, 1)[0] = 100.4
	g.cells(kindMemory, -1, 1)[0] = -1
	samples, running := toSamples(g, base, time.Hour, 1)
	if running != 1 || len(samples) != 1 {
		t.Fatalf("%d samples, %d running hours", len(samples), running)
	}
	s := samples[0]
	if !slices.Equal(s.GPUMemory, fleet.PerGPU{100, 0}) || !slices.Equal(s.GPU, fleet.PerGPU{100, 7}) {
		t.Errorf("gpu %v gpuMemory %v", s.GPU, s.GPUMemory)
	}
	if *s.CPU != 100 || *s.Memory != 0 {
		t.Errorf("cpu %v memory %v", *s.CPU, *s.Memory)
	}
	f := fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind, Instances: []fleet.Instance{{
		ID: "i-1", Provider: fleet.AWS, Region: "us-east-1", InstanceType: "g5.12xlarge", Lifecycle: fleet.OnDemand, State: fleet.Running,
		GPU: fleet.GPU{Model: "A10G", Count: 2}, Utilization: &fleet.Utilization{Samples: samples},
	}}}
	if err := f.Validate(); err != nil {
		t.Errorf("the samples do not validate: %v", err)
	}
}

// refStep and refToSamples are the map-per-period reading the grid
// replaced, kept as the reference the grid must agree with.
type refStep struct {
	gpu, used, total map[int]float64
	cpu, mem         *float64
}

func refToSamples(hours map[int64]*refStep) ([]fleet.Sample, int) {
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
	slices.Sort(keys)
	var samples []fleet.Sample
	for _, h := range keys {
		d := hours[h]
		s := fleet.Sample{Time: time.Unix(h, 0).UTC(), CPU: percentPtr(d.cpu), Memory: percentPtr(d.mem)}
		s.GPU = refPerIndex(d.gpu, func(_ int, v float64) (float64, bool) { return percent(v), true })
		s.GPUMemory = refPerIndex(d.used, func(i int, used float64) (float64, bool) {
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

func refPerIndex(values map[int]float64, f func(i int, v float64) (float64, bool)) fleet.PerGPU {
	if len(values) == 0 {
		return nil
	}
	var idx []int
	for i := range values {
		if i >= 0 {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		idx = append(idx, -1)
	}
	slices.Sort(idx)
	var out fleet.PerGPU
	for _, i := range idx {
		if v, ok := f(i, values[i]); ok {
			out = append(out, v)
		}
	}
	return out
}

// TestToSamplesMatchesReference: on random grids (GPUs with and without an
// index, gaps, totals missing or zero in some periods, values outside
// 0–100) the samples are those of the map-per-period reading.
func TestToSamplesMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 1))
	base := time.Date(2026, 11, 16, 0, 0, 0, 0, time.UTC)
	for trial := 0; trial < 500; trial++ {
		steps := 1 + rng.IntN(40)
		g := &grid{}
		ref := map[int64]*refStep{}
		put := func(kind metricKind, gpu, k int, v float64) {
			g.cells(kind, gpu, steps)[k] = v
			h := base.Add(time.Duration(k) * time.Hour).Unix()
			d := ref[h]
			if d == nil {
				d = &refStep{gpu: map[int]float64{}, used: map[int]float64{}, total: map[int]float64{}}
				ref[h] = d
			}
			switch kind {
			case kindGPU:
				d.gpu[gpu] = v
			case kindGPUMemUsed:
				d.used[gpu] = v
			case kindGPUMemTotal:
				d.total[gpu] = v
			case kindMemory:
				d.mem = &v
			case kindCPU:
				d.cpu = &v
			}
		}
		gpus := rng.IntN(4)
		density := rng.Float64()
		for k := 0; k < steps; k++ {
			for i := -1; i < gpus; i++ {
				for _, kind := range []metricKind{kindGPU, kindGPUMemUsed, kindGPUMemTotal} {
					if rng.Float64() < density {
						v := rng.Float64()*140 - 20
						if kind == kindGPUMemTotal && rng.IntN(5) == 0 {
							v = 0
						}
						put(kind, i, k, v)
					}
				}
			}
			for _, kind := range []metricKind{kindCPU, kindMemory} {
				if rng.Float64() < density {
					put(kind, -1, k, rng.Float64()*140-20)
				}
			}
		}
		var want []fleet.Sample
		wantN := 0
		if len(ref) > 0 {
			want, wantN = refToSamples(ref)
		}
		var in *grid
		if g.gpu != nil || g.used != nil || g.total != nil || g.cpu != nil || g.mem != nil {
			in = g
		}
		got, gotN := toSamples(in, base, time.Hour, steps)
		if gotN != wantN || !reflect.DeepEqual(got, want) {
			t.Fatalf("trial %d (%d steps, %d GPUs): got %d periods %v, want %d %v", trial, steps, gpus, gotN, got, wantN, want)
		}
	}
}
