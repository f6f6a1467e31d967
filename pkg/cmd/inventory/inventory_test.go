package inventory

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/gpufinops/gpufinops/pkg/cmd/factory"
	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/pkg/testutil"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
	"github.com/gpufinops/gpufinops/providers/file"
)

// fakeCatalog knows the hardware of the demo fleet's instance types.
type fakeCatalog struct{ pricing.Catalog }

var fakeTypes = map[string]pricing.InstanceType{
	"aws/p4d.24xlarge":               {GPUModel: "A100", GPUCount: 8, GPUMemoryGiB: 40, VCPUs: 96, MemoryGiB: 1152},
	"aws/g5.xlarge":                  {GPUModel: "A10G", GPUCount: 1, GPUMemoryGiB: 24, VCPUs: 4, MemoryGiB: 16},
	"aws/g5.2xlarge":                 {GPUModel: "A10G", GPUCount: 1, GPUMemoryGiB: 24, VCPUs: 8, MemoryGiB: 32},
	"aws/g5.4xlarge":                 {GPUModel: "A10G", GPUCount: 1, GPUMemoryGiB: 24, VCPUs: 16, MemoryGiB: 64},
	"aws/g4dn.xlarge":                {GPUModel: "T4", GPUCount: 1, GPUMemoryGiB: 16, VCPUs: 4, MemoryGiB: 16},
	"azure/Standard_ND96isr_H100_v5": {GPUModel: "H100", GPUCount: 8, GPUMemoryGiB: 80, VCPUs: 96, MemoryGiB: 1900},
	"gcp/a2-highgpu-1g":              {GPUModel: "A100", GPUCount: 1, GPUMemoryGiB: 40, VCPUs: 12, MemoryGiB: 85},
	"gcp/g2-standard-8":              {GPUModel: "L4", GPUCount: 1, GPUMemoryGiB: 24, VCPUs: 8, MemoryGiB: 32},
	// The demo's managed AI items, by the type the service names.
	"aws/ml.g5.12xlarge":             {GPUModel: "A10G", GPUCount: 4, GPUMemoryGiB: 24, VCPUs: 48, MemoryGiB: 192},
	"aws/ml.g5.xlarge":               {GPUModel: "A10G", GPUCount: 1, GPUMemoryGiB: 24, VCPUs: 4, MemoryGiB: 16},
	"azure/Standard_NC24ads_A100_v4": {GPUModel: "A100-80GB", GPUCount: 1, GPUMemoryGiB: 80, VCPUs: 24, MemoryGiB: 220},
	"gcp/a3-highgpu-1g":              {GPUModel: "H100", GPUCount: 1, GPUMemoryGiB: 80, VCPUs: 26, MemoryGiB: 234},
}

func (fakeCatalog) InstanceType(p fleet.Provider, name string) (pricing.InstanceType, bool) {
	t, ok := fakeTypes[string(p)+"/"+name]
	t.Provider, t.Name = p, name
	return t, ok
}

func (fakeCatalog) GPU(name string) (pricing.GPUSpec, bool) { return pricing.GPUSpec{Name: name}, true }

// Offer prices nothing.
func (fakeCatalog) Offer(fleet.Provider, string, string) (pricing.Offer, bool) {
	return pricing.Offer{}, false
}

// Offers has nothing to suggest for a mistyped instance type.
func (fakeCatalog) Offers(pricing.Query) []pricing.Offer { return nil }

func testFactory(t *testing.T, cat pricing.Catalog) (*cmdutil.Factory, *bytes.Buffer, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	ios, in, out, errOut := iostreams.Test()
	f := &cmdutil.Factory{
		IOStreams: ios,
		Catalog:   func() (pricing.Catalog, error) { return cat, nil },
		Fleet:     factory.FileFleet(ios),
		Now:       testutil.Now,
	}
	return f, in, out, errOut
}

