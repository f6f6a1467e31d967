// Package sim is a local Google Cloud that speaks the wire protocols of the
// real services to the real clients: Compute Engine's REST/JSON
// (instances.aggregatedList, get, stop, testIamPermissions, zone
// operations, machine types, regions, resource policies), Cloud Monitoring's gRPC
// ListTimeSeries with alignment and cross-series reduction (and the same
// method over REST, projects.timeSeries.list, for curl), the Cloud
// Billing Catalog's REST ListSkus and Resource Manager's projects.search.
// REST and gRPC are served on one address: gRPC needs HTTP/2, so the server
// must accept cleartext HTTP/2 (http.Protocols.SetUnencryptedHTTP2), as
// cmd/cloudsim does. It serves one fleet snapshot, keeps instance state so
// that a stop is visible, counts requests and injects the simkit faults; a
// failing region's zones are reported unreachable by the aggregated
// listing, as Compute Engine does.
package sim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers/simkit"
)

// DefaultProject owns the fleet's GCP instances that name no account when
// the fleet names none either.
const DefaultProject = "gpufinops-sim"

// MachineType is what machineTypes.get says of a type.
type MachineType struct {
	Name     string
	VCPUs    int
	MemoryMB int
	// Accelerator is the bundled accelerator type (e.g. nvidia-tesla-a100);
	// empty for types without bundled GPUs.
	Accelerator      string
	AcceleratorCount int
}

// SKU is one Billing Catalog SKU with one hourly unit price.
type SKU struct {
	ID, Description string
	// ResourceGroup ("GPU", "CPU", "RAM", …) and UsageType ("OnDemand",
	// "Preemptible", "Commit1Yr", "Commit3Yr").
	ResourceGroup, UsageType string
	Regions                  []string
	// Unit is the usage unit: "h" or "GiBy.h".
	Unit string
	// Price is the USD price per unit, a decimal string.
	Price string
}

// Options configure the simulator.
type Options struct {
	// Project owns the instances that name no account; default: the
	// account most of the fleet's GCP instances name, else DefaultProject.
	Project string
	// Regions are the projects' regions (regions.list); default: the
	// fleet's GCP regions.
	Regions []string
	// Types and SKUs feed machineTypes and the Billing Catalog.
	Types []MachineType
	SKUs  []SKU
	// AsOf is the SKUs' effective date; zero is Now.
	AsOf time.Time
	// Latency, ThrottleRate, ErrorRate, FailRegions, Fault, Delays, Hang
	// and Seed are the simkit faults (KitOptions), used when Kit is nil.
	// Services are "compute", "monitoring", "cloudbilling" and
	// "cloudresourcemanager"; scopes are regions for zonal calls and for
	// Monitoring filtered by zone, else the project.
	Latency                 time.Duration
	ThrottleRate, ErrorRate float64
	FailRegions             []string
	Fault                   func(service, op, scope string) (status int, code string)
	Delays                  map[string]time.Duration
	Hang                    []string
	Seed                    int64
	// RetryDelay, when set, is the RetryInfo retry_delay of Monitoring's
	// RESOURCE_EXHAUSTED answers (which carry an ErrorInfo always).
	RetryDelay time.Duration
	// DCGM names the instances whose GPU metrics come from the Ops Agent's
	// DCGM receiver (workload.googleapis.com/gpu.dcgm.*) instead of NVML.
	DCGM []string
	// Now is the simulator's clock: metric series end at Now.
	Now func() time.Time
	// Strict, when set, checks each request against the vendored discovery
	// documents and monitoringpb descriptors (providers/gcp/sim/models)
	// before it is served, and its answer after; each violation is passed
	// to Strict, and a request the model forbids is answered with
	// INVALID_ARGUMENT.
	Strict func(service, op string, violation error)
	// Kit, when set, is shared with other simulators (cmd/cloudsim).
	Kit *simkit.Kit
}

// KitOptions are the simkit options of the fault fields of o.
func KitOptions(o Options) simkit.Options {
	return simkit.Options{
		Latency: o.Latency, ThrottleRate: o.ThrottleRate, ErrorRate: o.ErrorRate,
		FailScopes: o.FailRegions, Fault: o.Fault, Delays: o.Delays, Hang: o.Hang, Seed: o.Seed, Ops: Ops,
	}
}

