package sim

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch/schemas"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/transport/http/protocol/awsjson"
	"github.com/aws/smithy-go/transport/http/protocol/awsquery"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
	"github.com/gpufinops/gpufinops/providers/file"
)

// cwNow is the end of the demo's utilization window.
var cwNow = time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)

// cwProtocols are the wire formats a CloudWatch client can speak.
var cwProtocols = []string{"cbor", "json", "query"}

// cwDemo is the demo fleet completed from the catalog, as cloudsim serves it.
func cwDemo(t *testing.T) *fleet.Fleet {
	t.Helper()
	f, err := file.Demo()
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	if err := pricing.Complete(f, cat); err != nil {
		t.Fatal(err)
	}
	return f
}

func cwServe(t *testing.T, f *fleet.Fleet, opts Options) (*Server, *httptest.Server) {
	t.Helper()
	if opts.Now == nil {
		opts.Now = func() time.Time { return cwNow }
	}
	s := New(f, opts)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return s, srv
}

// cwClient is a real SDK client in one of the protocols; "cbor" is the
// SDK's default. Anonymous requests count as us-east-1.
func cwClient(srv *httptest.Server, proto string) *cloudwatch.Client {
	return cloudwatch.New(cloudwatch.Options{
		BaseEndpoint: aws.String(srv.URL), Region: "us-east-1",
		Credentials: aws.AnonymousCredentials{}, RetryMaxAttempts: 1, HTTPClient: testHTTP,
	}, func(o *cloudwatch.Options) {
		switch proto {
		case "json":
			o.Protocol = awsjson.New10(schemas.GraniteServiceVersion20100801)
		case "query":
			o.Protocol = awsquery.New(schemas.GraniteServiceVersion20100801)
		}
	})
}

func cwCode(err error) string {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		return apiErr.ErrorCode()
	}
	return ""
}

// listAll pages through ListMetrics and counts the pages.
func listAll(t *testing.T, c *cloudwatch.Client, in *cloudwatch.ListMetricsInput) ([]cwtypes.Metric, int) {
	t.Helper()
	var out []cwtypes.Metric
	pages := 0
	pg := cloudwatch.NewListMetricsPaginator(c, in)
	for pg.HasMorePages() {
		page, err := pg.NextPage(context.Background())
		if err != nil {
			t.Fatalf("ListMetrics: %v", err)
		}
		out = append(out, page.Metrics...)
		pages++
	}
	return out, pages
}

// cwSeries is one result of GetMetricData, merged over pages.
type cwSeries struct {
	times  []time.Time
	values []float64
}

// fetch reads metrics with GetMetricData (period 3600, Average unless
// stat says otherwise) in ascending time, merging pages.
func fetch(t *testing.T, c *cloudwatch.Client, metrics []cwtypes.Metric, from, to time.Time, edit ...func(*cloudwatch.GetMetricDataInput)) map[string]*cwSeries {
	t.Helper()
	in := &cloudwatch.GetMetricDataInput{StartTime: aws.Time(from), EndTime: aws.Time(to), ScanBy: cwtypes.ScanByTimestampAscending}
	for i := range metrics {
		in.MetricDataQueries = append(in.MetricDataQueries, cwtypes.MetricDataQuery{
			Id:         aws.String("q" + strconv.Itoa(i)),
			MetricStat: &cwtypes.MetricStat{Metric: &metrics[i], Period: aws.Int32(3600), Stat: aws.String("Average")},
		})
	}
	for _, e := range edit {
		e(in)
	}
	out := map[string]*cwSeries{}
	pg := cloudwatch.NewGetMetricDataPaginator(c, in)
	for pg.HasMorePages() {
		page, err := pg.NextPage(context.Background())
		if err != nil {
			t.Fatalf("GetMetricData: %v", err)
		}
		for _, r := range page.MetricDataResults {
			id := aws.ToString(r.Id)
			if len(r.Timestamps) != len(r.Values) {
				t.Fatalf("%s: %d timestamps, %d values", id, len(r.Timestamps), len(r.Values))
			}
			if out[id] == nil {
				out[id] = &cwSeries{}
			}
			out[id].times = append(out[id].times, r.Timestamps...)
			out[id].values = append(out[id].values, r.Values...)
		}
	}
	return out
}

func dimsOf(m cwtypes.Metric) map[string]string {
	out := map[string]string{}
	for _, d := range m.Dimensions {
		out[aws.ToString(d.Name)] = aws.ToString(d.Value)
	}
	return out
}

// instanceData is an instance's metrics over a range, as the adapter reads
// them: hourly GPU and GPU memory (used/total) per index, CPU and memory.
type instanceData struct {
	gpu, gpuMem map[int]map[time.Time]float64
	cpu, mem    map[time.Time]float64
	hours       map[time.Time]bool // with any datapoint
}

// readInstance discovers an instance's series with ListMetrics (per metric
// name, filtered on InstanceId) and reads them over [from, to).
func readInstance(t *testing.T, c *cloudwatch.Client, id string, from, to time.Time) instanceData {
	t.Helper()
	var metrics []cwtypes.Metric
	for _, src := range []struct{ ns, name string }{
		{agentNamespace, metricGPUUtil}, {agentNamespace, metricGPUMemUsed}, {agentNamespace, metricGPUMemTotal},
		{agentNamespace, metricMemUsed}, {ec2Namespace, metricCPU},
	} {
		got, _ := listAll(t, c, &cloudwatch.ListMetricsInput{
			Namespace: aws.String(src.ns), MetricName: aws.String(src.name),
			Dimensions: []cwtypes.DimensionFilter{{Name: aws.String("InstanceId"), Value: aws.String(id)}},
		})
		metrics = append(metrics, got...)
	}
	res := fetch(t, c, metrics, from, to)
	d := instanceData{gpu: map[int]map[time.Time]float64{}, gpuMem: map[int]map[time.Time]float64{},
		cpu: map[time.Time]float64{}, mem: map[time.Time]float64{}, hours: map[time.Time]bool{}}
	used, total := map[int]map[time.Time]float64{}, map[int]map[time.Time]float64{}
	put := func(m map[int]map[time.Time]float64, i int, at time.Time, v float64) {
		if m[i] == nil {
			m[i] = map[time.Time]float64{}
		}
		m[i][at] = v
	}
	for i, m := range metrics {
		r := res["q"+strconv.Itoa(i)]
		if r == nil {
			t.Fatalf("no result for %s %v", aws.ToString(m.MetricName), dimsOf(m))
		}
		idx, _ := strconv.Atoi(dimsOf(m)["index"])
		for k, at := range r.times {
			at, v := at.UTC(), r.values[k]
			d.hours[at] = true
			switch aws.ToString(m.MetricName) {
			case metricGPUUtil:
				put(d.gpu, idx, at, v)
			case metricGPUMemUsed:
				put(used, idx, at, v)
			case metricGPUMemTotal:
				put(total, idx, at, v)
			case metricMemUsed:
				d.mem[at] = v
			case metricCPU:
				d.cpu[at] = v
			}
		}
	}
	for i, hours := range used {
		for at, u := range hours {
			put(d.gpuMem, i, at, u/total[i][at]*100)
		}
	}
	return d
}