func TestNewCmdInventory(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		want      InventoryOptions
		wantErr   string
		flagError bool
	}{
		{name: "demo", args: []string{"--demo"}, want: InventoryOptions{Input: cmdutil.FleetFlags{Demo: true}, Output: "table"}},
		{name: "file wide", args: []string{"--fleet", "fleet.yaml", "-o", "wide"}, want: InventoryOptions{Input: cmdutil.FleetFlags{Path: "fleet.yaml"}, Output: "wide"}},
		{name: "stdin json", args: []string{"-f", "-", "--output", "json"}, want: InventoryOptions{Input: cmdutil.FleetFlags{Path: "-"}, Output: "json"}},
		{name: "yaml", args: []string{"--demo", "-o", "yaml"}, want: InventoryOptions{Input: cmdutil.FleetFlags{Demo: true}, Output: "yaml"}},
		{name: "no input", args: nil, wantErr: "give a fleet: --fleet FILE, --demo or --provider aws", flagError: true},
		{name: "both inputs", args: []string{"--demo", "--fleet", "x.yaml"}, wantErr: "if any flags in the group [fleet demo provider] are set none of the others can be"},
		{name: "bad output", args: []string{"--demo", "-o", "csv"}, wantErr: `"csv" is not one of table, wide, json, yaml`},
		{name: "argument", args: []string{"fleet.yaml"}, wantErr: "takes the fleet as a flag, not an argument: inventory --fleet fleet.yaml"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, _, _, _ := testFactory(t, fakeCatalog{})
			var got *InventoryOptions
			cmd := NewCmdInventory(f, func(o *InventoryOptions) error {
				got = o
				return nil
			})
			cmd.SetArgs(tc.args)
			cmd.SetOut(io.Discard)
			cmd.SetErr(io.Discard)
			err := cmd.Execute()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				var fe *cmdutil.FlagError
				if tc.flagError && !errors.As(err, &fe) {
					t.Errorf("err is %T, want a *cmdutil.FlagError", err)
				}
				if got != nil {
					t.Error("run function called despite the error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, *got, cmpopts.IgnoreFields(InventoryOptions{}, "IO", "Fleet", "Catalog", "Config", "Scan", "Ctx"), cmpopts.IgnoreFields(cmdutil.FleetFlags{}, "LookbackDays", "Adapter")); d != "" {
				t.Errorf("options (-want +got):\n%s", d)
			}
			if got.IO == nil || got.Fleet == nil || got.Catalog == nil {
				t.Error("options lack the factory's dependencies")
			}
		})
	}
}

func TestInventoryRun(t *testing.T) {
	tests := []struct {
		name   string
		input  cmdutil.FleetFlags
		output string
		tty    bool
		golden string
	}{
		{"table", cmdutil.FleetFlags{Demo: true}, "table", false, "demo-table.golden"},
		{"table on a terminal", cmdutil.FleetFlags{Demo: true}, "table", true, "demo-table-tty.golden"},
		{"wide", cmdutil.FleetFlags{Demo: true}, "wide", false, "demo-wide.golden"},
		{"wide on a terminal", cmdutil.FleetFlags{Demo: true}, "wide", true, "demo-wide-tty.golden"},
		{"json", cmdutil.FleetFlags{Path: "../../../testdata/fleets/minimal.yaml"}, "json", false, "minimal-json.golden"},
		{"yaml", cmdutil.FleetFlags{Path: "../../../testdata/fleets/minimal.yaml"}, "yaml", false, "minimal-yaml.golden"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, _, out, errOut := testFactory(t, fakeCatalog{})
			f.IOStreams.SetStdoutTTY(tc.tty)
			opts := &InventoryOptions{IO: f.IOStreams, Fleet: f.Fleet, Catalog: f.Catalog, Input: tc.input, Output: tc.output}
			if err := inventoryRun(opts); err != nil {
				t.Fatal(err)
			}
			got := out.String()
			if errOut.Len() > 0 {
				got += "--- stderr ---\n" + errOut.String()
			}
			testutil.AssertGolden(t, "testdata/"+tc.golden, []byte(got))
		})
	}
}

// TestInventoryRoundTrip pipes the JSON and YAML output back in, as
// `inventory --demo -o json | analyze --fleet -` does.
func TestInventoryRoundTrip(t *testing.T) {
	want, err := file.Demo()
	if err != nil {
		t.Fatal(err)
	}
	if err := pricing.Complete(want, fakeCatalog{}); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"json", "yaml"} {
		t.Run(format, func(t *testing.T) {
			f, _, out, _ := testFactory(t, fakeCatalog{})
			opts := &InventoryOptions{IO: f.IOStreams, Fleet: f.Fleet, Catalog: f.Catalog, Input: cmdutil.FleetFlags{Demo: true}, Output: format}
			if err := inventoryRun(opts); err != nil {
				t.Fatal(err)
			}
			got, err := file.Load("-", out)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("read back differs (-want +got):\n%s", diff)
			}
		})
	}
}

func TestInventoryFromStdin(t *testing.T) {
	f, in, out, _ := testFactory(t, fakeCatalog{})
	in.WriteString(`{"apiVersion": "gpufinops/v1", "kind": "Fleet", "instances": [{"id": "a", "provider": "gcp", "region": "us-central1", "instanceType": "g2-standard-8"}]}`)
	opts := &InventoryOptions{IO: f.IOStreams, Fleet: f.Fleet, Catalog: f.Catalog, Input: cmdutil.FleetFlags{Path: "-"}, Output: "table"}
	if err := inventoryRun(opts); err != nil {
		t.Fatal(err)
	}
	want := "id\tprovider\tregion\ttype\tgpu\tlifecycle\tstate\thours per month\tgpu util\n" +
		"a\tgcp\tus-central1\tg2-standard-8\tL4 × 1\ton-demand\trunning\t730\t-\n"
	if out.String() != want {
		t.Errorf("got %q\nwant %q", out.String(), want)
	}
}

