package sim

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// TestCommitmentMemoryInMB holds the fact of FACTS.md: a resource
// commitment's MEMORY amount is in MB (ResourceCommitment.amount: "For
// memory, you specify the amount of MB", compute v1 discovery document),
// every amount an int64 written as a JSON string; an expired commitment is
// listed with status EXPIRED.
func TestCommitmentMemoryInMB(t *testing.T) {
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	start, end, old := now.AddDate(-1, 0, 0), now.AddDate(0, 6, 0), now.AddDate(0, -1, 0)
	f := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind,
		Instances: []fleet.Instance{{ID: "vm-a", Provider: fleet.GCP, Account: "proj", Region: "us-central1", Zone: "us-central1-a",
			InstanceType: "g2-standard-48", GPU: fleet.GPU{Model: "L4", Count: 4, MemoryGiB: 24}, Lifecycle: fleet.OnDemand, State: fleet.Running}},
		Commitments: []fleet.Held{
			{ID: "cud-a", Provider: fleet.GCP, Account: "proj", Kind: "resource-cud", Scope: fleet.HeldScope{Level: "region", Region: "us-central1"}, Term: "1y", Start: &start, End: &end,
				Resources: []fleet.HeldResource{{Type: "vcpu", Amount: 48}, {Type: "memory", Amount: 192}, {Type: "gpu", GPUModel: "L4", Amount: 4}}},
			{ID: "cud-old", Provider: fleet.GCP, Account: "proj", Kind: "resource-cud", Scope: fleet.HeldScope{Level: "region", Region: "us-central1"}, Term: "1y", Start: &start, End: &old,
				Resources: []fleet.HeldResource{{Type: "vcpu", Amount: 8}}},
		}}
	srv := httptest.NewServer(New(f, Options{Project: "proj", Now: func() time.Time { return now }}))
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/compute/v1/projects/proj/aggregated/commitments", nil)
	req.Header.Set("Authorization", "Bearer x")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list struct {
		Items map[string]struct {
			Commitments []struct {
				Name, Status, Plan, Type string
				Resources                []struct{ Type, AcceleratorType, Amount string }
			}
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %v", resp.StatusCode, err)
	}
	got := map[string]string{}
	for _, c := range list.Items["regions/us-central1"].Commitments {
		got[c.Name] = c.Status
		if c.Name != "cud-a" {
			continue
		}
		amounts := map[string]string{}
		for _, r := range c.Resources {
			amounts[r.Type+r.AcceleratorType] = r.Amount
		}
		if amounts["VCPU"] != "48" || amounts["MEMORY"] != "196608" || amounts["ACCELERATORnvidia-l4"] != "4" || c.Plan != "TWELVE_MONTH" || c.Type != "GRAPHICS_OPTIMIZED" {
			t.Errorf("cud-a: %+v", c)
		}
	}
	if got["cud-a"] != "ACTIVE" || got["cud-old"] != "EXPIRED" {
		t.Errorf("statuses %v", got)
	}
}
