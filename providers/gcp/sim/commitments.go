package sim

import (
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers/simkit"
)

// The simulator serves the fleet file's GCP commitments (Fleet.Commitments)
// as Compute Engine v1 answers them (the discovery document's Commitment,
// ResourceCommitment, Reservation and AllocationSpecificSKUReservation):
// resource-cud as regionCommitments, gcp-reservation as specific
// reservations. Spend-based CUDs are the billing account's and Compute
// Engine lists none.

// commitmentRoutes are the routes of this file, joined to routes.
var commitmentRoutes = []route{
	{"GET", regexp.MustCompile(`^/compute/v1/projects/([^/]+)/aggregated/commitments$`), "compute", "regionCommitments.aggregatedList", false, (*Server).aggregatedCommitments},
	{"GET", regexp.MustCompile(`^/compute/v1/projects/([^/]+)/aggregated/reservations$`), "compute", "reservations.aggregatedList", false, (*Server).aggregatedReservations},
}

// heldOf is the GCP commitments of f, each with its project (project when
// it names none).
func heldOf(f *fleet.Fleet, project string) []fleet.Held {
	var out []fleet.Held
	for _, h := range f.Commitments {
		if h.Provider != fleet.GCP {
			continue
		}
		if h.Account == "" {
			h.Account = project
		}
		out = append(out, h)
	}
	return out
}

// commitmentTypes are the commitment types of the GPU models' machine
// series (Commitment.type).
var commitmentTypes = map[string]string{
	"L4": "GRAPHICS_OPTIMIZED", "A100": "ACCELERATOR_OPTIMIZED", "A100-80GB": "ACCELERATOR_OPTIMIZED",
	"H100": "ACCELERATOR_OPTIMIZED_A3", "H100-MEGA": "ACCELERATOR_OPTIMIZED_A3_MEGA", "H200": "ACCELERATOR_OPTIMIZED_A3_ULTRA",
	"B200": "ACCELERATOR_OPTIMIZED_A4", "RTX PRO Server 6000": "GRAPHICS_OPTIMIZED_G4",
}

// seriesTypes are the commitment types of the machine series a fleet's
// resource CUD names (instanceFamily).
var seriesTypes = map[string]string{
	"a2": "ACCELERATOR_OPTIMIZED", "a3": "ACCELERATOR_OPTIMIZED_A3", "a3-mega": "ACCELERATOR_OPTIMIZED_A3_MEGA",
	"a3-ultra": "ACCELERATOR_OPTIMIZED_A3_ULTRA", "a4": "ACCELERATOR_OPTIMIZED_A4", "g2": "GRAPHICS_OPTIMIZED",
	"g4": "GRAPHICS_OPTIMIZED_G4", "n1": "GENERAL_PURPOSE", "n2": "GENERAL_PURPOSE_N2", "n2d": "GENERAL_PURPOSE_N2D",
	"e2": "GENERAL_PURPOSE_E2", "c2": "COMPUTE_OPTIMIZED", "c3": "COMPUTE_OPTIMIZED_C3",
}

// pacific is the offset Compute Engine writes its timestamps in
// (RFC 3339 with an offset; the adapter must not assume UTC).
var pacific = time.FixedZone("PST", -8*3600)

func stamp(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.In(pacific).Format("2006-01-02T15:04:05.000-07:00")
}

// nameOf is the resource name of a commitment's ID: the last segment of
// a self-link, else the ID itself.
func nameOf(id string) string {
	return id[strings.LastIndexByte(id, '/')+1:]
}

// commitmentJSON is a resource-based CUD as Compute Engine describes it:
// memory in MB (FACTS.md), GPUs by accelerator type.
func (s *Server) commitmentJSON(h fleet.Held) map[string]any {
	region := h.Scope.Region
	name := nameOf(h.ID)
	self := base + "projects/" + h.Account + "/regions/" + region + "/commitments/" + name
	if strings.HasPrefix(h.ID, "https://") {
		self = h.ID
	}
	now := s.opts.Now()
	status := "ACTIVE"
	switch {
	case h.Start != nil && now.Before(*h.Start):
		status = "NOT_YET_ACTIVE"
	case h.End != nil && !now.Before(*h.End):
		status = "EXPIRED"
	}
	plan := "TWELVE_MONTH"
	if h.Term == "3y" {
		plan = "THIRTY_SIX_MONTH"
	}
	typ := "GENERAL_PURPOSE"
	var resources []map[string]any
	for _, r := range h.Resources {
		switch r.Type {
		case "vcpu":
			resources = append(resources, map[string]any{"type": "VCPU", "amount": strconv.FormatInt(int64(r.Amount), 10)})
		case "memory":
			resources = append(resources, map[string]any{"type": "MEMORY", "amount": strconv.FormatInt(int64(r.Amount*1024), 10)})
		case "gpu":
			resources = append(resources, map[string]any{"type": "ACCELERATOR", "amount": strconv.FormatInt(int64(r.Amount), 10), "acceleratorType": AcceleratorType(r.GPUModel)})
			if t, ok := commitmentTypes[r.GPUModel]; ok {
				typ = t
			}
		case "local-ssd":
			resources = append(resources, map[string]any{"type": "LOCAL_SSD", "amount": strconv.FormatInt(int64(r.Amount), 10)})
		}
	}
	if t, ok := seriesTypes[strings.ToLower(h.InstanceFamily)]; ok {
		typ = t
	}
	return map[string]any{
		"kind": "compute#commitment", "id": numericID(h.Account, "commitment/"+name), "creationTimestamp": stamp(h.Start),
		"name": name, "description": "", "region": base + "projects/" + h.Account + "/regions/" + region, "selfLink": self,
		"status": status, "plan": plan, "startTimestamp": stamp(h.Start), "endTimestamp": stamp(h.End),
		"resources": resources, "type": typ, "category": "MACHINE", "autoRenew": false,
	}
}

