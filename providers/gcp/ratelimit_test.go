package gcp

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/billing/apiv1/billingpb"
	"cloud.google.com/go/monitoring/apiv3/v2/monitoringpb"
	"github.com/googleapis/gax-go/v2/apierror"
	"google.golang.org/api/iterator"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers"
	"github.com/gpufinops/gpufinops/providers/gcp/sim"
)

func TestRESTBucket(t *testing.T) {
	for _, c := range []struct{ method, path, api, project string }{
		{"GET", "/compute/v1/projects/p1/aggregated/instances", APIComputeRead, "p1"},
		{"GET", "/compute/v1/projects/p1/regions", APIComputeRead, "p1"},
		{"POST", "/compute/v1/projects/p1/zones/z/instances/i/stop", APIComputeWrite, "p1"},
		{"POST", "/compute/v1/projects/p1/zones/z/instances/i/testIamPermissions", APIComputeRead, "p1"},
		{"POST", "/compute/v1/projects/p1/zones/z/operations/o/wait", APIComputeRead, "p1"},
		{"GET", "/v1/services/6F81-5844-456A/skus", APIBillingCatalog, ""},
		{"GET", "/v3/projects:search", APIResourceManager, ""},
	} {
		if api, project := restBucket(c.method, &url.URL{Path: c.path}); api != c.api || project != c.project {
			t.Errorf("%s %s: %s %q, want %s %q", c.method, c.path, api, project, c.api, c.project)
		}
	}
	if api, project := grpcBucket(listTimeSeriesMethod, &monitoringpb.ListTimeSeriesRequest{Name: "projects/p1"}); api != APIMonitoringQuery || project != "p1" {
		t.Errorf("ListTimeSeries: %s %q", api, project)
	}
}

func limitedProvider(t *testing.T, url string, limits ...string) *Provider {
	t.Helper()
	p, err := New(context.Background(), providers.Options{
		Endpoint: url, Regions: []string{"europe-west4", "us-central1"}, Adapter: providers.Values{OptProjects: []string{testProject}, OptRateLimits: limits},
		RetryMaxBackoff: time.Millisecond, Now: func() time.Time { return simNow },
	})
	if err != nil {
		t.Fatal(err)
	}
	return p.(*Provider)
}

var testWeek = fleet.TimeRange{Start: simNow.Add(-7 * 24 * time.Hour).Truncate(time.Hour), End: simNow.Truncate(time.Hour)}

// TestEveryCallPassesItsBucket: every REST and gRPC request of a scan, as
// the simulator counts them, went through its API's bucket, one per
// project, and none waited at the default quotas.
func TestEveryCallPassesItsBucket(t *testing.T) {
	f := testFleet(t)
	s := sim.New(f, simOptions(t, f))
	p := limitedProvider(t, startSim(t, s))
	res, err := providers.Collect(context.Background(), p, providers.CollectOptions{Window: testWeek})
	if err != nil || len(res.Failures) > 0 {
		t.Fatal(err, res.Failures)
	}
	want := map[string]int64{}
	for svc, ops := range s.Counts() {
		for _, n := range ops {
			api := map[string]string{"compute": APIComputeRead, "monitoring": APIMonitoringQuery, "cloudbilling": APIBillingCatalog, "cloudresourcemanager": APIResourceManager,
				"aiplatform": APIVertexAI, "notebooks": APIWorkbench}[svc]
			if api == "" {
				t.Fatalf("%s has no bucket in this test", svc)
			}
			want[api] += int64(n)
		}
	}
	ad := p.limits.Check()
	got := ad.ByAPI
	if ad.Waited != 0 {
		t.Errorf("%d requests waited at the default quotas", ad.Waited)
	}
	for _, st := range p.limits.Stats() {
		if (st.API == APIComputeRead || st.API == APIMonitoringQuery) && st.Scope != testProject {
			t.Errorf("%s bucket for %q, want the project", st.API, st.Scope)
		}
	}
	for _, api := range []string{APIComputeRead, APIMonitoringQuery, APIBillingCatalog} {
		if want[api] == 0 || got[api] != want[api] {
			t.Errorf("%s: %d requests through its buckets, the simulator answered %d", api, got[api], want[api])
		}
	}
}

