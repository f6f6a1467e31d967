package sim

// Azure Machine Learning. The fleet's items of managed.service azure-ml are
// served as the Microsoft.MachineLearningServices resource provider
// answers them (azure-rest-api-specs stable 2025-09-01: workspaceRP.json
// Workspaces_ListBySubscription, mfe.json OnlineEndpoints_List and
// OnlineDeployments_List, machineLearningServices.json Compute_List,
// Compute_Get and Compute_Stop), never as virtual machines: Azure ML runs
// them in Microsoft's tenant. A workspace is every distinct
// subscription/resource group/workspace of the items; a kind endpoint item
// is a managed online deployment (its endpoint listed once), a notebook a
// ComputeInstance, a compute-cluster an AmlCompute. Lists page by nextLink
// ($skip, the models' PaginationParameter). Compute_Stop is a long-running
// operation: 202 with Azure-AsyncOperation and Location, the instance
// Stopping until the operation has answered InProgress OperationPolls
// times, then Stopped.

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers/simkit"
)

// AMLVersion is the api-version of the Azure ML operations served.
const AMLVersion = "2025-09-01"

// amlOps are the operations of this file.
var amlOps = []string{"machinelearning:ListWorkspaces", "machinelearning:ListOnlineEndpoints", "machinelearning:ListOnlineDeployments",
	"machinelearning:ListComputes", "machinelearning:GetCompute", "machinelearning:StopCompute"}

// DefaultAMLPage is how many resources an Azure ML list answers a page
// when Options.AMLPage is zero.
const DefaultAMLPage = 20

func init() {
	Actions["ListWorkspaces"] = "Microsoft.MachineLearningServices/workspaces/read"
	Actions["ListOnlineEndpoints"] = "Microsoft.MachineLearningServices/workspaces/onlineEndpoints/read"
	Actions["ListOnlineDeployments"] = "Microsoft.MachineLearningServices/workspaces/onlineEndpoints/deployments/read"
	Actions["ListComputes"] = "Microsoft.MachineLearningServices/workspaces/computes/read"
	Actions["GetCompute"] = "Microsoft.MachineLearningServices/workspaces/computes/read"
	Actions["StopCompute"] = "Microsoft.MachineLearningServices/workspaces/computes/stop/action"
}

// amlItem is one Azure ML item of the fleet as ARM names it.
type amlItem struct {
	in                 *fleet.Instance
	sub, rg, ws        string
	endpoint, name     string // name: the deployment or the compute
	computeType        string // ComputeInstance, AmlCompute; "" for a deployment
	replicas, min, max int
}

// workspaceID is the item's workspace resource ID.
func (a *amlItem) workspaceID() string {
	return "/subscriptions/" + a.sub + "/resourceGroups/" + a.rg + "/providers/Microsoft.MachineLearningServices/workspaces/" + a.ws
}

func (a *amlItem) endpointID() string { return a.workspaceID() + "/onlineEndpoints/" + a.endpoint }

func (a *amlItem) id() string {
	if a.computeType == "" {
		return a.endpointID() + "/deployments/" + a.name
	}
	return a.workspaceID() + "/computes/" + a.name
}

var reAMLID = regexp.MustCompile(`(?i)^/subscriptions/([^/]+)/resourceGroups/([^/]+)/providers/Microsoft\.MachineLearningServices/workspaces/([^/]+)/(?:onlineEndpoints/([^/]+)/deployments|computes)/([^/]+)$`)

// IsAML reports whether a fleet instance is an Azure ML item, which the
// simulator serves through the Azure ML APIs and never as a VM.
func IsAML(in *fleet.Instance) bool {
	return in.Managed != nil && in.Managed.Service == fleet.AzureML
}

