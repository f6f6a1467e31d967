package sim_test

// The AWS CLI check: the unchanged `aws` command (Debian's awscli in CI, or
// whatever `aws` is on PATH; GPUFINOPS_AWS_CLI names another binary) talks to
// the simulator serving the demo fleet. It skips only when no CLI is found.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
	"github.com/gpufinops/gpufinops/providers/aws/sim"
	"github.com/gpufinops/gpufinops/providers/file"
)

// exchange is one request to the simulator and its answer, kept so that a
// failure can show the exact wire traffic.
type exchange struct {
	method, path string
	header       http.Header
	body         []byte
	status       int
	respHeader   http.Header
	resp         []byte
}

func (e exchange) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "> %s %s\n", e.method, e.path)
	for _, h := range []string{"Content-Type", "X-Amz-Target", "Smithy-Protocol", "X-Amzn-Query-Mode", "Authorization"} {
		if v := e.header.Get(h); v != "" {
			fmt.Fprintf(&b, "> %s: %s\n", h, v)
		}
	}
	fmt.Fprintf(&b, "> %s\n< %d %s\n< %s", clip(e.body), e.status, e.respHeader.Get("Content-Type"), clip(e.resp))
	return b.String()
}

func clip(b []byte) string {
	const n = 3000
	if len(b) > n {
		return fmt.Sprintf("%q… (%d bytes)", b[:n], len(b))
	}
	return fmt.Sprintf("%q", b)
}

// recorder wraps the simulator and keeps every exchange.
type recorder struct {
	h  http.Handler
	mu sync.Mutex
	ex []exchange
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	req.Body = io.NopCloser(bytes.NewReader(body))
	rec := httptest.NewRecorder()
	r.h.ServeHTTP(rec, req)
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
	r.mu.Lock()
	r.ex = append(r.ex, exchange{req.Method, req.URL.Path, req.Header.Clone(), body, rec.Code, rec.Header().Clone(), rec.Body.Bytes()})
	r.mu.Unlock()
}

// since returns the exchanges after the first n.
func (r *recorder) since(n int) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var parts []string
	for _, e := range r.ex[n:] {
		parts = append(parts, e.String())
	}
	return strings.Join(parts, "\n")
}

func (r *recorder) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.ex)
}

// awsCLI finds the CLI or skips the test.
func awsCLI(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("GPUFINOPS_AWS_CLI"); bin != "" {
		return bin
	}
	bin, err := exec.LookPath("aws")
	if err != nil {
		t.Skip("the AWS CLI is not on PATH (CI installs Debian's awscli)")
	}
	return bin
}

// cliEnv is the environment the CLI runs in: test keys, a region, an empty
// HOME (no config or credential files), no pager, no instance metadata, and
// no AWS_* variables from the caller's environment.
func cliEnv(home string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "AWS_") || strings.HasPrefix(kv, "HOME=") {
			continue
		}
		env = append(env, kv)
	}
	return append(env,
		"HOME="+home,
		"AWS_ACCESS_KEY_ID=test",
		"AWS_SECRET_ACCESS_KEY=test",
		"AWS_DEFAULT_REGION=us-east-1",
		"AWS_PAGER=",
		"AWS_EC2_METADATA_DISABLED=true",
	)
}

