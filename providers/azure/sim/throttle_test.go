package sim_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/providers/azure/sim"
)

// TestThrottleDialects: each service throttles in its own words, as Azure
// documents them. The Compute resource provider answers 429
// OperationNotAllowed with a TooManyRequests detail naming the policy and
// an x-ms-ratelimit-remaining-resource header per policy
// (https://learn.microsoft.com/troubleshoot/azure/virtual-machines/windows/troubleshooting-throttling-errors),
// which its reads carry too; Resource Graph answers 429 RateLimiting with
// x-ms-user-quota-remaining 0 and x-ms-user-quota-resets-after
// (https://learn.microsoft.com/azure/governance/resource-graph/concepts/guidance-for-throttled-requests);
// Azure Resource Manager answers 429 with Retry-After
// (https://learn.microsoft.com/azure/azure-resource-manager/management/request-limits-and-throttling).
func TestThrottleDialects(t *testing.T) {
	call := func(srv string, method, path string, body []byte) (*http.Response, string, string) {
		t.Helper()
		req, _ := http.NewRequest(method, srv+path, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer x")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b struct {
			Error struct {
				Code    string
				Details []struct{ Code, Target string }
			}
		}
		_ = json.NewDecoder(resp.Body).Decode(&b)
		detail := ""
		if len(b.Error.Details) > 0 {
			detail = b.Error.Details[0].Code + "/" + b.Error.Details[0].Target
		}
		return resp, b.Error.Code, detail
	}
	vms := "/subscriptions/" + sub + "/providers/Microsoft.Compute/virtualMachines?api-version=2024-07-01"
	calm, _ := start(t, fleetOf(1), sim.Options{})
	resp, _, _ := call(calm.URL, http.MethodGet, vms, nil)
	if h := strings.Join(resp.Header.Values("x-ms-ratelimit-remaining-resource"), ","); resp.StatusCode != 200 || !strings.Contains(h, "Microsoft.Compute/HighCostGet3Min;") || !strings.Contains(h, "Microsoft.Compute/HighCostGet30Min;") {
		t.Errorf("a VM list: %d, x-ms-ratelimit-remaining-resource %q, want both HighCostGet policies", resp.StatusCode, h)
	}

	srv, _ := start(t, fleetOf(1), sim.Options{ThrottleRate: 1, RetryAfter: 3 * time.Second})
	resp, code, detail := call(srv.URL, http.MethodGet, vms, nil)
	if resp.StatusCode != 429 || code != "OperationNotAllowed" || detail != "TooManyRequests/HighCostGet3Min" ||
		!strings.Contains(strings.Join(resp.Header.Values("x-ms-ratelimit-remaining-resource"), ","), "Microsoft.Compute/HighCostGet3Min;0") || resp.Header.Get("Retry-After") != "3" {
		t.Errorf("throttled VM list: %d %s %s, headers %v", resp.StatusCode, code, detail, resp.Header)
	}
	q, _ := json.Marshal(map[string]any{"query": "Resources | project id", "subscriptions": []string{sub}})
	resp, code, detail = call(srv.URL, http.MethodPost, "/providers/Microsoft.ResourceGraph/resources?api-version=2024-04-01", q)
	if resp.StatusCode != 429 || code != "RateLimiting" || detail != "RateLimiting/" || resp.Header.Get("x-ms-user-quota-remaining") != "0" || resp.Header.Get("x-ms-user-quota-resets-after") == "" {
		t.Errorf("throttled Resource Graph query: %d %s %s, headers %v", resp.StatusCode, code, detail, resp.Header)
	}
	resp, code, _ = call(srv.URL, http.MethodGet, "/subscriptions/"+sub+"?api-version=2022-12-01", nil)
	if resp.StatusCode != 429 || code != "TooManyRequests" || resp.Header.Get("Retry-After") != "3" {
		t.Errorf("throttled subscription read: %d %s, headers %v", resp.StatusCode, code, resp.Header)
	}
}
