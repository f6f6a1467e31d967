package aws

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers"
	"github.com/gpufinops/gpufinops/providers/aws/sim"
)

// cloudWatchIn answers the CloudWatch calls op ("" for all) in region with
// status and code.
func cloudWatchIn(region, op string, status int, code string) func(string, string, string) (int, string) {
	return func(service, o, r string) (int, string) {
		if service == "monitoring" && r == region && (op == "" || o == op) {
			return status, code
		}
		return 0, ""
	}
}

// dropCloudWatch closes the connection of every CloudWatch request signed
// for region without an answer, as a dead load balancer or a reset does.
func dropCloudWatch(region string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if auth := r.Header.Get("Authorization"); strings.Contains(auth, "/"+region+"/monitoring/") {
				if hj, ok := w.(http.Hijacker); ok {
					if conn, _, err := hj.Hijack(); err == nil {
						_ = conn.Close()
						return
					}
				}
			}
			next.ServeHTTP(w, r)
		})
	}
}

// TestCloudWatchFailuresAreMetricsFailures: each way EC2 or CloudWatch
// fails in a region is one ScopeError of that region, a listing failure or
// a metrics failure of "cloudwatch" that keeps the instances, with a reason
// that says what happened, after fast retries. (How the commands report
// them is tested with the fake provider in pkg/cmd/factory.)
func TestCloudWatchFailuresAreMetricsFailures(t *testing.T) {
	regions := []string{"eu-west-1", "us-east-1", "us-west-2"}
	for _, tc := range []struct {
		name        string
		fault       func(service, op, region string) (int, string)
		failRegions []string
		wrap        func(http.Handler) http.Handler
		region      string
		metrics     bool
		permission  bool
		reason      string
	}{
		{name: "region outage, 5xx after retries", failRegions: []string{"eu-west-1"}, region: "eu-west-1", reason: `(?i)500|internal|retry`},
		{name: "EC2 access denied in one region", fault: func(service, op, r string) (int, string) {
			if service == "ec2" && op == "DescribeInstances" && r == "us-west-2" {
				return 403, "UnauthorizedOperation"
			}
			return 0, ""
		}, region: "us-west-2", permission: true, reason: `(?i)permission denied`},
		{name: "GetMetricData 500 after retries", fault: cloudWatchIn("us-east-1", "GetMetricData", 500, "InternalFailure"), region: "us-east-1", metrics: true, reason: `(?i)500|InternalFailure|retry`},
		{name: "every CloudWatch call 503", fault: cloudWatchIn("eu-west-1", "", 503, "ServiceUnavailable"), region: "eu-west-1", metrics: true, reason: `(?i)503|unavailable|retry`},
		{name: "GetMetricData access denied", fault: cloudWatchIn("us-west-2", "GetMetricData", 400, "AccessDenied"), region: "us-west-2", metrics: true, permission: true, reason: `(?i)permission denied`},
		{name: "ListMetrics access denied", fault: cloudWatchIn("us-east-1", "ListMetrics", 400, "AccessDeniedException"), region: "us-east-1", metrics: true, permission: true, reason: `(?i)permission denied`},
		{name: "CloudWatch throttling exhausted", fault: cloudWatchIn("us-east-1", "", 400, "Throttling"), region: "us-east-1", metrics: true, reason: `(?i)throttl|retry`},
		{name: "CloudWatch connection dropped", wrap: dropCloudWatch("us-west-2"), region: "us-west-2", metrics: true, reason: `(?i)EOF|reset|closed|connection|retry`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := scanFleet(t, 60)
			var h http.Handler = sim.New(f, withDefaults(t, f, sim.Options{Regions: regions, Fault: tc.fault, FailRegions: tc.failRegions}))
			if tc.wrap != nil {
				h = tc.wrap(h)
			}
			srv := httptest.NewServer(h)
			t.Cleanup(srv.Close)
			t.Setenv("AWS_ACCESS_KEY_ID", "test")
			t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
			p, err := New(context.Background(), providers.Options{Endpoint: srv.URL, Regions: regions, RetryMaxBackoff: time.Millisecond, Now: func() time.Time { return simNow }})
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			res, err := providers.Collect(context.Background(), p, providers.CollectOptions{Window: fleet.TimeRange{Start: simNow.AddDate(0, 0, -7), End: simNow}, SkipPrices: true})
			if err != nil {
				t.Fatal(err)
			}
			if d := time.Since(start); d > 30*time.Second {
				t.Errorf("the failing scan took %s: retries are not fast in tests", d)
			}
			if len(res.Failures) != 1 {
				t.Fatalf("failures %v, want one of %s", res.Failures, tc.region)
			}
			fe := res.Failures[0]
			if fe.Scope.Region != tc.region || fe.Metrics != tc.metrics || (tc.metrics && fe.Source != "cloudwatch") {
				t.Errorf("failure %+v: want region %s, metrics %v (cloudwatch)", fe, tc.region, tc.metrics)
			}
			if errors.Is(fe, providers.ErrPermission) != tc.permission {
				t.Errorf("%v: errors.Is ErrPermission = %v, want %v", fe, !tc.permission, tc.permission)
			}
			if !regexp.MustCompile(tc.reason).MatchString(fe.Err.Error()) {
				t.Errorf("reason %q does not match %s", fe.Err, tc.reason)
			}
			kept := 0
			for _, in := range res.Fleet.Instances {
				if in.Region == tc.region {
					kept++
					if in.Utilization != nil {
						t.Errorf("%s of the failed region has utilization", in.ID)
					}
				}
			}
			if tc.metrics && kept != len(fe.Instances) {
				t.Errorf("%d instances kept, the failure names %d", kept, len(fe.Instances))
			}
			if !tc.metrics && kept != 0 {
				t.Errorf("%d instances of the failed region listed", kept)
			}
		})
	}
}
