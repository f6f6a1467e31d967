package prometheus_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/metrics/prometheus"
	"github.com/gpufinops/gpufinops/pkg/metrics/prometheus/promtest"
)

// window is the last two whole weeks of hours.
func window() fleet.TimeRange {
	end := time.Now().UTC().Truncate(time.Hour)
	return fleet.TimeRange{Start: end.Add(-14 * 24 * time.Hour), End: end}
}

// instance has hourly samples over the window for two GPUs, host CPU and
// memory, leaving out the hours in gap.
func instance(id, name string, n int, w fleet.TimeRange, gap func(h int) bool) fleet.Instance {
	var samples []fleet.Sample
	for h := 0; w.Start.Add(time.Duration(h) * time.Hour).Before(w.End); h++ {
		if gap != nil && gap(h) {
			continue
		}
		cpu := float64((h*17+n)%1000) / 10
		mem := float64((h*7+n*3)%800) / 10
		samples = append(samples, fleet.Sample{
			Time:      w.Start.Add(time.Duration(h) * time.Hour),
			GPU:       fleet.PerGPU{float64((h*37+n*11)%1000) / 10, float64((h*53+n*5)%1000) / 10},
			GPUMemory: fleet.PerGPU{float64((h*13+n*7)%900) / 10, float64((h*29+n)%900) / 10},
			CPU:       &cpu, Memory: &mem,
		})
	}
	return fleet.Instance{
		ID: id, Name: name, Provider: fleet.AWS, Region: "us-east-1", InstanceType: "p4d.24xlarge",
		GPU: fleet.GPU{Model: "A100", Count: 2, MemoryGiB: 40}, Lifecycle: fleet.OnDemand, State: fleet.Running,
		Utilization: &fleet.Utilization{Samples: samples},
	}
}

// bare is the instance without utilization, as a fleet file without it.
func bare(in fleet.Instance) fleet.Instance {
	in.Utilization = nil
	return in
}

func near(a, b float64) bool { return math.Abs(a-b) < 0.011 }

func sameStats(t *testing.T, what string, got, want *fleet.Stats) {
	t.Helper()
	switch {
	case got == nil || want == nil:
		if got != want {
			t.Errorf("%s: got %+v, want %+v", what, got, want)
		}
	case !near(got.Avg, want.Avg) || !near(got.P95, want.P95) || !near(got.Max, want.Max):
		t.Errorf("%s: got %+v, want %+v", what, *got, *want)
	}
}

