package sim

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// TestCommittedVMsAreStandard holds the documented fact: a VM that a
// committed use discount covers is an ordinary STANDARD VM. CUDs are
// applied to eligible usage in billing ("Committed use discounts overview",
// https://cloud.google.com/compute/docs/instances/committed-use-discounts-overview),
// and scheduling.provisioningModel RESERVATION_BOUND means "Bound to the
// lifecycle of the reservation in which it is provisioned"
// (cloud.google.com/go/compute v1.75.0, apiv1/computepb/compute.pb.go,
// Scheduling_ProvisioningModel).
func TestCommittedVMsAreStandard(t *testing.T) {
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	f := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind}
	for i, life := range []fleet.Lifecycle{fleet.Committed, fleet.OnDemand, fleet.Spot} {
		f.Instances = append(f.Instances, fleet.Instance{
			ID: "vm-" + string(rune('a'+i)), Provider: fleet.GCP, Account: "proj", Region: "us-central1", Zone: "us-central1-a",
			InstanceType: "a2-highgpu-1g", GPU: fleet.GPU{Model: "A100", Count: 1, MemoryGiB: 40}, Lifecycle: life, State: fleet.Running,
		})
	}
	srv := httptest.NewServer(New(f, Options{Project: "proj", Now: func() time.Time { return now }}))
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/compute/v1/projects/proj/aggregated/instances", nil)
	req.Header.Set("Authorization", "Bearer x")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list struct {
		Items map[string]struct {
			Instances []struct {
				Name       string
				Scheduling struct{ ProvisioningModel string }
			}
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %v", resp.StatusCode, err)
	}
	want := map[string]string{"vm-a": "STANDARD", "vm-b": "STANDARD", "vm-c": "SPOT"}
	got := map[string]string{}
	for _, scoped := range list.Items {
		for _, in := range scoped.Instances {
			got[in.Name] = in.Scheduling.ProvisioningModel
		}
	}
	for name, model := range want {
		if got[name] != model {
			t.Errorf("%s: provisioningModel %q, want %q", name, got[name], model)
		}
	}
}
