package sim_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/providers/file"
	"github.com/gpufinops/gpufinops/providers/gcp/sim"
	"github.com/gpufinops/gpufinops/providers/simkit"
)

// vertexCommands are gcloud's own listings of the Vertex AI endpoints and
// Workbench instances of testdata/fleets/managed-ai.yaml, as
// docs/managed-ai.md#vertex-ai-and-workbench-gcp shows them.
var vertexCommands = []gcloudCommand{
	{line: "gcloud ai endpoints list --region=us-central1 --format=json", method: "aiplatform projects.locations.endpoints.list",
		check: func(t *testing.T, _ *sim.Server, out []byte) {
			var eps []struct {
				Name, DisplayName string
				DeployedModels    []struct {
					ID                 string
					DedicatedResources struct {
						MachineSpec     struct{ MachineType, AcceleratorType string }
						MinReplicaCount int
					}
				}
			}
			decodeJSON(t, out, &eps)
			if len(eps) != 1 || eps[0].DisplayName != "fraud-scorer" || !strings.HasSuffix(eps[0].Name, "/locations/us-central1/endpoints/4417283746") ||
				len(eps[0].DeployedModels) != 1 || eps[0].DeployedModels[0].ID != "8812" ||
				eps[0].DeployedModels[0].DedicatedResources.MachineSpec.MachineType != "a2-highgpu-1g" ||
				eps[0].DeployedModels[0].DedicatedResources.MachineSpec.AcceleratorType != "NVIDIA_TESLA_A100" {
				t.Errorf("endpoints %+v, want fraud-scorer with deployed model 8812 on a2-highgpu-1g", eps)
			}
		}},
	{line: "gcloud workbench instances list --location=us-central1-a --format=json", method: "notebooks projects.locations.instances.list",
		check: func(t *testing.T, _ *sim.Server, out []byte) {
			var ins []struct {
				Name, State string
				GceSetup    struct {
					MachineType        string
					AcceleratorConfigs []struct{ Type, CoreCount string }
				}
			}
			decodeJSON(t, out, &ins)
			if len(ins) != 1 || ins[0].Name != "projects/ml-prod-123/locations/us-central1-a/instances/wb-carol" || ins[0].State != "ACTIVE" ||
				!strings.HasSuffix(ins[0].GceSetup.MachineType, "/g2-standard-8") || len(ins[0].GceSetup.AcceleratorConfigs) != 1 ||
				ins[0].GceSetup.AcceleratorConfigs[0].Type != "NVIDIA_L4" {
				t.Errorf("instances %+v, want wb-carol, ACTIVE, g2-standard-8 with an NVIDIA_L4", ins)
			}
		}},
}

// TestGcloudVertexAgainstTheSimulator runs gcloud's Vertex AI and
// Workbench listings against the simulator serving the managed AI
// fixture (skipped as TestGcloudAgainstTheSimulator is).
func TestGcloudVertexAgainstTheSimulator(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: each gcloud command takes a second or more (make test-all runs it)")
	}
	gcloud, err := exec.LookPath("gcloud")
	if err != nil {
		t.Skip("gcloud is not on PATH (CI installs Debian's google-cloud-cli)")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not on PATH")
	}
	f, err := file.Load(filepath.Join("..", "..", "..", "testdata", "fleets", "managed-ai.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	s := sim.New(f, sim.Options{})
	rec := &simkit.Recorder{H: s}
	url := serve(t, rec)
	env := append(gcloudEnv(url, t.TempDir()), "HOME="+t.TempDir(), "PATH="+filepath.Dir(gcloud)+":/usr/bin:/bin",
		"CLOUDSDK_CORE_PROJECT=ml-prod-123", "CLOUDSDK_API_ENDPOINT_OVERRIDES_AIPLATFORM="+url+"/", "CLOUDSDK_API_ENDPOINT_OVERRIDES_NOTEBOOKS="+url+"/")
	for _, c := range vertexCommands {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		cmd := exec.CommandContext(ctx, bash, "-c", "set -o pipefail; "+c.line)
		cmd.Env = env
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		before := rec.Len()
		err := cmd.Run()
		cancel()
		if err != nil {
			t.Fatalf("%s: %v\n%s%s\nwire:\n%s", c.line, err, stdout.String(), stderr.String(), rec.Since(before))
		}
		t.Logf("%s (%s): %d request(s)", c.line, c.method, rec.Len()-before)
		c.check(t, s, stdout.Bytes())
	}
}

// TestGcloudVertexCommandsDocumented: docs/managed-ai.md#vertex-ai-and-workbench-gcp lists the
// commands the test runs.
func TestGcloudVertexCommandsDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "managed-ai.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range vertexCommands {
		if !strings.Contains(string(doc), "\n"+c.line+"\n") {
			t.Errorf("docs/managed-ai.md#vertex-ai-and-workbench-gcp does not list the line\n%s", c.line)
		}
	}
}
