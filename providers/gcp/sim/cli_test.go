package sim_test

// The gcloud check: Google's own CLI (Debian's google-cloud-cli in CI, or
// whatever gcloud is on PATH) runs, unchanged, a command for every method
// the adapter calls against the simulator serving the demo fleet, as
// docs/gcp.md lists them; where gcloud has no command (testIamPermissions,
// the Billing Catalog's SKUs, Monitoring's time series), curl sends the REST
// call with gcloud's access token. Each line runs in bash, as a user would
// type it. The test skips when gcloud (or bash) is absent, the curl lines
// when curl is, and under -short (make test): each gcloud command takes a
// second or more.

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
	"github.com/gpufinops/gpufinops/providers/file"
	"github.com/gpufinops/gpufinops/providers/gcp/sim"
	"github.com/gpufinops/gpufinops/providers/gcp/simcat"
	"github.com/gpufinops/gpufinops/providers/simkit"
)

// gcloudCommand is one command line as docs/gcp.md shows it ($SIM is the
// simulator's URL); method the API method it calls, check reads its output.
type gcloudCommand struct {
	line, method string
	check        func(t *testing.T, s *sim.Server, out []byte)
}

const token = `-H "Authorization: Bearer $(gcloud auth print-access-token)"`

// gcloudCommands cover every method the adapter calls (providers/gcp), in
// order: reads, then the stop.
var gcloudCommands = []gcloudCommand{
	{line: "gcloud alpha projects search --format=json", method: "cloudresourcemanager projects.search",
		check: func(t *testing.T, _ *sim.Server, out []byte) {
			var ps []struct{ ProjectID, State string }
			decodeJSON(t, out, &ps)
			if !hasProject(ps, "ml-platform-prod") {
				t.Errorf("projects %+v, want the demo's ml-platform-prod, ACTIVE", ps)
			}
		}},
	{line: "gcloud compute regions list --format=json", method: "compute regions.list",
		check: func(t *testing.T, _ *sim.Server, out []byte) {
			var rs []struct{ Name, Status string }
			decodeJSON(t, out, &rs)
			if len(rs) == 0 || rs[0].Name != "us-central1" || rs[0].Status != "UP" {
				t.Errorf("regions %+v, want us-central1, UP", rs)
			}
		}},
	{line: "gcloud compute instances list --format=json", method: "compute instances.aggregatedList",
		check: func(t *testing.T, _ *sim.Server, out []byte) {
			var vms []struct {
				Name, Zone, Status, MachineType string
				Scheduling                      struct{ ProvisioningModel string }
				GuestAccelerators               []struct {
					AcceleratorType  string
					AcceleratorCount int
				}
			}
			decodeJSON(t, out, &vms)
			got := map[string]string{}
			for _, v := range vms {
				acc := ""
				if len(v.GuestAccelerators) > 0 {
					acc = filepath.Base(v.GuestAccelerators[0].AcceleratorType)
				}
				got[v.Name] = strings.Join([]string{filepath.Base(v.Zone), filepath.Base(v.MachineType), v.Status, v.Scheduling.ProvisioningModel, acc}, " ")
			}
			want := map[string]string{"gcp-a100-train": "us-central1-a a2-highgpu-1g RUNNING STANDARD ", "gcp-l4-infer": "us-central1-b g2-standard-8 RUNNING STANDARD "}
			// An A2 or G2 type has its GPUs built in: no guestAccelerators.
			for name, w := range want {
				if got[name] != w {
					t.Errorf("%s: %q, want %q", name, got[name], w)
				}
			}
			if len(got) != len(want) {
				t.Errorf("instances %v, want the demo's two GCP VMs", got)
			}
		}},
	{line: "gcloud compute instances describe gcp-l4-infer --zone us-central1-b --format=json", method: "compute instances.get",
		check: func(t *testing.T, _ *sim.Server, out []byte) {
			var vm struct{ Name, Status, MachineType string }
			decodeJSON(t, out, &vm)
			if vm.Name != "gcp-l4-infer" || vm.Status != "RUNNING" || filepath.Base(vm.MachineType) != "g2-standard-8" {
				t.Errorf("instance %+v", vm)
			}
		}},
	{line: "gcloud compute machine-types list --format=json", method: "compute machineTypes.aggregatedList",
		check: func(t *testing.T, _ *sim.Server, out []byte) {
			var mts []struct {
				Name, Zone string
				GuestCpus  int
			}
			decodeJSON(t, out, &mts)
			seen := map[string]bool{}
			for _, m := range mts {
				seen[m.Name+" "+m.Zone] = true
			}
			for _, w := range []string{"a2-highgpu-1g us-central1-a", "g2-standard-8 us-central1-b"} {
				if !seen[w] {
					t.Errorf("machine types %v lack %s", seen, w)
				}
			}
		}},
	{line: "gcloud compute machine-types describe a2-highgpu-1g --zone us-central1-a --format=json", method: "compute machineTypes.get",
		check: func(t *testing.T, _ *sim.Server, out []byte) {
			var mt struct {
				Name         string
				GuestCpus    int
				Accelerators []struct {
					GuestAcceleratorType  string
					GuestAcceleratorCount int
				}
			}
			decodeJSON(t, out, &mt)
			if mt.Name != "a2-highgpu-1g" || mt.GuestCpus != 12 || len(mt.Accelerators) != 1 || mt.Accelerators[0].GuestAcceleratorType != "nvidia-tesla-a100" || mt.Accelerators[0].GuestAcceleratorCount != 1 {
				t.Errorf("machine type %+v, want a2-highgpu-1g: 12 vCPUs, 1 nvidia-tesla-a100", mt)
			}
		}},
	{line: "curl -sS --fail-with-body -X POST " + token + ` -H "Content-Type: application/json" -d '{"permissions":["compute.instances.get","compute.instances.stop"]}' "$SIM/compute/v1/projects/ml-platform-prod/zones/us-central1-b/instances/gcp-l4-infer/testIamPermissions"`,
		method: "compute instances.testIamPermissions",
		check: func(t *testing.T, _ *sim.Server, out []byte) {
			var res struct{ Permissions []string }
			decodeJSON(t, out, &res)
			if strings.Join(res.Permissions, " ") != "compute.instances.get compute.instances.stop" {
				t.Errorf("permissions %v, want both asked for", res.Permissions)
			}
		}},
	{line: "curl -sS --fail-with-body " + token + ` "$SIM/v1/services/6F81-5844-456A/skus?currencyCode=USD&pageSize=5000"`, method: "cloudbilling services.skus.list",
		check: func(t *testing.T, _ *sim.Server, out []byte) {
			var res struct {
				Skus []struct {
					Description string
					Category    struct{ ResourceGroup, UsageType string }
				}
			}
			decodeJSON(t, out, &res)
			gpu := 0
			for _, s := range res.Skus {
				if s.Category.ResourceGroup == "GPU" {
					gpu++
				}
			}
			if gpu == 0 {
				t.Errorf("%d SKUs, none of resource group GPU", len(res.Skus))
			}
		}},
	{line: "curl -sS --fail-with-body -G " + token + ` "$SIM/v3/projects/ml-platform-prod/timeSeries" --data-urlencode 'filter=metric.type = "agent.googleapis.com/gpu/utilization" AND resource.type = "gce_instance"' --data-urlencode "interval.startTime=$(date -u -d '-1 day' +%FT%TZ)" --data-urlencode "interval.endTime=$(date -u +%FT%TZ)" --data-urlencode aggregation.alignmentPeriod=3600s --data-urlencode aggregation.perSeriesAligner=ALIGN_MEAN`,
		method: "monitoring projects.timeSeries.list (the adapter calls it over gRPC)",
		check: func(t *testing.T, _ *sim.Server, out []byte) {
			var res struct {
				TimeSeries []struct {
					Resource  struct{ Labels map[string]string }
					ValueType string
					Points    []struct {
						Value struct{ DoubleValue *float64 }
					}
				}
			}
			decodeJSON(t, out, &res)
			vms := map[string]int{}
			for _, ts := range res.TimeSeries {
				if ts.ValueType != "DOUBLE" {
					t.Errorf("value type %s, want DOUBLE (ALIGN_MEAN)", ts.ValueType)
				}
				for _, p := range ts.Points {
					if p.Value.DoubleValue == nil || *p.Value.DoubleValue < 0 || *p.Value.DoubleValue > 100 {
						t.Errorf("point %+v is not a percentage", p.Value)
					}
				}
				vms[ts.Resource.Labels["instance_id"]] += len(ts.Points)
			}
			// Both VMs run around the clock: a day of hourly means each.
			if len(vms) != 2 {
				t.Errorf("series of %d VMs (%v), want the demo's 2", len(vms), vms)
			}
			for id, n := range vms {
				if n < 24 {
					t.Errorf("VM %s: %d hourly points, want a day's", id, n)
				}
			}
		}},
	{line: "gcloud compute instances stop gcp-l4-infer --zone us-central1-b --discard-local-ssd", method: "compute instances.stop, zoneOperations.wait"},
	{line: "gcloud compute instances describe gcp-l4-infer --zone us-central1-b --format='value(status)'", method: "compute instances.get",
		check: func(t *testing.T, s *sim.Server, out []byte) {
			if got := strings.TrimSpace(string(out)); got != "TERMINATED" {
				t.Errorf("gcp-l4-infer is %q after gcloud stopped it, want TERMINATED", got)
			}
			for _, st := range s.State() {
				if st.ID == "gcp-l4-infer" && st.State != "TERMINATED" {
					t.Errorf("the simulator has gcp-l4-infer %s", st.State)
				}
			}
		}},
}

