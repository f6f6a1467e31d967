package bench

import (
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
)

func fixtureShape(t *testing.T) Shape {
	t.Helper()
	const path = "../../testdata/fleets/managed-ai.yaml"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := fleet.Parse(path, b)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	if err := pricing.Complete(f, cat); err != nil {
		t.Fatal(err)
	}
	return ShapeOf(f)
}

func scopeOf(t *testing.T, sh Shape, c fleet.Provider) Scope {
	t.Helper()
	for _, s := range sh.Scopes {
		if s.Cloud == c {
			return s
		}
	}
	t.Fatalf("no %s scope", c)
	return Scope{}
}

// TestManagedFixtureBounds: the shared fixture's Azure ML items are read
// through their workspace's lists and namespaces, its Vertex AI endpoint
// and custom job through Vertex AI's lists and metric types, never as
// Resource Graph or aggregatedList VMs; its Workbench instance is a
// Compute Engine VM. The fleet is completed from the catalog, as the
// bench's generated fleets are.
func TestManagedFixtureBounds(t *testing.T) {
	sh := fixtureShape(t)
	az := scopeOf(t, sh, fleet.Azure)
	if az.Instances != 1 || az.Running != 1 {
		t.Errorf("Azure scope: %d instances, %d running; want the one VM", az.Instances, az.Running)
	}
	wantAML := AzureMLShape{Workspaces: 1, Endpoints: 1, Deployments: 1, Computes: 2, MeteredDeployments: 1, MeteredEndpoints: 1, MeteredWorkspaces: 1}
	if az.AzureML != wantAML {
		t.Errorf("Azure ML shape %+v, want %+v", az.AzureML, wantAML)
	}
	if !az.Types["Standard_NC24ads_A100_v4"] || !az.Types["Standard_NC4as_T4_v3"] {
		t.Errorf("Azure types %v: want the Azure ML sizes priced", az.Types)
	}
	gcp := scopeOf(t, sh, fleet.GCP)
	if gcp.Instances != 2 || gcp.Metered != 2 {
		t.Errorf("GCP scope: %d instances, %d metered; want the VM and the Workbench instance", gcp.Instances, gcp.Metered)
	}
	wantVertex := VertexShape{Endpoints: 1, DeployedModels: 1, Jobs: 1, Duty: 1, Predictions: 1, Training: 1}
	if gcp.Vertex != wantVertex {
		t.Errorf("Vertex shape %+v, want %+v", gcp.Vertex, wantVertex)
	}
	for _, c := range []struct {
		cloud fleet.Provider
		want  map[string]int
	}{
		{fleet.Azure, map[string]int{
			"resourcegraph.Resources": 2, "machinelearning.ListWorkspaces": 1,
			"machinelearning.ListOnlineEndpoints": 1, "machinelearning.ListComputes": 1, "machinelearning.ListOnlineDeployments": 1,
			// The VM's two namespaces; the deployment's, the endpoint's
			// and the workspace's.
			"monitor.MetricsBatch": 5,
		}},
		{fleet.GCP, map[string]int{
			"compute.instances.aggregatedList":             1,
			"aiplatform.projects.locations.endpoints.list": 1, "aiplatform.projects.locations.customJobs.list": 1,
			"notebooks.projects.locations.instances.list": 1,
			// The VMs' GPU utilization; duty cycle, predictions and
			// training utilization.
			"monitoring.ListTimeSeries": 4,
		}},
	} {
		b := boundOf(t, sh, c.cloud)
		for op, n := range c.want {
			if b.Requests[op] != n {
				t.Errorf("%s %s: bound %d, want %d", c.cloud, op, b.Requests[op], n)
			}
		}
	}
}

