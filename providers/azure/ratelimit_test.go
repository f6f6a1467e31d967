package azure

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers"
	"github.com/gpufinops/gpufinops/providers/azure/sim"
	"github.com/gpufinops/gpufinops/providers/ratelimit"
)

func TestBucketOf(t *testing.T) {
	for _, c := range []struct{ method, url, api, scope string }{
		{"POST", "https://management.azure.com/providers/Microsoft.ResourceGraph/resources?api-version=2022-10-01", APIResourceGraph, ""},
		{"POST", "https://eastus.metrics.monitor.azure.com/subscriptions/" + subA + "/metrics:getBatch?api-version=2024-02-01", APIMetricsBatch, subA + "/eastus"},
		{"POST", "http://127.0.0.1:1234/subscriptions/" + subA + "/metrics:getBatch", APIMetricsBatch, subA},
		{"GET", "https://prices.azure.com/api/retail/prices?$filter=x", APIRetailPrices, ""},
		{"GET", "https://management.azure.com/subscriptions/" + subA + "/providers/Microsoft.Compute/skus", APIARMRead, subA},
		{"GET", "https://management.azure.com/SUBSCRIPTIONS/" + subA + "/resourceGroups/rg", APIARMRead, subA},
		{"POST", "https://management.azure.com/subscriptions/" + subA + "/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/vm/deallocate", APIARMWrite, subA},
		{"DELETE", "https://management.azure.com/subscriptions/" + subA + "/resourceGroups/rg", APIARMDelete, subA},
		{"GET", "https://management.azure.com/subscriptions?api-version=2022-12-01", APIARMRead, "tenant"},
	} {
		u, _ := url.Parse(c.url)
		if api, scope := bucketOf(c.method, u); api != c.api || scope != c.scope {
			t.Errorf("%s %s: %s %q, want %s %q", c.method, c.url, api, scope, c.api, c.scope)
		}
	}
	if d := quotaResetsAfter("00:00:03"); d != 3*time.Second {
		t.Errorf("quotaResetsAfter 00:00:03 = %v", d)
	}
	if d := retryAfter(http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"9"}}); d != 250*time.Millisecond {
		t.Errorf("retryAfter with retry-after-ms 250: %v", d)
	}
}

func limitedProvider(t *testing.T, url string, limits ...string) *Provider {
	t.Helper()
	return testProvider(t, url, providers.Options{Regions: []string{"eastus", "westus2"}, Adapter: providers.Values{OptSubscriptions: []string{subA}, OptRateLimits: limits}})
}

var week = fleet.TimeRange{Start: simNow.AddDate(0, 0, -7), End: simNow}

