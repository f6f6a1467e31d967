package idlestop

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers"
)

// fakeStopper records calls and answers from per-instance scripts.
type fakeStopper struct {
	mu      sync.Mutex
	calls   []string // "dry:i-1" or "stop:i-1"
	stopped map[string]bool
	// errs are returned, one per real stop call, before succeeding.
	errs map[string][]error
	// dryErr is returned by dry runs in a region.
	dryErr map[string]error
	// already lists machines that are already stopped.
	already map[string]bool
	// onStop runs at the start of every real stop.
	onStop func(id string)
	delay  time.Duration
}

func (f *fakeStopper) Stop(ctx context.Context, sc providers.Scope, id string, dryRun bool) (providers.StopResult, error) {
	if f.onStop != nil && !dryRun {
		f.onStop(id)
	}
	if f.delay > 0 && !dryRun {
		time.Sleep(f.delay)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if dryRun {
		f.calls = append(f.calls, "dry:"+id)
		if err := f.dryErr[sc.Region]; err != nil {
			return providers.StopResult{}, err
		}
		return providers.StopResult{PreviousState: "running", CurrentState: "running"}, nil
	}
	f.calls = append(f.calls, "stop:"+id)
	if ctx.Err() != nil {
		return providers.StopResult{}, ctx.Err()
	}
	if errs := f.errs[id]; len(errs) > 0 {
		f.errs[id] = errs[1:]
		return providers.StopResult{}, errs[0]
	}
	if f.already[id] || f.stopped[id] {
		return providers.StopResult{PreviousState: "stopped", CurrentState: "stopped", AlreadyStopped: true}, nil
	}
	if f.stopped == nil {
		f.stopped = map[string]bool{}
	}
	f.stopped[id] = true
	return providers.StopResult{PreviousState: "running", CurrentState: "stopping"}, nil
}

func (f *fakeStopper) realStops() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, c := range f.calls {
		if id, ok := strings.CutPrefix(c, "stop:"); ok {
			out = append(out, id)
		}
	}
	return out
}

func (f *fakeStopper) dryRuns() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, c := range f.calls {
		if id, ok := strings.CutPrefix(c, "dry:"); ok {
			out = append(out, id)
		}
	}
	return out
}

// fleetOf is the test fleet: idle i-1, i-2 (us-east-1) and i-3 (us-west-2),
// exempt i-4 and busy i-5.
func fleetOf() []Candidate {
	west := func(c *Candidate) { c.Instance.Region = "us-west-2"; c.Scope.Region = "us-west-2" }
	return []Candidate{
		cand("i-1"),
		cand("i-2"),
		cand("i-3", west),
		cand("i-4", withTag("auto-shutdown-exempt", "true")),
		cand("i-5", func(c *Candidate) { c.Instance.Utilization.Samples = samples(30, 80) }),
	}
}

// recheckFrom answers the re-check with the candidates, after mods.
func recheckFrom(cs []Candidate, mods map[string]func(*Candidate)) func(context.Context, []Decision) (map[string]Candidate, error) {
	return func(_ context.Context, stops []Decision) (map[string]Candidate, error) {
		out := map[string]Candidate{}
		for _, d := range stops {
			for _, c := range cs {
				if c.Instance.ID == d.ResourceID {
					c.Instance.Tags = copyTags(c.Instance.Tags)
					if u := c.Instance.Utilization; u != nil {
						cp := *u
						cp.Samples = append([]fleet.Sample(nil), u.Samples...)
						c.Instance.Utilization = &cp
					}
					if m, ok := mods[d.ResourceID]; ok {
						if m == nil {
							goto next // gone
						}
						m(&c)
					}
					out[d.ResourceID] = c
				}
			}
		next:
		}
		return out, nil
	}
}

func opts(s providers.Stopper, cs []Candidate, audit *Audit) Options {
	return Options{
		Stopper: s, Recheck: recheckFrom(cs, nil), Execute: true, Audit: audit,
		Now: func() time.Time { return now }, Policy: DefaultPolicy(), ThrottlePause: time.Millisecond,
	}
}

