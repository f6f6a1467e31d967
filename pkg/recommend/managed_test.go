package recommend

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/internal/purchasetest"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/pricingtest"
)

var managedNow = time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)

// managedCatalog is testCatalog with Service-tagged offers of the three
// services (the shapes the pricing helper adds) and the VM sizes Azure ML
// and Workbench items are priced at.
func managedCatalog() *pricingtest.Catalog {
	c := testCatalog()
	c.AddGPU(pricing.GPUSpec{Name: "L4", Vendor: "nvidia", MemoryGiB: 24})
	c.AddGPU(pricing.GPUSpec{Name: "A100-80GB", Vendor: "nvidia", MemoryGiB: 80})
	sm := func(name, gpu string, n, mem float64) pricing.InstanceType {
		return pricing.InstanceType{Provider: fleet.AWS, Name: name, GPUModel: gpu, GPUCount: n, GPUMemoryGiB: mem, Service: fleet.SageMaker}
	}
	c.AddOffer(sm("ml.g5.xlarge", "A10G", 1, 24), "us-east-1", "1.408", "")
	c.AddOffer(sm("ml.g5.2xlarge", "A10G", 1, 24), "us-east-1", "1.515", "")
	c.AddOffer(sm("ml.g5.12xlarge", "A10G", 4, 24), "us-east-1", "7.09", "")
	c.AddOffer(sm("ml.g4dn.xlarge", "T4", 1, 16), "us-east-1", "0.7364", "")
	c.AddOffer(sm("ml.p4d.24xlarge", "A100", 8, 40), "us-east-1", "37.688", "")
	c.AddAdvice(fleet.AWS, "us-east-1", "ml.p4d.24xlarge", pricing.SpotAdvice{SavingsPercent: 70, Band: ">20%", BandIndex: 4, Source: "test advice", AsOf: "2026-11-01"})
	az := func(name, gpu string, n, mem float64) pricing.InstanceType {
		return pricing.InstanceType{Provider: fleet.Azure, Name: name, GPUModel: gpu, GPUCount: n, GPUMemoryGiB: mem}
	}
	c.AddOffer(az("Standard_NC24ads_A100_v4", "A100-80GB", 1, 80), "eastus", "3.673", "")
	c.AddOffer(az("Standard_NC4as_T4_v3", "T4", 1, 16), "eastus", "0.526", "")
	gcp := func(name, gpu string, n, mem float64, svc fleet.ManagedService) pricing.InstanceType {
		return pricing.InstanceType{Provider: fleet.GCP, Name: name, GPUModel: gpu, GPUCount: n, GPUMemoryGiB: mem, Service: svc}
	}
	c.AddOffer(gcp("g2-standard-8", "L4", 1, 24, ""), "us-central1", "0.8536", "")
	c.AddOffer(gcp("a2-highgpu-1g", "A100", 1, 40, ""), "us-central1", "3.6733", "")
	c.AddOffer(gcp("vertex-ai/prediction/a2-highgpu-1g", "A100", 1, 40, fleet.VertexAI), "us-central1", "4.2244", "")
	c.AddOffer(gcp("vertex-ai/training/a2-highgpu-8g", "A100", 8, 40, fleet.VertexAI), "us-central1", "33.79", "")
	c.AddAdvice(fleet.GCP, "us-central1", "vertex-ai/training/a2-highgpu-8g", pricing.SpotAdvice{SavingsPercent: 60, Source: "test advice", AsOf: "2026-11-01"})
	return c
}

// onCloud is a managed item of a service on its cloud, with the service's
// type for its GPU.
type onCloud struct {
	service fleet.ManagedService
	typ     string // one-GPU type
	hourly  string // its replica-hour price in managedCatalog
	id      func(name string) string
}

var clouds = []onCloud{
	{fleet.SageMaker, "ml.g5.xlarge", "1.408", func(n string) string {
		return "arn:aws:sagemaker:us-east-1:111122223333:endpoint/" + n + "/variant/AllTraffic"
	}},
	{fleet.AzureML, "Standard_NC24ads_A100_v4", "3.673", func(n string) string {
		return "/subscriptions/s/resourceGroups/rg/providers/Microsoft.MachineLearningServices/workspaces/w/onlineEndpoints/" + n + "/deployments/blue"
	}},
	{fleet.VertexAI, "a2-highgpu-1g", "4.2244", func(n string) string {
		return "projects/p/locations/us-central1/endpoints/" + n + "/deployedModels/1"
	}},
}

