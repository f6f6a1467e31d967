package azure

// Azure Machine Learning: the GPU machines Azure ML runs for a
// subscription, which are no VMs of it (Microsoft's tenant runs them).
// Per subscription one Workspaces_ListBySubscription; per workspace of the
// scope's region OnlineEndpoints_List, then OnlineDeployments_List of each
// endpoint, and Compute_List (Microsoft.MachineLearningServices stable
// 2025-09-01, called through azcore's ARM pipeline; every list paged by
// nextLink). A managed online deployment is a kind endpoint item (its
// sku.capacity the billed instances), a ComputeInstance a notebook, an
// AmlCompute a compute-cluster; Kubernetes deployments run on the user's
// own AKS nodes, which the VM listing already has, and are left out. Only
// GPU sizes are kept. Azure ML bills its compute as the VMs of the size
// (no surcharge), so items are priced at their size.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers"
)

// AMLAPIVersion is the api-version of the Azure ML calls.
const AMLAPIVersion = "2025-09-01"

// maxAMLPages bounds one Azure ML list.
const maxAMLPages = 1000

// The Azure ML actions the adapter needs.
const (
	ActionAMLWorkspacesRead  = "Microsoft.MachineLearningServices/workspaces/read"
	ActionAMLEndpointsRead   = "Microsoft.MachineLearningServices/workspaces/onlineEndpoints/read"
	ActionAMLDeploymentsRead = "Microsoft.MachineLearningServices/workspaces/onlineEndpoints/deployments/read"
	ActionAMLComputesRead    = "Microsoft.MachineLearningServices/workspaces/computes/read"
	ActionAMLComputeStop     = "Microsoft.MachineLearningServices/workspaces/computes/stop/action"
)

// amlWorkspace is one workspace of Workspaces_ListBySubscription.
type amlWorkspace struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Location string `json:"location"`
}

// amlSub is a subscription's workspaces, listed once a scan.
type amlSub struct {
	once sync.Once
	ws   []amlWorkspace
	err  error
}

// armSystemData is ARM's systemData.
type armSystemData struct {
	CreatedAt string `json:"createdAt"`
}

// amlDeployment is one OnlineDeployment of OnlineDeployments_List.
type amlDeployment struct {
	ID         string            `json:"id"`
	Name       string            `json:"name"`
	Location   string            `json:"location"`
	Tags       map[string]string `json:"tags"`
	SystemData *armSystemData    `json:"systemData"`
	Sku        *struct {
		Capacity *int `json:"capacity"`
	} `json:"sku"`
	Properties struct {
		EndpointComputeType string `json:"endpointComputeType"`
		InstanceType        string `json:"instanceType"`
		ProvisioningState   string `json:"provisioningState"`
		ScaleSettings       *struct {
			ScaleType    string `json:"scaleType"`
			MinInstances *int   `json:"minInstances"`
			MaxInstances *int   `json:"maxInstances"`
		} `json:"scaleSettings"`
	} `json:"properties"`
}

// amlCompute is one compute of Compute_List or Compute_Get.
type amlCompute struct {
	ID         string            `json:"id"`
	Name       string            `json:"name"`
	Location   string            `json:"location"`
	Tags       map[string]string `json:"tags"`
	SystemData *armSystemData    `json:"systemData"`
	Properties struct {
		ComputeType       string          `json:"computeType"`
		ComputeLocation   string          `json:"computeLocation"`
		CreatedOn         string          `json:"createdOn"`
		ProvisioningState string          `json:"provisioningState"`
		Properties        json.RawMessage `json:"properties"`
	} `json:"properties"`
}

// amlComputeProps are the properties of a ComputeInstance or an AmlCompute.
type amlComputeProps struct {
	VMSize        string `json:"vmSize"`
	State         string `json:"state"`
	VMPriority    string `json:"vmPriority"`
	ScaleSettings *struct {
		MaxNodeCount                int    `json:"maxNodeCount"`
		MinNodeCount                *int   `json:"minNodeCount"`
		NodeIdleTimeBeforeScaleDown string `json:"nodeIdleTimeBeforeScaleDown"`
	} `json:"scaleSettings"`
	CurrentNodeCount *int `json:"currentNodeCount"`
}

// amlClient is the ARM client of the Azure ML calls.
func (p *Provider) amlClient() (*arm.Client, error) {
	return arm.NewClient("gpufinops-azure-ml", "v1.0.0", p.cred, p.arm)
}

