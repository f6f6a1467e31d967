package sim_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	azfake "github.com/Azure/azure-sdk-for-go/sdk/azcore/fake"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v7"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers/azure/sim"
	"github.com/gpufinops/gpufinops/providers/providertest"
)

const mlSub = "3f2c9a61-0d4e-4b7a-9c1e-2a5b6c7d8e9f"

func managedAI(t *testing.T) *fleet.Fleet {
	t.Helper()
	return providertest.ReadFleet(t, "../../../testdata/fleets/managed-ai.yaml")
}

// armGet reads every page of an ARM list through azcore's pipeline.
func armGet(t *testing.T, c *arm.Client, method, path string) (items []map[string]any, status int) {
	t.Helper()
	next := c.Endpoint() + path + "?api-version=" + sim.AMLVersion
	for next != "" {
		req, err := runtime.NewRequest(context.Background(), method, next)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.Pipeline().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK {
			return items, resp.StatusCode
		}
		var page struct {
			Value    []map[string]any `json:"value"`
			NextLink string           `json:"nextLink"`
		}
		if err := runtime.UnmarshalAsJSON(resp, &page); err != nil {
			t.Fatal(err)
		}
		items = append(items, page.Value...)
		next = page.NextLink
	}
	return items, http.StatusOK
}

// TestAMLItemsAreNoVMs: the fixture's Azure ML items are served by the
// Azure ML lists, and neither the VM list nor Resource Graph has them.
func TestAMLItemsAreNoVMs(t *testing.T) {
	srv, _ := start(t, managedAI(t), sim.Options{Subscription: mlSub})
	vms, err := armcompute.NewVirtualMachinesClient(mlSub, &azfake.TokenCredential{}, clientOptions(srv))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for pager := vms.NewListAllPager(nil); pager.More(); {
		page, err := pager.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range page.Value {
			names = append(names, *v.Name)
		}
	}
	if fmt.Sprint(names) != "[eval-a10]" {
		t.Errorf("the VM list has %v, want only the VM eval-a10", names)
	}
	c, err := arm.NewClient("gpufinops-sim-test", "v1.0.0", &azfake.TokenCredential{}, clientOptions(srv))
	if err != nil {
		t.Fatal(err)
	}
	ws, _ := armGet(t, c, http.MethodGet, "/subscriptions/"+mlSub+"/providers/Microsoft.MachineLearningServices/workspaces")
	if len(ws) != 1 || ws[0]["name"] != "ws-ml" || ws[0]["location"] != "eastus" {
		t.Fatalf("workspaces %v, want ws-ml in eastus", ws)
	}
	wsID := ws[0]["id"].(string)
	deps, _ := armGet(t, c, http.MethodGet, wsID+"/onlineEndpoints/scorer/deployments")
	if len(deps) != 1 {
		t.Fatalf("deployments %v", deps)
	}
	d := deps[0]
	if d["sku"].(map[string]any)["capacity"] != 3.0 || d["properties"].(map[string]any)["instanceType"] != "Standard_NC24ads_A100_v4" {
		t.Errorf("deployment %v: want 3 Standard_NC24ads_A100_v4 instances", d)
	}
	computes, _ := armGet(t, c, http.MethodGet, wsID+"/computes")
	got := map[string]string{}
	for _, cp := range computes {
		got[cp["name"].(string)] = cp["properties"].(map[string]any)["computeType"].(string)
	}
	if fmt.Sprint(got) != "map[ci-bob:ComputeInstance gpu-cluster:AmlCompute]" {
		t.Errorf("computes %v", got)
	}
}

