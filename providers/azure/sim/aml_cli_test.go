package sim_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpufinops/gpufinops/pricing/catalog"
	"github.com/gpufinops/gpufinops/providers/azure/sim"
	"github.com/gpufinops/gpufinops/providers/azure/sim/contract"
	"github.com/gpufinops/gpufinops/providers/azure/simcat"
	"github.com/gpufinops/gpufinops/providers/simkit"
)

// The Azure ML resources of testdata/fleets/managed-ai.yaml.
const (
	mlWS = "/subscriptions/" + mlSub + "/resourceGroups/ml-rg/providers/Microsoft.MachineLearningServices/workspaces/ws-ml"
	mlCI = mlWS + "/computes/ci-bob"
)

// amlCommands are the Azure ML lines docs/managed-ai.md#azure-machine-learning shows, run
// with az rest against the simulator after logging in as azCommands do.
var amlCommands = []azCommand{
	{line: "az cloud register --name gpufinopsSimML --endpoint-resource-manager $SIM --profile 2020-09-01-hybrid"},
	{line: "az cloud set --name gpufinopsSimML"},
	{line: "az login --service-principal --username " + cliClient + " --password " + cliSecret + " --tenant " + sim.Tenant},
	{line: "az account set --subscription " + mlSub},
	{line: "az rest --method get --url '/subscriptions/" + mlSub + "/providers/Microsoft.MachineLearningServices/workspaces?api-version=2025-09-01'",
		check: func(t *testing.T, _ *sim.Server, out []byte) {
			var res struct {
				Value []struct{ ID, Name, Location string }
			}
			decode(t, out, &res)
			if len(res.Value) != 1 || res.Value[0].ID != mlWS || res.Value[0].Location != "eastus" {
				t.Errorf("workspaces %+v, want ws-ml in eastus", res.Value)
			}
		}},
	{line: "az rest --method get --url '" + mlWS + "/computes?api-version=2025-09-01'",
		check: func(t *testing.T, _ *sim.Server, out []byte) {
			var res struct {
				Value []struct {
					Name       string
					Properties struct{ ComputeType string }
				}
			}
			decode(t, out, &res)
			if len(res.Value) != 2 {
				t.Errorf("computes %+v, want ci-bob and gpu-cluster", res.Value)
			}
		}},
	{line: "az rest --method post --url '" + mlCI + "/stop?api-version=2025-09-01'",
		check: func(t *testing.T, s *sim.Server, _ []byte) {
			for _, st := range s.State() {
				if st.ID == mlCI && st.State != "stopped" {
					t.Errorf("ci-bob is %q after the stop, want stopped", st.State)
				}
			}
		}},
}

// TestAzureCLIAzureML: the unchanged az reads the Azure ML lists and stops
// a compute instance through az rest, against the strict simulator.
func TestAzureCLIAzureML(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: each az command takes seconds")
	}
	bin := azCLI(t)
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not on PATH")
	}
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	f := managedAI(t)
	opts := simcat.Options(f, cat)
	opts.Clients = map[string]string{cliClient: cliSecret}
	opts.Contract = contract.New()
	opts.Subscription = mlSub
	s := sim.New(f, opts)
	rec := &simkit.Recorder{H: s}
	env := azEnv(t, bin, rec)
	for _, c := range amlCommands {
		stdout := runAz(t, bash, env, rec, c.line)
		if c.check != nil {
			c.check(t, s, stdout)
		}
	}
	checkAzContract(t, s.Violations())
}

// TestAzureCLIAzureMLDocumented: docs/managed-ai.md#azure-machine-learning lists the az rest
// lines the test runs.
func TestAzureCLIAzureMLDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "managed-ai.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range amlCommands[4:] {
		if !strings.Contains(string(doc), "\n"+c.line+"\n") {
			t.Errorf("docs/managed-ai.md#azure-machine-learning does not list the line\n%s", c.line)
		}
	}
}