func (c onCloud) item(name string, kind fleet.ManagedKind, replicas int, mods ...func(*fleet.Instance)) fleet.Instance {
	in := fleet.Instance{ID: c.id(name), Name: name, InstanceType: c.typ, Lifecycle: fleet.OnDemand, State: fleet.Running,
		Tags:    map[string]string{"team": "ml"},
		Managed: &fleet.Managed{Service: c.service, Kind: kind, Replicas: &fleet.Replicas{Current: replicas}}}
	switch c.service {
	case fleet.SageMaker:
		in.Provider, in.Region, in.GPU = fleet.AWS, "us-east-1", fleet.GPU{Model: "A10G", Count: 1, MemoryGiB: 24}
	case fleet.AzureML:
		in.Provider, in.Region, in.GPU = fleet.Azure, "eastus", fleet.GPU{Model: "A100-80GB", Count: 1, MemoryGiB: 80}
	case fleet.VertexAI:
		in.Provider, in.Region, in.GPU = fleet.GCP, "us-central1", fleet.GPU{Model: "A100", Count: 1, MemoryGiB: 40}
		in.Managed.PriceType = "vertex-ai/prediction/" + c.typ
	}
	for _, m := range mods {
		m(&in)
	}
	return in
}

func gpuUtil(p95 float64) func(*fleet.Instance) {
	return func(in *fleet.Instance) {
		in.Utilization = &fleet.Utilization{Window: week, GPU: &fleet.Stats{Avg: p95 / 2, P95: p95, Max: p95 + 2}, GPUMemory: &fleet.Stats{Avg: 1, P95: 2, Max: 2}}
	}
}

func requests(n float64) func(*fleet.Instance) {
	return func(in *fleet.Instance) { in.Managed.Requests = &n }
}

func tag(k, v string) func(*fleet.Instance) { return func(in *fleet.Instance) { in.Tags[k] = v } }

func runManaged(t *testing.T, o Options, instances ...fleet.Instance) Plan {
	t.Helper()
	f := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind, Instances: instances}
	if o.Now.IsZero() {
		o.Now = managedNow
	}
	if o.ManagedCommand == nil {
		o.ManagedCommand = func(in *fleet.Instance, c fleet.ManagedChange) string {
			return fmt.Sprintf("%s %s %s %d", in.Managed.Service, c.Action, in.Name, c.Replicas)
		}
	}
	p := RunWith(f, managedCatalog(), DefaultPolicy().WithPurchases(purchasetest.Purchases()), o)
	checkSums(t, p)
	checkManaged(t, f, p)
	return p
}

// checkManaged asserts the class invariants: no VM-only advice on a managed
// item, every managed advice names its change, no saving above the item's
// cost, none on a protected item.
func checkManaged(t *testing.T, f *fleet.Fleet, p Plan) {
	t.Helper()
	byID := map[string]*fleet.Instance{}
	for i := range f.Instances {
		byID[f.Instances[i].ID] = &f.Instances[i]
	}
	for _, ic := range p.Instances {
		if ic.Priced && ic.MonthlySavings.GreaterThan(ic.MonthlyCost) {
			t.Errorf("%s: saves %s of %s", ic.ResourceID, ic.MonthlySavings, ic.MonthlyCost)
		}
		if ic.Priced && ic.MonthlySavings.IsNegative() {
			t.Errorf("%s: negative saving %s", ic.ResourceID, ic.MonthlySavings)
		}
	}
	for _, r := range p.Recommendations {
		in := byID[r.ResourceID]
		if in == nil || !in.IsManaged() {
			if r.Change != nil {
				t.Errorf("%s: a VM's advice carries a managed change", r.ID)
			}
			continue
		}
		if r.Kind == KindTagging {
			continue
		}
		switch r.Kind {
		case KindCommitment, KindQuantize, KindShare:
			t.Errorf("%s: VM-only advice %s on a managed item", r.ID, r.Kind)
		}
		if r.Change == nil {
			t.Errorf("%s: managed advice without a change", r.ID)
		}
		if r.Protected != nil && !r.Protected.Counted && (!r.MonthlySavings.IsZero() || r.Command != "") {
			t.Errorf("%s: protected, yet saves %s (command %q)", r.ID, r.MonthlySavings, r.Command)
		}
		if strings.Contains(r.Action, "Stop it:") || strings.Contains(r.ShortAction, "spot $") {
			t.Errorf("%s: VM wording on a managed item: %q", r.ID, r.Action)
		}
	}
}

