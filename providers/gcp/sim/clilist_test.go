package sim

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

func cliFleet() *fleet.Fleet {
	return &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind, Instances: []fleet.Instance{
		{ID: "vm-a", Provider: fleet.GCP, Account: "proj-cli", Region: "us-central1", Zone: "us-central1-a", InstanceType: "a2-highgpu-1g",
			GPU: fleet.GPU{Model: "A100", Count: 1}, Lifecycle: fleet.OnDemand, State: fleet.Running,
			Utilization: &fleet.Utilization{GPU: &fleet.Stats{Avg: 50, P95: 60, Max: 70}}},
	}}
}

func getBody(t *testing.T, u string, v any) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	req.Header.Set("Authorization", "Bearer test")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode
}

// TestAggregatedMachineTypesListsEveryZone: without a filter,
// machineTypes.aggregatedList lists every type in every zone, paged by
// maxResults; with name = "X", that type in every zone.
func TestAggregatedMachineTypesListsEveryZone(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	s := New(cliFleet(), Options{Now: func() time.Time { return now }, Types: []MachineType{
		{Name: "a2-highgpu-1g", VCPUs: 12, MemoryMB: 87040, Accelerator: "nvidia-tesla-a100", AcceleratorCount: 1},
		{Name: "g2-standard-8", VCPUs: 8, MemoryMB: 32768}}})
	srv := httptest.NewServer(s)
	defer srv.Close()
	zones := len(s.zones["us-central1"])
	seen := map[string]bool{}
	token, pages := "", 0
	for {
		var page struct {
			Items         map[string]struct{ MachineTypes []struct{ Name, Zone string } }
			NextPageToken string
		}
		if st := getBody(t, srv.URL+"/compute/v1/projects/proj-cli/aggregated/machineTypes?maxResults=3&pageToken="+url.QueryEscape(token), &page); st != 200 {
			t.Fatalf("status %d", st)
		}
		pages++
		for scope, it := range page.Items {
			for _, mt := range it.MachineTypes {
				if "zones/"+mt.Zone != scope || seen[mt.Name+" "+mt.Zone] {
					t.Errorf("%s in %s (scope %s), or twice", mt.Name, mt.Zone, scope)
				}
				seen[mt.Name+" "+mt.Zone] = true
			}
		}
		if token = page.NextPageToken; token == "" {
			break
		}
	}
	if len(seen) != 2*zones || pages != (2*zones+2)/3 {
		t.Errorf("%d types over %d pages (%v), want 2 types in each of %d zones, 3 a page", len(seen), pages, seen, zones)
	}
	var one struct {
		Items map[string]struct{ MachineTypes []struct{ Name string } }
	}
	getBody(t, srv.URL+"/compute/v1/projects/proj-cli/aggregated/machineTypes?filter="+url.QueryEscape(`name = "g2-standard-8"`), &one)
	n := 0
	for _, it := range one.Items {
		for _, mt := range it.MachineTypes {
			if mt.Name != "g2-standard-8" {
				t.Errorf("filtered listing has %s", mt.Name)
			}
			n++
		}
	}
	if n != zones {
		t.Errorf("g2-standard-8 in %d zones, want %d", n, zones)
	}
}

// TestTimeSeriesOverREST: projects.timeSeries.list answers the gRPC
// method's series as proto3 JSON, and refuses a parameter the method does
// not have.
func TestTimeSeriesOverREST(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	srv := httptest.NewServer(New(cliFleet(), Options{Now: func() time.Time { return now }}))
	defer srv.Close()
	q := url.Values{"filter": {`metric.type = "agent.googleapis.com/gpu/utilization"`}, "interval.startTime": {now.Add(-3 * time.Hour).Format(time.RFC3339)},
		"interval.endTime": {now.Format(time.RFC3339)}, "aggregation.alignmentPeriod": {"3600s"}, "aggregation.perSeriesAligner": {"ALIGN_COUNT"}}
	var res struct {
		TimeSeries []struct {
			Metric    struct{ Type string }
			ValueType string
			Points    []struct {
				Interval struct{ EndTime string }
				Value    struct{ Int64Value string }
			}
		}
	}
	if st := getBody(t, srv.URL+"/v3/projects/proj-cli/timeSeries?"+q.Encode(), &res); st != 200 || len(res.TimeSeries) != 1 {
		t.Fatalf("status %d, %+v", st, res)
	}
	ts := res.TimeSeries[0]
	// ALIGN_COUNT answers INT64, which proto3 JSON writes as a string.
	if ts.Metric.Type != "agent.googleapis.com/gpu/utilization" || ts.ValueType != "INT64" || len(ts.Points) != 3 || ts.Points[0].Value.Int64Value != "60" {
		t.Errorf("series %+v, want three hourly counts of 60, newest first", ts)
	}
	q.Set("aggregation.perSeriesAligner", "ALIGN_AVERAGE")
	var e struct{ Error struct{ Code int } }
	if st := getBody(t, srv.URL+"/v3/projects/proj-cli/timeSeries?"+q.Encode(), &e); st != 400 || e.Error.Code != 400 {
		t.Errorf("an unknown aligner: %d %+v", st, e)
	}
	q.Del("aggregation.perSeriesAligner")
	q.Set("bogus", "1")
	if st := getBody(t, srv.URL+"/v3/projects/proj-cli/timeSeries?"+q.Encode(), &e); st != 400 {
		t.Errorf("an unknown parameter: %d", st)
	}
}