// TestAzureMLBound: worked by hand; metrics:getBatch pages each namespace
// at 50 resources, and the chain runs subscriptions → workspaces →
// endpoints → deployments → metrics.
func TestAzureMLBound(t *testing.T) {
	sh := Shape{Scopes: []Scope{{Cloud: fleet.Azure, Account: "s1", Region: "r1", Types: types("x"),
		AzureML: AzureMLShape{Workspaces: 2, Endpoints: 60, Deployments: 120, Computes: 10, MeteredDeployments: 120, MeteredEndpoints: 60, MeteredWorkspaces: 2}}}}
	b := boundOf(t, sh, fleet.Azure)
	want := map[string]int{
		"subscriptions.ListSubscriptions": 1, "resourcegraph.Resources": 2, "prices.RetailPrices": 1, "compute.ListSKUs": 1,
		"capacity.ListReservations": 1, "billingbenefits.ListSavingsPlans": 1,
		"machinelearning.ListWorkspaces": 1, "machinelearning.ListOnlineEndpoints": 2, "machinelearning.ListComputes": 2,
		"machinelearning.ListOnlineDeployments": 60,
		// ⌈120/50⌉ + ⌈60/50⌉ + ⌈2/50⌉.
		"monitor.MetricsBatch": 6,
	}
	if diff := cmp.Diff(want, b.Requests); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	if b.Chain != 5 {
		t.Errorf("chain %d, want 5", b.Chain)
	}
	// Stopped items are not asked for metrics; endpoints without
	// deployments read no deployments' metrics and no deployments chain.
	sh.Scopes[0].AzureML = AzureMLShape{Workspaces: 1, Computes: 3}
	b = boundOf(t, sh, fleet.Azure)
	if b.Requests["monitor.MetricsBatch"] != 0 || b.Requests["machinelearning.ListOnlineDeployments"] != 0 || b.Chain != 4 {
		t.Errorf("stopped computes: %d metric calls, %d deployment lists, chain %d; want 0, 0, 4", b.Requests["monitor.MetricsBatch"], b.Requests["machinelearning.ListOnlineDeployments"], b.Chain)
	}
}

// TestVertexBound: worked by hand; the lists page at 1,000, each metric
// type at 100,000 points, and the metric pages lengthen the chain.
func TestVertexBound(t *testing.T) {
	sh := Shape{Scopes: []Scope{{Cloud: fleet.GCP, Account: "p1", Region: "r1", Types: types(),
		Vertex: VertexShape{Endpoints: 1500, DeployedModels: 1600, Jobs: 10, Duty: 1000, Predictions: 1600, Training: 10}}}}
	b := boundOf(t, sh, fleet.GCP)
	want := map[string]int{
		"cloudresourcemanager.projects.search": 1, "cloudbilling.services.skus.list": 1, "compute.instances.aggregatedList": 1,
		"compute.regionCommitments.aggregatedList": 1, "compute.reservations.aggregatedList": 1,
		"notebooks.projects.locations.instances.list":  1,
		"aiplatform.projects.locations.endpoints.list": 2, "aiplatform.projects.locations.customJobs.list": 1,
		// Duty cycle ⌈1,000×336/100,000⌉ = 4, predictions ⌈1,600×336/100,000⌉ = 6,
		// training 1; no accelerator memory series.
		"monitoring.ListTimeSeries": 11,
	}
	if diff := cmp.Diff(want, b.Requests); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	// projects.search, then the six prediction-count pages.
	if b.Chain != 7 {
		t.Errorf("chain %d, want 7", b.Chain)
	}
}