// recsOf are the recommendations on one resource, tagging aside, in plan
// order (After chains).
func recsOf(p Plan, id string) []Recommendation {
	var out []Recommendation
	for _, r := range p.Recommendations {
		if r.ResourceID == id && r.Kind != KindTagging {
			out = append(out, r)
		}
	}
	return out
}

func costOf(p Plan, id string) decimal.Decimal {
	for _, ic := range p.Instances {
		if ic.ResourceID == id {
			return ic.MonthlyCost
		}
	}
	return decimal.Zero
}

func replicaUSD(hourly string, hours float64) decimal.Decimal {
	return decimal.RequireFromString(hourly).Mul(decimal.NewFromFloat(hours)).Round(2)
}

func TestManagedEndpointRules(t *testing.T) {
	type want struct {
		action   fleet.ManagedAction // "" = no advice
		replicas int
		saving   float64 // replica-hours saved a month
		conf     Level
		protect  string
	}
	cases := []struct {
		name string
		n    int
		mods []func(*fleet.Instance)
		want want
	}{
		{"no requests, 2 replicas: delete", 2, []func(*fleet.Instance){gpuUtil(0), requests(0)}, want{fleet.ActionDeleteEndpoint, 0, 2 * 730, High, ""}},
		{"no requests, 1 replica: delete", 1, []func(*fleet.Instance){gpuUtil(0), requests(0)}, want{fleet.ActionDeleteEndpoint, 0, 730, High, ""}},
		{"no requests, scales to zero", 3, []func(*fleet.Instance){gpuUtil(0), requests(0), func(in *fleet.Instance) { in.Managed.ScaleToZero = true }}, want{fleet.ActionScaleToZero, 0, 3 * 730, High, ""}},
		{"no requests, no GPU data: requests decide", 2, []func(*fleet.Instance){requests(0), func(in *fleet.Instance) {
			in.Utilization = &fleet.Utilization{Window: week}
		}}, want{fleet.ActionDeleteEndpoint, 0, 2 * 730, High, ""}},
		{"no requests but a busy GPU: not idle", 2, []func(*fleet.Instance){gpuUtil(60), requests(0)}, want{}},
		{"no requests over one day: too short to delete, one replica", 2, []func(*fleet.Instance){requests(0), func(in *fleet.Instance) {
			in.Utilization = &fleet.Utilization{Window: &fleet.TimeRange{Start: managedNow.Add(-24 * time.Hour), End: managedNow}, GPU: &fleet.Stats{}}
		}}, want{fleet.ActionSetReplicas, 1, 730, Medium, ""}},
		{"requests unknown, GPU idle and complete: low confidence", 2, []func(*fleet.Instance){gpuUtil(0)}, want{fleet.ActionDeleteEndpoint, 0, 2 * 730, Low, ""}},
		{"requests unknown, no GPU data: never idle", 2, nil, want{}},
		{"requests unknown, GPU 90 % covered: not idle, one replica", 2, []func(*fleet.Instance){gpuUtil(0), func(in *fleet.Instance) { c := 0.9; in.Utilization.Coverage = &c }}, want{fleet.ActionSetReplicas, 1, 730, High, ""}},
		{"requests unknown, GPU coverage low: not idle", 2, []func(*fleet.Instance){gpuUtil(0), func(in *fleet.Instance) { c := 0.3; in.Utilization.Coverage = &c }}, want{}},
		{"traffic, 4 replicas at p95 11 %: 1 replica", 4, []func(*fleet.Instance){gpuUtil(11), requests(1e6)}, want{fleet.ActionSetReplicas, 1, 3 * 730, High, ""}},
		{"traffic, 4 replicas at p95 30 %: 3 replicas", 4, []func(*fleet.Instance){gpuUtil(30), requests(1e6)}, want{fleet.ActionSetReplicas, 3, 730, High, ""}},
		{"traffic, 4 replicas at p95 45 %: keeps 4", 4, []func(*fleet.Instance){gpuUtil(45), requests(1e6)}, want{}},
		{"production keeps 3 of 4", 4, []func(*fleet.Instance){gpuUtil(11), requests(1e6), tag("env", "prod")}, want{fleet.ActionSetReplicas, 3, 730, High, ""}},
		{"production at 3 stays", 3, []func(*fleet.Instance){gpuUtil(11), requests(1e6), tag("Environment", "production")}, want{}},
		{"production idle: protected", 2, []func(*fleet.Instance){gpuUtil(0), requests(0), tag("Environment", "Production")}, want{fleet.ActionDeleteEndpoint, 0, 0, High, "production"}},
		{"exempt: replica cut protected", 4, []func(*fleet.Instance){gpuUtil(11), requests(1e6), tag("auto-shutdown-exempt", "true")}, want{fleet.ActionSetReplicas, 1, 0, High, "exempt"}},
		{"serverless: nothing bills idle", 1, []func(*fleet.Instance){gpuUtil(0), requests(0), func(in *fleet.Instance) { in.Managed.Serverless = true }}, want{}},
	}
	for _, cl := range clouds {
		for _, c := range cases {
			t.Run(string(cl.service)+"/"+c.name, func(t *testing.T) {
				in := cl.item("ep", fleet.KindEndpoint, c.n, c.mods...)
				p := runManaged(t, Options{}, in)
				recs := recsOf(p, in.ID)
				if c.want.action == "" {
					if len(recs) > 0 {
						t.Fatalf("want no advice, got %q", recs[0].Action)
					}
					return
				}
				if len(recs) != 1 {
					t.Fatalf("want one advice, got %d: %+v", len(recs), recs)
				}
				r := recs[0]
				if r.Change == nil || r.Change.Action != c.want.action {
					t.Fatalf("change %+v, want %s", r.Change, c.want.action)
				}
				if c.want.action == fleet.ActionSetReplicas && (r.Change.Replicas == nil || *r.Change.Replicas != c.want.replicas) {
					t.Errorf("replicas %v, want %d", r.Change.Replicas, c.want.replicas)
				}
				if w := replicaUSD(cl.hourly, c.want.saving); !r.MonthlySavings.Equal(w) {
					t.Errorf("saving %s, want %s (%s)", r.MonthlySavings, w, r.Action)
				}
				if r.Confidence != c.want.conf {
					t.Errorf("confidence %s, want %s", r.Confidence, c.want.conf)
				}
				switch {
				case c.want.protect == "" && r.Protected != nil:
					t.Errorf("protected %+v", r.Protected)
				case c.want.protect != "" && (r.Protected == nil || r.Protected.Reason != c.want.protect):
					t.Errorf("protected %+v, want %s", r.Protected, c.want.protect)
				case c.want.protect == "" && r.Command == "":
					t.Errorf("no command")
				}
			})
		}
	}
}