func TestInventoryErrors(t *testing.T) {
	dir := t.TempDir()
	unknownType := filepath.Join(dir, "unknown.yaml")
	if err := os.WriteFile(unknownType, []byte(`apiVersion: gpufinops/v1
kind: Fleet
instances:
  - {id: a, provider: aws, region: us-east-1, instanceType: g9.mega}
  - {id: b, provider: aws, region: us-east-1, instanceType: g5.xlarge}
  - {id: c, provider: gcp, region: us-central1, instanceType: n1-tiny}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty.yaml")
	if err := os.WriteFile(empty, []byte("apiVersion: gpufinops/v1\nkind: Fleet\ninstances: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path string
		want       string
		wantStderr string
	}{
		{name: "missing file", path: "nope.yaml", want: "open nope.yaml: no such file or directory"},
		{name: "invalid file", path: "../../../testdata/fleets/invalid/utilization-140.yaml",
			want: `../../../testdata/fleets/invalid/utilization-140.yaml: instances[2] (id "nb-3"): utilization.gpu.p95: 140 is outside 0–100`},
		{name: "empty fleet", path: empty, wantStderr: empty + " has no instances\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, _, out, errOut := testFactory(t, fakeCatalog{})
			opts := &InventoryOptions{IO: f.IOStreams, Fleet: f.Fleet, Catalog: f.Catalog, Input: cmdutil.FleetFlags{Path: tc.path}, Output: "table"}
			err := inventoryRun(opts)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if out.Len() != 0 || errOut.String() != tc.wantStderr {
					t.Errorf("stdout %q stderr %q, want stderr %q", out, errOut, tc.wantStderr)
				}
				return
			}
			if err == nil || err.Error() != tc.want {
				t.Fatalf("got  %v\nwant %s", err, tc.want)
			}
			if code := cmdutil.ExitCodeFor(err); code != cmdutil.ExitUsage {
				t.Errorf("exit code %d, want %d", code, cmdutil.ExitUsage)
			}
		})
	}
	// Types the catalog lacks are listed, with a warning each, and the run
	// is partial.
	f, _, out, errOut := testFactory(t, fakeCatalog{})
	opts := &InventoryOptions{IO: f.IOStreams, Fleet: f.Fleet, Catalog: f.Catalog, Input: cmdutil.FleetFlags{Path: unknownType}, Output: "table"}
	err := inventoryRun(opts)
	if code := cmdutil.ExitCodeFor(err); code != cmdutil.ExitPartial {
		t.Errorf("unknown types: exit code %d (%v), want %d", code, err, cmdutil.ExitPartial)
	}
	for _, id := range []string{"\na\t", "\nb\t", "\nc\t"} {
		if !strings.Contains(out.String(), id) {
			t.Errorf("unknown types: instance %q missing from\n%s", strings.TrimSpace(id), out)
		}
	}
	for _, w := range []string{
		`warning: aws/us-east-1: instance type "g9.mega" is not in the catalog; missing: GPU model, GPU count, price`,
		`warning: gcp/us-central1: instance type "n1-tiny" is not in the catalog; missing: GPU model, GPU count, price`,
	} {
		if !strings.Contains(errOut.String(), w) {
			t.Errorf("unknown types: stderr %q lacks %q", errOut, w)
		}
	}
	f, _, _, _ = testFactory(t, nil)
	f.Catalog = func() (pricing.Catalog, error) { return nil, errors.New("catalog: broken") }
	opts = &InventoryOptions{IO: f.IOStreams, Fleet: f.Fleet, Catalog: f.Catalog, Input: cmdutil.FleetFlags{Demo: true}, Output: "table"}
	if err := inventoryRun(opts); err == nil || err.Error() != "catalog: broken" {
		t.Errorf("catalog error: %v", err)
	}
}

// TestDemoWithEmbeddedCatalog checks that the real catalog knows every
// instance type of the demo fleet and agrees with the GPUs the demo states.
func TestDemoWithEmbeddedCatalog(t *testing.T) {
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	f, _, out, _ := testFactory(t, cat)
	opts := &InventoryOptions{IO: f.IOStreams, Fleet: f.Fleet, Catalog: f.Catalog, Input: cmdutil.FleetFlags{Demo: true}, Output: "wide"}
	if err := inventoryRun(opts); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"train-p4d-1\taws\t111122223333\tus-east-1\tus-east-1a\tp4d.24xlarge\tA100 × 8\t40\t96\t1152\t",
		"nb-g4dn-8\taws\t111122223333\tus-east-1\tus-east-1c\tg4dn.xlarge\tT4 × 1\t16\t4\t16\t"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
