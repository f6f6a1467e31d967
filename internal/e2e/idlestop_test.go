package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/gpufinops/gpufinops/pkg/testutil"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	idlestopcmd "github.com/gpufinops/gpufinops/pkg/cmd/idlestop"
	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/config"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/idlestop"
	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/pkg/recommend"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
	"github.com/gpufinops/gpufinops/providers"
	"github.com/gpufinops/gpufinops/providers/aws/sim"
	"github.com/gpufinops/gpufinops/providers/aws/simcat"
)

// stopNow is when the idle-stop tests start: a Monday noon.
var stopNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// clock is the tests' shared clock (simulator, adapter and command); a test
// may move it forward.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *clock) Advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

func awsEnv(t testing.TB) {
	for k, v := range map[string]string{
		"AWS_EC2_METADATA_DISABLED": "true", "AWS_CONFIG_FILE": os.DevNull, "AWS_SHARED_CREDENTIALS_FILE": os.DevNull,
		"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test", "AWS_REGION": "us-east-1", "AWS_PROFILE": "",
	} {
		t.Setenv(k, v)
	}
	// --execute keeps its audit log and locks here, not in the user's home.
	t.Setenv("XDG_STATE_HOME", t.TempDir())
}

// mixedFleet has one machine for every decision idle-stop makes.
func mixedFleet() *fleet.Fleet {
	flat := func(v float64) *fleet.Utilization {
		s := fleet.Stats{Avg: v, P95: v, Max: v}
		w := fleet.TimeRange{Start: stopNow.Add(-7 * 24 * time.Hour), End: stopNow}
		return &fleet.Utilization{Window: &w, GPU: &s, GPUMemory: &fleet.Stats{Avg: 10, P95: 10, Max: 10}, CPU: &s, Memory: &fleet.Stats{Avg: 20, P95: 20, Max: 20}}
	}
	launched := stopNow.Add(-30 * 24 * time.Hour)
	recent := stopNow.Add(-10 * time.Minute)
	mk := func(id string, mod func(*fleet.Instance)) fleet.Instance {
		in := fleet.Instance{ID: id, Provider: fleet.AWS, Account: "111122223333", Region: "us-east-1", Zone: "us-east-1a",
			InstanceType: "g4dn.xlarge", Lifecycle: fleet.OnDemand, State: fleet.Running, LaunchTime: &launched,
			Tags: map[string]string{"Team": "ml", "AutoShutdown": "true"}, Utilization: flat(2)}
		if mod != nil {
			mod(&in)
		}
		return in
	}
	return &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind, Instances: []fleet.Instance{
		mk("idle-1", nil),
		mk("idle-2", nil),
		mk("busy", func(in *fleet.Instance) { in.Utilization = flat(80) }),
		mk("exempt", func(in *fleet.Instance) { in.Tags["auto-shutdown-exempt"] = "true" }),
		mk("opted-out", func(in *fleet.Instance) { in.Tags["AutoShutdown"] = "false" }),
		mk("production", func(in *fleet.Instance) { in.Tags["Environment"] = "Production" }),
		mk("no-metrics", func(in *fleet.Instance) { in.Utilization = nil }),
		mk("just-launched", func(in *fleet.Instance) { in.LaunchTime = &recent }),
		mk("spot", func(in *fleet.Instance) { in.Lifecycle = fleet.Spot }),
		mk("stopped", func(in *fleet.Instance) { in.State = fleet.Stopped }),
	}}
}

var wantReasons = map[string]string{
	"idle-1": "stop/idle", "idle-2": "stop/idle", "busy": "skip/busy", "exempt": "skip/exempt",
	"opted-out": "skip/opted-out", "production": "skip/production", "no-metrics": "skip/no-metrics",
	"just-launched": "skip/just-launched", "spot": "skip/spot-not-stoppable", "stopped": "skip/already-stopped",
}

type simEnv struct {
	clock *clock
	srv   *httptest.Server
	sim   *sim.Server
	cat   pricing.Catalog
	fleet *fleet.Fleet
}

func startSim(t testing.TB, f *fleet.Fleet, mod func(*sim.Options)) *simEnv {
	t.Helper()
	awsEnv(t)
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	if err := pricing.Complete(f, cat); err != nil {
		t.Fatal(err)
	}
	clk := &clock{t: stopNow}
	opts := simcat.Options(f, cat)
	opts.Now = clk.Now
	if mod != nil {
		mod(&opts)
	}
	s := sim.New(f, opts)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return &simEnv{clock: clk, srv: srv, sim: s, cat: cat, fleet: f}
}