func valuesOf(m map[time.Time]float64) []float64 {
	out := make([]float64, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

func roundCents(v float64) float64 { return math.Round(v*100) / 100 }

// statsOf is what the engine computes of hourly values, max rounded too.
func statsOf(values []float64) *fleet.Stats {
	st := fleet.StatsOf(values)
	if st != nil {
		st.Max = roundCents(st.Max)
	}
	return st
}

func TestGetMetricDataMatchesTheFileFigures(t *testing.T) {
	f := cwDemo(t)
	_, srv := cwServe(t, f, Options{})
	c := cwClient(srv, "cbor")
	from := cwNow.Add(-14 * 24 * time.Hour)
	checked := 0
	for _, in := range f.Instances {
		u := in.Utilization
		// SageMaker items have no CWAgent series: the SageMaker simulator
		// serves their metrics.
		if in.Provider != fleet.AWS || in.IsManaged() || u == nil || u.GPU == nil {
			continue
		}
		checked++
		t.Run(in.ID, func(t *testing.T) {
			d := readInstance(t, c, in.ID, from, cwNow)
			if len(d.gpu) != int(in.GPU.Count) || len(d.gpuMem) != int(in.GPU.Count) {
				t.Fatalf("%d GPU and %d GPU memory series, want %v each", len(d.gpu), len(d.gpuMem), in.GPU.Count)
			}
			for i := range d.gpu {
				if got := statsOf(valuesOf(d.gpu[i])); *got != *u.GPU {
					t.Errorf("GPU %d: %+v, want the file's %+v", i, *got, *u.GPU)
				}
				if got := statsOf(valuesOf(d.gpuMem[i])); *got != *u.GPUMemory {
					t.Errorf("GPU memory %d: %+v, want the file's %+v", i, *got, *u.GPUMemory)
				}
			}
			if got := statsOf(valuesOf(d.cpu)); *got != *u.CPU {
				t.Errorf("CPU: %+v, want the file's %+v", *got, *u.CPU)
			}
			if got := statsOf(valuesOf(d.mem)); *got != *u.Memory {
				t.Errorf("memory: %+v, want the file's %+v", *got, *u.Memory)
			}
			// Two weeks of the hours the file bills.
			weekly := fleet.HoursPerWeek
			switch us := in.Usage; {
			case us.Schedule != nil:
				weekly, _ = us.Schedule.HoursPerWeek()
			case us.HoursPerWeek != nil:
				weekly = *us.HoursPerWeek
			}
			if want := int(2 * weekly); len(d.hours) != want {
				t.Errorf("%d hours with data in 14 days, want %d", len(d.hours), want)
			}
			for _, at := range []map[time.Time]float64{d.gpu[0], d.gpuMem[0], d.cpu, d.mem} {
				if len(at) != len(d.hours) {
					t.Errorf("a series has %d hours of %d", len(at), len(d.hours))
				}
			}
		})
	}
	if checked != 12 {
		t.Errorf("%d demo instances with summary figures, want 12", checked)
	}
}

func TestTrainingNodeRunsItsSchedule(t *testing.T) {
	f := cwDemo(t)
	_, srv := cwServe(t, f, Options{})
	d := readInstance(t, cwClient(srv, "cbor"), "train-p4d-1", cwNow.Add(-14*24*time.Hour), cwNow)
	if len(d.hours) != 120 {
		t.Errorf("%d hours, want 120 (Mon–Fri 08–20, two weeks)", len(d.hours))
	}
	for at := range d.hours {
		if wd := at.Weekday(); wd == time.Saturday || wd == time.Sunday || at.Hour() < 8 || at.Hour() >= 20 {
			t.Errorf("datapoint at %s, outside the schedule", at)
		}
	}
	// Earlier weeks repeat the pattern on the same weekdays and hours.
	old := readInstance(t, cwClient(srv, "cbor"), "train-p4d-1", cwNow.Add(-63*24*time.Hour), cwNow.Add(-56*24*time.Hour))
	for at, v := range old.gpu[3] {
		if d.gpu[3][at.Add(56*24*time.Hour)] != v {
			t.Fatalf("%s: %v, not the value eight weeks on", at, v)
		}
	}
	if len(old.gpu[3]) != 60 {
		t.Errorf("an earlier week has %d hours, want 60", len(old.gpu[3]))
	}
}

func TestSamplesReplay(t *testing.T) {
	f := cwDemo(t)
	_, srv := cwServe(t, f, Options{})
	c := cwClient(srv, "cbor")
	for _, in := range f.Instances {
		u := in.Utilization
		if in.Provider != fleet.AWS || in.IsManaged() || u == nil || len(u.Samples) == 0 {
			continue
		}
		// The window itself, then two weeks: the window twice.
		d := readInstance(t, c, in.ID, u.Window.Start, u.Window.End)
		if len(d.hours) != len(u.Samples) {
			t.Errorf("%s: %d hours with data, want the %d samples", in.ID, len(d.hours), len(u.Samples))
		}
		for _, s := range u.Samples {
			at := s.Time.UTC()
			near := func(what string, got float64, ok bool, want float64) {
				if !ok || math.Abs(got-want) > 1e-9 {
					t.Errorf("%s %s %s: %v (present %v), want %v", in.ID, at.Format(time.RFC3339), what, got, ok, want)
				}
			}
			g, ok := d.gpu[0][at]
			near("gpu", g, ok, s.GPU[0])
			m, ok := d.gpuMem[0][at]
			near("gpuMemory", m, ok, s.GPUMemory[0])
			cpu, ok := d.cpu[at]
			near("cpu", cpu, ok, *s.CPU)
			mem, ok := d.mem[at]
			near("memory", mem, ok, *s.Memory)
		}
		two := readInstance(t, c, in.ID, cwNow.Add(-14*24*time.Hour), cwNow)
		if len(two.hours) != 2*len(u.Samples) {
			t.Errorf("%s: %d hours in two weeks, want %d", in.ID, len(two.hours), 2*len(u.Samples))
		}
	}
}

func TestNoUtilizationHasCPUOnly(t *testing.T) {
	f := &fleet.Fleet{Instances: []fleet.Instance{{
		ID: "i-bare", Provider: fleet.AWS, Region: "us-east-1", InstanceType: "g5.xlarge",
		GPU: fleet.GPU{Model: "A10G", Count: 1, MemoryGiB: 24}, Lifecycle: fleet.OnDemand, State: fleet.Running,
	}}}
	_, srv := cwServe(t, f, Options{})
	d := readInstance(t, cwClient(srv, "cbor"), "i-bare", cwNow.Add(-7*24*time.Hour), cwNow)
	if len(d.gpu) != 0 || len(d.gpuMem) != 0 || len(d.mem) != 0 {
		t.Errorf("series without utilization: %d GPU, %d GPU memory, %d memory hours", len(d.gpu), len(d.gpuMem), len(d.mem))
	}
	if len(d.cpu) != 168 {
		t.Errorf("%d CPU hours in a week, want 168", len(d.cpu))
	}
}

func TestListMetricsPagesAndFilters(t *testing.T) {
	f := &fleet.Fleet{}
	for i := range 70 {
		f.Instances = append(f.Instances, fleet.Instance{
			ID: fmt.Sprintf("i-%03d", i), Provider: fleet.AWS, Region: "us-east-1", InstanceType: "p4d.24xlarge",
			GPU: fleet.GPU{Model: "A100", Count: 8, MemoryGiB: 40}, Lifecycle: fleet.OnDemand, State: fleet.Running,
			Utilization: &fleet.Utilization{GPU: &fleet.Stats{Avg: 50, P95: 80, Max: 90}},
		})
	}
	f.Instances = append(f.Instances, fleet.Instance{
		ID: "i-west", Provider: fleet.AWS, Region: "us-west-2", InstanceType: "g5.xlarge",
		GPU: fleet.GPU{Model: "A10G", Count: 1, MemoryGiB: 24}, Lifecycle: fleet.OnDemand, State: fleet.Running,
		Utilization: &fleet.Utilization{GPU: &fleet.Stats{Avg: 50, P95: 80, Max: 90}},
	})
	s, srv := cwServe(t, f, Options{})
	for _, proto := range cwProtocols {
		t.Run(proto, func(t *testing.T) {
			c := cwClient(srv, proto)
			s.ResetCounts()
			all, pages := listAll(t, c, &cloudwatch.ListMetricsInput{
				Namespace: aws.String(agentNamespace), MetricName: aws.String(metricGPUUtil),
				Dimensions: []cwtypes.DimensionFilter{{Name: aws.String("InstanceId")}},
			})
			if len(all) != 560 || pages != 2 || s.Counts()["monitoring"]["ListMetrics"] != 2 {
				t.Errorf("%d metrics in %d pages (%d requests), want 560 in 2", len(all), pages, s.Counts()["monitoring"]["ListMetrics"])
			}
			seen := map[string]bool{}
			for _, m := range all {
				d := dimsOf(m)
				key := d["InstanceId"] + "/" + d["index"]
				if seen[key] || len(d) != 4 || d["InstanceType"] != "p4d.24xlarge" || d["name"] != "A100" {
					t.Fatalf("metric %v (seen before: %v)", d, seen[key])
				}
				seen[key] = true
			}
			for _, c2 := range []struct {
				name string
				in   cloudwatch.ListMetricsInput
				want int
			}{
				{"one instance", cloudwatch.ListMetricsInput{Namespace: aws.String(agentNamespace), MetricName: aws.String(metricGPUUtil),
					Dimensions: []cwtypes.DimensionFilter{{Name: aws.String("InstanceId"), Value: aws.String("i-007")}}}, 8},
				{"one GPU of every instance", cloudwatch.ListMetricsInput{Namespace: aws.String(agentNamespace),
					Dimensions: []cwtypes.DimensionFilter{{Name: aws.String("index"), Value: aws.String("7")}}}, 70},
				{"a dimension no metric has", cloudwatch.ListMetricsInput{Dimensions: []cwtypes.DimensionFilter{{Name: aws.String("host")}}}, 0},
				{"EC2's namespace", cloudwatch.ListMetricsInput{Namespace: aws.String(ec2Namespace)}, 0},
				{"everything in the region", cloudwatch.ListMetricsInput{}, 560},
			} {
				got, _ := listAll(t, c, &c2.in)
				if len(got) != c2.want {
					t.Errorf("%s: %d metrics, want %d", c2.name, len(got), c2.want)
				}
			}
		})
	}
	// Another region sees its own instances only.
	west := cloudwatch.New(cloudwatch.Options{
		BaseEndpoint: aws.String(srv.URL), Region: "us-west-2", RetryMaxAttempts: 1, HTTPClient: testHTTP,
		Credentials: credentials.NewStaticCredentialsProvider("AKIDCWTEST", "secret", ""),
	})
	got, _ := listAll(t, west, &cloudwatch.ListMetricsInput{})
	if len(got) != 1 || dimsOf(got[0])["InstanceId"] != "i-west" {
		t.Errorf("us-west-2 lists %d metrics, want i-west's one", len(got))
	}
}

// TestListMetricsWholeNamespace lists the agent's namespace without a
// metric name, as the adapter does: every name at once, 500 a page with a
// NextToken, each series once, and EC2's CPU left out.
func TestListMetricsWholeNamespace(t *testing.T) {
	f := &fleet.Fleet{}
	stats := &fleet.Stats{Avg: 50, P95: 80, Max: 90}
	for i := range 70 {
		f.Instances = append(f.Instances, fleet.Instance{
			ID: fmt.Sprintf("i-%03d", i), Provider: fleet.AWS, Region: "us-east-1", InstanceType: "p4d.24xlarge",
			GPU: fleet.GPU{Model: "A100", Count: 8, MemoryGiB: 40}, Lifecycle: fleet.OnDemand, State: fleet.Running,
			Utilization: &fleet.Utilization{GPU: stats, GPUMemory: stats, CPU: stats, Memory: stats},
		})
	}
	s, srv := cwServe(t, f, Options{})
	for _, proto := range cwProtocols {
		t.Run(proto, func(t *testing.T) {
			c := cwClient(srv, proto)
			s.ResetCounts()
			var sizes []int
			var all []cwtypes.Metric
			pg := cloudwatch.NewListMetricsPaginator(c, &cloudwatch.ListMetricsInput{
				Namespace:  aws.String(agentNamespace),
				Dimensions: []cwtypes.DimensionFilter{{Name: aws.String("InstanceId")}},
			})
			for pg.HasMorePages() {
				page, err := pg.NextPage(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				sizes = append(sizes, len(page.Metrics))
				all = append(all, page.Metrics...)
			}
			// 70 × (8 GPUs × 3 metrics + host memory) = 1,750 series.
			if !slices.Equal(sizes, []int{500, 500, 500, 250}) || s.Counts()["monitoring"]["ListMetrics"] != 4 {
				t.Errorf("pages of %v (%d requests), want 500, 500, 500, 250", sizes, s.Counts()["monitoring"]["ListMetrics"])
			}
			byName := map[string]int{}
			seen := map[string]bool{}
			for _, m := range all {
				d := dimsOf(m)
				key := aws.ToString(m.MetricName) + "/" + d["InstanceId"] + "/" + d["index"]
				if seen[key] || aws.ToString(m.Namespace) != agentNamespace {
					t.Fatalf("metric %s in %s listed twice or in another namespace", key, aws.ToString(m.Namespace))
				}
				seen[key] = true
				byName[aws.ToString(m.MetricName)]++
			}
			want := map[string]int{metricGPUUtil: 560, metricGPUMemUsed: 560, metricGPUMemTotal: 560, metricMemUsed: 70}
			if !maps.Equal(byName, want) {
				t.Errorf("metrics by name %v, want %v", byName, want)
			}
		})
	}
}

func TestProtocolsReturnTheSameNumbers(t *testing.T) {
	f := cwDemo(t)
	_, srv := cwServe(t, f, Options{})
	from := cwNow.Add(-14 * 24 * time.Hour)
	want := map[string]instanceData{}
	for _, proto := range cwProtocols {
		c := cwClient(srv, proto)
		for _, id := range []string{"train-p4d-1", "infer-g5-2", "nb-g4dn-3", "hpo-g5-4"} {
			d := readInstance(t, c, id, from, cwNow)
			if len(d.hours) == 0 {
				t.Fatalf("%s %s: no data", proto, id)
			}
			w, ok := want[id]
			if !ok {
				want[id] = d
				continue
			}
			for i := range w.gpu {
				if !mapsEqual(d.gpu[i], w.gpu[i]) || !mapsEqual(d.gpuMem[i], w.gpuMem[i]) {
					t.Errorf("%s %s GPU %d: not what CBOR returned", proto, id, i)
				}
			}
			if !mapsEqual(d.cpu, w.cpu) || !mapsEqual(d.mem, w.mem) || len(d.gpu) != len(w.gpu) {
				t.Errorf("%s %s: not what CBOR returned", proto, id)
			}
		}
	}
}

func mapsEqual(a, b map[time.Time]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func gpuMetric(id, typ, model string, index int) cwtypes.Metric {
	return cwtypes.Metric{
		Namespace: aws.String(agentNamespace), MetricName: aws.String(metricGPUUtil),
		Dimensions: []cwtypes.Dimension{
			{Name: aws.String("InstanceId"), Value: aws.String(id)},
			{Name: aws.String("InstanceType"), Value: aws.String(typ)},
			{Name: aws.String("index"), Value: aws.String(strconv.Itoa(index))},
			{Name: aws.String("name"), Value: aws.String(model)},
		},
	}
}

func TestGetMetricDataQueries(t *testing.T) {
	f := cwDemo(t)
	_, srv := cwServe(t, f, Options{})
	c := cwClient(srv, "cbor")
	ctx := context.Background()
	train := gpuMetric("train-p4d-1", "p4d.24xlarge", "A100", 0)
	week := cwNow.Add(-7 * 24 * time.Hour)

	t.Run("exact dimension set", func(t *testing.T) {
		partial := cwtypes.Metric{Namespace: train.Namespace, MetricName: train.MetricName, Dimensions: train.Dimensions[:1]}
		reordered := cwtypes.Metric{Namespace: train.Namespace, MetricName: train.MetricName, Dimensions: slices.Clone(train.Dimensions)}
		slices.Reverse(reordered.Dimensions)
		res := fetch(t, c, []cwtypes.Metric{train, partial, reordered}, week, cwNow)
		if len(res["q0"].values) != 60 || len(res["q1"].values) != 0 || len(res["q2"].values) != 60 {
			t.Errorf("%d, %d and %d datapoints; want 60 for the full set in any order, none for a subset",
				len(res["q0"].values), len(res["q1"].values), len(res["q2"].values))
		}
	})

	t.Run("newest first by default", func(t *testing.T) {
		out, err := c.GetMetricData(ctx, &cloudwatch.GetMetricDataInput{
			StartTime: aws.Time(week), EndTime: aws.Time(cwNow),
			MetricDataQueries: []cwtypes.MetricDataQuery{{Id: aws.String("a"), Label: aws.String("gpu 0"),
				MetricStat: &cwtypes.MetricStat{Metric: &train, Period: aws.Int32(3600), Stat: aws.String("Maximum")}}},
		})
		if err != nil {
			t.Fatal(err)
		}
		r := out.MetricDataResults[0]
		if aws.ToString(r.Label) != "gpu 0" || r.StatusCode != cwtypes.StatusCodeComplete || len(r.Timestamps) != 60 {
			t.Fatalf("result %s %s with %d points", aws.ToString(r.Label), r.StatusCode, len(r.Timestamps))
		}
		if !slices.IsSortedFunc(r.Timestamps, func(a, b time.Time) int { return b.Compare(a) }) {
			t.Error("timestamps are not newest first")
		}
	})

	t.Run("daily periods", func(t *testing.T) {
		stat := func(name string) *cwSeries {
			return fetch(t, c, []cwtypes.Metric{train}, week, cwNow, func(in *cloudwatch.GetMetricDataInput) {
				in.MetricDataQueries[0].MetricStat.Period = aws.Int32(86400)
				in.MetricDataQueries[0].MetricStat.Stat = aws.String(name)
			})["q0"]
		}
		counts, avg, hourly := stat("SampleCount"), stat("Average"), fetch(t, c, []cwtypes.Metric{train}, week, cwNow)["q0"]
		if len(counts.values) != 5 {
			t.Fatalf("%d days with data, want the 5 weekdays", len(counts.values))
		}
		// SampleCount counts the agent's minute datapoints: 12 hours of 60.
		var sum float64
		for i, at := range counts.times {
			if at.UTC().Hour() != 0 || counts.values[i] != 12*60 {
				t.Errorf("day %s: %v datapoints, want 720", at, counts.values[i])
			}
			sum += avg.values[i] * counts.values[i] / 60
		}
		var want float64
		for _, v := range hourly.values {
			want += v
		}
		if math.Abs(sum-want) > 1e-9 {
			t.Errorf("daily averages weigh up to %v, hourly values to %v", sum, want)
		}
		if p := stat("p95"); len(p.values) != 5 {
			t.Errorf("p95: %d days", len(p.values))
		}
	})

	t.Run("455 days of hourly data", func(t *testing.T) {
		res := fetch(t, c, []cwtypes.Metric{gpuMetric("infer-g5-1", "g5.2xlarge", "A10G", 0)}, time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC), cwNow.Add(24*time.Hour))
		got := res["q0"]
		if len(got.values) != 455*24 || !got.times[0].Equal(cwNow.Add(-455*24*time.Hour)) || !got.times[len(got.times)-1].Equal(cwNow.Add(-time.Hour)) {
			t.Errorf("%d datapoints from %s to %s; want 455 days up to the last complete hour", len(got.values), got.times[0], got.times[len(got.times)-1])
		}
	})

	t.Run("pages of MaxDatapoints", func(t *testing.T) {
		metrics := []cwtypes.Metric{train, gpuMetric("train-p4d-1", "p4d.24xlarge", "A100", 1), gpuMetric("infer-g5-1", "g5.2xlarge", "A10G", 0), gpuMetric("no-such", "g5.2xlarge", "A10G", 0)}
		whole := fetch(t, c, metrics, week, cwNow)
		pages := 0
		var partial bool
		in := &cloudwatch.GetMetricDataInput{StartTime: aws.Time(week), EndTime: aws.Time(cwNow), MaxDatapoints: aws.Int32(50), ScanBy: cwtypes.ScanByTimestampAscending}
		for i := range metrics {
			in.MetricDataQueries = append(in.MetricDataQueries, cwtypes.MetricDataQuery{Id: aws.String("q" + strconv.Itoa(i)),
				MetricStat: &cwtypes.MetricStat{Metric: &metrics[i], Period: aws.Int32(3600), Stat: aws.String("Average")}})
		}
		merged := map[string]*cwSeries{}
		pg := cloudwatch.NewGetMetricDataPaginator(c, in)
		for pg.HasMorePages() {
			page, err := pg.NextPage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			pages++
			n := 0
			for _, r := range page.MetricDataResults {
				n += len(r.Values)
				partial = partial || r.StatusCode == cwtypes.StatusCodePartialData
				id := aws.ToString(r.Id)
				if merged[id] == nil {
					merged[id] = &cwSeries{}
				}
				merged[id].times = append(merged[id].times, r.Timestamps...)
				merged[id].values = append(merged[id].values, r.Values...)
			}
			if n > 50 {
				t.Errorf("page %d has %d datapoints", pages, n)
			}
		}
		// 60 + 60 + 168 points: 6 pages of at most 50.
		if pages != 6 || !partial {
			t.Errorf("%d pages (partial data flagged: %v), want 6", pages, partial)
		}
		for id, w := range whole {
			if m := merged[id]; m == nil || !slices.Equal(m.values, w.values) || !slices.EqualFunc(m.times, w.times, time.Time.Equal) {
				t.Errorf("%s: paged results differ from one call", id)
			}
		}
	})

	t.Run("more than 500 queries", func(t *testing.T) {
		for _, proto := range cwProtocols {
			in := &cloudwatch.GetMetricDataInput{StartTime: aws.Time(week), EndTime: aws.Time(cwNow)}
			for i := range 501 {
				in.MetricDataQueries = append(in.MetricDataQueries, cwtypes.MetricDataQuery{Id: aws.String("q" + strconv.Itoa(i)),
					MetricStat: &cwtypes.MetricStat{Metric: &train, Period: aws.Int32(3600), Stat: aws.String("Average")}})
			}
			// The SDK maps the code to the modeled ValidationException; in
			// the query protocol its code is the shape's name.
			_, err := cwClient(srv, proto).GetMetricData(ctx, in)
			var ve *cwtypes.ValidationException
			if want := map[bool]string{true: "ValidationException", false: "ValidationError"}[proto == "query"]; !errors.As(err, &ve) || cwCode(err) != want {
				t.Errorf("%s: 501 queries: %v, want %s", proto, err, want)
			}
			in.MetricDataQueries = in.MetricDataQueries[:500]
			if _, err := cwClient(srv, proto).GetMetricData(ctx, in); err != nil {
				t.Errorf("%s: 500 queries: %v", proto, err)
			}
		}
	})

	t.Run("invalid requests", func(t *testing.T) {
		q := func(id, stat string, period int32) []cwtypes.MetricDataQuery {
			return []cwtypes.MetricDataQuery{{Id: aws.String(id), MetricStat: &cwtypes.MetricStat{Metric: &train, Period: aws.Int32(period), Stat: aws.String(stat)}}}
		}
		for _, c2 := range []struct {
			name string
			in   cloudwatch.GetMetricDataInput
		}{
			{"start after end", cloudwatch.GetMetricDataInput{StartTime: aws.Time(cwNow), EndTime: aws.Time(week), MetricDataQueries: q("a", "Average", 3600)}},
			{"upper-case Id", cloudwatch.GetMetricDataInput{StartTime: aws.Time(week), EndTime: aws.Time(cwNow), MetricDataQueries: q("A", "Average", 3600)}},
			{"odd period", cloudwatch.GetMetricDataInput{StartTime: aws.Time(week), EndTime: aws.Time(cwNow), MetricDataQueries: q("a", "Average", 90)}},
			{"unknown stat", cloudwatch.GetMetricDataInput{StartTime: aws.Time(week), EndTime: aws.Time(cwNow), MetricDataQueries: q("a", "Median", 3600)}},
			{"expression", cloudwatch.GetMetricDataInput{StartTime: aws.Time(week), EndTime: aws.Time(cwNow), MetricDataQueries: []cwtypes.MetricDataQuery{{Id: aws.String("e"), Expression: aws.String("SUM(METRICS())")}}}},
		} {
			_, err := c.GetMetricData(ctx, &c2.in)
			var ipv *cwtypes.InvalidParameterValueException
			if !errors.As(err, &ipv) || cwCode(err) != "InvalidParameterValue" {
				t.Errorf("%s: %v, want InvalidParameterValue", c2.name, err)
			}
		}
		// The periods the API allows: 1, 5, 10, 20, 30 and multiples of 60
		// (MetricStat.Period in botocore's CloudWatch model and the SDK's
		// types.MetricStat); others are refused.
		for _, period := range []int32{1, 5, 10, 20, 30, 60, 120, 300} {
			if _, err := c.GetMetricData(ctx, &cloudwatch.GetMetricDataInput{StartTime: aws.Time(cwNow.Add(-time.Hour)), EndTime: aws.Time(cwNow), MetricDataQueries: q("a", "Average", period)}); err != nil {
				t.Errorf("period %d: %v", period, err)
			}
		}
		for _, period := range []int32{2, 15, 25, 45} {
			if _, err := c.GetMetricData(ctx, &cloudwatch.GetMetricDataInput{StartTime: aws.Time(cwNow.Add(-time.Hour)), EndTime: aws.Time(cwNow), MetricDataQueries: q("a", "Average", period)}); cwCode(err) != "InvalidParameterValue" {
				t.Errorf("period %d: %v, want InvalidParameterValue", period, err)
			}
		}
		_, err := c.GetMetricData(ctx, &cloudwatch.GetMetricDataInput{StartTime: aws.Time(week), EndTime: aws.Time(cwNow), MetricDataQueries: q("a", "Average", 3600), NextToken: aws.String("bogus")})
		if cwCode(err) != "InvalidNextToken" {
			t.Errorf("bogus NextToken: %v", err)
		}
	})
}

func TestStoppedInstancesHaveNoDatapoints(t *testing.T) {
	f := cwDemo(t)
	for i := range f.Instances {
		if f.Instances[i].ID == "train-p4d-2" {
			f.Instances[i].State = fleet.Stopped
		}
	}
	now := cwNow
	s, srv := cwServe(t, f, Options{Now: func() time.Time { return now }})
	for _, proto := range cwProtocols {
		c := cwClient(srv, proto)
		got, _ := listAll(t, c, &cloudwatch.ListMetricsInput{Dimensions: []cwtypes.DimensionFilter{{Name: aws.String("InstanceId"), Value: aws.String("train-p4d-2")}}})
		if len(got) != 0 {
			t.Errorf("%s: a stopped instance lists %d metrics", proto, len(got))
		}
		res := fetch(t, c, []cwtypes.Metric{gpuMetric("train-p4d-2", "p4d.24xlarge", "A100", 0)}, now.Add(-14*24*time.Hour), now)
		if len(res["q0"].values) != 0 {
			t.Errorf("%s: a stopped instance has %d datapoints", proto, len(res["q0"].values))
		}
	}

	// Stopped later (StopInstances) at 00:30: the hour it ran in part keeps
	// its datapoint, the hours after have none.
	c := cwClient(srv, "cbor")
	endpoint := gpuMetric("infer-g5-1", "g5.2xlarge", "A10G", 0)
	read := func() *cwSeries {
		return fetch(t, c, []cwtypes.Metric{endpoint}, cwNow.Add(-24*time.Hour), now)["q0"]
	}
	if got := read(); len(got.values) != 24 {
		t.Fatalf("running: %d datapoints in a day, want 24", len(got.values))
	}
	if _, ok := s.inv.SetState("infer-g5-1", "stopped"); !ok {
		t.Fatal("no infer-g5-1")
	}
	now = cwNow.Add(30 * time.Minute)
	read()
	now = cwNow.Add(6 * time.Hour)
	got := read()
	if len(got.values) != 25 || !got.times[24].Equal(cwNow) {
		t.Errorf("stopped at 00:30: %d datapoints, last at %v; want 25, the last at 00:00", len(got.values), got.times[len(got.times)-1])
	}
	listed, _ := listAll(t, c, &cloudwatch.ListMetricsInput{Dimensions: []cwtypes.DimensionFilter{{Name: aws.String("InstanceId"), Value: aws.String("infer-g5-1")}}})
	if len(listed) == 0 {
		t.Error("an instance stopped today is no longer listed")
	}
	if active, _ := listAll(t, c, &cloudwatch.ListMetricsInput{RecentlyActive: cwtypes.RecentlyActivePt3h,
		Dimensions: []cwtypes.DimensionFilter{{Name: aws.String("InstanceId"), Value: aws.String("infer-g5-1")}}}); len(active) != 0 {
		t.Errorf("stopped six hours ago, yet %d metrics are recently active", len(active))
	}
}

func TestCloudWatchThrottling(t *testing.T) {
	_, srv := cwServe(t, cwDemo(t), Options{ThrottleRate: 1})
	for _, proto := range cwProtocols {
		c := cwClient(srv, proto)
		_, err := c.ListMetrics(context.Background(), &cloudwatch.ListMetricsInput{})
		if cwCode(err) != "Throttling" {
			t.Errorf("%s ListMetrics: %v, want Throttling", proto, err)
		}
		_, err = c.GetMetricData(context.Background(), &cloudwatch.GetMetricDataInput{
			StartTime: aws.Time(cwNow.Add(-time.Hour)), EndTime: aws.Time(cwNow),
			MetricDataQueries: []cwtypes.MetricDataQuery{{Id: aws.String("a"), MetricStat: &cwtypes.MetricStat{
				Metric: &cwtypes.Metric{Namespace: aws.String(ec2Namespace), MetricName: aws.String(metricCPU)}, Period: aws.Int32(3600), Stat: aws.String("Average")}}},
		})
		if cwCode(err) != "Throttling" {
			t.Errorf("%s GetMetricData: %v, want Throttling", proto, err)
		}
	}
}

func TestUnknownCloudWatchOperation(t *testing.T) {
	_, srv := cwServe(t, cwDemo(t), Options{})
	for _, proto := range cwProtocols {
		_, err := cwClient(srv, proto).DescribeAlarms(context.Background(), &cloudwatch.DescribeAlarmsInput{})
		if cwCode(err) != "InvalidAction" {
			t.Errorf("%s DescribeAlarms: %v, want InvalidAction", proto, err)
		}
	}
}

// The series of a big fleet are built once and read fast enough for a
// benchmark run: every GPU series of 300 8-GPU instances in 500-query calls.
func TestLargeFleetReads(t *testing.T) {
	if testing.Short() {
		t.Skip("large fleet")
	}
	f := &fleet.Fleet{}
	for i := range 300 {
		f.Instances = append(f.Instances, fleet.Instance{
			ID: fmt.Sprintf("i-%04d", i), Provider: fleet.AWS, Region: "us-east-1", InstanceType: "p4d.24xlarge",
			GPU: fleet.GPU{Model: "A100", Count: 8, MemoryGiB: 40}, Lifecycle: fleet.OnDemand, State: fleet.Running,
			Utilization: &fleet.Utilization{GPU: &fleet.Stats{Avg: 40, P95: 70, Max: 95}, GPUMemory: &fleet.Stats{Avg: 30, P95: 50, Max: 60}},
		})
	}
	_, srv := cwServe(t, f, Options{})
	c := cwClient(srv, "cbor")
	start := time.Now()
	all, _ := listAll(t, c, &cloudwatch.ListMetricsInput{Namespace: aws.String(agentNamespace), MetricName: aws.String(metricGPUUtil)})
	if len(all) != 2400 {
		t.Fatalf("%d GPU series, want 2400", len(all))
	}
	points := 0
	for i := 0; i < len(all); i += 500 {
		for _, r := range fetch(t, c, all[i:min(i+500, len(all))], cwNow.Add(-14*24*time.Hour), cwNow) {
			points += len(r.values)
		}
	}
	if points != 2400*336 {
		t.Errorf("%d datapoints, want %d", points, 2400*336)
	}
	t.Logf("listed and read %d series (%d datapoints) in %s", len(all), points, time.Since(start).Round(time.Millisecond))
}

// withPeriod sets every query's period (and statistic, when given).
func withPeriod(period int32, stat ...string) func(*cloudwatch.GetMetricDataInput) {
	return func(in *cloudwatch.GetMetricDataInput) {
		for i := range in.MetricDataQueries {
			in.MetricDataQueries[i].MetricStat.Period = aws.Int32(period)
			if len(stat) > 0 {
				in.MetricDataQueries[i].MetricStat.Stat = aws.String(stat[0])
			}
		}
	}
}

// minuteNow is a Friday afternoon, in the middle of a minute.
var minuteNow = time.Date(2026, 11, 27, 14, 15, 30, 0, time.UTC)

func TestMinuteDatapointsCarryTheHoursValue(t *testing.T) {
	f := cwDemo(t)
	_, srv := cwServe(t, f, Options{Now: func() time.Time { return minuteNow }})
	for _, proto := range cwProtocols {
		c := cwClient(srv, proto)
		gpus, _ := listAll(t, c, &cloudwatch.ListMetricsInput{Namespace: aws.String(agentNamespace), MetricName: aws.String(metricGPUUtil)})
		// The last 30 minutes at 60 s: 13:45 … 14:14, the minute under way
		// (14:15) is not complete. The hourly read includes the current,
		// partial hour: its average is the hour's value too.
		minutes := fetch(t, c, gpus, minuteNow.Add(-30*time.Minute), minuteNow, withPeriod(60))
		hours := fetch(t, c, gpus, minuteNow.Add(-3*time.Hour).Truncate(time.Hour), minuteNow)
		full := 0
		for i, m := range gpus {
			id := "q" + strconv.Itoa(i)
			byHour := map[time.Time]float64{}
			for k, at := range hours[id].times {
				byHour[at.UTC()] = hours[id].values[k]
			}
			want := 0
			for _, h := range []time.Time{minuteNow.Truncate(time.Hour).Add(-time.Hour), minuteNow.Truncate(time.Hour)} {
				if _, ok := byHour[h]; ok {
					want += 15
				}
			}
			got := minutes[id]
			if len(got.values) != want {
				t.Errorf("%s %v: %d minute datapoints, want %d", proto, dimsOf(m), len(got.values), want)
				continue
			}
			for k, at := range got.times {
				at = at.UTC()
				if at.Second() != 0 || at.Before(minuteNow.Add(-31*time.Minute)) || !at.Before(minuteNow.Truncate(time.Minute)) {
					t.Errorf("%s %v: datapoint at %s", proto, dimsOf(m), at)
				}
				if v, ok := byHour[at.Truncate(time.Hour)]; !ok || v != got.values[k] {
					t.Errorf("%s %v %s: %v, the hour's value is %v", proto, dimsOf(m), at.Format("15:04"), got.values[k], v)
				}
			}
			if want == 30 {
				full++
				if !got.times[0].Equal(time.Date(2026, 11, 27, 13, 45, 0, 0, time.UTC)) || !got.times[29].Equal(time.Date(2026, 11, 27, 14, 14, 0, 0, time.UTC)) {
					t.Errorf("%s %v: minutes %s … %s, want 13:45 … 14:14", proto, dimsOf(m), got.times[0], got.times[29])
				}
			}
		}
		if full < 5 {
			t.Errorf("%s: only %d GPU series ran the whole half hour", proto, full)
		}
	}
}

func TestPeriodsAggregateTheMinutes(t *testing.T) {
	f := cwDemo(t)
	_, srv := cwServe(t, f, Options{Now: func() time.Time { return minuteNow }})
	c := cwClient(srv, "cbor")
	endpoint := []cwtypes.Metric{gpuMetric("infer-g5-1", "g5.2xlarge", "A10G", 0)}
	dayStart, dayEnd := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	hourly := fetch(t, c, endpoint, dayStart, dayEnd)["q0"]
	if len(hourly.values) != 24 {
		t.Fatalf("%d hourly datapoints in a day", len(hourly.values))
	}
	for _, c2 := range []struct {
		period int32
		stat   string
		n      int
		want   func(hourValue float64) float64
	}{
		{60, "Average", 1440, func(v float64) float64 { return v }},
		{300, "Average", 288, func(v float64) float64 { return v }},
		{300, "SampleCount", 288, func(float64) float64 { return 5 }},
		{600, "Maximum", 144, func(v float64) float64 { return v }},
		{3600, "SampleCount", 24, func(float64) float64 { return 60 }},
		{3600, "Sum", 24, func(v float64) float64 { return 60 * v }},
		{3600, "p90", 24, func(v float64) float64 { return v }},
	} {
		got := fetch(t, c, endpoint, dayStart, dayEnd, withPeriod(c2.period, c2.stat))["q0"]
		if len(got.values) != c2.n {
			t.Errorf("period %d %s: %d datapoints, want %d", c2.period, c2.stat, len(got.values), c2.n)
			continue
		}
		for k, at := range got.times {
			h := int(at.UTC().Sub(dayStart) / time.Hour)
			if want := c2.want(hourly.values[h]); math.Abs(got.values[k]-want) > 1e-9*math.Max(1, want) {
				t.Errorf("period %d %s at %s: %v, want %v", c2.period, c2.stat, at.UTC().Format("15:04"), got.values[k], want)
				break
			}
		}
	}
	// A day's average over minutes weighs each hour by its minutes: the
	// hours' mean.
	daily := fetch(t, c, endpoint, dayStart, dayEnd, withPeriod(86400))["q0"]
	var mean float64
	for _, v := range hourly.values {
		mean += v / 24
	}
	if len(daily.values) != 1 || math.Abs(daily.values[0]-mean) > 1e-9 {
		t.Errorf("daily average %v, want the hours' mean %v", daily.values, mean)
	}
}

func TestMinuteDataRetention(t *testing.T) {
	f := cwDemo(t)
	_, srv := cwServe(t, f, Options{Now: func() time.Time { return minuteNow }})
	c := cwClient(srv, "cbor")
	endpoint := []cwtypes.Metric{gpuMetric("infer-g5-1", "g5.2xlarge", "A10G", 0)}
	nowMin := minuteNow.Truncate(time.Minute)
	for _, c2 := range []struct {
		name   string
		days   int
		period int32
		n      int
		first  time.Time
	}{
		// Period 60 over 20 days: minute data exists for the last 15 only.
		{"60 s over 20 days", 20, 60, 15 * 1440, nowMin.Add(-15 * 24 * time.Hour)},
		// Period 300 over 70 days: 5-minute data for the last 63 days only.
		{"300 s over 70 days", 70, 300, 63 * 288, nowMin.Add(-63 * 24 * time.Hour)},
		// Period 3600 over 70 days: every hour; the last one is partial.
		{"3600 s over 70 days", 70, 3600, 70*24 + 1, minuteNow.Truncate(time.Hour).Add(-70 * 24 * time.Hour)},
	} {
		got := fetch(t, c, endpoint, minuteNow.Add(-time.Duration(c2.days)*24*time.Hour), minuteNow, withPeriod(c2.period))["q0"]
		if len(got.values) != c2.n || !got.times[0].Equal(c2.first) {
			t.Errorf("%s: %d datapoints from %s, want %d from %s", c2.name, len(got.values), got.times[0].UTC(), c2.n, c2.first)
		}
	}
}

// postLoad posts to /_sim/load and returns the status.
func postLoad(t *testing.T, url, body string) int {
	t.Helper()
	resp, err := http.Post(url+"/_sim/load", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestSetLoad(t *testing.T) {
	f := cwDemo(t)
	now := minuteNow
	s, srv := cwServe(t, f, Options{Now: func() time.Time { return now }})
	c := cwClient(srv, "cbor")
	var gpus []cwtypes.Metric
	for i := range 8 {
		gpus = append(gpus, gpuMetric("train-p4d-1", "p4d.24xlarge", "A100", i))
	}
	last30 := func() map[string]*cwSeries {
		return fetch(t, c, gpus, now.Add(-30*time.Minute), now, withPeriod(60))
	}
	before := last30()
	if err := s.SetLoad("train-p4d-1", 85); err != nil {
		t.Fatal(err)
	}
	// The past keeps its datapoints.
	for id, r := range last30() {
		if !slices.Equal(r.values, before[id].values) {
			t.Errorf("%s: SetLoad changed the past", id)
		}
	}
	// Thirty minutes on, every GPU reports 85 for every minute.
	now = now.Add(30 * time.Minute)
	for i := range gpus {
		r := last30()["q"+strconv.Itoa(i)]
		if len(r.values) != 30 || slices.ContainsFunc(r.values, func(v float64) bool { return v != 85 }) {
			t.Errorf("GPU %d after SetLoad: %v", i, r.values)
		}
	}
	// The hour under way averages 15 minutes of the pattern (14:00 …
	// 14:14) and 30 at 85.
	pattern := before["q0"].values[15]
	hour := fetch(t, c, gpus[:1], now.Truncate(time.Hour), now, withPeriod(3600))["q0"]
	if want := (15*pattern + 30*85) / 45; len(hour.values) != 1 || math.Abs(hour.values[0]-want) > 1e-9 {
		t.Errorf("the hour from 14:00: %v, want %v", hour.values, want)
	}
	// Over HTTP, from 14:45 on: 10 %; stopped at 15:00, no more data.
	if code := postLoad(t, srv.URL, `{"id": "train-p4d-1", "gpu": 10}`); code != http.StatusOK {
		t.Fatalf("POST /_sim/load: %d", code)
	}
	now = now.Add(15 * time.Minute)
	r := last30()["q3"]
	if len(r.values) != 30 || r.values[0] != 85 || r.values[29] != 10 || r.values[14] != 85 || r.values[15] != 10 {
		t.Errorf("85 then 10 from 14:45: %v", r.values)
	}
	s.inv.SetState("train-p4d-1", "stopped")
	last30()
	now = now.Add(20 * time.Minute)
	if r := last30()["q3"]; len(r.values) != 11 {
		t.Errorf("stopped at 15:00:30, read at 15:20:30: %d datapoints, want 11 (14:50 … 15:00)", len(r.values))
	}

	for _, c2 := range []struct {
		body string
		want int
	}{
		{`{"id": "no-such", "gpu": 50}`, http.StatusNotFound},
		{`{"id": "train-p4d-1", "gpu": 150}`, http.StatusBadRequest},
		{`{"id": "train-p4d-1"}`, http.StatusBadRequest},
		{`{"id": "train-p4d-1", "gpu": "high"}`, http.StatusBadRequest},
		{`not json`, http.StatusBadRequest},
	} {
		if got := postLoad(t, srv.URL, c2.body); got != c2.want {
			t.Errorf("POST %s: %d, want %d", c2.body, got, c2.want)
		}
	}
	resp, err := http.Get(srv.URL + "/_sim/load")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET /_sim/load: %d", resp.StatusCode)
	}
	f2 := &fleet.Fleet{Instances: []fleet.Instance{{ID: "i-cpu", Provider: fleet.AWS, Region: "us-east-1", InstanceType: "g5.xlarge", State: fleet.Running}}}
	s2 := New(f2, Options{Now: func() time.Time { return minuteNow }})
	if err := s2.SetLoad("i-cpu", 50); err == nil || !strings.Contains(err.Error(), "no GPU metrics") {
		t.Errorf("an instance without GPU metrics: %v", err)
	}
}