// dialect is how GCP words injected errors: Compute Engine throttles with
// 403 rateLimitExceeded, the other APIs with 429 RESOURCE_EXHAUSTED.
var dialect = &simkit.Dialect{
	Throttle: func(c simkit.Call) (int, string) {
		if c.Service == "compute" {
			return http.StatusForbidden, "rateLimitExceeded"
		}
		return http.StatusTooManyRequests, "rateLimitExceeded"
	},
	InternalCode: "backendError",
	ScopeKind:    "region",
}

// Server is the simulator; it is an http.Handler.
type Server struct {
	opts    Options
	inv     *simkit.Inventory
	kit     *simkit.Kit
	control http.Handler
	types   map[string]MachineType
	zones   map[string][]string // region → zones

	// fleetTags are each instance's own tags, before the workload's.
	fleetTags map[string]map[string]string

	mu  sync.Mutex
	ops map[string]bool // operation name → done

	monSt monState
	pages pageCache

	// held are the fleet's GCP commitments (commitments.go).
	held []fleet.Held
}

// computeOnly is f without the managed items Compute Engine does not show:
// Vertex AI endpoints and jobs run in Google's tenant projects; a Workbench
// instance (a notebook) is a VM of the project and stays.
func computeOnly(f *fleet.Fleet) *fleet.Fleet {
	out := *f
	out.Instances = make([]fleet.Instance, 0, len(f.Instances))
	for _, in := range f.Instances {
		if m := in.Managed; m == nil || (m.Service == fleet.VertexAI && m.Kind == fleet.KindNotebook) {
			out.Instances = append(out.Instances, in)
		}
	}
	return &out
}

