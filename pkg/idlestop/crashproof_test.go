package idlestop

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers"
)

// slowStopper answers real stops after delay, or when the call's context
// ends, whichever comes first; it counts the stops it carried out.
type slowStopper struct {
	delay   time.Duration
	err     error // answered instead of success
	started chan string
	mu      sync.Mutex
	done    []string
}

func (s *slowStopper) Stop(ctx context.Context, sc providers.Scope, id string, dry bool) (providers.StopResult, error) {
	if dry {
		return providers.StopResult{PreviousState: "running", CurrentState: "running"}, nil
	}
	if s.started != nil {
		s.started <- id
	}
	t := time.NewTimer(s.delay)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return providers.StopResult{}, fmt.Errorf("%s: %w", id, ctx.Err())
	}
	if s.err != nil {
		return providers.StopResult{}, s.err
	}
	s.mu.Lock()
	s.done = append(s.done, id)
	s.mu.Unlock()
	return providers.StopResult{PreviousState: "running", CurrentState: "stopping"}, nil
}

// interruptDuringStops runs Execute over three idle machines, one stop at a
// time, and cancels the run as soon as the first stop is sent.
func interruptDuringStops(t *testing.T, st *slowStopper, grace time.Duration) ([]Decision, Summary, error, time.Duration) {
	t.Helper()
	cs := fleetOf()
	ds := Decide(cs, now, DefaultPolicy())
	audit, _ := openAudit(t)
	st.started = make(chan string, 8)
	ctx, cancel := context.WithCancelCause(context.Background())
	go func() {
		<-st.started
		cancel(errors.New("interrupted by terminated"))
	}()
	o := opts(st, cs, audit)
	o.Concurrency, o.Grace = 1, grace
	start := time.Now()
	sum, err := Execute(ctx, ds, o)
	return ds, sum, err, time.Since(start)
}

func TestGracePeriod(t *testing.T) {
	t.Run("a stop in flight finishes within the grace period; no new one starts", func(t *testing.T) {
		st := &slowStopper{delay: 100 * time.Millisecond}
		ds, sum, err, el := interruptDuringStops(t, st, 2*time.Second)
		if err == nil || !strings.Contains(err.Error(), "interrupted by terminated") {
			t.Fatalf("err %v", err)
		}
		if got := results(ds); got["i-1"] != "stop/idle/stopped" || got["i-2"] != "stop/idle/not-attempted" || got["i-3"] != "stop/idle/not-attempted" {
			t.Fatalf("results %v", got)
		}
		if sum.Stopped != 1 || sum.Unknown != 0 || sum.Failed != 0 || el > time.Second {
			t.Fatalf("summary %+v after %s", sum, el)
		}
	})
	for _, tc := range []struct {
		name  string
		grace time.Duration
	}{{"a stop past the grace period is abandoned as unknown", 150 * time.Millisecond}, {"no grace abandons at once", 0}} {
		t.Run(tc.name, func(t *testing.T) {
			st := &slowStopper{delay: 10 * time.Second}
			ds, sum, _, el := interruptDuringStops(t, st, tc.grace)
			if got := results(ds); got["i-1"] != "stop/idle/unknown" || got["i-2"] != "stop/idle/not-attempted" {
				t.Fatalf("results %v", got)
			}
			if sum.Unknown != 1 || sum.Failed != 0 || sum.Stopped != 0 {
				t.Fatalf("summary %+v", sum)
			}
			if el < tc.grace || el > tc.grace+time.Second {
				t.Fatalf("took %s with a grace of %s", el, tc.grace)
			}
			if !ds[0].Executed || !strings.Contains(ds[0].Error, "reconciles") {
				t.Fatalf("%+v", ds[0])
			}
		})
	}
}

// timeoutErr is a net.Error that timed out, as an HTTP client timeout is.
type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

var _ net.Error = timeoutErr{}