// newAMLItem names an Azure ML item: from its ARM ID, else from its
// account, resource group (ResourceGroup), managed workspace, endpoint and
// deployment or name.
func newAMLItem(in *fleet.Instance) *amlItem {
	m := in.Managed
	a := &amlItem{in: in, sub: in.Account, rg: ResourceGroup(*in), ws: m.Workspace, endpoint: m.Endpoint, name: m.Deployment, replicas: int(in.ReplicaCount())}
	if p := reAMLID.FindStringSubmatch(in.ID); p != nil {
		a.sub, a.rg, a.ws, a.endpoint, a.name = p[1], p[2], p[3], p[4], p[5]
	}
	if a.ws == "" {
		a.ws = "ws-" + in.Region
	}
	switch m.Kind {
	case fleet.KindNotebook:
		a.computeType, a.replicas = "ComputeInstance", 1
	case fleet.KindComputeCluster:
		a.computeType = "AmlCompute"
	}
	if a.computeType != "" {
		a.endpoint = ""
		if a.name == "" || !reAMLID.MatchString(in.ID) {
			a.name = in.Name
		}
	} else {
		if a.endpoint == "" {
			a.endpoint = in.Name
		}
		if a.name == "" {
			a.name = "default"
		}
	}
	a.min, a.max = -1, -1
	if r := m.Replicas; r != nil && r.Min != nil {
		a.min = *r.Min
	}
	if r := m.Replicas; r != nil && r.Max != nil {
		a.max = *r.Max
	}
	return a
}

// amlRoutes are the Azure ML paths: the subscription's workspaces, a
// workspace's endpoints, an endpoint's deployments, a workspace's computes,
// one compute and its stop.
var (
	reAMLWorkspaces  = regexp.MustCompile(`(?i)^/subscriptions/([^/]+)/providers/Microsoft\.MachineLearningServices/workspaces$`)
	reAMLEndpoints   = regexp.MustCompile(`(?i)^/subscriptions/([^/]+)/resourceGroups/([^/]+)/providers/Microsoft\.MachineLearningServices/workspaces/([^/]+)/onlineEndpoints$`)
	reAMLDeployments = regexp.MustCompile(`(?i)^/subscriptions/([^/]+)/resourceGroups/([^/]+)/providers/Microsoft\.MachineLearningServices/workspaces/([^/]+)/onlineEndpoints/([^/]+)/deployments$`)
	reAMLComputes    = regexp.MustCompile(`(?i)^/subscriptions/([^/]+)/resourceGroups/([^/]+)/providers/Microsoft\.MachineLearningServices/workspaces/([^/]+)/computes(?:/([^/]+)(/stop)?)?$`)
)

// classifyAML recognises this file's requests.
func (s *Server) classifyAML(r *http.Request, req request) (request, bool) {
	p := r.URL.Path
	get, post := r.Method == http.MethodGet, r.Method == http.MethodPost
	req.service = "machinelearning"
	switch {
	case get && reAMLWorkspaces.MatchString(p):
		m := reAMLWorkspaces.FindStringSubmatch(p)
		req.op, req.sub, req.scope = "ListWorkspaces", m[1], m[1]
	case get && reAMLEndpoints.MatchString(p):
		m := reAMLEndpoints.FindStringSubmatch(p)
		req.op, req.sub, req.parts = "ListOnlineEndpoints", m[1], m[1:4]
	case get && reAMLDeployments.MatchString(p):
		m := reAMLDeployments.FindStringSubmatch(p)
		req.op, req.sub, req.parts = "ListOnlineDeployments", m[1], m[1:5]
	case reAMLComputes.MatchString(p):
		m := reAMLComputes.FindStringSubmatch(p)
		req.sub, req.parts = m[1], m[1:5]
		switch {
		case get && m[4] == "":
			req.op = "ListComputes"
		case get && m[5] == "":
			req.op = "GetCompute"
		case post && m[5] != "":
			req.op = "StopCompute"
		default:
			return req, false
		}
	default:
		return req, false
	}
	if req.scope == "" {
		req.scope = s.amlRegion(req.parts) // the workspace's region, as the VMs' scope
		if req.scope == "" {
			req.scope = req.sub
		}
	}
	return req, true
}