// TestRealPrometheus reads two weeks of hourly DCGM and node-exporter
// samples back from a real Prometheus server.
func TestRealPrometheus(t *testing.T) {
	w := window()
	plain := []fleet.Instance{
		instance("i-0a", "gpu-a", 0, w, nil),
		instance("i-0b", "gpu-b", 1, w, nil),
		instance("i-0c", "gpu-c", 2, w, func(h int) bool { return h >= 100 && h < 148 }),
	}
	gr := []fleet.Instance{instance("i-gr", "gpu-gr", 3, w, nil)}
	host := []fleet.Instance{instance("i-host", "host-7.example", 4, w, nil)}
	node := []fleet.Instance{instance("i-node0", "", 5, w, nil), instance("i-node1", "", 6, w, nil)}

	var series []promtest.Series
	series = append(series, promtest.DCGM(plain, promtest.DCGMOptions{})...)
	series = append(series, promtest.NodeExporter(plain)...)
	series = append(series, promtest.DCGM(gr, promtest.DCGMOptions{GREngine: func(v float64) float64 { return v / 2 / 100 }})...)
	series = append(series, promtest.DCGM(host, promtest.DCGMOptions{Labels: func(fleet.Instance) map[string]string {
		return map[string]string{"instance_id": ""}
	}})...)
	series = append(series, promtest.DCGM(node, promtest.DCGMOptions{Labels: func(in fleet.Instance) map[string]string {
		n := "aws:///us-east-1a/i-node0"
		if in.ID == "i-node1" {
			n = "ip-10-0-0-1.ec2.internal"
		}
		return map[string]string{"instance_id": "", "Hostname": "dcgm-exporter-x", "node": n}
	}})...)
	series = append(series, promtest.Series{Name: "kube_node_info",
		Labels: map[string]string{"node": "ip-10-0-0-1.ec2.internal", "provider_id": "aws:///us-east-1b/i-node1"},
		Points: []promtest.Point{{T: w.Start, V: 1}, {T: w.Start.Add(24 * time.Hour), V: 1}}})
	url := promtest.Start(t, promtest.OpenMetrics(series))

	read := func(t *testing.T, opts prometheus.Options, want []fleet.Instance) ([]fleet.Instance, []string) {
		t.Helper()
		opts.URL = url
		src, err := prometheus.New(opts)
		if err != nil {
			t.Fatal(err)
		}
		ins := make([]fleet.Instance, len(want))
		for i, in := range want {
			ins[i] = bare(in)
		}
		res, err := src.Read(context.Background(), ins, w)
		if err != nil {
			t.Fatal(err)
		}
		for i := range ins {
			if ins[i].Utilization == nil {
				t.Fatalf("%s: no utilization; notes %q", ins[i].ID, res.Notes)
			}
			if c := res.Coverage[ins[i].ID]; c.Source != "prometheus" || c.Fraction <= 0 {
				t.Errorf("%s: coverage %+v", ins[i].ID, c)
			}
		}
		return ins, res.Notes
	}
	check := func(t *testing.T, got, want fleet.Instance, gpuScale float64, host bool) {
		t.Helper()
		// gpufinops keeps the busiest GPU of each step.
		u := *want.Utilization
		u.Samples = nil
		for _, s := range want.Utilization.Samples {
			g, _ := s.GPU.Max()
			m, _ := s.GPUMemory.Max()
			s.GPU, s.GPUMemory = fleet.PerGPU{g * gpuScale}, fleet.PerGPU{m}
			if !host {
				s.CPU, s.Memory = nil, nil
			}
			u.Samples = append(u.Samples, s)
		}
		ws, gs := u.Summarize(), got.Utilization.Summarize()
		if gs == nil || gs.SampleCount != ws.SampleCount {
			t.Fatalf("%s: got %+v, want %d samples", got.ID, gs, ws.SampleCount)
		}
		sameStats(t, got.ID+" gpu", gs.GPU, ws.GPU)
		sameStats(t, got.ID+" gpuMemory", gs.GPUMemory, ws.GPUMemory)
		sameStats(t, got.ID+" cpu", gs.CPU, ws.CPU)
		sameStats(t, got.ID+" memory", gs.Memory, ws.Memory)
		if got.Utilization.Window == nil || !got.Utilization.Window.Start.Equal(w.Start) || !got.Utilization.Window.End.Equal(w.End) {
			t.Errorf("%s: window %+v, want %+v", got.ID, got.Utilization.Window, w)
		}
		for i, s := range got.Utilization.Samples {
			if !s.Time.Equal(u.Samples[i].Time) {
				t.Fatalf("%s: sample %d at %s, want %s", got.ID, i, s.Time, u.Samples[i].Time)
			}
		}
	}

	t.Run("round trip", func(t *testing.T) {
		src, err := prometheus.New(prometheus.Options{URL: url})
		if err != nil {
			t.Fatal(err)
		}
		ins := []fleet.Instance{bare(plain[0]), bare(plain[1]), bare(plain[2])}
		res, err := src.Read(context.Background(), ins, w)
		if err != nil {
			t.Fatal(err)
		}
		for i := range ins {
			check(t, ins[i], plain[i], 1, true)
		}
		if c := res.Coverage["i-0a"]; c.Fraction != 1 {
			t.Errorf("i-0a coverage %+v, want 1", c)
		}
		if c := res.Coverage["i-0c"]; !near(c.Fraction, 288.0/336) {
			t.Errorf("i-0c coverage %+v, want 288/336", c)
		}
		if h := ins[0].Usage.HoursPerMonth; h == nil || *h != 730 {
			t.Errorf("i-0a hours per month %v, want 730", h)
		}
		if h := ins[2].Usage.HoursPerMonth; h == nil || !near(*h, 730*288.0/336) {
			t.Errorf("i-0c hours per month %v", h)
		}
		if len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "i-0c") {
			t.Errorf("notes %q, want one on i-0c's coverage", res.Notes)
		}
	})
	t.Run("GR engine active preferred", func(t *testing.T) {
		got, _ := read(t, prometheus.Options{}, gr)
		check(t, got[0], gr[0], 0.5, false)
	})
	t.Run("host label", func(t *testing.T) {
		got, _ := read(t, prometheus.Options{}, host)
		check(t, got[0], host[0], 1, false)
	})
	t.Run("node providerID and kube_node_info", func(t *testing.T) {
		got, _ := read(t, prometheus.Options{}, node)
		check(t, got[0], node[0], 1, false)
		check(t, got[1], node[1], 1, false)
	})
	t.Run("file usage kept", func(t *testing.T) {
		h := 200.0
		in := bare(plain[0])
		in.Usage = fleet.Usage{HoursPerMonth: &h}
		src, _ := prometheus.New(prometheus.Options{URL: url})
		ins := []fleet.Instance{in}
		if _, err := src.Read(context.Background(), ins, w); err != nil {
			t.Fatal(err)
		}
		if *ins[0].Usage.HoursPerMonth != 200 {
			t.Errorf("usage changed to %v", *ins[0].Usage.HoursPerMonth)
		}
	})
	t.Run("mapping matches nothing", func(t *testing.T) {
		var ins []fleet.Instance
		for i := range 20 {
			ins = append(ins, bare(instance(fmt.Sprintf("i-other%d", i), "", i, w, nil)))
		}
		src, _ := prometheus.New(prometheus.Options{URL: url})
		_, err := src.Read(context.Background(), ins, w)
		if err == nil || !errors.Is(err, prometheus.ErrFailed) ||
			!strings.Contains(err.Error(), "label instance_id matched none of the 20 instances") ||
			!strings.Contains(err.Error(), "set metrics.prometheus.instance_label") || strings.Contains(err.Error(), "\n") {
			t.Errorf("got %v", err)
		}
	})
	t.Run("some instances without data", func(t *testing.T) {
		ins := []fleet.Instance{bare(plain[0]), bare(instance("i-none", "", 9, w, nil))}
		src, _ := prometheus.New(prometheus.Options{URL: url})
		res, err := src.Read(context.Background(), ins, w)
		if err != nil {
			t.Fatal(err)
		}
		if ins[1].Utilization != nil || len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "i-none: no DCGM series") {
			t.Errorf("notes %q", res.Notes)
		}
		if _, ok := res.Coverage["i-none"]; ok {
			t.Error("coverage for an instance without data")
		}
	})
	t.Run("401 behind a bearer-token proxy", func(t *testing.T) {
		target, _ := neturl(url)
		proxy := httputil.NewSingleHostReverseProxy(target)
		srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer s3cret" {
				http.Error(rw, "unauthorized", http.StatusUnauthorized)
				return
			}
			proxy.ServeHTTP(rw, r)
		}))
		defer srv.Close()
		src, _ := prometheus.New(prometheus.Options{URL: srv.URL, BearerToken: "wrong"})
		_, err := src.Read(context.Background(), []fleet.Instance{bare(plain[0])}, w)
		want := "prometheus at " + srv.URL + ": unauthorized (check the bearer token)"
		if err == nil || err.Error() != want || !errors.Is(err, prometheus.ErrFailed) {
			t.Errorf("got %v, want %s", err, want)
		}
		src, _ = prometheus.New(prometheus.Options{URL: srv.URL, BearerToken: "s3cret"})
		ins := []fleet.Instance{bare(plain[0])}
		if _, err := src.Read(context.Background(), ins, w); err != nil || ins[0].Utilization == nil {
			t.Errorf("with the token: %v", err)
		}
	})
}

func neturl(s string) (*url.URL, error) { return url.Parse(s) }

// TestUnreachable names the server and the cause in one line.
func TestUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := "http://" + l.Addr().String()
	l.Close()
	src, err := prometheus.New(prometheus.Options{URL: addr})
	if err != nil {
		t.Fatal(err)
	}
	w := window()
	_, err = src.Read(context.Background(), []fleet.Instance{bare(instance("i-1", "", 0, w, nil))}, w)
	want := "prometheus at " + addr + ": connection refused"
	if err == nil || err.Error() != want || !errors.Is(err, prometheus.ErrFailed) {
		t.Errorf("got %v, want %s", err, want)
	}
}
