package sim

import (
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// TestGcloudAgainstTheSimulator checks the simulator with Google's own
// client, gcloud (Debian's google-cloud-cli), where it is installed: the
// aggregated listing, a stop waited on through its zone operation, and the
// state after it.
func TestGcloudAgainstTheSimulator(t *testing.T) {
	gcloud, err := exec.LookPath("gcloud")
	if err != nil {
		t.Skip("gcloud is not installed")
	}
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	f := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind, Instances: []fleet.Instance{
		{ID: "vm-a", Provider: fleet.GCP, Account: "proj-cli", Region: "us-central1", Zone: "us-central1-a", InstanceType: "a2-highgpu-1g",
			GPU: fleet.GPU{Model: "A100", Count: 1}, Lifecycle: fleet.Spot, State: fleet.Running},
		{ID: "vm-b", Provider: fleet.GCP, Account: "proj-cli", Region: "europe-west4", Zone: "europe-west4-b", InstanceType: "n1-standard-8",
			GPU: fleet.GPU{Model: "T4", Count: 2}, Lifecycle: fleet.OnDemand, State: fleet.Running},
	}}
	srv := httptest.NewServer(New(f, Options{Now: func() time.Time { return now }, Types: []MachineType{{Name: "a2-highgpu-1g", VCPUs: 12, MemoryMB: 87040, Accelerator: "nvidia-tesla-a100", AcceleratorCount: 1}}}))
	defer srv.Close()
	env := []string{"CLOUDSDK_CONFIG=" + t.TempDir(), "CLOUDSDK_AUTH_ACCESS_TOKEN=test", "CLOUDSDK_CORE_DISABLE_PROMPTS=1",
		"CLOUDSDK_CORE_PROJECT=proj-cli", "CLOUDSDK_API_ENDPOINT_OVERRIDES_COMPUTE=" + srv.URL + "/compute/v1/", "HOME=" + t.TempDir(), "PATH=/usr/bin:/bin"}
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(gcloud, args...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("gcloud %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	list := run("compute", "instances", "list", "--format=value(name,zone.basename(),status,scheduling.provisioningModel,guestAccelerators[0].acceleratorCount)")
	for _, want := range []string{"vm-a\tus-central1-a\tRUNNING\tSPOT", "vm-b\teurope-west4-b\tRUNNING\tSTANDARD\t2"} {
		if !strings.Contains(list, want) {
			t.Errorf("gcloud compute instances list:\n%s\nwant a line %q", list, want)
		}
	}
	run("compute", "instances", "stop", "vm-b", "--zone", "europe-west4-b")
	if got := strings.TrimSpace(run("compute", "instances", "describe", "vm-b", "--zone", "europe-west4-b", "--format=value(status)")); got != "TERMINATED" {
		t.Errorf("vm-b is %q after gcloud stopped it, want TERMINATED", got)
	}
}