// reservationJSON is a specific reservation as Compute Engine describes
// it; inUseCount is the fleet's running VMs that name it.
func (s *Server) reservationJSON(h fleet.Held) map[string]any {
	zone := h.Scope.Zone
	name := nameOf(h.ID)
	self := base + "projects/" + h.Account + "/zones/" + zone + "/reservations/" + name
	if strings.HasPrefix(h.ID, "https://") {
		self = h.ID
	}
	inUse := 0
	for _, l := range s.inv.InScope(regionOfZone(zone), h.Account) {
		if l.Instance.Commitment != nil && l.Instance.Commitment.ID == h.ID && l.State == "RUNNING" {
			inUse++
		}
	}
	share := map[string]any{"shareType": "LOCAL"}
	if len(h.Scope.Accounts) > 0 {
		pm := map[string]any{}
		for _, p := range h.Scope.Accounts {
			pm[p] = map[string]any{"projectId": p}
		}
		share = map[string]any{"shareType": "SPECIFIC_PROJECTS", "projectMap": pm}
	}
	out := map[string]any{
		"kind": "compute#reservation", "id": numericID(h.Account, "reservation/"+name), "creationTimestamp": stamp(h.Start),
		"selfLink": self, "zone": base + "projects/" + h.Account + "/zones/" + zone, "name": name,
		"specificReservation": map[string]any{
			"count": strconv.FormatInt(int64(h.Count), 10), "inUseCount": strconv.Itoa(inUse), "assuredCount": strconv.FormatInt(int64(h.Count), 10),
			"instanceProperties": map[string]any{"machineType": h.InstanceType},
		},
		"specificReservationRequired": false, "status": "READY", "shareSettings": share,
	}
	if h.End != nil {
		out["deleteAtTime"] = stamp(h.End)
	}
	return out
}

// aggregatedCommitments serves regionCommitments.aggregatedList.
func (s *Server) aggregatedCommitments(w http.ResponseWriter, r *http.Request, m []string) {
	s.aggregatedHeld(w, r, m[1], "commitments", "compute#commitmentAggregatedList", func(h fleet.Held) (string, map[string]any, bool) {
		if h.Kind != "resource-cud" {
			return "", nil, false
		}
		return "regions/" + h.Scope.Region, s.commitmentJSON(h), true
	}, func() []string {
		var out []string
		for _, r := range s.opts.Regions {
			out = append(out, "regions/"+r)
		}
		return out
	})
}

// aggregatedReservations serves reservations.aggregatedList; a
// reservation past its End has been deleted.
func (s *Server) aggregatedReservations(w http.ResponseWriter, r *http.Request, m []string) {
	now := s.opts.Now()
	s.aggregatedHeld(w, r, m[1], "reservations", "compute#reservationAggregatedList", func(h fleet.Held) (string, map[string]any, bool) {
		if h.Kind != "gcp-reservation" || (h.End != nil && !now.Before(*h.End)) || (h.Start != nil && now.Before(*h.Start)) {
			return "", nil, false
		}
		return "zones/" + h.Scope.Zone, s.reservationJSON(h), true
	}, func() []string {
		var out []string
		for _, zones := range s.zones {
			for _, z := range zones {
				out = append(out, "zones/"+z)
			}
		}
		return out
	})
}

// aggregatedHeld is an aggregated list of the project's commitments that
// item keeps, keyed by scope, paged by maxResults; on the last page the
// scopes without any carry a NO_RESULTS_ON_PAGE warning.
func (s *Server) aggregatedHeld(w http.ResponseWriter, r *http.Request, project, field, kind string, item func(fleet.Held) (string, map[string]any, bool), scopes func() []string) {
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
	type entry struct {
		scope string
		v     map[string]any
	}
	var all []entry
	for _, h := range s.held {
		if h.Account != project {
			continue
		}
		scope, v, ok := item(h)
		if !ok || (name != "" && v["name"] != name) {
			continue
		}
		all = append(all, entry{scope, v})
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].scope < all[j].scope })
	query := simkit.Fingerprint(project, field, name)
	offset, ok := simkit.DecodeToken(r.URL.Query().Get("pageToken"), query)
	if !ok {
		writeError(w, http.StatusBadRequest, "invalid", "Invalid value for field 'pageToken'")
		return
	}
	from, to, next := simkit.Page(len(all), offset, size)
	items := map[string]any{}
	for _, e := range all[from:to] {
		z, _ := items[e.scope].(map[string]any)
		if z == nil {
			z = map[string]any{field: []map[string]any{}}
			items[e.scope] = z
		}
		z[field] = append(z[field].([]map[string]any), e.v)
	}
	if next < 0 {
		for _, sc := range scopes() {
			if _, ok := items[sc]; !ok {
				items[sc] = map[string]any{"warning": map[string]any{"code": "NO_RESULTS_ON_PAGE", "message": "There are no results for scope '" + sc + "' on this page."}}
			}
		}
	}
	out := map[string]any{"kind": kind, "id": "projects/" + project + "/aggregated/" + field, "items": items,
		"selfLink": base + "projects/" + project + "/aggregated/" + field}
	if next >= 0 {
		out["nextPageToken"] = simkit.EncodeToken(next, query)
	}
	writeJSON(w, out)
}
