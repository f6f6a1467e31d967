package simkit

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// plainError writes "status code" as the body, so that tests can read back
// what the kit decided.
func plainError(w http.ResponseWriter, status int, code, msg string) {
	w.WriteHeader(status)
	fmt.Fprintf(w, "%s|%s", code, msg)
}

func call(service, op, scope string) Call {
	return Call{Service: service, Op: op, Scope: scope, WriteError: plainError}
}

// serveOnce runs one call through the kit and returns the recorded answer.
func serveOnce(t *testing.T, k *Kit, c Call) *httptest.ResponseRecorder {
	t.Helper()
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodPost, "/", nil)
	k.Serve(w, r, c, func(w http.ResponseWriter) { _, _ = io.WriteString(w, "ok") })
	return w
}

func mustKit(t *testing.T, o Options) *Kit {
	t.Helper()
	k, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// outcomes serves n calls and returns each one's status.
func outcomes(t *testing.T, k *Kit, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = serveOnce(t, k, call("compute", "List", "r1")).Code
	}
	return out
}

func TestFaultsAreRepeatableWithASeed(t *testing.T) {
	o := Options{ThrottleRate: 0.2, ErrorRate: 0.1, Seed: 42}
	a := outcomes(t, mustKit(t, o), 2000)
	b := outcomes(t, mustKit(t, o), 2000)
	if !slices.Equal(a, b) {
		t.Fatal("the same seed gave different faults")
	}
	o.Seed = 43
	if slices.Equal(a, outcomes(t, mustKit(t, o), 2000)) {
		t.Error("another seed gave the same faults")
	}
	n := map[int]int{}
	for _, s := range a {
		n[s]++
	}
	// 2,000 draws: 400 ± 60 throttled, 200 ± 50 failed (well over 3 σ).
	if th := n[http.StatusTooManyRequests]; th < 340 || th > 460 {
		t.Errorf("%d of 2000 throttled at rate 0.2", th)
	}
	if e := n[http.StatusInternalServerError]; e < 150 || e > 250 {
		t.Errorf("%d of 2000 failed at rate 0.1", e)
	}
	if n[http.StatusOK]+n[http.StatusTooManyRequests]+n[http.StatusInternalServerError] != 2000 {
		t.Errorf("unexpected statuses %v", n)
	}
}

func TestThrottleAnswerIsTheClouds(t *testing.T) {
	k := mustKit(t, Options{ThrottleRate: 1})
	aws := &Dialect{Throttle: func(c Call) (int, string) {
		if c.Service == "ec2" {
			return http.StatusServiceUnavailable, "RequestLimitExceeded"
		}
		return http.StatusBadRequest, "Throttling"
	}}
	in := func(d *Dialect, c Call) Call { c.Dialect = d; return c }
	if w := serveOnce(t, k, in(aws, call("ec2", "DescribeInstances", "us-east-1"))); w.Code != 503 || w.Body.String() != "RequestLimitExceeded|simulated RequestLimitExceeded" {
		t.Errorf("ec2: %d %q", w.Code, w.Body)
	}
	if w := serveOnce(t, k, in(aws, call("sts", "GetCallerIdentity", "us-east-1"))); w.Code != 400 || !strings.HasPrefix(w.Body.String(), "Throttling|") {
		t.Errorf("sts: %d %q", w.Code, w.Body)
	}
	// Simulators sharing a kit keep their own words.
	if w := serveOnce(t, k, call("compute", "List", "p")); w.Code != 429 || w.Body.String() != "Throttling|simulated Throttling" {
		t.Errorf("default dialect: %d %q", w.Code, w.Body)
	}
	if w := serveOnce(t, mustKit(t, Options{ErrorRate: 1}), in(&Dialect{InternalCode: "ServerBusy"}, call("a", "b", "c"))); w.Code != 500 || w.Body.String() != "ServerBusy|simulated ServerBusy" {
		t.Errorf("error rate 1: %d %q", w.Code, w.Body)
	}
}