func hasProject(ps []struct{ ProjectID, State string }, id string) bool {
	for _, p := range ps {
		if p.ProjectID == id && p.State == "ACTIVE" {
			return true
		}
	}
	return false
}

func decodeJSON(t *testing.T, out []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(out, v); err != nil {
		t.Fatalf("no JSON of the expected shape: %v\n%s", err, out)
	}
}

// gcloudEnv points gcloud at the simulator: an access token (any is
// accepted), the demo's project, and the Compute and Resource Manager
// endpoints.
func gcloudEnv(url, config string) []string {
	return []string{"SIM=" + url, "CLOUDSDK_CONFIG=" + config, "CLOUDSDK_AUTH_ACCESS_TOKEN=test", "CLOUDSDK_CORE_DISABLE_PROMPTS=1",
		"CLOUDSDK_CORE_PROJECT=ml-platform-prod", "CLOUDSDK_API_ENDPOINT_OVERRIDES_COMPUTE=" + url + "/compute/v1/",
		"CLOUDSDK_API_ENDPOINT_OVERRIDES_CLOUDRESOURCEMANAGER=" + url + "/"}
}

func TestGcloudAgainstTheSimulator(t *testing.T) {
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
	_, curlErr := exec.LookPath("curl")
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
	// The wall clock: the time-series line asks for the last day by date(1).
	s := sim.New(f, simcat.Options(f, cat))
	rec := &simkit.Recorder{H: s}
	url := serve(t, rec)
	env := append(gcloudEnv(url, t.TempDir()), "HOME="+t.TempDir(), "PATH="+filepath.Dir(gcloud)+":/usr/bin:/bin")

	version, _ := exec.Command(gcloud, "version", "--format=value(\"Google Cloud SDK\")").Output()
	t.Logf("%s: Google Cloud SDK %s", gcloud, strings.TrimSpace(string(version)))
	for _, c := range gcloudCommands {
		if strings.HasPrefix(c.line, "curl ") && curlErr != nil {
			t.Logf("skipping, curl is not on PATH: %s", c.line)
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		cmd := exec.CommandContext(ctx, bash, "-c", "set -o pipefail; "+c.line)
		cmd.Env = env
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		before := rec.Len()
		start := time.Now()
		err := cmd.Run()
		cancel()
		if err != nil {
			t.Fatalf("%s: %v\n%s%s\nwire:\n%s", c.line, err, stdout.String(), stderr.String(), rec.Since(before))
		}
		t.Logf("%s (%s): %d request(s), %.1f s", c.line, c.method, rec.Len()-before, time.Since(start).Seconds())
		if c.check != nil {
			name := strings.Join(strings.Fields(c.method)[:2], " ")
			if !t.Run(name, func(t *testing.T) { c.check(t, s, stdout.Bytes()) }) {
				t.Logf("wire:\n%s", rec.Since(before))
			}
		}
	}
}

// TestGcloudCommandsDocumented: docs/gcp.md lists every command the gcloud
// test runs, as it runs them.
func TestGcloudCommandsDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "gcp.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range gcloudCommands {
		if !strings.Contains(string(doc), "\n"+c.line+"\n") {
			t.Errorf("docs/gcp.md does not list the line\n%s", c.line)
		}
	}
}

// serve serves h on a loopback port for the test.
func serve(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}
