package report

import (
	"strings"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/recommend"
	"github.com/gpufinops/gpufinops/pkg/testutil"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/pricingtest"
)

// managedReport is the report of a SageMaker endpoint with no traffic, an
// idle Azure ML compute instance without idle shutdown and an Azure ML
// deployment on too many replicas, with the commands a cloud would give.
func managedReport(t *testing.T) *Report {
	t.Helper()
	cat := &pricingtest.Catalog{}
	cat.AddOffer(pricing.InstanceType{Provider: fleet.AWS, Name: "ml.g5.12xlarge", GPUModel: "A10G", GPUCount: 4, GPUMemoryGiB: 24, Service: fleet.SageMaker}, "us-east-1", "7.09", "")
	cat.AddOffer(pricing.InstanceType{Provider: fleet.Azure, Name: "Standard_NC4as_T4_v3", GPUModel: "T4", GPUCount: 1, GPUMemoryGiB: 16}, "eastus", "0.526", "")
	cat.AddOffer(pricing.InstanceType{Provider: fleet.Azure, Name: "Standard_NC24ads_A100_v4", GPUModel: "A100", GPUCount: 1, GPUMemoryGiB: 80}, "eastus", "3.673", "")
	week := &fleet.TimeRange{Start: time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC), End: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)}
	util := func(p95 float64) *fleet.Utilization {
		return &fleet.Utilization{Window: week, GPU: &fleet.Stats{Avg: p95 / 2, P95: p95, Max: p95 + 1}, GPUMemory: &fleet.Stats{P95: 2, Max: 2}}
	}
	zero, traffic, off := 0.0, 1e6, 0.0
	tags := map[string]string{"Team": "ml", "Project": "p", "Environment": "dev", "WorkloadType": "Development", "CostCenter": "c", "AutoShutdown": "true"}
	f := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind, Instances: []fleet.Instance{
		{ID: "arn:aws:sagemaker:us-east-1:111122223333:endpoint/chat-demo/variant/AllTraffic", Name: "chat-demo/AllTraffic", Provider: fleet.AWS, Region: "us-east-1",
			InstanceType: "ml.g5.12xlarge", GPU: fleet.GPU{Model: "A10G", Count: 4, MemoryGiB: 24}, Lifecycle: fleet.OnDemand, State: fleet.Running, Tags: tags, Utilization: util(0),
			Managed: &fleet.Managed{Service: fleet.SageMaker, Kind: fleet.KindEndpoint, Endpoint: "chat-demo", Deployment: "AllTraffic", Replicas: &fleet.Replicas{Current: 2}, Requests: &zero}},
		{ID: "/subscriptions/s/resourceGroups/ml-rg/providers/Microsoft.MachineLearningServices/workspaces/ws-ml/computes/ci-bob", Name: "ci-bob", Provider: fleet.Azure, Region: "eastus",
			InstanceType: "Standard_NC4as_T4_v3", GPU: fleet.GPU{Model: "T4", Count: 1, MemoryGiB: 16}, Lifecycle: fleet.OnDemand, State: fleet.Running, Tags: tags, Utilization: util(1),
			Managed: &fleet.Managed{Service: fleet.AzureML, Kind: fleet.KindNotebook, Workspace: "ws-ml", Replicas: &fleet.Replicas{Current: 1}, IdleShutdownMinutes: &off}},
		{ID: "/subscriptions/s/resourceGroups/ml-rg/providers/Microsoft.MachineLearningServices/workspaces/ws-ml/onlineEndpoints/scorer/deployments/blue", Name: "scorer/blue", Provider: fleet.Azure, Region: "eastus",
			InstanceType: "Standard_NC24ads_A100_v4", GPU: fleet.GPU{Model: "A100", Count: 1, MemoryGiB: 80}, Lifecycle: fleet.OnDemand, State: fleet.Running, Tags: tags, Utilization: util(9),
			Managed: &fleet.Managed{Service: fleet.AzureML, Kind: fleet.KindEndpoint, Workspace: "ws-ml", Endpoint: "scorer", Deployment: "blue", Replicas: &fleet.Replicas{Current: 3}, Requests: &traffic}},
	}}
	cmd := func(in *fleet.Instance, c fleet.ManagedChange) string {
		switch c.Action {
		case fleet.ActionDeleteEndpoint:
			return "aws sagemaker delete-endpoint --endpoint-name " + in.Managed.Endpoint + " --region " + in.Region
		case fleet.ActionStopNotebook:
			return "az ml compute stop --name " + in.Name + " --workspace-name ws-ml --resource-group ml-rg"
		}
		return ""
	}
	plan := recommend.RunWith(f, cat, recommend.DefaultPolicy(), recommend.Options{ManagedCommand: cmd, Now: week.End})
	return New(plan, testMeta())
}

func TestActionsManagedItems(t *testing.T) {
	r := managedReport(t)
	p := checkRank(t, r)
	got := map[string]string{}
	for _, m := range p.machines {
		got[m.name()] = m.shortText()
	}
	want := map[string]string{
		"sagemaker endpoint chat-demo/AllTraffic ×2": "delete endpoint",
		"azure-ml notebook ci-bob":                   "stop + idle shutdown 60 min",
		"azure-ml endpoint scorer/blue ×3":           "3 → 1 replicas",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
	if len(got) != len(want) {
		t.Errorf("machines %v", got)
	}
	// No action cell is cut at any width.
	for _, w := range []int{60, 80, 120, 200} {
		out := write(t, r, "table", PrintOptions{TTY: true, Width: w, All: true})
		testutil.AssertFits(t, out, w)
		actions := testutil.TableCells(out, "ACTION")
		if len(actions) != len(p.machines) {
			t.Fatalf("width %d: %d actions for %d machines", w, len(actions), len(p.machines))
		}
		for i, m := range p.machines {
			if actions[i] != m.shortText() {
				t.Errorf("width %d: %q, want %q", w, actions[i], m.shortText())
			}
		}
	}
	const del = "aws sagemaker delete-endpoint --endpoint-name chat-demo --region us-east-1"
	for _, format := range []string{"wide", "markdown", "json"} {
		out := write(t, r, format, PrintOptions{All: true})
		if !strings.Contains(out, del) || !strings.Contains(out, "az ml compute stop --name ci-bob") {
			t.Errorf("%s: the commands are missing:\n%s", format, out)
		}
	}
	js := write(t, r, "json", PrintOptions{})
	for _, s := range []string{`"change": {`, `"action": "set-replicas"`, `"replicas": 1`, `"idleShutdownMinutes": 60`, `"managed": {`, `"kind": "notebook"`} {
		if !strings.Contains(js, s) {
			t.Errorf("json lacks %s", s)
		}
	}
}
