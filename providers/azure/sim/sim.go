// Package sim is a local Azure that speaks the wire formats of the real
// services to azure-sdk-for-go: ARM REST/JSON for subscriptions, VMs (list,
// get, instance view, deallocate and power-off as long-running operations
// polled through Azure-AsyncOperation), scale-set VMs and Resource SKUs;
// Resource Graph queries (a KQL subset evaluated over the Resources and
// ComputeResources tables, paged with
// $skipToken, with the user quota headers); Azure Monitor metrics, single
// (GET {resource}/providers/Microsoft.Insights/metrics) and batch
// (POST /subscriptions/{id}/metrics:getBatch); and the Retail Prices API
// (GET /api/retail/prices, OData $filter, NextPageLink); Azure Machine
// Learning workspaces, online endpoints and deployments, computes and the
// compute instance stop, with their Azure Monitor metrics (aml.go,
// amlmetrics.go), whose items are never served as VMs; and, for clients
// that log in for themselves (the Azure CLI), a minimal Entra ID and ARM's
// cloud metadata (entra.go). It serves one fleet
// snapshot, keeps VM state so that a deallocation is visible, counts
// requests, and injects latency, 429 with Retry-After, server errors and
// failing subscriptions or regions through providers/simkit.
package sim

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers/simkit"
)

// DefaultSubscription owns the fleet's Azure instances that name no account.
const DefaultSubscription = "00000000-0000-0000-0000-000000000001"

// DefaultRetryAfter is the Retry-After of a 429 when Options.RetryAfter is
// zero: the shortest Azure Resource Manager gives, whose token buckets
// refill every second (FACTS.md).
const DefaultRetryAfter = time.Second

// Size is what Resource SKUs says of a VM size.
type Size struct {
	Name             string
	GPUs, VCPUs, Mem float64 // Mem in GB
	// NvmeMiB is the local NVMe disk (capability NvmeDiskSizeInMiB); zero
	// for none.
	NvmeMiB float64
}

// PriceRow is a size's retail prices in one region (USD). Reservation
// prices are for the whole term, as the Retail Prices API gives them;
// savings plan prices are hourly.
type PriceRow struct {
	Region, Size                 string
	OnDemand, Spot, LowPriority  string
	Reservation1y, Reservation3y string
	SavingsPlan1y, SavingsPlan3y string
	EffectiveDate                string
}

// Options configure the simulator.
type Options struct {
	// Subscription owns the fleet's instances that name none.
	Subscription string
	// Sizes feed Resource SKUs; Prices the Retail Prices API.
	Sizes  []Size
	Prices []PriceRow
	// Latency is added to every request.
	Latency time.Duration
	// ThrottleRate and ErrorRate are the shares (0–1) of requests answered
	// with 429 and with 500.
	ThrottleRate, ErrorRate float64
	// RetryAfter is the Retry-After of a 429 (whole seconds, or
	// retry-after-ms below a second); zero sends DefaultRetryAfter.
	RetryAfter time.Duration
	// FailScopes answer every request for those regions or subscriptions
	// with 500.
	FailScopes []string
	// Fault, when set, is asked before each request with the service
	// ("subscriptions", "resourcegraph", "compute", "monitor", "prices",
	// "machinelearning"),
	// the operation and the scope (a region, else the subscription).
	Fault func(service, op, scope string) (status int, code string)
	// Delays and Hang are per-operation faults (simkit.Faults).
	Delays map[string]time.Duration
	Hang   []string
	// Seed makes fault injection repeatable.
	Seed int64
	// Now is the clock: metric series end at Now.
	Now func() time.Time
	// GraphPage is the default Resource Graph page (100 as Azure's).
	GraphPage int
	// GraphQuota is the Resource Graph queries allowed per 5 s window
	// (x-ms-user-quota-remaining); zero reports 15 always.
	GraphQuota int
	// Namespace and GPU metric names of the Telegraf custom metrics.
	Namespace, GPUMetric, GPUMemoryMetric string
	// OperationPolls is how many polls a deallocation's async operation
	// answers InProgress (the VM "deallocating") before it succeeds.
	OperationPolls int
	// DenyActions are the actions the caller's role lacks: the
	// permissions API lists them as notActions and the calls they guard
	// answer 403 AuthorizationFailed.
	DenyActions []string
	// Clients are the service principals Entra ID knows (entra.go):
	// client ID → secret; nil accepts any client with a secret.
	Clients map[string]string
	// Kit, when set, is shared with other simulators (cmd/cloudsim); the
	// fault fields above are then unused.
	Kit *simkit.Kit
	// Contract, when set, makes the simulator strict (strict.go).
	Contract Contract
	// CommitmentPage is how many reservations or savings plans a page
	// lists (reservations.go); zero is 50.
	CommitmentPage int
	// AMLPage is how many resources an Azure ML list answers a page
	// (aml.go); zero is DefaultAMLPage.
	AMLPage int
}

// KitOptions are the simkit options of the fault fields of o.
func KitOptions(o Options) simkit.Options {
	return simkit.Options{Latency: o.Latency, ThrottleRate: o.ThrottleRate, ErrorRate: o.ErrorRate,
		FailScopes: o.FailScopes, Fault: o.Fault, Delays: o.Delays, Hang: o.Hang, Seed: o.Seed, Ops: Ops}
}

