package sim

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers/simkit"
)

// acceleratorTypes are Compute Engine's names of the catalog's GPU models.
var acceleratorTypes = map[string]string{
	"T4": "nvidia-tesla-t4", "V100": "nvidia-tesla-v100", "P100": "nvidia-tesla-p100", "P4": "nvidia-tesla-p4",
	"K80": "nvidia-tesla-k80", "A100": "nvidia-tesla-a100", "A100-80GB": "nvidia-a100-80gb", "H100": "nvidia-h100-80gb",
	"H100-MEGA": "nvidia-h100-mega-80gb", "H200": "nvidia-h200-141gb", "B200": "nvidia-b200", "GB200": "nvidia-gb200",
	"L4": "nvidia-l4", "RTX PRO Server 6000": "nvidia-rtx-pro-6000",
}

// AcceleratorType is Compute Engine's name of a GPU model.
func AcceleratorType(model string) string {
	if a, ok := acceleratorTypes[model]; ok {
		return a
	}
	return "nvidia-" + strings.ToLower(strings.ReplaceAll(model, " ", "-"))
}

// filterName is the one filter the simulator reads: name = "X" (or eq).
var filterName = regexp.MustCompile(`^\s*\(?\s*name\s*(?:=|eq)\s*"?([a-z0-9-]+)"?\s*\)?\s*$`)