func TestManagedEndpointRaisesMinToo(t *testing.T) {
	in := clouds[0].item("rerank", fleet.KindEndpoint, 4, gpuUtil(11), requests(1e6))
	four := 4
	in.Managed.Replicas.Min = &four
	r := recsOf(runManaged(t, Options{}, in), in.ID)
	if len(r) != 1 || !strings.Contains(r[0].Action, "autoscaling minimum from 4 to 1") {
		t.Fatalf("want the minimum lowered too: %+v", r)
	}
}

func TestManagedEndpointSmallerType(t *testing.T) {
	// One replica of ml.g5.12xlarge (4 × A10G) at p95 8 %, 20 % of GPU
	// memory: one A10G holds it (8 × 4 × 1.2 = 38.4 % < 50 %; 19.2 GiB of
	// 24 needed), and ml.g5.xlarge is the cheapest such type.
	in := clouds[0].item("big", fleet.KindEndpoint, 1, requests(1e6), func(in *fleet.Instance) {
		in.InstanceType = "ml.g5.12xlarge"
		in.GPU = fleet.GPU{Model: "A10G", Count: 4, MemoryGiB: 24}
		in.Utilization = &fleet.Utilization{Window: week, GPU: &fleet.Stats{Avg: 4, P95: 8, Max: 10}, GPUMemory: &fleet.Stats{Avg: 20, P95: 20, Max: 21}}
	})
	r := recsOf(runManaged(t, Options{}, in), in.ID)
	if len(r) != 1 || r[0].Change.Action != fleet.ActionChangeInstanceType || r[0].Change.InstanceType != "ml.g5.xlarge" {
		t.Fatalf("want a move to ml.g5.xlarge: %+v", r)
	}
	if w := replicaUSD("7.09", 730).Sub(replicaUSD("1.408", 730)); !r[0].MonthlySavings.Equal(w) {
		t.Errorf("saving %s, want %s", r[0].MonthlySavings, w)
	}
	// GPU memory at 80 %: 4 × 24 × 0.8 × 1.2 GiB fit no smaller type.
	in.Utilization.GPUMemory = &fleet.Stats{Avg: 80, P95: 80, Max: 80}
	if r := recsOf(runManaged(t, Options{}, in), in.ID); len(r) != 0 {
		t.Errorf("memory-bound endpoint moved: %+v", r)
	}
}

