package factory

import (
	"strings"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/providers/fake"
)

// TestScanTimeLimit: a scan whose calls hang ends at --run-timeout (or
// timeouts.run) with a one-line reason and exit 3, even when each request
// may take far longer; the scopes that answered stay in the report and the
// ones cut short are warnings naming the time limit. (That the AWS adapter
// gives up a hung call when its context ends is providertest's cancellation
// case, run against the simulator.)
func TestScanTimeLimit(t *testing.T) {
	hung := fake.Fault{Latency: time.Hour}
	cases := []struct {
		name   string
		faults map[string]fake.Fault
		// fromConfig sets timeouts.run instead of --run-timeout.
		fromConfig bool
		// cut are the regions whose listing is cut short; metrics those
		// whose utilization read is; listing: the scopes themselves.
		cut, metrics []string
		listing      bool
	}{
		{name: "listing hangs in one region", faults: map[string]fake.Fault{"us-west-2": hung}, cut: []string{"us-west-2"}},
		{name: "metrics hang in one region", faults: map[string]fake.Fault{"eu-west-1": {MetricsLatency: time.Hour}}, metrics: []string{"eu-west-1"}},
		{name: "two regions hang, limit from the config key", fromConfig: true,
			faults: map[string]fake.Fault{"us-east-1": hung, "eu-west-1": hung}, cut: []string{"eu-west-1", "us-east-1"}},
		{name: "listing the regions hangs", faults: map[string]fake.Fault{"*": hung}, listing: true},
	}
	const limit = 300 * time.Millisecond
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := startFaultySim(t, fake.Options{Faults: tc.faults})
			args := []string{"--provider", "aws", "-o", "json", "--request-timeout", "1m"}
			if tc.fromConfig {
				s.runTimeout = limit
			} else {
				args = append(args, "--run-timeout", limit.String())
			}
			start := time.Now()
			res := s.run(t, "", "analyze", args...)
			if took := time.Since(start); took > limit+10*time.Second {
				t.Errorf("took %s with a %s limit", took, limit)
			}
			if res.code != cmdutil.ExitPartial {
				t.Fatalf("exit %d (%v), want 3\n%s", res.code, res.err, res.errOut)
			}
			if tc.listing {
				if msg := res.err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, "time limit") {
					t.Errorf("reason %q: want one line naming the time limit", msg)
				}
				return
			}
			rep := decodeReport(t, res.out)
			ws := scanWarnings(rep)
			got := map[string]bool{}
			for _, w := range ws {
				if w.Scope == nil {
					t.Errorf("warning without a scope: %+v", w)
					continue
				}
				if !strings.Contains(w.Reason, "time limit") || strings.Contains(w.Reason, "\n") {
					t.Errorf("reason %q does not name the time limit in one line", w.Reason)
				}
				got[w.Scope.Region] = true
			}
			want := append(append([]string{}, tc.cut...), tc.metrics...)
			if len(ws) != len(want) {
				t.Fatalf("warnings %+v, want one each for %v", ws, want)
			}
			for _, r := range want {
				if !got[r] {
					t.Errorf("no warning for %s: %+v", r, ws)
				}
			}
			// The regions that answered are whole; a hung metrics read
			// keeps its region's inventory with utilization unknown.
			cut := map[string]bool{}
			for _, r := range tc.cut {
				cut[r] = true
			}
			for _, region := range demoRegions {
				for _, id := range s.awsIDs(region) {
					in := instanceOf(rep, id)
					switch {
					case cut[region] && in != nil:
						t.Errorf("%s in cut region %s is in the report", id, region)
					case !cut[region] && in == nil:
						t.Errorf("%s in %s is missing from the report", id, region)
					}
				}
			}
		})
	}
}

// TestScanTimeoutFlags: the flags are refused out of range and without a
// live scan, naming the flag.
func TestScanTimeoutFlags(t *testing.T) {
	s := startFaultySim(t, fake.Options{})
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--provider", "aws", "--run-timeout", "0s"}, "--run-timeout"},
		{[]string{"--provider", "aws", "--run-timeout", "48h"}, "--run-timeout"},
		{[]string{"--provider", "aws", "--request-timeout", "2h"}, "--request-timeout"},
		{[]string{"--provider", "aws", "--connect-timeout", "0s"}, "--connect-timeout"},
		{[]string{"--provider", "aws", "--connect-timeout", "20m"}, "--connect-timeout"},
		{[]string{"--demo", "--run-timeout", "1m"}, "needs --provider"},
		{[]string{"--demo", "--connect-timeout", "1s"}, "needs --provider"},
	} {
		res := s.run(t, "", "analyze", tc.args...)
		if res.code != cmdutil.ExitUsage || res.err == nil || !strings.Contains(res.err.Error(), tc.want) {
			t.Errorf("%v: exit %d (%v), want 2 naming %s", tc.args, res.code, res.err, tc.want)
		}
	}
}
