package azure

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	azfake "github.com/Azure/azure-sdk-for-go/sdk/azcore/fake"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
	"github.com/gpufinops/gpufinops/providers"
	"github.com/gpufinops/gpufinops/providers/azure/sim"
	"github.com/gpufinops/gpufinops/providers/azure/sim/contract"
	"github.com/gpufinops/gpufinops/providers/azure/simcat"
	"github.com/gpufinops/gpufinops/providers/providertest"
)

// The tests in this file run the adapter, through the real SDK clients,
// against the wire-level simulator.

// simNow is the simulator's clock: the end of the demo fleet's week.
var simNow = time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)

// The subscriptions of the test fleets.
const (
	subA = "11111111-1111-1111-1111-111111111111"
	subB = "22222222-2222-2222-2222-222222222222" // FailAccount's subscription
)

func testCatalog(t testing.TB) pricing.Catalog {
	t.Helper()
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

// testFleet has n Azure VMs in eastus and westus2 (none in westeurope): a
// mix of sizes (1 to 8 GPUs), spot and regular, running and deallocated,
// every fifth without GPU metrics, every seventh a member of an AKS node
// pool's scale set.
func testFleet(t testing.TB, n int) *fleet.Fleet {
	t.Helper()
	sizes := []string{"Standard_NC24ads_A100_v4", "Standard_ND96asr_v4", "Standard_NC4as_T4_v3", "Standard_NV36ads_A10_v5", "Standard_NC48ads_A100_v4"}
	f := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind}
	for i := range n {
		region := "eastus"
		if i%3 == 2 {
			region = "westus2"
		}
		launch := simNow.Add(-time.Duration(48+i) * time.Hour)
		in := fleet.Instance{
			ID: fmt.Sprintf("gpu-vm-%03d", i), Name: fmt.Sprintf("gpu-vm-%03d", i), Provider: fleet.Azure, Account: subA,
			Region: region, Zone: fmt.Sprintf("%s-%d", region, 1+i%3), InstanceType: sizes[i%len(sizes)],
			Lifecycle: fleet.OnDemand, State: fleet.Running, LaunchTime: &launch,
			Tags: map[string]string{"team": fmt.Sprintf("team-%d", i%4)},
		}
		if i%6 == 1 {
			in.Lifecycle = fleet.Spot
		}
		if i%11 == 3 {
			in.State = fleet.Stopped
		}
		if i%7 == 6 {
			in.Tags["aks-managed-poolName"] = "gpupool"
		}
		if i%5 != 4 {
			a := float64(10 + i%60)
			in.Utilization = &fleet.Utilization{
				Window:    &fleet.TimeRange{Start: simNow.AddDate(0, 0, -7), End: simNow},
				GPU:       &fleet.Stats{Avg: a, P95: a + 20, Max: a + 30},
				GPUMemory: &fleet.Stats{Avg: a / 2, P95: a/2 + 10, Max: a/2 + 20},
				CPU:       &fleet.Stats{Avg: 20, P95: 40, Max: 60},
			}
		}
		f.Instances = append(f.Instances, in)
	}
	if err := pricing.Complete(f, testCatalog(t)); err != nil {
		t.Fatal(err)
	}
	return f
}

// testSim serves f with the catalog's sizes and prices.
func testSim(t testing.TB, f *fleet.Fleet, opts sim.Options) (*httptest.Server, *sim.Server) {
	t.Helper()
	base := simcat.Options(f, testCatalog(t))
	opts.Sizes, opts.Prices = base.Sizes, base.Prices
	if opts.Now == nil {
		opts.Now = func() time.Time { return simNow }
	}
	if opts.Subscription == "" {
		opts.Subscription = subA
	}
	s := strictSim(t, f, opts)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv, s
}

// strictSim is a simulator in strict mode: every request the adapter sends
// and every answer it gets is checked against the published Azure models
// (providers/azure/sim/contract); a violation fails the test at its end.
func strictSim(t testing.TB, f *fleet.Fleet, opts sim.Options) *sim.Server {
	t.Helper()
	opts.Contract = contract.New()
	s := sim.New(f, opts)
	t.Cleanup(func() {
		for _, v := range s.Violations() {
			t.Errorf("contract: %s", v)
		}
	})
	return s
}

