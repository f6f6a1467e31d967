package azure

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers"
)

// The batch metrics API (Azure Monitor data plane).
const (
	metricsAPIVersion = "2024-02-01"
	metricsAudience   = "https://metrics.monitor.azure.com/.default"
	// PlatformNamespace and MetricCPU are the VM host's CPU metric.
	PlatformNamespace = "Microsoft.Compute/virtualMachines"
	MetricCPU         = "Percentage CPU"
)

var (
	_ providers.UtilizationReader  = (*Provider)(nil)
	_ providers.MetricsSourceNamer = (*Provider)(nil)
)

// metricsPipeline is the azcore pipeline of metrics:getBatch: the shared
// retries and transport, and a bearer token for Azure Monitor.
func (p *Provider) metricsPipeline() runtime.Pipeline {
	return runtime.NewPipeline("gpufinops-azure-metrics", "v1", runtime.PipelineOptions{
		PerRetry: []policy.Policy{runtime.NewBearerTokenPolicy(p.cred, []string{metricsAudience}, &policy.BearerTokenOptions{InsecureAllowCredentialWithHTTP: p.plain.InsecureAllowCredentialWithHTTP})},
	}, p.plain)
}

// metricsHost is the regional batch metrics endpoint, or the simulator.
func (p *Provider) metricsHost(region string) string {
	if p.endpoints.metrics != "" {
		return p.endpoints.metrics
	}
	return "https://" + region + ".metrics.monitor.azure.com"
}

// ReadUtilization reads the window's GPU utilization, GPU memory
// utilization (Telegraf nvidia_smi custom metrics, per GPU index) and host
// CPU (Percentage CPU) of the scope's running VMs into their
// Utilization.Samples, hourly (per minute for windows up to 3 hours), with
// metrics:getBatch: one call per metric namespace for every batch of VMs
// (providers.azure.metrics_batch_size), so requests grow with the batches,
// not the VMs. An interval without a value is absent (never 0), and a GPU
// index without a value is missing from that sample. VMs without GPU series
// keep a nil Utilization and are named in the notes, as are VMs stopped but
// still allocated (billed as if running).
func (p *Provider) ReadUtilization(ctx context.Context, scope providers.Scope, instances []fleet.Instance, window fleet.TimeRange) ([]string, error) {
	return p.readUtilization(ctx, scope, instances, window, "average")
}

// ReadPeakUtilization is ReadUtilization with aggregation maximum: each
// sample holds the highest value of its interval, for idle-stop's re-check
// right before a deallocation.
func (p *Provider) ReadPeakUtilization(ctx context.Context, scope providers.Scope, instances []fleet.Instance, window fleet.TimeRange) ([]string, error) {
	return p.readUtilization(ctx, scope, instances, window, "maximum")
}

func (p *Provider) readUtilization(ctx context.Context, scope providers.Scope, instances []fleet.Instance, window fleet.TimeRange, agg string) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	now := p.opts.Now().UTC()
	if window.End.IsZero() {
		window = fleet.TimeRange{Start: now.Add(-p.opts.Lookback), End: now}
	}
	interval, step := "PT1H", time.Hour
	if window.End.Sub(window.Start) <= 3*time.Hour {
		interval, step = "PT1M", time.Minute
	}
	window = fleet.TimeRange{Start: window.Start.UTC().Truncate(step), End: window.End.UTC().Truncate(step)}
	if !window.End.After(window.Start) {
		window.End = window.Start.Add(step)
	}
	var notes []string
	var ids []string
	byResource := map[string]int{}
	var aml []int
	for i, in := range instances {
		if in.State == fleet.Stopped {
			continue
		}
		if in.Managed != nil {
			aml = append(aml, i)
			continue
		}
		p.mu.Lock()
		rid, allocated := p.resourceIDs[key(scope.Account, in.ID)], p.allocated[in.ID]
		p.mu.Unlock()
		if allocated {
			notes = append(notes, fmt.Sprintf("%s: stopped but still allocated (PowerState/stopped): billed as if running; deallocate it to end compute billing", in.ID))
		}
		if rid == "" {
			notes = append(notes, fmt.Sprintf("%s: no GPU metrics read: the VM was not listed in %s", in.ID, scope))
			continue
		}
		byResource[strings.ToLower(rid)] = i
		ids = append(ids, rid)
	}
	if len(aml) > 0 {
		n, err := p.readAMLUtilization(ctx, scope, instances, aml, window, interval, step, agg)
		if err != nil {
			return nil, err
		}
		notes = append(notes, n...)
	}
	if len(ids) == 0 {
		return notes, nil
	}
	steps := int(window.End.Sub(window.Start) / step)
	data := map[int]*grid{}
	pl := p.metricsPipeline()
	for start := 0; start < len(ids); start += p.az.batch {
		batch := ids[start:min(start+p.az.batch, len(ids))]
		for _, ask := range []struct {
			ns    string
			names []string
		}{{p.az.namespace, []string{p.az.gpuMetric, p.az.gpuMemoryMetric}}, {PlatformNamespace, []string{MetricCPU}}} {
			res, err := p.getBatch(ctx, pl, scope, batch, ask.ns, ask.names, window, interval, agg)
			if err != nil {
				return nil, err
			}
			for _, r := range res.Values {
				i, ok := byResource[strings.ToLower(r.ResourceID)]
				if !ok {
					continue
				}
				if data[i] == nil {
					data[i] = &grid{}
				}
				p.collect(data[i], r, window.Start, step, steps)
			}
		}
	}
	for i := range instances {
		in := &instances[i]
		if in.State == fleet.Stopped || in.Managed != nil {
			continue
		}
		samples := toSamples(data[i], window.Start, step)
		if !hasGPU(samples) {
			in.Utilization = nil
			notes = append(notes, fmt.Sprintf("%s: no GPU metrics in %s: send Telegraf's nvidia_smi input to Azure Monitor with the azure_monitor output (docs/azure.md)", in.ID, p.az.namespace))
			continue
		}
		w := window
		in.Utilization = &fleet.Utilization{Window: &w, Samples: samples, Source: "azure-monitor", Coverage: fleet.SampleCoverage(samples, in.GPU.Count)}
	}
	return notes, nil
}