// readAudit returns the log's lines, each decoded, failing on invalid JSON.
func readAudit(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

func openAudit(t *testing.T) (*Audit, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "logs", "idle-stop.jsonl")
	a, err := OpenAudit(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a, path
}

func results(ds []Decision) map[string]string {
	out := map[string]string{}
	for _, d := range ds {
		out[d.ResourceID] = string(d.Decision) + "/" + string(d.Reason) + "/" + d.Result
	}
	return out
}

func TestExecuteStops(t *testing.T) {
	cs := fleetOf()
	ds := Decide(cs, now, DefaultPolicy())
	st := &fakeStopper{}
	audit, path := openAudit(t)
	sum, err := Execute(context.Background(), ds, opts(st, cs, audit))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"i-1": "stop/idle/stopped", "i-2": "stop/idle/stopped", "i-3": "stop/idle/stopped",
		"i-4": "skip/exempt/", "i-5": "skip/busy/",
	}
	if got := results(ds); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v", got)
	}
	if dr := st.dryRuns(); len(dr) != 2 { // one per scope
		t.Fatalf("dry runs %v", dr)
	}
	if len(st.realStops()) != 3 {
		t.Fatalf("stops %v", st.realStops())
	}
	for _, d := range ds[:3] {
		if !d.Executed || d.Error != "" {
			t.Fatalf("%+v", d)
		}
	}
	if sum.Considered != 5 || sum.Stop != 3 || sum.Skip != 2 || sum.Stopped != 3 || sum.Failed != 0 ||
		sum.Reasons[ReasonIdle] != 3 || sum.Results[ResultStopped] != 3 || !sum.Execute {
		t.Fatalf("summary %+v", sum)
	}
	if !sum.HourlySavings.Equal(decimal.RequireFromString("3.018")) || !sum.MonthlySavings.Equal(decimal.RequireFromString("2203.14")) {
		t.Fatalf("savings %s %s", sum.HourlySavings, sum.MonthlySavings)
	}
	lines := readAudit(t, path)
	if len(lines) != 9 {
		t.Fatalf("%d audit lines, want 2 decisions, 3 intents, 3 outcomes and a summary", len(lines))
	}
	seen := map[any]int{}
	intents := map[any]int{} // resource → line of its intent
	for i, l := range lines {
		if l["runId"] != audit.RunID() || audit.RunID() == "" {
			t.Fatalf("line %d run id %v, want %s", i, l["runId"], audit.RunID())
		}
		switch typ := l["type"]; {
		case i == 8:
			if typ != LineSummary {
				t.Fatalf("last line type %v", typ)
			}
		case typ == LineIntent:
			intents[l["resourceId"]] = i
			for _, k := range []string{"provider", "account", "region", "resourceId", "time"} {
				if _, ok := l[k]; !ok {
					t.Fatalf("intent line %d lacks %s", i, k)
				}
			}
		case typ == LineDecision || typ == LineOutcome:
			seen[l["resourceId"]]++
			for _, k := range []string{"provider", "decision", "reason", "executed", "message"} {
				if _, ok := l[k]; !ok {
					t.Fatalf("line %d lacks %s", i, k)
				}
			}
			at, ok := intents[l["resourceId"]]
			if (typ == LineOutcome) != ok || (ok && at > i) || (typ == LineOutcome) != (l["decision"] == string(Stop)) {
				t.Fatalf("line %d (%v of %v): intent at %v, %v", i, typ, l["resourceId"], at, ok)
			}
		default:
			t.Fatalf("line %d type %v", i, typ)
		}
	}
	if len(seen) != 5 || len(intents) != 3 {
		t.Fatalf("decisions logged %v, intents %v", seen, intents)
	}
	if lines[8]["stopped"] != 3.0 || lines[8]["considered"] != 5.0 || lines[8]["unknown"] != 0.0 {
		t.Fatalf("summary line %v", lines[8])
	}
	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm() != 0o640 {
		t.Fatalf("mode %v %v", info.Mode(), err)
	}
}

func TestExecuteDryRunCallsOnlyThePermissionCheck(t *testing.T) {
	cs := fleetOf()
	ds := Decide(cs, now, DefaultPolicy())
	st := &fakeStopper{}
	o := opts(st, cs, nil)
	o.Execute = false
	o.Recheck = func(context.Context, []Decision) (map[string]Candidate, error) {
		t.Fatal("a dry run re-checked")
		return nil, nil
	}
	sum, err := Execute(context.Background(), ds, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.realStops()) != 0 || len(st.dryRuns()) != 2 {
		t.Fatalf("calls %v", st.calls)
	}
	if ds[0].Result != ResultDryRun || ds[0].Executed || sum.Stop != 3 || sum.Stopped != 0 || sum.Execute {
		t.Fatalf("%+v %+v", ds[0], sum)
	}
	if !sum.MonthlySavings.Equal(decimal.RequireFromString("2203.14")) || sum.RunID == "" {
		t.Fatalf("%+v", sum)
	}
}