func TestManagedNotebookRules(t *testing.T) {
	off, on := 0.0, 60.0
	cases := []struct {
		name     string
		kind     fleet.ManagedKind
		mods     []func(*fleet.Instance)
		actions  []fleet.ManagedAction
		saving   bool
		protect  string
		shutdown *float64
	}{
		{"idle, shutdown off: stop + idle shutdown", fleet.KindNotebook, []func(*fleet.Instance){gpuUtil(1)}, []fleet.ManagedAction{fleet.ActionStopNotebook, fleet.ActionIdleShutdown}, true, "", &off},
		{"idle, shutdown unknown: stop + idle shutdown", fleet.KindNotebook, []func(*fleet.Instance){gpuUtil(1)}, []fleet.ManagedAction{fleet.ActionStopNotebook, fleet.ActionIdleShutdown}, true, "", nil},
		{"idle, shutdown on: stop", fleet.KindNotebook, []func(*fleet.Instance){gpuUtil(1)}, []fleet.ManagedAction{fleet.ActionStopNotebook}, true, "", &on},
		{"busy: nothing", fleet.KindNotebook, []func(*fleet.Instance){gpuUtil(40)}, nil, false, "", &off},
		{"no GPU metric: idle shutdown only, no saving", fleet.KindNotebook, nil, []fleet.ManagedAction{fleet.ActionIdleShutdown}, false, "", nil},
		{"no GPU metric, shutdown on: nothing", fleet.KindNotebook, nil, nil, false, "", &on},
		{"low coverage: not idle", fleet.KindNotebook, []func(*fleet.Instance){gpuUtil(1), func(in *fleet.Instance) { c := 0.5; in.Utilization.Coverage = &c }}, nil, false, "", &on},
		{"idle production: protected", fleet.KindNotebook, []func(*fleet.Instance){gpuUtil(1), tag("environment", "production")}, []fleet.ManagedAction{fleet.ActionStopNotebook}, false, "production", &on},
		{"GPU memory held: protected", fleet.KindNotebook, []func(*fleet.Instance){gpuUtil(1), func(in *fleet.Instance) {
			in.Utilization.GPUMemory = &fleet.Stats{Avg: 60, P95: 60, Max: 60}
		}}, []fleet.ManagedAction{fleet.ActionStopNotebook}, false, "gpu-memory-held", &on},
		{"idle Studio app: delete + idle shutdown", fleet.KindStudioApp, []func(*fleet.Instance){gpuUtil(1)}, []fleet.ManagedAction{fleet.ActionStopNotebook, fleet.ActionIdleShutdown}, true, "", nil},
	}
	for _, cl := range clouds {
		for _, c := range cases {
			if c.kind == fleet.KindStudioApp && cl.service != fleet.SageMaker {
				continue
			}
			t.Run(string(cl.service)+"/"+c.name, func(t *testing.T) {
				in := cl.item("nb", c.kind, 1, c.mods...)
				in.Managed.IdleShutdownMinutes = c.shutdown
				if cl.service == fleet.VertexAI {
					in.Managed.PriceType = "" // a Workbench instance is a Compute Engine VM
				}
				p := runManaged(t, Options{}, in)
				recs := recsOf(p, in.ID)
				if len(recs) != len(c.actions) {
					t.Fatalf("got %d advices, want %v: %+v", len(recs), c.actions, recs)
				}
				total := decimal.Zero
				for i, r := range recs {
					if r.Change == nil || r.Change.Action != c.actions[i] {
						t.Errorf("step %d: %+v, want %s", i, r.Change, c.actions[i])
					}
					total = total.Add(r.MonthlySavings)
					if r.Change != nil && r.Change.Action == fleet.ActionIdleShutdown && !r.MonthlySavings.IsZero() {
						t.Errorf("idle shutdown saves %s", r.MonthlySavings)
					}
				}
				if cost := costOf(p, in.ID); c.saving != total.Equal(cost) || (c.saving && !cost.IsPositive()) {
					t.Errorf("saved %s of %s; want the whole cost: %v", total, cost, c.saving)
				}
				if c.protect != "" && (len(recs) == 0 || recs[0].Protected == nil || recs[0].Protected.Reason != c.protect) {
					t.Errorf("want protected %s: %+v", c.protect, recs)
				}
				if c.kind == fleet.KindStudioApp && !strings.Contains(recs[0].Action, "Delete the Studio app") {
					t.Errorf("Studio app action %q", recs[0].Action)
				}
			})
		}
	}
}