func key(sub, id string) string { return strings.ToLower(sub) + "|" + id }

// batchResponse is metrics:getBatch's answer.
type batchResponse struct {
	Values []resourceMetrics `json:"values"`
}

// resourceMetrics is one resource's metrics in a batch answer.
type resourceMetrics struct {
	ResourceID string `json:"resourceid"`
	Value      []struct {
		Name struct {
			Value string `json:"value"`
		} `json:"name"`
		ErrorCode  string `json:"errorCode"`
		Timeseries []struct {
			Metadata []struct {
				Name struct {
					Value string `json:"value"`
				} `json:"name"`
				Value string `json:"value"`
			} `json:"metadatavalues"`
			Data batchData `json:"data"`
		} `json:"timeseries"`
	} `json:"value"`
}

// optFloat is a number that may be absent or null (no datapoint in the
// interval), decoded without a pointer: a batch answer has hundreds of
// thousands of them.
type optFloat struct {
	v  float64
	ok bool
}

// UnmarshalJSON reads a JSON number, or null as absent.
func (o *optFloat) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*o = optFloat{}
		return nil
	}
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("want a number, got %.20s", b)
	}
	*o = optFloat{v: v, ok: true}
	return nil
}

// bodies are reusable buffers for the batch answers (megabytes each), read
// whole before decoding; one grown past maxPooledBody is left to the
// collector rather than kept.
var bodies = sync.Pool{New: func() any { return new(bytes.Buffer) }}

const maxPooledBody = 64 << 20

// answerSize is the room to read a batch answer into: its Content-Length,
// or without one about 64 bytes a datapoint of every series asked for (a
// GPU metric has a series per GPU, so this is a floor), so that the buffer
// does not grow from nothing through a dozen copies.
func answerSize(contentLength int64, series int, w fleet.TimeRange, interval string) int {
	if contentLength > 0 && contentLength < 1<<30 {
		return int(contentLength)
	}
	step := time.Hour
	if interval == "PT1M" {
		step = time.Minute
	}
	return min(series*int(w.End.Sub(w.Start)/step+1)*64, 256<<20)
}

// getBatch asks metrics:getBatch for names of namespace over resources.
func (p *Provider) getBatch(ctx context.Context, pl runtime.Pipeline, scope providers.Scope, resources []string, namespace string, names []string, w fleet.TimeRange, interval, agg string) (*batchResponse, error) {
	filter := ""
	if namespace != PlatformNamespace {
		filter = "index eq '*'"
	}
	return p.getBatchFiltered(ctx, pl, scope, resources, namespace, names, w, interval, agg, filter)
}

// getBatchFiltered is getBatch with a dimension filter ("" for none).
func (p *Provider) getBatchFiltered(ctx context.Context, pl runtime.Pipeline, scope providers.Scope, resources []string, namespace string, names []string, w fleet.TimeRange, interval, agg, filter string) (*batchResponse, error) {
	u := p.metricsHost(scope.Region) + "/subscriptions/" + url.PathEscape(scope.Account) + "/metrics:getBatch"
	req, err := runtime.NewRequest(ctx, http.MethodPost, u)
	if err != nil {
		return nil, err
	}
	q := url.Values{}
	q.Set("api-version", metricsAPIVersion)
	q.Set("metricnamespace", namespace)
	q.Set("metricnames", strings.Join(names, ","))
	q.Set("starttime", w.Start.Format(time.RFC3339))
	q.Set("endtime", w.End.Format(time.RFC3339))
	q.Set("interval", interval)
	q.Set("aggregation", agg)
	if filter != "" {
		q.Set("filter", filter)
	}
	req.Raw().URL.RawQuery = q.Encode()
	if err := runtime.MarshalAsJSON(req, map[string][]string{"resourceids": resources}); err != nil {
		return nil, err
	}
	runtime.SkipBodyDownload(req)
	resp, err := pl.Do(req)
	if err != nil {
		return nil, fmt.Errorf("azure monitor: %w", classify(err))
	}
	defer resp.Body.Close()
	if !runtime.HasStatusCode(resp, http.StatusOK) {
		return nil, fmt.Errorf("azure monitor metrics:getBatch: %w", classify(runtime.NewResponseError(resp)))
	}
	buf := bodies.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= maxPooledBody {
			bodies.Put(buf)
		}
	}()
	buf.Reset()
	if n := answerSize(resp.ContentLength, len(resources)*len(names), w, interval); n > buf.Cap() {
		buf.Grow(n)
	}
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		return nil, fmt.Errorf("azure monitor metrics:getBatch: reading the answer: %w", err)
	}
	var out batchResponse
	if err := json.Unmarshal(buf.Bytes(), &out); err != nil {
		return nil, fmt.Errorf("azure monitor metrics:getBatch: %w", err)
	}
	return &out, nil
}

