package sim

import (
	"fmt"
	"maps"
	"math"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers/simkit"
)

// Vertex AI and Workbench, as the discovery documents aiplatform v1 and
// notebooks v2 define them (models/aiplatform.json, models/notebooks.json):
//
//   - the fleet's vertex-ai endpoint items are deployed models on dedicated
//     resources, grouped into their endpoints (endpoints.list);
//   - its training-job items are custom jobs (customJobs.list), RUNNING
//     while the item runs;
//   - its notebook items are Workbench instances (instances.list, get,
//     stop and operations.get) and, as Workbench instances really are,
//     Compute Engine VMs of the project named by the instance's last path
//     segment: a stop through Workbench stops the VM.
//
// Endpoints and jobs run in Google's tenant and are never served as the
// project's VMs. Vertex AI answers resource names with the project
// number (FACTS.md); Workbench with the project ID the call named.

// vertexRoutes are the routes of this file, joined to routes.
var vertexRoutes = []route{
	{"GET", regexp.MustCompile(`^/v1/projects/([^/]+)/locations$`), "aiplatform", "projects.locations.list", false, (*Server).listVertexLocations},
	{"GET", regexp.MustCompile(`^/v1/projects/([^/]+)/locations/([^/]+)/endpoints$`), "aiplatform", "projects.locations.endpoints.list", false, (*Server).listEndpoints},
	{"GET", regexp.MustCompile(`^/v1/projects/([^/]+)/locations/([^/]+)/customJobs$`), "aiplatform", "projects.locations.customJobs.list", false, (*Server).listCustomJobs},
	{"GET", regexp.MustCompile(`^/v2/projects/([^/]+)/locations/([^/]+)/instances$`), "notebooks", "projects.locations.instances.list", false, (*Server).listWorkbench},
	{"GET", regexp.MustCompile(`^/v2/projects/([^/]+)/locations/([^/]+)/instances/([^/:]+)$`), "notebooks", "projects.locations.instances.get", false, (*Server).getWorkbench},
	{"POST", regexp.MustCompile(`^/v2/projects/([^/]+)/locations/([^/]+)/instances/([^/:]+):stop$`), "notebooks", "projects.locations.instances.stop", false, (*Server).stopWorkbench},
	{"GET", regexp.MustCompile(`^/v2/projects/([^/]+)/locations/([^/]+)/operations/([^/]+)$`), "notebooks", "projects.locations.operations.get", false, (*Server).getWorkbenchOperation},
}

// splitManaged is the fleet the Compute Engine inventory serves (its VMs
// and Workbench instances) and the Vertex AI endpoints and jobs apart.
func splitManaged(f *fleet.Fleet, project string) (*fleet.Fleet, []fleet.Instance) {
	vms := *f
	vms.Instances = nil
	var managed []fleet.Instance
	for _, in := range f.Instances {
		if in.Provider == fleet.GCP && in.Managed != nil && in.Managed.Kind != fleet.KindNotebook {
			if in.Account == "" {
				in.Account = project
			}
			if extra := fleet.WorkloadTags(in.Workload, in.Tags); len(extra) > 0 {
				// Vertex AI has labels only, lower case: the workload is
				// served in their spelling (workload_type: training) where
				// its value makes a valid label.
				tags := maps.Clone(in.Tags)
				if tags == nil {
					tags = map[string]string{}
				}
				for k, v := range extra {
					if v = strings.ToLower(v); labelValue.MatchString(v) {
						tags[labelKey(k)] = v
					}
				}
				in.Tags = tags
			}
			managed = append(managed, in)
			continue
		}
		vms.Instances = append(vms.Instances, in)
	}
	return &vms, managed
}

// labelValue is a valid GCP label value.
var labelValue = regexp.MustCompile(`^[a-z0-9_-]{0,63}$`)