// amlRegion is the region of the workspace parts name (subscription,
// resource group, workspace, …); "" when the simulator has none.
func (s *Server) amlRegion(parts []string) string {
	for _, a := range s.aml {
		if strings.EqualFold(a.sub, parts[0]) && strings.EqualFold(a.rg, parts[1]) && strings.EqualFold(a.ws, parts[2]) {
			return a.in.Region
		}
	}
	return ""
}

// amlIn reports whether a is in the workspace parts name.
func amlIn(a *amlItem, parts []string) bool {
	return strings.EqualFold(a.sub, parts[0]) && strings.EqualFold(a.rg, parts[1]) && strings.EqualFold(a.ws, parts[2])
}

func (s *Server) serveAML(w http.ResponseWriter, req request) {
	switch req.op {
	case "ListWorkspaces":
		seen := map[string]bool{}
		var out []map[string]any
		for _, a := range s.aml {
			id := a.workspaceID()
			if !strings.EqualFold(a.sub, req.sub) || seen[strings.ToLower(id)] {
				continue
			}
			seen[strings.ToLower(id)] = true
			out = append(out, map[string]any{"id": id, "name": a.ws, "type": "Microsoft.MachineLearningServices/workspaces",
				"location": a.in.Region, "kind": "Default", "tags": map[string]string{}, "sku": map[string]any{"name": "Basic", "tier": "Basic"}})
		}
		s.writeAMLPage(w, req.r, out)
	case "ListOnlineEndpoints":
		if !s.amlWorkspace(w, req.parts) {
			return
		}
		seen := map[string]bool{}
		var out []map[string]any
		for _, a := range s.aml {
			if a.computeType != "" || !amlIn(a, req.parts) || seen[strings.ToLower(a.endpoint)] {
				continue
			}
			seen[strings.ToLower(a.endpoint)] = true
			out = append(out, s.endpointBody(a))
		}
		s.writeAMLPage(w, req.r, out)
	case "ListOnlineDeployments":
		if !s.amlWorkspace(w, req.parts) {
			return
		}
		var out []map[string]any
		found := false
		for _, a := range s.aml {
			if a.computeType == "" && amlIn(a, req.parts) && strings.EqualFold(a.endpoint, req.parts[3]) {
				found = true
				out = append(out, s.deploymentBody(a))
			}
		}
		if !found {
			writeError(w, http.StatusNotFound, "UserError", "Could not find endpoint "+req.parts[3]+".")
			return
		}
		s.writeAMLPage(w, req.r, out)
	case "ListComputes":
		if !s.amlWorkspace(w, req.parts) {
			return
		}
		var out []map[string]any
		for _, a := range s.aml {
			if a.computeType != "" && amlIn(a, req.parts) {
				out = append(out, s.computeBody(a))
			}
		}
		s.writeAMLPage(w, req.r, out)
	case "GetCompute", "StopCompute":
		a := s.amlCompute(req.parts)
		if a == nil {
			writeError(w, http.StatusNotFound, "ResourceNotFound", "The Resource 'Microsoft.MachineLearningServices/workspaces/"+req.parts[2]+"/computes/"+req.parts[3]+"' under resource group '"+req.parts[1]+"' was not found.")
			return
		}
		if req.op == "GetCompute" {
			writeJSON(w, s.computeBody(a))
			return
		}
		s.stopCompute(w, req, a)
	}
}

// amlWorkspace answers 404 ResourceNotFound for a workspace the simulator
// does not have.
func (s *Server) amlWorkspace(w http.ResponseWriter, parts []string) bool {
	for _, a := range s.aml {
		if amlIn(a, parts) {
			return true
		}
	}
	writeError(w, http.StatusNotFound, "ResourceNotFound", "The Resource 'Microsoft.MachineLearningServices/workspaces/"+parts[2]+"' under resource group '"+parts[1]+"' was not found.")
	return false
}