// TestAMLComputePagesAndStops: 45 compute instances page by nextLink; a
// stop is Stopping while its operation runs, then Stopped; a cluster
// cannot be stopped.
func TestAMLComputePagesAndStops(t *testing.T) {
	f := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind}
	ws := "/subscriptions/" + sub + "/resourceGroups/ml/providers/Microsoft.MachineLearningServices/workspaces/ws-a"
	for i := range 45 {
		f.Instances = append(f.Instances, fleet.Instance{ID: fmt.Sprintf("%s/computes/ci-%02d", ws, i), Provider: fleet.Azure, Account: sub, Region: "westus2",
			InstanceType: "Standard_NC4as_T4_v3", State: fleet.Running, Managed: &fleet.Managed{Service: fleet.AzureML, Kind: fleet.KindNotebook, Workspace: "ws-a"}})
	}
	f.Instances = append(f.Instances, fleet.Instance{ID: ws + "/computes/cluster", Provider: fleet.Azure, Account: sub, Region: "westus2",
		InstanceType: "Standard_NC24ads_A100_v4", State: fleet.Running, Managed: &fleet.Managed{Service: fleet.AzureML, Kind: fleet.KindComputeCluster, Replicas: &fleet.Replicas{Current: 1}}})
	srv, s := start(t, f, sim.Options{AMLPage: 10, OperationPolls: 2})
	c, err := arm.NewClient("gpufinops-sim-test", "v1.0.0", &azfake.TokenCredential{}, clientOptions(srv))
	if err != nil {
		t.Fatal(err)
	}
	all, _ := armGet(t, c, http.MethodGet, ws+"/computes")
	seen := map[string]bool{}
	for _, cp := range all {
		seen[cp["name"].(string)] = true
	}
	if len(all) != 46 || len(seen) != 46 {
		t.Fatalf("%d computes listed (%d distinct), want 46 over 5 pages", len(all), len(seen))
	}
	if n := s.Counts()["machinelearning"]["ListComputes"]; n != 5 {
		t.Errorf("%d list calls, want 5 pages of 10", n)
	}
	stateOf := func(name string) string {
		one, status := armGetOne(t, c, ws+"/computes/"+name)
		if status != http.StatusOK {
			t.Fatalf("get %s: %d", name, status)
		}
		return one["properties"].(map[string]any)["properties"].(map[string]any)["state"].(string)
	}
	req, _ := runtime.NewRequest(context.Background(), http.MethodPost, c.Endpoint()+ws+"/computes/ci-07/stop?api-version="+sim.AMLVersion)
	resp, err := c.Pipeline().Do(req)
	if err != nil || resp.StatusCode != http.StatusAccepted || resp.Header.Get("Azure-AsyncOperation") == "" {
		t.Fatalf("stop: %v %v", err, resp)
	}
	if st := stateOf("ci-07"); st != "Stopping" {
		t.Errorf("state %s while the stop runs, want Stopping", st)
	}
	poller, err := runtime.NewPoller[struct{}](resp, c.Pipeline(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := poller.PollUntilDone(context.Background(), &runtime.PollUntilDoneOptions{Frequency: 1}); err != nil {
		t.Fatal(err)
	}
	if st := stateOf("ci-07"); st != "Stopped" {
		t.Errorf("state %s after the stop, want Stopped", st)
	}
	req, _ = runtime.NewRequest(context.Background(), http.MethodPost, c.Endpoint()+ws+"/computes/cluster/stop?api-version="+sim.AMLVersion)
	resp, err = c.Pipeline().Do(req)
	if err != nil || resp.StatusCode != http.StatusBadRequest {
		t.Errorf("stopping a cluster: %v %v, want 400", err, resp.StatusCode)
	}
	var body struct {
		Error struct{ Code, Message string }
	}
	_ = json.NewDecoder(resp.Body).Decode(&body)
	if !strings.Contains(body.Error.Message, "compute instances") {
		t.Errorf("the refusal says %q", body.Error.Message)
	}
}

func armGetOne(t *testing.T, c *arm.Client, path string) (map[string]any, int) {
	t.Helper()
	req, _ := runtime.NewRequest(context.Background(), http.MethodGet, c.Endpoint()+path+"?api-version="+sim.AMLVersion)
	resp, err := c.Pipeline().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	_ = runtime.UnmarshalAsJSON(resp, &out)
	return out, resp.StatusCode
}