// InstanceState is one instance's state as /_sim/state reports it.
type InstanceState = simkit.InstanceState

// vm is one fleet instance as ARM names it.
type vm struct {
	in            *fleet.Instance
	sub, rg, name string
	// set is the uniform scale set the VM belongs to ("" for a standalone VM).
	set        string
	instanceID string
}

func (v *vm) id() string {
	if v.set != "" {
		return "/subscriptions/" + v.sub + "/resourceGroups/" + v.rg + "/providers/Microsoft.Compute/virtualMachineScaleSets/" + v.set + "/virtualMachines/" + v.instanceID
	}
	return "/subscriptions/" + v.sub + "/resourceGroups/" + v.rg + "/providers/Microsoft.Compute/virtualMachines/" + v.name
}

// proximityPlacementGroup is the resource ID of the VM's proximity
// placement group: the first of the fleet's placementGroups, an ID as
// given, a name as a group of the VM's resource group. A VM is in one at
// most.
func (v *vm) proximityPlacementGroup() string {
	if len(v.in.PlacementGroups) == 0 {
		return ""
	}
	g := strings.TrimSpace(v.in.PlacementGroups[0])
	if g == "" || strings.HasPrefix(strings.ToLower(g), "/subscriptions/") {
		return g
	}
	return "/subscriptions/" + v.sub + "/resourceGroups/" + v.rg + "/providers/Microsoft.Compute/proximityPlacementGroups/" + g
}

func (v *vm) setID() string {
	return "/subscriptions/" + v.sub + "/resourceGroups/" + v.rg + "/providers/Microsoft.Compute/virtualMachineScaleSets/" + v.set
}

// Server is the simulator; it is an http.Handler.
type Server struct {
	opts    Options
	inv     *simkit.Inventory
	kit     *simkit.Kit
	control http.Handler
	sizes   map[string]Size
	vms     []*vm
	byID    map[string]*vm // lower-case resource ID → VM
	// aml are the Azure ML items (aml.go), never served as VMs.
	aml  []*amlItem
	subs []string

	// held are the fleet's Azure commitments (reservations.go).
	held []fleet.Held

	mu     sync.Mutex
	ops    map[string]*operation // async operation → its VM and polls left
	quota  []time.Time
	series seriesState

	strictLog violations
}

// dialect throttles as each service does (FACTS.md): the Compute resource
// provider answers 429 OperationNotAllowed on the reads whose throttling
// policy Microsoft documents (computePolicies), Resource Graph 429
// RateLimiting, Azure Resource Manager and the others 429 TooManyRequests.
var dialect = &simkit.Dialect{
	Throttle: func(c simkit.Call) (int, string) {
		switch {
		case c.Service == "compute" && computePolicies[c.Op] != "":
			return http.StatusTooManyRequests, "OperationNotAllowed"
		case c.Service == "resourcegraph":
			return http.StatusTooManyRequests, "RateLimiting"
		}
		return http.StatusTooManyRequests, "TooManyRequests"
	},
	InternalCode: "InternalServerError",
	ScopeKind:    "scope",
}

// New builds a simulator serving the Azure instances of f.
func New(f *fleet.Fleet, opts Options) *Server {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Subscription == "" {
		opts.Subscription = DefaultSubscription
	}
	if opts.GraphPage <= 0 {
		opts.GraphPage = 100
	}
	if opts.Namespace == "" {
		opts.Namespace = "Telegraf/nvidia_smi"
	}
	if opts.GPUMetric == "" {
		opts.GPUMetric = "utilization_gpu"
	}
	if opts.GPUMemoryMetric == "" {
		opts.GPUMemoryMetric = "utilization_memory"
	}
	s := &Server{opts: opts, inv: simkit.NewInventory(f, fleet.Azure, opts.Subscription), kit: opts.Kit,
		sizes: map[string]Size{}, byID: map[string]*vm{}, ops: map[string]*operation{}, held: heldOf(f, opts.Subscription)}
	// A VM the file says is stopped but allocated is served powered off.
	for _, in := range s.inv.Instances() {
		if in.StoppedAllocated {
			s.inv.SetState(in.ID, "stopped-allocated")
		}
	}
	if s.kit == nil {
		s.kit = simkit.MustNew(KitOptions(opts))
	}
	s.control = s.kit.Control(s)
	for _, z := range opts.Sizes {
		s.sizes[strings.ToLower(z.Name)] = z
	}
	seen := map[string]bool{}
	sets := map[string]int{}
	for i := range s.inv.Instances() {
		in := &s.inv.Instances()[i]
		if IsAML(in) {
			a := newAMLItem(in)
			s.aml = append(s.aml, a)
			if !seen[a.sub] {
				seen[a.sub] = true
				s.subs = append(s.subs, a.sub)
			}
			continue
		}
		v := &vm{in: in, sub: in.Account, rg: ResourceGroup(*in), name: in.ID, set: ScaleSet(*in)}
		if m := reVM.FindStringSubmatch(in.ID); m != nil && m[4] == "" && v.set == "" {
			// A VM the file names by its ARM ID is served under that ID.
			v.sub, v.rg, v.name = m[1], m[2], m[3]
		}
		if v.set != "" {
			v.instanceID = strconv.Itoa(sets[v.set])
			sets[v.set]++
		}
		s.vms = append(s.vms, v)
		s.byID[strings.ToLower(v.id())] = v
		if !seen[v.sub] {
			seen[v.sub] = true
			s.subs = append(s.subs, v.sub)
		}
	}
	s.aml = amlSorted(s.aml)
	if !seen[opts.Subscription] {
		s.subs = append(s.subs, opts.Subscription)
	}
	sort.Strings(s.subs)
	return s
}