func TestManagedClusterRules(t *testing.T) {
	aml := clouds[1]
	two, zero := 2, 0
	jobs := func(n float64) func(*fleet.Instance) { return func(in *fleet.Instance) { in.Managed.Jobs = &n } }
	minN := func(n *int) func(*fleet.Instance) { return func(in *fleet.Instance) { in.Managed.Replicas.Min = n } }
	cases := []struct {
		name    string
		current int
		mods    []func(*fleet.Instance)
		action  fleet.ManagedAction
		nodes   float64 // nodes saved
		conf    Level
	}{
		{"min 2, no jobs: min 0", 2, []func(*fleet.Instance){gpuUtil(0), jobs(0), minN(&two)}, fleet.ActionSetMinReplicas, 2, High},
		{"min 2 of 3 nodes, no jobs: the minimum's 2", 3, []func(*fleet.Instance){gpuUtil(0), jobs(0), minN(&two)}, fleet.ActionSetMinReplicas, 2, High},
		{"min 2, jobs ran: nothing", 2, []func(*fleet.Instance){gpuUtil(0), jobs(4), minN(&two)}, "", 0, ""},
		{"min 2, jobs unknown, idle with full data: low", 2, []func(*fleet.Instance){gpuUtil(0), minN(&two)}, fleet.ActionSetMinReplicas, 2, Low},
		{"min 2, jobs unknown, no data: nothing", 2, []func(*fleet.Instance){minN(&two)}, "", 0, ""},
		{"min 0: nothing to save", 1, []func(*fleet.Instance){gpuUtil(0), jobs(0), minN(&zero)}, "", 0, ""},
		{"min 2 kept (exempt), slow scale-down: no note", 2, []func(*fleet.Instance){gpuUtil(0), jobs(0), minN(&two), tag("auto-shutdown-exempt", "true"), func(in *fleet.Instance) { m := 120.0; in.Managed.IdleShutdownMinutes = &m }}, fleet.ActionSetMinReplicas, 0, High},
		{"min 0, slow scale-down: a note", 1, []func(*fleet.Instance){gpuUtil(50), jobs(3), minN(&zero), func(in *fleet.Instance) { m := 120.0; in.Managed.IdleShutdownMinutes = &m }}, fleet.ActionIdleShutdown, 0, Medium},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := aml.item("cluster", fleet.KindComputeCluster, c.current, c.mods...)
			p := runManaged(t, Options{}, in)
			recs := recsOf(p, in.ID)
			if c.action == "" {
				if len(recs) != 0 {
					t.Fatalf("want nothing: %+v", recs)
				}
				return
			}
			if len(recs) != 1 || recs[0].Change.Action != c.action {
				t.Fatalf("want %s: %+v", c.action, recs)
			}
			if w := replicaUSD(aml.hourly, c.nodes*730); !recs[0].MonthlySavings.Equal(w) {
				t.Errorf("saving %s, want %s", recs[0].MonthlySavings, w)
			}
			if recs[0].Confidence != c.conf {
				t.Errorf("confidence %s, want %s", recs[0].Confidence, c.conf)
			}
		})
	}
}

