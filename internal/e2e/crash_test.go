package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
	"github.com/gpufinops/gpufinops/providers/aws/sim"
	"github.com/gpufinops/gpufinops/providers/aws/simcat"
)

// The crash tests run the real gpufinops binary against the AWS simulator,
// on the wall clock, and kill it while stop calls are in flight.

// idleFleet is n idle machines, allowed to stop, with a week of flat 2 %
// utilization ending now.
func idleFleet(n int) *fleet.Fleet {
	now := time.Now().UTC().Truncate(time.Minute)
	launched := now.Add(-30 * 24 * time.Hour)
	w := fleet.TimeRange{Start: now.Add(-7 * 24 * time.Hour), End: now}
	s := fleet.Stats{Avg: 2, P95: 2, Max: 2}
	f := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind}
	for i := range n {
		f.Instances = append(f.Instances, fleet.Instance{
			ID: fmt.Sprintf("i-idle-%02d", i), Provider: fleet.AWS, Account: "111122223333", Region: "us-east-1", Zone: "us-east-1a",
			InstanceType: "g4dn.xlarge", Lifecycle: fleet.OnDemand, State: fleet.Running, LaunchTime: &launched,
			Tags:        map[string]string{"Team": "ml", "AutoShutdown": "true"},
			Utilization: &fleet.Utilization{Window: &w, GPU: &s, GPUMemory: &s, CPU: &s, Memory: &fleet.Stats{Avg: 20, P95: 20, Max: 20}},
		})
	}
	return f
}

// crashEnv is one simulator and the state directory the runs share.
type crashEnv struct {
	t     *testing.T
	bin   string
	sim   *sim.Server
	srv   *httptest.Server
	dir   string
	audit string
}

func newCrashEnv(t *testing.T, bin string, n int, faults sim.Faults) *crashEnv {
	t.Helper()
	f := idleFleet(n)
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	if err := pricing.Complete(f, cat); err != nil {
		t.Fatal(err)
	}
	opts := simcat.Options(f, cat)
	opts.Delays, opts.Hang = faults.Delays, faults.Hang
	s := sim.New(f, opts)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	return &crashEnv{t: t, bin: bin, sim: s, srv: srv, dir: dir, audit: filepath.Join(dir, "audit.jsonl")}
}

