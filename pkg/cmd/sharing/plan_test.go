package sharing

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/gpufinops/gpufinops/pkg/cmd/factory"
	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/cmdutil/cmdtest"
	"github.com/gpufinops/gpufinops/pkg/config"
	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/pkg/recommend"
	"github.com/gpufinops/gpufinops/pkg/sharing"
	"github.com/gpufinops/gpufinops/pkg/testutil"
	"github.com/gpufinops/gpufinops/pricing/catalog"
)

const testFleet = "testdata/fleet.yaml"

func TestNewCmdPlan(t *testing.T) {
	for _, tc := range []struct {
		args    string
		want    PlanOptions
		wantErr string
	}{
		{args: "--demo", want: PlanOptions{Input: cmdutil.FleetFlags{Demo: true}, Format: "table"}},
		{args: "--fleet f.yaml -o json", want: PlanOptions{Input: cmdutil.FleetFlags{Path: "f.yaml"}, Format: "json"}},
		{args: "-f - -o yaml", want: PlanOptions{Input: cmdutil.FleetFlags{Path: "-"}, Format: "yaml"}},
		{args: "", wantErr: "give a fleet: --fleet FILE, --demo or --provider aws"},
		{args: "--demo -o csv", wantErr: `"csv" is not one of table, json, yaml`},
		{args: "--demo --fleet f.yaml", wantErr: "if any flags in the group [fleet demo provider] are set none of the others can be"},
		{args: "--demo extra", wantErr: `unknown command "extra"`},
	} {
		t.Run(tc.args, func(t *testing.T) {
			got, err := cmdtest.Parse(t, NewCmdPlan, strings.Fields(tc.args))
			if cmdtest.CheckErr(t, err, tc.wantErr) {
				return
			}
			if (got.Input.Path != tc.want.Input.Path || got.Input.Demo != tc.want.Input.Demo) || got.Format != tc.want.Format {
				t.Errorf("got input %+v format %q", got.Input, got.Format)
			}
		})
	}
}

func TestNewCmdSharing(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	cmd := NewCmdSharing(&cmdutil.Factory{IOStreams: ios})
	if c, _, err := cmd.Find([]string{"plan"}); err != nil || c.Name() != "plan" {
		t.Fatalf("no plan verb: %v", err)
	}
	cmd.SetArgs([]string{"bogus"})
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), `unknown command "bogus"`) {
		t.Errorf("error %v", err)
	}
}

// options runs against the real embedded catalog, the default policy and a
// fleet file (or the demo).
func options(t *testing.T, path, format string, tty bool) (*PlanOptions, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	ios, _, out, errOut := iostreams.Test()
	ios.SetStdoutTTY(tty)
	return &PlanOptions{
		IO:      ios,
		Config:  func() (*config.Config, error) { return &config.Config{Policy: recommend.DefaultPolicy()}, nil },
		Catalog: catalog.Embedded,
		Fleet:   factory.FileFleet(ios),
		Input:   cmdutil.FleetFlags{Path: path, Demo: path == ""},
		Format:  format,
	}, out, errOut
}

func TestPlanRunGolden(t *testing.T) {
	for _, tc := range []struct {
		name, format, ext string
		tty               bool
	}{
		{"table", "table", ".txt", false},
		{"table-tty", "table", ".txt", true},
		{"json", "json", ".json", false},
		{"yaml", "yaml", ".yaml", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts, out, errOut := options(t, testFleet, tc.format, tc.tty)
			if err := planRun(opts); err != nil {
				t.Fatal(err)
			}
			testutil.AssertGolden(t, "testdata/plan-"+tc.name+tc.ext, out.Bytes())
			if tc.format != "json" {
				testutil.AssertGolden(t, "testdata/plan-"+tc.name+".stderr.txt", errOut.Bytes())
			} else if errOut.Len() != 0 {
				t.Errorf("stderr with -o json: %q", errOut)
			}

			// Same input, same bytes.
			again, out2, _ := options(t, testFleet, tc.format, tc.tty)
			if err := planRun(again); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out.Bytes(), out2.Bytes()) {
				t.Error("output differs between two runs")
			}
		})
	}
}

