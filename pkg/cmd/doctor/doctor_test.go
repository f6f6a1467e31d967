package doctor

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/gpufinops/gpufinops/pkg/testutil"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/config"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/providers"
	"github.com/gpufinops/gpufinops/providers/fake"
	"github.com/gpufinops/gpufinops/providers/file"
)

// demoFake is the demo fleet's AWS part in a fake, with the first n running
// AWS instances publishing no metrics.
func demoFake(t *testing.T, n int, opts fake.Options) *fake.Provider {
	t.Helper()
	f, err := file.Demo()
	if err != nil {
		t.Fatal(err)
	}
	for i := range f.Instances {
		if in := &f.Instances[i]; n > 0 && in.Provider == fleet.AWS && in.State != fleet.Stopped {
			in.Utilization = nil
			n--
		}
	}
	return fake.New(f, opts)
}

// run runs `gpufinops doctor args…` in-process against p; build, when set,
// replaces building p (to fail it).
func run(t *testing.T, p providers.Provider, build error, args ...string) (string, error) {
	t.Helper()
	ios, _, out, _ := iostreams.Test()
	f := &cmdutil.Factory{
		IOStreams: ios,
		Config:    func() (*config.Config, error) { return &config.Config{}, nil },
		Providers: func(ctx context.Context, in cmdutil.FleetFlags, cfg *config.Config) ([]providers.Provider, error) {
			if build != nil {
				return nil, build
			}
			return []providers.Provider{p}, nil
		},
	}
	cmd := NewCmdDoctor(f, nil)
	cmd.SetArgs(args)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	err := cmd.Execute()
	return out.String(), err
}

func decode(t *testing.T, out string) Report {
	t.Helper()
	var rep Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return rep
}

func TestDoctorAllGoodJSON(t *testing.T) {
	p := demoFake(t, 0, fake.Options{Regions: []string{"us-east-1", "us-west-2"}})
	out, err := run(t, p, nil, "-o", "json")
	if code := cmdutil.ExitCodeFor(err); code != cmdutil.ExitOK {
		t.Fatalf("exit %d: %v\n%s", code, err, out)
	}
	validateSchema(t, out)
	rep := decode(t, out)
	if len(rep.Scopes) != 3 || rep.Scopes[0].Scope.Region != "" || rep.Scopes[1].Scope.Region != "us-east-1" || rep.Scopes[2].Scope.Region != "us-west-2" {
		t.Fatalf("scopes: %+v", rep.Scopes)
	}
	// The account scope has the account-wide checks; each region its
	// permissions and its coverage.
	if got := p.Calls("CheckPermissions", ""); got != 3 {
		t.Errorf("CheckPermissions called %d times, want once per scope (3)", got)
	}
	if got := p.Calls("ListGPUInstances", "us-east-1"); got != 1 {
		t.Errorf("coverage listed us-east-1 %d times, want 1", got)
	}
	if rep.Summary.Missing != 0 || rep.Summary.Error != 0 || rep.Summary.Warn != 0 || rep.Summary.OK != 1+2*5 {
		t.Errorf("summary %+v", rep.Summary)
	}
}

func TestDoctorPermissionMissingExits4(t *testing.T) {
	p := demoFake(t, 0, fake.Options{Regions: []string{"us-east-1"}, Faults: map[string]fake.Fault{
		"us-east-1": {Stop: providers.ErrPermission},
	}})
	out, err := run(t, p, nil)
	if code := cmdutil.ExitCodeFor(err); code != cmdutil.ExitCredentials {
		t.Fatalf("exit %d: %v", code, err)
	}
	if !strings.Contains(err.Error(), "fake:StopInstances") {
		t.Errorf("error does not name the action: %v", err)
	}
	// The table is written before the error.
	if !strings.Contains(out, "fake:StopInstances (DryRun)") || !strings.Contains(out, "missing") {
		t.Errorf("table:\n%s", out)
	}
}

func TestDoctorScopeErrorExits3(t *testing.T) {
	p := demoFake(t, 0, fake.Options{Regions: []string{"us-east-1", "us-west-2"}, Faults: map[string]fake.Fault{
		"us-west-2": {List: errors.New("503 service unavailable")},
	}})
	out, err := run(t, p, nil, "-o", "json")
	if code := cmdutil.ExitCodeFor(err); code != cmdutil.ExitPartial {
		t.Fatalf("exit %d: %v\n%s", code, err, out)
	}
	rep := decode(t, out)
	if rep.Summary.Error != 2 { // the listing permission check and the coverage check
		t.Errorf("summary %+v", rep.Summary)
	}
}