// ResourceGroup is the resource group the simulator puts an instance in:
// its "resourceGroup" tag, else rg-gpu-<region>.
func ResourceGroup(in fleet.Instance) string {
	if rg := in.Tags["resourceGroup"]; rg != "" {
		return rg
	}
	return "rg-gpu-" + in.Region
}

// ScaleSet is the uniform scale set an instance is a member of: its
// virtualMachineScaleSet tag, its AKS pool (aks-managed-poolName), or a
// managedBy of kind vmss or aks-node-pool; "" for a standalone VM. A set
// has one priority and one eviction policy: spot members of a pool are in
// a set of their own, those deleted on eviction in another.
func ScaleSet(in fleet.Instance) string {
	set := scaleSet(in)
	if set != "" && in.Lifecycle == fleet.Spot && in.Tags["virtualMachineScaleSet"] == "" {
		set += "-spot"
		if evictionPolicy(&in) == "Delete" {
			set += "-delete"
		}
	}
	return set
}

func scaleSet(in fleet.Instance) string {
	switch {
	case in.Tags["virtualMachineScaleSet"] != "":
		return in.Tags["virtualMachineScaleSet"]
	case in.Tags["aks-managed-poolName"] != "":
		return "aks-" + in.Tags["aks-managed-poolName"] + "-vmss"
	case in.ManagedBy != nil && (in.ManagedBy.Kind == fleet.OwnerVMSS || in.ManagedBy.Kind == fleet.OwnerAKSNodePool):
		if in.ManagedBy.Name != "" {
			return strings.NewReplacer("/", "-", " ", "-").Replace(in.ManagedBy.Name)
		}
		return "vmss-" + in.ID
	}
	return ""
}

// State implements simkit.Backend.
func (s *Server) State() []InstanceState { return s.inv.State() }

// Now implements simkit.Backend.
func (s *Server) Now() time.Time { return s.opts.Now() }

// Notes implements simkit.Sim.
func (s *Server) Notes() []string {
	return []string{"Azure subscriptions " + strings.Join(s.subs, ", ") + "; any bearer token is accepted (azcore's fake credential in tests)"}
}

// Claims implements simkit.Sim: ARM, Resource Graph, metrics, Retail
// Prices, Entra ID and cloud metadata paths.
func (s *Server) Claims(r *http.Request, _ []byte) bool {
	p := r.URL.Path
	return strings.HasPrefix(p, "/subscriptions") || strings.HasPrefix(p, "/providers/Microsoft.ResourceGraph") ||
		strings.HasPrefix(p, "/api/retail/prices") || strings.HasPrefix(p, opPath) || isIdentity(r) || claimsCommitments(p)
}

// Counts returns the requests served: service → operation → count.
func (s *Server) Counts() map[string]map[string]int { return s.kit.Counts() }

// opPath is where the simulator's async operations are polled.
const opPath = "/_azure/operations/"

// Ops are the operations the simulator answers, as "service:Op".
var Ops = append([]string{
	"subscriptions:ListSubscriptions", "subscriptions:GetSubscription", "subscriptions:ListLocations",
	"resourcegraph:Resources",
	"compute:ListAllVMs", "compute:ListAllScaleSets", "compute:ListScaleSetVMs", "compute:ListSKUs",
	"compute:GetVM", "compute:InstanceView", "compute:Deallocate", "compute:PowerOff", "compute:GetOperation",
	"monitor:Metrics", "monitor:MetricsBatch",
	"authorization:ListPermissions",
	"prices:RetailPrices",
}, append(append([]string{}, commitmentOps...), amlOps...)...)

// request is one recognised call.
type request struct {
	service, op, scope string
	r                  *http.Request
	body               []byte
	vm                 *vm
	sub                string
	parts              []string
}

var (
	reVM   = regexp.MustCompile(`(?i)^/subscriptions/([^/]+)/resourceGroups/([^/]+)/providers/Microsoft\.Compute/virtualMachines/([^/]+)(/[A-Za-z]+)?$`)
	reSet  = regexp.MustCompile(`(?i)^/subscriptions/([^/]+)/resourceGroups/([^/]+)/providers/Microsoft\.Compute/virtualMachineScaleSets/([^/]+)/virtualMachines$`)
	reSub  = regexp.MustCompile(`(?i)^/subscriptions/([^/]+)(/.*)?$`)
	reMetr = regexp.MustCompile(`(?i)^(/subscriptions/.+)/providers/Microsoft\.Insights/metrics$`)
)

