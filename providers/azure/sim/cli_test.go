package sim_test

// The Azure CLI check: the unchanged `az` (Debian's azure-cli in CI, or
// whatever `az` is on PATH; GPUFINOPS_AZ_CLI names another binary) logs in
// to the simulator's Entra ID as a service principal and runs the lines of
// azCommands in bash against the demo fleet, as docs/azure.md lists them. The
// simulator serves HTTPS with a certificate authority made for the test,
// which az trusts through REQUESTS_CA_BUNDLE; MSAL's instance discovery,
// which always asks login.microsoftonline.com, reaches the simulator with
// the simulator as HTTPS_PROXY. The test skips when no az (or bash) is
// found, and under -short (make test): each az command takes seconds.

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
	"github.com/gpufinops/gpufinops/providers/azure/sim"
	"github.com/gpufinops/gpufinops/providers/azure/sim/contract"
	"github.com/gpufinops/gpufinops/providers/azure/simcat"
	"github.com/gpufinops/gpufinops/providers/file"
	"github.com/gpufinops/gpufinops/providers/simkit"
)

// The demo fleet's Azure VM, and the service principal the test logs in as.
const (
	demoSub    = "0b1f6471-1bf0-4dda-aec3-cb9272f09590"
	demoVM     = "nd-h100-eval"
	demoRG     = "rg-gpu-eastus"
	cliClient  = "11111111-2222-3333-4444-555555555555"
	cliSecret  = "sim-secret"
	demoVMPath = "/subscriptions/" + demoSub + "/resourceGroups/" + demoRG + "/providers/Microsoft.Compute/virtualMachines/" + demoVM
)

// azCommand is one az command line, as docs/azure.md shows it and bash
// runs it: $SIM is the simulator's https URL. check reads its output (JSON).
type azCommand struct {
	line  string
	check func(t *testing.T, s *sim.Server, out []byte)
}