// TestEveryCallPassesItsBucket: every request of a scan, as the simulator
// counts them, went through its API's bucket, and none waited at the
// default quotas.
func TestEveryCallPassesItsBucket(t *testing.T) {
	srv, s := testSim(t, testFleet(t, 60), sim.Options{})
	p := limitedProvider(t, srv.URL)
	res, err := providers.Collect(context.Background(), p, providers.CollectOptions{Window: week})
	if err != nil || len(res.Failures) > 0 {
		t.Fatal(err, res.Failures)
	}
	want := map[string]int64{}
	for svc, ops := range s.Counts() {
		for _, n := range ops {
			api := map[string]string{"resourcegraph": APIResourceGraph, "monitor": APIMetricsBatch, "prices": APIRetailPrices, "compute": APIARMRead, "subscriptions": APIARMRead,
				"capacity": APIARMRead, "billingbenefits": APIARMRead, "machinelearning": APIARMRead}[svc] // the commitment lists are ARM reads of the tenant
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
	for _, api := range []string{APIResourceGraph, APIMetricsBatch, APIRetailPrices, APIARMRead} {
		if want[api] == 0 || got[api] != want[api] {
			t.Errorf("%s: %d requests through its buckets, the simulator answered %d", api, got[api], want[api])
		}
	}
}

// TestLowBucketSpacesRequests: with arm-read at 5 a second and a burst of
// 1, concurrent subscription reads reach the simulator a fifth of a second
// apart.
func TestLowBucketSpacesRequests(t *testing.T) {
	var mu sync.Mutex
	var seen []time.Time
	srv, _ := testSim(t, testFleet(t, 6), sim.Options{Fault: func(service, op, scope string) (int, string) {
		if op == "GetSubscription" {
			mu.Lock()
			seen = append(seen, time.Now())
			mu.Unlock()
		}
		return 0, ""
	}})
	p := limitedProvider(t, srv.URL, APIARMRead+"=5/s:1")
	const n = 6
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			if _, err := p.subs.Get(context.Background(), subA, nil); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	slices.SortFunc(seen, func(a, b time.Time) int { return a.Compare(b) })
	if len(seen) != n {
		t.Fatalf("the simulator saw %d GetSubscription, want %d", len(seen), n)
	}
	if span := seen[n-1].Sub(seen[0]); span < 800*time.Millisecond {
		t.Fatalf("%d calls at 5/s burst 1 reached the simulator within %v", n, span)
	}
}

// TestThrottlingLowersTheBucket: the first request of each operation in each
// scope gets a 429, and one in five more at random; the throttled APIs'
// buckets go down, and the scan ends with the clean scan's instances.
func TestThrottlingLowersTheBucket(t *testing.T) {
	f := testFleet(t, 60)
	scan := func(o sim.Options) (*Provider, []byte) {
		srv, _ := testSim(t, f, o)
		p := limitedProvider(t, srv.URL)
		res, err := providers.Collect(context.Background(), withoutPrices{p, p}, providers.CollectOptions{Window: week})
		if err != nil || len(res.Failures) > 0 {
			t.Fatal(err, res.Failures)
		}
		b, err := json.Marshal(res.Fleet.Instances)
		if err != nil {
			t.Fatal(err)
		}
		return p, b
	}
	var mu sync.Mutex
	seen := map[string]bool{}
	first := func(service, op, scope string) (int, string) {
		mu.Lock()
		defer mu.Unlock()
		if k := service + op + scope; !seen[k] {
			seen[k] = true
			return http.StatusTooManyRequests, "TooManyRequests"
		}
		return 0, ""
	}
	_, clean := scan(sim.Options{})
	p, throttled := scan(sim.Options{ThrottleRate: 0.2, Seed: 3, Fault: first, RetryAfter: 10 * time.Millisecond})
	if string(clean) != string(throttled) {
		t.Fatal("the throttled scan's instances differ from the clean scan's")
	}
	ad := p.limits.Check(APIResourceGraph, APIARMRead, APIMetricsBatch)
	for _, problem := range ad.Problems {
		t.Error(problem)
	}
	t.Logf("%d requests, %d throttled, %d waited for a token", ad.Requests, ad.Throttled, ad.Waited)
}

// TestRetryAfterPausesTheBucket: a 429 with retry-after-ms 300 holds the
// bucket's next request (another call's, not the SDK's retry) for as long.
func TestRetryAfterPausesTheBucket(t *testing.T) {
	var mu sync.Mutex
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n++
		first := n == 1
		mu.Unlock()
		if first {
			w.Header().Set("retry-after-ms", "300")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	set, err := ratelimit.NewSet(Quotas, nil)
	if err != nil {
		t.Fatal(err)
	}
	pl := runtime.NewPipeline("test", "v1", runtime.PipelineOptions{}, &policy.ClientOptions{
		Retry: policy.RetryOptions{MaxRetries: -1}, PerRetryPolicies: []policy.Policy{limitPolicy{set}}})
	do := func() int {
		req, err := runtime.NewRequest(context.Background(), http.MethodGet, srv.URL+"/api/retail/prices")
		if err != nil {
			t.Fatal(err)
		}
		resp, err := pl.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := do(); code != http.StatusTooManyRequests {
		t.Fatalf("first answer %d", code)
	}
	start := time.Now()
	if code := do(); code != http.StatusOK {
		t.Fatalf("second answer %d", code)
	}
	if d := time.Since(start); d < 250*time.Millisecond {
		t.Fatalf("the request after a Retry-After of 300 ms went after %v", d)
	}
	if st := set.Stats()[0]; st.API != APIRetailPrices || st.Throttled != 1 || st.Waited != 1 {
		t.Fatalf("%+v", st)
	}
}