// testProvider is the adapter pointed at url with azcore's fake credential.
func testProvider(t testing.TB, url string, o providers.Options) *Provider {
	t.Helper()
	o.Endpoint = url
	if o.Now == nil {
		o.Now = func() time.Time { return simNow }
	}
	if o.RetryMaxBackoff == 0 {
		o.RetryMaxBackoff = time.Millisecond
	}
	if o.Adapter == nil {
		o.Adapter = providers.Values{OptSubscriptions: []string{subA}}
	}
	p, err := newProvider(context.Background(), o, &azfake.TokenCredential{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSimConformance runs the whole conformance suite against the
// simulator; it may skip nothing.
func TestSimConformance(t *testing.T) {
	f := testFleet(t, 40)
	sum := providertest.Run(t, providertest.Harness{
		Provider: fleet.Azure,
		Fleet:    f,
		Regions:  []string{"eastus", "westeurope", "westus2"},
		Now:      simNow,
		New:      conformanceProvider,
		NotStoppable: func(in fleet.Instance) bool {
			return in.Tags["aks-managed-poolName"] != ""
		},
		UnknownID:  "no-such-vm",
		PriceCache: true,
	})
	if len(sum.Skipped) > 0 {
		t.Errorf("the Azure adapter must pass every case; skipped: %q", sum.Skipped)
	}
}

// conformanceProvider maps the suite's faults to simulator options and
// builds the adapter against it.
func conformanceProvider(t *testing.T, s providertest.Setup) (providers.Provider, error) {
	ft := s.Faults
	opts := sim.Options{ThrottleRate: ft.ThrottleRate, FailScopes: ft.FailRegions, Latency: ft.Latency, Seed: 3, RetryAfter: 10 * time.Millisecond}
	if ft.DenyList {
		opts.DenyActions = append(opts.DenyActions, "Microsoft.Compute/virtualMachines/read")
	}
	if ft.DenyStop {
		opts.DenyActions = append(opts.DenyActions, ActionDeallocate)
	}
	opts.Fault = func(service, op, scope string) (int, string) {
		switch {
		case service == "monitor" && slices.Contains(ft.FailMetricsRegions, scope):
			return 500, "InternalServerError"
		case ft.FailPrices && service == "prices":
			return 500, "InternalServerError"
		case ft.FailAccount && op == "GetSubscription" && scope == subB:
			return 403, "AuthorizationFailed"
		}
		return 0, ""
	}
	base := simcat.Options(s.Fleet, testCatalog(t))
	opts.Sizes, opts.Prices, opts.Subscription = base.Sizes, base.Prices, subA
	opts.Now = func() time.Time { return simNow }
	url := providertest.Backend(t, strictSim(t, s.Fleet, opts), httptestServe(t))
	now := simNow
	if !s.Now.IsZero() {
		now = s.Now
	}
	subs := []string{subA}
	if ft.FailAccount {
		subs = append(subs, subB)
	}
	o := providers.Options{Endpoint: url, Regions: s.Regions, CacheDir: s.CacheDir, RetryMaxBackoff: time.Millisecond,
		Now: func() time.Time { return now }, Adapter: providers.Values{OptSubscriptions: subs}}
	if ft.NoCredentials {
		return withCredential(t, func(*policy.ClientOptions) (azcore.TokenCredential, error) {
			return nil, errors.New("EnvironmentCredential: missing environment variable AZURE_TENANT_ID")
		}, o)
	}
	p, err := newProvider(context.Background(), o, &azfake.TokenCredential{})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// withCredential builds the adapter through New with credentialFunc replaced.
func withCredential(t *testing.T, fn func(*policy.ClientOptions) (azcore.TokenCredential, error), o providers.Options) (providers.Provider, error) {
	old := credentialFunc
	credentialFunc = fn
	t.Cleanup(func() { credentialFunc = old })
	return New(context.Background(), o)
}

// simRequests reads /_sim/requests.
func simRequests(t testing.TB, url string) map[string]map[string]int {
	t.Helper()
	resp, err := http.Get(url + "/_sim/requests")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]map[string]int
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

// httptestServe starts a test server for the case and closes it at its end.
func httptestServe(t *testing.T) func(http.Handler) string {
	return func(h http.Handler) string {
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		return srv.URL
	}
}
