// Package promtest runs a real Prometheus server on loopback for tests,
// loaded with series written as OpenMetrics and imported with promtool, and
// writes NVIDIA DCGM exporter and node-exporter series from fleet samples so
// tests can round-trip utilization through Prometheus.
//
// Start skips the test when the prometheus and promtool binaries are not on
// PATH (Debian: apt-get install prometheus).
package promtest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// Start imports the OpenMetrics text (ending in "# EOF") into a fresh TSDB,
// starts Prometheus on 127.0.0.1 with no scrape targets and 30 days'
// retention, waits until it is ready, and returns its URL. The server is
// stopped when the test ends. Data must lie within the last 30 days.
func Start(t testing.TB, openMetrics string) string {
	t.Helper()
	prom, err1 := exec.LookPath("prometheus")
	promtool, err2 := exec.LookPath("promtool")
	if err1 != nil || err2 != nil {
		t.Skip("prometheus and promtool are not on PATH (apt-get install prometheus)")
	}
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	in := filepath.Join(dir, "series.om")
	if !strings.HasSuffix(strings.TrimSpace(openMetrics), "# EOF") {
		openMetrics = strings.TrimRight(openMetrics, "\n") + "\n# EOF\n"
	}
	if err := os.WriteFile(in, []byte(openMetrics), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(promtool, "tsdb", "create-blocks-from", "openmetrics", "--quiet", in, data).CombinedOutput(); err != nil {
		t.Fatalf("promtool tsdb create-blocks-from openmetrics: %v\n%s", err, out)
	}
	cfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfg, []byte("global:\n  scrape_interval: 1m\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	var log syncBuffer
	cmd := exec.Command(prom,
		"--config.file="+cfg,
		"--storage.tsdb.path="+data,
		"--storage.tsdb.retention.time=30d",
		"--web.listen-address="+addr,
	)
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting prometheus: %v", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	url := "http://" + addr
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/-/ready", nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return url
			}
		}
		select {
		case <-done:
			t.Fatalf("prometheus exited before it was ready:\n%s", log.String())
		case <-ctx.Done():
			t.Fatalf("prometheus not ready after 60s:\n%s", log.String())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// freeAddr finds a free loopback port.
func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// syncBuffer is a bytes.Buffer safe for the server's two output streams.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Series is one time series to write.
type Series struct {
	// Name is the sample name (node_cpu_seconds_total for a counter).
	Name string
	// Counter marks a counter; its family is Name without "_total".
	Counter bool
	Labels  map[string]string
	Points  []Point
}

// Point is one sample.
type Point struct {
	T time.Time
	V float64
}

// OpenMetrics writes the series as OpenMetrics text: families together,
// each series' points in time order, ending in "# EOF".
func OpenMetrics(series []Series) string {
	byFamily := map[string][]Series{}
	counter := map[string]bool{}
	for _, s := range series {
		fam := s.Name
		if s.Counter {
			fam = strings.TrimSuffix(s.Name, "_total")
			counter[fam] = true
		}
		byFamily[fam] = append(byFamily[fam], s)
	}
	fams := make([]string, 0, len(byFamily))
	for f := range byFamily {
		fams = append(fams, f)
	}
	sort.Strings(fams)
	var b strings.Builder
	for _, f := range fams {
		typ := "gauge"
		if counter[f] {
			typ = "counter"
		}
		fmt.Fprintf(&b, "# TYPE %s %s\n", f, typ)
		for _, s := range byFamily[f] {
			ls := labels(s.Labels)
			pts := append([]Point(nil), s.Points...)
			sort.SliceStable(pts, func(i, j int) bool { return pts[i].T.Before(pts[j].T) })
			for _, p := range pts {
				fmt.Fprintf(&b, "%s%s %s %s\n", s.Name, ls, strconv.FormatFloat(p.V, 'g', -1, 64),
					strconv.FormatFloat(float64(p.T.UnixMilli())/1000, 'f', -1, 64))
			}
		}
	}
	b.WriteString("# EOF\n")
	return b.String()
}

func labels(m map[string]string) string {
	if len(m) == 0 {
		return ""
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + strconv.Quote(m[k])
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// DCGMOptions shape the DCGM series.
type DCGMOptions struct {
	// GREngine also writes DCGM_FI_PROF_GR_ENGINE_ACTIVE (a 0–1 ratio) as
	// GREngine(GPU %) when set.
	GREngine func(gpuPercent float64) float64
	// NoGPUUtil leaves DCGM_FI_DEV_GPU_UTIL out.
	NoGPUUtil bool
	// Labels changes an instance's labels: a value replaces the default
	// (gpu, UUID, modelName, Hostname = name or ID, instance_id = ID), an
	// empty value removes the label.
	Labels func(in fleet.Instance) map[string]string
}

// DCGM writes the DCGM exporter series of the instances' samples:
// DCGM_FI_DEV_GPU_UTIL (%), DCGM_FI_DEV_FB_USED and DCGM_FI_DEV_FB_FREE
// (MiB, from GPU memory % of the GPU's memory, 80 GiB when unknown), one
// series per GPU value of the samples.
func DCGM(instances []fleet.Instance, o DCGMOptions) []Series {
	var out []Series
	for _, in := range instances {
		if in.Utilization == nil {
			continue
		}
		total := in.GPU.MemoryGiB * 1024
		if total <= 0 {
			total = 80 * 1024
		}
		type gpuSeries struct{ util, gr, used, free []Point }
		per := map[int]*gpuSeries{}
		get := func(i int) *gpuSeries {
			if per[i] == nil {
				per[i] = &gpuSeries{}
			}
			return per[i]
		}
		for _, s := range in.Utilization.Samples {
			for i, v := range s.GPU {
				g := get(i)
				g.util = append(g.util, Point{s.Time, v})
				if o.GREngine != nil {
					g.gr = append(g.gr, Point{s.Time, o.GREngine(v)})
				}
			}
			for i, v := range s.GPUMemory {
				g := get(i)
				used := v / 100 * total
				g.used = append(g.used, Point{s.Time, used})
				g.free = append(g.free, Point{s.Time, total - used})
			}
		}
		host := in.Name
		if host == "" {
			host = in.ID
		}
		for i, g := range per {
			ls := map[string]string{
				"gpu": strconv.Itoa(i), "UUID": fmt.Sprintf("GPU-%s-%d", in.ID, i), "modelName": "NVIDIA " + in.GPU.Model,
				"Hostname": host, "instance_id": in.ID,
			}
			if o.Labels != nil {
				for k, v := range o.Labels(in) {
					if v == "" {
						delete(ls, k)
					} else {
						ls[k] = v
					}
				}
			}
			add := func(name string, pts []Point) {
				if len(pts) > 0 {
					out = append(out, Series{Name: name, Labels: ls, Points: pts})
				}
			}
			if !o.NoGPUUtil {
				add("DCGM_FI_DEV_GPU_UTIL", g.util)
			}
			add("DCGM_FI_PROF_GR_ENGINE_ACTIVE", g.gr)
			add("DCGM_FI_DEV_FB_USED", g.used)
			add("DCGM_FI_DEV_FB_FREE", g.free)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// NodeExporter writes node-exporter series of the instances' samples with
// CPU or host memory, labelled like DCGM's (instance_id, Hostname): one CPU's
// node_cpu_seconds_total{mode="idle"} rising at (1 − CPU %) per second, four
// points per sample step, and node_memory_MemTotal_bytes /
// node_memory_MemAvailable_bytes of 64 GiB from host memory %.
func NodeExporter(instances []fleet.Instance) []Series {
	var out []Series
	for _, in := range instances {
		if in.Utilization == nil || len(in.Utilization.Samples) == 0 {
			continue
		}
		samples := append([]fleet.Sample(nil), in.Utilization.Samples...)
		sort.SliceStable(samples, func(i, j int) bool { return samples[i].Time.Before(samples[j].Time) })
		step := fleet.SampleStep(samples)
		host := in.Name
		if host == "" {
			host = in.ID
		}
		base := map[string]string{"instance_id": in.ID, "Hostname": host}
		var idle, total, avail []Point
		counter := 1e6
		for _, s := range samples {
			if s.CPU != nil {
				rate := 1 - *s.CPU/100
				for k := range 4 {
					dt := step / 4 * time.Duration(k)
					idle = append(idle, Point{s.Time.Add(dt), counter + rate*dt.Seconds()})
				}
				counter += rate * step.Seconds()
			}
			if s.Memory != nil {
				const mem = 64 << 30
				total = append(total, Point{s.Time, mem})
				avail = append(avail, Point{s.Time, mem * (1 - *s.Memory/100)})
			}
		}
		cpu := map[string]string{"cpu": "0", "mode": "idle"}
		for k, v := range base {
			cpu[k] = v
		}
		if len(idle) > 0 {
			out = append(out, Series{Name: "node_cpu_seconds_total", Counter: true, Labels: cpu, Points: idle})
		}
		if len(total) > 0 {
			out = append(out, Series{Name: "node_memory_MemTotal_bytes", Labels: base, Points: total},
				Series{Name: "node_memory_MemAvailable_bytes", Labels: base, Points: avail})
		}
	}
	return out
}