// TestShapeOfManaged: Azure ML workspaces and endpoints are counted once
// whatever the ID's case, two deployments of one endpoint are one listing
// entry, stopped items are listed but not metered, a stopped custom job is
// not listed (customJobs.list asks for running ones), and a Workbench
// instance is a VM.
func TestShapeOfManaged(t *testing.T) {
	gpu := &fleet.Utilization{GPU: &fleet.Stats{}}
	withMem := &fleet.Utilization{GPU: &fleet.Stats{}, GPUMemory: &fleet.Stats{}}
	ws := "/subscriptions/s/resourceGroups/rg/providers/Microsoft.MachineLearningServices/workspaces/w"
	wsOther := "/subscriptions/s/resourcegroups/RG/providers/Microsoft.MachineLearningServices/workspaces/W"
	req := 5.0
	aml := func(id string, kind fleet.ManagedKind, ep string, st fleet.State) fleet.Instance {
		return fleet.Instance{ID: id, Provider: fleet.Azure, Account: "s", Region: "eastus", InstanceType: "Standard_NC4as_T4_v3", State: st, Utilization: gpu,
			Managed: &fleet.Managed{Service: fleet.AzureML, Kind: kind, Workspace: "w", Endpoint: ep}}
	}
	vx := func(id string, kind fleet.ManagedKind, ep string, st fleet.State, u *fleet.Utilization, r *float64) fleet.Instance {
		return fleet.Instance{ID: id, Provider: fleet.GCP, Account: "p", Region: "us-central1", InstanceType: "a2-highgpu-1g", GPU: fleet.GPU{Count: 1, MemoryGiB: 40}, State: st, Utilization: u,
			Managed: &fleet.Managed{Service: fleet.VertexAI, Kind: kind, Endpoint: ep, Requests: r}}
	}
	// An item placed in another region than its workspace's first one is
	// read in the workspace's region, as the simulator serves it.
	elsewhere := aml(ws+"/computes/ci2", fleet.KindNotebook, "", fleet.Running)
	elsewhere.Region = "westus"
	f := &fleet.Fleet{Instances: []fleet.Instance{
		aml(ws+"/onlineEndpoints/e/deployments/blue", fleet.KindEndpoint, "e", fleet.Running),
		aml(wsOther+"/onlineEndpoints/E/deployments/green", fleet.KindEndpoint, "E", fleet.Running),
		aml(ws+"/onlineEndpoints/idle/deployments/blue", fleet.KindEndpoint, "idle", fleet.Stopped),
		aml(ws+"/computes/ci", fleet.KindNotebook, "", fleet.Stopped),
		aml(wsOther+"/computes/cluster", fleet.KindComputeCluster, "", fleet.Running),
		aml("/subscriptions/s/resourceGroups/rg2/providers/Microsoft.MachineLearningServices/workspaces/w2/computes/ci", fleet.KindNotebook, "", fleet.Stopped),
		elsewhere,
		vx("projects/p/locations/us-central1/endpoints/1/deployedModels/1", fleet.KindEndpoint, "1", fleet.Running, withMem, &req),
		vx("projects/p/locations/us-central1/endpoints/1/deployedModels/2", fleet.KindEndpoint, "1", fleet.Running, gpu, nil),
		vx("projects/p/locations/us-central1/endpoints/2/deployedModels/3", fleet.KindEndpoint, "2", fleet.Running, nil, &req),
		vx("projects/p/locations/us-central1/customJobs/7", fleet.KindTrainingJob, "", fleet.Running, gpu, nil),
		vx("projects/p/locations/us-central1/customJobs/8", fleet.KindTrainingJob, "", fleet.Stopped, gpu, nil),
		vx("projects/p/locations/us-central1-a/instances/wb", fleet.KindNotebook, "", fleet.Running, gpu, nil),
	}}
	sh := ShapeOf(f)
	az := scopeOf(t, sh, fleet.Azure)
	wantAML := AzureMLShape{Workspaces: 2, Endpoints: 2, Deployments: 3, Computes: 4, MeteredDeployments: 2, MeteredEndpoints: 1, MeteredWorkspaces: 1}
	if az.Instances != 0 || az.Region != "eastus" || az.AzureML != wantAML {
		t.Errorf("Azure: %d instances in %s, Azure ML %+v; want 0 in eastus and %+v", az.Instances, az.Region, az.AzureML, wantAML)
	}
	for _, s := range sh.Scopes {
		if s.Cloud == fleet.Azure && s.Region != "eastus" {
			t.Errorf("Azure scope %s: the workspace's items belong to eastus", s.Region)
		}
	}
	gcp := scopeOf(t, sh, fleet.GCP)
	wantVertex := VertexShape{Endpoints: 2, DeployedModels: 3, Jobs: 1, Duty: 2, Predictions: 2, Memory: 1, Training: 1}
	if gcp.Instances != 1 || gcp.Metered != 1 || gcp.Vertex != wantVertex {
		t.Errorf("GCP: %d instances, %d metered, Vertex %+v; want 1, 1 and %+v", gcp.Instances, gcp.Metered, gcp.Vertex, wantVertex)
	}
}
