package root

import (
	"context"
	"strings"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/pkg/testutil"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/pricingtest"
)

func testFactory() (*cmdutil.Factory, *strings.Builder, *strings.Builder) {
	ios, _, out, errOut := iostreams.Test()
	f := &cmdutil.Factory{
		IOStreams: ios,
		Now:       testutil.Now,
		Catalog:   func() (pricing.Catalog, error) { return &pricingtest.Catalog{}, nil },
	}
	o, e := &strings.Builder{}, &strings.Builder{}
	ios.Out, ios.ErrOut = o, e
	_, _ = out, errOut
	return f, o, e
}

func TestRun(t *testing.T) {
	for _, tc := range []struct {
		name     string
		args     []string
		code     cmdutil.ExitCode
		stdout   string
		stderr   string
		noStderr bool
	}{
		{name: "exit codes topic", args: []string{"help", "exit-codes"}, code: 0, stdout: "5  a --fail-on gate tripped"},
		{name: "environment topic", args: []string{"help", "environment"}, code: 0, stdout: "GPUFINOPS_POLICY_IDLE_GPU_PERCENT"},
		{name: "version", args: []string{"version"}, code: 0, stdout: "gpufinops DEV"},
		{name: "unknown command", args: []string{"analyse"}, code: 2, stderr: `gpufinops: unknown command "analyse" for "gpufinops"`},
		{name: "unknown flag", args: []string{"prices", "--colour"}, code: 2, stderr: "Run 'gpufinops prices --help' for usage."},
		{name: "analyze needs input", args: []string{"analyze"}, code: 2, stderr: "give a fleet: --fleet FILE, --demo or --provider aws"},
		{name: "analyze bad output", args: []string{"analyze", "--demo", "-o", "yaml"}, code: 2, stderr: `"yaml" is not one of table, wide, json, csv, markdown`},
		{name: "both inputs", args: []string{"analyze", "--demo", "--fleet", "x.yaml"}, code: 2, stderr: "gpufinops: --demo and --fleet cannot be used together: give only one of --fleet, --demo or --provider\n"},
		{name: "typo at the top", args: []string{"anlyze"}, code: 2, stderr: `unknown command "anlyze" for "gpufinops"; did you mean "analyze"?`},
		{name: "typo one level down", args: []string{"tags", "audti"}, code: 2, stderr: `unknown command "audti" for "gpufinops tags"; did you mean "audit"?`},
		{name: "typo in sharing", args: []string{"sharing", "paln"}, code: 2, stderr: `unknown command "paln" for "gpufinops sharing"; did you mean "plan"?`},
		{name: "typo before a flag", args: []string{"analyse", "--demo"}, code: 2, stderr: `unknown command "analyse" for "gpufinops"; did you mean "analyze"?`},
		{name: "typo before a flag one level down", args: []string{"sharing", "paln", "--demo", "-o", "yaml"}, code: 2, stderr: `unknown command "paln" for "gpufinops sharing"; did you mean "plan"?`},
		{name: "flag before a typo", args: []string{"--config", "x.yaml", "inventroy", "--demo"}, code: 2, stderr: `unknown command "inventroy" for "gpufinops"; did you mean "inventory"?`},
		{name: "nothing close", args: []string{"tags", "zzzzzz"}, code: 2, stderr: `unknown command "zzzzzz" for "gpufinops tags"; its commands are audit`},
		{name: "group alone shows help", args: []string{"tags"}, code: 0, stdout: "Available Commands:"},
		{name: "root alone shows help", args: []string{}, code: 0, stdout: "Core commands:"},
		{name: "completion", args: []string{"completion", "bash"}, code: 0, stdout: "bash completion"},
		{name: "fleet as an argument", args: []string{"analyze", "fleet.json"}, code: 2, stderr: "gpufinops analyze takes the fleet as a flag, not an argument: gpufinops analyze --fleet fleet.json"},
		{name: "yaml fleet as an argument", args: []string{"inventory", "snap.YML", "-o", "json"}, code: 2, stderr: "gpufinops inventory --fleet snap.YML"},
		{name: "fleet path as an argument", args: []string{"commit-plan", "fleets/prod"}, code: 2, stderr: "gpufinops commit-plan --fleet fleets/prod"},
		{name: "stdin as an argument", args: []string{"tags", "audit", "-"}, code: 2, stderr: "gpufinops tags audit --fleet -"},
		{name: "quoted fleet argument", args: []string{"sharing", "plan", "my fleet.json"}, code: 2, stderr: "gpufinops sharing plan --fleet 'my fleet.json'"},
		{name: "other argument", args: []string{"analyze", "now"}, code: 2, stderr: `unknown command "now" for "gpufinops analyze"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, out, errOut := testFactory()
			code := Run(context.Background(), f, tc.args)
			if code != tc.code {
				t.Errorf("exit code %d, want %d (stderr %q)", code, tc.code, errOut.String())
			}
			if !strings.Contains(out.String(), tc.stdout) {
				t.Errorf("stdout %q does not contain %q", out.String(), tc.stdout)
			}
			if !strings.Contains(errOut.String(), tc.stderr) {
				t.Errorf("stderr %q does not contain %q", errOut.String(), tc.stderr)
			}
			if strings.Contains(errOut.String(), "goroutine") || strings.Contains(errOut.String(), "panic") {
				t.Errorf("stack trace on stderr: %s", errOut.String())
			}
		})
	}
}