// TestPlanFigures checks the test fleet's plan against hand computation from
// the fleet's utilization and the catalog's prices.
func TestPlanFigures(t *testing.T) {
	opts, out, _ := options(t, testFleet, "json", false)
	if err := planRun(opts); err != nil {
		t.Fatal(err)
	}
	var sp sharing.Plan
	if err := json.Unmarshal(out.Bytes(), &sp); err != nil {
		t.Fatal(err)
	}
	type host struct {
		mode, host string
		tenants    []string
		layout     map[string]int
		replicas   int
	}
	var got []host
	for _, g := range sp.Groups {
		for _, h := range g.Hosts {
			got = append(got, host{string(g.Mode), h.InstanceID, h.Tenants, h.MIGDevices, g.Replicas})
		}
	}
	want := []host{
		// T4: p95 35 + 25 + 20 = 80 % (FFD; infer-t4-light's 20 % ties nb-3's
		// and its larger memory peak, 3.2 GiB, goes first), then 20 + 18 + 17 + 16.
		{"time-slicing", "nb-1", []string{"nb-1", "infer-t4-light", "nb-2"}, nil, 4},
		{"time-slicing", "nb-3", []string{"nb-3", "nb-4", "nb-5", "nb-office"}, nil, 4},
		// A100 40 GB: peaks 45 % and 44 % of 40 GiB (18, 17.6) + 10 % → 3g.20gb.
		{"mig", "infer-a100-1", []string{"infer-a100-1", "infer-a100-2"}, map[string]int{"3g.20gb": 2}, 0},
		{"time-slicing", "dev-a100-1", []string{"dev-a100-1", "dev-a100-2"}, nil, 2},
		// A100 80 GB: peaks 44 % and 43 % of 80 GiB (35.2, 34.4) + 10 % → 3g.40gb.
		{"mig", "infer-a100x-1", []string{"infer-a100x-1", "infer-a100x-2"}, map[string]int{"3g.40gb": 2}, 0},
	}
	if d := cmp.Diff(want, got, cmp.AllowUnexported(host{})); d != "" {
		t.Errorf("hosts (-want +got):\n%s", d)
	}
	// Freed: 4 × g4dn.xlarge 0.526 $/h × 730 h = 4 × 383.98, nb-office on its
	// 50 h/week schedule 0.526 × 50 × 730/168 = 114.28, a2-highgpu-1g
	// 3.673385 × 730 = 2681.57 (twice) and a2-ultragpu-1g 5.0687978904 × 730
	// = 3700.22 (the Billing Catalog's whole-VM prices, docs/catalog.md).
	wantFreed := decimal.RequireFromString("383.98").Mul(decimal.NewFromInt(4)).
		Add(decimal.RequireFromString("114.28")).
		Add(decimal.RequireFromString("2681.57").Mul(decimal.NewFromInt(2))).
		Add(decimal.RequireFromString("3700.22"))
	if !sp.FreedMonthly.Equal(wantFreed) {
		t.Errorf("freed %s, want %s", sp.FreedMonthly, wantFreed)
	}
	for _, id := range []string{"nb-big", "infer-t4-busy", "infer-a100-small"} {
		if !strings.Contains(strings.Join(sp.Notes, "\n"), id+": not shared") {
			t.Errorf("no note for %s in %q", id, sp.Notes)
		}
	}
}

func TestPlanRunYAMLParses(t *testing.T) {
	opts, out, _ := options(t, testFleet, "yaml", false)
	if err := planRun(opts); err != nil {
		t.Fatal(err)
	}
	for _, doc := range strings.Split(out.String(), "\n---\n") {
		var cm corev1.ConfigMap
		if err := yaml.UnmarshalStrict([]byte(doc), &cm); err != nil {
			t.Fatal(err)
		}
		if cm.Kind != "ConfigMap" || cm.Namespace != "gpu-operator" || len(cm.Data) == 0 {
			t.Errorf("%+v", cm.TypeMeta)
		}
	}
}

func TestPlanRunDemo(t *testing.T) {
	// The demo's seven light notebooks (GPU p95 18 %, memory peaks ≤ 3.2 GiB of
	// a T4's 16) share time-sliced T4s, 4 per GPU at most (80 % / 18 %); a
	// tenant joins only a host whose schedule covers its own, so they need
	// three GPUs and free four instances. The busier endpoints say why not.
	opts, out, errOut := options(t, "", "table", false)
	if err := planRun(opts); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "nb-g4dn-3 nb-g4dn-2 nb-g4dn-4 nb-g4dn-5\t72.0 %") {
		t.Errorf("stdout %q", out)
	}
	if !strings.HasPrefix(errOut.String(), "Frees 4 instances: 443.40 USD a month.\n") ||
		!strings.Contains(errOut.String(), "note: infer-g5-1: not shared: inference GPU p95 46.0 % is not below 30.0 %") {
		t.Errorf("stderr %q", errOut)
	}
	opts, out, _ = options(t, "", "yaml", false)
	if err := planRun(opts); err != nil || !strings.Contains(out.String(), "replicas: 4") {
		t.Errorf("yaml: %q, %v", out, err)
	}
}

func TestPlanRunBadInput(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "bad.yaml")
	body := "apiVersion: gpufinops/v1\nkind: Fleet\ninstances:\n  - {id: x, provider: aws, region: us-east-1, instanceType: nope.large, lifecycle: on-demand, state: running}\n"
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	opts, out, errOut := options(t, path, "table", false)
	// A type the catalog lacks is a warning and a partial run, not bad input;
	// the warning says which type, the closing error only counts.
	if err := planRun(opts); cmdutil.ExitCodeFor(err) != cmdutil.ExitPartial || !strings.Contains(out.String()+errOut.String(), `instance type "nope.large" is not in the catalog`) {
		t.Errorf("unknown type: error %v; out %q; stderr %q", err, out, errOut)
	}
	body = "apiVersion: gpufinops/v1\nkind: Fleet\ninstances:\n  - {id: x, provider: aws, region: us-east-1, instanceType: p4d.24xlarge, gpu: {model: T4}, lifecycle: on-demand, state: running}\n"
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	opts, _, _ = options(t, path, "table", false)
	err := planRun(opts)
	var inErr *cmdutil.InputError
	if !errors.As(err, &inErr) || !strings.Contains(err.Error(), path+": instances[0]") || strings.Contains(err.Error(), "\n") {
		t.Errorf("error %v", err)
	}
}
