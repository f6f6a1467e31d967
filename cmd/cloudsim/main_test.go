package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"net"
	"net/http"
	neturl "net/url"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/billing"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers/file"
	"github.com/gpufinops/gpufinops/providers/simkit"
)

// syncBuffer is a bytes.Buffer safe to read while the server writes to it.
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

func TestBadFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no fleet", nil, "give a fleet: --fleet FILE or --demo"},
		{"both", []string{"--demo", "--fleet", "x.yaml"}, "--fleet and --demo exclude each other"},
		{"ca file without tls", []string{"--demo", "--ca-file", "ca.pem"}, "--ca-file needs --tls"},
		{"unknown flag", []string{"--demo", "--bogus"}, "flag provided but not defined: -bogus"},
		{"argument", []string{"--demo", "extra"}, `unexpected argument "extra"`},
		{"throttle rate", []string{"--demo", "--throttle-rate", "1.5"}, "--throttle-rate 1.5 is not between 0 and 1"},
		{"error rate", []string{"--demo", "--error-rate", "-0.1"}, "--error-rate -0.1 is not between 0 and 1"},
		{"rates sum", []string{"--demo", "--throttle-rate", "0.6", "--error-rate", "0.6"}, "add up to 1.2"},
		{"latency", []string{"--demo", "--latency", "-5ms"}, "--latency -5ms is negative"},
		{"latency syntax", []string{"--demo", "--latency", "fast"}, `invalid value "fast" for flag -latency`},
		{"latency absurd", []string{"--demo", "--latency", "1000h"}, "--latency 1000h0m0s is longer than 10m0s"},
		{"delay absurd", []string{"--demo", "--delay", "StopInstances=2h"}, "use --hang StopInstances"},
		{"account", []string{"--demo", "--account", "42"}, `--account "42" is not a 12-digit AWS account ID`},
		{"addr", []string{"--demo", "--addr", "localhost"}, `--addr "localhost" is not HOST:PORT`},
		{"empty region", []string{"--demo", "--fail-region", "eu-west-1,"}, "empty region"},
		{"seed", []string{"--demo", "--seed", "x"}, `invalid value "x" for flag -seed`},
		{"focus export", []string{"--demo", "--focus-export", "bill.json"}, `--focus-export "bill.json": want a .csv or .parquet file`},
		{"focus hours", []string{"--demo", "--focus-export", "b.csv", "--focus-hours", "0"}, "--focus-hours 0 is not between 1 and 9600"},
		{"focus start", []string{"--demo", "--focus-export", "b.csv", "--focus-start", "Nov"}, `--focus-start "Nov" is not YYYY-MM-DD or RFC 3339`},
		{"delay syntax", []string{"--demo", "--delay", "StopInstances"}, "want OP=DURATION"},
		{"delay duration", []string{"--demo", "--delay", "StopInstances=soon"}, "want OP=DURATION"},
		{"delay negative", []string{"--demo", "--delay", "StopInstances=-1s"}, "want OP=DURATION"},
		{"delay no op", []string{"--demo", "--delay", "=1s"}, "want OP=DURATION"},
		{"hang empty", []string{"--demo", "--hang", "DescribeInstances,"}, "empty operation"},
		{"hang typo", []string{"--demo", "--hang", "StopInstance"}, `hang "StopInstance": no simulator answers that operation; did you mean "StopInstances"?`},
		{"delay typo", []string{"--demo", "--delay", "compute:Dealocate=1s"}, `did you mean "compute:Deallocate"?`},
		{"hang unknown", []string{"--demo", "--hang", "ec2:TerminateInstances"}, `hang "ec2:TerminateInstances": no simulator answers that operation`},
		{"delay another cloud's service", []string{"--demo", "--delay", "sts:StopInstances=1s"}, `delay "sts:StopInstances": no simulator answers that operation`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(tc.args, &stdout, &stderr); code != exitUsage {
				t.Errorf("exit %d, want %d", code, exitUsage)
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout: %q", stdout.String())
			}
			msg := stderr.String()
			if !strings.Contains(msg, tc.want) || !strings.HasPrefix(msg, "cloudsim: ") || strings.Count(msg, "\n") != 1 {
				t.Errorf("stderr %q, want one line with %q", msg, tc.want)
			}
		})
	}
}