// ServeHTTP serves the control endpoints and every Azure request it
// recognises, through the kit's faults and counters.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if simkit.IsControl(r) {
		s.control.ServeHTTP(w, r)
		return
	}
	if isIdentity(r) {
		s.serveIdentity(w, r)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "InvalidRequest", err.Error())
		return
	}
	if s.opts.Contract != nil {
		var done func()
		w, done = s.strict(w, r, body)
		defer done()
	}
	req, status, code, msg := s.classify(r, body)
	if status != 0 {
		writeError(w, status, code, msg)
		return
	}
	call := simkit.Call{Service: req.service, Op: req.op, Scope: req.scope, Dialect: dialect,
		WriteError: func(w http.ResponseWriter, status int, code, msg string) {
			if status == http.StatusTooManyRequests {
				// A service throttles in its own words, whoever asked for the 429.
				_, code = dialect.Throttle(simkit.Call{Service: req.service, Op: req.op})
				s.retryAfter(w)
				if s.throttled(w, req, code) {
					return
				}
			}
			writeError(w, status, code, msg)
		}}
	s.kit.Serve(w, r, call, func(w http.ResponseWriter) { s.serve(w, req) })
}

func (s *Server) retryAfter(w http.ResponseWriter) {
	d := s.opts.RetryAfter
	if d <= 0 {
		d = DefaultRetryAfter
	}
	switch {
	case d < time.Second:
		w.Header().Set("retry-after-ms", strconv.FormatInt(d.Milliseconds(), 10))
	default:
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(d.Seconds()))))
	}
}

// classify recognises a request; a non-zero status refuses it.
func (s *Server) classify(r *http.Request, body []byte) (req request, status int, code, msg string) {
	req = request{r: r, body: body}
	p := r.URL.Path
	if p != "/api/retail/prices" && !strings.HasPrefix(p, opPath) && r.URL.Query().Get("api-version") == "" {
		return req, http.StatusBadRequest, "MissingApiVersionParameter", "The api-version query parameter (?api-version=) is required for all requests."
	}
	if !strings.HasPrefix(p, "/api/retail/prices") && !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ") {
		if !strings.HasPrefix(p, opPath) {
			return req, http.StatusUnauthorized, "AuthenticationFailed", "Authentication failed. The 'Authorization' header is missing."
		}
	}
	switch {
	case p == "/api/retail/prices":
		req.service, req.op, req.scope = "prices", "RetailPrices", filterRegion(r.URL.Query().Get("$filter"))
		return req, 0, "", ""
	case strings.HasPrefix(p, opPath):
		req.service, req.op = "compute", "GetOperation"
		return req, 0, "", ""
	case strings.EqualFold(p, "/providers/Microsoft.ResourceGraph/resources") && r.Method == http.MethodPost:
		req.service, req.op = "resourcegraph", "Resources"
		req.scope = graphScope(body)
		return req, 0, "", ""
	case strings.EqualFold(p, "/subscriptions") && r.Method == http.MethodGet:
		req.service, req.op = "subscriptions", "ListSubscriptions"
		return req, 0, "", ""
	}
	if req, ok := classifyCommitments(r, req); ok {
		return req, 0, "", ""
	}
	if req, ok := s.classifyAML(r, req); ok {
		return req, 0, "", ""
	}
	if m := reMetr.FindStringSubmatch(p); m != nil && r.Method == http.MethodGet {
		req.service, req.op, req.parts = "monitor", "Metrics", []string{m[1]}
		req.scope = s.regionOfIDs([]string{m[1]})
		return req, 0, "", ""
	}
	if m := reVM.FindStringSubmatch(p); m != nil {
		req.sub, req.service = m[1], "compute"
		req.vm = s.byID[strings.ToLower("/subscriptions/"+m[1]+"/resourceGroups/"+m[2]+"/providers/Microsoft.Compute/virtualMachines/"+m[3])]
		req.scope = m[1]
		if req.vm != nil {
			req.scope = req.vm.in.Region
		}
		switch strings.ToLower(m[4]) {
		case "":
			req.op = "GetVM"
		case "/instanceview":
			req.op = "InstanceView"
		case "/deallocate":
			req.op = "Deallocate"
		case "/poweroff":
			req.op = "PowerOff"
		default:
			return req, http.StatusNotFound, "InvalidResourceType", "unsupported operation " + m[4]
		}
		return req, 0, "", ""
	}
	if m := reSet.FindStringSubmatch(p); m != nil {
		req.sub, req.service, req.op, req.scope, req.parts = m[1], "compute", "ListScaleSetVMs", m[1], []string{m[2], m[3]}
		return req, 0, "", ""
	}
	m := reSub.FindStringSubmatch(p)
	if m == nil {
		return req, http.StatusNotFound, "InvalidResourceType", "gpufinops azure sim: unrecognised request " + r.Method + " " + p
	}
	req.sub, req.scope = m[1], m[1]
	switch rest := strings.ToLower(m[2]); {
	case rest == "":
		req.service, req.op = "subscriptions", "GetSubscription"
	case rest == "/locations":
		req.service, req.op = "subscriptions", "ListLocations"
	case rest == "/providers/microsoft.compute/virtualmachines":
		req.service, req.op = "compute", "ListAllVMs"
	case rest == "/providers/microsoft.compute/virtualmachinescalesets":
		req.service, req.op = "compute", "ListAllScaleSets"
	case rest == "/providers/microsoft.authorization/permissions" || strings.HasPrefix(rest, "/resourcegroups/") && strings.HasSuffix(rest, "/providers/microsoft.authorization/permissions"):
		req.service, req.op = "authorization", "ListPermissions"
	case rest == "/providers/microsoft.compute/skus":
		req.service, req.op = "compute", "ListSKUs"
	case rest == "/metrics:getbatch" && r.Method == http.MethodPost:
		req.service, req.op = "monitor", "MetricsBatch"
		var b struct {
			ResourceIDs []string `json:"resourceids"`
		}
		_ = json.Unmarshal(body, &b)
		req.parts = b.ResourceIDs
		if sc := s.regionOfIDs(b.ResourceIDs); sc != "" {
			req.scope = sc
		}
	default:
		return req, http.StatusNotFound, "InvalidResourceType", "gpufinops azure sim: unrecognised request " + r.Method + " " + p
	}
	return req, 0, "", ""
}