// options runs idle-stop in-process against the simulator; wrap may change
// the provider (to act between listing and stopping).
func (e *simEnv) options(t testing.TB, execute bool, audit string, wrap func(providers.Provider) providers.Provider) (*idlestopcmd.IdleStopOptions, *strings.Builder, *strings.Builder) {
	ios, _, _, _ := iostreams.Test()
	out, errOut := &strings.Builder{}, &strings.Builder{}
	ios.Out, ios.ErrOut = out, errOut
	cfg := &config.Config{Policy: recommend.DefaultPolicy(), IdleStop: idlestop.DefaultPolicy(), Providers: map[string]providers.Values{"aws": {providers.OptConcurrency: 4}}}
	return &idlestopcmd.IdleStopOptions{
		IO:      ios,
		Config:  func() (*config.Config, error) { return cfg, nil },
		Catalog: func() (pricing.Catalog, error) { return e.cat, nil },
		Providers: func(ctx context.Context, in cmdutil.FleetFlags, _ *config.Config) ([]providers.Provider, error) {
			ri, _ := providers.Find(fleet.AWS)
			p, err := ri.New(ctx, providers.Options{Endpoint: e.srv.URL, Regions: []string{"us-east-1"}, Now: e.clock.Now})
			if err != nil || wrap == nil {
				return []providers.Provider{p}, err
			}
			return []providers.Provider{wrap(p)}, nil
		},
		Now:      e.clock.Now,
		Input:    cmdutil.FleetFlags{Providers: []string{"aws"}},
		Execute:  execute,
		AuditLog: audit,
		Output:   "json",
	}, out, errOut
}

type runOutput struct {
	Machines []idlestop.Decision `json:"machines"`
	Summary  idlestop.Summary    `json:"summary"`
}

func decode(t testing.TB, out string) runOutput {
	t.Helper()
	var r runOutput
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	return r
}

func (e *simEnv) states() map[string]string {
	out := map[string]string{}
	for _, s := range e.sim.State() {
		out[s.ID] = s.State
	}
	return out
}

func reasons(r runOutput) map[string]string {
	out := map[string]string{}
	for _, d := range r.Machines {
		out[d.ResourceID] = string(d.Decision) + "/" + string(d.Reason)
	}
	return out
}

func TestIdleStopAgainstSimulator(t *testing.T) {
	t.Run("dry run decides every machine and changes nothing", func(t *testing.T) {
		e := startSim(t, mixedFleet(), nil)
		before := e.states()
		opts, out, _ := e.options(t, false, "", nil)
		if err := idleStopRunForTest(opts); err != nil {
			t.Fatal(err)
		}
		r := decode(t, out.String())
		if got := reasons(r); fmt.Sprint(got) != fmt.Sprint(wantReasons) {
			t.Errorf("decisions:\n got %v\nwant %v", got, wantReasons)
		}
		if fmt.Sprint(e.states()) != fmt.Sprint(before) {
			t.Errorf("a dry run changed states: %v → %v", before, e.states())
		}
		if r.Summary.Stop != 2 || r.Summary.Stopped != 0 {
			t.Errorf("summary %+v", r.Summary)
		}
		validateAgainst(t, "../../docs/schema/idle-stop.schema.json", out.String())
	})

	t.Run("execute stops exactly the idle, allowed machines and logs each decision", func(t *testing.T) {
		e := startSim(t, mixedFleet(), func(o *sim.Options) { o.ThrottleRate = 0.15; o.ErrorRate = 0.05; o.Seed = 7 })
		audit := filepath.Join(t.TempDir(), "audit.jsonl")
		opts, out, _ := e.options(t, true, audit, nil)
		if err := idleStopRunForTest(opts); err != nil {
			t.Fatal(err)
		}
		r := decode(t, out.String())
		var stopped []string
		for id, st := range e.states() {
			if st == "stopped" && id != "stopped" {
				stopped = append(stopped, id)
			}
		}
		sort.Strings(stopped)
		if strings.Join(stopped, ",") != "idle-1,idle-2" {
			t.Errorf("stopped %v, want idle-1 and idle-2 (states %v)", stopped, e.states())
		}
		if r.Summary.Stopped != 2 || r.Summary.Failed != 0 {
			t.Errorf("summary %+v", r.Summary)
		}
		lines := auditLines(t, audit)
		if len(lines) != len(wantReasons)+2+1 || lines[len(lines)-1]["type"] != "summary" {
			t.Errorf("audit log has %d lines, want %d decisions or outcomes, 2 intents and a summary", len(lines), len(wantReasons))
		}
		// Idempotent: a second run finds them stopped and stops nothing.
		opts, out, _ = e.options(t, true, audit, nil)
		if err := idleStopRunForTest(opts); err != nil {
			t.Fatal(err)
		}
		if r := decode(t, out.String()); r.Summary.Stopped != 0 || reasons(r)["idle-1"] != "skip/already-stopped" {
			t.Errorf("second run: %+v %v", r.Summary, reasons(r))
		}
	})

	t.Run("a machine that turns busy before the stop is left running", func(t *testing.T) {
		e := startSim(t, mixedFleet(), nil)
		opts, out, _ := e.options(t, true, "", func(p providers.Provider) providers.Provider {
			return &busyOnRecheck{Provider: p, sim: e.sim, clock: e.clock, id: "idle-2"}
		})
		if err := idleStopRunForTest(opts); err != nil {
			t.Fatal(err)
		}
		st := e.states()
		if st["idle-1"] != "stopped" || st["idle-2"] != "running" {
			t.Errorf("states %v: idle-2 turned busy and must keep running", st)
		}
		if got := reasons(decode(t, out.String()))["idle-2"]; got != "skip/busy" {
			t.Errorf("idle-2: %s", got)
		}
	})

	t.Run("more candidates than --max-stops stops nothing and exits 5", func(t *testing.T) {
		e := startSim(t, mixedFleet(), nil)
		opts, _, _ := e.options(t, true, "", nil)
		one := 1
		opts.MaxStops = &one
		err := idleStopRunForTest(opts)
		if cmdutil.ExitCodeFor(err) != cmdutil.ExitGate {
			t.Fatalf("got %v (exit %d), want exit 5", err, cmdutil.ExitCodeFor(err))
		}
		for id, s := range e.states() {
			if s == "stopped" && id != "stopped" {
				t.Errorf("%s was stopped despite the cap", id)
			}
		}
	})

	t.Run("two concurrent runs do not double-stop or corrupt the log", func(t *testing.T) {
		e := startSim(t, mixedFleet(), nil)
		audit := filepath.Join(t.TempDir(), "audit.jsonl")
		var wg sync.WaitGroup
		outs := make([]string, 2)
		errs := make([]error, 2)
		for i := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				opts, out, _ := e.options(t, true, audit, nil)
				errs[i] = idleStopRunForTest(opts)
				outs[i] = out.String()
			}()
		}
		wg.Wait()
		stops := 0
		for i := range 2 {
			if errs[i] != nil {
				t.Fatal(errs[i])
			}
			stops += decode(t, outs[i]).Summary.Stopped
		}
		if stops != 2 {
			t.Errorf("the two runs stopped %d machines together, want 2 (each once)", stops)
		}
		// Each run: one line per machine and a summary; the two stops: an
		// intent each.
		if n := len(auditLines(t, audit)); n != 2*(len(wantReasons)+1)+2 {
			t.Errorf("audit log has %d lines, want %d", n, 2*(len(wantReasons)+1)+2)
		}
	})
}