// start starts `gpufinops idle-stop --execute` against the simulator.
func (e *crashEnv) start(extra ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	e.t.Helper()
	args := append([]string{"idle-stop", "--provider", "aws", "--execute", "--max-stops", "50", "-o", "json",
		"--audit-log", e.audit, "--lock-dir", filepath.Join(e.dir, "locks")}, extra...)
	cmd := exec.Command(e.bin, args...)
	cmd.Env = []string{
		"HOME=" + e.dir, "XDG_STATE_HOME=" + e.dir, "XDG_CONFIG_HOME=" + e.dir, "PATH=" + os.Getenv("PATH"),
		"GPUFINOPS_PROVIDERS_AWS_ENDPOINT=" + e.srv.URL, "GPUFINOPS_PROVIDERS_AWS_REGIONS=us-east-1",
		"AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_REGION=us-east-1",
		"AWS_EC2_METADATA_DISABLED=true", "AWS_CONFIG_FILE=" + os.DevNull, "AWS_SHARED_CREDENTIALS_FILE=" + os.DevNull,
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	return cmd, &out, &errOut
}

// run runs idle-stop to its end and returns its exit code.
func (e *crashEnv) run(extra ...string) (int, string, string) {
	e.t.Helper()
	cmd, out, errOut := e.start(extra...)
	err := cmd.Wait()
	if err != nil && cmd.ProcessState == nil {
		e.t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), out.String(), errOut.String()
}

// stopped lists the machines the simulator shows stopped.
func (e *crashEnv) stopped() []string {
	var out []string
	for _, s := range e.sim.State() {
		if s.State == "stopped" {
			out = append(out, s.ID)
		}
	}
	return out
}

// waitStopped waits until the simulator shows at least one machine stopped.
func (e *crashEnv) waitStopped(cmd *exec.Cmd, errOut *bytes.Buffer) {
	e.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for len(e.stopped()) == 0 {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			e.t.Fatalf("no machine was stopped in time; stderr:\n%s", errOut)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// lines reads the audit log, grouping lines by type.
func (e *crashEnv) lines() map[string][]map[string]any {
	out := map[string][]map[string]any{}
	for _, l := range auditLines(e.t, e.audit) {
		typ, _ := l["type"].(string)
		out[typ] = append(out[typ], l)
	}
	return out
}

func ids(ls []map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, l := range ls {
		out[fmt.Sprint(l["resourceId"])] = l
	}
	return out
}

func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "gpufinops")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/gpufinops/gpufinops/cmd/gpufinops").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func TestCrashProofIdleStop(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and kills real processes; skipped under -short")
	}
	awsEnv(t)
	bin := buildBinary(t)
	delayed := sim.Faults{Delays: map[string]time.Duration{"StopInstances": time.Second}}

	t.Run("SIGKILL during the stops leaves an intent for every stopped machine; the next run reconciles them", func(t *testing.T) {
		e := newCrashEnv(t, bin, 8, delayed)
		cmd, _, errOut := e.start()
		e.waitStopped(cmd, errOut)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		stopped := e.stopped()
		ls := e.lines()
		intents, outcomes := ids(ls["intent"]), ids(ls["outcome"])
		for _, id := range stopped {
			if intents[id] == nil {
				t.Errorf("%s is stopped with no intent line in the audit log", id)
			}
		}
		open := 0
		for id := range intents {
			if outcomes[id] == nil {
				open++
			}
		}
		if open == 0 || len(ls["summary"]) != 0 {
			t.Fatalf("killed mid-stop, want intents without outcomes and no summary: %d open, %d summaries", open, len(ls["summary"]))
		}
		t.Logf("killed with %d stopped, %d intents, %d outcomes", len(stopped), len(intents), len(outcomes))

		// The next run settles every open intent with the cloud's state.
		if err := e.sim.SetFaults(sim.Faults{}); err != nil {
			t.Fatal(err)
		}
		atKill := map[string]bool{}
		for _, id := range stopped {
			atKill[id] = true
		}
		code, _, stderr := e.run()
		if code != 0 {
			t.Fatalf("second run exit %d: %s", code, stderr)
		}
		ls = e.lines()
		rec := ids(ls["reconciled"])
		for id := range intents {
			if outcomes[id] != nil {
				continue
			}
			r := rec[id]
			want := "still-running"
			if atKill[id] {
				want = "stopped"
			}
			if r == nil || r["state"] != want || r["intentRunId"] != intents[id]["runId"] {
				t.Errorf("%s: reconciled %v, want %s of run %v", id, r, want, intents[id]["runId"])
			}
		}
		if len(rec) != open || !strings.Contains(stderr, "reconciled: ") {
			t.Errorf("%d reconciled lines for %d open intents; stderr:\n%s", len(rec), open, stderr)
		}
		if n := len(e.stopped()); n != 8 {
			t.Errorf("after the second run %d of 8 idle machines are stopped", n)
		}
		// A third run has nothing left to reconcile.
		before := len(ls["reconciled"])
		if code, _, stderr := e.run(); code != 0 || len(e.lines()["reconciled"]) != before {
			t.Errorf("third run: exit %d, %d reconciled lines (was %d): %s", code, len(e.lines()["reconciled"]), before, stderr)
		}
	})

	t.Run("SIGTERM: in-flight stops are abandoned within the grace period and every decision is recorded", func(t *testing.T) {
		e := newCrashEnv(t, bin, 8, sim.Faults{Delays: map[string]time.Duration{"StopInstances": 3 * time.Second}})
		cmd, out, errOut := e.start("--grace-period", "500ms")
		// The first stop arrives after the permission check and the
		// dry-run of each stop, delayed too.
		e.waitStopped(cmd, errOut)
		sent := time.Now()
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		took := time.Since(sent)
		if took > 500*time.Millisecond+2*time.Second {
			t.Errorf("exited %s after SIGTERM, grace 500ms", took)
		}
		if code := cmd.ProcessState.ExitCode(); code != 3 {
			t.Errorf("exit %d, want 3; stderr:\n%s", code, errOut)
		}
		last := strings.TrimSpace(errOut.String())
		last = last[strings.LastIndex(last, "\n")+1:]
		t.Logf("after SIGTERM (%s): %s", took, last)
		if !strings.Contains(last, "interrupted by terminated") {
			t.Errorf("last stderr line %q does not say why", last)
		}
		r := decode(t, out.String())
		ls := e.lines()
		final := map[string]map[string]any{}
		for _, l := range append(ls["decision"], ls["outcome"]...) {
			final[fmt.Sprint(l["resourceId"])] = l
		}
		if len(final) != 8 || len(ls["summary"]) != 1 || len(r.Machines) != 8 {
			t.Fatalf("%d machines with a final line of 8, %d summaries", len(final), len(ls["summary"]))
		}
		intents := ids(ls["intent"])
		for id, l := range final {
			switch res := l["result"]; {
			case res == "failed":
				t.Errorf("%s logged failed after SIGTERM: %v", id, l)
			case intents[id] != nil && res != "unknown" && res != "stopped":
				t.Errorf("%s: an abandoned stop logged %v, want unknown or stopped", id, res)
			case intents[id] == nil && res != "not-attempted":
				t.Errorf("%s: never sent, logged %v, want not-attempted", id, res)
			}
		}
		for _, id := range e.stopped() {
			if intents[id] == nil {
				t.Errorf("%s stopped without an intent", id)
			}
		}
		sum := ls["summary"][0]
		if sum["unknown"].(float64) < 1 || sum["error"] == nil {
			t.Errorf("summary %v", sum)
		}
	})

	t.Run("a hung endpoint ends each stop at the request timeout, unknown, exit 3, and releases the lock", func(t *testing.T) {
		e := newCrashEnv(t, bin, 4, sim.Faults{Hang: []string{"StopInstances"}})
		start := time.Now()
		cmd, _, errOut := e.start("--run-timeout", "3s", "--request-timeout", "500ms", "--grace-period", "200ms")
		// While it holds the account's lock, a run with another audit log
		// over the same account stops nothing.
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			if _, err := os.Stat(e.audit); err == nil { // opened after the locks are taken
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the first run never opened its audit log: %s", errOut)
			}
		}
		other := filepath.Join(e.dir, "other-audit.jsonl")
		code, _, stderr := e.run("--audit-log", other, "--lock-wait", "200ms", "--run-timeout", "2s")
		if code == 0 || !strings.Contains(stderr, "holds the lock of aws:111122223333") {
			t.Errorf("a concurrent run with its own audit log: exit %d, %s", code, stderr)
		}
		_ = cmd.Wait()
		took := time.Since(start)
		if code := cmd.ProcessState.ExitCode(); code != 3 {
			t.Errorf("exit %d, want 3; stderr:\n%s", code, errOut)
		}
		if took > 8*time.Second {
			t.Errorf("took %s with --run-timeout 3s", took)
		}
		msg := strings.TrimSpace(errOut.String())
		last := msg[strings.LastIndex(msg, "\n")+1:]
		t.Logf("hung endpoint (%s): %s", took, last)
		// A timed-out stop is not retried (it may have been carried out):
		// each ends after one request timeout, its outcome unknown, well
		// before the run timeout.
		if !strings.HasPrefix(last, "gpufinops: ") || !strings.Contains(last, "4 stop(s) got no answer in time") {
			t.Errorf("last stderr line %q", last)
		}
		var said []string
		for _, ls := range e.lines() {
			for _, l := range ls {
				if msg, ok := l["error"].(string); ok && strings.Contains(msg, "no answer") {
					said = append(said, msg)
				}
			}
		}
		if len(said) == 0 {
			t.Error("the audit log says no stop went unanswered")
		}
		for _, msg := range said {
			if strings.Contains(msg, "operation error") || !strings.Contains(msg, "StopInstances: no answer from") {
				t.Errorf("an unanswered stop should name the operation and the timeout, without the SDK's text: %q", msg)
			}
		}
		if n := len(e.stopped()); n != 0 {
			t.Errorf("%d machines stopped through a hung endpoint", n)
		}
		// The lock is free: the next run takes it at once and acts.
		if err := e.sim.SetFaults(sim.Faults{}); err != nil {
			t.Fatal(err)
		}
		if code, _, stderr := e.run("--lock-wait", "200ms"); code != 0 || len(e.stopped()) != 4 {
			t.Errorf("next run: exit %d, %d stopped: %s", code, len(e.stopped()), stderr)
		}
	})
}