// azCommands run in order, each unchanged: register the simulator as a
// cloud, log in, then read and act.
var azCommands = []azCommand{
	{line: "az cloud register --name gpufinopsSim --endpoint-resource-manager $SIM --profile 2020-09-01-hybrid"},
	{line: "az cloud set --name gpufinopsSim"},
	{line: "az login --service-principal --username " + cliClient + " --password " + cliSecret + " --tenant " + sim.Tenant,
		check: func(t *testing.T, _ *sim.Server, out []byte) {
			var subs []struct {
				ID, TenantID, State string
				User                struct{ Name, Type string }
			}
			decode(t, out, &subs)
			for _, s := range subs {
				if s.ID == demoSub && s.TenantID == sim.Tenant && s.State == "Enabled" && s.User.Name == cliClient && s.User.Type == "servicePrincipal" {
					return
				}
			}
			t.Errorf("az login found %+v, want the demo's subscription %s for the service principal", subs, demoSub)
		}},
	{line: "az account set --subscription " + demoSub},
	{line: "az vm list",
		check: func(t *testing.T, _ *sim.Server, out []byte) {
			var vms []struct {
				ID, Name, Location string
				HardwareProfile    struct{ VMSize string }
				Priority           string
			}
			decode(t, out, &vms)
			if len(vms) != 1 || !strings.EqualFold(vms[0].ID, demoVMPath) || vms[0].Name != demoVM || vms[0].Location != "eastus" ||
				vms[0].HardwareProfile.VMSize != "Standard_ND96isr_H100_v5" || vms[0].Priority != "Regular" {
				t.Errorf("az vm list: %+v, want the demo's one Azure VM %s (Standard_ND96isr_H100_v5 in eastus)", vms, demoVM)
			}
		}},
	{line: `az rest --method post --url '/providers/Microsoft.ResourceGraph/resources?api-version=2021-03-01' --body '{"query":"Resources | where type =~ \"microsoft.compute/virtualmachines\" | project name, location, size = tostring(properties.hardwareProfile.vmSize)"}'`,
		check: func(t *testing.T, _ *sim.Server, out []byte) {
			var res struct {
				TotalRecords int
				Data         []map[string]any
			}
			decode(t, out, &res)
			if res.TotalRecords != 1 || len(res.Data) != 1 || res.Data[0]["name"] != demoVM || res.Data[0]["location"] != "eastus" ||
				res.Data[0]["size"] != "Standard_ND96isr_H100_v5" || len(res.Data[0]) != 3 {
				t.Errorf("Resource Graph answered %s, want one row: name, location and size of %s", out, demoVM)
			}
		}},
	{line: "az vm deallocate --resource-group " + demoRG + " --name " + demoVM,
		check: func(t *testing.T, s *sim.Server, _ []byte) {
			for _, st := range s.State() {
				if st.ID == demoVM && st.State != "stopped" {
					t.Errorf("%s is %q after az vm deallocate returned, want deallocated (stopped)", demoVM, st.State)
				}
			}
		}},
	{line: "az vm get-instance-view --resource-group " + demoRG + " --name " + demoVM,
		check: func(t *testing.T, _ *sim.Server, out []byte) {
			var vm struct {
				InstanceView struct{ Statuses []struct{ Code string } }
			}
			decode(t, out, &vm)
			for _, s := range vm.InstanceView.Statuses {
				if s.Code == "PowerState/deallocated" {
					return
				}
			}
			t.Errorf("instance view %+v, want PowerState/deallocated", vm.InstanceView.Statuses)
		}},
	// Debian's azure-cli 2.45 ships azure-mgmt-compute 29.0.0, which lacks
	// the latest profile's Compute API (2022-11-01), so the cloud above is
	// registered with the Azure Stack profile; that profile has no Azure
	// Monitor, so the metrics are read in the latest.
	{line: "az cloud update --name gpufinopsSim --profile latest"},
	{line: "az monitor metrics list --resource " + demoVMPath + " --namespace Telegraf/nvidia_smi --metric utilization_gpu --aggregation Average --interval PT1H --offset 1d",
		check: func(t *testing.T, _ *sim.Server, out []byte) {
			var res struct {
				Interval string
				Value    []struct {
					Name       struct{ Value string }
					Unit       string
					Timeseries []struct {
						Data []struct {
							TimeStamp string
							Average   *float64
						}
					}
				}
			}
			decode(t, out, &res)
			// az prints the interval as Python prints a timedelta.
			if res.Interval != "1:00:00" || len(res.Value) != 1 || res.Value[0].Name.Value != "utilization_gpu" || res.Value[0].Unit != "Unspecified" || len(res.Value[0].Timeseries) != 1 {
				t.Fatalf("az monitor metrics list: %s\nwant one hourly utilization_gpu series", out)
			}
			data := res.Value[0].Timeseries[0].Data
			values := 0
			for _, d := range data {
				if d.Average != nil {
					values++
					if *d.Average < 0 || *d.Average > 100 {
						t.Errorf("average %v at %s is not a percentage", *d.Average, d.TimeStamp)
					}
				}
			}
			// A day of hours; the demo VM runs around the clock.
			if len(data) < 24 || len(data) > 25 || values < 23 {
				t.Errorf("%d hourly points, %d with a value: want a day's, each with one", len(data), values)
			}
		}},
}

func decode(t *testing.T, out []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(out, v); err != nil {
		t.Fatalf("az printed no JSON of the expected shape: %v\n%s", err, out)
	}
}

// azCLI finds the CLI or skips the test.
func azCLI(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("GPUFINOPS_AZ_CLI"); bin != "" {
		return bin
	}
	bin, err := exec.LookPath("az")
	if err != nil {
		t.Skip("the Azure CLI is not on PATH (CI installs Debian's azure-cli)")
	}
	return bin
}

// serveTLS serves h over HTTPS and cleartext on one loopback port, as the
// HTTPS proxy for Entra ID's public host too (cloudsim --tls does the
// same), and writes the authority's certificate to a file.
func serveTLS(t *testing.T, h http.Handler) (url, caFile string) {
	t.Helper()
	tc, err := simkit.NewTLS(sim.EntraHost)
	if err != nil {
		t.Fatal(err)
	}
	caFile = filepath.Join(t.TempDir(), "cloudsim-ca.pem")
	if err := tc.WriteCA(caFile); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: simkit.ConnectProxy(h, tc.Config, sim.EntraHost), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(simkit.DualListener(ln, tc.Config)) }()
	t.Cleanup(func() { srv.Close() })
	return "https://" + ln.Addr().String(), caFile
}