// grid is a VM's readings, one value per interval of the window (NaN: no
// datapoint), per GPU index (-1: a series without one).
type grid struct {
	gpu, mem map[int][]float64
	cpu      []float64
	steps    int
}

// row returns m's row for index, made (all NaN) on first use.
func (g *grid) row(m *map[int][]float64, index int) []float64 {
	if *m == nil {
		*m = map[int][]float64{}
	}
	r := (*m)[index]
	if r == nil {
		r = providers.NaNRow(g.steps)
		(*m)[index] = r
	}
	return r
}

// collect adds one resource's series to its grid: a datapoint belongs to
// the interval (from start, step long) it falls in; one outside the window
// is left out.
func (p *Provider) collect(g *grid, r resourceMetrics, start time.Time, step time.Duration, steps int) {
	g.steps = steps
	for _, m := range r.Value {
		for _, ts := range m.Timeseries {
			index := -1
			for _, md := range ts.Metadata {
				if strings.EqualFold(md.Name.Value, "index") {
					if n, err := strconv.Atoi(md.Value); err == nil {
						index = n
					} else {
						fmt.Sscanf(md.Value, "%d", &index)
					}
				}
			}
			var row []float64
			for _, d := range ts.Data {
				val := d.Average
				if !val.ok {
					val = d.Maximum
				}
				if !val.ok {
					continue // no datapoint in the interval: absent, never 0
				}
				if d.TimeStamp.Before(start) {
					continue
				}
				k := int(d.TimeStamp.Sub(start) / step)
				if k >= steps {
					continue
				}
				if row == nil {
					switch m.Name.Value {
					case p.az.gpuMetric:
						row = g.row(&g.gpu, index)
					case p.az.gpuMemoryMetric:
						row = g.row(&g.mem, index)
					case MetricCPU:
						if g.cpu == nil {
							g.cpu = providers.NaNRow(steps)
						}
						row = g.cpu
					}
					if row == nil {
						break
					}
				}
				row[k] = min(max(val.v, 0), 100)
			}
		}
	}
}

// toSamples turns a grid into time-ordered samples, one per interval with
// any reading. The samples share a few backing arrays, so a VM's readings
// are a handful of allocations, not several a sample.
func toSamples(g *grid, start time.Time, step time.Duration) []fleet.Sample {
	if g == nil {
		return nil
	}
	present := make([]bool, g.steps)
	for _, m := range []map[int][]float64{g.gpu, g.mem} {
		for _, r := range m {
			providers.MarkPresent(present, r)
		}
	}
	providers.MarkPresent(present, g.cpu)
	n := 0
	for _, p := range present {
		if p {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	gpuIdx, memIdx := providers.RowIndexes(g.gpu), providers.RowIndexes(g.mem)
	out := make([]fleet.Sample, 0, n)
	slab := make([]float64, 0, n*(len(gpuIdx)+len(memIdx)+1))
	// perIndex appends period k's values in index order (the aggregate, -1,
	// only when no index has one) and returns them.
	perIndex := func(m map[int][]float64, keys []int, k int) fleet.PerGPU {
		from := len(slab)
		for _, i := range keys {
			if i >= 0 && !math.IsNaN(m[i][k]) {
				slab = append(slab, m[i][k])
			}
		}
		if len(slab) == from {
			if r, ok := m[-1]; ok && !math.IsNaN(r[k]) {
				slab = append(slab, r[k])
			}
		}
		if len(slab) == from {
			return nil
		}
		return fleet.PerGPU(slab[from:len(slab):len(slab)])
	}
	start = start.UTC()
	for k := 0; k < g.steps; k++ {
		if !present[k] {
			continue
		}
		s := fleet.Sample{Time: start.Add(time.Duration(k) * step)}
		s.GPU = perIndex(g.gpu, gpuIdx, k)
		s.GPUMemory = perIndex(g.mem, memIdx, k)
		if g.cpu != nil && !math.IsNaN(g.cpu[k]) {
			slab = append(slab, g.cpu[k])
			s.CPU = &slab[len(slab)-1]
		}
		out = append(out, s)
	}
	return out
}

func hasGPU(samples []fleet.Sample) bool {
	for _, s := range samples {
		if len(s.GPU) > 0 {
			return true
		}
	}
	return false
}
