package gcp

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"cloud.google.com/go/monitoring/apiv3/v2/monitoringpb"
	"google.golang.org/api/iterator"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers"
)

// The Vertex AI metrics read (shared/data/managed-ai/metrics.md §2): an
// endpoint's accelerator duty cycle (a 0–1 fraction of time the
// accelerators were busy, averaged over a deployed model's replicas), its
// accelerator memory used (bytes of a replica, over its GPUs' memory) and
// its predictions (DELTA INT64, summed over the window); a custom job's
// training accelerator utilization (a 0–1 fraction). A Workbench
// instance is measured as the VM it is (the Ops Agent's metrics).
const (
	MetricVertexDutyCycle   = "aiplatform.googleapis.com/prediction/online/accelerator/duty_cycle"
	MetricVertexPredictions = "aiplatform.googleapis.com/prediction/online/prediction_count"
	MetricVertexAccelMemory = "aiplatform.googleapis.com/prediction/online/accelerator/memory/bytes_used"
	MetricVertexTraining    = "ml.googleapis.com/training/accelerator/utilization"
	resourceVertexEndpoint  = "aiplatform.googleapis.com/Endpoint"
	resourceVertexJob       = "cloudml_job"
)

// vertexQuery is one ListTimeSeries over a project's Vertex AI items.
type vertexQuery struct {
	metric, resource string
	groupBy          []string
	aligner          monitoringpb.Aggregation_Aligner
	reducer          monitoringpb.Aggregation_Reducer
	// key names the item a series is of: "endpoint/deployed model" or the
	// job ID.
	key func(ts *monitoringpb.TimeSeries) string
}

var (
	dutyCycleQuery = vertexQuery{metric: MetricVertexDutyCycle, resource: resourceVertexEndpoint,
		groupBy: []string{"resource.label.endpoint_id", "metric.label.deployed_model_id"}, aligner: monitoringpb.Aggregation_ALIGN_MEAN, reducer: monitoringpb.Aggregation_REDUCE_MEAN,
		key: deploymentKey}
	predictionsQuery = vertexQuery{metric: MetricVertexPredictions, resource: resourceVertexEndpoint,
		groupBy: []string{"resource.label.endpoint_id", "metric.label.deployed_model_id"}, aligner: monitoringpb.Aggregation_ALIGN_SUM, reducer: monitoringpb.Aggregation_REDUCE_SUM,
		key: deploymentKey}
	accelMemoryQuery = vertexQuery{metric: MetricVertexAccelMemory, resource: resourceVertexEndpoint,
		groupBy: []string{"resource.label.endpoint_id", "metric.label.deployed_model_id"}, aligner: monitoringpb.Aggregation_ALIGN_MEAN, reducer: monitoringpb.Aggregation_REDUCE_MEAN,
		key: deploymentKey}
	trainingQuery = vertexQuery{metric: MetricVertexTraining, resource: resourceVertexJob,
		groupBy: []string{"resource.label.job_id"}, aligner: monitoringpb.Aggregation_ALIGN_MEAN, reducer: monitoringpb.Aggregation_REDUCE_MEAN,
		key: func(ts *monitoringpb.TimeSeries) string { return ts.GetResource().GetLabels()["job_id"] }}
)

func deploymentKey(ts *monitoringpb.TimeSeries) string {
	return ts.GetResource().GetLabels()["endpoint_id"] + "/" + ts.GetMetric().GetLabels()["deployed_model_id"]
}

// vertexKey is the key vertexQuery.key gives an item's series.
func vertexKey(in fleet.Instance) string {
	if in.Managed.Kind == fleet.KindEndpoint {
		return in.Managed.Endpoint + "/" + in.Managed.Deployment
	}
	return nameOf(in.ID)
}

func nameOf(id string) string {
	for i := len(id) - 1; i >= 0; i-- {
		if id[i] == '/' {
			return id[i+1:]
		}
	}
	return id
}

// isVertexItem reports whether an item is measured through the Vertex AI
// metrics: an endpoint deployment or a custom job.
func isVertexItem(in fleet.Instance) bool {
	return in.Managed != nil && in.Managed.Service == fleet.VertexAI && (in.Managed.Kind == fleet.KindEndpoint || in.Managed.Kind == fleet.KindTrainingJob)
}

// readVertexSeries runs one query over a project: key → values per period
// of the window (aligner's value, unscaled).
func (p *Provider) readVertexSeries(ctx context.Context, project string, q vertexQuery, w fleet.TimeRange, period time.Duration) (map[string][]float64, error) {
	req := &monitoringpb.ListTimeSeriesRequest{
		Name:     "projects/" + project,
		Filter:   fmt.Sprintf(`metric.type = %q AND resource.type = %q`, q.metric, q.resource),
		Interval: &monitoringpb.TimeInterval{StartTime: timestamppb.New(w.Start), EndTime: timestamppb.New(w.End)},
		Aggregation: &monitoringpb.Aggregation{AlignmentPeriod: durationpb.New(period), PerSeriesAligner: q.aligner,
			CrossSeriesReducer: q.reducer, GroupByFields: q.groupBy},
		View:     monitoringpb.ListTimeSeriesRequest_FULL,
		PageSize: timeSeriesPage,
	}
	ps := windowPeriods(w, period)
	step := int64(period / time.Second)
	out := map[string][]float64{}
	it := p.metrics.ListTimeSeries(ctx, req)
	for {
		ts, err := it.Next()
		if errors.Is(err, iterator.Done) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("ListTimeSeries %s: %w", q.metric, callError(ctx, err))
		}
		k := q.key(ts)
		vals := out[k]
		if vals == nil {
			vals = make([]float64, ps.n)
			for i := range vals {
				vals[i] = math.NaN()
			}
			out[k] = vals
		}
		for _, pt := range ts.GetPoints() {
			v := pointValue(pt.GetValue())
			if slot, ok := ps.slot(pt.GetInterval().GetEndTime().GetSeconds() - step); ok && !math.IsNaN(v) {
				vals[slot] = v
			}
		}
	}
}