// parseFilter returns the name a filter asks for ("" for no filter); ok is
// false for a filter the simulator does not read.
func parseFilter(f string) (name string, ok bool) {
	if strings.TrimSpace(f) == "" {
		return "", true
	}
	m := filterName.FindStringSubmatch(f)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// maxResults reads maxResults: 0–500, default 500.
func maxResults(r *http.Request) (int, bool) {
	v := r.URL.Query().Get("maxResults")
	if v == "" {
		return 500, true
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > 500 {
		return 0, false
	}
	if n == 0 {
		n = 500
	}
	return n, true
}

// resourcePolicies are the URLs of the resource policies attached to an
// instance: the fleet's placementGroups and resourcePolicies (policyURL).
func (s *Server) resourcePolicies(in fleet.Instance) []string {
	var out []string
	for _, g := range append(slices.Clip(in.PlacementGroups), in.ResourcePolicies...) {
		if u := policyURL(in, g); u != "" {
			out = append(out, u)
		}
	}
	return out
}

// instanceJSON is an instance as Compute Engine's REST API shows it.
func (s *Server) instanceJSON(in fleet.Instance, status string) map[string]any {
	zone := zoneOf(in)
	zoneURL := base + "projects/" + in.Account + "/zones/" + zone
	out := map[string]any{
		"kind": "compute#instance", "id": numericID(in.Account, in.ID), "name": vmName(in),
		"zone": zoneURL, "machineType": zoneURL + "/machineTypes/" + in.InstanceType,
		"status": status, "selfLink": zoneURL + "/instances/" + vmName(in),
		"cpuPlatform": "Intel Cascade Lake",
	}
	labels := map[string]string{}
	var items []map[string]string
	own := s.fleetTags[in.ID]
	for k, v := range in.Tags {
		_, fromFleet := own[k]
		switch {
		case k == "created-by":
			items = append(items, map[string]string{"key": k, "value": v})
		case !fromFleet:
			// What the workload block adds (model names with dots, "7.2B")
			// is no valid label value: it is served as metadata.
			items = append(items, map[string]string{"key": k, "value": v})
		default:
			labels[k] = v
		}
	}
	sort.Slice(items, func(i, j int) bool { return items[i]["key"] < items[j]["key"] })
	if in.ManagedBy != nil && in.Tags["created-by"] == "" && in.ManagedBy.Kind == fleet.OwnerMIG {
		items = append(items, map[string]string{"key": "created-by", "value": "projects/" + projectNumber(in.Account) + "/zones/" + zone + "/instanceGroupManagers/" + in.ManagedBy.Name})
	}
	if in.ManagedBy != nil && in.ManagedBy.Kind == fleet.OwnerGKENodePool && !hasPrefixKey(in.Tags, "goog-gke-") {
		labels["goog-gke-node"] = ""
	}
	if len(labels) > 0 {
		out["labels"] = labels
	}
	if len(items) > 0 {
		out["metadata"] = map[string]any{"kind": "compute#metadata", "items": items}
	}
	family, _, _ := strings.Cut(in.InstanceType, "-")
	if _, bundled := s.types[in.InstanceType]; !bundled || !bundledFamily(family) {
		if in.GPU.Count > 0 {
			out["guestAccelerators"] = []map[string]any{{
				"acceleratorType":  zoneURL + "/acceleratorTypes/" + AcceleratorType(in.GPU.Model),
				"acceleratorCount": int(math.Ceil(in.GPU.Count)),
			}}
		}
	}
	sched := map[string]any{"provisioningModel": "STANDARD", "onHostMaintenance": "TERMINATE", "automaticRestart": true}
	switch in.Lifecycle {
	case fleet.Spot:
		// instanceTerminationAction: DELETE where the fleet says the VM
		// is deleted when reclaimed, else STOP (Compute Engine's default).
		action := "STOP"
		if in.SpotInterruption == fleet.SpotDelete {
			action = "DELETE"
		}
		sched = map[string]any{"provisioningModel": "SPOT", "preemptible": true, "instanceTerminationAction": action, "onHostMaintenance": "TERMINATE", "automaticRestart": false}
	}
	// A VM that a committed use discount covers is an ordinary STANDARD VM:
	// the discount is applied in billing, not a provisioning model
	// (RESERVATION_BOUND is a VM bound to a reservation's lifecycle; FACTS.md).
	out["scheduling"] = sched
	disks := []map[string]any{{"type": "PERSISTENT", "boot": true, "deviceName": "boot", "diskSizeGb": "200", "interface": "SCSI"}}
	if in.InstanceStoreGB > 0 {
		disks = append(disks, map[string]any{"type": "SCRATCH", "deviceName": "local-ssd-0", "diskSizeGb": strconv.FormatInt(int64(math.Ceil(in.InstanceStoreGB)), 10), "interface": "NVME"})
	}
	out["disks"] = disks
	if pols := s.resourcePolicies(in); len(pols) > 0 {
		out["resourcePolicies"] = pols
	}
	if in.LaunchTime != nil {
		ts := in.LaunchTime.UTC().Format("2006-01-02T15:04:05.000-07:00")
		out["creationTimestamp"], out["lastStartTimestamp"] = ts, ts
	}
	return out
}

func hasPrefixKey(tags map[string]string, prefix string) bool {
	for k := range tags {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	return false
}

func bundledFamily(f string) bool {
	switch f {
	case "a2", "a3", "a4", "a4x", "g2", "g4":
		return true
	}
	return false
}

// aggregatedInstances serves instances.aggregatedList: every zone of the
// project, empty zones with a NO_RESULTS_ON_PAGE warning, paged by
// maxResults, the zones of failing regions in unreachables.
func (s *Server) aggregatedInstances(w http.ResponseWriter, r *http.Request, m []string) {
	project := m[1]
	size, ok := maxResults(r)
	if !ok {
		writeError(w, http.StatusBadRequest, "invalid", "Invalid value for field 'maxResults': must be between 0 and 500")
		return
	}
	name, ok := parseFilter(r.URL.Query().Get("filter"))
	if !ok {
		writeError(w, http.StatusBadRequest, "invalid", "Invalid value for field 'filter': the simulator reads only name = \"NAME\"")
		return
	}
	var unreachable []string
	failing := map[string]bool{}
	for region, zones := range s.zones {
		if s.kit.FailsScope(region) {
			failing[region] = true
			for _, z := range zones {
				unreachable = append(unreachable, "zones/"+z)
			}
		}
	}
	sort.Strings(unreachable)
	type item struct {
		zone string
		inst map[string]any
	}
	var all []item
	for _, region := range s.opts.Regions {
		for _, live := range s.inv.InScope(region, project) {
			if failing[region] || (name != "" && vmName(*live.Instance) != name) {
				continue
			}
			all = append(all, item{zoneOf(*live.Instance), s.instanceJSON(*live.Instance, live.State)})
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].zone < all[j].zone })
	query := simkit.Fingerprint(project, name)
	offset, ok := simkit.DecodeToken(r.URL.Query().Get("pageToken"), query)
	if !ok {
		writeError(w, http.StatusBadRequest, "invalid", "Invalid value for field 'pageToken'")
		return
	}
	from, to, next := simkit.Page(len(all), offset, size)
	items := map[string]any{}
	for _, it := range all[from:to] {
		key := "zones/" + it.zone
		z, _ := items[key].(map[string]any)
		if z == nil {
			z = map[string]any{"instances": []map[string]any{}}
			items[key] = z
		}
		z["instances"] = append(z["instances"].([]map[string]any), it.inst)
	}
	if next < 0 {
		for region, zones := range s.zones {
			if failing[region] {
				continue
			}
			for _, zn := range zones {
				if _, ok := items["zones/"+zn]; !ok {
					items["zones/"+zn] = map[string]any{"warning": map[string]any{"code": "NO_RESULTS_ON_PAGE", "message": "There are no results for scope 'zones/" + zn + "' on this page."}}
				}
			}
		}
	}
	out := map[string]any{"kind": "compute#instanceAggregatedList", "id": "projects/" + project + "/aggregated/instances", "items": items,
		"selfLink": base + "projects/" + project + "/aggregated/instances"}
	if next >= 0 {
		out["nextPageToken"] = simkit.EncodeToken(next, query)
	}
	if len(unreachable) > 0 {
		out["unreachables"] = unreachable
	}
	writeJSON(w, out)
}

// lookup finds an instance of a project in a zone.
func (s *Server) lookup(project, zone, name string) (fleet.Instance, bool) {
	for _, in := range s.inv.Instances() {
		if vmName(in) == name && in.Account == project && zoneOf(in) == zone {
			return in, true
		}
	}
	return fleet.Instance{}, false
}

func notFound(w http.ResponseWriter, project, zone, name string) {
	writeError(w, http.StatusNotFound, "notFound", fmt.Sprintf("The resource 'projects/%s/zones/%s/instances/%s' was not found", project, zone, name))
}

func (s *Server) getInstance(w http.ResponseWriter, r *http.Request, m []string) {
	in, ok := s.lookup(m[1], m[2], m[3])
	if !ok {
		notFound(w, m[1], m[2], m[3])
		return
	}
	writeJSON(w, s.instanceJSON(in, s.inv.StateOf(in.ID)))
}

var opSeq atomic.Int64

// stopInstance serves instances.stop: the VM is TERMINATED at once and the
// operation is RUNNING until it is first read. A VM with local SSD needs
// discardLocalSsd set, as Compute Engine asks.
func (s *Server) stopInstance(w http.ResponseWriter, r *http.Request, m []string) {
	in, ok := s.lookup(m[1], m[2], m[3])
	if !ok {
		notFound(w, m[1], m[2], m[3])
		return
	}
	if in.InstanceStoreGB > 0 && r.URL.Query().Get("discardLocalSsd") == "" {
		writeError(w, http.StatusBadRequest, "invalid", "VM has a Local SSD attached but an undefined value for `discard-local-ssd`")
		return
	}
	_ = s.stopState(in.ID)
	name := fmt.Sprintf("operation-%d-%s", s.opts.Now().UnixMilli(), simkit.Fingerprint("op", strconv.FormatInt(opSeq.Add(1), 10))[:12])
	s.mu.Lock()
	s.ops[m[1]+"/"+m[2]+"/"+name] = false
	s.mu.Unlock()
	writeJSON(w, s.operationJSON(m[1], m[2], name, vmName(in), false))
}

// stopState marks the VM stopped and tells Monitoring.
func (s *Server) stopState(id string) string {
	prev, _ := s.inv.SetState(id, "TERMINATED")
	s.observe(id)
	return prev
}

func (s *Server) operationJSON(project, zone, name, target string, done bool) map[string]any {
	zoneURL := base + "projects/" + project + "/zones/" + zone
	status, progress := "RUNNING", 0
	if done {
		status, progress = "DONE", 100
	}
	return map[string]any{"kind": "compute#operation", "id": numericID(project, name), "name": name, "zone": zoneURL,
		"operationType": "stop", "targetLink": zoneURL + "/instances/" + target, "status": status, "progress": progress,
		"selfLink": zoneURL + "/operations/" + name, "insertTime": s.opts.Now().UTC().Format("2006-01-02T15:04:05.000-07:00")}
}

func (s *Server) getOperation(w http.ResponseWriter, r *http.Request, m []string) {
	key := m[1] + "/" + m[2] + "/" + m[3]
	s.mu.Lock()
	_, ok := s.ops[key]
	if ok {
		s.ops[key] = true
	}
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, "notFound", fmt.Sprintf("The resource 'projects/%s/zones/%s/operations/%s' was not found", m[1], m[2], m[3]))
		return
	}
	writeJSON(w, s.operationJSON(m[1], m[2], m[3], "", true))
}