func TestExecutePermissionFailureStopsNothing(t *testing.T) {
	cs := fleetOf()
	for _, execute := range []bool{true, false} {
		ds := Decide(cs, now, DefaultPolicy())
		st := &fakeStopper{dryErr: map[string]error{"us-west-2": fmt.Errorf("i-3: %w: UnauthorizedOperation", providers.ErrPermission)}}
		audit, path := openAudit(t)
		o := opts(st, cs, audit)
		o.Execute = execute
		sum, err := Execute(context.Background(), ds, o)
		if !errors.Is(err, providers.ErrPermission) || !strings.Contains(err.Error(), "nothing was stopped") {
			t.Fatalf("err %v", err)
		}
		if len(st.realStops()) != 0 {
			t.Fatalf("stopped %v", st.realStops())
		}
		for _, d := range ds[:3] {
			if d.Result != ResultNotAttempted || d.Executed || !strings.Contains(d.Error, "permission") {
				t.Fatalf("%+v", d)
			}
		}
		if sum.Stopped != 0 || sum.Error == "" || len(readAudit(t, path)) != 6 {
			t.Fatalf("%+v", sum)
		}
	}
}

func TestCap(t *testing.T) {
	cs := fleetOf()
	ds := Decide(cs, now, DefaultPolicy())
	var tm *TooManyError
	if err := Cap(ds, 2); !errors.As(err, &tm) || tm.Stops != 3 || tm.Max != 2 {
		t.Fatalf("%v", err)
	}
	if err := Cap(ds, 3); err != nil {
		t.Fatal(err)
	}
	st := &fakeStopper{}
	audit, path := openAudit(t)
	o := opts(st, cs, audit)
	o.Policy.MaxStops = 2
	sum, err := Execute(context.Background(), ds, o)
	if !errors.As(err, &tm) || !strings.Contains(err.Error(), "nothing was stopped") {
		t.Fatalf("%v", err)
	}
	if len(st.realStops()) != 0 || sum.Stopped != 0 || sum.Results[ResultNotAttempted] != 3 || len(readAudit(t, path)) != 6 {
		t.Fatalf("%v %+v", st.calls, sum)
	}
}

func TestExecuteRecheck(t *testing.T) {
	cs := fleetOf()
	ds := Decide(cs, now, DefaultPolicy())
	st := &fakeStopper{}
	o := opts(st, cs, nil)
	o.Recheck = recheckFrom(cs, map[string]func(*Candidate){
		"i-1": func(c *Candidate) { c.Instance.Utilization.Samples[29].GPU = fleet.PerGPU{0, 97} }, // turned busy
		"i-2": nil,                                                                                 // gone
		"i-3": func(c *Candidate) { c.Instance.State = fleet.Stopped },
	})
	sum, err := Execute(context.Background(), ds, o)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"i-1": "skip/busy/", "i-2": "skip/gone/", "i-3": "skip/already-stopped/",
		"i-4": "skip/exempt/", "i-5": "skip/busy/",
	}
	if got := results(ds); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v", got)
	}
	if len(st.realStops()) != 0 || sum.Stop != 0 || !sum.MonthlySavings.IsZero() {
		t.Fatalf("%v %+v", st.calls, sum)
	}
	if ds[0].Metrics.GPUMaxPercent != 97 {
		t.Fatalf("the re-checked decision keeps stale metrics: %+v", ds[0].Metrics)
	}

	// A failed re-check stops nothing.
	ds = Decide(cs, now, DefaultPolicy())
	o.Recheck = func(context.Context, []Decision) (map[string]Candidate, error) {
		return nil, errors.New("CloudWatch unavailable")
	}
	if _, err := Execute(context.Background(), ds, o); err == nil || !strings.Contains(err.Error(), "CloudWatch unavailable") {
		t.Fatalf("%v", err)
	}
	if len(st.realStops()) != 0 || ds[0].Reason != ReasonRecheckFailed || ds[0].Decision != Skip {
		t.Fatalf("%+v", ds[0])
	}
}