func (s *Server) amlCompute(parts []string) *amlItem {
	for _, a := range s.aml {
		if a.computeType != "" && amlIn(a, parts) && strings.EqualFold(a.name, parts[3]) {
			return a
		}
	}
	return nil
}

// writeAMLPage answers one page of an Azure ML list, continued by a
// nextLink with $skip.
func (s *Server) writeAMLPage(w http.ResponseWriter, r *http.Request, all []map[string]any) {
	size := s.opts.AMLPage
	if size <= 0 {
		size = DefaultAMLPage
	}
	writeLinkedPage(w, r, all, size, simkit.Fingerprint(r.URL.Path), "$skip", "UserError", "the $skip token does not continue this list")
}

// systemData is the ARM systemData of an item created at its launch time.
func (s *Server) systemData(a *amlItem) map[string]any {
	at := s.created(a.in)
	return map[string]any{"createdAt": at, "createdBy": "gpufinops-sim", "createdByType": "User", "lastModifiedAt": at}
}

func (s *Server) endpointBody(a *amlItem) map[string]any {
	traffic := map[string]any{}
	for _, b := range s.aml {
		if b.computeType == "" && amlIn(b, []string{a.sub, a.rg, a.ws}) && strings.EqualFold(b.endpoint, a.endpoint) {
			traffic[b.name] = 0
		}
	}
	// The first deployment takes the traffic.
	traffic[a.name] = 100
	return map[string]any{"id": a.endpointID(), "name": a.endpoint, "type": "Microsoft.MachineLearningServices/workspaces/onlineEndpoints",
		"location": a.in.Region, "tags": map[string]string{}, "kind": "Managed", "systemData": s.systemData(a),
		"properties": map[string]any{"authMode": "Key", "provisioningState": "Succeeded", "traffic": traffic,
			"scoringUri": "https://" + a.endpoint + "." + a.in.Region + ".inference.ml.azure.com/score"}}
}

func (s *Server) deploymentBody(a *amlItem) map[string]any {
	scale := map[string]any{"scaleType": "Default"}
	if a.min >= 0 || a.max >= 0 {
		scale = map[string]any{"scaleType": "TargetUtilization", "minInstances": max(a.min, 1), "maxInstances": max(a.max, a.replicas, 1),
			"pollingInterval": "PT1M", "targetUtilizationPercentage": 70}
	}
	return map[string]any{"id": a.id(), "name": a.name, "type": "Microsoft.MachineLearningServices/workspaces/onlineEndpoints/deployments",
		"location": a.in.Region, "tags": tagsOf(a.in), "kind": "Managed", "systemData": s.systemData(a),
		"sku": map[string]any{"name": "Default", "tier": "Standard", "capacity": a.replicas},
		"properties": map[string]any{"endpointComputeType": "Managed", "instanceType": a.in.InstanceType, "provisioningState": "Succeeded",
			"scaleSettings": scale, "appInsightsEnabled": false, "egressPublicNetworkAccess": "Enabled"}}
}

// computeState is a ComputeInstance's state from the item's live state.
func (s *Server) computeState(a *amlItem) string {
	switch s.inv.StateOf(a.in.ID) {
	case "stopping":
		return "Stopping"
	case "stopped", "stopped-allocated":
		return "Stopped"
	}
	return "Running"
}

