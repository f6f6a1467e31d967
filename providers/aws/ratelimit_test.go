package aws

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ec2"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers"
	"github.com/gpufinops/gpufinops/providers/aws/sim"
)

// limitedProvider is scanProvider with providers.aws.rate_limits set.
func limitedProvider(t *testing.T, url string, limits []string, regions ...string) *Provider {
	t.Helper()
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	p, err := New(context.Background(), providers.Options{Endpoint: url, Regions: regions, Now: func() time.Time { return simNow },
		RetryMaxBackoff: time.Millisecond, Adapter: providers.Values{OptRateLimits: limits}})
	if err != nil {
		t.Fatal(err)
	}
	return p.(*Provider)
}

// TestEveryCallPassesItsBucket: the requests of New and a scan, as the
// simulator counts them, each went through the bucket of its API, one bucket per account and
// region, and none waited at the default quotas.
func TestEveryCallPassesItsBucket(t *testing.T) {
	f := scanFleet(t, 300)
	srv, s := scanSim(t, f, sim.Options{})
	regions := []string{"eu-west-1", "us-east-1", "us-west-2"}
	s.ResetCounts()
	p := limitedProvider(t, srv.URL, nil, regions...)
	res, err := providers.Collect(context.Background(), p, providers.CollectOptions{Window: fleet.TimeRange{Start: simNow.AddDate(0, 0, -7), End: simNow}})
	if err != nil || len(res.Failures) > 0 {
		t.Fatal(err, res.Failures)
	}
	counts := s.Counts()
	want := map[string]int64{}
	for svc, ops := range counts {
		for op, n := range ops {
			api := map[string]string{"ec2": APIEC2Read, "pricing": APIPricing, "savingsplans": APISavingsPlans, "sts": APISTS, "sagemaker": APISageMaker}[svc]
			if svc == "monitoring" {
				api = map[string]string{"GetMetricData": APIGetMetricData, "ListMetrics": APIListMetrics}[op]
			}
			if api == "" {
				t.Fatalf("%s.%s has no bucket in this test", svc, op)
			}
			want[api] += int64(n)
		}
	}
	ad := p.limits.Check()
	got, scopes := ad.ByAPI, ad.Scopes
	for api, n := range want {
		if got[api] != n {
			t.Errorf("%s: %d requests through its buckets, the simulator answered %d", api, got[api], n)
		}
	}
	for _, api := range []string{APIEC2Read, APIGetMetricData, APIListMetrics, APISageMaker} {
		if want[api] == 0 {
			t.Errorf("the scan made no %s request", api)
		}
		if !slices.Equal(scopes[api], []string{"default/eu-west-1", "default/us-east-1", "default/us-west-2"}) {
			t.Errorf("%s buckets: %v, want one per region of the account", api, scopes[api])
		}
	}
	if ad.Waited != 0 {
		t.Errorf("%d requests waited at the default quotas", ad.Waited)
	}
}

// TestLowBucketSpacesRequests: with ec2-read at 5 a second and a burst of
// 1, concurrent DescribeInstances calls reach the simulator a fifth of a
// second apart.
func TestLowBucketSpacesRequests(t *testing.T) {
	f := scanFleet(t, 20)
	var mu sync.Mutex
	var seen []time.Time
	srv, _ := scanSim(t, f, sim.Options{Fault: func(service, op, region string) (int, string) {
		if op == "DescribeInstances" {
			mu.Lock()
			seen = append(seen, time.Now())
			mu.Unlock()
		}
		return 0, ""
	}})
	p := limitedProvider(t, srv.URL, []string{APIEC2Read + "=5/s:1"}, "us-east-1")
	c, err := p.ec2Client(providers.Scope{Provider: fleet.AWS, Account: "111122223333", Profile: "default", Region: "us-east-1"})
	if err != nil {
		t.Fatal(err)
	}
	const n = 6
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			if _, err := c.DescribeInstances(context.Background(), &ec2.DescribeInstancesInput{}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	slices.SortFunc(seen, func(a, b time.Time) int { return a.Compare(b) })
	// More when the SDK retried a dropped connection on a loaded machine;
	// retries pass the bucket too.
	if len(seen) < n {
		t.Fatalf("the simulator saw %d DescribeInstances, want %d", len(seen), n)
	}
	// Five gaps of 200 ms: at least 0.8 s however the machine is loaded.
	if span := seen[n-1].Sub(seen[0]); span < 800*time.Millisecond {
		t.Fatalf("%d calls at 5/s burst 1 reached the simulator within %v", n, span)
	}
	if st := p.limits.Stats()[0]; st.Waited < n-1 {
		t.Fatalf("%+v: want %d waits", st, n-1)
	}
}

// TestThrottlingLowersTheBucket: the first request of each operation in each
// region is throttled (EC2 RequestLimitExceeded, CloudWatch Throttling) and
// one in five more at random; each throttled API's buckets go down, and the
// scan ends with the clean scan's instances.
func TestThrottlingLowersTheBucket(t *testing.T) {
	f := scanFleet(t, 300)
	regions := []string{"eu-west-1", "us-east-1", "us-west-2"}
	scan := func(o sim.Options) (*Provider, []byte) {
		srv, _ := scanSim(t, f, o)
		p := limitedProvider(t, srv.URL, nil, regions...)
		res, err := providers.Collect(context.Background(), scanOnly(p), providers.CollectOptions{Window: fleet.TimeRange{Start: simNow.AddDate(0, 0, -7), End: simNow}})
		if err != nil || len(res.Failures) > 0 {
			t.Fatal(err, res.Failures)
		}
		b, err := json.Marshal(res.Fleet.Instances)
		if err != nil {
			t.Fatal(err)
		}
		return p, b
	}
	_, clean := scan(sim.Options{})
	p, throttled := scan(sim.Options{ThrottleRate: 0.2, Seed: 3, Fault: throttleFirst()})
	if string(clean) != string(throttled) {
		t.Fatal("the throttled scan's instances differ from the clean scan's")
	}
	ad := p.limits.Check(APIEC2Read, APIGetMetricData, APIListMetrics)
	for _, problem := range ad.Problems {
		t.Error(problem)
	}
	t.Logf("%d requests, %d throttled, %d waited for a token", ad.Requests, ad.Throttled, ad.Waited)
}

// TestRateLimitsOff: rate_limits [off] leaves the calls unpaced.
func TestRateLimitsOff(t *testing.T) {
	srv, _ := scanSim(t, scanFleet(t, 10), sim.Options{})
	if p := limitedProvider(t, srv.URL, []string{"off"}, "us-east-1"); p.limits != nil {
		t.Fatal("off kept the buckets")
	}
	if _, err := New(context.Background(), providers.Options{Endpoint: srv.URL, Adapter: providers.Values{OptRateLimits: []string{"ec2=1/s"}}}); err == nil {
		t.Fatal("an unknown API was accepted")
	}
}