func TestExecuteOneFailureDoesNotStopTheOthers(t *testing.T) {
	cs := fleetOf()
	ds := Decide(cs, now, DefaultPolicy())
	st := &fakeStopper{errs: map[string][]error{
		"i-1": {errors.New("i-1: InternalError: boom")},
		"i-2": {fmt.Errorf("i-2: %w", providers.ErrNotStoppable)},
	}, already: map[string]bool{"i-3": true}}
	sum, err := Execute(context.Background(), ds, opts(st, cs, nil))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"i-1": "stop/idle/failed", "i-2": "stop/idle/not-stoppable", "i-3": "stop/idle/already-stopped",
		"i-4": "skip/exempt/", "i-5": "skip/busy/",
	}
	if got := results(ds); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v", got)
	}
	if sum.Failed != 1 || sum.Stopped != 0 || len(sum.Failures) != 1 || !strings.Contains(sum.Failures[0], "boom") || !sum.MonthlySavings.IsZero() {
		t.Fatalf("%+v", sum)
	}
	if ds[0].Error == "" || !ds[0].Executed {
		t.Fatalf("%+v", ds[0])
	}
}

func TestExecuteThrottledRetriedOnce(t *testing.T) {
	cs := fleetOf()[:1]
	throttled := fmt.Errorf("i-1: %w", providers.ErrThrottled)
	st := &fakeStopper{errs: map[string][]error{"i-1": {throttled}}}
	ds := Decide(cs, now, DefaultPolicy())
	if _, err := Execute(context.Background(), ds, opts(st, cs, nil)); err != nil {
		t.Fatal(err)
	}
	if ds[0].Result != ResultStopped || len(st.realStops()) != 2 {
		t.Fatalf("%s %v", ds[0].Result, st.calls)
	}

	st = &fakeStopper{errs: map[string][]error{"i-1": {throttled, throttled, throttled}}}
	ds = Decide(cs, now, DefaultPolicy())
	sum, _ := Execute(context.Background(), ds, opts(st, cs, nil))
	if ds[0].Result != ResultFailed || len(st.realStops()) != 2 || sum.Failed != 1 {
		t.Fatalf("%s %v", ds[0].Result, st.calls)
	}
}

func TestExecuteIdempotent(t *testing.T) {
	cs := fleetOf()
	st := &fakeStopper{}
	ds := Decide(cs, now, DefaultPolicy())
	if _, err := Execute(context.Background(), ds, opts(st, cs, nil)); err != nil {
		t.Fatal(err)
	}
	// A second run that decided on the same stale snapshot: every stop is a no-op.
	ds = Decide(cs, now, DefaultPolicy())
	sum, err := Execute(context.Background(), ds, opts(st, cs, nil))
	if err != nil {
		t.Fatal(err)
	}
	if sum.Results[ResultAlreadyStopped] != 3 || sum.Stopped != 0 || sum.Failed != 0 {
		t.Fatalf("%+v", sum)
	}
}

func TestExecuteNeedsStopperAndRecheck(t *testing.T) {
	cs := fleetOf()
	ds := Decide(cs, now, DefaultPolicy())
	o := opts(nil, cs, nil)
	if _, err := Execute(context.Background(), ds, o); err == nil || !strings.Contains(err.Error(), "cannot stop") {
		t.Fatalf("%v", err)
	}
	o = opts(&fakeStopper{}, cs, nil)
	o.Recheck = nil
	if _, err := Execute(context.Background(), ds, o); err == nil || !strings.Contains(err.Error(), "Recheck") {
		t.Fatalf("%v", err)
	}
	o = opts(&fakeStopper{}, cs, nil)
	o.Policy.GPUPercent = 0
	if _, err := Execute(context.Background(), ds, o); err == nil || !strings.Contains(err.Error(), "idle_stop.gpu_percent") {
		t.Fatalf("%v", err)
	}
	// Nothing to stop needs no stopper.
	skips := Decide(cs[3:], now, DefaultPolicy())
	if _, err := Execute(context.Background(), skips, opts(nil, cs, nil)); err != nil {
		t.Fatal(err)
	}
}

