package sim_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/providers/azure/sim"
)

// metricsCall sends one Azure Monitor request and decodes its JSON answer.
func metricsCall(t *testing.T, method, u string, body []byte) map[string]any {
	t.Helper()
	req, _ := http.NewRequest(method, u, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer x")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("%s %s: status %d: %v %v", method, u, resp.StatusCode, err, out)
	}
	return out
}

// TestMetricsAnswersHaveTheirModelsFields: a single-resource metrics answer
// has the fields of metrics_API.json's Response (cost, timespan, interval,
// namespace, resourceregion, value) and none of the batch's (starttime,
// endtime, resourceid); a batch answer's values is an array even when no
// resource ID is known (metricBatch.json, MetricResultsResponse.values).
// Source: azure-rest-api-specs specification/monitor/resource-manager/
// Microsoft.Insights (metrics_API.json, definition Response) and
// specification/monitor/data-plane/Microsoft.Insights (metricBatch.json).
func TestMetricsAnswersHaveTheirModelsFields(t *testing.T) {
	srv, _ := start(t, fleetOf(1), sim.Options{})
	id := "/subscriptions/" + sub + "/resourceGroups/rg-gpu-eastus/providers/Microsoft.Compute/virtualMachines/vm-000"
	q := url.Values{"api-version": {"2023-10-01"}, "metricnamespace": {sim.PlatformNamespace}, "metricnames": {sim.MetricCPU},
		"timespan": {now.Add(-2*time.Hour).Format(time.RFC3339) + "/" + now.Format(time.RFC3339)}, "interval": {"PT1H"}}
	single := metricsCall(t, http.MethodGet, srv.URL+id+"/providers/Microsoft.Insights/metrics?"+q.Encode(), nil)
	var keys []string
	for k := range single {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if got := strings.Join(keys, ","); got != "cost,interval,namespace,resourceregion,timespan,value" {
		t.Errorf("single-resource answer fields %s, want cost,interval,namespace,resourceregion,timespan,value", got)
	}
	bq := url.Values{"api-version": {"2024-02-01"}, "metricnamespace": {sim.PlatformNamespace}, "metricnames": {sim.MetricCPU},
		"starttime": {now.Add(-2 * time.Hour).Format(time.RFC3339)}, "endtime": {now.Format(time.RFC3339)}, "interval": {"PT1H"}}
	unknown, _ := json.Marshal(map[string]any{"resourceids": []string{strings.Replace(id, "vm-000", "no-such-vm", 1)}})
	batch := metricsCall(t, http.MethodPost, srv.URL+"/subscriptions/"+sub+"/metrics:getBatch?"+bq.Encode(), unknown)
	if v, ok := batch["values"].([]any); !ok || len(v) != 0 {
		t.Errorf("a batch of unknown IDs answered values %#v, want an empty array", batch["values"])
	}
}