// regionOfIDs is the region of the first VM of ids the simulator has.
func (s *Server) regionOfIDs(ids []string) string {
	for _, id := range ids {
		if v := s.byID[strings.ToLower(id)]; v != nil {
			return v.in.Region
		}
		if _, region, ok := s.amlOwner(id); ok {
			return region
		}
	}
	return ""
}

var reLocation = regexp.MustCompile(`(?i)location\s*=~\s*'([^']+)'`)

// graphScope is a query's region (location =~ '…'), else its first subscription.
func graphScope(body []byte) string {
	var q struct {
		Query         string   `json:"query"`
		Subscriptions []string `json:"subscriptions"`
	}
	_ = json.Unmarshal(body, &q)
	if m := reLocation.FindStringSubmatch(q.Query); m != nil {
		return strings.ToLower(m[1])
	}
	if len(q.Subscriptions) > 0 {
		return q.Subscriptions[0]
	}
	return ""
}

// Actions are the role actions the operations need (the simulator denies
// them with Options.DenyActions; the adapter's test holds its role to them).
var Actions = map[string]string{
	"Resources": "Microsoft.Compute/virtualMachines/read", "ListAllVMs": "Microsoft.Compute/virtualMachines/read",
	"GetVM": "Microsoft.Compute/virtualMachines/read", "InstanceView": "Microsoft.Compute/virtualMachines/instanceView/read",
	"Deallocate": "Microsoft.Compute/virtualMachines/deallocate/action", "PowerOff": "Microsoft.Compute/virtualMachines/powerOff/action",
	"ListAllScaleSets": "Microsoft.Compute/virtualMachineScaleSets/read", "ListScaleSetVMs": "Microsoft.Compute/virtualMachineScaleSets/virtualMachines/read",
	"ListSKUs": "Microsoft.Compute/skus/read", "Metrics": "Microsoft.Insights/metrics/read", "MetricsBatch": "Microsoft.Insights/metrics/read",
}

func (s *Server) serve(w http.ResponseWriter, req request) {
	if action, ok := Actions[req.op]; ok {
		for _, d := range s.opts.DenyActions {
			if strings.EqualFold(d, action) {
				writeError(w, http.StatusForbidden, "AuthorizationFailed", "The client does not have authorization to perform action '"+action+"'.")
				return
			}
		}
	}
	if req.service == "compute" {
		computeRemaining(w, req.op, 159) // informational: no quota is kept
	}
	switch req.op {
	case "ListReservations", "ListSavingsPlans":
		s.serveCommitments(w, req)
	case "RetailPrices":
		s.servePrices(w, req)
	case "Resources":
		s.serveGraph(w, req)
	case "ListSubscriptions":
		s.serveSubscriptions(w)
	case "GetSubscription":
		s.serveSubscription(w, req.sub)
	case "ListLocations":
		s.serveLocations(w, req.sub)
	case "ListAllVMs":
		s.serveListVMs(w, req)
	case "ListAllScaleSets":
		s.serveListSets(w, req)
	case "ListScaleSetVMs":
		s.serveSetVMs(w, req)
	case "ListSKUs":
		s.serveSKUs(w, req)
	case "ListPermissions":
		notActions := append([]string{}, s.opts.DenyActions...)
		writeJSON(w, map[string]any{"value": []map[string]any{{"actions": []string{"*"}, "notActions": notActions, "dataActions": []string{}, "notDataActions": []string{}}}})
	case "GetVM", "InstanceView":
		s.serveGetVM(w, req)
	case "Deallocate", "PowerOff":
		s.serveAction(w, req)
	case "GetOperation":
		s.serveOperation(w, req)
	case "Metrics", "MetricsBatch":
		s.serveMetrics(w, req)
	default:
		if req.service == "machinelearning" {
			s.serveAML(w, req)
		}
	}
}

// computePolicies are the Compute resource provider's throttling policies
// of the reads it answers (Microsoft.Compute/<policy>3Min and 30Min).
var computePolicies = map[string]string{"ListAllVMs": "HighCostGet", "ListAllScaleSets": "HighCostGet", "ListScaleSetVMs": "HighCostGet",
	"GetVM": "LowCostGet", "InstanceView": "LowCostGet"}

// computeRemaining writes the x-ms-ratelimit-remaining-resource headers of
// a Compute read: one per policy, the 3-minute one at left3.
func computeRemaining(w http.ResponseWriter, op string, left3 int) {
	if p := computePolicies[op]; p != "" {
		w.Header().Add("x-ms-ratelimit-remaining-resource", "Microsoft.Compute/"+p+"3Min;"+strconv.Itoa(left3))
		w.Header().Add("x-ms-ratelimit-remaining-resource", "Microsoft.Compute/"+p+"30Min;"+strconv.Itoa(max(left3, 1)*5))
	}
}