func TestManagedJobSpot(t *testing.T) {
	sm := func(hoursAgo float64, mods ...func(*fleet.Instance)) fleet.Instance {
		launch := managedNow.Add(-time.Duration(hoursAgo * float64(time.Hour)))
		return fleet.Instance{ID: "arn:aws:sagemaker:us-east-1:1:training-job/ft", Name: "ft", Provider: fleet.AWS, Region: "us-east-1",
			InstanceType: "ml.p4d.24xlarge", GPU: fleet.GPU{Model: "A100", Count: 8, MemoryGiB: 40}, Lifecycle: fleet.OnDemand, State: fleet.Running,
			LaunchTime: &launch, Workload: &fleet.Workload{Type: fleet.FineTuning, Checkpoints: yes()},
			Managed: &fleet.Managed{Service: fleet.SageMaker, Kind: fleet.KindTrainingJob, Replicas: &fleet.Replicas{Current: 2}}}
	}
	vx := func(hoursAgo float64) fleet.Instance {
		launch := managedNow.Add(-time.Duration(hoursAgo * float64(time.Hour)))
		return fleet.Instance{ID: "projects/p/locations/us-central1/customJobs/1", Name: "train", Provider: fleet.GCP, Region: "us-central1",
			InstanceType: "a2-highgpu-8g", GPU: fleet.GPU{Model: "A100", Count: 8, MemoryGiB: 40}, Lifecycle: fleet.OnDemand, State: fleet.Running, LaunchTime: &launch,
			Managed: &fleet.Managed{Service: fleet.VertexAI, Kind: fleet.KindTrainingJob, Replicas: &fleet.Replicas{Current: 1}, PriceType: "vertex-ai/training/a2-highgpu-8g"}}
	}
	t.Run("SageMaker 42 h, checkpoints: 70 % off", func(t *testing.T) {
		in := sm(42)
		r := recsOf(runManaged(t, Options{}, in), in.ID)
		if len(r) != 1 || r[0].Change.Action != fleet.ActionManagedSpot {
			t.Fatalf("%+v", r)
		}
		cost := replicaUSD("37.688", 2*730)
		if w := cost.Sub(decimal.RequireFromString("37.688").Mul(decimal.NewFromFloat(0.3)).Round(6).Mul(decimal.NewFromInt(1460)).Round(2)); !r[0].MonthlySavings.Equal(w) {
			t.Errorf("saving %s, want %s", r[0].MonthlySavings, w)
		}
		if r[0].Risk != Medium {
			t.Errorf("risk %s with checkpoints", r[0].Risk)
		}
	})
	t.Run("SageMaker 10 h: nothing", func(t *testing.T) {
		in := sm(10)
		if r := recsOf(runManaged(t, Options{}, in), in.ID); len(r) != 0 {
			t.Fatalf("%+v", r)
		}
	})
	t.Run("already on spot: nothing", func(t *testing.T) {
		in := sm(42)
		in.Lifecycle = fleet.Spot
		if r := recsOf(runManaged(t, Options{}, in), in.ID); len(r) != 0 && r[0].Change != nil && r[0].Change.Action == fleet.ActionManagedSpot {
			t.Fatalf("%+v", r)
		}
	})
	t.Run("Vertex 96 h, checkpoints unknown: 60 % off, medium risk, a checkpoint interval", func(t *testing.T) {
		in := vx(96)
		r := recsOf(runManaged(t, Options{}, in), in.ID)
		if len(r) != 1 || r[0].Change.Action != fleet.ActionManagedSpot || r[0].Risk != Medium || !strings.Contains(r[0].Action, "checkpoint every 662 min") {
			t.Fatalf("%+v", r)
		}
		if w := replicaUSD("33.79", 730).Sub(replicaUSD("13.516", 730)); !r[0].MonthlySavings.Equal(w) {
			t.Errorf("saving %s, want %s", r[0].MonthlySavings, w)
		}
	})
	t.Run("Vertex 96 h, no checkpoints: high risk", func(t *testing.T) {
		in := vx(96)
		in.Workload = &fleet.Workload{Type: fleet.Training, Checkpoints: no()}
		r := recsOf(runManaged(t, Options{}, in), in.ID)
		if len(r) != 1 || r[0].Risk != High {
			t.Fatalf("%+v", r)
		}
	})
	t.Run("no spot data: advice without a saving", func(t *testing.T) {
		in := vx(96)
		in.Region = "us-central1"
		in.Managed.PriceType = "vertex-ai/training/a2-highgpu-1g"
		in.InstanceType = "a2-highgpu-1g"
		in.GPU.Count = 1
		cat := managedCatalog()
		cat.AddOffer(pricing.InstanceType{Provider: fleet.GCP, Name: "vertex-ai/training/a2-highgpu-1g", GPUModel: "A100", GPUCount: 1, Service: fleet.VertexAI}, "us-central1", "4.22", "")
		f := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind, Instances: []fleet.Instance{in}}
		p := RunWith(f, cat, DefaultPolicy(), Options{Now: managedNow})
		checkSums(t, p)
		r := recsOf(p, in.ID)
		if len(r) != 1 || r[0].Change.Action != fleet.ActionManagedSpot || !r[0].MonthlySavings.IsZero() {
			t.Fatalf("%+v", r)
		}
	})
}

