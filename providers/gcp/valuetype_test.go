package gcp

import (
	"context"
	"errors"
	"testing"
	"time"

	"cloud.google.com/go/monitoring/apiv3/v2/monitoringpb"
	"github.com/googleapis/gax-go/v2"
	"google.golang.org/api/iterator"
	metricpb "google.golang.org/genproto/googleapis/api/metric"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/gpufinops/gpufinops/providers/gcp/sim"
)

// TestCountsAreINT64: ALIGN_COUNT and REDUCE_COUNT answers are INT64, as
// the Aggregation enums of google/monitoring/v3/common.proto say
// (providers/gcp/sim/FACTS.md), so the adapter's INT64 decoding runs
// against the simulator: its compact codec and the standard one read the
// same counts, and ALIGN_MEAN stays DOUBLE.
func TestCountsAreINT64(t *testing.T) {
	f := testFleet(t)
	p := newProvider(t, startSim(t, sim.New(f, simOptions(t, f))), []string{"us-central1"})
	day := simNow.Truncate(time.Hour)
	read := func(aligner monitoringpb.Aggregation_Aligner, reducer monitoringpb.Aggregation_Reducer, compact bool) []*monitoringpb.TimeSeries {
		t.Helper()
		req := &monitoringpb.ListTimeSeriesRequest{
			Name: "projects/" + testProject, Filter: `metric.type = "agent.googleapis.com/gpu/utilization"`,
			Interval: &monitoringpb.TimeInterval{StartTime: timestamppb.New(day.Add(-24 * time.Hour)), EndTime: timestamppb.New(day)},
			Aggregation: &monitoringpb.Aggregation{AlignmentPeriod: durationpb.New(time.Hour), PerSeriesAligner: aligner, CrossSeriesReducer: reducer,
				GroupByFields: []string{"resource.label.instance_id"}},
		}
		var opts []gax.CallOption
		if compact {
			opts = append(opts, gax.WithGRPCOptions(grpc.ForceCodecV2(timeSeriesCodec{})))
		}
		it := p.metrics.ListTimeSeries(context.Background(), req, opts...)
		var out []*monitoringpb.TimeSeries
		for {
			ts, err := it.Next()
			if errors.Is(err, iterator.Done) {
				return out
			}
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, ts)
		}
	}
	for _, tc := range []struct {
		name    string
		aligner monitoringpb.Aggregation_Aligner
		reducer monitoringpb.Aggregation_Reducer
		want    metricpb.MetricDescriptor_ValueType
	}{
		{"ALIGN_COUNT", monitoringpb.Aggregation_ALIGN_COUNT, monitoringpb.Aggregation_REDUCE_NONE, metricpb.MetricDescriptor_INT64},
		{"ALIGN_COUNT, REDUCE_MAX", monitoringpb.Aggregation_ALIGN_COUNT, monitoringpb.Aggregation_REDUCE_MAX, metricpb.MetricDescriptor_INT64},
		{"ALIGN_MEAN, REDUCE_COUNT", monitoringpb.Aggregation_ALIGN_MEAN, monitoringpb.Aggregation_REDUCE_COUNT, metricpb.MetricDescriptor_INT64},
		{"ALIGN_COUNT, REDUCE_MEAN", monitoringpb.Aggregation_ALIGN_COUNT, monitoringpb.Aggregation_REDUCE_MEAN, metricpb.MetricDescriptor_DOUBLE},
		{"ALIGN_MEAN", monitoringpb.Aggregation_ALIGN_MEAN, monitoringpb.Aggregation_REDUCE_NONE, metricpb.MetricDescriptor_DOUBLE},
	} {
		compact, standard := read(tc.aligner, tc.reducer, true), read(tc.aligner, tc.reducer, false)
		if len(compact) == 0 || len(compact) != len(standard) {
			t.Fatalf("%s: %d series through the compact codec, %d through the standard one", tc.name, len(compact), len(standard))
		}
		points := 0
		for i, se := range compact {
			if se.GetValueType() != tc.want || standard[i].GetValueType() != tc.want {
				t.Errorf("%s: value type %s (standard codec %s), want %s", tc.name, se.GetValueType(), standard[i].GetValueType(), tc.want)
			}
			for j, pt := range se.GetPoints() {
				points++
				_, isInt := pt.GetValue().GetValue().(*monitoringpb.TypedValue_Int64Value)
				if isInt != (tc.want == metricpb.MetricDescriptor_INT64) {
					t.Errorf("%s: point %v, want a %s value", tc.name, pt.GetValue(), tc.want)
				}
				if a, b := pointValue(pt.GetValue()), pointValue(standard[i].GetPoints()[j].GetValue()); a != b {
					t.Errorf("%s: the compact codec read %v, the standard one %v", tc.name, a, b)
				}
				if tc.aligner == monitoringpb.Aggregation_ALIGN_COUNT && tc.reducer == monitoringpb.Aggregation_REDUCE_NONE {
					if n := pt.GetValue().GetInt64Value(); n < 1 || n > 60 {
						t.Errorf("%s: %d values in an hour of minute samples", tc.name, n)
					}
				}
			}
		}
		if points == 0 {
			t.Errorf("%s: no points", tc.name)
		}
	}
}
