package idlestop

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/cmdutil/cmdtest"
	"github.com/gpufinops/gpufinops/pkg/config"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/idlestop"
	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/pkg/recommend"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
	"github.com/gpufinops/gpufinops/providers"
	"github.com/gpufinops/gpufinops/providers/fake"
)

var fakeNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// recentFleet has machines with a GPU sample every minute of the last hour:
// idle ones (1 %), a busy one (80 %), a one-time spot and one without
// metrics, in two regions.
func recentFleet() *fleet.Fleet {
	launched := fakeNow.AddDate(0, 0, -30)
	samples := func(v float64) *fleet.Utilization {
		u := &fleet.Utilization{}
		for m := 60; m > 0; m-- {
			u.Samples = append(u.Samples, fleet.Sample{Time: fakeNow.Add(-time.Duration(m) * time.Minute), GPU: fleet.PerGPU{v}})
		}
		return u
	}
	mk := func(id, region string, mod func(*fleet.Instance)) fleet.Instance {
		in := fleet.Instance{ID: id, Provider: fleet.AWS, Account: "111122223333", Region: region, InstanceType: "g4dn.xlarge",
			GPU: fleet.GPU{Model: "T4", Count: 1, MemoryGiB: 16}, Lifecycle: fleet.OnDemand, State: fleet.Running, LaunchTime: &launched,
			Tags: map[string]string{"AutoShutdown": "true"}, Utilization: samples(1)}
		if mod != nil {
			mod(&in)
		}
		return in
	}
	return &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind, Instances: []fleet.Instance{
		mk("idle-1", "us-east-1", nil),
		mk("idle-2", "us-west-2", nil),
		mk("busy", "us-east-1", func(in *fleet.Instance) { in.Utilization = samples(80) }),
		mk("spot", "us-east-1", func(in *fleet.Instance) { in.Lifecycle = fleet.Spot }),
		mk("no-metrics", "us-east-1", func(in *fleet.Instance) { in.Utilization = nil }),
	}}
}

type fakeRun struct {
	decisions map[string]string
	summary   idlestop.Summary
	err       error
}

// runFake runs idle-stop through the command against p.
func runFake(t *testing.T, p providers.Provider, args ...string) fakeRun {
	t.Helper()
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	ios, _, out, _ := iostreams.Test()
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	cfg := &config.Config{Policy: recommend.DefaultPolicy(), IdleStop: idlestop.DefaultPolicy()}
	f := &cmdutil.Factory{
		IOStreams: ios,
		Config:    func() (*config.Config, error) { return cfg, nil },
		Catalog:   func() (pricing.Catalog, error) { return cat, nil },
		Providers: cmdtest.Providers(p),
		Now:       func() time.Time { return fakeNow },
	}
	cmd := NewCmdIdleStop(f, nil)
	cmd.SetArgs(append([]string{"--provider", "aws", "-o", "json", "--grace-period", "0s", "--audit-log", filepath.Join(t.TempDir(), "audit.jsonl")}, args...))
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	err = cmd.Execute()
	var r struct {
		Machines []idlestop.Decision `json:"machines"`
		Summary  idlestop.Summary    `json:"summary"`
	}
	if jerr := json.Unmarshal(out.Bytes(), &r); jerr != nil {
		t.Fatalf("output is not JSON (%v; run error %v):\n%s", jerr, err, out)
	}
	got := fakeRun{decisions: map[string]string{}, summary: r.Summary, err: err}
	for _, d := range r.Machines {
		got.decisions[d.ResourceID] = string(d.Decision) + "/" + string(d.Reason)
	}
	return got
}

func newFake(faults map[string]fake.Fault) *fake.Provider {
	return fake.New(recentFleet(), fake.Options{
		Regions: []string{"us-east-1", "us-west-2"}, Faults: faults,
		NotStoppable: func(in fleet.Instance) bool { return in.Lifecycle == fleet.Spot },
	})
}

func TestIdleStopOnTheFake(t *testing.T) {
	t.Run("a dry run decides and stops nothing", func(t *testing.T) {
		p := newFake(nil)
		r := runFake(t, p)
		if r.err != nil {
			t.Fatal(r.err)
		}
		for id, want := range map[string]string{"idle-1": "stop/idle", "idle-2": "stop/idle", "busy": "skip/busy", "no-metrics": "skip/no-metrics"} {
			if r.decisions[id] != want {
				t.Errorf("%s: %q, want %q (all: %v)", id, r.decisions[id], want, r.decisions)
			}
		}
		if n := p.Calls("stopped", ""); n != 0 {
			t.Errorf("a dry run stopped %d machines", n)
		}
	})

	t.Run("--execute stops the idle machines only", func(t *testing.T) {
		p := newFake(nil)
		r := runFake(t, p, "--execute")
		if r.err != nil {
			t.Fatal(r.err)
		}
		for _, id := range []string{"idle-1", "idle-2"} {
			if p.State(id) != fleet.Stopped {
				t.Errorf("%s is %s after --execute", id, p.State(id))
			}
		}
		for _, id := range []string{"busy", "spot", "no-metrics"} {
			if p.State(id) != fleet.Running {
				t.Errorf("%s is %s: only idle machines are stopped", id, p.State(id))
			}
		}
		if n := p.Calls("stopped", ""); n != 2 {
			t.Errorf("%d stops, want 2", n)
		}
	})

	t.Run("a metrics failure stops nothing in its region and exits 3", func(t *testing.T) {
		p := newFake(map[string]fake.Fault{"us-west-2": {Metrics: errors.New("503 service unavailable")}})
		r := runFake(t, p, "--execute")
		if code := cmdutil.ExitCodeFor(r.err); code != cmdutil.ExitPartial {
			t.Fatalf("exit %d (%v), want 3", code, r.err)
		}
		if p.State("idle-2") != fleet.Running || r.decisions["idle-2"] != "skip/metrics-failed" {
			t.Errorf("idle-2 of the failed region: %s, %q", p.State("idle-2"), r.decisions["idle-2"])
		}
		if p.State("idle-1") != fleet.Stopped {
			t.Errorf("idle-1 of the healthy region is %s", p.State("idle-1"))
		}
	})

	t.Run("a denied stop permission exits 4 and stops nothing", func(t *testing.T) {
		p := newFake(map[string]fake.Fault{"*": {Stop: providers.ErrPermission}})
		r := runFake(t, p, "--execute")
		if code := cmdutil.ExitCodeFor(r.err); code != cmdutil.ExitCredentials {
			t.Fatalf("exit %d (%v), want 4: the dry-run permission check fails before any stop", code, r.err)
		}
		if p.Calls("stopped", "") != 0 {
			t.Errorf("%d machines stopped without the permission", p.Calls("stopped", ""))
		}
	})
}