// amlList reads every page of an Azure ML list at path, handing each
// item to add.
func (p *Provider) amlList(ctx context.Context, path string, add func(json.RawMessage) error) error {
	c, err := p.amlClient()
	if err != nil {
		return err
	}
	first, err := url.Parse(strings.TrimRight(c.Endpoint(), "/") + path)
	if err != nil {
		return err
	}
	q := first.Query()
	q.Set("api-version", AMLAPIVersion)
	first.RawQuery = q.Encode()
	next := first.String()
	for n := 0; next != ""; n++ {
		if n >= maxAMLPages {
			return fmt.Errorf("%s: more than %d pages", path, maxAMLPages)
		}
		if u, err := url.Parse(next); err != nil || u.Host != first.Host {
			return fmt.Errorf("nextLink %q does not continue %s", next, first.Host)
		}
		req, err := runtime.NewRequest(ctx, http.MethodGet, next)
		if err != nil {
			return err
		}
		resp, err := c.Pipeline().Do(req)
		if err != nil {
			return classify(err)
		}
		if !runtime.HasStatusCode(resp, http.StatusOK) {
			return classify(runtime.NewResponseError(resp))
		}
		var page struct {
			Value    []json.RawMessage `json:"value"`
			NextLink string            `json:"nextLink"`
		}
		if err := runtime.UnmarshalAsJSON(resp, &page); err != nil {
			return err
		}
		for _, v := range page.Value {
			if err := add(v); err != nil {
				return err
			}
		}
		next = page.NextLink
	}
	return nil
}

// amlWorkspaces are a subscription's workspaces, read once a scan.
func (p *Provider) amlWorkspaces(ctx context.Context, sub string) ([]amlWorkspace, error) {
	p.mu.Lock()
	if p.amlSubs == nil {
		p.amlSubs = map[string]*amlSub{}
	}
	s := p.amlSubs[strings.ToLower(sub)]
	if s == nil {
		s = &amlSub{}
		p.amlSubs[strings.ToLower(sub)] = s
	}
	p.mu.Unlock()
	s.once.Do(func() {
		s.err = p.amlList(ctx, "/subscriptions/"+url.PathEscape(sub)+"/providers/Microsoft.MachineLearningServices/workspaces", func(b json.RawMessage) error {
			var w amlWorkspace
			if err := json.Unmarshal(b, &w); err != nil {
				return fmt.Errorf("azure ml workspaces: %w", err)
			}
			s.ws = append(s.ws, w)
			return nil
		})
	})
	if s.err != nil && (errors.Is(s.err, context.Canceled) || errors.Is(s.err, context.DeadlineExceeded)) {
		// Another caller's context ended the read: read again.
		p.mu.Lock()
		delete(p.amlSubs, strings.ToLower(sub))
		p.mu.Unlock()
		if ctx.Err() == nil {
			return p.amlWorkspaces(ctx, sub)
		}
	}
	return s.ws, s.err
}

// amlRegions are the regions of a subscription's workspaces; nil when they
// cannot be read (the listing of a scope says why).
func (p *Provider) amlRegions(ctx context.Context, sub string) []string {
	ws, err := p.amlWorkspaces(ctx, sub)
	if err != nil {
		return nil
	}
	var out []string
	for _, w := range ws {
		if r := strings.ToLower(w.Location); r != "" && !containsFold(out, r) {
			out = append(out, r)
		}
	}
	sort.Strings(out)
	return out
}

// amlNote keeps a note of the scan about Azure ML, once.
func (p *Provider) amlNote(note string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, n := range p.pendingNotes {
		if n == note {
			return
		}
	}
	p.pendingNotes = append(p.pendingNotes, note)
}

// amlFailed notes an Azure ML read that failed: the scan goes on with the
// VMs, and the note names the permission when one is missing.
func (p *Provider) amlFailed(scope providers.Scope, what, action string, err error) {
	if errors.Is(err, providers.ErrPermission) {
		p.amlNote(fmt.Sprintf("azure subscription %s: Azure ML %s not read: permission denied: the role lacks %s; its managed AI items are left out (grant the action, see 'gpufinops iam-policy azure', or set providers.azure.%s: false)", scope.Account, what, action, OptManagedAI))
		return
	}
	p.amlNote(fmt.Sprintf("%s: Azure ML %s not read: %v; its managed AI items are left out", scope, what, err))
}

