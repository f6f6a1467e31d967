package azure

// Azure Monitor metrics of the Azure ML items, with metrics:getBatch as
// the VMs' (up to providers.azure.metrics_batch_size resources of one
// subscription, region and namespace a call): a managed online
// deployment's GpuUtilizationPercentage and GpuMemoryUtilizationPercentage
// (percent of the instance, averaged over its instances); its endpoint's
// RequestsPerMinute split by deployment, summed over the window into
// managed.requests; a workspace's GpuUtilizationPercentage split by
// ComputeName for its compute instances and clusters, and a cluster's
// "Active Nodes" split by ClusterName. A run count is not a metric: a
// cluster gets jobs 0 only when Active Nodes has data and is 0 in every
// interval that has any; else jobs stays unknown. Missing data is never
// idleness: an item without a GPU series keeps no utilization, noted.

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers"
)

// The Azure ML metric namespaces and metrics (Microsoft Learn, supported
// metrics of Microsoft.MachineLearningServices).
const (
	AMLDeploymentNamespace = "Microsoft.MachineLearningServices/workspaces/onlineEndpoints/deployments"
	AMLEndpointNamespace   = "Microsoft.MachineLearningServices/workspaces/onlineEndpoints"
	AMLWorkspaceNamespace  = "Microsoft.MachineLearningServices/workspaces"
	AMLMetricGPU           = "GpuUtilizationPercentage"
	AMLMetricGPUMemory     = "GpuMemoryUtilizationPercentage"
	AMLMetricRequests      = "RequestsPerMinute"
	AMLMetricActiveNodes   = "Active Nodes"
)

// amlSeries are one item's readings: GPU and GPU memory percent per
// interval (NaN: none), requests and whether any was read, active nodes
// seen.
type amlSeries struct {
	gpu, mem      []float64
	requests      float64
	requestsRead  bool
	activeRead    bool
	activeNonZero bool
}

func nanRow(n int) []float64 { return providers.NaNRow(n) }

