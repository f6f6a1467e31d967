package idlestop

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
	"github.com/gpufinops/gpufinops/providers/fake"
)

// Through the command: an idle SageMaker notebook is stopped with the VMs;
// an idle endpoint, a Studio app, a training job beside it are listed with
// their kind's reason and never reach the cloud's stop.
func TestIdleStopManagedItems(t *testing.T) {
	f := recentFleet()
	idle := f.Instances[0] // idle-1
	add := func(id, typ string, kind fleet.ManagedKind) {
		in := idle
		in.ID, in.Name, in.InstanceType = id, id, typ
		in.Tags = map[string]string{"team": "ml"}
		in.Managed = &fleet.Managed{Service: fleet.SageMaker, Kind: kind, Replicas: &fleet.Replicas{Current: 1}}
		f.Instances = append(f.Instances, in)
	}
	arn := "arn:aws:sagemaker:us-east-1:111122223333:"
	add(arn+"notebook-instance/nb", "ml.g5.xlarge", fleet.KindNotebook)
	add(arn+"endpoint/chat/variant/AllTraffic", "ml.g5.xlarge", fleet.KindEndpoint)
	add(arn+"app/d-1/bob/JupyterLab/default", "ml.g5.xlarge", fleet.KindStudioApp)
	add(arn+"training-job/ft", "ml.g5.xlarge", fleet.KindTrainingJob)
	p := fake.New(f, fake.Options{Regions: []string{"us-east-1", "us-west-2"}})
	r := runFake(t, p, "--execute")
	// Until the catalog prices ml.* types, they are an unknown-type warning
	// (exit 3), never a reason to stop or keep.
	var pe *cmdutil.PartialError
	if r.err != nil && !errors.As(r.err, &pe) {
		t.Fatal(r.err)
	}
	if pe != nil {
		for _, f := range pe.Failures {
			t.Logf("warning: %v", f)
		}
	}
	want := map[string]string{
		arn + "notebook-instance/nb":             "stop/idle",
		arn + "endpoint/chat/variant/AllTraffic": "skip/managed-kind",
		arn + "app/d-1/bob/JupyterLab/default":   "skip/managed-kind",
		arn + "training-job/ft":                  "skip/managed-kind",
		"idle-1":                                 "stop/idle",
	}
	for id, w := range want {
		if r.decisions[id] != w {
			t.Errorf("%s: %q, want %q", id, r.decisions[id], w)
		}
		if stopped := p.State(id) == fleet.Stopped; stopped != (w == "stop/idle") {
			t.Errorf("%s is %s after --execute", id, p.State(id))
		}
	}
}

// writeSMI writes an nvidia-smi CSV of host with one reading a minute over
// the hour before end, every GPU at util %.
func writeSMI(t *testing.T, dir, host string, end time.Time, util int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("timestamp, index, utilization.gpu [%], memory.used [MiB], memory.total [MiB]\n")
	for m := 60; m >= 1; m-- {
		fmt.Fprintf(&b, "%s, 0, %d %%, 300 MiB, 24564 MiB\n", end.Add(-time.Duration(m)*time.Minute).Format("2006/01/02 15:04:05.000"), util)
	}
	p := filepath.Join(dir, host+".csv")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A SageMaker notebook publishes no GPU metric: without --metrics-file it
// is kept (no-metrics); with an idle CSV it is stopped, with a busy one
// kept; a malformed CSV is bad input (exit 2) and stops nothing.
func TestIdleStopMetricsFile(t *testing.T) {
	nbFleet := func() *fleet.Fleet {
		f := recentFleet()
		in := f.Instances[0]
		in.ID, in.Name, in.InstanceType = "arn:aws:sagemaker:us-east-1:111122223333:notebook-instance/nb-x", "nb-x", "ml.g5.xlarge"
		in.Utilization = nil
		in.Managed = &fleet.Managed{Service: fleet.SageMaker, Kind: fleet.KindNotebook, Replicas: &fleet.Replicas{Current: 1}}
		f.Instances = []fleet.Instance{in}
		return f
	}
	id := nbFleet().Instances[0].ID
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no file", nil, "skip/no-metrics"},
		{"idle file by name", []string{"--metrics-file", writeSMI(t, dir, "nb-x", fakeNow, 1)}, "stop/idle"},
		{"busy file", []string{"--metrics-file", writeSMI(t, t.TempDir(), "nb-x", fakeNow, 70)}, "skip/busy"},
		{"file of another machine", []string{"--metrics-file", writeSMI(t, dir, "someone-else", fakeNow, 1)}, "skip/no-metrics"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := fake.New(nbFleet(), fake.Options{Regions: []string{"us-east-1"}})
			r := runFake(t, p, append([]string{"--execute"}, tc.args...)...)
			if got := r.decisions[id]; got != tc.want {
				t.Fatalf("%q, want %q (err %v)", got, tc.want, r.err)
			}
			if stopped := p.State(id) == fleet.Stopped; stopped != (tc.want == "stop/idle") {
				t.Fatalf("state %s", p.State(id))
			}
		})
	}
	bad := filepath.Join(dir, "nb-x.csv")
	os.WriteFile(bad, []byte("timestamp, utilization.gpu [%]\n2026/11/30 11:59:00.000, abc\n"), 0o644)
	p := fake.New(nbFleet(), fake.Options{Regions: []string{"us-east-1"}})
	ios, _, _, _ := iostreams.Test()
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	cat, _ := catalog.Embedded()
	cfg := &config.Config{Policy: recommend.DefaultPolicy(), IdleStop: idlestop.DefaultPolicy()}
	f := &cmdutil.Factory{IOStreams: ios, Config: func() (*config.Config, error) { return cfg, nil },
		Catalog: func() (pricing.Catalog, error) { return cat, nil }, Providers: cmdtest.Providers(p), Now: func() time.Time { return fakeNow }}
	cmd := NewCmdIdleStop(f, nil)
	cmd.SetArgs([]string{"--provider", "aws", "--execute", "--metrics-file", bad})
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	err := cmd.Execute()
	if code := cmdutil.ExitCodeFor(err); code != cmdutil.ExitUsage {
		t.Fatalf("exit %d (%v), want 2", code, err)
	}
	if p.State(id) != fleet.Running {
		t.Fatal("a bad CSV stopped the notebook")
	}
}

// A managed item is priced under its price type when it has one, else its
// instance type.
func TestCandidatePriceName(t *testing.T) {
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	in := fleet.Instance{Provider: fleet.GCP, Region: "us-central1", InstanceType: "g2-standard-8"}
	if got := priceName(cat, &in); got != "g2-standard-8" {
		t.Errorf("a VM: %q", got)
	}
	in.Managed = &fleet.Managed{Service: fleet.VertexAI, Kind: fleet.KindNotebook}
	if got := priceName(cat, &in); got != "g2-standard-8" {
		t.Errorf("a Workbench instance: %q", got)
	}
	in.Managed.PriceType = "vertex-ai/prediction/g2-standard-8"
	if got := priceName(cat, &in); got != in.Managed.PriceType {
		t.Errorf("a priced endpoint: %q", got)
	}
}
