package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/config"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers"
	"github.com/gpufinops/gpufinops/providers/aws/sim"
)

// TestIdleStopMetricsFailed: when CloudWatch fails, however it fails,
// idle-stop --execute stops nothing in that scope: the machines it would
// have judged on their metrics are skipped as metrics-failed with the reason,
// protected ones keep their reason, and the run exits 3.
func TestIdleStopMetricsFailed(t *testing.T) {
	want := map[string]string{}
	for id, r := range wantReasons {
		want[id] = r
	}
	for _, id := range []string{"idle-1", "idle-2", "busy", "no-metrics"} {
		want[id] = "skip/metrics-failed"
	}
	for _, tc := range []struct {
		name   string
		fault  func(service, op, region string) (int, string)
		reason string
	}{
		{"GetMetricData access denied", func(s, op, _ string) (int, string) {
			if s == "monitoring" && op == "GetMetricData" {
				return 400, "AccessDenied"
			}
			return 0, ""
		}, "permission denied"},
		{"CloudWatch 500 after retries", func(s, _, _ string) (int, string) {
			if s == "monitoring" {
				return 500, "InternalFailure"
			}
			return 0, ""
		}, "InternalFailure"},
		{"CloudWatch throttling exhausted", func(s, _, r string) (int, string) {
			if s == "monitoring" && r == "us-east-1" {
				return 400, "Throttling"
			}
			return 0, ""
		}, "throttled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := startSim(t, mixedFleet(), func(o *sim.Options) { o.Fault = tc.fault })
			before := e.states()
			audit := filepath.Join(t.TempDir(), "audit.jsonl")
			opts, out, errOut := e.options(t, true, audit, nil)
			opts.Providers = func(ctx context.Context, _ cmdutil.FleetFlags, _ *config.Config) ([]providers.Provider, error) {
				ri, _ := providers.Find(fleet.AWS)
				p, err := ri.New(ctx, providers.Options{Endpoint: e.srv.URL, Regions: []string{"us-east-1"}, Now: e.clock.Now, RetryMaxBackoff: time.Millisecond})
				return []providers.Provider{p}, err
			}
			err := idleStopRunForTest(opts)
			if code := cmdutil.ExitCodeFor(err); code != cmdutil.ExitPartial {
				t.Fatalf("exit %d (%v), want 3\n%s", code, err, errOut.String())
			}
			r := decode(t, out.String())
			got := reasons(r)
			for id, w := range want {
				if got[id] != w {
					t.Errorf("%s: %s, want %s", id, got[id], w)
				}
			}
			for _, d := range r.Machines {
				if string(d.Reason) == "metrics-failed" && (!strings.Contains(d.Message, "cloudwatch") || !strings.Contains(strings.ToLower(d.Message), strings.ToLower(tc.reason))) {
					t.Errorf("%s: message %q does not say what failed", d.ResourceID, d.Message)
				}
			}
			if r.Summary.Stopped != 0 {
				t.Errorf("summary %+v: something was stopped", r.Summary)
			}
			after := e.states()
			for id, st := range before {
				if after[id] != st {
					t.Errorf("%s went %s → %s", id, st, after[id])
				}
			}
			if !strings.Contains(errOut.String(), "cloudwatch") {
				t.Errorf("stderr does not name the failure: %q", errOut.String())
			}
		})
	}
}