// A stop whose request timed out may have been carried out: unknown, never
// failed; a stop refused by the cloud is failed.
func TestTimedOutStopIsUnknownNotFailed(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("operation error EC2: StopInstances: %w", &net.OpError{Op: "read", Err: timeoutErr{}}), ResultUnknown},
		{fmt.Errorf("wrapped: %w", context.DeadlineExceeded), ResultUnknown},
		{fmt.Errorf("wrapped: %w", context.Canceled), ResultUnknown},
		{errors.New("InternalError: simulated"), ResultFailed},
		{fmt.Errorf("x: %w", providers.ErrNotFound), ResultNotFound},
	} {
		cs := fleetOf()
		ds := Decide(cs, now, DefaultPolicy())
		sum, err := Execute(context.Background(), ds, opts(&slowStopper{err: tc.err}, cs, nil))
		if err != nil {
			t.Fatal(err)
		}
		if ds[0].Result != tc.want {
			t.Errorf("%v: result %s, want %s", tc.err, ds[0].Result, tc.want)
		}
		if tc.want == ResultUnknown && (sum.Unknown != 3 || sum.Failed != 0) {
			t.Errorf("%v: summary %+v", tc.err, sum)
		}
	}
}

func TestUnsettled(t *testing.T) {
	log := strings.Join([]string{
		`{"type":"intent","runId":"r1","time":"2026-11-30T12:00:00Z","provider":"aws","account":"1","region":"us-east-1","resourceId":"i-a"}`,
		`{"type":"intent","runId":"r1","time":"2026-11-30T12:00:00Z","provider":"aws","account":"1","region":"us-east-1","resourceId":"i-b"}`,
		`{"type":"outcome","runId":"r1","resourceId":"i-a","result":"stopped"}`,
		`{"type":"intent","runId":"r1","time":"2026-11-30T12:00:01Z","provider":"aws","account":"1","region":"us-east-1","resourceId":"i-c"}`,
		`{"type":"outcome","runId":"r1","resourceId":"i-c","result":"unknown"}`,
		`{"type":"intent","runId":"r2","time":"2026-11-30T12:15:00Z","provider":"aws","account":"1","region":"us-west-2","resourceId":"i-d"}`,
		`{"type":"reconciled","runId":"r3","intentRunId":"r2","resourceId":"i-d","state":"stopped"}`,
		`{"type":"intent","runId":"r2","time":"2026-11-30T12:15:00Z","provider":"aws","account":"1","region":"us-west-2","resourceId":"i-e"}`,
		`{"type":"reconciled","runId":"r3","intentRunId":"r2","resourceId":"i-e","state":"unknown"}`,
		`{"type":"decision","runId":"r2","resourceId":"i-f","decision":"skip"}`,
		`{"type":"intent","runId":"r4","resourceId":"i-g","provider":"aws","acc`, // torn by a crash
		``,
		`{"type":"intent","runId":"r5","time":"2026-11-30T13:00:00Z","provider":"aws","account":"2","resourceId":"i-a"}`,
	}, "\n")
	path := filepath.Join(t.TempDir(), "a.jsonl")
	if err := os.WriteFile(path, []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	got, torn, err := Unsettled(path)
	if err != nil || torn != 1 {
		t.Fatalf("torn %d, err %v", torn, err)
	}
	var ids []string
	for _, in := range got {
		ids = append(ids, in.RunID+"/"+in.ResourceID)
	}
	// i-b: no outcome; i-c: unknown outcome; i-e: reconciled unknown; r5/i-a: another run's intent.
	if want := "r1/i-b r1/i-c r2/i-e r5/i-a"; strings.Join(ids, " ") != want {
		t.Fatalf("unsettled %v, want %s", ids, want)
	}
	if got[0].Scope() != (providers.Scope{Provider: fleet.AWS, Account: "1", Region: "us-east-1"}) {
		t.Fatalf("scope %+v", got[0].Scope())
	}
	if got, _, err := Unsettled(filepath.Join(t.TempDir(), "none.jsonl")); err != nil || got != nil {
		t.Fatalf("missing log: %v %v", got, err)
	}
}

// FuzzUnsettled: any log content gives an answer, never a panic, and every
// intent returned was in the log with no settling outcome after it.
func FuzzUnsettled(f *testing.F) {
	f.Add([]byte(`{"type":"intent","runId":"r","resourceId":"i"}` + "\n"))
	f.Add([]byte(`{"type":"intent","runId":"r","resourceId":"i"}` + "\n" + `{"type":"outcome","runId":"r","resourceId":"i","result":"failed"}`))
	f.Add([]byte(`{"type":"reconciled","intentRunId":"r","resourceId":"i","state":"gone"}`))
	f.Add([]byte("{\"type\":\"intent\"\n\x00\xff[]"))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, torn, err := unsettled(strings.NewReader(string(b)), "fuzz")
		if err != nil && !strings.Contains(err.Error(), "token too long") {
			t.Fatal(err)
		}
		if torn < 0 {
			t.Fatal(torn)
		}
		seen := map[intentKey]bool{}
		for _, in := range got {
			k := intentKey{in.RunID, in.ResourceID}
			if seen[k] {
				t.Fatalf("intent %v twice", k)
			}
			seen[k] = true
			if !strings.Contains(string(b), `"intent"`) {
				t.Fatalf("an intent from a log without one: %+v", in)
			}
		}
	})
}

