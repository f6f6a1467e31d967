package aws

import (
	"context"
	"testing"
	"time"

	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// The re-check read asks for Maximum over a window that includes the
// current minute, and a GPU whose series has no datapoint in a minute is
// absent from that sample, never 0.
func TestPeakReadUsesMaximumAndKeepsMissingGPUsMissing(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 40, 0, time.UTC)
	f := newFakeCW()
	for _, idx := range []string{"0", "1", "2", "3"} {
		f.add(DefaultNamespace, MetricGPUUtilization, "InstanceId", "i-4", "InstanceType", "g4dn.12xlarge", "index", idx, "name", "T4")
	}
	// GPU 2 stops reporting at 11:50; GPU 3 never reports.
	f.value = func(m cwtypes.Metric, at time.Time) (float64, bool) {
		switch metricDim(m, "index") {
		case "2":
			return 0, at.Before(time.Date(2026, 11, 30, 11, 50, 0, 0, time.UTC))
		case "3":
			return 0, false
		}
		return 1, true
	}
	p := unitProvider()
	p.opts.Now = func() time.Time { return now }
	instances := []fleet.Instance{{ID: "i-4", State: fleet.Running}}
	end := now.Truncate(time.Minute).Add(time.Minute)
	if _, err := p.readUtilizationStat(context.Background(), f, instances, fleet.TimeRange{Start: end.Add(-30 * time.Minute), End: end}, statMaximum); err != nil {
		t.Fatal(err)
	}
	if !f.stats["Maximum"] || len(f.stats) != 1 {
		t.Errorf("stats %v, want Maximum only", f.stats)
	}
	if !f.ends[0].Equal(end) {
		t.Errorf("EndTime %v, want %v (the current minute included)", f.ends[0], end)
	}
	u := instances[0].Utilization
	if u == nil || len(u.Samples) == 0 {
		t.Fatal("no samples")
	}
	for _, s := range u.Samples {
		want := 3
		if !s.Time.Before(time.Date(2026, 11, 30, 11, 50, 0, 0, time.UTC)) {
			want = 2
		}
		if len(s.GPU) != want {
			t.Fatalf("%s: %d GPU values %v, want %d (missing GPUs absent)", s.Time.Format("15:04"), len(s.GPU), s.GPU, want)
		}
		for _, v := range s.GPU {
			if v != 1 && v != 0 {
				t.Fatalf("value %v", v)
			}
		}
	}
}