// TestLowBucketSpacesRequests: with compute-read and monitoring-query at 5
// a second and a burst of 1, concurrent regions.list (REST) and
// ListTimeSeries (gRPC) calls reach the simulator a fifth of a second apart.
func TestLowBucketSpacesRequests(t *testing.T) {
	f := testFleet(t)
	opts := simOptions(t, f)
	var mu sync.Mutex
	seen := map[string][]time.Time{}
	opts.Fault = func(service, op, scope string) (int, string) {
		mu.Lock()
		seen[op] = append(seen[op], time.Now())
		mu.Unlock()
		return 0, ""
	}
	p := limitedProvider(t, startSim(t, sim.New(f, opts)), APIComputeRead+"=5/s:1", APIMonitoringQuery+"=5/s:1")
	const n = 6
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			if _, err := p.listRegions(context.Background(), testProject); err != nil {
				t.Error(err)
			}
		})
		wg.Go(func() {
			it := p.metrics.ListTimeSeries(context.Background(), &monitoringpb.ListTimeSeriesRequest{
				Name: "projects/" + testProject, Filter: `metric.type = "agent.googleapis.com/gpu/utilization"`,
				Interval: &monitoringpb.TimeInterval{StartTime: timestamppb.New(testWeek.Start), EndTime: timestamppb.New(testWeek.End)},
				View:     monitoringpb.ListTimeSeriesRequest_HEADERS,
			})
			if _, err := it.Next(); err != nil && !errors.Is(err, iterator.Done) {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	for _, op := range []string{"regions.list", "ListTimeSeries"} {
		ts := seen[op]
		slices.SortFunc(ts, func(a, b time.Time) int { return a.Compare(b) })
		if len(ts) < n {
			t.Fatalf("the simulator saw %d %s, want %d", len(ts), op, n)
		}
		if span := ts[len(ts)-1].Sub(ts[0]); span < 800*time.Millisecond {
			t.Errorf("%d %s at 5/s burst 1 reached the simulator within %v", len(ts), op, span)
		}
	}
}

// TestThrottlingLowersTheBucket: the first request of each operation in each
// scope is throttled as GCP does (Compute's 403 rateLimitExceeded,
// Monitoring's RESOURCE_EXHAUSTED), and one in five more at random; the
// buckets go down, and the scan ends with the clean scan's instances.
func TestThrottlingLowersTheBucket(t *testing.T) {
	f := testFleet(t)
	scan := func(throttle bool) (*Provider, []byte) {
		opts := simOptions(t, f)
		if throttle {
			var mu sync.Mutex
			seen := map[string]bool{}
			opts.ThrottleRate, opts.Seed = 0.2, 3
			opts.Fault = func(service, op, scope string) (int, string) {
				mu.Lock()
				defer mu.Unlock()
				if k := service + op + scope; !seen[k] {
					seen[k] = true
					if service == "compute" {
						return http.StatusForbidden, "rateLimitExceeded"
					}
					return http.StatusTooManyRequests, "rateLimitExceeded"
				}
				return 0, ""
			}
		}
		p := limitedProvider(t, startSim(t, sim.New(f, opts)))
		res, err := providers.Collect(context.Background(), p, providers.CollectOptions{Window: testWeek, SkipPrices: true})
		if err != nil || len(res.Failures) > 0 {
			t.Fatal(err, res.Failures)
		}
		b, err := json.Marshal(res.Fleet.Instances)
		if err != nil {
			t.Fatal(err)
		}
		return p, b
	}
	_, clean := scan(false)
	p, throttled := scan(true)
	if string(clean) != string(throttled) {
		t.Fatal("the throttled scan's instances differ from the clean scan's")
	}
	ad := p.limits.Check(APIComputeRead, APIMonitoringQuery)
	for _, problem := range ad.Problems {
		t.Error(problem)
	}
	t.Logf("%d requests, %d throttled, %d waited for a token", ad.Requests, ad.Throttled, ad.Waited)
}

// TestRetryInfoIsWaitedFor: Monitoring's RESOURCE_EXHAUSTED answers carry
// google.rpc.Status details (an ErrorInfo, and here a RetryInfo of 400 ms;
// providers/gcp/sim/FACTS.md), and the adapter holds the retry until the
// RetryInfo's delay has passed, though its own backoff is 1 ms.
func TestRetryInfoIsWaitedFor(t *testing.T) {
	f := testFleet(t)
	opts := simOptions(t, f)
	opts.RetryDelay = 400 * time.Millisecond
	var mu sync.Mutex
	var seen []time.Time
	opts.Fault = func(service, op, scope string) (int, string) {
		if op != "ListTimeSeries" {
			return 0, ""
		}
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, time.Now())
		if len(seen) == 1 || scope == "denied-project" {
			return http.StatusTooManyRequests, "rateLimitExceeded"
		}
		return 0, ""
	}
	p := newProvider(t, startSim(t, sim.New(f, opts)), []string{"us-central1"})
	list := func(project string) error {
		it := p.metrics.ListTimeSeries(context.Background(), &monitoringpb.ListTimeSeriesRequest{
			Name: "projects/" + project, Filter: `metric.type = "agent.googleapis.com/gpu/utilization"`,
			Interval: &monitoringpb.TimeInterval{StartTime: timestamppb.New(testWeek.Start), EndTime: timestamppb.New(testWeek.End)},
			View:     monitoringpb.ListTimeSeriesRequest_HEADERS,
		})
		_, err := it.Next()
		if errors.Is(err, iterator.Done) {
			return nil
		}
		return err
	}
	if err := list(testProject); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if len(seen) != 2 {
		t.Fatalf("%d ListTimeSeries attempts, want 2 (one throttled, one retried)", len(seen))
	}
	if gap := seen[1].Sub(seen[0]); gap < 350*time.Millisecond {
		t.Errorf("retried after %v; the RetryInfo said 400ms", gap)
	}
	mu.Unlock()
	opts.RetryDelay = time.Millisecond
	p = newProvider(t, startSim(t, sim.New(f, opts)), []string{"us-central1"})
	err := list("denied-project")
	st, ok := status.FromError(err)
	if !ok || st.Code() != codes.ResourceExhausted {
		t.Fatalf("%v, want RESOURCE_EXHAUSTED", err)
	}
	var info *errdetails.ErrorInfo
	var retry *errdetails.RetryInfo
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *errdetails.ErrorInfo:
			info = d
		case *errdetails.RetryInfo:
			retry = d
		}
	}
	if info == nil || info.GetReason() != "RATE_LIMIT_EXCEEDED" || info.GetDomain() != "googleapis.com" || info.GetMetadata()["service"] != "monitoring.googleapis.com" || retry == nil {
		t.Errorf("details %v, want an ErrorInfo (RATE_LIMIT_EXCEEDED, googleapis.com, service monitoring.googleapis.com) and a RetryInfo", st.Details())
	}
}