// readAMLUtilization reads the metrics of the Azure ML items at idx.
func (p *Provider) readAMLUtilization(ctx context.Context, scope providers.Scope, instances []fleet.Instance, idx []int, window fleet.TimeRange, interval string, step time.Duration, agg string) ([]string, error) {
	steps := int(window.End.Sub(window.Start) / step)
	series := map[int]*amlSeries{}
	get := func(i int) *amlSeries {
		if series[i] == nil {
			series[i] = &amlSeries{gpu: nanRow(steps), mem: nanRow(steps)}
		}
		return series[i]
	}
	var deployments, endpoints, workspaces []string
	byDeployment := map[string]int{}
	byEndpoint := map[string]map[string]int{}  // endpoint ID → deployment name → item
	byWorkspace := map[string]map[string]int{} // workspace ID → compute name → item
	for _, i := range idx {
		in := &instances[i]
		id := in.ID
		switch in.Managed.Kind {
		case fleet.KindEndpoint:
			k := strings.ToLower(id)
			byDeployment[k] = i
			deployments = append(deployments, id)
			ep, _, ok := strings.Cut(strings.ToLower(id), "/deployments/")
			if !ok {
				continue
			}
			if byEndpoint[ep] == nil {
				byEndpoint[ep] = map[string]int{}
				endpoints = append(endpoints, id[:len(ep)])
			}
			byEndpoint[ep][strings.ToLower(in.Managed.Deployment)] = i
		case fleet.KindNotebook, fleet.KindComputeCluster:
			ws, name, ok := strings.Cut(strings.ToLower(id), "/computes/")
			if !ok {
				continue
			}
			if byWorkspace[ws] == nil {
				byWorkspace[ws] = map[string]int{}
				workspaces = append(workspaces, id[:len(ws)])
			}
			byWorkspace[ws][name] = i
		}
	}
	pl := p.metricsPipeline()
	each := func(ids []string, ns string, names []string, filter, aggregation string, use func(resourceMetrics)) error {
		for start := 0; start < len(ids); start += p.az.batch {
			res, err := p.getBatchFiltered(ctx, pl, scope, ids[start:min(start+p.az.batch, len(ids))], ns, names, window, interval, aggregation, filter)
			if err != nil {
				return err
			}
			for _, r := range res.Values {
				use(r)
			}
		}
		return nil
	}
	// Deployments: the instances' average.
	err := each(deployments, AMLDeploymentNamespace, []string{AMLMetricGPU, AMLMetricGPUMemory}, "", agg, func(r resourceMetrics) {
		i, ok := byDeployment[strings.ToLower(r.ResourceID)]
		if !ok {
			return
		}
		s := get(i)
		for _, m := range r.Value {
			row := s.gpu
			if m.Name.Value == AMLMetricGPUMemory {
				row = s.mem
			}
			for _, ts := range m.Timeseries {
				fill(row, ts.Data, window.Start, step)
			}
		}
	})
	if err != nil {
		return nil, err
	}
	// Requests, over the window: each interval's per-minute average times
	// its minutes.
	if agg == "average" {
		err = each(endpoints, AMLEndpointNamespace, []string{AMLMetricRequests}, "deployment eq '*'", "average", func(r resourceMetrics) {
			byName := byEndpoint[strings.ToLower(r.ResourceID)]
			for _, m := range r.Value {
				for _, ts := range m.Timeseries {
					i, ok := byName[strings.ToLower(dimension(ts.Metadata, "deployment"))]
					if !ok {
						continue
					}
					s := get(i)
					for _, d := range ts.Data {
						if d.Average.ok && !d.TimeStamp.Before(window.Start) && d.TimeStamp.Before(window.End) {
							s.requests += d.Average.v * step.Minutes()
							s.requestsRead = true
						}
					}
				}
			}
		})
		if err != nil {
			return nil, err
		}
	}
	// Workspaces: each compute's GPU, and the clusters' active nodes.
	err = each(workspaces, AMLWorkspaceNamespace, []string{AMLMetricGPU}, "ComputeName eq '*'", agg, func(r resourceMetrics) {
		byName := byWorkspace[strings.ToLower(r.ResourceID)]
		for _, m := range r.Value {
			for _, ts := range m.Timeseries {
				if i, ok := byName[strings.ToLower(dimension(ts.Metadata, "ComputeName"))]; ok {
					fill(get(i).gpu, ts.Data, window.Start, step)
				}
			}
		}
	})
	if err != nil {
		return nil, err
	}
	var clusters []string
	for _, ws := range workspaces {
		for _, i := range byWorkspace[strings.ToLower(ws)] {
			if instances[i].Managed.Kind == fleet.KindComputeCluster {
				clusters = append(clusters, ws)
				break
			}
		}
	}
	err = each(clusters, AMLWorkspaceNamespace, []string{AMLMetricActiveNodes}, "ClusterName eq '*'", "maximum", func(r resourceMetrics) {
		byName := byWorkspace[strings.ToLower(r.ResourceID)]
		for _, m := range r.Value {
			for _, ts := range m.Timeseries {
				i, ok := byName[strings.ToLower(dimension(ts.Metadata, "ClusterName"))]
				if !ok || instances[i].Managed.Kind != fleet.KindComputeCluster {
					continue
				}
				s := get(i)
				for _, d := range ts.Data {
					v := d.Maximum
					if !v.ok {
						v = d.Average
					}
					if v.ok && !d.TimeStamp.Before(window.Start) && d.TimeStamp.Before(window.End) {
						s.activeRead = true
						s.activeNonZero = s.activeNonZero || v.v > 0
					}
				}
			}
		}
	})
	if err != nil {
		return nil, err
	}
	var notes []string
	for _, i := range idx {
		in := &instances[i]
		s := series[i]
		if s == nil {
			s = &amlSeries{}
		}
		if s.requestsRead {
			v := math.Round(s.requests)
			in.Managed.Requests = &v
		}
		if in.Managed.Kind == fleet.KindComputeCluster {
			switch {
			case s.activeRead && !s.activeNonZero:
				zero := 0.0
				in.Managed.Jobs = &zero
			case s.activeNonZero:
				notes = append(notes, fmt.Sprintf("%s: nodes were active in the window (Active Nodes); how many jobs ran is not a metric, so jobs stays unknown", in.ID))
			}
		}
		samples := amlSamples(s, window.Start, step)
		if !hasGPU(samples) {
			in.Utilization = nil
			notes = append(notes, fmt.Sprintf("%s: no GPU metrics (%s) in %s: utilization unknown, never taken as idle", in.ID, AMLMetricGPU, window))
			continue
		}
		w := window
		// One series stands for all of an instance's GPUs.
		in.Utilization = &fleet.Utilization{Window: &w, Samples: samples, Source: "azure-monitor", Coverage: fleet.SampleCoverage(samples, 1)}
	}
	return notes, nil
}

// dimension is a series' value of a dimension ("" when absent).
func dimension(md []struct {
	Name struct {
		Value string `json:"value"`
	} `json:"name"`
	Value string `json:"value"`
}, name string) string {
	for _, m := range md {
		if strings.EqualFold(m.Name.Value, name) {
			return m.Value
		}
	}
	return ""
}

// fill puts a series' datapoints into row, averaging with what another
// series (another instance) put there.
func fill(row []float64, data batchData, start time.Time, step time.Duration) {
	for _, d := range data {
		v := d.Average
		if !v.ok {
			v = d.Maximum
		}
		if !v.ok || d.TimeStamp.Before(start) {
			continue
		}
		k := int(d.TimeStamp.Sub(start) / step)
		if k >= len(row) {
			continue
		}
		x := min(max(v.v, 0), 100)
		if math.IsNaN(row[k]) {
			row[k] = x
		} else {
			row[k] = (row[k] + x) / 2
		}
	}
}

// amlSamples are an item's samples, one per interval with a reading.
func amlSamples(s *amlSeries, start time.Time, step time.Duration) []fleet.Sample {
	var out []fleet.Sample
	for k := range s.gpu {
		g, m := s.gpu[k], s.mem[k]
		if math.IsNaN(g) && math.IsNaN(m) {
			continue
		}
		smp := fleet.Sample{Time: start.UTC().Add(time.Duration(k) * step)}
		if !math.IsNaN(g) {
			smp.GPU = fleet.PerGPU{g}
		}
		if !math.IsNaN(m) {
			smp.GPUMemory = fleet.PerGPU{m}
		}
		out = append(out, smp)
	}
	return out
}