// throttled writes the throttling answer of the services that have their
// own (FACTS.md); false for the others, whose answer is ARM's error body.
func (s *Server) throttled(w http.ResponseWriter, req request, code string) bool {
	var body map[string]any
	switch {
	case req.service == "compute" && code == "OperationNotAllowed":
		computeRemaining(w, req.op, 0)
		target := computePolicies[req.op] + "3Min"
		body = map[string]any{"code": code, "message": "The server rejected the request because too many requests have been received for this subscription.",
			"details": []map[string]string{{"code": "TooManyRequests", "target": target,
				"message": `{"operationGroup":"` + target + `","allowedRequestCount":0,"measuredRequestCount":1}`}}}
	case req.service == "resourcegraph" && code == "RateLimiting":
		w.Header().Set("x-ms-user-quota-remaining", "0")
		w.Header().Set("x-ms-user-quota-resets-after", "00:00:05")
		body = map[string]any{"code": code, "message": "Please provide below info when asking for support: the request was throttled.",
			"details": []map[string]string{{"code": code, "message": "Client application has been throttled and should not attempt to repeat the request until an amount of time has elapsed. Please see https://aka.ms/resourcegraph-throttling for help."}}}
	default:
		return false
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("x-ms-error-code", code)
	w.WriteHeader(http.StatusTooManyRequests)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": body})
	return true
}

// writeError writes ARM's error body.
func writeError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("x-ms-error-code", code)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"code": code, "message": msg}})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("x-ms-ratelimit-remaining-subscription-reads", "249")
	_ = json.NewEncoder(w).Encode(v)
}

// baseURL is the address the client reached the simulator at, for links.
func baseURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

func (s *Server) knownSub(sub string) bool {
	for _, x := range s.subs {
		if strings.EqualFold(x, sub) {
			return true
		}
	}
	return false
}

func (s *Server) serveSubscriptions(w http.ResponseWriter) {
	var out []map[string]any
	for _, sub := range s.subs {
		out = append(out, subscriptionBody(sub))
	}
	writeJSON(w, map[string]any{"value": out})
}

func subscriptionBody(sub string) map[string]any {
	return map[string]any{"id": "/subscriptions/" + sub, "subscriptionId": sub, "displayName": "gpufinops sim " + sub[:8],
		"state": "Enabled", "tenantId": Tenant}
}

func (s *Server) serveSubscription(w http.ResponseWriter, sub string) {
	if !s.knownSub(sub) {
		writeError(w, http.StatusNotFound, "SubscriptionNotFound", "The subscription '"+sub+"' could not be found.")
		return
	}
	writeJSON(w, subscriptionBody(sub))
}

func (s *Server) serveLocations(w http.ResponseWriter, sub string) {
	var out []map[string]any
	for _, r := range s.inv.Scopes() {
		out = append(out, map[string]any{"id": "/subscriptions/" + sub + "/locations/" + r, "name": r, "displayName": r})
	}
	writeJSON(w, map[string]any{"value": out})
}

// powerCode is the PowerState code of a live state.
func powerCode(state string) string {
	switch state {
	case "running":
		return "PowerState/running"
	case "stopped", "deallocated":
		return "PowerState/deallocated"
	case "deallocating":
		return "PowerState/deallocating"
	case "stopped-allocated":
		return "PowerState/stopped"
	}
	return "PowerState/" + state
}

// evictionPolicy is a Spot VM's eviction policy: Delete where the fleet
// says the VM is deleted on eviction, else Deallocate (Azure's default for
// a Spot VM).
func evictionPolicy(in *fleet.Instance) string {
	if in.SpotInterruption == fleet.SpotDelete {
		return "Delete"
	}
	return "Deallocate"
}

func priority(in *fleet.Instance) string {
	if in.Lifecycle == fleet.Spot {
		if in.Tags["priority"] == "Low" {
			return "Low"
		}
		return "Spot"
	}
	return "Regular"
}

func (s *Server) created(in *fleet.Instance) string {
	if in.LaunchTime != nil {
		return in.LaunchTime.UTC().Format(time.RFC3339)
	}
	return s.opts.Now().Add(-30 * 24 * time.Hour).UTC().Format(time.RFC3339)
}

func zones(in *fleet.Instance) []string {
	if in.Zone == "" {
		return nil
	}
	z := in.Zone[strings.LastIndex(in.Zone, "-")+1:]
	return []string{z}
}

func tagsOf(in *fleet.Instance) map[string]string {
	if in.Tags == nil {
		return map[string]string{}
	}
	return in.Tags
}

func statuses(state string) []map[string]any {
	return []map[string]any{
		{"code": "ProvisioningState/succeeded", "level": "Info", "displayStatus": "Provisioning succeeded"},
		{"code": powerCode(state), "level": "Info", "displayStatus": strings.TrimPrefix(powerCode(state), "PowerState/")},
	}
}