// New builds a simulator serving the GCP instances of f.
func New(f *fleet.Fleet, opts Options) *Server {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Project == "" {
		opts.Project = fleetProject(f)
	}
	s := &Server{opts: opts, inv: simkit.NewInventory(computeOnly(f), fleet.GCP, opts.Project), kit: opts.Kit, types: map[string]MachineType{}, zones: map[string][]string{}, ops: map[string]bool{}}
	s.held = heldOf(f, opts.Project)
	if s.kit == nil {
		s.kit = simkit.MustNew(KitOptions(opts))
	}
	s.control = s.kit.Control(s)
	if len(s.opts.Regions) == 0 {
		s.opts.Regions = s.inv.Scopes()
	}
	for _, t := range opts.Types {
		s.types[t.Name] = t
	}
	s.fleetTags = map[string]map[string]string{}
	for _, in := range f.Instances {
		if in.Provider == fleet.GCP {
			s.fleetTags[in.ID] = in.Tags
		}
	}
	for _, in := range s.inv.Instances() {
		s.inv.SetState(in.ID, statusOf(fleet.State(s.inv.StateOf(in.ID))))
		if z := zoneOf(in); !contains(s.zones[in.Region], z) {
			s.zones[in.Region] = append(s.zones[in.Region], z)
		}
	}
	for _, r := range s.opts.Regions {
		for _, suffix := range []string{"a", "b", "c"} {
			if z := r + "-" + suffix; !contains(s.zones[r], z) {
				s.zones[r] = append(s.zones[r], z)
			}
		}
		sort.Strings(s.zones[r])
	}
	return s
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// fleetProject is the account most of the fleet's GCP instances name.
func fleetProject(f *fleet.Fleet) string {
	count := map[string]int{}
	best := ""
	for _, in := range f.Instances {
		if in.Provider == fleet.GCP && in.Account != "" {
			count[in.Account]++
			if best == "" || count[in.Account] > count[best] || (count[in.Account] == count[best] && in.Account < best) {
				best = in.Account
			}
		}
	}
	if best == "" {
		return DefaultProject
	}
	return best
}

// statusOf is the GCP status of a fleet state (a stopped VM is TERMINATED).
func statusOf(st fleet.State) string {
	if st == fleet.Stopped {
		return "TERMINATED"
	}
	return "RUNNING"
}

// zoneOf is an instance's zone, else its region's first zone.
func zoneOf(in fleet.Instance) string {
	if in.Zone != "" {
		return in.Zone
	}
	return in.Region + "-a"
}

// State implements simkit.Backend.
func (s *Server) State() []simkit.InstanceState { return s.inv.State() }

// Now implements simkit.Backend.
func (s *Server) Now() time.Time { return s.opts.Now() }

// Notes implements simkit.Sim.
func (s *Server) Notes() []string {
	return []string{"GCP projects " + strings.Join(s.projects(), ", ") + " (any CLOUDSDK_AUTH_ACCESS_TOKEN is accepted)"}
}

// Claims implements simkit.Sim: Compute Engine, Billing Catalog and
// Resource Manager paths, and gRPC.
func (s *Server) Claims(r *http.Request, _ []byte) bool {
	return isGRPC(r) || strings.HasPrefix(r.URL.Path, "/compute/v1/") || strings.HasPrefix(r.URL.Path, "/v1/services/") || strings.HasPrefix(r.URL.Path, "/v3/projects")
}

func isGRPC(r *http.Request) bool {
	return strings.HasPrefix(r.Header.Get("Content-Type"), "application/grpc")
}

// projects are the projects that own instances, and the default one.
func (s *Server) projects() []string {
	seen := map[string]bool{s.opts.Project: true}
	for _, in := range s.inv.Instances() {
		seen[in.Account] = true
	}
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

func (s *Server) hasProject(p string) bool { return contains(s.projects(), p) }

// route is one REST operation.
type route struct {
	method  string
	re      *regexp.Regexp
	service string
	op      string
	// zonal: the third match is a zone, whose region scopes the call.
	zonal bool
	serve func(s *Server, w http.ResponseWriter, r *http.Request, m []string)
}

var routes = append([]route{
	{"GET", regexp.MustCompile(`^/compute/v1/projects/([^/]+)/aggregated/instances$`), "compute", "instances.aggregatedList", false, (*Server).aggregatedInstances},
	{"GET", regexp.MustCompile(`^/compute/v1/projects/([^/]+)/zones/([^/]+)/instances/([^/]+)$`), "compute", "instances.get", true, (*Server).getInstance},
	{"POST", regexp.MustCompile(`^/compute/v1/projects/([^/]+)/zones/([^/]+)/instances/([^/]+)/stop$`), "compute", "instances.stop", true, (*Server).stopInstance},
	{"POST", regexp.MustCompile(`^/compute/v1/projects/([^/]+)/zones/([^/]+)/instances/([^/]+)/testIamPermissions$`), "compute", "instances.testIamPermissions", true, (*Server).testPermissions},
	{"GET", regexp.MustCompile(`^/compute/v1/projects/([^/]+)/zones/([^/]+)/operations/([^/]+)$`), "compute", "zoneOperations.get", true, (*Server).getOperation},
	{"POST", regexp.MustCompile(`^/compute/v1/projects/([^/]+)/zones/([^/]+)/operations/([^/]+)/wait$`), "compute", "zoneOperations.wait", true, (*Server).getOperation},
	{"GET", regexp.MustCompile(`^/compute/v1/projects/([^/]+)/zones/([^/]+)/machineTypes/([^/]+)$`), "compute", "machineTypes.get", true, (*Server).getMachineType},
	{"GET", regexp.MustCompile(`^/compute/v1/projects/([^/]+)/aggregated/machineTypes$`), "compute", "machineTypes.aggregatedList", false, (*Server).aggregatedMachineTypes},
	{"GET", regexp.MustCompile(`^/compute/v1/projects/([^/]+)/regions$`), "compute", "regions.list", false, (*Server).listRegions},
	{"GET", regexp.MustCompile(`^/v1/(services/[^/]+)/skus$`), "cloudbilling", "services.skus.list", false, (*Server).listSKUs},
	{"GET", regexp.MustCompile(`^/v3/(projects):search$`), "cloudresourcemanager", "projects.search", false, (*Server).searchProjects},
	{"GET", regexp.MustCompile(`^/v3/projects/([^/]+)/timeSeries$`), "monitoring", "projects.timeSeries.list", false, (*Server).listTimeSeriesREST},
}, append(commitmentRoutes, policyRoutes...)...)

// Ops are the operations the simulator answers, as "service:Op": the REST
// routes and Monitoring's ListTimeSeries.
var Ops = func() []string {
	out := []string{"monitoring:ListTimeSeries"}
	for _, rt := range routes {
		out = append(out, rt.service+":"+rt.op)
	}
	return out
}()

// ServeHTTP serves the control endpoints, gRPC (Monitoring) and every REST
// call it recognises, through the kit's faults and counters.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if simkit.IsControl(r) {
		s.control.ServeHTTP(w, r)
		return
	}
	if s.opts.Strict != nil {
		s.serveStrict(w, r)
		return
	}
	s.serve(w, r)
}