// amlInstances are the scope's Azure ML items with a GPU size. A read that
// fails is a note, never an error: the VMs are listed all the same.
func (p *Provider) amlInstances(ctx context.Context, scope providers.Scope) []fleet.Instance {
	ws, err := p.amlWorkspaces(ctx, scope.Account)
	if err != nil {
		if ctx.Err() == nil {
			p.amlFailed(scope, "workspaces", ActionAMLWorkspacesRead, err)
		}
		return nil
	}
	var out []fleet.Instance
	for _, w := range ws {
		if !strings.EqualFold(w.Location, scope.Region) || ctx.Err() != nil {
			continue
		}
		out = append(out, p.workspaceItems(ctx, scope, w)...)
	}
	if len(out) == 0 {
		return out
	}
	rows := make([]vmRow, len(out))
	for i, in := range out {
		rows[i] = vmRow{Size: in.InstanceType}
	}
	skus, err := p.sizeFacts(ctx, scope, rows)
	if err != nil {
		skus = nil // the size table alone
	}
	kept := out[:0]
	for _, in := range out {
		if withGPU(&in, skus[strings.ToLower(in.InstanceType)]) {
			kept = append(kept, in)
		}
	}
	sort.Slice(kept, func(i, j int) bool { return kept[i].ID < kept[j].ID })
	return kept
}

// withGPU fills in the item's GPU from its size; false for a size without
// one. A size the size table lacks takes the GPU its name names, with the
// count Resource SKUs or the catalog give.
func withGPU(in *fleet.Instance, sku *skuInfo) bool {
	info, known := LookupSize(in.InstanceType)
	if !known {
		info.Model, info.MemoryGiB = GPUOfName(in.InstanceType)
	}
	var skuGPUs float64
	if sku != nil {
		skuGPUs = sku.gpus
		in.VCPUs, in.MemoryGiB = sku.vcpus, sku.memoryGiB
	}
	count := gpuCount(info, skuGPUs)
	if count <= 0 {
		return false
	}
	in.GPU = fleet.GPU{Model: info.Model, Count: count, MemoryGiB: info.MemoryGiB}
	return true
}

// workspaceItems are one workspace's deployments and computes.
func (p *Provider) workspaceItems(ctx context.Context, scope providers.Scope, w amlWorkspace) []fleet.Instance {
	var out []fleet.Instance
	var endpoints []string
	err := p.amlList(ctx, w.ID+"/onlineEndpoints", func(b json.RawMessage) error {
		var e struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(b, &e); err != nil {
			return fmt.Errorf("azure ml online endpoints: %w", err)
		}
		endpoints = append(endpoints, e.Name)
		return nil
	})
	if err != nil {
		p.amlFailed(scope, "online endpoints of workspace "+w.Name, ActionAMLEndpointsRead, err)
	}
	kubernetes := 0
	for _, e := range endpoints {
		err := p.amlList(ctx, w.ID+"/onlineEndpoints/"+url.PathEscape(e)+"/deployments", func(b json.RawMessage) error {
			var d amlDeployment
			if err := json.Unmarshal(b, &d); err != nil {
				return fmt.Errorf("azure ml online deployments: %w", err)
			}
			if !strings.EqualFold(d.Properties.EndpointComputeType, "Managed") {
				kubernetes++
				return nil
			}
			out = append(out, deploymentItem(scope, w, e, d))
			return nil
		})
		if err != nil {
			p.amlFailed(scope, "deployments of endpoint "+w.Name+"/"+e, ActionAMLDeploymentsRead, err)
		}
	}
	if kubernetes > 0 {
		p.amlNote(fmt.Sprintf("%s: Azure ML workspace %s: %d Kubernetes online deployments left out: they run on your own AKS nodes, which the VM listing has", scope, w.Name, kubernetes))
	}
	err = p.amlList(ctx, w.ID+"/computes", func(b json.RawMessage) error {
		var c amlCompute
		if err := json.Unmarshal(b, &c); err != nil {
			return fmt.Errorf("azure ml computes: %w", err)
		}
		if in, ok := computeItem(scope, w, c); ok {
			out = append(out, in)
		}
		return nil
	})
	if err != nil {
		p.amlFailed(scope, "computes of workspace "+w.Name, ActionAMLComputesRead, err)
	}
	return out
}

// amlTime is an ARM date-time; nil when absent or unreadable.
func amlTime(s string) *time.Time {
	if s == "" {
		return nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return nil
	}
	t = t.UTC()
	return &t
}

