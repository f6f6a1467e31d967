package azure

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers"
	"github.com/gpufinops/gpufinops/providers/azure/sim"
	"github.com/gpufinops/gpufinops/providers/providertest"
)

// mlSub is the subscription of testdata/fleets/managed-ai.yaml.
const mlSub = "3f2c9a61-0d4e-4b7a-9c1e-2a5b6c7d8e9f"

func managedAIFleet(t *testing.T) *fleet.Fleet {
	t.Helper()
	return providertest.ReadFleet(t, "../../testdata/fleets/managed-ai.yaml")
}

func mlProvider(t *testing.T, url string, extra providers.Values) *Provider {
	t.Helper()
	v := providers.Values{OptSubscriptions: []string{mlSub}}
	for k, x := range extra {
		v[k] = x
	}
	return testProvider(t, url, providers.Options{Adapter: v})
}

// fixtureWeek is the utilization window of the fixture.
var fixtureWeek = fleet.TimeRange{Start: time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC), End: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)}

// TestAzureMLReadsBackTheFixture: the Azure items of managed-ai.yaml, served
// by the simulator in strict mode, read back through azcore's pipeline
// (inventory and metrics) equal to the file: IDs, names, sizes, GPUs,
// states, tags, launch times, every managed field the stable API can say,
// and GPU utilization within the synthesis tolerance.
func TestAzureMLReadsBackTheFixture(t *testing.T) {
	f := managedAIFleet(t)
	srv, _ := testSim(t, f, sim.Options{Subscription: mlSub})
	p := mlProvider(t, srv.URL, nil)
	res, err := providers.Collect(context.Background(), p, providers.CollectOptions{Window: fixtureWeek, SkipPrices: true})
	if err != nil || len(res.Failures) > 0 {
		t.Fatal(err, res.Failures)
	}
	got := map[string]fleet.Instance{}
	for _, in := range res.Fleet.Instances {
		got[in.ID] = in
	}
	n := 0
	for _, want := range f.Instances {
		if want.Provider != fleet.Azure || want.Managed == nil {
			continue
		}
		n++
		in, ok := got[want.ID]
		if !ok {
			t.Errorf("%s: not listed", want.ID)
			continue
		}
		wm, gm := want.Managed, in.Managed
		if gm == nil {
			t.Errorf("%s: no managed block", want.ID)
			continue
		}
		check := func(field string, g, w any) {
			if fmt.Sprint(g) != fmt.Sprint(w) {
				t.Errorf("%s: %s %v, want %v", want.ID, field, g, w)
			}
		}
		check("name", in.Name, want.Name)
		check("account", in.Account, want.Account)
		check("region", in.Region, want.Region)
		check("instanceType", in.InstanceType, want.InstanceType)
		check("gpu", in.GPU, want.GPU)
		check("state", in.State, want.State)
		check("tags", in.Tags, want.Tags)
		check("launchTime", in.LaunchTime.UTC(), want.LaunchTime.UTC())
		check("service", gm.Service, wm.Service)
		check("kind", gm.Kind, wm.Kind)
		check("workspace", gm.Workspace, wm.Workspace)
		check("endpoint", gm.Endpoint, wm.Endpoint)
		check("deployment", gm.Deployment, wm.Deployment)
		check("replicas", fmt.Sprint(gm.Replicas != nil), fmt.Sprint(wm.Replicas != nil))
		if gm.Replicas != nil && wm.Replicas != nil {
			check("replicas.current", gm.Replicas.Current, wm.Replicas.Current)
			check("replicas.min", ptr(gm.Replicas.Min), ptr(wm.Replicas.Min))
			check("replicas.max", ptr(gm.Replicas.Max), ptr(wm.Replicas.Max))
		}
		check("requests", ptr(gm.Requests), ptr(wm.Requests))
		check("jobs", ptr(gm.Jobs), ptr(wm.Jobs))
		check("priceType", gm.PriceType, "")
		if wm.Kind == fleet.KindNotebook {
			// The stable API has no idle shutdown property: unknown.
			check("idleShutdownMinutes", ptr(gm.IdleShutdownMinutes), "nil")
		} else {
			check("idleShutdownMinutes", ptr(gm.IdleShutdownMinutes), ptr(wm.IdleShutdownMinutes))
		}
		ws, gs := want.Utilization.Summarize(), in.Utilization.Summarize()
		if gs == nil || gs.GPU == nil {
			t.Errorf("%s: no GPU utilization read", want.ID)
			continue
		}
		if d := math.Abs(gs.GPU.Avg - ws.GPU.Avg); d > 1 {
			t.Errorf("%s: GPU avg %.2f, want %.2f ±1", want.ID, gs.GPU.Avg, ws.GPU.Avg)
		}
		if ws.GPUMemory != nil && (gs.GPUMemory == nil || math.Abs(gs.GPUMemory.Avg-ws.GPUMemory.Avg) > 1) {
			t.Errorf("%s: GPU memory %v, want avg %.2f ±1", want.ID, gs.GPUMemory, ws.GPUMemory.Avg)
		}
	}
	if n != 3 {
		t.Fatalf("the fixture has %d Azure ML items, want 3", n)
	}
	vms := 0
	for _, in := range res.Fleet.Instances {
		if in.Managed == nil {
			vms++
		}
	}
	if vms != 1 {
		t.Errorf("%d VMs listed, want the fixture's one VM (and no Azure ML item as a VM)", vms)
	}
}