// serve answers a cloud request.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if isGRPC(r) {
		s.serveGRPC(w, r)
		return
	}
	for _, rt := range routes {
		m := rt.re.FindStringSubmatch(r.URL.Path)
		if m == nil {
			continue
		}
		if r.Method != rt.method {
			writeError(w, http.StatusMethodNotAllowed, "badRequest", "method "+r.Method+" not allowed")
			return
		}
		scope := ""
		if len(m) > 1 {
			scope = m[1]
		}
		if rt.zonal {
			scope = regionOfZone(m[2])
		}
		call := simkit.Call{Service: rt.service, Op: rt.op, Scope: scope, Dialect: dialect, WriteError: writeError}
		if rt.service != "compute" {
			call.WriteError = s.statusError(rt.service)
		}
		s.kit.Serve(w, r, call, func(w http.ResponseWriter) {
			if !authorized(r.Header.Get("Authorization")) {
				writeError(w, http.StatusUnauthorized, "authError", "Request is missing required authentication credential. Expected OAuth 2 access token.")
				return
			}
			if strings.HasPrefix(r.URL.Path, "/compute/") && !s.hasProject(m[1]) {
				writeError(w, http.StatusNotFound, "notFound", fmt.Sprintf("The resource 'projects/%s' was not found", m[1]))
				return
			}
			rt.serve(s, w, r, m)
		})
		return
	}
	writeError(w, http.StatusNotFound, "notFound", "gpufinops GCP simulator: no method "+r.Method+" "+r.URL.Path)
}

func authorized(h string) bool {
	tok, ok := strings.CutPrefix(h, "Bearer ")
	return ok && strings.TrimSpace(tok) != ""
}

func regionOfZone(zone string) string {
	if i := strings.LastIndexByte(zone, '-'); i > 0 {
		return zone[:i]
	}
	return zone
}

// writeError answers with Google's JSON error body; code is the reason.
func writeError(w http.ResponseWriter, status int, code, msg string) {
	st := map[int]string{400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND", 405: "INVALID_ARGUMENT", 409: "ALREADY_EXISTS", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}[status]
	if st == "" {
		st = "UNKNOWN"
	}
	if code == "" {
		code = strings.ToLower(st)
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
		"code": status, "message": msg, "status": st,
		"errors": []map[string]string{{"message": msg, "domain": "global", "reason": code}},
	}})
}

// statusError writes an injected error of one of the APIs that answer
// with google.rpc.Status details (all but Compute Engine's v1 REST): a 429
// RESOURCE_EXHAUSTED carries an ErrorInfo RATE_LIMIT_EXCEEDED naming the
// service and the consumer (FACTS.md).
func (s *Server) statusError(service string) func(http.ResponseWriter, int, string, string) {
	return func(w http.ResponseWriter, status int, code, msg string) {
		if status != http.StatusTooManyRequests {
			writeError(w, status, code, msg)
			return
		}
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
			"code": status, "message": msg, "status": "RESOURCE_EXHAUSTED",
			"details": []map[string]any{{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "RATE_LIMIT_EXCEEDED", "domain": "googleapis.com",
				"metadata": map[string]string{"service": service + ".googleapis.com", "consumer": "projects/" + s.opts.Project}}},
		}})
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	_ = json.NewEncoder(w).Encode(v)
}

// base is the self-link prefix.
const base = "https://www.googleapis.com/compute/v1/"

// numericID is a stable numeric instance ID (GCP's id, a uint64 as a JSON string).
func numericID(project, name string) string {
	d := simkit.Digest("gcp-instance", project, name)
	var x uint64
	for _, b := range d[:8] {
		x = x<<8 | uint64(b)
	}
	return strconv.FormatUint(x>>1|1<<62, 10)
}

// projectNumber is a stable project number.
func projectNumber(project string) string {
	d := simkit.Digest("gcp-project", project)
	var x uint64
	for _, b := range d[:5] {
		x = x<<8 | uint64(b)
	}
	return strconv.FormatUint(x%900000000000+100000000000, 10)
}

// Counts returns the requests served so far: service → operation → count.
func (s *Server) Counts() map[string]map[string]int { return s.kit.Counts() }
