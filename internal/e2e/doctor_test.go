package e2e

// The doctor command against the AWS simulator: every action the IAM policy
// grants is checked, a denied one exits 4, and so on. The command's own
// behaviour is tested with the fake provider in pkg/cmd/doctor.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"github.com/gpufinops/gpufinops/pkg/testutil"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/cmd/doctor"
	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/config"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
	"github.com/gpufinops/gpufinops/providers"
	"github.com/gpufinops/gpufinops/providers/aws"
	"github.com/gpufinops/gpufinops/providers/aws/sim"
	"github.com/gpufinops/gpufinops/providers/aws/simcat"
	"github.com/gpufinops/gpufinops/providers/file"
)

// doctorNow is the simulator clock of the doctor tests.
var doctorNow = time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)

// doctorSim serves the demo fleet's AWS part; the handler may wrap it.
func doctorSim(t *testing.T, wrap func(http.Handler) http.Handler) string {
	return doctorSimWithout(t, wrap, 0)
}

// doctorSimWithout serves the demo fleet's AWS part with the first n running
// AWS instances publishing no metrics.
func doctorSimWithout(t *testing.T, wrap func(http.Handler) http.Handler, n int) string {
	t.Helper()
	awsEnv(t)
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
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	if err := pricing.Complete(f, cat); err != nil {
		t.Fatal(err)
	}
	opts := simcat.Options(f, cat)
	opts.Now = func() time.Time { return doctorNow }
	var h http.Handler = sim.New(f, opts)
	if wrap != nil {
		h = wrap(h)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// runDoctor runs `gpufinops doctor args…` against endpoint in-process.
func runDoctor(t *testing.T, endpoint string, args ...string) (string, error) {
	t.Helper()
	ios, _, out, _ := iostreams.Test()
	f := &cmdutil.Factory{
		IOStreams: ios,
		Config:    func() (*config.Config, error) { return &config.Config{}, nil },
		Providers: func(ctx context.Context, in cmdutil.FleetFlags, cfg *config.Config) ([]providers.Provider, error) {
			var out []providers.Provider
			for _, name := range in.Providers {
				ri, ok := providers.Find(fleet.Provider(name))
				if !ok {
					return nil, cmdutil.FlagErrorf("no %s adapter", name)
				}
				p, err := ri.New(ctx, providers.Options{Endpoint: endpoint, Regions: in.Regions, Now: func() time.Time { return doctorNow }})
				if err != nil {
					if errors.Is(err, providers.ErrCredentials) || errors.Is(err, providers.ErrPermission) {
						return nil, &cmdutil.CredentialsError{Err: err}
					}
					return nil, err
				}
				out = append(out, p)
			}
			return out, nil
		},
	}
	cmd := doctor.NewCmdDoctor(f, nil)
	cmd.SetArgs(args)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	err := cmd.Execute()
	return out.String(), err
}

func TestDoctorAllGoodJSON(t *testing.T) {
	out, err := runDoctor(t, doctorSim(t, nil), "--region", "us-east-1,us-west-2", "-o", "json")
	if code := cmdutil.ExitCodeFor(err); code != cmdutil.ExitOK {
		t.Fatalf("exit %d: %v\n%s", code, err, out)
	}
	validateDoctorSchema(t, out)
	var rep doctor.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(rep.Scopes) != 3 || rep.Scopes[0].Scope.Region != "" || rep.Scopes[1].Scope.Region != "us-east-1" || rep.Scopes[2].Scope.Region != "us-west-2" {
		t.Fatalf("scopes: %+v", rep.Scopes)
	}
	// Every action `gpufinops iam-policy aws` grants is checked.
	checked := map[string]bool{}
	for _, s := range rep.Scopes {
		for _, c := range s.Checks {
			checked[c.Action] = true
			if c.Status == providers.CheckMissing || c.Status == providers.CheckError {
				t.Errorf("%s %s: %s %s", s.Scope, c.Action, c.Status, c.Detail)
			}
		}
	}
	for _, p := range append(aws.Policy().Analyze, aws.Policy().IdleStop...) {
		if !checked[p.Action] {
			t.Errorf("%s (in the analyze policy) is not checked", p.Action)
		}
	}
	if rep.Summary.Missing != 0 || rep.Summary.Error != 0 || rep.Summary.OK == 0 {
		t.Errorf("summary %+v", rep.Summary)
	}
}

// doctorDenyEC2 answers the EC2 actions named with UnauthorizedOperation, as IAM does.
func doctorDenyEC2(actions ...string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if form, err := url.ParseQuery(string(body)); err == nil {
				for _, a := range actions {
					if form.Get("Action") == a {
						w.Header().Set("Content-Type", "text/xml")
						w.WriteHeader(http.StatusForbidden)
						io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Response><Errors><Error><Code>UnauthorizedOperation</Code><Message>You are not authorized to perform this operation.</Message></Error></Errors><RequestID>t</RequestID></Response>`)
						return
					}
				}
			}
			next.ServeHTTP(w, r)
		})
	}
}

func TestDoctorPermissionMissingExits4(t *testing.T) {
	out, err := runDoctor(t, doctorSim(t, doctorDenyEC2("DescribeInstanceTypes")), "--region", "us-east-1")
	if code := cmdutil.ExitCodeFor(err); code != cmdutil.ExitCredentials {
		t.Fatalf("exit %d: %v", code, err)
	}
	if !strings.Contains(err.Error(), "ec2:DescribeInstanceTypes") {
		t.Errorf("error does not name the action: %v", err)
	}
	// The table is written before the error.
	if !strings.Contains(out, "ec2:DescribeInstanceTypes (DryRun)") || !strings.Contains(out, "grant ec2:DescribeInstanceTypes") {
		t.Errorf("table:\n%s", out)
	}
}

func TestDoctorNoCredentialsExits4(t *testing.T) {
	endpoint := doctorSim(t, nil)
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	os.Unsetenv("AWS_ACCESS_KEY_ID")
	os.Unsetenv("AWS_SECRET_ACCESS_KEY")
	out, err := runDoctor(t, endpoint, "-o", "json")
	if code := cmdutil.ExitCodeFor(err); code != cmdutil.ExitCredentials {
		t.Fatalf("exit %d: %v\n%s", code, err, out)
	}
	var rep doctor.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Summary.Missing != 1 || rep.Scopes[0].Checks[0].Name != "credentials" {
		t.Errorf("report %+v", rep)
	}
}

func TestDoctorCoverageWarnsExits0(t *testing.T) {
	out, err := runDoctor(t, doctorSimWithout(t, nil, 3), "--region", "us-east-1")
	if code := cmdutil.ExitCodeFor(err); code != cmdutil.ExitOK {
		t.Fatalf("exit %d: %v\n%s", code, err, out)
	}
	for _, want := range []string{
		"GPU metrics in CWAgent\twarn\t17 of 20 running GPU instances publish GPU metrics for every GPU; without: infer-g5-1, train-p4d-1, train-p4d-2: install the CloudWatch agent with the nvidia_gpu block",
		`"nvidia_gpu": {`, "amazon-cloudwatch-agent-ctl", "26 ok, 0 missing, 1 warnings, 0 errors", // 11 + the 3 commitment reads + 11 SageMaker reads + StopNotebookInstance (not checkable)
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// validateDoctorSchema validates doctor's JSON against docs/schema/doctor.schema.json.
func validateDoctorSchema(t *testing.T, out string) {
	t.Helper()
	testutil.ValidateJSON(t, "../../docs/schema/doctor.schema.json", out)
}