// vmBody is a VM as ARM returns it; with view, its instance view.
func (s *Server) vmBody(v *vm, view bool) map[string]any {
	in := v.in
	props := map[string]any{
		"vmId":              fmt.Sprintf("%x", simkit.Digest(v.id()))[:32],
		"hardwareProfile":   map[string]any{"vmSize": in.InstanceType},
		"priority":          priority(in),
		"timeCreated":       s.created(in),
		"provisioningState": "Succeeded",
	}
	if in.Lifecycle == fleet.Spot {
		props["evictionPolicy"] = evictionPolicy(in)
		props["billingProfile"] = map[string]any{"maxPrice": -1}
	}
	if view {
		props["instanceView"] = map[string]any{"statuses": statuses(s.inv.StateOf(in.ID))}
	}
	if id := v.proximityPlacementGroup(); id != "" {
		props["proximityPlacementGroup"] = map[string]any{"id": id}
	}
	body := map[string]any{"id": v.id(), "name": v.name, "type": "Microsoft.Compute/virtualMachines", "location": in.Region,
		"tags": tagsOf(in), "properties": props}
	if z := zones(in); z != nil {
		body["zones"] = z
	}
	return body
}

func (s *Server) serveListVMs(w http.ResponseWriter, req request) {
	statusOnly := req.r.URL.Query().Get("statusOnly") == "true"
	var out []map[string]any
	for _, v := range s.vms {
		if v.set == "" && strings.EqualFold(v.sub, req.sub) {
			out = append(out, s.vmBody(v, statusOnly))
		}
	}
	s.writePage(w, req.r, out, 50)
}

// writePage answers one page of a list with an absolute nextLink.
func (s *Server) writePage(w http.ResponseWriter, r *http.Request, all []map[string]any, size int) {
	fp := simkit.Fingerprint(r.URL.Path, r.URL.Query().Get("statusOnly"), r.URL.Query().Get("$filter"))
	writeLinkedPage(w, r, all, size, fp, "$skiptoken", "InvalidSkipToken", "the $skiptoken does not continue this list")
}

// writeLinkedPage answers one page of all, the page named by the query
// parameter param (a token bound to fp), with an absolute nextLink; a
// token that does not continue this list is a 400 with code and msg.
func writeLinkedPage(w http.ResponseWriter, r *http.Request, all []map[string]any, size int, fp, param, code, msg string) {
	offset, ok := simkit.DecodeToken(r.URL.Query().Get(param), fp)
	if !ok {
		writeError(w, http.StatusBadRequest, code, msg)
		return
	}
	from, to, next := simkit.Page(len(all), offset, size)
	body := map[string]any{"value": append([]map[string]any{}, all[from:to]...)}
	if next > 0 {
		q := r.URL.Query()
		q.Set(param, simkit.EncodeToken(next, fp))
		body["nextLink"] = baseURL(r) + r.URL.Path + "?" + q.Encode()
	}
	writeJSON(w, body)
}

func (s *Server) serveListSets(w http.ResponseWriter, req request) {
	seen := map[string]bool{}
	var out []map[string]any
	for _, v := range s.vms {
		if v.set == "" || !strings.EqualFold(v.sub, req.sub) || seen[v.setID()] {
			continue
		}
		seen[v.setID()] = true
		profile := map[string]any{"priority": priority(v.in)}
		if v.in.Lifecycle == fleet.Spot {
			profile["evictionPolicy"] = evictionPolicy(v.in)
		}
		out = append(out, map[string]any{"id": v.setID(), "name": v.set, "type": "Microsoft.Compute/virtualMachineScaleSets",
			"location": v.in.Region, "sku": map[string]any{"name": v.in.InstanceType, "tier": "Standard"},
			"properties": map[string]any{"orchestrationMode": "Uniform", "virtualMachineProfile": profile}})
	}
	s.writePage(w, req.r, out, 50)
}

func (s *Server) serveSetVMs(w http.ResponseWriter, req request) {
	rg, set := req.parts[0], req.parts[1]
	view := strings.Contains(req.r.URL.Query().Get("$expand"), "instanceView")
	var out []map[string]any
	for _, v := range s.vms {
		if v.set == "" || !strings.EqualFold(v.sub, req.sub) || !strings.EqualFold(v.rg, rg) || !strings.EqualFold(v.set, set) {
			continue
		}
		props := map[string]any{"timeCreated": s.created(v.in), "provisioningState": "Succeeded"}
		if view {
			props["instanceView"] = map[string]any{"statuses": statuses(s.inv.StateOf(v.in.ID))}
		}
		body := map[string]any{"id": v.id(), "name": v.name, "instanceId": v.instanceID, "type": "Microsoft.Compute/virtualMachineScaleSets/virtualMachines",
			"location": v.in.Region, "tags": tagsOf(v.in), "sku": map[string]any{"name": v.in.InstanceType, "tier": "Standard"}, "properties": props}
		if z := zones(v.in); z != nil {
			body["zones"] = z
		}
		out = append(out, body)
	}
	s.writePage(w, req.r, out, 50)
}

var reFilterLocation = regexp.MustCompile(`(?i)location\s+eq\s+'([^']+)'`)