func (s *Server) computeBody(a *amlItem) map[string]any {
	var inner map[string]any
	if a.computeType == "ComputeInstance" {
		inner = map[string]any{"vmSize": a.in.InstanceType, "state": s.computeState(a), "applicationSharingPolicy": "Personal",
			"computeInstanceAuthorizationType": "personal", "createdBy": map[string]any{"userName": "gpufinops-sim"}}
	} else {
		priority := "Dedicated"
		if a.in.Lifecycle == fleet.Spot {
			priority = "LowPriority"
		}
		scale := map[string]any{"maxNodeCount": max(a.max, a.replicas), "minNodeCount": max(a.min, 0)}
		if m := a.in.Managed.IdleShutdownMinutes; m != nil && *m > 0 {
			scale["nodeIdleTimeBeforeScaleDown"] = isoMinutes(*m)
		}
		running := 0
		if j := a.in.Managed.Jobs; j != nil && *j > 0 {
			running = a.replicas
		}
		inner = map[string]any{"osType": "Linux", "vmSize": a.in.InstanceType, "vmPriority": priority, "scaleSettings": scale,
			"allocationState": "Steady", "currentNodeCount": a.replicas, "targetNodeCount": a.replicas,
			"nodeStateCounts": map[string]any{"idleNodeCount": a.replicas - running, "runningNodeCount": running, "preparingNodeCount": 0,
				"unusableNodeCount": 0, "leavingNodeCount": 0, "preemptedNodeCount": 0}}
	}
	at := s.created(a.in)
	props := map[string]any{"computeType": a.computeType, "computeLocation": a.in.Region, "provisioningState": "Succeeded",
		"isAttachedCompute": false, "disableLocalAuth": true, "properties": inner}
	if at != "" {
		props["createdOn"], props["modifiedOn"] = at, at
	}
	return map[string]any{"id": a.id(), "name": a.name, "type": "Microsoft.MachineLearningServices/workspaces/computes",
		"location": a.in.Region, "tags": tagsOf(a.in), "systemData": s.systemData(a), "properties": props}
}

// isoMinutes is a whole number of minutes as an ISO 8601 duration.
func isoMinutes(m float64) string {
	d := time.Duration(m * float64(time.Minute))
	if d%time.Hour == 0 {
		return "PT" + strconv.Itoa(int(d/time.Hour)) + "H"
	}
	return "PT" + strconv.Itoa(int(d/time.Minute)) + "M"
}

// stopCompute stops a compute instance: 202 and an async operation; the
// instance is Stopping until the operation succeeds. A cluster, or an
// instance not running, is refused as the service refuses it.
func (s *Server) stopCompute(w http.ResponseWriter, req request, a *amlItem) {
	if a.computeType != "ComputeInstance" {
		writeError(w, http.StatusBadRequest, "BadRequest", "Stop is supported only for compute instances; "+a.name+" is "+a.computeType+".")
		return
	}
	if st := s.computeState(a); st != "Running" {
		writeError(w, http.StatusConflict, "Conflict", "Compute instance "+a.name+" is "+st+"; only a running instance can be stopped.")
		return
	}
	state := "stopped"
	if s.opts.OperationPolls > 0 {
		state = "stopping"
	}
	s.inv.SetState(a.in.ID, state)
	s.mu.Lock()
	op := fmt.Sprintf("%x", simkit.Digest(a.id(), req.op, strconv.Itoa(len(s.ops))))[:24]
	s.ops[op] = &operation{id: a.in.ID, left: s.opts.OperationPolls, final: "stopped"}
	s.mu.Unlock()
	u := baseURL(req.r) + opPath + op + "?api-version=" + url.QueryEscape(req.r.URL.Query().Get("api-version"))
	w.Header().Set("Azure-AsyncOperation", u)
	w.Header().Set("Location", u+"&monitor=true")
	w.Header().Set("Retry-After", "0")
	w.WriteHeader(http.StatusAccepted)
}

// amlByID is the Azure ML item of a resource ID: a deployment, a compute.
func (s *Server) amlByID(id string) *amlItem {
	for _, a := range s.aml {
		if strings.EqualFold(a.id(), id) {
			return a
		}
	}
	return nil
}

// amlSorted returns the items in ID order (the order lists answer in).
func amlSorted(items []*amlItem) []*amlItem {
	sort.SliceStable(items, func(i, j int) bool { return strings.ToLower(items[i].id()) < strings.ToLower(items[j].id()) })
	return items
}
