package prometheus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

func TestStepFor(t *testing.T) {
	for _, c := range []struct {
		length, want time.Duration
	}{
		{30 * time.Minute, time.Minute},
		{3 * time.Hour, time.Minute},
		{4 * time.Hour, 5 * time.Minute},
		{48 * time.Hour, 5 * time.Minute},
		{14 * 24 * time.Hour, time.Hour},
		{3 * 365 * 24 * time.Hour, 8601 * time.Second}, // 11,000 points at most
	} {
		got := StepFor(c.length)
		if got != c.want {
			t.Errorf("StepFor(%s) = %s, want %s", c.length, got, c.want)
		}
		if c.length/got > MaxPoints {
			t.Errorf("StepFor(%s) = %s gives more than %d points", c.length, got, MaxPoints)
		}
	}
	if got := fitPoints(365*24*time.Hour, time.Minute); 365*24*time.Hour/got > MaxPoints {
		t.Errorf("a fixed 60s step over a year is not widened: %s", got)
	}
}

func TestQueries(t *testing.T) {
	s, err := New(Options{URL: "http://127.0.0.1:9", InstanceLabel: "iid"})
	if err != nil {
		t.Fatal(err)
	}
	qs := s.queries(time.Hour, true, true, true)
	want := []string{
		"max by (iid, Hostname, node) (avg_over_time(DCGM_FI_PROF_GR_ENGINE_ACTIVE[3600s])) * 100 or max by (iid, Hostname, node) (avg_over_time(DCGM_FI_DEV_GPU_UTIL[3600s]))",
		"max by (iid, Hostname, node) (avg_over_time(DCGM_FI_DEV_FB_USED[3600s]) / (avg_over_time(DCGM_FI_DEV_FB_USED[3600s]) + avg_over_time(DCGM_FI_DEV_FB_FREE[3600s])) * 100)",
		`100 * (1 - avg by (iid, Hostname, node) (rate(node_cpu_seconds_total{mode="idle"}[3600s])))`,
		"100 * (1 - sum by (iid, Hostname, node) (avg_over_time(node_memory_MemAvailable_bytes[3600s])) / sum by (iid, Hostname, node) (avg_over_time(node_memory_MemTotal_bytes[3600s])))",
	}
	for i, q := range qs {
		if q.expr != want[i] {
			t.Errorf("query %d:\n got %s\nwant %s", i, q.expr, want[i])
		}
	}
	if qs := s.queries(time.Hour, false, false, false); len(qs) != 2 || strings.Contains(qs[0].expr, "GR_ENGINE") {
		t.Errorf("without GR_ENGINE_ACTIVE and node-exporter: %v", qs)
	}
}

func TestNewErrors(t *testing.T) {
	for _, c := range []struct {
		opts Options
		want string
	}{
		{Options{}, "prometheus: no URL; set --prometheus-url"},
		{Options{URL: "prom:9090"}, `prometheus: URL "prom:9090" is not an http(s) address`},
		{Options{URL: "http://p", InstanceLabel: "a-b"}, `prometheus: "a-b" is not a label name`},
		{Options{URL: "http://p", BearerToken: "t", Username: "u"}, "prometheus: give a bearer token or basic auth, not both"},
	} {
		if _, err := New(c.opts); err == nil || err.Error() != c.want {
			t.Errorf("New(%+v) = %v, want %s", c.opts, err, c.want)
		}
	}
}

// fakeProm answers the calls Read makes for n instances, counting them.
func fakeProm(t *testing.T, n int, calls *atomic.Int64, status int) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if status != 0 {
			w.WriteHeader(status)
			fmt.Fprint(w, `{"status":"error","errorType":"execution","error":"query timed out in expression evaluation"}`)
			return
		}
		var data any
		switch {
		case strings.HasPrefix(r.URL.Path, "/api/v1/label/"):
			data = []string{"DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "DCGM_FI_DEV_FB_USED", "node_cpu_seconds_total", "node_memory_MemAvailable_bytes", "kube_node_info"}
		case r.URL.Path == "/api/v1/series":
			data = []map[string]string{}
		case r.URL.Path == "/api/v1/query_range":
			start := r.FormValue("start")
			var result []any
			for i := range n {
				result = append(result, map[string]any{
					"metric": map[string]string{"instance_id": fmt.Sprintf("i-%d", i)},
					"values": []any{[]any{json.Number(start), "42"}},
				})
			}
			data = map[string]any{"resultType": "matrix", "result": result}
		default:
			t.Errorf("unexpected call %s", r.URL)
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"status": "success", "data": data})
	}))
}

// TestQueryCountConstant reads 1,000 instances in six requests: metric
// names, four range queries, kube_node_info.
func TestQueryCountConstant(t *testing.T) {
	for _, n := range []int{10, 1000} {
		var calls atomic.Int64
		srv := fakeProm(t, n, &calls, 0)
		s, err := New(Options{URL: srv.URL})
		if err != nil {
			t.Fatal(err)
		}
		ins := make([]fleet.Instance, n)
		for i := range ins {
			ins[i] = fleet.Instance{ID: fmt.Sprintf("i-%d", i), State: fleet.Running}
		}
		end := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
		res, err := s.Read(context.Background(), ins, fleet.TimeRange{Start: end.Add(-14 * 24 * time.Hour), End: end})
		srv.Close()
		if err != nil {
			t.Fatal(err)
		}
		if got := calls.Load(); got != 6 {
			t.Errorf("%d instances: %d requests, want 6", n, got)
		}
		if len(res.Coverage) != n || ins[n-1].Utilization == nil {
			t.Errorf("%d instances: %d covered", n, len(res.Coverage))
		}
	}
}

func TestServerError(t *testing.T) {
	var calls atomic.Int64
	srv := fakeProm(t, 1, &calls, http.StatusServiceUnavailable)
	defer srv.Close()
	s, _ := New(Options{URL: srv.URL})
	_, err := s.Read(context.Background(), []fleet.Instance{{ID: "i-1", State: fleet.Running}}, fleet.TimeRange{})
	want := "prometheus at " + srv.URL + ": listing metric names: execution: query timed out in expression evaluation"
	if err == nil || err.Error() != want || !errors.Is(err, ErrFailed) {
		t.Errorf("got %v, want %s", err, want)
	}
}

func TestNothingRunning(t *testing.T) {
	var calls atomic.Int64
	srv := fakeProm(t, 1, &calls, 0)
	defer srv.Close()
	s, _ := New(Options{URL: srv.URL})
	if _, err := s.Read(context.Background(), []fleet.Instance{{ID: "i-1", State: fleet.Stopped}}, fleet.TimeRange{}); err != nil || calls.Load() != 0 {
		t.Errorf("err %v, %d calls", err, calls.Load())
	}
}

func TestProviderID(t *testing.T) {
	ins := []fleet.Instance{{ID: "i-0abc"}, {ID: "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/vm1"}, {ID: "1234", Name: "gke-node-1"}}
	s, _ := New(Options{URL: "http://127.0.0.1:9"})
	m := s.newMapper(ins, []int{0, 1, 2}, nil)
	for p, want := range map[string]int{
		"aws:///us-east-1a/i-0abc": 0,
		"azure:///subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/vm1": 1,
		"gce://proj/us-central1-a/gke-node-1":                                                        2,
	} {
		if got, ok := m.resolve(map[string]string{"node": p}); !ok || got != want {
			t.Errorf("%s: %d %v, want %d", p, got, ok, want)
		}
	}
	if _, ok := m.resolve(map[string]string{"Hostname": "gke-node-1:9400"}); !ok {
		t.Error("host with a port not matched")
	}
}
