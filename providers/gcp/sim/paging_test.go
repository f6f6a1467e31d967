package sim

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// splitResponse is a ListTimeSeriesResponse's series (field 1) and next
// page token (field 2).
func splitResponse(t *testing.T, b []byte) (series [][]byte, next string) {
	t.Helper()
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 || typ != protowire.BytesType {
			t.Fatalf("bad response field")
		}
		b = b[n:]
		v, m := protowire.ConsumeBytes(b)
		if m < 0 {
			t.Fatalf("bad response field %d", num)
		}
		b = b[m:]
		switch num {
		case 1:
			series = append(series, v)
		case 2:
			next = string(v)
		}
	}
	return series, next
}

// TestPagesAreTheUnpagedAnswer: a ListTimeSeries answer read page by page
// (the pages after the first served from its snapshot) has the series of
// the same query read in one page, in the same order, for every aligner.
func TestPagesAreTheUnpagedAnswer(t *testing.T) {
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	w := fleet.TimeRange{Start: now.Add(-7 * 24 * time.Hour), End: now}
	f := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind}
	for i := range 30 {
		f.Instances = append(f.Instances, fleet.Instance{
			ID: fmt.Sprintf("vm-%02d", i), Provider: fleet.GCP, Account: "proj", Region: "us-central1", Zone: "us-central1-a",
			InstanceType: "a2-highgpu-2g", GPU: fleet.GPU{Model: "A100", Count: 2, MemoryGiB: 40}, Lifecycle: fleet.OnDemand, State: fleet.Running,
			Utilization: &fleet.Utilization{Window: &w, GPU: &fleet.Stats{Avg: float64(i), P95: float64(2 * i), Max: float64(3 * i)}},
		})
	}
	s := New(f, Options{Project: "proj", Now: func() time.Time { return now }})
	filter := `metric.type = "agent.googleapis.com/gpu/utilization" AND resource.type = "gce_instance" AND resource.label.zone = starts_with("us-central1-")`
	flt, err := parseMonitoringFilter(filter)
	if err != nil {
		t.Fatal(err)
	}
	for _, aligner := range []int{alignMean, alignMax} {
		req := request{name: "projects/proj", filter: filter, start: w.Start, end: w.End, period: time.Hour, aligner: aligner, reducer: reduceMean,
			groupBy: []string{"resource.label.instance_id", "metric.label.gpu_number"}}
		whole, err := s.listTimeSeries(req, flt)
		if err != nil {
			t.Fatal(err)
		}
		want, next := splitResponse(t, whole)
		if next != "" || len(want) != 60 {
			t.Fatalf("one page: %d series, next %q; want 60 and none", len(want), next)
		}
		req.pageSize = 3 * 168 // three series a page
		var got [][]byte
		pages := 0
		for {
			b, err := s.listTimeSeries(req, flt)
			if err != nil {
				t.Fatal(err)
			}
			series, next := splitResponse(t, b)
			got = append(got, series...)
			pages++
			if next == "" {
				break
			}
			req.pageToken = next
		}
		if pages != 20 || len(got) != len(want) {
			t.Fatalf("aligner %d: %d pages of %d series, want 20 of 60", aligner, pages, len(got))
		}
		for i := range want {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("aligner %d: series %d differs between the pages and the one answer", aligner, i)
			}
		}
	}
}

// TestPageCacheIsBounded: the snapshots kept for later pages are the most
// recent pageCacheSize queries.
func TestPageCacheIsBounded(t *testing.T) {
	var c pageCache
	for i := range pageCacheSize + 5 {
		c.put(fmt.Sprint(i), []outSeries{{metric: fmt.Sprint(i)}})
	}
	if len(c.m) != pageCacheSize || len(c.order) != pageCacheSize {
		t.Fatalf("%d snapshots kept, want %d", len(c.m), pageCacheSize)
	}
	if _, ok := c.get("0", "token"); ok {
		t.Error("the oldest snapshot is still kept")
	}
	if got, ok := c.get(fmt.Sprint(pageCacheSize+4), "token"); !ok || got[0].metric != fmt.Sprint(pageCacheSize+4) {
		t.Error("the newest snapshot is not kept")
	}
	if _, ok := c.get(fmt.Sprint(pageCacheSize+4), ""); ok {
		t.Error("a first page was served from a snapshot")
	}
}