func TestFailingScopesAndChosenFaults(t *testing.T) {
	k := mustKit(t, Options{
		FailScopes: []string{"eu-west-1"},
		Fault: func(service, op, scope string) (int, string) {
			if op == "GetMetricData" && scope == "us-west-2" {
				return http.StatusForbidden, "AccessDenied"
			}
			return 0, ""
		},
	})
	region := &Dialect{ScopeKind: "region"}
	if w := serveOnce(t, k, Call{Service: "ec2", Op: "DescribeInstances", Scope: "eu-west-1", Dialect: region, WriteError: plainError}); w.Code != 500 || w.Body.String() != "InternalError|simulated outage of region eu-west-1" {
		t.Errorf("failing region: %d %q", w.Code, w.Body)
	}
	if w := serveOnce(t, k, call("monitoring", "GetMetricData", "us-west-2")); w.Code != 403 || w.Body.String() != "AccessDenied|simulated AccessDenied for GetMetricData in us-west-2" {
		t.Errorf("chosen fault: %d %q", w.Code, w.Body)
	}
	if w := serveOnce(t, k, call("monitoring", "GetMetricData", "us-east-1")); w.Code != 200 || w.Body.String() != "ok" {
		t.Errorf("healthy call: %d %q", w.Code, w.Body)
	}
	// Faulted calls are counted too.
	if got := k.Counts(); got["ec2"]["DescribeInstances"] != 1 || got["monitoring"]["GetMetricData"] != 2 {
		t.Errorf("counts %v", got)
	}
}

func TestFailingScopesDoNotDrawFromTheSeed(t *testing.T) {
	// A request answered before the random draw leaves the sequence as it
	// was: the healthy scope's faults are the same with and without it.
	o := Options{ThrottleRate: 0.5, Seed: 9, FailScopes: []string{"down"}}
	plain, mixed := mustKit(t, o), mustKit(t, o)
	var a, b []int
	for i := range 200 {
		a = append(a, serveOnce(t, plain, call("s", "op", "up")).Code)
		if i%3 == 0 {
			serveOnce(t, mixed, call("s", "op", "down"))
		}
		b = append(b, serveOnce(t, mixed, call("s", "op", "up")).Code)
	}
	if !slices.Equal(a, b) {
		t.Error("requests to a failing scope changed the seeded sequence")
	}
}

func TestDelayHoldsTheAnswerAndHangNeverAnswers(t *testing.T) {
	k := mustKit(t, Options{Delays: map[string]time.Duration{"svc:Stop": 80 * time.Millisecond}, Hang: []string{"Describe"}})
	var acted sync.WaitGroup
	acted.Add(1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		op := strings.TrimPrefix(r.URL.Path, "/")
		k.Serve(w, r, call("svc", op, "r"), func(w http.ResponseWriter) {
			if op == "Stop" {
				acted.Done()
			}
			w.Header().Set("X-Op", op)
			w.WriteHeader(http.StatusAccepted)
			_, _ = io.WriteString(w, "done "+op)
		})
	}))
	defer srv.Close()

	start := time.Now()
	done := make(chan *http.Response, 1)
	go func() {
		resp, err := http.Get(srv.URL + "/Stop")
		if err != nil {
			t.Error(err)
		}
		done <- resp
	}()
	acted.Wait() // the operation takes effect before its answer
	resp := <-done
	if el := time.Since(start); el < 80*time.Millisecond {
		t.Errorf("delayed answer after %s", el)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted || resp.Header.Get("X-Op") != "Stop" || string(body) != "done Stop" {
		t.Errorf("held answer: %d %v %q", resp.StatusCode, resp.Header, body)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/Describe", nil)
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		t.Fatal("a hung operation answered")
	}
	if got := k.Counts()["svc"]; got["Stop"] != 1 || got["Describe"] != 1 {
		t.Errorf("counts %v", got)
	}
}

func TestLatencyEndsWithTheClient(t *testing.T) {
	k := mustKit(t, Options{Latency: MaxDelay})
	ctx, cancel := context.WithCancel(context.Background())
	r := httptest.NewRequest(http.MethodGet, "/", nil).WithContext(ctx)
	w := httptest.NewRecorder()
	served := false
	go cancel()
	k.Serve(w, r, call("a", "b", "c"), func(http.ResponseWriter) { served = true })
	if served {
		t.Error("served after the client hung up")
	}
}