// sharedVertexSeries is readVertexSeries once per scan, project, query
// and window: the project's regions share it. A failed read is not kept.
func (p *Provider) sharedVertexSeries(ctx context.Context, project string, q vertexQuery, w fleet.TimeRange, period time.Duration) (map[string][]float64, error) {
	s := p.currentScan()
	key := fmt.Sprint(project, "\x00", q.metric, "\x00", w.Start.Unix(), "\x00", w.End.Unix(), "\x00", period)
	for {
		s.mu.Lock()
		if s.vertexSeries == nil {
			s.vertexSeries = map[string]*flight[map[string][]float64]{}
		}
		f := s.vertexSeries[key]
		mine := f == nil
		if mine {
			f = newFlight[map[string][]float64]()
			s.vertexSeries[key] = f
		}
		s.mu.Unlock()
		if mine {
			f.val, f.err = p.readVertexSeries(ctx, project, q, w, period)
			close(f.done)
		}
		v, err := f.wait(ctx)
		if err == nil {
			return v, nil
		}
		s.mu.Lock()
		if s.vertexSeries[key] == f {
			delete(s.vertexSeries, key)
		}
		s.mu.Unlock()
		if mine || !endedElsewhere(ctx, err) {
			return nil, err
		}
	}
}

// readVertexUtilization measures the scope's Vertex AI items: one query
// per metric over the project (only the metrics some item needs), each
// item taking its own series. The duty cycle and training utilization,
// × 100, are the GPU percent of every GPU of a replica; predictions
// summed over the window are the requests, set only when the endpoint
// has a series (unknown otherwise, never zero).
func (p *Provider) readVertexUtilization(ctx context.Context, scope providers.Scope, items []*fleet.Instance, window fleet.TimeRange) ([]string, error) {
	window, period := p.metricWindow(window)
	ps := windowPeriods(window, period)
	var endpoints, jobs bool
	for _, in := range items {
		endpoints = endpoints || in.Managed.Kind == fleet.KindEndpoint
		jobs = jobs || in.Managed.Kind == fleet.KindTrainingJob
	}
	read := func(q vertexQuery, need bool) (map[string][]float64, error) {
		if !need {
			return nil, nil
		}
		return p.sharedVertexSeries(ctx, scope.Account, q, window, period)
	}
	duty, err := read(dutyCycleQuery, endpoints)
	if err != nil {
		return nil, err
	}
	preds, err := read(predictionsQuery, endpoints)
	if err != nil {
		return nil, err
	}
	accelMem, err := read(accelMemoryQuery, endpoints)
	if err != nil {
		return nil, err
	}
	train, err := read(trainingQuery, jobs)
	if err != nil {
		return nil, err
	}
	var notes []string
	for _, in := range items {
		src, what := duty, MetricVertexDutyCycle
		if in.Managed.Kind == fleet.KindTrainingJob {
			src, what = train, MetricVertexTraining
		}
		k := vertexKey(*in)
		if in.Managed.Kind == fleet.KindEndpoint {
			if vals, ok := preds[k]; ok {
				sum := 0.0
				for _, v := range vals {
					if !math.IsNaN(v) {
						sum += v
					}
				}
				in.Managed.Requests = &sum
			}
		}
		vals, ok := src[k]
		if !ok {
			in.Utilization = nil
			notes = append(notes, fmt.Sprintf("%s: no %s series in Cloud Monitoring", in.ID, what))
			continue
		}
		util := grid{}
		gpus := max(int(math.Ceil(in.GPU.Count)), 1)
		for slot, v := range vals {
			if math.IsNaN(v) {
				continue
			}
			for g := range gpus {
				util.set(ps.n, slot, g, clampPercent(v*100))
			}
		}
		// Accelerator memory: a replica's bytes over its GPUs' memory.
		var mem grid
		if total := in.GPU.MemoryGiB * float64(gpus) * (1 << 30); in.Managed.Kind == fleet.KindEndpoint && total > 0 {
			if bytes, ok := accelMem[k]; ok {
				mem = grid{}
				for slot, v := range bytes {
					if !math.IsNaN(v) {
						for g := range gpus {
							mem.set(ps.n, slot, g, clampPercent(100*v/total))
						}
					}
				}
			}
		}
		samples, n := toSamples(ps, util, mem, nil, nil)
		if n == 0 {
			in.Utilization = nil
			continue
		}
		h := float64(n) * period.Hours() / window.Hours() * fleet.HoursPerMonth
		in.Usage = fleet.Usage{HoursPerMonth: &h}
		w := window
		in.Utilization = &fleet.Utilization{Window: &w, Samples: samples, Source: p.MetricsSource(), Coverage: fleet.SampleCoverage(samples, in.GPU.Count)}
	}
	return notes, nil
}
