package aws

// SageMaker's CloudWatch metrics (shared/data/managed-ai/metrics.md §1.1):
// an endpoint variant's GPUUtilization and GPUMemoryUtilization in
// /aws/sagemaker/Endpoints (EndpointName, VariantName) and its Invocations
// in AWS/SageMaker; a training or processing job's per host (Host
// <job>/algo-<n>). The GPU figures are summed over the instance's GPUs
// (0–100 × GPU count). Notebook instances and Studio apps publish none.

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// The SageMaker namespaces and metrics read.
const (
	NamespaceSageMakerEndpoints  = "/aws/sagemaker/Endpoints"
	NamespaceSageMakerTraining   = "/aws/sagemaker/TrainingJobs"
	NamespaceSageMakerProcessing = "/aws/sagemaker/ProcessingJobs"
	NamespaceSageMakerInvocation = "AWS/SageMaker"
	MetricSageMakerGPU           = "GPUUtilization"
	MetricSageMakerGPUMemory     = "GPUMemoryUtilization"
	MetricSageMakerInvocations   = "Invocations"
)

// NoSageMakerMetricNote is the note for a notebook instance or Studio app.
const NoSageMakerMetricNote = "no GPU metric: SageMaker publishes none; use --metrics prometheus or --metrics-file"

// isSageMaker reports whether an instance is a SageMaker item.
func isSageMaker(in *fleet.Instance) bool {
	return in.Managed != nil && in.Managed.Service == fleet.SageMaker
}

// smQuery is one SageMaker series of one item.
type smQuery struct {
	inst int // index into the instances read
	what metricKind
	// invocations: a Sum series, read apart.
	invocations bool
	metric      cwtypes.Metric
}

// sageMakerQueries are the series of the running SageMaker items; items
// with none (notebooks, Studio apps) are returned apart.
func sageMakerQueries(instances []fleet.Instance, idx []int) (queries []smQuery, none []int) {
	dim := func(n, v string) cwtypes.Dimension {
		return cwtypes.Dimension{Name: aws.String(n), Value: aws.String(v)}
	}
	metric := func(ns, name string, dims ...cwtypes.Dimension) cwtypes.Metric {
		return cwtypes.Metric{Namespace: aws.String(ns), MetricName: aws.String(name), Dimensions: dims}
	}
	for _, i := range idx {
		in := &instances[i]
		m := in.Managed
		switch m.Kind {
		case fleet.KindEndpoint:
			dims := []cwtypes.Dimension{dim("EndpointName", m.Endpoint), dim("VariantName", m.Deployment)}
			queries = append(queries,
				smQuery{inst: i, what: kindGPU, metric: metric(NamespaceSageMakerEndpoints, MetricSageMakerGPU, dims...)},
				smQuery{inst: i, what: kindGPUMemUsed, metric: metric(NamespaceSageMakerEndpoints, MetricSageMakerGPUMemory, dims...)},
				smQuery{inst: i, invocations: true, metric: metric(NamespaceSageMakerInvocation, MetricSageMakerInvocations, dims...)})
		case fleet.KindTrainingJob, fleet.KindProcessingJob:
			ns := NamespaceSageMakerTraining
			if m.Kind == fleet.KindProcessingJob {
				ns = NamespaceSageMakerProcessing
			}
			for n := 1; n <= max(m.CurrentReplicas(), 1); n++ {
				host := dim("Host", in.Name+"/algo-"+strconv.Itoa(n))
				queries = append(queries,
					smQuery{inst: i, what: kindGPU, metric: metric(ns, MetricSageMakerGPU, host)},
					smQuery{inst: i, what: kindGPUMemUsed, metric: metric(ns, MetricSageMakerGPUMemory, host)})
			}
		default:
			none = append(none, i)
		}
	}
	return queries, none
}

// readRows reads each metric's row at the period with GetMetricData
// (batched as readSeries batches), NaN where there is no datapoint.
func (p *Provider) readRows(ctx context.Context, c metricsAPI, metrics []cwtypes.Metric, window fleet.TimeRange, period time.Duration, stat string) ([][]float64, error) {
	all := make([]series, len(metrics))
	for i, m := range metrics {
		all[i] = series{id: "s" + strconv.Itoa(i), inst: i, kind: kindCPU, gpu: -1, metric: m}
	}
	grids, _, err := p.readSeries(ctx, c, all, window, period, stat)
	if err != nil {
		return nil, err
	}
	rows := make([][]float64, len(metrics))
	for i := range metrics {
		if g := grids[i]; g != nil {
			rows[i] = g.cpu
		}
	}
	return rows, nil
}