func TestOpFaultsSetAndFor(t *testing.T) {
	var o OpFaults
	if err := o.Set(Faults{Delays: map[string]time.Duration{"": time.Second}}); err == nil {
		t.Error("an empty key was accepted")
	}
	if err := o.Set(Faults{Delays: map[string]time.Duration{"Stop": -time.Second}}); err == nil {
		t.Error("a negative delay was accepted")
	}
	if err := o.Set(Faults{Delays: map[string]time.Duration{"Stop": MaxDelay + time.Nanosecond}}); err == nil {
		t.Error("a delay over MaxDelay was accepted")
	}
	if err := o.Set(Faults{Delays: map[string]time.Duration{"Stop": MaxDelay}}); err != nil {
		t.Errorf("a delay of MaxDelay: %v", err)
	}
	for _, l := range []time.Duration{-time.Millisecond, MaxDelay + time.Nanosecond} {
		if _, err := New(Options{Latency: l}); err == nil {
			t.Errorf("latency %v was accepted", l)
		}
	}
	if err := o.Set(Faults{Hang: []string{" "}}); err == nil {
		t.Error("an empty hang was accepted")
	}
	if err := o.Set(Faults{Delays: map[string]time.Duration{"Stop": time.Second, "ec2:Stop": 2 * time.Second}, Hang: []string{"z", "ec2:List"}}); err != nil {
		t.Fatal(err)
	}
	if hang, d := o.For("ec2", "Stop"); hang || d != 2*time.Second {
		t.Errorf("ec2 Stop: hang %v delay %s, want the longer delay", hang, d)
	}
	if hang, d := o.For("sts", "Stop"); hang || d != time.Second {
		t.Errorf("sts Stop: hang %v delay %s", hang, d)
	}
	if hang, _ := o.For("ec2", "List"); !hang {
		t.Error("ec2:List does not hang")
	}
	if hang, _ := o.For("other", "List"); hang {
		t.Error("other:List hangs")
	}
	if got := o.Current().Hang; !slices.Equal(got, []string{"ec2:List", "z"}) {
		t.Errorf("current hangs %v, want sorted", got)
	}
	if _, err := New(Options{Hang: []string{""}}); err == nil {
		t.Error("New accepted an empty hang")
	}
}

// TestOpFaultsRefuseUnknownOps: with the simulators' ops known, a fault
// naming none of them (a typo, another cloud's spelling) is refused with
// the nearest names, at New and at every later Set; both spellings of a
// known op are taken.
func TestOpFaultsRefuseUnknownOps(t *testing.T) {
	ops := []string{"ec2:StopInstances", "ec2:DescribeInstances", "compute:instances.stop"}
	for _, tc := range []struct {
		f    Faults
		want string
	}{
		{Faults{Hang: []string{"StopInstance"}}, `hang "StopInstance": no simulator answers that operation; did you mean "StopInstances"?`},
		{Faults{Delays: map[string]time.Duration{"ec2:DescribeInstance": time.Second}}, `delay "ec2:DescribeInstance": no simulator answers that operation; did you mean "ec2:DescribeInstances"?`},
		{Faults{Hang: []string{"sts:StopInstances"}}, `hang "sts:StopInstances": no simulator answers that operation`},
		{Faults{Hang: []string{"Frobnicate"}}, `hang "Frobnicate": no simulator answers that operation (3 operations, e.g. StopInstances or ec2:StopInstances; see docs/simulators.md)`},
		{Faults{Delays: map[string]time.Duration{"Zzz": time.Second, "Aaa": time.Second}}, `delay "Aaa"`},
	} {
		if _, err := New(Options{Ops: ops, Hang: tc.f.Hang, Delays: tc.f.Delays}); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("New(%+v): %v, want %q", tc.f, err, tc.want)
		}
		k := MustNew(Options{Ops: ops})
		if err := k.SetFaults(tc.f); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("SetFaults(%+v): %v, want %q", tc.f, err, tc.want)
		}
	}
	k, err := New(Options{Ops: ops, Hang: []string{"StopInstances", "compute:instances.stop"}, Delays: map[string]time.Duration{"ec2:DescribeInstances": time.Second, "instances.stop": time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	if hang, _ := k.ops.For("ec2", "StopInstances"); !hang {
		t.Error("StopInstances does not hang")
	}
	if _, err := New(Options{Hang: []string{"Anything"}}); err != nil {
		t.Errorf("without ops every name is taken: %v", err)
	}
}

func TestCounterIsSafeAndResets(t *testing.T) {
	var c Counter
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 250 {
				c.Add("svc", fmt.Sprint("op", i%2))
			}
		}()
	}
	wg.Wait()
	got := c.Counts()
	if got["svc"]["op0"] != 1000 || got["svc"]["op1"] != 1000 || Total(got) != 2000 {
		t.Errorf("counts %v", got)
	}
	got["svc"]["op0"] = 0 // a copy
	if c.Counts()["svc"]["op0"] != 1000 {
		t.Error("Counts returned the counter's own map")
	}
	c.Reset()
	if Total(c.Counts()) != 0 {
		t.Error("Reset kept counts")
	}
}

