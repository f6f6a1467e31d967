package azure

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/providers"
	"github.com/gpufinops/gpufinops/providers/azure/sim"
	"github.com/gpufinops/gpufinops/providers/azure/sim/contract"
)

// TestStrictModeRefusesOffModelRequests: the strict simulator the adapter's
// end-to-end tests run against records a request the model forbids (a
// Resource Graph page over 1,000 rows, a metrics:getBatch of 51 resources,
// an api-version the model does not describe), so such a request from the
// adapter fails its test.
func TestStrictModeRefusesOffModelRequests(t *testing.T) {
	s := sim.New(runningFleet(t, 3), sim.Options{Subscription: subA, Now: func() time.Time { return simNow }, Contract: contract.New()})
	srv := httptest.NewServer(s)
	defer srv.Close()
	ids := make([]string, 51)
	for i := range ids {
		ids[i] = `"/subscriptions/` + subA + `/resourceGroups/rg-gpu-eastus/providers/Microsoft.Compute/virtualMachines/gpu-vm-000"`
	}
	for _, r := range []struct{ method, path, body, want string }{
		{"POST", "/providers/Microsoft.ResourceGraph/resources?api-version=2024-04-01", `{"query":"Resources | project id","options":{"$top":5000}}`, "maximum 1000"},
		{"POST", "/subscriptions/" + subA + "/metrics:getBatch?api-version=2024-02-01&metricnamespace=x&metricnames=y", `{"resourceids":[` + strings.Join(ids, ",") + `]}`, "at most 50"},
		{"GET", "/subscriptions/" + subA + "/providers/Microsoft.Compute/virtualMachines?api-version=2024-07-01", "", "the model describes 2025-04-01"},
	} {
		before := len(s.Violations())
		req, _ := http.NewRequest(r.method, srv.URL+r.path, bytes.NewReader([]byte(r.body)))
		req.Header.Set("Authorization", "Bearer x")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		v := s.Violations()
		if len(v) != before+1 || !strings.Contains(v[len(v)-1], r.want) {
			t.Errorf("%s %s: violations %q, want one saying %q", r.method, r.path, v[before:], r.want)
		}
	}
}

// TestAdapterScanMeetsTheModels: a whole scan (inventory through Resource
// Graph and the scale-set reads, metrics:getBatch in batches of 50,
// prices) against the strict simulator sends only requests the models
// allow and gets only answers they describe; testSim fails the test on any
// violation.
func TestAdapterScanMeetsTheModels(t *testing.T) {
	srv, s := testSim(t, testFleet(t, 130), sim.Options{})
	p := testProvider(t, srv.URL, providers.Options{Adapter: providers.Values{OptSubscriptions: []string{subA}, OptMetricsBatch: MaxMetricsBatch}})
	res, err := providers.Collect(context.Background(), p, providers.CollectOptions{Window: window()})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Fleet.Instances) == 0 {
		t.Fatal("the scan found no instances")
	}
	counts := s.Counts()
	for _, op := range []string{"resourcegraph:Resources", "monitor:MetricsBatch", "prices:RetailPrices"} {
		service, name, _ := strings.Cut(op, ":")
		if counts[service][name] == 0 {
			t.Errorf("the scan made no %s request, so strict mode checked none", op)
		}
	}
	if v := s.Violations(); len(v) > 0 {
		t.Errorf("%d contract violations", len(v))
	}
}