// Each stop's intent is on disk before it is sent and its outcome before the
// next stop starts, so a crash at any point leaves a line for every machine
// that may have been stopped.
func TestAuditLineWrittenAsSoonAsFinal(t *testing.T) {
	cs := fleetOf()
	ds := Decide(cs, now, DefaultPolicy())
	audit, path := openAudit(t)
	st := &fakeStopper{}
	stopsSoFar := 0
	st.onStop = func(id string) {
		n, intent := 0, false
		for _, l := range readAudit(t, path) {
			if l["result"] == ResultStopped && l["type"] == LineOutcome {
				n++
			}
			if l["type"] == LineIntent && l["resourceId"] == id {
				intent = true
			}
		}
		if n != stopsSoFar || !intent {
			t.Errorf("before stopping %s: %d outcome lines on disk, want %d; its intent on disk: %v", id, n, stopsSoFar, intent)
		}
		stopsSoFar++
	}
	o := opts(st, cs, audit)
	o.Concurrency = 1
	if _, err := Execute(context.Background(), ds, o); err != nil {
		t.Fatal(err)
	}

	// The run is cut short after the first stop: that stop's line is there,
	// and every other decision is logged as not attempted.
	ds = Decide(cs, now, DefaultPolicy())
	audit2, path2 := openAudit(t)
	ctx, cancel := context.WithCancel(context.Background())
	st2 := &fakeStopper{}
	st2.onStop = func(string) {
		if len(st2.realStops()) == 0 {
			return
		}
		cancel()
	}
	o = opts(st2, cs, audit2)
	o.Concurrency = 1
	_, err := Execute(ctx, ds, o)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("%v", err)
	}
	// The stop cut short has no answer: unknown, never failed.
	lines := readAudit(t, path2)
	counts := map[any]int{}
	for _, l := range lines {
		counts[fmt.Sprint(l["type"], "/", l["result"])]++
	}
	want := map[any]int{"intent/<nil>": 2, "outcome/stopped": 1, "outcome/unknown": 1, "decision/not-attempted": 1, "decision/<nil>": 2, "summary/<nil>": 1}
	if fmt.Sprint(counts) != fmt.Sprint(want) {
		t.Fatalf("lines %v, want %v", counts, want)
	}
}

func TestAuditConcurrentRunsDoNotInterleave(t *testing.T) {
	path := filepath.Join(t.TempDir(), "idle-stop.jsonl")
	cs := fleetOf()
	type runInfo struct {
		id             string
		opened, closed time.Time
	}
	infos := make([]runInfo, 2)
	first := make(chan struct{})
	var wg sync.WaitGroup
	for r := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r == 1 {
				<-first // start once the first run holds the lock
			}
			a, err := OpenAuditWait(context.Background(), path, 10*time.Second)
			if err != nil {
				t.Error(err)
				return
			}
			infos[r].id, infos[r].opened = a.RunID(), time.Now()
			if r == 0 {
				close(first)
			}
			st := &fakeStopper{delay: 30 * time.Millisecond}
			ds := Decide(cs, now, DefaultPolicy())
			if _, err := Execute(context.Background(), ds, opts(st, cs, a)); err != nil {
				t.Error(err)
			}
			infos[r].closed = time.Now()
			if err := a.Close(); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if infos[1].opened.Before(infos[0].closed) {
		t.Fatal("the second run did not wait for the first")
	}
	lines := readAudit(t, path)
	if len(lines) != 18 {
		t.Fatalf("%d lines", len(lines))
	}
	for i, l := range lines {
		want := infos[i/9].id
		if l["runId"] != want {
			t.Fatalf("line %d belongs to %v, want %s: runs interleaved", i, l["runId"], want)
		}
	}
	if infos[0].id == infos[1].id {
		t.Fatal("two runs share a run id")
	}
}

func TestAuditLockTimeout(t *testing.T) {
	path := filepath.Join(t.TempDir(), "idle-stop.jsonl")
	a, err := OpenAudit(path)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = OpenAuditWait(context.Background(), path, 150*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "another idle-stop run still holds") || time.Since(start) < 150*time.Millisecond {
		t.Fatalf("%v after %s", err, time.Since(start))
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal("second Close:", err)
	}
	if err := a.WriteDecision(Decision{}); err == nil {
		t.Fatal("wrote to a closed log")
	}
	b, err := OpenAuditWait(context.Background(), path, time.Second)
	if err != nil {
		t.Fatal("the lock was not released:", err)
	}
	b.Close()
	var nilAudit *Audit
	if nilAudit.WriteDecision(Decision{}) != nil || nilAudit.Close() != nil || nilAudit.RunID() != "" {
		t.Fatal("nil audit")
	}
}