// fakeBackend is a simulator with a few instances for the control endpoints
// and the mux.
type fakeBackend struct {
	provider, prefix string
	ids              []string
	loads            map[string]float64
	claimed          int
}

func (b *fakeBackend) State() []InstanceState {
	var out []InstanceState
	for _, id := range b.ids {
		out = append(out, InstanceState{Provider: b.provider, ID: id, State: "running"})
	}
	return out
}

func (b *fakeBackend) SetLoad(id string, gpu float64) error {
	if !slices.Contains(b.ids, id) {
		return fmt.Errorf("%w: %s", ErrNoInstance, id)
	}
	if gpu > 100 {
		return fmt.Errorf("gpu %v: want a percentage", gpu)
	}
	if b.loads == nil {
		b.loads = map[string]float64{}
	}
	b.loads[id] = gpu
	return nil
}

func (b *fakeBackend) Now() time.Time { return time.Date(2026, 11, 30, 12, 34, 56, 0, time.UTC) }

func (b *fakeBackend) Claims(r *http.Request, body []byte) bool {
	return strings.HasPrefix(r.URL.Path, b.prefix) || strings.Contains(string(body), b.prefix)
}

func (b *fakeBackend) Notes() []string { return nil }

func (b *fakeBackend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	b.claimed++
	fmt.Fprintf(w, "%s got %s %s", b.provider, r.URL.Path, body)
}

func do(t *testing.T, h http.Handler, method, path, body string) (int, string) {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(method, path, strings.NewReader(body)))
	return w.Code, w.Body.String()
}

func TestControlEndpoints(t *testing.T) {
	k := mustKit(t, Options{})
	a := &fakeBackend{provider: "aws", ids: []string{"i-1", "i-2"}}
	z := &fakeBackend{provider: "azure", ids: []string{"vm-1"}}
	h := k.Control(a, z)

	code, body := do(t, h, http.MethodGet, "/_sim/state", "")
	var state struct{ Instances []InstanceState }
	if err := json.Unmarshal([]byte(body), &state); code != 200 || err != nil || len(state.Instances) != 3 || state.Instances[2] != (InstanceState{"azure", "vm-1", "running"}) {
		t.Errorf("state: %d %s", code, body)
	}

	k.counter.Add("ec2", "DescribeInstances")
	code, body = do(t, h, http.MethodGet, "/_sim/requests", "")
	if code != 200 || strings.Join(strings.Fields(body), "") != `{"ec2":{"DescribeInstances":1}}` {
		t.Errorf("requests: %d %s", code, body)
	}

	for _, c := range []struct {
		method, body string
		code         int
		want         string
	}{
		{http.MethodPost, `{"id": "vm-1", "gpu": 85}`, 200, `"from":"2026-11-30T12:34:00Z"`},
		{http.MethodPost, `{"id": "i-2", "gpu": 5}`, 200, `"id":"i-2"`},
		{http.MethodPost, `{"id": "i-9", "gpu": 5}`, 404, "no such instance: i-9"},
		{http.MethodPost, `{"id": "i-1", "gpu": 500}`, 400, "want a percentage"},
		{http.MethodPost, `{"id": "i-1"}`, 400, "needs both id and gpu"},
		{http.MethodPost, `{"id": "i-1", "gpu": 5, "cpu": 1}`, 400, "unknown field"},
		{http.MethodGet, ``, 405, "POST /_sim/load"},
	} {
		code, body := do(t, h, c.method, "/_sim/load", c.body)
		if code != c.code || !strings.Contains(body, c.want) {
			t.Errorf("%s /_sim/load %s: %d %s, want %d and %q", c.method, c.body, code, body, c.code, c.want)
		}
	}
	if z.loads["vm-1"] != 85 || a.loads["i-2"] != 5 || len(a.loads) != 1 {
		t.Errorf("loads went astray: %v %v", a.loads, z.loads)
	}

	code, body = do(t, h, http.MethodPost, "/_sim/faults", `{"delays": {"Stop": "1.5s"}, "hang": ["List"]}`)
	if code != 200 || !strings.Contains(body, `"Stop":"1.5s"`) || !strings.Contains(body, `"hang":["List"]`) {
		t.Errorf("POST faults: %d %s", code, body)
	}
	if f := k.CurrentFaults(); f.Delays["Stop"] != 1500*time.Millisecond {
		t.Errorf("faults in effect %+v", f)
	}
	for _, bad := range []string{`{"delays": {"Stop": "soon"}}`, `{"delays": {"Stop": "-1s"}}`, `{"delays": {"Stop": "1000h"}}`, `{"slow": 1}`} {
		if code, body := do(t, h, http.MethodPost, "/_sim/faults", bad); code != 400 || !strings.Contains(body, "error") {
			t.Errorf("POST faults %s: %d %s", bad, code, body)
		}
	}
	if code, body := do(t, h, http.MethodGet, "/_sim/faults", ""); code != 200 || !strings.Contains(body, `"Stop":"1.5s"`) {
		t.Errorf("GET faults after bad posts: %d %s", code, body)
	}
	if code, _ := do(t, h, http.MethodGet, "/_sim/nothing", ""); code != 404 {
		t.Errorf("unknown control endpoint: %d", code)
	}
}