func ptr[T any](p *T) string {
	if p == nil {
		return "nil"
	}
	return fmt.Sprint(*p)
}

// TestAzureMLComputeInstanceStops: a compute instance stops through
// Compute_Stop (polled to its end) and then lists Stopped; a second stop
// is AlreadyStopped; the dry run changes nothing; a cluster and a
// deployment are refused.
func TestAzureMLComputeInstanceStops(t *testing.T) {
	f := managedAIFleet(t)
	srv, _ := testSim(t, f, sim.Options{Subscription: mlSub, OperationPolls: 2})
	p := mlProvider(t, srv.URL, nil)
	scope := providers.Scope{Provider: fleet.Azure, Account: mlSub, Region: "eastus"}
	ws := "/subscriptions/" + mlSub + "/resourceGroups/ml-rg/providers/Microsoft.MachineLearningServices/workspaces/ws-ml"
	ci := ws + "/computes/ci-bob"
	dry, err := p.Stop(context.Background(), scope, ci, true)
	if err != nil || dry.PreviousState != "Running" || dry.AlreadyStopped {
		t.Fatalf("dry run: %+v %v", dry, err)
	}
	res, err := p.Stop(context.Background(), scope, ci, false)
	if err != nil || res.CurrentState != "Stopped" {
		t.Fatalf("stop: %+v %v", res, err)
	}
	list, err := p.ListGPUInstances(context.Background(), scope)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, in := range list {
		if in.ID == ci {
			found = true
			if in.State != fleet.Stopped || in.MonthlyHours() != 0 {
				t.Errorf("after the stop %s is %s billing %v hours, want stopped with none", ci, in.State, in.MonthlyHours())
			}
		}
	}
	if !found {
		t.Errorf("%s not listed after its stop", ci)
	}
	again, err := p.Stop(context.Background(), scope, ci, false)
	if err != nil || !again.AlreadyStopped {
		t.Errorf("second stop: %+v %v, want AlreadyStopped", again, err)
	}
	for _, id := range []string{ws + "/computes/gpu-cluster", ws + "/onlineEndpoints/scorer/deployments/blue"} {
		if _, err := p.Stop(context.Background(), scope, id, false); !errors.Is(err, providers.ErrNotStoppable) {
			t.Errorf("stop %s: %v, want ErrNotStoppable", id, err)
		}
	}
	if _, err := p.Stop(context.Background(), scope, ws+"/computes/no-such", true); !errors.Is(err, providers.ErrNotFound) {
		t.Errorf("stop of a missing compute: %v, want ErrNotFound", err)
	}
}