func (s *Server) serveSKUs(w http.ResponseWriter, req request) {
	loc := ""
	if m := reFilterLocation.FindStringSubmatch(req.r.URL.Query().Get("$filter")); m != nil {
		loc = strings.ToLower(m[1])
	}
	names := make([]string, 0, len(s.sizes))
	for n := range s.sizes {
		names = append(names, n)
	}
	sort.Strings(names)
	regions := s.inv.Scopes()
	if loc != "" {
		regions = []string{loc}
	}
	var out []map[string]any
	for _, n := range names {
		z := s.sizes[n]
		for _, r := range regions {
			caps := []map[string]string{
				{"name": "vCPUs", "value": strconv.FormatFloat(z.VCPUs, 'f', -1, 64)},
				{"name": "MemoryGB", "value": strconv.FormatFloat(z.Mem, 'f', -1, 64)},
				{"name": "LowPriorityCapable", "value": "True"},
			}
			if z.GPUs > 0 {
				caps = append(caps, map[string]string{"name": "GPUs", "value": strconv.FormatFloat(math.Max(1, math.Round(z.GPUs)), 'f', -1, 64)})
			}
			if z.NvmeMiB > 0 {
				caps = append(caps, map[string]string{"name": "NvmeDiskSizeInMiB", "value": strconv.FormatFloat(math.Round(z.NvmeMiB), 'f', -1, 64)})
			}
			out = append(out, map[string]any{"resourceType": "virtualMachines", "name": z.Name, "tier": "Standard", "size": strings.TrimPrefix(z.Name, "Standard_"),
				"locations": []string{r}, "locationInfo": []map[string]any{{"location": r, "zones": []string{"1", "2", "3"}}},
				"capabilities": caps, "restrictions": []any{}})
		}
	}
	s.writePage(w, req.r, out, 200)
}

func (s *Server) serveGetVM(w http.ResponseWriter, req request) {
	if req.vm == nil || req.vm.set != "" {
		writeError(w, http.StatusNotFound, "ResourceNotFound", "The Resource 'Microsoft.Compute/virtualMachines/"+lastPart(req.r.URL.Path, req.op)+"' was not found.")
		return
	}
	if req.op == "InstanceView" {
		writeJSON(w, map[string]any{"statuses": statuses(s.inv.StateOf(req.vm.in.ID))})
		return
	}
	writeJSON(w, s.vmBody(req.vm, req.r.URL.Query().Get("$expand") == "instanceView"))
}

func lastPart(p, op string) string {
	parts := strings.Split(strings.TrimRight(p, "/"), "/")
	if op == "InstanceView" && len(parts) > 1 {
		return parts[len(parts)-2]
	}
	return parts[len(parts)-1]
}

// serveAction starts a deallocation (or power-off): 202 with an
// Azure-AsyncOperation URL whose status reads Succeeded. The state changes
// at once: deallocated (fleet "stopped") or powered off but allocated.
func (s *Server) serveAction(w http.ResponseWriter, req request) {
	if req.vm == nil || req.vm.set != "" {
		writeError(w, http.StatusNotFound, "ResourceNotFound", "The Resource 'Microsoft.Compute/virtualMachines/"+lastPart(req.r.URL.Path, "")+"' was not found.")
		return
	}
	state, final := "stopped", "stopped"
	if s.opts.OperationPolls > 0 && req.op == "Deallocate" {
		state = "deallocating"
	}
	if req.op == "PowerOff" {
		if s.inv.StateOf(req.vm.in.ID) == "stopped" {
			writeError(w, http.StatusConflict, "OperationNotAllowed", "Cannot power off a deallocated VM.")
			return
		}
		state, final = "stopped-allocated", "stopped-allocated"
	}
	s.inv.SetState(req.vm.in.ID, state)
	s.mu.Lock()
	op := fmt.Sprintf("%x", simkit.Digest(req.vm.id(), req.op, strconv.Itoa(len(s.ops))))[:24]
	s.ops[op] = &operation{id: req.vm.in.ID, left: s.opts.OperationPolls, final: final}
	s.mu.Unlock()
	u := baseURL(req.r) + opPath + op + "?api-version=" + url.QueryEscape(req.r.URL.Query().Get("api-version"))
	w.Header().Set("Azure-AsyncOperation", u)
	w.Header().Set("Location", u+"&monitor=true")
	w.Header().Set("Retry-After", "0")
	w.WriteHeader(http.StatusAccepted)
}

func (s *Server) serveOperation(w http.ResponseWriter, req request) {
	op := strings.TrimPrefix(req.r.URL.Path, opPath)
	monitor := req.r.URL.Query().Get("monitor") == "true"
	s.mu.Lock()
	o, ok := s.ops[op]
	status := "Succeeded"
	if ok && o.left > 0 {
		status = "InProgress"
		if !monitor {
			o.left--
		}
	}
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, "OperationNotFound", "no operation "+op)
		return
	}
	if status == "Succeeded" {
		s.inv.SetState(o.id, o.final)
	}
	if monitor {
		// The Location URL: 202 while running, 204 once done (an action
		// has no result body; FACTS.md).
		if status == "InProgress" {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.WriteHeader(http.StatusNoContent)
		return
	}
	now := s.opts.Now().UTC().Format(time.RFC3339)
	body := map[string]any{"name": op, "status": status, "startTime": now}
	if status == "Succeeded" {
		body["endTime"] = now
	} else {
		w.Header().Set("Retry-After", "1")
	}
	writeJSON(w, body)
}

// operation is one deallocation, power-off or compute instance stop in
// progress: the fleet ID of what it changes, the polls it answers
// InProgress and the state it leaves.
type operation struct {
	id    string
	left  int
	final string
}

// PowerOff powers a VM off without deallocating it, as a guest shutdown or
// BeginPowerOff does: PowerState/stopped, still allocated and billed.
func (s *Server) PowerOff(id string) bool {
	_, ok := s.inv.SetState(id, "stopped-allocated")
	return ok
}