// labelKey is a tag key in label spelling: WorkloadType → workload_type.
func labelKey(k string) string {
	var b strings.Builder
	for i, r := range k {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// isWorkbench reports whether a VM of the inventory is a Workbench instance.
func isWorkbench(in fleet.Instance) bool {
	return in.Managed != nil && in.Managed.Kind == fleet.KindNotebook
}

// vmName is a VM's Compute Engine name: a Workbench instance's last path
// segment, else the fleet ID.
func vmName(in fleet.Instance) string {
	if isWorkbench(in) {
		return nameOf(in.ID)
	}
	return in.ID
}

// vertexAccelerators are Vertex AI's and Workbench's AcceleratorType enum
// values of the catalog's GPU models.
var vertexAccelerators = map[string]string{
	"K80": "NVIDIA_TESLA_K80", "P100": "NVIDIA_TESLA_P100", "V100": "NVIDIA_TESLA_V100", "P4": "NVIDIA_TESLA_P4",
	"T4": "NVIDIA_TESLA_T4", "A100": "NVIDIA_TESLA_A100", "A100-80GB": "NVIDIA_A100_80GB", "L4": "NVIDIA_L4",
	"H100": "NVIDIA_H100_80GB", "H100-MEGA": "NVIDIA_H100_MEGA_80GB", "H200": "NVIDIA_H200_141GB", "B200": "NVIDIA_B200",
	"GB200": "NVIDIA_GB200", "RTX PRO Server 6000": "NVIDIA_RTX_PRO_6000",
}

// machineSpec is a Vertex AI MachineSpec of an item.
func machineSpec(in fleet.Instance) map[string]any {
	out := map[string]any{"machineType": in.InstanceType}
	if in.GPU.Count > 0 {
		acc, ok := vertexAccelerators[in.GPU.Model]
		if !ok {
			acc = "NVIDIA_" + strings.ToUpper(strings.NewReplacer(" ", "_", "-", "_").Replace(in.GPU.Model))
		}
		out["acceleratorType"] = acc
		out["acceleratorCount"] = int(math.Ceil(in.GPU.Count))
	}
	return out
}

func rfc3339(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// vertexName is a Vertex AI resource name as the API answers it: the
// project by number.
func vertexName(project, location string, rest ...string) string {
	return "projects/" + projectNumber(project) + "/locations/" + location + "/" + strings.Join(rest, "/")
}

// pageParams reads pageSize (0: def) and pageToken of a query.
func pageParams(w http.ResponseWriter, r *http.Request, query string, def, most int) (size, offset int, ok bool) {
	size = def
	if v := r.URL.Query().Get("pageSize"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			writeError(w, http.StatusBadRequest, "invalid", "pageSize must be a non-negative number")
			return 0, 0, false
		}
		if n > 0 {
			size = min(n, most)
		}
	}
	offset, ok = simkit.DecodeToken(r.URL.Query().Get("pageToken"), query)
	if !ok {
		writeError(w, http.StatusBadRequest, "invalid", "Invalid page token.")
	}
	return size, offset, ok
}

func (s *Server) knownProject(w http.ResponseWriter, p string) bool {
	if !s.hasProject(p) {
		writeError(w, http.StatusForbidden, "forbidden", fmt.Sprintf("Permission denied on resource project %s.", p))
		return false
	}
	return true
}

// listVertexLocations serves locations.list: the simulator's regions.
func (s *Server) listVertexLocations(w http.ResponseWriter, r *http.Request, m []string) {
	if !s.knownProject(w, m[1]) {
		return
	}
	regions := append([]string(nil), s.opts.Regions...)
	sort.Strings(regions)
	query := simkit.Fingerprint(m[1], "locations")
	size, offset, ok := pageParams(w, r, query, 100, 1000)
	if !ok {
		return
	}
	from, to, next := simkit.Page(len(regions), offset, size)
	locs := []map[string]any{}
	for _, reg := range regions[from:to] {
		locs = append(locs, map[string]any{"name": "projects/" + m[1] + "/locations/" + reg, "locationId": reg, "displayName": reg})
	}
	out := map[string]any{"locations": locs}
	if next >= 0 {
		out["nextPageToken"] = simkit.EncodeToken(next, query)
	}
	writeJSON(w, out)
}

// endpointName is an endpoint item's endpoint display name: its name up
// to the "/".
func endpointName(in fleet.Instance) string {
	n, _, _ := strings.Cut(in.Name, "/")
	if n == "" {
		n = in.Managed.Endpoint
	}
	return n
}

// listEndpoints serves endpoints.list: the endpoint items of the location,
// one Endpoint per managed.endpoint with its deployed models.
func (s *Server) listEndpoints(w http.ResponseWriter, r *http.Request, m []string) {
	project, location := m[1], m[2]
	if !s.knownProject(w, project) {
		return
	}
	if f := r.URL.Query().Get("filter"); strings.TrimSpace(f) != "" {
		writeError(w, http.StatusBadRequest, "invalid", "the simulator lists endpoints without a filter")
		return
	}
	byEndpoint := map[string][]fleet.Instance{}
	var order []string
	for _, in := range s.vertex {
		if in.Managed.Kind != fleet.KindEndpoint || in.Account != project || vertexLocation(in) != location {
			continue
		}
		e := in.Managed.Endpoint
		if _, ok := byEndpoint[e]; !ok {
			order = append(order, e)
		}
		byEndpoint[e] = append(byEndpoint[e], in)
	}
	sort.Strings(order)
	query := simkit.Fingerprint(project, location, "endpoints")
	size, offset, ok := pageParams(w, r, query, 100, 1000)
	if !ok {
		return
	}
	from, to, next := simkit.Page(len(order), offset, size)
	eps := []map[string]any{}
	for _, e := range order[from:to] {
		items := byEndpoint[e]
		var models []map[string]any
		traffic := map[string]any{}
		created := items[0].LaunchTime
		for _, in := range items {
			mm := in.Managed
			ded := map[string]any{"machineSpec": machineSpec(in)}
			if m := mm.MinReplicas(); m != nil {
				ded["minReplicaCount"] = *m
			} else {
				ded["minReplicaCount"] = mm.CurrentReplicas()
			}
			if m := mm.MaxReplicas(); m != nil {
				ded["maxReplicaCount"] = *m
			}
			if in.Lifecycle == fleet.Spot {
				ded["spot"] = true
			}
			dm := map[string]any{"id": mm.Deployment, "model": vertexName(project, location, "models", mm.Deployment), "displayName": nameOf(in.Name),
				"dedicatedResources": ded, "status": map[string]any{"availableReplicaCount": mm.CurrentReplicas(), "lastUpdateTime": s.opts.Now().UTC().Format(time.RFC3339Nano)}}
			if in.LaunchTime != nil {
				dm["createTime"] = rfc3339(in.LaunchTime)
				if created == nil || in.LaunchTime.Before(*created) {
					created = in.LaunchTime
				}
			}
			models = append(models, dm)
			traffic[mm.Deployment] = 100 / len(items)
		}
		ep := map[string]any{"name": vertexName(project, location, "endpoints", e), "displayName": endpointName(items[0]),
			"deployedModels": models, "trafficSplit": traffic, "etag": simkit.Fingerprint(project, e)[:12]}
		if len(items[0].Tags) > 0 {
			ep["labels"] = items[0].Tags
		}
		if created != nil {
			ep["createTime"], ep["updateTime"] = rfc3339(created), rfc3339(created)
		}
		eps = append(eps, ep)
	}
	out := map[string]any{"endpoints": eps}
	if next >= 0 {
		out["nextPageToken"] = simkit.EncodeToken(next, query)
	}
	writeJSON(w, out)
}

// vertexLocation is an endpoint or job item's location: managed.workspace,
// else its region.
func vertexLocation(in fleet.Instance) string {
	if in.Managed.Workspace != "" {
		return in.Managed.Workspace
	}
	return in.Region
}

// jobStateFilter reads the one customJobs filter the simulator serves:
// state = "JOB_STATE_…" (or !=).
var jobStateFilter = regexp.MustCompile(`^\s*state\s*(=|!=)\s*"?(JOB_STATE_[A-Z_]+)"?\s*$`)

// jobState is the JobState of a training-job item: RUNNING while it runs.
func jobState(in fleet.Instance) string {
	if in.State == fleet.Stopped {
		return "JOB_STATE_SUCCEEDED"
	}
	return "JOB_STATE_RUNNING"
}

// listCustomJobs serves customJobs.list, with the state filter.
func (s *Server) listCustomJobs(w http.ResponseWriter, r *http.Request, m []string) {
	project, location := m[1], m[2]
	if !s.knownProject(w, project) {
		return
	}
	op, want := "", ""
	if f := r.URL.Query().Get("filter"); strings.TrimSpace(f) != "" {
		fm := jobStateFilter.FindStringSubmatch(f)
		if fm == nil {
			writeError(w, http.StatusBadRequest, "invalid", "the simulator reads only the filter state=\"JOB_STATE_…\" (or !=)")
			return
		}
		op, want = fm[1], fm[2]
	}
	var jobs []fleet.Instance
	for _, in := range s.vertex {
		if in.Managed.Kind != fleet.KindTrainingJob || in.Account != project || vertexLocation(in) != location {
			continue
		}
		if st := jobState(in); (op == "=" && st != want) || (op == "!=" && st == want) {
			continue
		}
		jobs = append(jobs, in)
	}
	query := simkit.Fingerprint(project, location, "customJobs", op, want)
	size, offset, ok := pageParams(w, r, query, 100, 1000)
	if !ok {
		return
	}
	from, to, next := simkit.Page(len(jobs), offset, size)
	out := []map[string]any{}
	for _, in := range jobs[from:to] {
		replicas := max(in.Managed.CurrentReplicas(), 1)
		strategy := "ON_DEMAND"
		if in.Lifecycle == fleet.Spot {
			strategy = "SPOT"
		}
		job := map[string]any{"name": vertexName(project, location, "customJobs", nameOf(in.ID)), "displayName": in.Name, "state": jobState(in),
			"jobSpec": map[string]any{
				"workerPoolSpecs": []map[string]any{{"machineSpec": machineSpec(in), "replicaCount": strconv.Itoa(replicas),
					"diskSpec": map[string]any{"bootDiskType": "pd-ssd", "bootDiskSizeGb": 100}}},
				"scheduling": map[string]any{"strategy": strategy},
			}}
		if in.LaunchTime != nil {
			job["createTime"], job["startTime"], job["updateTime"] = rfc3339(in.LaunchTime), rfc3339(in.LaunchTime), rfc3339(in.LaunchTime)
		}
		if len(in.Tags) > 0 {
			job["labels"] = in.Tags
		}
		out = append(out, job)
	}
	res := map[string]any{"customJobs": out}
	if next >= 0 {
		res["nextPageToken"] = simkit.EncodeToken(next, query)
	}
	writeJSON(w, res)
}

// workbench are the Workbench instances of a project in a zone ("-": all).
func (s *Server) workbench(project, zone string) []fleet.Instance {
	var out []fleet.Instance
	for _, in := range s.inv.Instances() {
		if isWorkbench(in) && in.Account == project && (zone == "-" || zoneOf(in) == zone) {
			out = append(out, in)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// workbenchState is the instance's state: its VM's, STOPPING while the
// operation of its stop has not been read done.
func (s *Server) workbenchState(in fleet.Instance) string {
	if s.inv.StateOf(in.ID) == "RUNNING" {
		return "ACTIVE"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if op, ok := s.wbStop[in.ID]; ok && !s.ops[op] {
		return "STOPPING"
	}
	return "STOPPED"
}

// workbenchJSON is a Workbench v2 Instance.
func (s *Server) workbenchJSON(in fleet.Instance) map[string]any {
	zone := zoneOf(in)
	gce := map[string]any{"machineType": base + "projects/" + in.Account + "/zones/" + zone + "/machineTypes/" + in.InstanceType,
		"instanceId": numericID(in.Account, in.ID)}
	if in.GPU.Count > 0 {
		acc := machineSpec(in)
		gce["acceleratorConfigs"] = []map[string]any{{"type": acc["acceleratorType"], "coreCount": strconv.Itoa(acc["acceleratorCount"].(int))}}
	}
	if ms := in.Managed.IdleShutdownMinutes; ms != nil {
		gce["metadata"] = map[string]string{"idle-timeout-seconds": strconv.FormatInt(int64(math.Round(*ms*60)), 10)}
	}
	out := map[string]any{"name": "projects/" + in.Account + "/locations/" + zone + "/instances/" + vmName(in), "id": simkit.Fingerprint("workbench", in.ID)[:16],
		"state": s.workbenchState(in), "healthState": "HEALTHY", "gceSetup": gce, "creator": "user@example.com"}
	if len(s.fleetTags[in.ID]) > 0 {
		out["labels"] = s.fleetTags[in.ID]
	}
	if in.LaunchTime != nil {
		out["createTime"], out["updateTime"] = rfc3339(in.LaunchTime), rfc3339(in.LaunchTime)
	}
	return out
}

// listWorkbench serves instances.list of a zone or of every zone ("-").
func (s *Server) listWorkbench(w http.ResponseWriter, r *http.Request, m []string) {
	if !s.knownProject(w, m[1]) {
		return
	}
	if f := r.URL.Query().Get("filter"); strings.TrimSpace(f) != "" {
		writeError(w, http.StatusBadRequest, "invalid", "the simulator lists Workbench instances without a filter")
		return
	}
	all := s.workbench(m[1], m[2])
	query := simkit.Fingerprint(m[1], m[2], "instances")
	size, offset, ok := pageParams(w, r, query, 100, 1000)
	if !ok {
		return
	}
	from, to, next := simkit.Page(len(all), offset, size)
	items := []map[string]any{}
	for _, in := range all[from:to] {
		items = append(items, s.workbenchJSON(in))
	}
	out := map[string]any{"instances": items}
	if next >= 0 {
		out["nextPageToken"] = simkit.EncodeToken(next, query)
	}
	writeJSON(w, out)
}

func (s *Server) findWorkbench(w http.ResponseWriter, m []string) (fleet.Instance, bool) {
	for _, in := range s.workbench(m[1], m[2]) {
		if vmName(in) == m[3] {
			return in, true
		}
	}
	writeError(w, http.StatusNotFound, "notFound", fmt.Sprintf("Resource 'projects/%s/locations/%s/instances/%s' was not found", m[1], m[2], m[3]))
	return fleet.Instance{}, false
}

func (s *Server) getWorkbench(w http.ResponseWriter, r *http.Request, m []string) {
	if in, ok := s.findWorkbench(w, m); ok {
		writeJSON(w, s.workbenchJSON(in))
	}
}

// stopWorkbench serves instances.stop: the VM is TERMINATED at once, the
// long-running operation is done from its first read, and the instance
// reads STOPPING until then, STOPPED after. Stopping a stopped instance is
// refused as Workbench does (FAILED_PRECONDITION).
func (s *Server) stopWorkbench(w http.ResponseWriter, r *http.Request, m []string) {
	in, ok := s.findWorkbench(w, m)
	if !ok {
		return
	}
	if s.inv.StateOf(in.ID) != "RUNNING" {
		writeError(w, http.StatusBadRequest, "failedPrecondition", "Instance is not in ACTIVE state.")
		return
	}
	_ = s.stopState(in.ID)
	op := "operation-" + strconv.FormatInt(s.opts.Now().UnixMilli(), 10) + "-" + simkit.Fingerprint("wbop", strconv.FormatInt(opSeq.Add(1), 10))[:12]
	key := "notebooks/" + m[1] + "/" + m[2] + "/" + op
	s.mu.Lock()
	if s.wbStop == nil {
		s.wbStop = map[string]string{}
	}
	s.wbStop[in.ID] = key
	s.ops[key] = false
	s.mu.Unlock()
	writeJSON(w, s.workbenchOp(m[1], m[2], op, "projects/"+m[1]+"/locations/"+m[2]+"/instances/"+m[3], false))
}

func (s *Server) workbenchOp(project, zone, op, target string, done bool) map[string]any {
	meta := map[string]any{"@type": "type.googleapis.com/google.cloud.notebooks.v2.OperationMetadata", "verb": "stop",
		"createTime": s.opts.Now().UTC().Format(time.RFC3339Nano), "apiVersion": "v2"}
	if target != "" {
		meta["target"] = target
	}
	out := map[string]any{"name": "projects/" + project + "/locations/" + zone + "/operations/" + op, "metadata": meta, "done": done}
	if done {
		out["response"] = map[string]any{"@type": "type.googleapis.com/google.cloud.notebooks.v2.Instance"}
	}
	return out
}

func (s *Server) getWorkbenchOperation(w http.ResponseWriter, r *http.Request, m []string) {
	key := "notebooks/" + m[1] + "/" + m[2] + "/" + m[3]
	s.mu.Lock()
	_, ok := s.ops[key]
	if ok {
		s.ops[key] = true
	}
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, "notFound", fmt.Sprintf("Resource 'projects/%s/locations/%s/operations/%s' was not found", m[1], m[2], m[3]))
		return
	}
	writeJSON(w, s.workbenchOp(m[1], m[2], m[3], "", true))
}

// The Vertex AI metrics served (metrics.md §2): on the endpoint,
// accelerator duty cycle (a 0–1 fraction), accelerator memory used (By,
// INT64) and predictions (DELTA INT64) per deployed model and replica; on
// the custom job, training accelerator utilization (a 0–1 fraction).
const (
	metricDutyCycle   = "aiplatform.googleapis.com/prediction/online/accelerator/duty_cycle"
	metricAccelMem    = "aiplatform.googleapis.com/prediction/online/accelerator/memory/bytes_used"
	metricPredictions = "aiplatform.googleapis.com/prediction/online/prediction_count"
	metricTrainAccel  = "ml.googleapis.com/training/accelerator/utilization"
	resourceEndpoint  = "aiplatform.googleapis.com/Endpoint"
	resourceJob       = "cloudml_job"
)

// int64Metrics are the INT64 metrics served.
var int64Metrics = map[string]bool{metricAccelMem: true, metricPredictions: true}

// int64Kept is true when an INT64 metric keeps its type through the
// aggregation: not averaged (ALIGN_MEAN, REDUCE_MEAN give DOUBLE).
func int64Kept(metric string, aligner, reducer int) bool {
	return int64Metrics[metric] && aligner != alignMean && reducer != reduceMean
}

// projectLabel is the resource label that holds the project.
func projectLabel(resourceType string) string {
	if resourceType == resourceEndpoint {
		return "resource_container"
	}
	return "project_id"
}

// kind is the series' MetricKind on the wire: DELTA (2) or GAUGE (1).
func (se outSeries) kind() uint64 {
	if se.delta {
		return 2
	}
	return 1
}

// buildManagedSeries synthesizes a Vertex AI item's series from its
// utilization as buildSeries does a VM's: one series per replica of the
// endpoint metrics, the GPU pattern's mean over the GPUs as the duty cycle,
// and predictions spread evenly over the minutes the pattern has data
// (none when the fleet gives no request count).
func (s *Server) buildManagedSeries(in *fleet.Instance) *monInstance {
	gpus := max(int(math.Ceil(in.GPU.Count)), 1)
	p := simkit.Synthesize(*in, gpus, seedKeys, defaultCPU)
	mi := &monInstance{id: in.ID, clock: p.Clock, managed: in}
	add := func(se *simSeries) {
		se.inst, se.project = mi, in.Account
		se.int64, se.delta = int64Metrics[se.metric], se.metric == metricPredictions
		for _, v := range se.values {
			if !math.IsNaN(v) {
				mi.all = append(mi.all, se)
				return
			}
		}
	}
	var gpu, mem []float64
	if len(p.GPU) > 0 {
		gpu = p.GPU[0]
	}
	if len(p.GPUMemory) > 0 {
		mem = p.GPUMemory[0]
	}
	switch in.Managed.Kind {
	case fleet.KindEndpoint:
		res := map[string]string{"resource_container": projectNumber(in.Account), "location": vertexLocation(*in), "endpoint_id": in.Managed.Endpoint}
		for r := range max(in.Managed.CurrentReplicas(), 1) {
			labels := map[string]string{"deployed_model_id": in.Managed.Deployment, "replica_id": fmt.Sprintf("replica-%d", r), "spot": strconv.FormatBool(in.Lifecycle == fleet.Spot)}
			if gpu != nil {
				add(&simSeries{metric: metricDutyCycle, resourceType: resourceEndpoint, metricLabels: labels, resourceLabels: res, values: gpu, scale: 0.01, gpuUtil: true})
			}
			if mem != nil && in.GPU.MemoryGiB > 0 {
				add(&simSeries{metric: metricAccelMem, resourceType: resourceEndpoint, metricLabels: labels, resourceLabels: res, values: mem,
					scale: in.GPU.MemoryGiB * float64(gpus) * (1 << 30) / 100})
			}
		}
		if in.Managed.Requests != nil && gpu != nil {
			slots := 0
			for _, v := range gpu {
				if !math.IsNaN(v) {
					slots++
				}
			}
			perMinute := *in.Managed.Requests / float64(max(slots, 1)*60)
			vals := make([]float64, len(gpu))
			for i, v := range gpu {
				vals[i] = v // NaN where the pattern has no data
				if !math.IsNaN(v) {
					vals[i] = perMinute
				}
			}
			labels := map[string]string{"deployed_model_id": in.Managed.Deployment, "spot": strconv.FormatBool(in.Lifecycle == fleet.Spot)}
			add(&simSeries{metric: metricPredictions, resourceType: resourceEndpoint, metricLabels: labels, resourceLabels: res, values: vals, scale: 1})
		}
	case fleet.KindTrainingJob:
		if gpu != nil {
			res := map[string]string{"project_id": in.Account, "job_id": nameOf(in.ID), "region": vertexLocation(*in)}
			add(&simSeries{metric: metricTrainAccel, resourceType: resourceJob, metricLabels: map[string]string{}, resourceLabels: res, values: gpu, scale: 0.01, gpuUtil: true})
		}
	}
	return mi
}

// VertexService is the Billing Catalog's service ID of Vertex AI.
const VertexService = "C7E2-9256-1C43"

// DefaultVertexSKUs are the Vertex AI SKUs whose IDs and Iowa prices
// /work/shared/data/managed-ai (gcp-vertex.csv, README §2) read from the
// Billing Catalog in August 2025: H100 and A3 core and RAM, for prediction
// and for training, and the H100 management fees. Only the two GPU SKUs'
// descriptions were read; the core, RAM and fee descriptions follow their
// wording (FACTS.md). Every other machine family and region is missing
// from the data, so it has no Vertex price here.
func DefaultVertexSKUs() []SKU {
	iowa := []string{"us-central1"}
	sku := func(id, desc, group, unit, price string) SKU {
		return SKU{ID: id, Description: desc, ResourceGroup: group, UsageType: "OnDemand", Regions: iowa, Unit: unit, Price: price}
	}
	return []SKU{
		sku("AE9C-DB60-DF46", "Vertex AI: Online/Batch Prediction Nvidia H100 80gb GPU running in Iowa", "GPU", "h", "11.2660332"),
		sku("A002-4323-D900", "Vertex AI: Online/Batch Prediction A3 Instance Core running in Iowa", "CPU", "h", "0.0293227"),
		sku("2424-9F04-82A8", "Vertex AI: Online/Batch Prediction A3 Instance Ram running in Iowa", "RAM", "GiBy.h", "0.0025534"),
		sku("1797-967A-274D", "Vertex AI: Online/Batch Prediction management fee on Nvidia H100 80gb GPU running in Iowa", "GPU", "h", "1.4694826"),
		sku("3F95-001E-B747", "Vertex AI: Training/Pipelines on NVIDIA H100 80GB in Iowa", "GPU", "h", "11.2660332"),
		sku("2E83-99F1-391A", "Vertex AI: Training/Pipelines on A3 Instance Core in Iowa", "CPU", "h", "0.0293227"),
		sku("B045-9255-8314", "Vertex AI: Training/Pipelines on A3 Instance Ram in Iowa", "RAM", "GiBy.h", "0.0025534"),
		sku("5853-505F-A5C4", "Vertex AI: Training/Pipelines management fee on NVIDIA H100 80GB in Iowa", "GPU", "h", "1.4694826"),
	}
}
