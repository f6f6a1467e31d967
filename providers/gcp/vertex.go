package gcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	aiplatform "google.golang.org/api/aiplatform/v1"
	"google.golang.org/api/googleapi"
	notebooks "google.golang.org/api/notebooks/v2"
	"google.golang.org/api/option"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers"
)

// Vertex AI and Workbench: the GPU machines Vertex AI runs for a project.
//
// Per region scope of the scan (the project's regions, or --region; with
// providers.gcp.vertex_locations only those), endpoints.list and
// customJobs.list (state RUNNING) at that location's own host: the fewest
// calls that find everything, since Vertex AI has no aggregated listing
// and locations.list would name the same regions at the cost of one more
// call. Per project, one Workbench instances.list over every zone
// (location "-"), shared by its region scopes, which turns the Compute
// Engine VM of each Workbench instance into the notebook item.

// Adapter options of the managed AI reads.
const (
	OptManagedAI       = "managed_ai"
	OptVertexLocations = "vertex_locations"
)

// managedAI reports whether the managed AI reads are on: unless the
// option is false.
func (p *Provider) managedAI() bool {
	v, ok := p.opts.Adapter[OptManagedAI].(bool)
	return !ok || v
}

// vertexIn reports whether a region's Vertex AI location is read.
func (p *Provider) vertexIn(region string) bool {
	locs := p.opts.Adapter.Strings(OptVertexLocations)
	if len(locs) == 0 {
		return true
	}
	for _, l := range locs {
		if l == region {
			return true
		}
	}
	return false
}

// vertexClients are the REST clients of Vertex AI (one per location host)
// and Workbench.
type vertexClients struct {
	mu sync.Mutex
	ai map[string]*aiplatform.Service
	nb *notebooks.Service
}

// aiService is the Vertex AI client of a location: its regional host, or
// the endpoint option's.
func (p *Provider) aiService(ctx context.Context, location string) (*aiplatform.Service, error) {
	p.vertex.mu.Lock()
	defer p.vertex.mu.Unlock()
	if s := p.vertex.ai[location]; s != nil {
		return s, nil
	}
	opts := []option.ClientOption{option.WithHTTPClient(p.http)}
	if p.opts.Endpoint != "" {
		opts = append(opts, option.WithEndpoint(strings.TrimRight(p.opts.Endpoint, "/")+"/"))
	} else {
		opts = append(opts, option.WithEndpoint("https://"+location+"-aiplatform.googleapis.com/"))
	}
	s, err := aiplatform.NewService(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("gcp: Vertex AI client: %w", err)
	}
	if p.vertex.ai == nil {
		p.vertex.ai = map[string]*aiplatform.Service{}
	}
	p.vertex.ai[location] = s
	return s, nil
}

// nbService is the Workbench (notebooks v2) client.
func (p *Provider) nbService(ctx context.Context) (*notebooks.Service, error) {
	p.vertex.mu.Lock()
	defer p.vertex.mu.Unlock()
	if p.vertex.nb != nil {
		return p.vertex.nb, nil
	}
	opts := []option.ClientOption{option.WithHTTPClient(p.http)}
	if p.opts.Endpoint != "" {
		opts = append(opts, option.WithEndpoint(strings.TrimRight(p.opts.Endpoint, "/")+"/"))
	}
	s, err := notebooks.NewService(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("gcp: Workbench client: %w", err)
	}
	p.vertex.nb = s
	return s, nil
}

// vertexGPU maps a Vertex AI or Workbench AcceleratorType enum value
// (NVIDIA_TESLA_T4) to the catalog's GPU model; "" for none or a TPU.
func vertexGPU(enum string) string {
	enum = strings.TrimSpace(enum)
	if enum == "" || enum == "ACCELERATOR_TYPE_UNSPECIFIED" || strings.HasPrefix(enum, "TPU") {
		return ""
	}
	enum = strings.TrimSuffix(enum, "_VWS") // a T4 virtual workstation is a T4
	return GPUModel(strings.ReplaceAll(strings.ToLower(enum), "_", "-"))
}