// Managed items are priced under their service's price key, never at a
// VM's price: an ml.* type or Vertex price type the catalog lacks leaves
// the item unpriced (and without advice).
func TestManagedPricing(t *testing.T) {
	in := clouds[2].item("ep", fleet.KindEndpoint, 1, gpuUtil(0), requests(0))
	in.Managed.PriceType = "vertex-ai/prediction/a2-highgpu-2g"
	p := runManaged(t, Options{}, in)
	if p.Instances[0].Priced {
		t.Errorf("priced at %v, not its price type", p.Instances[0].Hourly)
	}
	in.Managed.PriceType = "vertex-ai/prediction/a2-highgpu-1g"
	p = runManaged(t, Options{}, in)
	if !p.Instances[0].Priced || !p.Instances[0].Hourly.Hourly.Equal(decimal.RequireFromString("4.2244")) {
		t.Errorf("priced at %v, want the Vertex price 4.2244", p.Instances[0].Hourly)
	}
}

// Two low-use one-replica deployments of one endpoint get one sharing note,
// no saving; a busy third and another endpoint's are left out.
func TestManagedShareNote(t *testing.T) {
	for _, cl := range clouds {
		dep := func(endpoint, name string, p95 float64) fleet.Instance {
			in := cl.item(endpoint, fleet.KindEndpoint, 1, gpuUtil(p95), requests(1e5))
			in.ID += "/" + name
			in.Managed.Endpoint, in.Managed.Deployment = endpoint, name
			return in
		}
		p := runManaged(t, Options{}, dep("chat", "a", 5), dep("chat", "b", 7), dep("chat", "c", 80), dep("other", "d", 5))
		var notes []string
		for _, w := range p.Warnings {
			if w.Code == WarnManaged && strings.Contains(w.Message, "shared machines") {
				notes = append(notes, w.Message)
			}
		}
		if len(notes) != 1 || !strings.Contains(notes[0], "endpoint chat: deployments a, b each") {
			t.Errorf("%s: notes %q", cl.service, notes)
		}
		if !p.Summary.MonthlySavings.IsZero() {
			t.Errorf("%s: sharing counted %s", cl.service, p.Summary.MonthlySavings)
		}
	}
}

// The commitment plan never sizes a purchase on managed items' usage: busy
// endpoints of the three services, beside no VM, are in no group.
func TestManagedNoCommitmentSizing(t *testing.T) {
	var ins []fleet.Instance
	for _, cl := range clouds {
		ins = append(ins, cl.item("busy", fleet.KindEndpoint, 2, gpuUtil(90), requests(1e7)))
	}
	p := runManaged(t, Options{}, ins...)
	for _, g := range p.Commitments.Groups {
		if len(g.Items)+len(g.SpotItems)+len(g.Excluded) > 0 {
			t.Errorf("group %s %s %s holds managed items: %v %v %v", g.Provider, g.Region, g.Family, g.Items, g.SpotItems, g.Excluded)
		}
	}
	for _, r := range p.Recommendations {
		if r.Kind == KindCommitment {
			t.Errorf("commitment advised: %s", r.Action)
		}
	}
}