// readSageMaker fills the running SageMaker items' utilization (idx are
// their positions in instances): GPU and GPU memory divided by the GPU
// count, each GPU given the mean (SageMaker publishes only the sum), a
// job's hosts averaged; Invocations summed over the window into
// Managed.Requests, left nil when CloudWatch has no datapoint (missing
// data never means idle). Notebooks and Studio apps keep a nil
// Utilization and are named in the notes.
func (p *Provider) readSageMaker(ctx context.Context, c metricsAPI, instances []fleet.Instance, idx []int, window fleet.TimeRange, period time.Duration, stat string) ([]string, error) {
	queries, none := sageMakerQueries(instances, idx)
	var notes []string
	for _, i := range none {
		instances[i].Utilization = nil
		notes = append(notes, instances[i].ID+": "+NoSageMakerMetricNote)
	}
	if len(queries) == 0 {
		return notes, nil
	}
	var gauges, sums []cwtypes.Metric
	var gaugeQ, sumQ []smQuery
	for _, q := range queries {
		if q.invocations {
			sums, sumQ = append(sums, q.metric), append(sumQ, q)
		} else {
			gauges, gaugeQ = append(gauges, q.metric), append(gaugeQ, q)
		}
	}
	rows, err := p.readRows(ctx, c, gauges, window, period, stat)
	if err != nil {
		return nil, err
	}
	var sumRows [][]float64
	if len(sums) > 0 {
		if sumRows, err = p.readRows(ctx, c, sums, window, period, "Sum"); err != nil {
			return nil, err
		}
	}
	steps := max(int((window.End.Sub(window.Start.Truncate(period))+period-1)/period), 1)
	// Per item and kind, the mean over its hosts of each period.
	type acc struct{ sum, n []float64 }
	per := map[int]map[metricKind]*acc{}
	for k, q := range gaugeQ {
		row := rows[k]
		if row == nil {
			continue
		}
		if per[q.inst] == nil {
			per[q.inst] = map[metricKind]*acc{}
		}
		a := per[q.inst][q.what]
		if a == nil {
			a = &acc{sum: make([]float64, steps), n: make([]float64, steps)}
			per[q.inst][q.what] = a
		}
		for t, v := range row {
			if t < steps && !math.IsNaN(v) {
				a.sum[t] += v
				a.n[t]++
			}
		}
	}
	requests := map[int]*float64{}
	for k, q := range sumQ {
		for _, v := range sumRows[k] {
			if math.IsNaN(v) {
				continue
			}
			if requests[q.inst] == nil {
				requests[q.inst] = new(0.0)
			}
			*requests[q.inst] += v
		}
	}
	base := window.Start.UTC().Truncate(period)
	windowHours := window.Hours()
	seen := map[int]bool{}
	for _, q := range queries {
		i := q.inst
		if seen[i] {
			continue
		}
		seen[i] = true
		in := &instances[i]
		if r := requests[i]; r != nil {
			v := math.Round(*r)
			in.Managed.Requests = &v
		}
		gpus := max(int(math.Ceil(in.GPU.Count)), 1)
		gpu, mem := per[i][kindGPU], per[i][kindGPUMemUsed]
		var samples []fleet.Sample
		for t := 0; t < steps; t++ {
			has := func(a *acc) bool { return a != nil && a.n[t] > 0 }
			if !has(gpu) && !has(mem) {
				continue
			}
			s := fleet.Sample{Time: base.Add(time.Duration(t) * period)}
			if has(gpu) {
				s.GPU = spread(a2v(gpu.sum[t], gpu.n[t], gpus), gpus)
			}
			if has(mem) {
				s.GPUMemory = spread(a2v(mem.sum[t], mem.n[t], gpus), gpus)
			}
			samples = append(samples, s)
		}
		if len(samples) > 0 {
			h := float64(len(samples)) * period.Hours() / windowHours * fleet.HoursPerMonth
			in.Usage = fleet.Usage{HoursPerMonth: &h}
		}
		if !hasGPU(samples) {
			in.Utilization = nil
			notes = append(notes, fmt.Sprintf("%s: no %s in %s", in.ID, MetricSageMakerGPU, *q.metric.Namespace))
			continue
		}
		w := window
		in.Utilization = &fleet.Utilization{Window: &w, Samples: samples, Coverage: fleet.SampleCoverage(samples, in.GPU.Count)}
	}
	return notes, nil
}

// a2v is one GPU's share of a summed reading: the hosts' mean divided by
// the GPUs, within 0–100.
func a2v(sum, hosts float64, gpus int) float64 {
	return percent(round6(sum / hosts / float64(gpus)))
}

// spread gives each of n GPUs the value v.
func spread(v float64, n int) fleet.PerGPU {
	out := make(fleet.PerGPU, n)
	for i := range out {
		out[i] = v
	}
	return out
}