// vertexPriceType is a Vertex AI item's price type: the machine type, with
// its accelerators when the type does not imply them (n1).
func vertexPriceType(use, machineType string, count int64, enum string) string {
	out := "vertex-ai/" + use + "/" + machineType
	if count > 0 && !bundlesGPUs(machineType) {
		out += "+" + strconv.FormatInt(count, 10) + "x" + enum
	}
	return out
}

// vertexMachine maps a MachineSpec to the item's type and GPUs; ok is
// false for a machine without GPUs.
func vertexMachine(ms *aiplatform.GoogleCloudAiplatformV1MachineSpec) (typ string, gpu fleet.GPU, ok bool) {
	if ms == nil {
		return "", fleet.GPU{}, false
	}
	typ = ms.MachineType
	if typ == "" {
		typ = "n1-standard-2" // the documented default of a deployed model
	}
	model := vertexGPU(ms.AcceleratorType)
	count := float64(ms.AcceleratorCount)
	if model == "" || count == 0 {
		if info, found := catalogMachine(typ); found && info.gpuCount > 0 {
			model, count = info.gpuModel, info.gpuCount
		}
	}
	if model == "" || count == 0 {
		return typ, fleet.GPU{}, false
	}
	return typ, fleet.GPU{Model: model, Count: count, MemoryGiB: gpuMemory[model]}, true
}

func parseTime(s string) *time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return nil
	}
	t = t.UTC()
	return &t
}

// deniedNote is a scan note for a managed AI read that failed: the
// permission it needs when it was denied, and how to turn the reads off.
func deniedNote(what, permission string, err error) string {
	var ge *googleapi.Error
	if errors.As(err, &ge) && ge.Code == http.StatusForbidden {
		return fmt.Sprintf("%s not read: permission %s denied (grant it, or turn the managed AI reads off with providers.gcp.%s: false)", what, permission, OptManagedAI)
	}
	return fmt.Sprintf("%s not read: %v (providers.gcp.%s: false turns the managed AI reads off)", what, err, OptManagedAI)
}