func TestReconcile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.jsonl")
	// A run killed after sending four stops: intents, no outcomes.
	crashed, err := OpenAudit(path)
	if err != nil {
		t.Fatal(err)
	}
	east := providers.Scope{Provider: fleet.AWS, Account: "1", Region: "us-east-1"}
	west := providers.Scope{Provider: fleet.AWS, Account: "1", Region: "us-west-2"}
	other := providers.Scope{Provider: fleet.AWS, Account: "2", Region: "us-east-1"}
	for _, x := range []struct {
		id string
		sc providers.Scope
	}{{"i-stopped", east}, {"i-running", east}, {"i-gone", east}, {"i-west", west}, {"i-other", other}} {
		d := Decision{Provider: x.sc.Provider, Account: x.sc.Account, Region: x.sc.Region, ResourceID: x.id, Scope: x.sc}
		if err := crashed.WriteIntent(d, now); err != nil {
			t.Fatal(err)
		}
	}
	// The crash: no outcome, no summary, the lock dies with the process.
	crashed.Close()

	next, err := OpenAudit(path)
	if err != nil {
		t.Fatal(err)
	}
	defer next.Close()
	var looked []string
	lookup := func(_ context.Context, sc providers.Scope, ids []string) (map[string]fleet.State, error) {
		looked = append(looked, sc.String()+fmt.Sprint(ids))
		if sc == west {
			return nil, errors.New("region unavailable")
		}
		return map[string]fleet.State{"i-stopped": fleet.Stopped, "i-running": fleet.Running}, nil
	}
	covers := func(sc providers.Scope) bool { return sc.Account == "1" }
	got, torn, err := Reconcile(context.Background(), next, ReconcileOptions{Lookup: lookup, Covers: covers, Now: func() time.Time { return now }})
	if err != nil || torn != 0 {
		t.Fatal(err, torn)
	}
	states := map[string]string{}
	for _, r := range got {
		states[r.ResourceID] = r.State
		if r.IntentRunID != crashed.RunID() || r.RunID != next.RunID() || r.Type != LineReconciled {
			t.Fatalf("%+v", r)
		}
	}
	want := map[string]string{"i-stopped": "stopped", "i-running": "still-running", "i-gone": "gone", "i-west": "unknown"}
	if fmt.Sprint(states) != fmt.Sprint(want) {
		t.Fatalf("reconciled %v, want %v", states, want)
	}
	sort.Strings(looked)
	if fmt.Sprint(looked) != "[aws:1/us-east-1[i-stopped i-running i-gone] aws:1/us-west-2[i-west]]" {
		t.Fatalf("looked up %v (one call per scope, none outside the run's targets)", looked)
	}
	// Settled intents are not reconciled again; the unknown one and the
	// uncovered one are still open.
	left, _, err := Unsettled(path)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, in := range left {
		ids = append(ids, in.ResourceID)
	}
	if fmt.Sprint(ids) != "[i-west i-other]" {
		t.Fatalf("still unsettled %v", ids)
	}
}