func deploymentItem(scope providers.Scope, w amlWorkspace, endpoint string, d amlDeployment) fleet.Instance {
	replicas := 0
	if d.Sku != nil && d.Sku.Capacity != nil {
		replicas = *d.Sku.Capacity
	}
	m := &fleet.Managed{Service: fleet.AzureML, Kind: fleet.KindEndpoint, Workspace: w.Name, Endpoint: endpoint, Deployment: d.Name,
		Replicas: &fleet.Replicas{Current: replicas}}
	if s := d.Properties.ScaleSettings; s != nil && strings.EqualFold(s.ScaleType, "TargetUtilization") {
		m.Replicas.Min, m.Replicas.Max = s.MinInstances, s.MaxInstances
	}
	state := fleet.Running
	if replicas == 0 {
		state = fleet.Stopped
	}
	in := fleet.Instance{ID: d.ID, Name: endpoint + "/" + d.Name, Provider: fleet.Azure, Account: scope.Account, Region: strings.ToLower(d.Location),
		InstanceType: d.Properties.InstanceType, State: state, Tags: d.Tags, Lifecycle: fleet.OnDemand, Managed: m}
	if in.Region == "" {
		in.Region = scope.Region
	}
	if d.SystemData != nil {
		in.LaunchTime = amlTime(d.SystemData.CreatedAt)
	}
	in.Workload = fleet.WorkloadFromTags(in.Tags)
	return in
}

// computeState is a ComputeInstance's state as a fleet state: stopped when
// Stopped, Stopping or Deleting, else running (billed).
func computeState(state string) fleet.State {
	switch strings.ToLower(state) {
	case "stopped", "stopping", "deleting":
		return fleet.Stopped
	}
	return fleet.Running
}

// computeItem is a ComputeInstance or AmlCompute as a fleet item; false
// for the other compute types (attached AKS, VMs, Databricks…, which are
// the user's own resources).
func computeItem(scope providers.Scope, w amlWorkspace, c amlCompute) (fleet.Instance, bool) {
	var props amlComputeProps
	if len(c.Properties.Properties) > 0 {
		if err := json.Unmarshal(c.Properties.Properties, &props); err != nil {
			return fleet.Instance{}, false
		}
	}
	in := fleet.Instance{ID: c.ID, Name: c.Name, Provider: fleet.Azure, Account: scope.Account, Region: strings.ToLower(c.Location),
		InstanceType: props.VMSize, Tags: c.Tags, Lifecycle: fleet.OnDemand, State: fleet.Running}
	if in.Region == "" {
		in.Region = strings.ToLower(c.Properties.ComputeLocation)
	}
	if in.Region == "" {
		in.Region = scope.Region
	}
	in.LaunchTime = amlTime(c.Properties.CreatedOn)
	if in.LaunchTime == nil && c.SystemData != nil {
		in.LaunchTime = amlTime(c.SystemData.CreatedAt)
	}
	m := &fleet.Managed{Service: fleet.AzureML, Workspace: w.Name}
	switch c.Properties.ComputeType {
	case "ComputeInstance":
		// The stable API has no idle shutdown setting of its own
		// (idleTimeBeforeShutdown is a preview property): unknown.
		m.Kind = fleet.KindNotebook
		in.State = computeState(props.State)
	case "AmlCompute":
		m.Kind = fleet.KindComputeCluster
		m.Replicas = &fleet.Replicas{}
		if props.CurrentNodeCount != nil {
			m.Replicas.Current = *props.CurrentNodeCount
		}
		if s := props.ScaleSettings; s != nil {
			lo := 0
			if s.MinNodeCount != nil {
				lo = *s.MinNodeCount
			}
			hi := s.MaxNodeCount
			m.Replicas.Min, m.Replicas.Max = &lo, &hi
			if mins, ok := isoMinutes(s.NodeIdleTimeBeforeScaleDown); ok {
				m.IdleShutdownMinutes = &mins
			}
		}
		if strings.EqualFold(props.VMPriority, "LowPriority") {
			in.Lifecycle = fleet.Spot
		}
		if m.Replicas.Current == 0 {
			in.State = fleet.Stopped // no node bills
		}
	default:
		return fleet.Instance{}, false
	}
	in.Managed = m
	in.Workload = fleet.WorkloadFromTags(in.Tags)
	return in, true
}

var reISODuration = regexp.MustCompile(`^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$`)

// isoMinutes reads an ISO 8601 duration (PT30M, PT1H30M, P1D) as minutes;
// false when empty or not one.
func isoMinutes(s string) (float64, bool) {
	m := reISODuration.FindStringSubmatch(strings.ToUpper(strings.TrimSpace(s)))
	if m == nil || m[1]+m[2]+m[3]+m[4] == "" || strings.HasSuffix(strings.ToUpper(s), "T") {
		return 0, false
	}
	var total float64
	for i, unit := range []float64{24 * 60, 60, 1, 1.0 / 60} {
		if m[i+1] == "" {
			continue
		}
		var v float64
		if _, err := fmt.Sscan(m[i+1], &v); err != nil {
			return 0, false
		}
		total += v * unit
	}
	return total, true
}