// listVertex lists the scope's Vertex AI endpoint deployments on dedicated
// machines and its running custom jobs with GPUs. A failed read is a scan
// note: the VMs are kept.
func (p *Provider) listVertex(ctx context.Context, scope providers.Scope) []fleet.Instance {
	if !p.vertexIn(scope.Region) {
		return nil
	}
	svc, err := p.aiService(ctx, scope.Region)
	if err != nil {
		p.note(err.Error())
		return nil
	}
	parent := "projects/" + scope.Account + "/locations/" + scope.Region
	ctx, done := p.withCall(ctx)
	defer done()
	var out []fleet.Instance
	err = svc.Projects.Locations.Endpoints.List(parent).Context(ctx).Pages(ctx, func(r *aiplatform.GoogleCloudAiplatformV1ListEndpointsResponse) error {
		for _, ep := range r.Endpoints {
			out = append(out, p.endpointItems(scope, ep)...)
		}
		return nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		p.note(deniedNote(fmt.Sprintf("Vertex AI endpoints of %s in %s", scope.Account, scope.Region), "aiplatform.endpoints.list", err))
	}
	err = svc.Projects.Locations.CustomJobs.List(parent).Filter(`state="JOB_STATE_RUNNING"`).Context(ctx).Pages(ctx, func(r *aiplatform.GoogleCloudAiplatformV1ListCustomJobsResponse) error {
		for _, j := range r.CustomJobs {
			if in, ok := customJobItem(scope, j); ok {
				out = append(out, in)
			}
		}
		return nil
	})
	if err != nil && ctx.Err() == nil {
		p.note(deniedNote(fmt.Sprintf("Vertex AI custom jobs of %s in %s", scope.Account, scope.Region), "aiplatform.customJobs.list", err))
	}
	return out
}

// endpointItems are an endpoint's deployed models on dedicated machines
// with GPUs, one item each; a model on automatic or shared resources has
// no machines of its own and is named in a note.
func (p *Provider) endpointItems(scope providers.Scope, ep *aiplatform.GoogleCloudAiplatformV1Endpoint) []fleet.Instance {
	eid := path.Base(ep.Name)
	display := ep.DisplayName
	if display == "" {
		display = eid
	}
	var out []fleet.Instance
	for _, dm := range ep.DeployedModels {
		res := dm.DedicatedResources
		if res == nil {
			kind := "automatic resources (machines Vertex AI picks and scales, no dedicated ones)"
			if dm.SharedResources != "" {
				kind = "the shared deployment resource pool " + dm.SharedResources + " (not read)"
			}
			p.note(fmt.Sprintf("Vertex AI endpoint %s, deployed model %s: on %s, not listed", display, dm.Id, kind))
			continue
		}
		typ, gpu, ok := vertexMachine(res.MachineSpec)
		if !ok {
			continue
		}
		minR, maxR := int(res.MinReplicaCount), int(res.MaxReplicaCount)
		if maxR < minR {
			maxR = minR // the documented default: max = min
		}
		current := minR
		if dm.Status != nil && (dm.Status.AvailableReplicaCount > 0 || dm.Status.LastUpdateTime != "") {
			current = int(dm.Status.AvailableReplicaCount)
		}
		enum := ""
		if res.MachineSpec != nil {
			enum = res.MachineSpec.AcceleratorType
		}
		in := fleet.Instance{
			ID:   "projects/" + scope.Account + "/locations/" + scope.Region + "/endpoints/" + eid + "/deployedModels/" + dm.Id,
			Name: display + "/" + dm.Id, Provider: fleet.GCP, Account: scope.Account, Region: scope.Region,
			InstanceType: typ, GPU: gpu, Lifecycle: fleet.OnDemand, State: fleet.Running, LaunchTime: parseTime(dm.CreateTime),
			Managed: &fleet.Managed{Service: fleet.VertexAI, Kind: fleet.KindEndpoint, Workspace: scope.Region, Endpoint: eid, Deployment: dm.Id,
				Replicas:  &fleet.Replicas{Current: current, Min: &minR, Max: &maxR},
				PriceType: vertexPriceType("prediction", typ, int64(gpu.Count), enum)},
		}
		if res.Spot {
			in.Lifecycle = fleet.Spot
		}
		if current == 0 {
			in.State = fleet.Stopped
		}
		setLabels(&in, ep.Labels)
		out = append(out, in)
	}
	return out
}

// setLabels sets an item's tags and workload from its labels.
func setLabels(in *fleet.Instance, labels map[string]string) {
	if len(labels) == 0 {
		return
	}
	in.Tags = make(map[string]string, len(labels))
	for k, v := range labels {
		in.Tags[k] = v
	}
	in.Workload = fleet.WorkloadFromTags(in.Tags)
}

// customJobItem is a running custom job with GPUs: its worker pool with
// the most GPUs, its replicas those of every pool of the same machine.
func customJobItem(scope providers.Scope, j *aiplatform.GoogleCloudAiplatformV1CustomJob) (fleet.Instance, bool) {
	if j.JobSpec == nil {
		return fleet.Instance{}, false
	}
	var best *aiplatform.GoogleCloudAiplatformV1WorkerPoolSpec
	var bestGPU fleet.GPU
	for _, w := range j.JobSpec.WorkerPoolSpecs {
		if _, gpu, ok := vertexMachine(w.MachineSpec); ok && gpu.Count > bestGPU.Count {
			best, bestGPU = w, gpu
		}
	}
	if best == nil {
		return fleet.Instance{}, false
	}
	typ, _, _ := vertexMachine(best.MachineSpec)
	replicas := 0
	for _, w := range j.JobSpec.WorkerPoolSpecs {
		if w.MachineSpec != nil && w.MachineSpec.MachineType == best.MachineSpec.MachineType && w.MachineSpec.AcceleratorType == best.MachineSpec.AcceleratorType &&
			w.MachineSpec.AcceleratorCount == best.MachineSpec.AcceleratorCount {
			replicas += int(max(w.ReplicaCount, 1))
		}
	}
	in := fleet.Instance{
		ID:   "projects/" + scope.Account + "/locations/" + scope.Region + "/customJobs/" + path.Base(j.Name),
		Name: j.DisplayName, Provider: fleet.GCP, Account: scope.Account, Region: scope.Region,
		InstanceType: typ, GPU: bestGPU, Lifecycle: fleet.OnDemand, State: fleet.Running, LaunchTime: parseTime(j.StartTime),
		Managed: &fleet.Managed{Service: fleet.VertexAI, Kind: fleet.KindTrainingJob, Workspace: scope.Region, Replicas: &fleet.Replicas{Current: replicas},
			PriceType: vertexPriceType("training", typ, int64(bestGPU.Count), best.MachineSpec.AcceleratorType)},
	}
	if in.LaunchTime == nil {
		in.LaunchTime = parseTime(j.CreateTime)
	}
	if s := j.JobSpec.Scheduling; s != nil && s.Strategy == "SPOT" {
		in.Lifecycle = fleet.Spot
	}
	setLabels(&in, j.Labels)
	return in, true
}

// workbenchOf are a project's Workbench instances by "zone/name", read
// once per scan; nil when they could not be read (a note says why).
func (p *Provider) workbenchOf(ctx context.Context, project string) map[string]*notebooks.Instance {
	s := p.currentScan()
	for {
		s.mu.Lock()
		if s.workbench == nil {
			s.workbench = map[string]*flight[map[string]*notebooks.Instance]{}
		}
		f := s.workbench[project]
		mine := f == nil
		if mine {
			f = newFlight[map[string]*notebooks.Instance]()
			s.workbench[project] = f
		}
		s.mu.Unlock()
		if mine {
			f.val, f.err = p.listWorkbench(ctx, project)
			close(f.done)
			if f.err != nil && ctx.Err() == nil {
				p.note(deniedNote("Workbench instances of "+project, "notebooks.instances.list", f.err))
			}
		}
		v, err := f.wait(ctx)
		if err != nil && !mine && endedElsewhere(ctx, err) {
			s.mu.Lock()
			if s.workbench[project] == f {
				delete(s.workbench, project)
			}
			s.mu.Unlock()
			continue
		}
		return v
	}
}

func (p *Provider) listWorkbench(ctx context.Context, project string) (map[string]*notebooks.Instance, error) {
	svc, err := p.nbService(ctx)
	if err != nil {
		return nil, err
	}
	ctx, done := p.withCall(ctx)
	defer done()
	out := map[string]*notebooks.Instance{}
	err = svc.Projects.Locations.Instances.List("projects/"+project+"/locations/-").Context(ctx).Pages(ctx, func(r *notebooks.ListInstancesResponse) error {
		for _, in := range r.Instances {
			zone := nameSegment(in.Name, "locations")
			out[zone+"/"+path.Base(in.Name)] = in
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// nameSegment is the segment after key in a resource name.
func nameSegment(name, key string) string {
	parts := strings.Split(name, "/")
	for i := 0; i+1 < len(parts); i++ {
		if parts[i] == key {
			return parts[i+1]
		}
	}
	return ""
}

// joinWorkbench turns each VM that is a Workbench instance into the
// notebook item: the instance's resource name as its ID, its idle
// shutdown from the metadata idle-timeout-seconds (absent: unknown, the
// default may apply), the VM's numeric ID kept for its metrics.
func (p *Provider) joinWorkbench(ctx context.Context, scope providers.Scope, vms []fleet.Instance) {
	var wb map[string]*notebooks.Instance
	for i := range vms {
		in := &vms[i]
		if wb == nil {
			if wb = p.workbenchOf(ctx, scope.Account); wb == nil {
				return
			}
		}
		nb, ok := wb[in.Zone+"/"+in.ID]
		if !ok {
			continue
		}
		vmName := in.ID
		in.ID = "projects/" + scope.Account + "/locations/" + in.Zone + "/instances/" + vmName
		in.Name = vmName
		p.idMu.Lock()
		if id, ok := p.ids[scope.Account+"/"+vmName]; ok {
			p.ids[scope.Account+"/"+in.ID] = id
		}
		p.idMu.Unlock()
		m := &fleet.Managed{Service: fleet.VertexAI, Kind: fleet.KindNotebook, Workspace: in.Zone}
		if g := nb.GceSetup; g != nil {
			if v, ok := g.Metadata["idle-timeout-seconds"]; ok {
				if secs, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && secs >= 0 {
					mins := secs / 60
					m.IdleShutdownMinutes = &mins
				}
			}
		}
		in.Managed = m
	}
}

// isWorkbenchName reports whether an ID is a Workbench instance's resource
// name (projects/P/locations/ZONE/instances/NAME).
func isWorkbenchName(id string) bool {
	parts := strings.Split(id, "/")
	return len(parts) == 6 && parts[0] == "projects" && parts[2] == "locations" && parts[4] == "instances"
}

// isVertexName reports whether an ID names a Vertex AI endpoint
// deployment or custom job.
func isVertexName(id string) bool {
	return strings.HasPrefix(id, "projects/") && (strings.Contains(id, "/endpoints/") || strings.Contains(id, "/customJobs/"))
}

// sortItems orders a scope's items by ID.
func sortItems(out []fleet.Instance) {
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
}

// WorkbenchPoll is how often a Workbench stop's operation is read.
var WorkbenchPoll = 2 * time.Second

// stopWorkbench stops a Workbench instance through Workbench
// (instances.stop), which stops its VM, and reads the long-running
// operation until it is done, at most StopWait. A dry run reads the
// instance only. STOPPED, STOPPING, SUSPENDED and SUSPENDING are
// AlreadyStopped.
func (p *Provider) stopWorkbench(ctx context.Context, name string, dryRun bool) (providers.StopResult, error) {
	svc, err := p.nbService(ctx)
	if err != nil {
		return providers.StopResult{}, err
	}
	inst, err := svc.Projects.Locations.Instances.Get(name).Context(ctx).Do()
	if err != nil {
		return providers.StopResult{}, fmt.Errorf("notebooks instances.get %s: %w", name, classify(err))
	}
	prev := inst.State
	switch prev {
	case "STOPPED", "STOPPING", "SUSPENDED", "SUSPENDING", "DELETED":
		return providers.StopResult{PreviousState: prev, CurrentState: prev, AlreadyStopped: true}, nil
	}
	if dryRun {
		return providers.StopResult{PreviousState: prev, CurrentState: prev}, nil
	}
	op, err := svc.Projects.Locations.Instances.Stop(name, &notebooks.StopInstanceRequest{}).Context(ctx).Do()
	p.forget(nameSegment(name, "projects"))
	if err != nil {
		return providers.StopResult{}, fmt.Errorf("notebooks instances.stop %s: %w", name, classify(err))
	}
	wctx, cancel := context.WithTimeout(ctx, StopWait)
	defer cancel()
	for !op.Done {
		select {
		case <-wctx.Done():
			if ctx.Err() != nil {
				return providers.StopResult{}, ctx.Err()
			}
			return providers.StopResult{PreviousState: prev, CurrentState: "STOPPING"}, fmt.Errorf("notebooks instances.stop %s: the operation %s is not done after %s", name, op.Name, StopWait)
		case <-time.After(WorkbenchPoll):
		}
		if op, err = svc.Projects.Locations.Operations.Get(op.Name).Context(wctx).Do(); err != nil {
			return providers.StopResult{PreviousState: prev, CurrentState: "STOPPING"}, fmt.Errorf("notebooks operations.get: %w", classify(err))
		}
	}
	if op.Error != nil {
		return providers.StopResult{PreviousState: prev, CurrentState: prev}, fmt.Errorf("notebooks instances.stop %s: %s", name, op.Error.Message)
	}
	cur := "STOPPED"
	if got, err := svc.Projects.Locations.Instances.Get(name).Context(ctx).Do(); err == nil {
		cur = got.State
	}
	return providers.StopResult{PreviousState: prev, CurrentState: cur}, nil
}
