package sim

import (
	"net/http"
	"regexp"
	"sort"
	"strings"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers/simkit"
)

// The simulator serves the resource policies the fleet's GCP instances
// name as Compute Engine v1 answers them (the discovery document's
// ResourcePolicy): a placementGroups entry is a compact group placement
// policy (groupPlacementPolicy, COLLOCATED), a resourcePolicies entry an
// instance schedule (instanceSchedulePolicy). A policy named both ways is
// a placement policy.

// policyRoutes are the routes of this file, joined to routes.
var policyRoutes = []route{
	{"GET", regexp.MustCompile(`^/compute/v1/projects/([^/]+)/aggregated/resourcePolicies$`), "compute", "resourcePolicies.aggregatedList", false, (*Server).aggregatedPolicies},
}

// policyURL is a policy's URL: as given when it is one, under the API's
// base when it is a "projects/…" path, else a policy of that name in the
// instance's region.
func policyURL(in fleet.Instance, g string) string {
	switch g = strings.TrimSpace(g); {
	case g == "":
		return ""
	case strings.HasPrefix(g, "https://"):
		return g
	case strings.HasPrefix(g, "projects/"):
		return base + g
	default:
		return base + "projects/" + in.Account + "/regions/" + regionOfZone(zoneOf(in)) + "/resourcePolicies/" + g
	}
}

// policyPath matches a policy URL's project, region and name.
var policyPath = regexp.MustCompile(`projects/([^/]+)/regions/([^/]+)/resourcePolicies/([^/]+)$`)

// aggregatedPolicies serves resourcePolicies.aggregatedList: the project's
// policies by region, paged by maxResults; on the last page the regions
// without any carry a NO_RESULTS_ON_PAGE warning.
func (s *Server) aggregatedPolicies(w http.ResponseWriter, r *http.Request, m []string) {
	project := m[1]
	size, ok := maxResults(r)
	if !ok {
		writeError(w, http.StatusBadRequest, "invalid", "Invalid value for field 'maxResults': must be between 0 and 500")
		return
	}
	if f := r.URL.Query().Get("filter"); f != "" {
		writeError(w, http.StatusBadRequest, "invalid", "Invalid value for field 'filter': the simulator reads no filter of resource policies")
		return
	}
	places := map[string]bool{} // URL → a placement policy
	add := func(in fleet.Instance, gs []string, placement bool) {
		for _, g := range gs {
			if u := policyURL(in, g); u != "" {
				if pm := policyPath.FindStringSubmatch(u); pm != nil && pm[1] == project {
					places[u] = places[u] || placement
				}
			}
		}
	}
	for _, region := range s.opts.Regions {
		for _, live := range s.inv.InScope(region, project) {
			add(*live.Instance, live.ResourcePolicies, false)
			add(*live.Instance, live.PlacementGroups, true)
		}
	}
	urls := make([]string, 0, len(places))
	for u := range places {
		urls = append(urls, u)
	}
	sort.Strings(urls)
	query := simkit.Fingerprint(project, "resourcePolicies")
	offset, ok := simkit.DecodeToken(r.URL.Query().Get("pageToken"), query)
	if !ok {
		writeError(w, http.StatusBadRequest, "invalid", "Invalid value for field 'pageToken'")
		return
	}
	from, to, next := simkit.Page(len(urls), offset, size)
	items := map[string]any{}
	for _, u := range urls[from:to] {
		pm := policyPath.FindStringSubmatch(u)
		key := "regions/" + pm[2]
		z, _ := items[key].(map[string]any)
		if z == nil {
			z = map[string]any{"resourcePolicies": []map[string]any{}}
			items[key] = z
		}
		pol := map[string]any{
			"kind": "compute#resourcePolicy", "id": numericID(project, "resourcePolicy/"+pm[2]+"/"+pm[3]), "name": pm[3],
			"region": base + "projects/" + project + "/regions/" + pm[2], "selfLink": u, "status": "READY",
			"creationTimestamp": "2026-01-05T09:00:00.000-08:00",
		}
		if places[u] {
			pol["groupPlacementPolicy"] = map[string]any{"collocation": "COLLOCATED"}
		} else {
			pol["instanceSchedulePolicy"] = map[string]any{"timeZone": "UTC", "vmStopSchedule": map[string]any{"schedule": "0 20 * * *"}}
		}
		z["resourcePolicies"] = append(z["resourcePolicies"].([]map[string]any), pol)
	}
	if next < 0 {
		for _, region := range s.opts.Regions {
			key := "regions/" + region
			if _, ok := items[key]; !ok {
				items[key] = map[string]any{"warning": map[string]any{"code": "NO_RESULTS_ON_PAGE", "message": "There are no results for scope '" + key + "' on this page."}}
			}
		}
	}
	out := map[string]any{"kind": "compute#resourcePolicyAggregatedList", "id": "projects/" + project + "/aggregated/resourcePolicies", "items": items,
		"selfLink": base + "projects/" + project + "/aggregated/resourcePolicies"}
	if next >= 0 {
		out["nextPageToken"] = simkit.EncodeToken(next, query)
	}
	writeJSON(w, out)
}