// TestRESTThrottlingHasErrorInfo: a Cloud Billing 429 is a google.rpc.Status
// in JSON, RESOURCE_EXHAUSTED with an ErrorInfo RATE_LIMIT_EXCEEDED naming
// the service (providers/gcp/sim/FACTS.md), which the SDK's REST client reads
// into its APIError.
func TestRESTThrottlingHasErrorInfo(t *testing.T) {
	f := testFleet(t)
	opts := simOptions(t, f)
	opts.Fault = func(service, op, scope string) (int, string) {
		if service == "cloudbilling" {
			return http.StatusTooManyRequests, "rateLimitExceeded"
		}
		return 0, ""
	}
	p := newProvider(t, startSim(t, sim.New(f, opts)), []string{"us-central1"})
	_, err := p.catalog.ListSkus(context.Background(), &billingpb.ListSkusRequest{Parent: ComputeService}).Next()
	var ae *apierror.APIError
	if !errors.As(err, &ae) {
		t.Fatalf("%v, want an APIError", err)
	}
	if ae.HTTPCode() != http.StatusTooManyRequests || ae.Reason() != "RATE_LIMIT_EXCEEDED" || ae.Domain() != "googleapis.com" || ae.Metadata()["service"] != "cloudbilling.googleapis.com" {
		t.Errorf("HTTP %d, reason %q, domain %q, metadata %v; want 429 RATE_LIMIT_EXCEEDED, googleapis.com, service cloudbilling.googleapis.com",
			ae.HTTPCode(), ae.Reason(), ae.Domain(), ae.Metadata())
	}
}