// TestAzureMLDeniedKeepsTheVMs: without each Azure ML read the scan keeps
// the VMs and a note names the missing permission; managed_ai false reads
// nothing of Azure ML.
func TestAzureMLDeniedKeepsTheVMs(t *testing.T) {
	for _, action := range []string{ActionAMLWorkspacesRead, ActionAMLEndpointsRead, ActionAMLComputesRead} {
		t.Run(action, func(t *testing.T) {
			f := managedAIFleet(t)
			srv, _ := testSim(t, f, sim.Options{Subscription: mlSub, DenyActions: []string{action}})
			p := mlProvider(t, srv.URL, nil)
			res, err := providers.Collect(context.Background(), p, providers.CollectOptions{Window: fixtureWeek, SkipPrices: true})
			if err != nil || len(res.Failures) > 0 {
				t.Fatal(err, res.Failures)
			}
			vm := false
			for _, in := range res.Fleet.Instances {
				vm = vm || strings.HasSuffix(in.ID, "eval-a10") || in.ID == "eval-a10"
			}
			if !vm {
				t.Errorf("the VM was lost: %d instances", len(res.Fleet.Instances))
			}
			named := false
			for _, n := range res.Notes {
				named = named || (strings.Contains(n, action) && strings.Contains(n, "permission denied"))
			}
			if !named {
				t.Errorf("no note names %s: %q", action, res.Notes)
			}
		})
	}
	t.Run("off", func(t *testing.T) {
		srv, s := testSim(t, managedAIFleet(t), sim.Options{Subscription: mlSub})
		p := mlProvider(t, srv.URL, providers.Values{OptManagedAI: false})
		res, err := providers.Collect(context.Background(), p, providers.CollectOptions{Window: fixtureWeek, SkipPrices: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range res.Fleet.Instances {
			if in.Managed != nil {
				t.Errorf("managed_ai false listed %s", in.ID)
			}
		}
		if n := s.Counts()["machinelearning"]; len(n) > 0 {
			t.Errorf("managed_ai false still called Azure ML: %v", n)
		}
	})
}

// TestAzureMLPagesAndSkipsKubernetes: 45 compute instances over several
// pages of 20 are all listed once; a CPU size is left out.
func TestAzureMLPagesManyComputes(t *testing.T) {
	f := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind}
	ws := "/subscriptions/" + subA + "/resourceGroups/ml/providers/Microsoft.MachineLearningServices/workspaces/ws-big"
	for i := range 45 {
		f.Instances = append(f.Instances, fleet.Instance{ID: fmt.Sprintf("%s/computes/ci-%02d", ws, i), Name: fmt.Sprintf("ci-%02d", i), Provider: fleet.Azure, Account: subA,
			Region: "westus2", InstanceType: "Standard_NC4as_T4_v3", State: fleet.Running, Managed: &fleet.Managed{Service: fleet.AzureML, Kind: fleet.KindNotebook, Workspace: "ws-big"}})
	}
	f.Instances = append(f.Instances, fleet.Instance{ID: ws + "/computes/cpu-box", Name: "cpu-box", Provider: fleet.Azure, Account: subA,
		Region: "westus2", InstanceType: "Standard_D4s_v5", State: fleet.Running, Managed: &fleet.Managed{Service: fleet.AzureML, Kind: fleet.KindNotebook, Workspace: "ws-big"}})
	srv, s := testSim(t, f, sim.Options{})
	p := testProvider(t, srv.URL, providers.Options{})
	list, err := p.ListGPUInstances(context.Background(), providers.Scope{Provider: fleet.Azure, Account: subA, Region: "westus2"})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, in := range list {
		seen[in.Name]++
		if in.GPU.Model != "T4" || in.GPU.Count != 1 {
			t.Errorf("%s: GPU %+v, want one T4", in.ID, in.GPU)
		}
	}
	if len(seen) != 45 || seen["cpu-box"] > 0 {
		t.Errorf("%d distinct compute instances listed (cpu-box %d), want the 45 GPU ones", len(seen), seen["cpu-box"])
	}
	if n := s.Counts()["machinelearning"]["ListComputes"]; n != 3 {
		t.Errorf("%d Compute_List pages, want 3 (20 a page)", n)
	}
}

// TestISOMinutes: the ISO 8601 durations of nodeIdleTimeBeforeScaleDown.
func TestISOMinutes(t *testing.T) {
	for in, want := range map[string]float64{"PT30M": 30, "PT2M": 2, "PT1H": 60, "PT1H30M": 90, "P1D": 1440, "PT90S": 1.5, "pt15m": 15} {
		if got, ok := isoMinutes(in); !ok || got != want {
			t.Errorf("isoMinutes(%q) = %v %v, want %v", in, got, ok, want)
		}
	}
	for _, bad := range []string{"", "P", "PT", "30M", "PT-5M", "1 hour", "PTXM"} {
		if got, ok := isoMinutes(bad); ok {
			t.Errorf("isoMinutes(%q) = %v, want refused", bad, got)
		}
	}
}

// TestDoctorWarnsOfAzureMLReads: doctor checks the four Azure ML reads; a
// missing one is a warning saying how to grant it or turn Azure ML off,
// and with managed_ai false they are not checked.
func TestDoctorWarnsOfAzureMLReads(t *testing.T) {
	scope := providers.Scope{Account: mlSub}
	checks := func(deny []string, extra providers.Values) map[string]providers.Check {
		srv, _ := testSim(t, managedAIFleet(t), sim.Options{Subscription: mlSub, DenyActions: deny})
		out := map[string]providers.Check{}
		for _, c := range mlProvider(t, srv.URL, extra).CheckPermissions(context.Background(), scope) {
			if strings.HasPrefix(c.Action, "Microsoft.MachineLearningServices/") {
				out[c.Action] = c
			}
		}
		return out
	}
	all := checks(nil, nil)
	for _, a := range []string{ActionAMLWorkspacesRead, ActionAMLEndpointsRead, ActionAMLDeploymentsRead, ActionAMLComputesRead} {
		if c, ok := all[a]; !ok || c.Status != providers.CheckOK {
			t.Errorf("%s: %+v, want an OK check", a, c)
		}
	}
	denied := checks([]string{ActionAMLComputesRead}, nil)[ActionAMLComputesRead]
	if denied.Status != providers.CheckWarn || !strings.Contains(denied.Fix, OptManagedAI+": false") {
		t.Errorf("denied computes read: %+v, want a warning naming %s", denied, OptManagedAI)
	}
	if off := checks(nil, providers.Values{OptManagedAI: false}); len(off) != 0 {
		t.Errorf("managed_ai false still checks %v", off)
	}
}