func TestDoctorNoCredentialsExits4(t *testing.T) {
	for name, tc := range map[string]struct {
		p     providers.Provider
		build error
	}{
		"calls fail":      {p: demoFake(t, 0, fake.Options{NoCredentials: true})},
		"the build fails": {build: &cmdutil.CredentialsError{Err: providers.ErrCredentials}},
	} {
		t.Run(name, func(t *testing.T) {
			out, err := run(t, tc.p, tc.build, "-o", "json")
			if code := cmdutil.ExitCodeFor(err); code != cmdutil.ExitCredentials {
				t.Fatalf("exit %d: %v\n%s", code, err, out)
			}
			rep := decode(t, out)
			if rep.Summary.Missing != 1 || rep.Scopes[0].Checks[0].Status != providers.CheckMissing {
				t.Errorf("report %+v", rep)
			}
		})
	}
}

func TestDoctorCoverageWarnsExits0(t *testing.T) {
	p := demoFake(t, 3, fake.Options{Regions: []string{"us-east-1"}})
	out, err := run(t, p, nil)
	if code := cmdutil.ExitCodeFor(err); code != cmdutil.ExitOK {
		t.Fatalf("exit %d: %v\n%s", code, err, out)
	}
	for _, want := range []string{
		"GPU metrics in " + fake.MetricsSource, "warn", "3 of 22 running GPU instances have no GPU metrics",
		"give them utilization in the fleet", "5 ok, 0 missing, 1 warnings, 0 errors",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// validateSchema validates doctor's JSON against docs/schema/doctor.schema.json.
func validateSchema(t *testing.T, out string) {
	t.Helper()
	testutil.ValidateJSON(t, "../../../docs/schema/doctor.schema.json", out)
}

// Without --provider doctor checks the clouds whose registration asks for it,
// and its help has each cloud's own words on the checks.
func TestDoctorDefaultsFromRegistry(t *testing.T) {
	if got := defaultClouds(); len(got) != 1 || got[0] != "aws" {
		t.Errorf("default clouds %v", got)
	}
	ios, _, _, _ := iostreams.Test()
	cmd := NewCmdDoctor(&cmdutil.Factory{IOStreams: ios}, nil)
	if !strings.Contains(cmd.Long, "\n\naws: the credentials (sts:GetCallerIdentity)") {
		t.Errorf("help:\n%s", cmd.Long)
	}
}

// TestDoctorConnectTimeout: --connect-timeout reaches the adapters doctor
// builds, and is refused out of range (exit 2) before any cloud is called.
func TestDoctorConnectTimeout(t *testing.T) {
	var got []time.Duration
	build := func(args ...string) error {
		ios, _, _, _ := iostreams.Test()
		f := &cmdutil.Factory{
			IOStreams: ios,
			Config: func() (*config.Config, error) {
				return &config.Config{Timeouts: config.TimeoutsConfig{Connect: 9 * time.Second}}, nil
			},
			Providers: func(_ context.Context, _ cmdutil.FleetFlags, cfg *config.Config) ([]providers.Provider, error) {
				got = append(got, cfg.Timeouts.Connect)
				return []providers.Provider{demoFake(t, 0, fake.Options{})}, nil
			},
		}
		cmd := NewCmdDoctor(f, nil)
		cmd.SetArgs(args)
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		return cmd.Execute()
	}
	if err := build("--provider", "aws", "--connect-timeout", "1500ms"); err != nil {
		t.Fatal(err)
	}
	if err := build("--provider", "aws"); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != 1500*time.Millisecond || got[1] != 9*time.Second {
		t.Errorf("the adapters got connect timeouts %v, want [1.5s 9s]", got)
	}
	for _, v := range []string{"0s", "-1s", "11m"} {
		got = nil
		err := build("--provider", "aws", "--connect-timeout", v)
		if cmdutil.ExitCodeFor(err) != cmdutil.ExitUsage || !strings.Contains(err.Error(), "--connect-timeout: ") || len(got) != 0 {
			t.Errorf("--connect-timeout %s: %v (exit %d), %d builds", v, err, cmdutil.ExitCodeFor(err), len(got))
		}
	}
}