// azEnv serves h over TLS behind az's proxy and returns the environment
// az runs in against it: a fresh home, the CLI named by GPUFINOPS_AZ_CLI
// first on PATH as "az", the simulator's CA, no telemetry, JSON output.
func azEnv(t *testing.T, bin string, h http.Handler) []string {
	t.Helper()
	url, caFile := serveTLS(t, h)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(url, "https://"))
	home := t.TempDir()
	binDir := t.TempDir()
	if err := os.Symlink(bin, filepath.Join(binDir, "az")); err != nil {
		t.Fatal(err)
	}
	return []string{"SIM=" + url, "HOME=" + home, "AZURE_CONFIG_DIR=" + filepath.Join(home, ".azure"), "PATH=" + binDir + ":" + os.Getenv("PATH"),
		"REQUESTS_CA_BUNDLE=" + caFile, "HTTPS_PROXY=http://127.0.0.1:" + port, "NO_PROXY=127.0.0.1,localhost",
		"AZURE_CORE_COLLECT_TELEMETRY=false", "AZURE_CORE_OUTPUT=json", "AZURE_CORE_ONLY_SHOW_ERRORS=true", "AZURE_CORE_NO_COLOR=true"}
}

func TestAzureCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: each az command takes seconds (make test-all runs it)")
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
	f, err := file.Demo()
	if err != nil {
		t.Fatal(err)
	}
	if err := pricing.Complete(f, cat); err != nil {
		t.Fatal(err)
	}
	opts := simcat.Options(f, cat)
	opts.Clients = map[string]string{cliClient: cliSecret}
	opts.Contract = contract.New()
	// The wall clock: az asks for the last day by its own clock.
	s := sim.New(f, opts)
	rec := &simkit.Recorder{H: s}
	env := azEnv(t, bin, rec)

	version, _ := exec.Command(bin, "version", "--output", "tsv", "--query", `"azure-cli"`).CombinedOutput()
	t.Logf("%s: azure-cli %s", bin, strings.TrimSpace(string(version)))
	for _, c := range azCommands {
		before := rec.Len()
		start := time.Now()
		stdout := runAz(t, bash, env, rec, c.line)
		t.Logf("%s: %d request(s), %.1f s", c.line, rec.Len()-before, time.Since(start).Seconds())
		if c.check != nil {
			if !t.Run(strings.Join(strings.Fields(c.line)[1:3], " "), func(t *testing.T) { c.check(t, s, stdout) }) {
				t.Logf("wire:\n%s", rec.Since(before))
			}
		}
	}
	checkAzContract(t, s.Violations())
}

// runAz runs one az command line with bash in env and returns its
// output; a failure stops the test with az's stderr and the exchanges it
// made with the simulator.
func runAz(t *testing.T, bash string, env []string, rec *simkit.Recorder, line string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bash, "-c", line)
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	before := rec.Len()
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s\nwire:\n%s", line, err, stderr.String(), rec.Since(before))
	}
	return stdout.Bytes()
}

// checkAzContract fails on the contract violations of a strict simulator
// az ran against: every request az sends and every answer it gets is
// checked against the published models. The models are those of the
// api-versions the adapter sends, and az sends older ones: that difference
// is logged, anything else fails.
func checkAzContract(t *testing.T, violations []string) {
	t.Helper()
	for _, joined := range violations {
		for _, v := range strings.Split(joined, "\n") {
			if strings.Contains(v, "query api-version: ") && strings.Contains(v, "but the model describes") {
				t.Logf("contract (az's api-version): %s", v)
				continue
			}
			t.Errorf("contract: %s", v)
		}
	}
}

// TestAzureCLICommandsDocumented: docs/azure.md lists every command the
// CLI test runs, as it runs them.
func TestAzureCLICommandsDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "azure.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range azCommands {
		if !strings.Contains(string(doc), "\n"+c.line+"\n") {
			t.Errorf("docs/azure.md does not list the line\n%s", c.line)
		}
	}
}
