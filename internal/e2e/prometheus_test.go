package e2e

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpufinops/gpufinops/internal/purchasetest"
	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/config"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/metrics/prometheus/promtest"
	"github.com/gpufinops/gpufinops/pkg/recommend"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
	"github.com/gpufinops/gpufinops/providers/file"
)

// twoWeeks gives every instance of the demo fleet two weeks of hourly samples
// ending at end: an instance with samples repeats its week(s), moved by whole
// weeks so weekday and hour stay; one with statistics gets a deterministic
// series between its average and its maximum.
func twoWeeks(t *testing.T, f *fleet.Fleet, end time.Time) {
	t.Helper()
	start := end.Add(-14 * 24 * time.Hour)
	for i := range f.Instances {
		in := &f.Instances[i]
		u := in.Utilization
		if u == nil {
			continue
		}
		n := int(math.Max(1, math.Ceil(in.GPU.Count)))
		var out []fleet.Sample
		if len(u.Samples) > 0 {
			for _, s := range u.Samples {
				// Whole weeks from the demo's window to this one.
				weeks := end.Sub(demoEnd).Round(7*24*time.Hour) / (7 * 24 * time.Hour)
				tt := s.Time.Add(time.Duration(weeks) * 7 * 24 * time.Hour)
				for ; !tt.Before(start); tt = tt.Add(-7 * 24 * time.Hour) {
					if tt.Before(end) {
						c := s
						c.Time = tt
						out = append(out, c)
					}
				}
			}
		} else {
			for k, tt := 0, start; tt.Before(end); k, tt = k+1, tt.Add(time.Hour) {
				s := fleet.Sample{Time: tt}
				gpu := value(u.GPU, k)
				// The busiest GPU carries the value; the others idle less.
				for g := 0; g < n; g++ {
					s.GPU = append(s.GPU, math.Round(gpu*float64(n-g)/float64(n)))
				}
				if u.GPUMemory != nil {
					for g := 0; g < n; g++ {
						s.GPUMemory = append(s.GPUMemory, math.Round(value(u.GPUMemory, k)))
					}
				}
				out = append(out, s)
			}
		}
		in.Utilization = &fleet.Utilization{Window: &fleet.TimeRange{Start: start, End: end}, Samples: out}
	}
}

// value is a deterministic reading of stats at hour k: mostly around the
// average, every 40th hour at the maximum.
func value(s *fleet.Stats, k int) float64 {
	if s == nil {
		return 0
	}
	if k%40 == 39 {
		return s.Max
	}
	return []float64{s.Avg, s.Avg, math.Min(s.P95, s.Avg+1), math.Max(0, s.Avg-1)}[k%4]
}

// TestPrometheusMatchesInline is the acceptance test of the Prometheus/DCGM
// source: the whole demo fleet with two weeks of hourly samples inline, and
// the same fleet without utilization read through ReadFleet (--metrics
// prometheus) from a real Prometheus holding those samples as DCGM exporter
// series, give the same recommendations and totals.
func TestPrometheusMatchesInline(t *testing.T) {
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	demo, err := file.Demo()
	if err != nil {
		t.Fatal(err)
	}
	if err := pricing.Complete(demo, cat); err != nil {
		t.Fatal(err)
	}
	// The newest whole week before now that is a whole number of weeks
	// after the demo's window (Prometheus keeps what the test loads 30 days).
	now := time.Now().UTC().Truncate(time.Hour)
	end := demoEnd.Add((now.Sub(demoEnd) / (7 * 24 * time.Hour)) * 7 * 24 * time.Hour)
	if end.After(now) {
		end = end.Add(-7 * 24 * time.Hour)
	}
	twoWeeks(t, demo, end)

	url := promtest.Start(t, promtest.OpenMetrics(promtest.DCGM(demo.Instances, promtest.DCGMOptions{})))

	stripped := func() *fleet.Fleet {
		f := *demo
		f.Instances = append([]fleet.Instance(nil), demo.Instances...)
		for i := range f.Instances {
			f.Instances[i].Utilization = nil
		}
		return &f
	}
	flags := cmdutil.FleetFlags{Path: "demo-no-utilization.yaml", LookbackDays: 14,
		Metrics: cmdutil.MetricsFlags{Source: cmdutil.MetricsPrometheus, PrometheusURL: url, Now: func() time.Time { return end }}}
	if err := flags.Validate(); err != nil {
		t.Fatal(err)
	}
	got, err := cmdutil.ReadFleet(context.Background(), func() (*config.Config, error) { return &config.Config{}, nil },
		func() (pricing.Catalog, error) { return cat, nil },
		func(string, bool) (*fleet.Fleet, error) { return stripped(), nil }, nil, flags)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Failures) != 0 {
		t.Fatalf("failures: %v", got.Failures)
	}
	filled := 0
	for _, in := range got.Fleet.Instances {
		if in.Utilization != nil {
			filled++
			if in.Utilization.CoverageFraction() != 1 {
				t.Errorf("%s: coverage %v, want 1", in.ID, in.Utilization.CoverageFraction())
			}
		}
	}
	if filled == 0 {
		t.Fatal("Prometheus filled no instance")
	}
	want := summarize(recommend.Run(demo, cat, recommend.DefaultPolicy().WithPurchases(purchasetest.Purchases())))
	have := summarize(recommend.Run(got.Fleet, cat, recommend.DefaultPolicy().WithPurchases(purchasetest.Purchases())))
	if d := cmp.Diff(want, have, cmp.AllowUnexported(outcome{})); d != "" {
		t.Errorf("inline vs Prometheus (-inline +prometheus):\n%s", d)
	}
	t.Logf("%d recommendations, %d instances filled from Prometheus, savings %s of %s", len(want.recs), filled, want.savings, want.current)
	if len(want.recs) == 0 {
		t.Error("no recommendations: the comparison proves nothing")
	}
}