func TestTargetLocks(t *testing.T) {
	dir := t.TempDir()
	a, err := LockTargets(context.Background(), dir, []string{"aws:2", "aws:1", "aws:1"}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(a.Targets()) != "[aws:1 aws:2]" || !a.Holds(providers.Scope{Provider: fleet.AWS, Account: "1", Region: "eu-west-1"}) || a.Holds(providers.Scope{Provider: fleet.AWS, Account: "3"}) {
		t.Fatalf("targets %v", a.Targets())
	}
	// A second run over an overlapping set waits, then fails and keeps nothing.
	start := time.Now()
	_, err = LockTargets(context.Background(), dir, []string{"aws:3", "aws:2"}, 200*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "aws:2") || !strings.Contains(err.Error(), "nothing was stopped") || time.Since(start) < 200*time.Millisecond {
		t.Fatalf("%v", err)
	}
	// aws:3 was released by the failed attempt.
	c, err := LockTargets(context.Background(), dir, []string{"aws:3"}, 100*time.Millisecond)
	if err != nil {
		t.Fatal("the failed attempt kept aws:3:", err)
	}
	c.Release()
	// Disjoint targets do not wait.
	d, err := LockTargets(context.Background(), dir, []string{"azure:1"}, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	d.Release()
	// Cancellation ends the wait with its cause.
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("interrupted by interrupt"))
	if _, err := LockTargets(ctx, dir, []string{"aws:1"}, time.Minute); err == nil || !strings.Contains(err.Error(), "interrupted by interrupt") {
		t.Fatalf("%v", err)
	}
	if err := a.Release(); err != nil {
		t.Fatal(err)
	}
	if err := a.Release(); err != nil {
		t.Fatal("second release:", err)
	}
	b, err := LockTargets(context.Background(), dir, []string{"aws:2"}, time.Second)
	if err != nil {
		t.Fatal("not released:", err)
	}
	b.Release()
	// Names that differ only in characters a file name cannot keep get
	// different locks.
	if lockName("aws:a/b") == lockName("aws:a_b") || strings.ContainsAny(lockName("aws:../../x"), "/:") {
		t.Fatal(lockName("aws:a/b"), lockName("aws:../../x"))
	}
}

func TestExecuteStopsOnlyLockedTargets(t *testing.T) {
	cs := fleetOf()
	cs[2].Scope.Account, cs[2].Instance.Account = "999999999999", "999999999999"
	ds := Decide(cs, now, DefaultPolicy())
	lk, err := LockTargets(context.Background(), t.TempDir(), []string{"aws:123456789012"}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Release()
	o := opts(&fakeStopper{}, cs, nil)
	o.Lock = lk
	if _, err := Execute(context.Background(), ds, o); err != nil {
		t.Fatal(err)
	}
	if got := results(ds); got["i-1"] != "stop/idle/stopped" || got["i-3"] != "stop/idle/not-attempted" {
		t.Fatalf("%v", got)
	}
}

func TestLedgerCapsConcurrentRuns(t *testing.T) {
	path := filepath.Join(t.TempDir(), LedgerFile)
	mk := func(n int) []Decision {
		var out []Decision
		for i := range n {
			out = append(out, Decision{ResourceID: fmt.Sprintf("i-%d", i), Scope: providers.Scope{Provider: fleet.AWS, Account: "1"}})
		}
		return out
	}
	ctx := context.Background()
	a, b, c := &Ledger{Path: path}, &Ledger{Path: path}, &Ledger{Path: path}
	if err := a.Reserve(ctx, "run-a", mk(6), 10, now); err != nil {
		t.Fatal(err)
	}
	// While run a runs, another run may stop 4 more, not 5.
	var tooMany *TooManyError
	if err := b.Reserve(ctx, "run-b", mk(5), 10, now); !errors.As(err, &tooMany) || tooMany.Recent != 6 || !strings.Contains(err.Error(), "other runs still running stop 6") {
		t.Fatalf("%v", err)
	}
	if err := b.Reserve(ctx, "run-b", mk(4), 10, now); err != nil {
		t.Fatal(err)
	}
	if err := c.Reserve(ctx, "run-c", mk(1), 10, now); !errors.As(err, &tooMany) || tooMany.Recent != 10 {
		t.Fatalf("%v", err)
	}
	// Once a and b have ended, their reservations no longer count and are
	// dropped.
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Reserve(ctx, "run-c", mk(7), 10, now); !errors.As(err, &tooMany) || tooMany.Recent != 4 {
		t.Fatalf("with run b still running: %v", err)
	}
	b.Close()
	b.Close() // twice is fine
	if err := c.Reserve(ctx, "run-c", mk(10), 10, now); err != nil {
		t.Fatal(err)
	}
	es, err := c.Entries()
	if err != nil || len(es) != 10 || es[0].RunID != "run-c" || es[0].Target != "aws:1" {
		t.Fatalf("%d entries %v, %v", len(es), es, err)
	}
	c.Close()
	var nilLedger *Ledger
	if nilLedger.Reserve(ctx, "x", mk(100), 1, now) != nil || nilLedger.Close() != nil {
		t.Fatal("a nil ledger caps nothing")
	}
	// A damaged ledger stops nothing and names its line.
	if err := os.WriteFile(path, []byte(`{"time":"2026-11-30T12:00:00Z","runId":"x"}`+"\nnot json\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := (&Ledger{Path: path}).Reserve(ctx, "run-f", mk(1), 10, now); err == nil || !strings.Contains(err.Error(), LedgerFile+":2:") {
		t.Fatalf("%v", err)
	}
}

// A run killed after its reservation (its liveness lock dies with it) no
// longer counts.
func TestLedgerForgetsKilledRuns(t *testing.T) {
	path := filepath.Join(t.TempDir(), LedgerFile)
	killed := &Ledger{Path: path}
	if err := killed.Reserve(context.Background(), "killed", make([]Decision, 9), 10, now); err != nil {
		t.Fatal(err)
	}
	killed.mine.Close() // what the kernel does to a killed process's locks
	if err := (&Ledger{Path: path}).Reserve(context.Background(), "next", make([]Decision, 10), 10, now); err != nil {
		t.Fatal(err)
	}
}

// Concurrent runs, each reserving within the cap alone, never together
// exceed it.
func TestLedgerConcurrentReservations(t *testing.T) {
	path := filepath.Join(t.TempDir(), LedgerFile)
	var wg sync.WaitGroup
	var mu sync.Mutex
	granted := 0
	for r := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ds := []Decision{{ResourceID: fmt.Sprintf("i-%d-a", r)}, {ResourceID: fmt.Sprintf("i-%d-b", r)}, {ResourceID: fmt.Sprintf("i-%d-c", r)}}
			l := &Ledger{Path: path} // one per run; none ends during the test
			t.Cleanup(func() { l.Close() })
			err := l.Reserve(context.Background(), fmt.Sprintf("run-%d", r), ds, 10, now)
			var tm *TooManyError
			switch {
			case err == nil:
				mu.Lock()
				granted += len(ds)
				mu.Unlock()
			case !errors.As(err, &tm):
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if granted != 9 {
		t.Fatalf("%d stops granted to runs of 3 under a cap of 10, want 9", granted)
	}
}

func TestExecuteSharedCap(t *testing.T) {
	cs := fleetOf()
	path := filepath.Join(t.TempDir(), LedgerFile)
	other := &Ledger{Path: path}
	defer other.Close()
	if err := other.Reserve(context.Background(), "other", make([]Decision, 8), 10, now); err != nil {
		t.Fatal(err)
	}
	ds := Decide(cs, now, DefaultPolicy())
	st := &fakeStopper{}
	o := opts(st, cs, nil)
	o.Ledger = &Ledger{Path: path}
	_, err := Execute(context.Background(), ds, o)
	var tm *TooManyError
	if !errors.As(err, &tm) || tm.Recent != 8 || len(st.realStops()) != 0 {
		t.Fatalf("%v, stops %v", err, st.realStops())
	}
	if got := results(ds); got["i-1"] != "stop/idle/not-attempted" {
		t.Fatalf("%v", got)
	}
	// Once the other run ends, the same run stops its three; when it is
	// done its reservations no longer count.
	other.Close()
	ds = Decide(cs, now, DefaultPolicy())
	o.Ledger = &Ledger{Path: path}
	if _, err := Execute(context.Background(), ds, o); err != nil {
		t.Fatal(err)
	}
	if err := (&Ledger{Path: path}).Reserve(context.Background(), "after", make([]Decision, 10), 10, now); err != nil {
		t.Fatal("the finished run still counts:", err)
	}
}

func TestStateDir(t *testing.T) {
	env := func(kv ...string) func(string) (string, bool) {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
	}
	for _, tc := range []struct {
		env  func(string) (string, bool)
		want string
	}{
		{env("XDG_STATE_HOME", "/s", "HOME", "/h"), "/s/gpufinops"},
		{env("XDG_STATE_HOME", "relative", "HOME", "/h"), "/h/.local/state/gpufinops"},
		{env("XDG_STATE_HOME", "", "HOME", "/h"), "/h/.local/state/gpufinops"},
		{env("HOME", "/h"), "/h/.local/state/gpufinops"},
		{env(), ""},
		{env("HOME", "rel"), ""},
	} {
		got, err := StateDir(tc.env)
		if got != tc.want || (err != nil) != (tc.want == "") {
			t.Errorf("got %q %v, want %q", got, err, tc.want)
		}
	}
}

// A log whose last line was torn by a crash gets its next line on a line of
// its own.
func TestOpenAuditEndsTornLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.jsonl")
	if err := os.WriteFile(path, []byte(`{"type":"decision","runId":"r"}`+"\n"+`{"type":"intent","ru`), 0o640); err != nil {
		t.Fatal(err)
	}
	a, err := OpenAudit(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.WriteSummary(Summary{}); err != nil {
		t.Fatal(err)
	}
	a.Close()
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[2], `{"type":"summary"`) {
		t.Fatalf("%q", b)
	}
}

// FuzzReadLedger: any ledger content is read or refused with its file and
// line named, never a panic, and what is read has a time and a run.
func FuzzReadLedger(f *testing.F) {
	f.Add([]byte(`{"time":"2026-11-30T12:00:00Z","runId":"r","target":"aws:1","resourceId":"i-1"}` + "\n"))
	f.Add([]byte("\n\n{\"time\":\"x\"}\n"))
	f.Add([]byte(`{"time":"2026-11-30T12:00:00Z","runId":""}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(t.TempDir(), LedgerFile)
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		es, err := readLedger(path)
		if err != nil {
			if !strings.Contains(err.Error(), path) {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		for _, e := range es {
			if e.Time.IsZero() || e.RunID == "" {
				t.Fatalf("accepted %+v", e)
			}
		}
	})
}