func TestAWSCLI(t *testing.T) {
	bin := awsCLI(t)
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	f, err := file.Demo()
	if err != nil {
		t.Fatal(err)
	}
	if err := pricing.Complete(f, cat); err != nil {
		t.Fatal(err)
	}
	// The demo's utilization covers the week before 2026-11-30; its AWS
	// instances are in account 111122223333, and the simulator shows each
	// account only its own instances.
	now := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	rec := &recorder{h: sim.New(f, sim.Options{AccountID: "111122223333", Now: func() time.Time { return now }})}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	home := t.TempDir()

	aws := func(t *testing.T, args ...string) []byte {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		args = append(args, "--endpoint-url", srv.URL, "--region", "us-east-1", "--output", "json")
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = cliEnv(home)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		before := rec.len()
		if err := cmd.Run(); err != nil {
			t.Fatalf("aws %s: %v\n%s\nwire:\n%s", strings.Join(args, " "), err, stderr.String(), rec.since(before))
		}
		t.Logf("aws %s: %d request(s)", args[0]+" "+args[1], rec.len()-before)
		return stdout.Bytes()
	}

	version, _ := exec.Command(bin, "--version").CombinedOutput()
	t.Logf("%s: %s", bin, strings.TrimSpace(string(version)))

	var train fleet.Instance
	var want []string
	for _, in := range f.Instances {
		if in.Provider == fleet.AWS && in.Region == "us-east-1" {
			want = append(want, in.ID)
		}
		if in.ID == "train-p4d-1" {
			train = in
		}
	}
	sort.Strings(want)

	t.Run("ec2 describe-instances", func(t *testing.T) {
		before := rec.len()
		out := aws(t, "ec2", "describe-instances")
		var res struct {
			Reservations []struct {
				Instances []struct {
					InstanceId   string
					InstanceType string
					State        struct{ Name string }
				}
			}
		}
		if err := json.Unmarshal(out, &res); err != nil {
			t.Fatalf("CLI output is not the DescribeInstances JSON: %v\n%s", err, out)
		}
		var got []string
		for _, r := range res.Reservations {
			for _, in := range r.Instances {
				got = append(got, in.InstanceId)
				if in.InstanceId == "train-p4d-1" && (in.InstanceType != "p4d.24xlarge" || in.State.Name != "running") {
					t.Errorf("train-p4d-1: type %q, state %q", in.InstanceType, in.State.Name)
				}
			}
		}
		sort.Strings(got)
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("instances %v\nwant the demo's AWS instances in us-east-1 %v\nwire:\n%s", got, want, rec.since(before))
		}
	})

	dims := fmt.Sprintf(`[{"Name":"InstanceId","Value":%q},{"Name":"InstanceType","Value":%q},{"Name":"index","Value":"0"},{"Name":"name","Value":%q}]`,
		train.ID, train.InstanceType, train.GPU.Model)

	t.Run("cloudwatch list-metrics", func(t *testing.T) {
		before := rec.len()
		out := aws(t, "cloudwatch", "list-metrics", "--namespace", "CWAgent", "--metric-name", "nvidia_smi_utilization_gpu",
			"--dimensions", "Name=InstanceId,Value="+train.ID)
		var res struct {
			Metrics []struct {
				Dimensions []struct{ Name, Value string }
			}
		}
		if err := json.Unmarshal(out, &res); err != nil {
			t.Fatalf("CLI output is not the ListMetrics JSON: %v\n%s", err, out)
		}
		indexes := map[string]bool{}
		for _, m := range res.Metrics {
			d := map[string]string{}
			for _, kv := range m.Dimensions {
				d[kv.Name] = kv.Value
			}
			if len(d) != 4 || d["InstanceId"] != train.ID || d["InstanceType"] != train.InstanceType || d["name"] != train.GPU.Model {
				t.Errorf("series dimensions %v, want InstanceId, InstanceType, index and name", m.Dimensions)
			}
			indexes[d["index"]] = true
		}
		if len(indexes) != int(train.GPU.Count) {
			t.Errorf("%d GPU series of %s (indexes %v), want %v\nwire:\n%s", len(indexes), train.ID, indexes, train.GPU.Count, rec.since(before))
		}
	})

	t.Run("cloudwatch get-metric-data", func(t *testing.T) {
		before := rec.len()
		queries := `[{"Id":"gpu0","MetricStat":{"Metric":{"Namespace":"CWAgent","MetricName":"nvidia_smi_utilization_gpu","Dimensions":` +
			dims + `},"Period":3600,"Stat":"Average"},"ReturnData":true}]`
		out := aws(t, "cloudwatch", "get-metric-data", "--metric-data-queries", queries,
			"--start-time", "2026-11-23T00:00:00Z", "--end-time", "2026-11-30T00:00:00Z")
		var res struct {
			MetricDataResults []struct {
				Id         string
				StatusCode string
				// ISO 8601 strings, or epoch seconds where AWS CLI v1
				// prints a JSON protocol's timestamps unconverted.
				Timestamps []any
				Values     []float64
			}
		}
		if err := json.Unmarshal(out, &res); err != nil {
			t.Fatalf("CLI output is not the GetMetricData JSON: %v\n%s", err, out)
		}
		if len(res.MetricDataResults) != 1 || res.MetricDataResults[0].Id != "gpu0" {
			t.Fatalf("results %+v, want one for gpu0\nwire:\n%s", res.MetricDataResults, rec.since(before))
		}
		r := res.MetricDataResults[0]
		if len(r.Values) == 0 || len(r.Values) != len(r.Timestamps) {
			t.Fatalf("%d values for %d timestamps (status %s), want datapoints\nwire:\n%s", len(r.Values), len(r.Timestamps), r.StatusCode, rec.since(before))
		}
		// Weekdays 08:00–20:00 UTC: 60 running hours, one datapoint each,
		// averaging the file's 86 %.
		sum := 0.0
		for i, ts := range r.Timestamps {
			at, err := cliTime(ts)
			if err != nil {
				t.Fatal(err)
			}
			if wd := at.Weekday(); wd == time.Saturday || wd == time.Sunday || at.Hour() < 8 || at.Hour() >= 20 || at.Minute() != 0 {
				t.Errorf("datapoint at %s, outside the schedule", at)
			}
			if v := r.Values[i]; v < 0 || v > 100 {
				t.Errorf("value %v at %s is not a percentage", v, at)
			}
			sum += r.Values[i]
		}
		if len(r.Values) != 60 {
			t.Errorf("%d datapoints, want 60 (weekdays 08:00–20:00)", len(r.Values))
		}
		if avg := sum / float64(len(r.Values)); math.Abs(avg-train.Utilization.GPU.Avg) > 0.01 {
			t.Errorf("average %.3f, want the file's %v", avg, train.Utilization.GPU.Avg)
		}
	})
}

// cliTime reads a timestamp as the CLI prints it.
func cliTime(v any) (time.Time, error) {
	switch ts := v.(type) {
	case string:
		at, err := time.Parse(time.RFC3339, ts)
		return at.UTC(), err
	case float64:
		sec, frac := math.Modf(ts)
		return time.Unix(int64(sec), int64(frac*1e9)).UTC(), nil
	}
	return time.Time{}, fmt.Errorf("timestamp %v (%T) is neither a date string nor epoch seconds", v, v)
}