func TestHelp(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-h"}, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"Usage: cloudsim", "-throttle-rate", "-fail-region", "default \"127.0.0.1:4566\""} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("help lacks %q:\n%s", want, stdout.String())
		}
	}
	if stderr.Len() != 0 {
		t.Errorf("stderr: %q", stderr.String())
	}
}

func TestParseFlags(t *testing.T) {
	c, err := parseFlags([]string{"--fleet", "f.yaml", "--addr", "127.0.0.1:0", "--latency", "50ms", "--throttle-rate", "0.1",
		"--error-rate", "0.01", "--fail-region", "eu-west-1", "--fail-region", "us-west-2,ap-south-1", "--seed", "7", "--account", "111122223333",
		"--delay", "StopInstances=2s", "--delay", "ec2:DescribeInstances=150ms", "--hang", "GetMetricData,sts:GetCallerIdentity"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	want := config{fleetPath: "f.yaml", addr: "127.0.0.1:0", latency: 50 * time.Millisecond, throttleRate: 0.1, errorRate: 0.01,
		failRegions: []string{"eu-west-1", "us-west-2", "ap-south-1"}, seed: 7,
		delays: map[string]time.Duration{"StopInstances": 2 * time.Second, "ec2:DescribeInstances": 150 * time.Millisecond}, hang: []string{"GetMetricData", "sts:GetCallerIdentity"},
		focusHours: 720}
	if !reflect.DeepEqual(*c, want) {
		t.Errorf("got %+v\nwant %+v", *c, want)
	}
}

// startRun runs the command as main would, waits for the serving line and
// returns the base URL and a function that sends SIGINT and waits for the
// exit code.
func startRun(t *testing.T, args ...string) (url string, stop func() (int, string, string)) {
	t.Helper()
	var stdout, stderr syncBuffer
	done := make(chan int, 1)
	go func() { done <- run(append(args, "--addr", "127.0.0.1:0"), &stdout, &stderr) }()
	deadline := time.Now().Add(60 * time.Second)
	for {
		out := stdout.String()
		if i := strings.Index(out, "(AWS_ENDPOINT_URL="); i >= 0 {
			rest := out[i+len("(AWS_ENDPOINT_URL="):]
			url = rest[:strings.Index(rest, ")")]
			break
		}
		select {
		case code := <-done:
			t.Fatalf("exited %d before serving: %s%s", code, stdout.String(), stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("not serving after 60s: %s%s", stdout.String(), stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	return url, func() (int, string, string) {
		if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		select {
		case code := <-done:
			return code, stdout.String(), stderr.String()
		case <-time.After(10 * time.Second):
			t.Fatal("still serving 10s after SIGINT")
		}
		return 0, "", ""
	}
}

func TestServeDemoUntilSIGINT(t *testing.T) {
	url, stop := startRun(t, "--demo", "--latency", "1ms")
	resp, err := http.Get(url + "/_sim/state")
	if err != nil {
		t.Fatal(err)
	}
	var state struct {
		Instances []struct{ ID, State string }
	}
	err = json.NewDecoder(resp.Body).Decode(&state)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	f, _ := file.Demo()
	served := map[fleet.Provider]bool{}
	for _, sim := range simkit.Registered() {
		served[sim.Provider] = true
	}
	want := 0
	for _, in := range f.Instances {
		if served[in.Provider] && simulated(&in) {
			want++
		}
	}
	if len(state.Instances) != want || state.Instances[0].ID != "train-p4d-1" {
		t.Errorf("state lists %d instances (%v), want the demo's %d instances of the registered simulators", len(state.Instances), state.Instances, want)
	}
	// An AWS-shaped request is counted, whatever the simulator answers.
	resp, err = http.Post(url+"/", "application/x-www-form-urlencoded", strings.NewReader("Action=DescribeRegions&Version=2016-11-15"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	code, stdout, stderr := stop()
	if code != exitOK {
		t.Errorf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	aws := 0
	for _, in := range f.Instances {
		if in.Provider == fleet.AWS && simulated(&in) {
			aws++
		}
	}
	// One serving line per simulator (AWS first), the control endpoints,
	// each simulator's notes, the stop.
	sims := len(simkit.Registered())
	wantFirst := "cloudsim: serving " + strconv.Itoa(aws) + " AWS instances of demo.yaml on " + url + " (AWS_ENDPOINT_URL=" + url + ")"
	if len(lines) < sims+3 || lines[0] != wantFirst || !strings.Contains(lines[sims], url+"/_sim/state") || !strings.Contains(lines[sims], url+"/_sim/requests") ||
		lines[sims+1] != "cloudsim: static access keys act in account 111122223333" || lines[len(lines)-1] != "cloudsim: stopped after 1 requests" {
		t.Errorf("stdout:\n%s\nwant first line %q", stdout, wantFirst)
	}
	if stderr != "" {
		t.Errorf("stderr: %q", stderr)
	}
}

func TestServeFleetFileWithoutAWS(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gcp.yaml")
	if err := os.WriteFile(path, []byte("apiVersion: gpufinops/v1\nkind: Fleet\ninstances:\n  - {id: vm-1, provider: gcp, region: us-central1, instanceType: g2-standard-8}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	url, stop := startRun(t, "--fleet", path)
	code, stdout, stderr := stop()
	if code != exitOK || !strings.Contains(stdout, "serving 0 AWS instances of "+path+" on "+url) {
		t.Errorf("exit %d, stdout %q", code, stdout)
	}
	// A warning for each simulator with nothing to serve, none for GCP's.
	want := ""
	for _, sim := range simkit.Registered() {
		if sim.Provider != fleet.GCP {
			want += "cloudsim: warning: " + path + " has no " + sim.Title + " instances\n"
		}
	}
	if stderr != want {
		t.Errorf("stderr %q, want %q", stderr, want)
	}
}

func TestServeBadInput(t *testing.T) {
	dir := t.TempDir()
	unknown := filepath.Join(dir, "unknown.yaml")
	if err := os.WriteFile(unknown, []byte("apiVersion: gpufinops/v1\nkind: Fleet\ninstances:\n  - {id: a, provider: aws, region: us-east-1, instanceType: p9.nope}\n  - {id: b, provider: aws, region: us-east-1, instanceType: p9.nada}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	busy := startListener(t)
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"missing file", []string{"--fleet", filepath.Join(dir, "nope.yaml")}, exitUsage, "no such file or directory"},
		{"address in use", []string{"--demo", "--addr", busy}, exitError, "address already in use"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parseFlags(tc.args, &bytes.Buffer{})
			if err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			if code := serve(context.Background(), c, nil, &stdout, &stderr); code != tc.code {
				t.Errorf("exit %d, want %d", code, tc.code)
			}
			msg := stderr.String()
			if !strings.Contains(msg, tc.want) || strings.Count(msg, "\n") != 1 {
				t.Errorf("stderr %q, want one line with %q", msg, tc.want)
			}
		})
	}
}

// A fleet whose types the catalog lacks is served, with a note for each
// type of what the simulators cannot answer.
func TestServeUnknownTypes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "unknown.yaml")
	if err := os.WriteFile(path, []byte("apiVersion: gpufinops/v1\nkind: Fleet\ninstances:\n"+
		"  - {id: i-0aaaaaaaaaaaaaaa1, provider: aws, region: us-east-1, instanceType: p9.nope, lifecycle: on-demand, state: running}\n"+
		"  - {id: i-0aaaaaaaaaaaaaaa2, provider: aws, region: us-east-1, instanceType: g9z.4xlarge, gpu: {model: Z9, count: 1}, hourlyPrice: 1.75, lifecycle: on-demand, state: running}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stop := startRun(t, "--fleet", path)
	code, stdout, stderr := stop()
	if code != exitOK || !strings.Contains(stdout, "serving 2 AWS instances") {
		t.Errorf("exit %d, stdout %q", code, stdout)
	}
	want := "cloudsim: note: " + path + `: aws/us-east-1: instance type "p9.nope" is not in the catalog; missing: GPU model, GPU count, price`
	if !strings.Contains(stderr, want) || strings.Contains(stderr, "g9z") {
		t.Errorf("stderr %q, want a note %q and none of g9z.4xlarge", stderr, want)
	}
}

// startListener holds a port for the test's duration and returns its address.
func startListener(t *testing.T) string {
	t.Helper()
	srv := &http.Server{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// --focus-export writes the served fleet's bill; the FOCUS reader finds the
// GPU EffectiveCost it prints, in CSV and Parquet alike.
func TestServeWritesFOCUSExport(t *testing.T) {
	var totals []string
	for _, name := range []string{"bill.csv", "bill.parquet"} {
		path := filepath.Join(t.TempDir(), name)
		_, stop := startRun(t, "--demo", "--focus-export", path, "--focus-start", "2026-11-01", "--focus-hours", "24")
		code, stdout, stderr := stop()
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		s, err := billing.Read(context.Background(), path, billing.Options{})
		if err != nil {
			t.Fatal(err)
		}
		want := "GPU EffectiveCost " + s.EffectiveCost.String() + " USD"
		if !strings.Contains(stdout, "cloudsim: FOCUS 1.2 export at "+path) || !strings.Contains(stdout, want) || len(s.Resources) == 0 || len(s.Unused) != 1 {
			t.Errorf("stdout %q lacks %q (%d resources, %d unused)", stdout, want, len(s.Resources), len(s.Unused))
		}
		totals = append(totals, s.EffectiveCost.String())
	}
	if totals[0] != totals[1] {
		t.Errorf("csv %s, parquet %s", totals[0], totals[1])
	}
}

// TestServeTLS: --tls answers https and http on one port, writes the
// authority clients trust to --ca-file, and is the HTTPS proxy that takes
// Entra ID's host to the Azure simulator.
func TestServeTLS(t *testing.T) {
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	url, stop := startRun(t, "--demo", "--tls", "--ca-file", caFile)
	pem, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		t.Fatalf("--ca-file holds no certificate: %q", pem)
	}
	httpsURL := "https://" + strings.TrimPrefix(url, "http://")
	proxy, _ := neturl.Parse(url)
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, Proxy: http.ProxyURL(proxy)}}
	for _, u := range []string{httpsURL + "/metadata/endpoints?api-version=2015-01-01", url + "/_sim/state",
		"https://login.microsoftonline.com/00000000-0000-0000-0000-0000000000aa/v2.0/.well-known/openid-configuration"} {
		cl := c
		if strings.HasPrefix(u, httpsURL) || strings.HasPrefix(u, url) {
			cl = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
		}
		resp, err := cl.Get(u)
		if err != nil {
			t.Fatalf("GET %s: %v", u, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %s", u, resp.Status)
		}
	}
	code, stdout, stderr := stop()
	if code != exitOK || !strings.Contains(stdout, "cloudsim: HTTPS too, on "+httpsURL+"; its certificate authority is "+caFile) ||
		!strings.Contains(stdout, "HTTPS_PROXY="+url+" NO_PROXY=127.0.0.1,localhost brings login.microsoftonline.com") {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}
