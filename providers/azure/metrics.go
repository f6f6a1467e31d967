package azure

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
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
	for i, in := range instances {
		if in.State == fleet.Stopped {
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
	if len(ids) == 0 {
		return notes, nil
	}
	data := map[int]map[int64]*point{}
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
					data[i] = map[int64]*point{}
				}
				p.collect(data[i], r)
			}
		}
	}
	for i := range instances {
		in := &instances[i]
		if in.State == fleet.Stopped {
			continue
		}
		samples := toSamples(data[i], window)
		if !hasGPU(samples) {
			in.Utilization = nil
			notes = append(notes, fmt.Sprintf("%s: no GPU metrics in %s: send Telegraf's nvidia_smi input to Azure Monitor with the azure_monitor output (docs/azure.md)", in.ID, p.az.namespace))
			continue
		}
		w := window
		in.Utilization = &fleet.Utilization{Window: &w, Samples: samples, Source: "azure-monitor"}
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
			Data []struct {
				TimeStamp time.Time `json:"timeStamp"`
				Average   *float64  `json:"average"`
				Maximum   *float64  `json:"maximum"`
			} `json:"data"`
		} `json:"timeseries"`
	} `json:"value"`
}

// getBatch asks metrics:getBatch for names of namespace over resources.
func (p *Provider) getBatch(ctx context.Context, pl runtime.Pipeline, scope providers.Scope, resources []string, namespace string, names []string, w fleet.TimeRange, interval, agg string) (*batchResponse, error) {
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
	if namespace != PlatformNamespace {
		q.Set("filter", "index eq '*'")
	}
	req.Raw().URL.RawQuery = q.Encode()
	if err := runtime.MarshalAsJSON(req, map[string][]string{"resourceids": resources}); err != nil {
		return nil, err
	}
	resp, err := pl.Do(req)
	if err != nil {
		return nil, fmt.Errorf("azure monitor: %w", classify(err))
	}
	if !runtime.HasStatusCode(resp, http.StatusOK) {
		return nil, fmt.Errorf("azure monitor metrics:getBatch: %w", classify(runtime.NewResponseError(resp)))
	}
	var out batchResponse
	if err := runtime.UnmarshalAsJSON(resp, &out); err != nil {
		return nil, fmt.Errorf("azure monitor metrics:getBatch: %w", err)
	}
	return &out, nil
}

// point is one interval's readings of a VM.
type point struct {
	gpu, mem map[int]float64
	cpu      *float64
}

// collect adds one resource's series to its points.
func (p *Provider) collect(pts map[int64]*point, r resourceMetrics) {
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
			for _, d := range ts.Data {
				val := d.Average
				if val == nil {
					val = d.Maximum
				}
				if val == nil {
					continue // no datapoint in the interval: absent, never 0
				}
				t := d.TimeStamp.UTC().Unix()
				pt := pts[t]
				if pt == nil {
					pt = &point{}
					pts[t] = pt
				}
				v := min(max(*val, 0), 100)
				switch m.Name.Value {
				case p.az.gpuMetric:
					if pt.gpu == nil {
						pt.gpu = map[int]float64{}
					}
					pt.gpu[index] = v
				case p.az.gpuMemoryMetric:
					if pt.mem == nil {
						pt.mem = map[int]float64{}
					}
					pt.mem[index] = v
				case MetricCPU:
					pt.cpu = &v
				}
			}
		}
	}
}

// toSamples turns the points inside the window into time-ordered samples.
func toSamples(pts map[int64]*point, w fleet.TimeRange) []fleet.Sample {
	keys := make([]int64, 0, len(pts))
	for t := range pts {
		if tt := time.Unix(t, 0); !tt.Before(w.Start) && tt.Before(w.End) {
			keys = append(keys, t)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	out := make([]fleet.Sample, 0, len(keys))
	for _, t := range keys {
		pt := pts[t]
		out = append(out, fleet.Sample{Time: time.Unix(t, 0).UTC(), GPU: perIndex(pt.gpu), GPUMemory: perIndex(pt.mem), CPU: pt.cpu})
	}
	return out
}

// perIndex lists values in index order; the aggregate (-1) only when no
// index has a value.
func perIndex(values map[int]float64) fleet.PerGPU {
	var idx []int
	for i := range values {
		if i >= 0 {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		if v, ok := values[-1]; ok {
			return fleet.PerGPU{v}
		}
		return nil
	}
	sort.Ints(idx)
	out := make(fleet.PerGPU, len(idx))
	for j, i := range idx {
		out[j] = values[i]
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