func TestIsControl(t *testing.T) {
	for _, c := range []struct {
		method, path string
		want         bool
	}{
		{"GET", "/_sim/state", true}, {"GET", "/_sim/anything", true}, {"POST", "/_sim/load", true},
		{"POST", "/_sim/faults", true}, {"POST", "/_sim/state", false}, {"POST", "/", false}, {"GET", "/sim/state", false},
	} {
		if got := IsControl(httptest.NewRequest(c.method, c.path, nil)); got != c.want {
			t.Errorf("%s %s: %v", c.method, c.path, got)
		}
	}
}

func TestMuxRoutesByClaim(t *testing.T) {
	k := mustKit(t, Options{})
	a := &fakeBackend{provider: "aws", prefix: "Action=", ids: []string{"i-1"}}
	z := &fakeBackend{provider: "azure", prefix: "/subscriptions/", ids: []string{"vm-1"}}
	h := Mux(k, a, z)
	if code, body := do(t, h, http.MethodPost, "/", "Action=DescribeInstances"); code != 200 || body != "aws got / Action=DescribeInstances" {
		t.Errorf("aws request: %d %q (the body must reach the simulator)", code, body)
	}
	if code, body := do(t, h, http.MethodGet, "/subscriptions/s1/vms", ""); code != 200 || !strings.HasPrefix(body, "azure got") {
		t.Errorf("azure request: %d %q", code, body)
	}
	if code, body := do(t, h, http.MethodGet, "/compute/v1", ""); code != 400 || !strings.Contains(body, "no simulator recognises GET /compute/v1") {
		t.Errorf("unclaimed request: %d %q", code, body)
	}
	if code, body := do(t, h, http.MethodGet, "/_sim/state", ""); code != 200 || !strings.Contains(body, "vm-1") || !strings.Contains(body, "i-1") {
		t.Errorf("state through the mux: %d %s", code, body)
	}
	// One simulator gets everything without being asked.
	one := Mux(k, z)
	if code, body := do(t, one, http.MethodPost, "/", "Action=X"); code != 200 || !strings.HasPrefix(body, "azure got") {
		t.Errorf("single simulator: %d %q", code, body)
	}
}

func nopBuild(*fleet.Fleet, Env) (Sim, error) { return &fakeBackend{}, nil }

func TestRegistry(t *testing.T) {
	regMu.Lock()
	saved := registry
	registry = map[string]Simulator{}
	regMu.Unlock()
	defer func() { regMu.Lock(); registry = saved; regMu.Unlock() }()

	Register(Simulator{Name: "gcp", Build: nopBuild})
	Register(Simulator{Name: "aws", Build: nopBuild})
	var names []string
	for _, s := range Registered() {
		names = append(names, s.Name)
	}
	if !slices.Equal(names, []string{"aws", "gcp"}) {
		t.Errorf("registered %v", names)
	}
	for _, bad := range []Simulator{{Name: "aws", Build: nopBuild}, {Name: "x"}, {Build: nopBuild}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Register(%q) did not panic", bad.Name)
				}
			}()
			Register(bad)
		}()
	}
}