// idleStopRunForTest runs the command the way the CLI does.
func idleStopRunForTest(opts *idlestopcmd.IdleStopOptions) error {
	f := &cmdutil.Factory{IOStreams: opts.IO, Config: opts.Config, Catalog: opts.Catalog, Providers: opts.Providers, Now: opts.Now}
	var got *idlestopcmd.IdleStopOptions
	cmd := idlestopcmd.NewCmdIdleStop(f, func(o *idlestopcmd.IdleStopOptions) error { got = o; return nil })
	args := []string{"--provider", "aws", "-o", opts.Output}
	if opts.Execute {
		args = append(args, "--execute")
	}
	if opts.AuditLog != "" {
		args = append(args, "--audit-log", opts.AuditLog)
	}
	if opts.MaxStops != nil {
		args = append(args, "--max-stops", fmt.Sprint(*opts.MaxStops))
	}
	if opts.Run.LockDir != nil {
		args = append(args, "--lock-dir", *opts.Run.LockDir)
	}
	cmd.SetArgs(args)
	cmd.SetOut(opts.IO.Out)
	cmd.SetErr(opts.IO.ErrOut)
	if err := cmd.Execute(); err != nil {
		return err
	}
	got.Providers = opts.Providers // keep the test's wrapper
	return idlestopcmd.Run(got)
}

// busyOnRecheck makes a machine busy when the fleet is listed a second time
// (the re-check right before the stops).
type busyOnRecheck struct {
	providers.Provider
	sim   *sim.Server
	clock *clock
	id    string
	mu    sync.Mutex
	lists int
}

func (b *busyOnRecheck) ListGPUInstances(ctx context.Context, s providers.Scope) ([]fleet.Instance, error) {
	b.mu.Lock()
	b.lists++
	if b.lists == 2 {
		// Five minutes pass between the scan and the re-check, and the
		// machine gets busy in them.
		if err := b.sim.SetLoad(b.id, 90); err != nil {
			b.mu.Unlock()
			return nil, err
		}
		b.clock.Advance(5 * time.Minute)
	}
	b.mu.Unlock()
	return b.Provider.ListGPUInstances(ctx, s)
}

func (b *busyOnRecheck) ReadUtilization(ctx context.Context, s providers.Scope, in []fleet.Instance, w fleet.TimeRange) ([]string, error) {
	r, ok := b.Provider.(providers.UtilizationReader)
	if !ok {
		return nil, errors.New("no utilization")
	}
	return r.ReadUtilization(ctx, s, in, w)
}

func (b *busyOnRecheck) Stop(ctx context.Context, s providers.Scope, id string, dry bool) (providers.StopResult, error) {
	return b.Provider.(providers.Stopper).Stop(ctx, s, id, dry)
}

func auditLines(t testing.TB, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("audit line is not JSON: %v: %s", err, sc.Text())
		}
		out = append(out, m)
	}
	return out
}

// validateAgainst checks a command's JSON output against its committed schema.
func validateAgainst(t *testing.T, schemaPath, out string) {
	t.Helper()
	testutil.ValidateJSON(t, schemaPath, out)
}
