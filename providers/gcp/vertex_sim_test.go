package gcp

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers"
	"github.com/gpufinops/gpufinops/providers/file"
	"github.com/gpufinops/gpufinops/providers/gcp/sim"
)

// managedProject owns the GCP items of testdata/fleets/managed-ai.yaml.
const managedProject = "ml-prod-123"

// managedFleet is testdata/fleets/managed-ai.yaml.
func managedFleet(t testing.TB) *fleet.Fleet {
	t.Helper()
	f, err := file.Load(filepath.Join("..", "..", "testdata", "fleets", "managed-ai.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// scanManaged lists every region scope of the managed fleet's project
// through the real clients and reads the utilization of what it lists.
func scanManaged(t *testing.T, p *Provider, measure bool) []fleet.Instance {
	t.Helper()
	ctx := context.Background()
	scopes, err := p.Scopes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var all []fleet.Instance
	for _, sc := range scopes {
		got, err := p.ListGPUInstances(ctx, sc)
		if err != nil {
			t.Fatalf("%s: %v", sc.Region, err)
		}
		if measure && len(got) > 0 {
			w := fleet.TimeRange{Start: simNow.Add(-7 * 24 * time.Hour).Truncate(24 * time.Hour), End: simNow.Truncate(24 * time.Hour)}
			if _, err := p.ReadUtilization(ctx, sc, got, w); err != nil {
				t.Fatalf("%s: ReadUtilization: %v", sc.Region, err)
			}
		}
		all = append(all, got...)
	}
	return all
}

// TestSimManagedAI: the GCP items of the managed AI fixture read back
// through the real Compute Engine, Vertex AI and Workbench clients equal
// to the file: IDs, names, types, GPUs, launch times, labels, state and
// every managed field; the endpoint and the job are no VMs, the Workbench
// instance is its VM turned notebook.
func TestSimManagedAI(t *testing.T) {
	f := managedFleet(t)
	p := newProvider(t, startSim(t, sim.New(f, simOptions(t, f))), nil, managedProject)
	got := map[string]fleet.Instance{}
	for _, in := range scanManaged(t, p, false) {
		if _, dup := got[in.ID]; dup {
			t.Errorf("%s listed twice", in.ID)
		}
		got[in.ID] = in
	}
	want := 0
	for _, w := range f.Instances {
		if w.Provider != fleet.GCP {
			continue
		}
		want++
		g, ok := got[w.ID]
		if !ok {
			t.Errorf("%s not listed; got %v", w.ID, keys(got))
			continue
		}
		check := func(field string, a, b any) {
			t.Helper()
			if !reflect.DeepEqual(a, b) {
				t.Errorf("%s %s: got %v, want %v", w.ID, field, a, b)
			}
		}
		if w.Managed != nil { // a VM's name is its ID (the fixture's VM has a numeric ID)
			check("name", g.Name, w.Name)
		}
		check("account", g.Account, w.Account)
		check("region", g.Region, w.Region)
		check("zone", g.Zone, w.Zone)
		check("instanceType", g.InstanceType, w.InstanceType)
		check("gpu", g.GPU, w.GPU)
		check("state", g.State, fleet.Running)
		check("launchTime", fmt.Sprint(g.LaunchTime), fmt.Sprint(w.LaunchTime))
		check("tags", withoutWorkload(g.Tags), w.Tags)
		if w.Managed == nil {
			check("managed", g.Managed, w.Managed)
			continue
		}
		if g.Managed == nil {
			t.Errorf("%s: not managed", w.ID)
			continue
		}
		gm, wm := *g.Managed, *w.Managed
		show := func(m fleet.Managed) string {
			s := fmt.Sprintf("replicas=%v current=%v min=%v max=%v idle=%v", m.Replicas != nil, m.CurrentReplicas(), ptr(m.MinReplicas()), ptr(m.MaxReplicas()), fptr(m.IdleShutdownMinutes))
			m.Requests, m.Replicas, m.IdleShutdownMinutes = nil, nil, nil // requests: from the metrics
			return fmt.Sprintf("%+v %s", m, s)
		}
		check("managed", show(gm), show(wm))
		if w.Workload != nil {
			check("workload", g.Workload, w.Workload)
		}
	}
	if len(got) != want {
		t.Errorf("listed %d items, the fixture has %d GCP items: %v", len(got), want, keys(got))
	}
	if n := p.TakeScanNotes(); len(n) != 0 {
		t.Errorf("notes on a clean scan: %q", n)
	}
}

func keys(m map[string]fleet.Instance) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func ptr(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

func fptr(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// withoutWorkload drops the workload keys the simulator serves as labels.
func withoutWorkload(tags map[string]string) map[string]string {
	out := map[string]string{}
	work := map[string]bool{}
	for k := range workloadKeys {
		work[fleet.NormTagKey(k)] = true
	}
	for k, v := range tags {
		if !work[fleet.NormTagKey(k)] {
			out[k] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// TestSimManagedAIMetrics: the endpoint's duty cycle reads as GPU percent
// and its predictions as requests; the job's accelerator utilization and
// the Workbench VM's Ops Agent metrics are read as the fixture says,
// within the synthesis tolerance.
func TestSimManagedAIMetrics(t *testing.T) {
	f := managedFleet(t)
	p := newProvider(t, startSim(t, sim.New(f, simOptions(t, f))), nil, managedProject)
	got := map[string]fleet.Instance{}
	for _, in := range scanManaged(t, p, true) {
		got[in.ID] = in
	}
	for _, w := range f.Instances {
		if w.Provider != fleet.GCP || w.Utilization == nil || w.Utilization.GPU == nil {
			continue
		}
		g := got[w.ID]
		if g.Utilization == nil {
			t.Errorf("%s: no utilization read", w.ID)
			continue
		}
		sum := g.Utilization.Summarize()
		if sum == nil || sum.GPU == nil {
			t.Errorf("%s: no GPU statistics", w.ID)
			continue
		}
		avg := sum.GPU.Avg
		if math.Abs(avg-w.Utilization.GPU.Avg) > 1.5 {
			t.Errorf("%s: GPU average %.2f, want %.2f", w.ID, avg, w.Utilization.GPU.Avg)
		}
		if w.Managed != nil && w.Managed.Requests != nil {
			if g.Managed.Requests == nil || math.Abs(*g.Managed.Requests-*w.Managed.Requests) > 1 {
				t.Errorf("%s: requests %v, want %v", w.ID, fptr(g.Managed.Requests), *w.Managed.Requests)
			}
		}
	}
}

// TestSimManagedAIDenied: a denied Vertex AI or Workbench permission keeps
// the VMs and names the permission in a scan note.
func TestSimManagedAIDenied(t *testing.T) {
	for _, c := range []struct{ service, op, permission string }{
		{"aiplatform", "projects.locations.endpoints.list", "aiplatform.endpoints.list"},
		{"aiplatform", "projects.locations.customJobs.list", "aiplatform.customJobs.list"},
		{"notebooks", "projects.locations.instances.list", "notebooks.instances.list"},
	} {
		t.Run(c.permission, func(t *testing.T) {
			f := managedFleet(t)
			opts := simOptions(t, f)
			opts.Fault = func(service, op, scope string) (int, string) {
				if service == c.service && op == c.op {
					return http.StatusForbidden, "forbidden"
				}
				return 0, ""
			}
			p := newProvider(t, startSim(t, sim.New(f, opts)), nil, managedProject)
			items := scanManaged(t, p, false)
			vms := 0
			for _, in := range items {
				if in.Managed == nil || in.Managed.Kind == fleet.KindNotebook {
					vms++
				}
			}
			if vms != 2 {
				t.Errorf("%d VMs kept, want 2: %v", vms, items)
			}
			notes := strings.Join(p.TakeScanNotes(), "\n")
			if !strings.Contains(notes, c.permission) || !strings.Contains(notes, OptManagedAI) {
				t.Errorf("notes %q name neither %s nor how to turn the reads off", notes, c.permission)
			}
			found := false
			for _, ch := range p.CheckPermissions(context.Background(), providers.Scope{Provider: fleet.GCP, Account: managedProject}) {
				if ch.Action != c.permission {
					continue
				}
				found = true
				if ch.Status != providers.CheckMissing || !strings.Contains(ch.Fix, OptManagedAI) {
					t.Errorf("doctor %s: %+v, want missing with how to turn the reads off", c.permission, ch)
				}
			}
			if !found {
				t.Errorf("doctor checks no %s", c.permission)
			}
		})
	}
}

// TestManagedAIOff: with providers.gcp.managed_ai false nothing of Vertex
// AI or Workbench is asked for, and the Workbench instance is a plain VM.
func TestManagedAIOff(t *testing.T) {
	f := managedFleet(t)
	s := sim.New(f, simOptions(t, f))
	url := startSim(t, s)
	p, err := New(context.Background(), providers.Options{Endpoint: url, Adapter: providers.Values{OptProjects: []string{managedProject}, OptManagedAI: false},
		RetryMaxBackoff: time.Millisecond, Now: func() time.Time { return simNow }})
	if err != nil {
		t.Fatal(err)
	}
	items := scanManaged(t, p.(*Provider), false)
	if len(items) != 2 {
		t.Errorf("%d items, want the 2 VMs", len(items))
	}
	for _, in := range items {
		if in.Managed != nil {
			t.Errorf("%s managed with the reads off", in.ID)
		}
	}
	for svc := range s.Counts() {
		if svc == "aiplatform" || svc == "notebooks" {
			t.Errorf("%s called with the reads off", svc)
		}
	}
}

// TestVertexNames: accelerator enums and price types, for the class.
func TestVertexNames(t *testing.T) {
	for enum, want := range map[string]string{
		"NVIDIA_TESLA_T4": "T4", "NVIDIA_L4": "L4", "NVIDIA_TESLA_A100": "A100", "NVIDIA_A100_80GB": "A100-80GB", "NVIDIA_H100_80GB": "H100",
		"NVIDIA_H100_MEGA_80GB": "H100-MEGA", "NVIDIA_H200_141GB": "H200", "NVIDIA_B200": "B200", "NVIDIA_TESLA_T4_VWS": "T4",
		"TPU_V5_LITEPOD": "", "ACCELERATOR_TYPE_UNSPECIFIED": "", "": "",
	} {
		if got := vertexGPU(enum); got != want {
			t.Errorf("vertexGPU(%q) = %q, want %q", enum, got, want)
		}
	}
	for _, c := range []struct {
		use, typ string
		n        int64
		enum     string
		want     string
	}{
		{"prediction", "n1-standard-8", 1, "NVIDIA_TESLA_T4", "vertex-ai/prediction/n1-standard-8+1xNVIDIA_TESLA_T4"},
		{"training", "n1-highmem-16", 4, "NVIDIA_TESLA_V100", "vertex-ai/training/n1-highmem-16+4xNVIDIA_TESLA_V100"},
		{"prediction", "a2-highgpu-1g", 1, "NVIDIA_TESLA_A100", "vertex-ai/prediction/a2-highgpu-1g"},
		{"training", "a3-highgpu-8g", 8, "NVIDIA_H100_80GB", "vertex-ai/training/a3-highgpu-8g"},
		{"prediction", "g2-standard-12", 1, "NVIDIA_L4", "vertex-ai/prediction/g2-standard-12"},
	} {
		if got := vertexPriceType(c.use, c.typ, c.n, c.enum); got != c.want {
			t.Errorf("vertexPriceType(%s, %s, %d, %s) = %q, want %q", c.use, c.typ, c.n, c.enum, got, c.want)
		}
	}
}

// TestSimWorkbenchStop: a dry run reads the instance and changes nothing;
// the stop goes through Workbench, waits for its operation, and then the
// Workbench listing says STOPPED and Compute Engine's VM is stopped; a
// second stop is AlreadyStopped; endpoints and jobs are refused.
func TestSimWorkbenchStop(t *testing.T) {
	defer func(d time.Duration) { WorkbenchPoll = d }(WorkbenchPoll)
	WorkbenchPoll = time.Millisecond
	f := managedFleet(t)
	p := newProvider(t, startSim(t, sim.New(f, simOptions(t, f))), nil, managedProject)
	ctx := context.Background()
	sc := providers.Scope{Provider: fleet.GCP, Account: managedProject, Region: "us-central1"}
	const wb = "projects/ml-prod-123/locations/us-central1-a/instances/wb-carol"
	res, err := p.Stop(ctx, sc, wb, true)
	if err != nil || res.PreviousState != "ACTIVE" || res.AlreadyStopped {
		t.Fatalf("dry run: %+v, %v", res, err)
	}
	res, err = p.Stop(ctx, sc, wb, false)
	if err != nil || res.PreviousState != "ACTIVE" || res.CurrentState != "STOPPED" {
		t.Fatalf("stop: %+v, %v", res, err)
	}
	for _, in := range scanManaged(t, p, false) {
		if in.ID == wb && in.State != fleet.Stopped {
			t.Errorf("after the stop the Workbench VM is %s", in.State)
		}
	}
	nb, err := p.nbService(ctx)
	if err != nil {
		t.Fatal(err)
	}
	list, err := nb.Projects.Locations.Instances.List("projects/" + managedProject + "/locations/us-central1-a").Do()
	if err != nil || len(list.Instances) != 1 || list.Instances[0].State != "STOPPED" {
		t.Errorf("Workbench listing after the stop: %+v, %v", list, err)
	}
	res, err = p.Stop(ctx, sc, wb, false)
	if err != nil || !res.AlreadyStopped {
		t.Errorf("second stop: %+v, %v", res, err)
	}
	for _, id := range []string{
		"projects/ml-prod-123/locations/us-central1/endpoints/4417283746/deployedModels/8812",
		"projects/ml-prod-123/locations/us-central1/customJobs/5550001",
	} {
		if _, err := p.Stop(ctx, sc, id, false); !errors.Is(err, providers.ErrNotStoppable) {
			t.Errorf("stop %s: %v, want ErrNotStoppable", id, err)
		}
	}
	if _, err := p.Stop(ctx, sc, "projects/ml-prod-123/locations/us-central1-a/instances/none", false); !errors.Is(err, providers.ErrNotFound) {
		t.Errorf("stop of no instance: %v, want ErrNotFound", err)
	}
}

// TestVertexPrices: Vertex AI price types are priced from the Billing
// Catalog's Vertex AI SKUs as the sum of the machine's vCPUs, GiB and GPUs
// (the a3 rows of shared/data/managed-ai/gcp-vertex.csv, to the cent of
// their 6 places), prediction and training apart; a type, region or use
// the SKUs do not price gets no price, never Compute Engine's.
func TestVertexPrices(t *testing.T) {
	f := managedFleet(t)
	p := newProvider(t, startSim(t, sim.New(f, simOptions(t, f))), nil, managedProject)
	ctx := context.Background()
	for _, c := range []struct {
		region, typ, want string
	}{
		{"us-central1", "vertex-ai/prediction/a3-highgpu-1g", "12.625919"},
		{"us-central1", "vertex-ai/training/a3-highgpu-8g", "101.007352"},
		{"us-central1", "vertex-ai/prediction/a2-highgpu-1g", ""},
		{"us-central1", "vertex-ai/training/a2-highgpu-8g", ""},
		{"us-central1", "vertex-ai/prediction/n1-standard-8+1xNVIDIA_TESLA_T4", ""},
		{"europe-west4", "vertex-ai/prediction/a3-highgpu-1g", ""},
		{"us-central1", "vertex-ai/serving/a3-highgpu-1g", ""},
		{"us-central1", "vertex-ai/prediction/a3-highgpu-1g+0xNVIDIA_H100_80GB", ""},
	} {
		sc := providers.Scope{Provider: fleet.GCP, Account: managedProject, Region: c.region}
		got, err := p.ReadPrices(ctx, sc, []string{c.typ})
		if err != nil {
			t.Fatalf("%s %s: %v", c.region, c.typ, err)
		}
		var found []string
		for _, pr := range got {
			if pr.InstanceType == c.typ {
				found = append(found, pr.Hourly.String())
				if pr.Option != "on-demand" || !strings.HasPrefix(pr.Source, "GCP Billing Catalog (Vertex AI)") || pr.AsOf == "" {
					t.Errorf("%s: %+v", c.typ, pr)
				}
			}
		}
		if (c.want == "" && len(found) != 0) || (c.want != "" && (len(found) != 1 || found[0] != c.want)) {
			t.Errorf("%s in %s: prices %v, want %q", c.typ, c.region, found, c.want)
		}
	}
	if n := p.TakeScanNotes(); len(n) != 0 {
		t.Errorf("notes: %q", n)
	}
}

// FuzzVertexPriceType: any string parses or is refused without a panic,
// and what parses names a use, a machine and, with accelerators, a known
// GPU and a positive count.
func FuzzVertexPriceType(f *testing.F) {
	for _, s := range []string{"vertex-ai/prediction/a2-highgpu-1g", "vertex-ai/training/n1-standard-8+2xNVIDIA_TESLA_T4",
		"vertex-ai/prediction/", "vertex-ai//x", "vertex-ai/training/n1+x", "vertex-ai/training/n1+-1xNVIDIA_L4", "a2-highgpu-1g"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		use, machine, count, model, ok := parseVertexPriceType(s)
		if !ok {
			return
		}
		if (use != "prediction" && use != "training") || machine == "" || count < 0 || (count > 0) != (model != "") {
			t.Errorf("%q: %q %q %v %q", s, use, machine, count, model)
		}
	})
}

// TestManagedCommand: each change gcloud has a GA command for, spelled
// from the item's project, region or zone and names, arguments quoted;
// the rest, and items of other services or lacking names, give "".
func TestManagedCommand(t *testing.T) {
	one, two := 1, 2
	ep := &fleet.Instance{ID: "projects/ml-prod-123/locations/us-central1/endpoints/4417283746/deployedModels/8812", Provider: fleet.GCP,
		Account: "ml-prod-123", Region: "us-central1", InstanceType: "a2-highgpu-1g",
		Managed: &fleet.Managed{Service: fleet.VertexAI, Kind: fleet.KindEndpoint, Workspace: "us-central1", Endpoint: "4417283746", Deployment: "8812",
			Replicas: &fleet.Replicas{Current: 2, Min: &one, Max: &two}}}
	wb := &fleet.Instance{ID: "projects/ml-prod-123/locations/us-central1-a/instances/wb-carol", Name: "wb-carol", Provider: fleet.GCP,
		Account: "ml-prod-123", Region: "us-central1", Zone: "us-central1-a",
		Managed: &fleet.Managed{Service: fleet.VertexAI, Kind: fleet.KindNotebook, Workspace: "us-central1-a"}}
	job := &fleet.Instance{ID: "projects/ml-prod-123/locations/europe-west4/customJobs/1", Provider: fleet.GCP, Account: "ml-prod-123", Region: "europe-west4",
		Managed: &fleet.Managed{Service: fleet.VertexAI, Kind: fleet.KindTrainingJob, Workspace: "europe-west4"}}
	odd := *wb
	odd.ID, odd.Account = "wb odd", "proj'x"
	odd.Name = "wb odd"
	odd.Managed = &fleet.Managed{Service: fleet.VertexAI, Kind: fleet.KindNotebook, Workspace: "europe-west4-b"}
	azure := *ep
	azure.Provider = fleet.Azure
	for _, c := range []struct {
		in   *fleet.Instance
		ch   fleet.ManagedChange
		want string
	}{
		{ep, fleet.ManagedChange{Action: fleet.ActionDeleteEndpoint}, "gcloud ai endpoints undeploy-model 4417283746 --project=ml-prod-123 --region=us-central1 --deployed-model-id=8812"},
		{wb, fleet.ManagedChange{Action: fleet.ActionStopNotebook}, "gcloud workbench instances stop wb-carol --project=ml-prod-123 --location=us-central1-a"},
		{wb, fleet.ManagedChange{Action: fleet.ActionIdleShutdown, IdleShutdownMinutes: 60}, "gcloud workbench instances update wb-carol --project=ml-prod-123 --location=us-central1-a --metadata=idle-timeout-seconds=3600"},
		{&odd, fleet.ManagedChange{Action: fleet.ActionStopNotebook}, `gcloud workbench instances stop 'wb odd' --project='proj'\''x' --location=europe-west4-b`},
		{wb, fleet.ManagedChange{Action: fleet.ActionIdleShutdown}, ""},
		{ep, fleet.ManagedChange{Action: fleet.ActionStopNotebook}, ""},
		{ep, fleet.ManagedChange{Action: fleet.ActionSetReplicas, Replicas: 1}, ""},
		{ep, fleet.ManagedChange{Action: fleet.ActionScaleToZero}, ""},
		{ep, fleet.ManagedChange{Action: fleet.ActionChangeInstanceType, InstanceType: "g2-standard-12"}, ""},
		{wb, fleet.ManagedChange{Action: fleet.ActionDeleteEndpoint}, ""},
		{job, fleet.ManagedChange{Action: fleet.ActionManagedSpot}, ""},
		{job, fleet.ManagedChange{Action: fleet.ActionSetMinReplicas, Replicas: 0}, ""},
		{&azure, fleet.ManagedChange{Action: fleet.ActionDeleteEndpoint}, ""},
		{&fleet.Instance{Provider: fleet.GCP, Account: "p"}, fleet.ManagedChange{Action: fleet.ActionStopNotebook}, ""},
	} {
		if got := ManagedCommand(c.in, c.ch); got != c.want {
			t.Errorf("%s %s:\n got %q\nwant %q", c.in.ID, c.ch.Action, got, c.want)
		}
	}
	if got := providers.ManagedCommand(ep, fleet.ManagedChange{Action: fleet.ActionDeleteEndpoint}); !strings.HasPrefix(got, "gcloud ai endpoints undeploy-model ") {
		t.Errorf("registered: %q", got)
	}
}

// TestSimManagedAIPaging: more endpoints, jobs and Workbench instances
// than a page holds (100) are all listed, each once, through the
// clients' page tokens.
func TestSimManagedAIPaging(t *testing.T) {
	const n = 130
	f := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind}
	l4 := fleet.GPU{Model: "L4", Count: 1, MemoryGiB: 24}
	one := 1
	for i := range n {
		base := fleet.Instance{Provider: fleet.GCP, Account: managedProject, Region: "us-central1", GPU: l4, State: fleet.Running}
		ep := base
		ep.ID, ep.Name, ep.InstanceType = fmt.Sprintf("projects/%s/locations/us-central1/endpoints/%d/deployedModels/%d", managedProject, 1000+i, 5000+i), fmt.Sprintf("ep-%d/%d", i, 5000+i), "g2-standard-8"
		ep.Managed = &fleet.Managed{Service: fleet.VertexAI, Kind: fleet.KindEndpoint, Workspace: "us-central1", Endpoint: fmt.Sprint(1000 + i), Deployment: fmt.Sprint(5000 + i),
			Replicas: &fleet.Replicas{Current: 1, Min: &one, Max: &one}}
		job := base
		job.ID, job.Name, job.InstanceType = fmt.Sprintf("projects/%s/locations/us-central1/customJobs/%d", managedProject, 9000+i), fmt.Sprintf("job-%d", i), "g2-standard-8"
		job.Managed = &fleet.Managed{Service: fleet.VertexAI, Kind: fleet.KindTrainingJob, Workspace: "us-central1", Replicas: &fleet.Replicas{Current: 1}}
		wb := base
		wb.ID, wb.Name, wb.Zone, wb.InstanceType = fmt.Sprintf("projects/%s/locations/us-central1-a/instances/wb-%03d", managedProject, i), fmt.Sprintf("wb-%03d", i), "us-central1-a", "g2-standard-8"
		wb.Managed = &fleet.Managed{Service: fleet.VertexAI, Kind: fleet.KindNotebook, Workspace: "us-central1-a"}
		f.Instances = append(f.Instances, ep, job, wb)
	}
	s := sim.New(f, simOptions(t, f))
	p := newProvider(t, startSim(t, s), nil, managedProject)
	kinds := map[fleet.ManagedKind]int{}
	seen := map[string]bool{}
	for _, in := range scanManaged(t, p, false) {
		if seen[in.ID] {
			t.Errorf("%s listed twice", in.ID)
		}
		seen[in.ID] = true
		if in.Managed != nil {
			kinds[in.Managed.Kind]++
		}
	}
	for _, k := range []fleet.ManagedKind{fleet.KindEndpoint, fleet.KindTrainingJob, fleet.KindNotebook} {
		if kinds[k] != n {
			t.Errorf("%d %s items listed, want %d", kinds[k], k, n)
		}
	}
	c := s.Counts()
	if c["aiplatform"]["projects.locations.endpoints.list"] != 2 || c["aiplatform"]["projects.locations.customJobs.list"] != 2 || c["notebooks"]["projects.locations.instances.list"] != 2 {
		t.Errorf("calls %v %v, want two pages of each listing", c["aiplatform"], c["notebooks"])
	}
}

// TestSimVertexAcceleratorMemory: an endpoint's accelerator memory bytes
// read as the percent of its replica's GPU memory.
func TestSimVertexAcceleratorMemory(t *testing.T) {
	f := managedFleet(t)
	const id = "projects/ml-prod-123/locations/us-central1/endpoints/4417283746/deployedModels/8812"
	for i := range f.Instances {
		if f.Instances[i].ID == id {
			u := *f.Instances[i].Utilization
			u.GPU = &fleet.Stats{Avg: 20, P95: 30, Max: 40}
			u.GPUMemory = &fleet.Stats{Avg: 55, P95: 60, Max: 62}
			f.Instances[i].Utilization = &u
		}
	}
	p := newProvider(t, startSim(t, sim.New(f, simOptions(t, f))), nil, managedProject)
	for _, in := range scanManaged(t, p, true) {
		if in.ID != id {
			continue
		}
		sum := in.Utilization.Summarize()
		if sum == nil || sum.GPUMemory == nil || math.Abs(sum.GPUMemory.Avg-55) > 1.5 || math.Abs(sum.GPU.Avg-20) > 1.5 {
			t.Fatalf("summary %+v, want GPU about 20 %% and GPU memory about 55 %%", sum)
		}
		return
	}
	t.Fatal("the endpoint was not listed")
}