// testPermissions grants every permission asked for (denials are faults).
func (s *Server) testPermissions(w http.ResponseWriter, r *http.Request, m []string) {
	if _, ok := s.lookup(m[1], m[2], m[3]); !ok {
		notFound(w, m[1], m[2], m[3])
		return
	}
	var body struct {
		Permissions []string `json:"permissions"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&body); err != nil {
		writeError(w, http.StatusBadRequest, "parseError", "the body is not {\"permissions\": [...]}: "+err.Error())
		return
	}
	writeJSON(w, map[string]any{"permissions": body.Permissions})
}

// machineType is the type of that name: the catalog's, or an N1 type by
// its name.
func (s *Server) machineType(name string) (MachineType, bool) {
	if t, ok := s.types[name]; ok {
		return t, true
	}
	var kind string
	var n int
	if _, err := fmt.Sscanf(strings.ReplaceAll(name, "-", " "), "n1 %s %d", &kind, &n); err == nil && n > 0 {
		perCPU := map[string]float64{"standard": 3840, "highmem": 6656, "highcpu": 921.6}[kind]
		if perCPU > 0 {
			return MachineType{Name: name, VCPUs: n, MemoryMB: int(perCPU * float64(n))}, true
		}
	}
	return MachineType{}, false
}

func (s *Server) machineTypeJSON(project, zone string, t MachineType) map[string]any {
	zoneURL := base + "projects/" + project + "/zones/" + zone
	out := map[string]any{"kind": "compute#machineType", "id": numericID("machineType", t.Name), "name": t.Name, "zone": zone,
		"guestCpus": t.VCPUs, "memoryMb": t.MemoryMB, "selfLink": zoneURL + "/machineTypes/" + t.Name,
		"description": fmt.Sprintf("%d vCPUs, %d GB RAM", t.VCPUs, t.MemoryMB/1024)}
	if t.Accelerator != "" {
		out["accelerators"] = []map[string]any{{"guestAcceleratorType": t.Accelerator, "guestAcceleratorCount": t.AcceleratorCount}}
	}
	return out
}

func (s *Server) getMachineType(w http.ResponseWriter, r *http.Request, m []string) {
	t, ok := s.machineType(m[3])
	if !ok {
		writeError(w, http.StatusNotFound, "notFound", fmt.Sprintf("The resource 'projects/%s/zones/%s/machineTypes/%s' was not found", m[1], m[2], m[3]))
		return
	}
	writeJSON(w, s.machineTypeJSON(m[1], m[2], t))
}

// aggregatedMachineTypes serves machineTypes.aggregatedList: every type
// the simulator knows (Options.Types), or the one a name filter asks for,
// in every zone it serves, paged by maxResults as instances are; a zone
// without one on the last page answers the NO_RESULTS_ON_PAGE warning.
func (s *Server) aggregatedMachineTypes(w http.ResponseWriter, r *http.Request, m []string) {
	size, ok := maxResults(r)
	if !ok {
		writeError(w, http.StatusBadRequest, "invalid", "Invalid value for field 'maxResults': must be between 0 and 500")
		return
	}
	name, ok := parseFilter(r.URL.Query().Get("filter"))
	if !ok {
		writeError(w, http.StatusBadRequest, "invalid", "Invalid value for field 'filter': the simulator lists machine types only by name = \"NAME\"")
		return
	}
	var types []MachineType
	if name != "" {
		if t, ok := s.machineType(name); ok {
			types = append(types, t)
		}
	} else {
		for _, t := range s.types {
			types = append(types, t)
		}
		sort.Slice(types, func(i, j int) bool { return types[i].Name < types[j].Name })
	}
	var zones []string
	for _, region := range s.opts.Regions {
		zones = append(zones, s.zones[region]...)
	}
	sort.Strings(zones)
	query := simkit.Fingerprint(m[1], "machineTypes", name)
	offset, ok := simkit.DecodeToken(r.URL.Query().Get("pageToken"), query)
	if !ok {
		writeError(w, http.StatusBadRequest, "invalid", "Invalid value for field 'pageToken'")
		return
	}
	from, to, next := simkit.Page(len(zones)*len(types), offset, size)
	items := map[string]any{}
	for i := from; i < to; i++ {
		zone, t := zones[i/len(types)], types[i%len(types)]
		key := "zones/" + zone
		z, _ := items[key].(map[string]any)
		if z == nil {
			z = map[string]any{"machineTypes": []map[string]any{}}
			items[key] = z
		}
		z["machineTypes"] = append(z["machineTypes"].([]map[string]any), s.machineTypeJSON(m[1], zone, t))
	}
	if next < 0 {
		for _, zone := range zones {
			if _, ok := items["zones/"+zone]; !ok {
				items["zones/"+zone] = map[string]any{"warning": map[string]any{"code": "NO_RESULTS_ON_PAGE", "message": "There are no results for scope 'zones/" + zone + "' on this page."}}
			}
		}
	}
	out := map[string]any{"kind": "compute#machineTypeAggregatedList", "id": "projects/" + m[1] + "/aggregated/machineTypes", "items": items,
		"selfLink": base + "projects/" + m[1] + "/aggregated/machineTypes"}
	if next >= 0 {
		out["nextPageToken"] = simkit.EncodeToken(next, query)
	}
	writeJSON(w, out)
}

func (s *Server) listRegions(w http.ResponseWriter, r *http.Request, m []string) {
	var items []map[string]any
	for _, region := range s.opts.Regions {
		items = append(items, map[string]any{"kind": "compute#region", "name": region, "status": "UP", "selfLink": base + "projects/" + m[1] + "/regions/" + region})
	}
	writeJSON(w, map[string]any{"kind": "compute#regionList", "items": items})
}

func (s *Server) searchProjects(w http.ResponseWriter, r *http.Request, m []string) {
	var out []map[string]any
	for _, p := range s.projects() {
		out = append(out, map[string]any{"name": "projects/" + projectNumber(p), "projectId": p, "state": "ACTIVE", "displayName": p})
	}
	writeJSON(w, map[string]any{"projects": out})
}

// listSKUs serves services.skus.list of Compute Engine, paged by pageSize
// (default 5000).
func (s *Server) listSKUs(w http.ResponseWriter, r *http.Request, m []string) {
	all, display := s.opts.SKUs, "Compute Engine"
	switch m[1] {
	case "services/6F81-5844-456A":
	case "services/" + VertexService:
		all, display = s.opts.VertexSKUs, "Vertex AI"
	default:
		writeError(w, http.StatusNotFound, "notFound", "the simulator has only the SKUs of Compute Engine (services/6F81-5844-456A) and Vertex AI (services/"+VertexService+")")
		return
	}
	if c := r.URL.Query().Get("currencyCode"); c != "" && c != "USD" {
		writeError(w, http.StatusBadRequest, "invalid", "the simulator prices in USD only")
		return
	}
	size := 5000
	if v := r.URL.Query().Get("pageSize"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			writeError(w, http.StatusBadRequest, "invalid", "pageSize must be a positive number")
			return
		}
		if n > 0 {
			size = min(n, 5000)
		}
	}
	offset, ok := simkit.DecodeToken(r.URL.Query().Get("pageToken"), "skus"+m[1])
	if !ok {
		writeError(w, http.StatusBadRequest, "invalid", "invalid pageToken")
		return
	}
	asOf := s.opts.AsOf
	if asOf.IsZero() {
		asOf = s.opts.Now()
	}
	from, to, next := simkit.Page(len(all), offset, size)
	skus := []map[string]any{}
	for _, k := range all[from:to] {
		units, nanos := moneyParts(k.Price)
		skus = append(skus, map[string]any{
			"name": m[1] + "/skus/" + k.ID, "skuId": k.ID, "description": k.Description,
			"category":            map[string]any{"serviceDisplayName": display, "resourceFamily": "Compute", "resourceGroup": k.ResourceGroup, "usageType": k.UsageType},
			"serviceRegions":      k.Regions,
			"serviceProviderName": "Google",
			"pricingInfo": []map[string]any{{
				"summary": "", "effectiveTime": asOf.UTC().Format("2006-01-02T15:04:05.000000Z"), "currencyConversionRate": 1,
				"pricingExpression": map[string]any{
					"usageUnit": k.Unit, "usageUnitDescription": map[string]string{"h": "hour", "GiBy.h": "gibibyte hour"}[k.Unit],
					"baseUnit": map[string]string{"h": "s", "GiBy.h": "By.s"}[k.Unit], "baseUnitConversionFactor": map[string]float64{"h": 3600, "GiBy.h": 3865470566400}[k.Unit],
					"displayQuantity": 1,
					"tieredRates":     []map[string]any{{"startUsageAmount": 0, "unitPrice": map[string]any{"currencyCode": "USD", "units": units, "nanos": nanos}}},
				},
				"aggregationInfo": map[string]any{"aggregationLevel": "ACCOUNT", "aggregationInterval": "MONTHLY", "aggregationCount": 1},
			}},
		})
	}
	out := map[string]any{"skus": skus, "nextPageToken": ""}
	if next >= 0 {
		out["nextPageToken"] = simkit.EncodeToken(next, "skus"+m[1])
	}
	writeJSON(w, out)
}

// moneyParts splits a decimal string into google.type.Money units (a
// string on the wire) and nanos, exactly (digits past the ninth dropped).
func moneyParts(price string) (string, int) {
	whole, frac, _ := strings.Cut(strings.TrimSpace(price), ".")
	frac = (frac + "000000000")[:9]
	n, _ := strconv.Atoi(frac)
	if whole == "" {
		whole = "0"
	}
	return whole, n
}
