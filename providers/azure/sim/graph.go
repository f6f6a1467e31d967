package sim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers/simkit"
)

// Resource Graph: the simulator evaluates the KQL subset of kql.go over
// two tables, as Azure fills them (see FACTS.md):
//   - Resources: standalone and Flexible-orchestration VMs
//     (microsoft.compute/virtualmachines) and scale sets
//     (microsoft.compute/virtualmachinescalesets);
//   - ComputeResources: the members of Uniform scale sets
//     (microsoft.compute/virtualmachinescalesets/virtualmachines), which
//     Resources does not have.
// Rows are in resource ID order unless the query orders them, paged with
// $skipToken (the page size is options.$top, else Options.GraphPage, at
// most 1,000).

func (s *Server) serveGraph(w http.ResponseWriter, req request) {
	var q struct {
		Query         string   `json:"query"`
		Subscriptions []string `json:"subscriptions"`
		Options       struct {
			Top          *int   `json:"$top"`
			SkipToken    string `json:"$skipToken"`
			ResultFormat string `json:"resultFormat"`
		} `json:"options"`
	}
	if err := json.Unmarshal(req.body, &q); err != nil || strings.TrimSpace(q.Query) == "" {
		writeError(w, http.StatusBadRequest, "BadRequest", "the request has no query")
		return
	}
	s.quotaHeaders(w)
	query, err := parseKQL(q.Query)
	if err != nil {
		writeGraphError(w, err)
		return
	}
	table, ok := s.graphTable(query.table, q.Subscriptions)
	if !ok {
		writeGraphError(w, fmt.Errorf("gpufinops azure sim: the table %q is not served (Resources and ComputeResources are)", query.table))
		return
	}
	rows, err := query.run(table)
	if err != nil {
		writeGraphError(w, err)
		return
	}
	subList := append([]string(nil), q.Subscriptions...)
	fp := simkit.Fingerprint(append([]string{q.Query}, subList...)...)
	offset, ok := simkit.DecodeToken(q.Options.SkipToken, fp)
	if !ok {
		writeError(w, http.StatusBadRequest, "InvalidSkipToken", "the $skipToken does not continue this query")
		return
	}
	size := s.opts.GraphPage
	if q.Options.Top != nil {
		size = *q.Options.Top
	}
	if size < 1 || size > 1000 {
		writeError(w, http.StatusBadRequest, "InvalidQueryOptions", "$top must be between 1 and 1000")
		return
	}
	from, to, next := simkit.Page(len(rows), offset, size)
	body := map[string]any{"totalRecords": len(rows), "count": to - from, "resultTruncated": "false", "data": append([]kqlRow{}, rows[from:to]...), "facets": []any{}}
	if next > 0 {
		body["$skipToken"] = simkit.EncodeToken(next, fp)
	}
	writeJSON(w, body)
}

// writeGraphError answers a query Resource Graph would refuse: 400
// BadRequest with an InvalidQuery detail; the message says what the
// simulator could not resolve (Azure's further details are not modelled).
func writeGraphError(w http.ResponseWriter, err error) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("x-ms-error-code", "BadRequest")
	w.WriteHeader(http.StatusBadRequest)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": "BadRequest", "message": "gpufinops azure sim: " + err.Error(),
		"details": []map[string]string{
			{"code": "InvalidQuery", "message": "Query is invalid. Please refer to the documentation for the Azure Resource Graph service and fix the error before retrying."},
		}}})
}

// graphTable is a table's rows for the subscriptions (all when none), in
// resource ID order; false for a table the simulator does not serve.
func (s *Server) graphTable(table string, subscriptions []string) ([]kqlRow, bool) {
	if table != "resources" && table != "computeresources" {
		return nil, false
	}
	subs := map[string]bool{}
	for _, sub := range subscriptions {
		subs[strings.ToLower(sub)] = true
	}
	var rows []kqlRow
	sets := map[string]bool{}
	for _, v := range s.vms {
		if len(subs) > 0 && !subs[strings.ToLower(v.sub)] {
			continue
		}
		switch {
		case table == "resources" && v.set == "":
			rows = append(rows, s.graphVM(v))
		case table == "resources" && !sets[v.setID()]:
			sets[v.setID()] = true
			rows = append(rows, s.graphSet(v))
		case table == "computeresources" && v.set != "":
			rows = append(rows, s.graphSetVM(v))
		}
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i]["id"].(string) < rows[j]["id"].(string) })
	return rows, true
}

// graphResource is the columns every Resource Graph row has.
func graphResource(id, name, typ string, v *vm) kqlRow {
	return kqlRow{"id": id, "name": name, "type": typ, "tenantId": "", "kind": "", "location": v.in.Region,
		"resourceGroup": v.rg, "subscriptionId": v.sub, "managedBy": "", "sku": nil, "plan": nil, "properties": map[string]any{},
		"tags": anyTags(tagsOf(v.in)), "identity": nil, "zones": anyZones(zones(v.in)), "extendedLocation": nil}
}

// graphVM is a VM's row in Resources: its ARM model with the power state
// under properties.extended.instanceView.
func (s *Server) graphVM(v *vm) kqlRow {
	row := graphResource(v.id(), v.name, "microsoft.compute/virtualmachines", v)
	props := jsonCopy(s.vmBody(v, false)["properties"])
	props["extended"] = s.extended(v)
	row["properties"] = props
	return row
}

// graphSet is a scale set's row in Resources: the set's size in sku, its
// members' priority in properties.virtualMachineProfile.
func (s *Server) graphSet(v *vm) kqlRow {
	row := graphResource(v.setID(), v.set, "microsoft.compute/virtualmachinescalesets", v)
	profile := map[string]any{"priority": priority(v.in)}
	if v.in.Lifecycle == fleet.Spot {
		profile["evictionPolicy"] = evictionPolicy(v.in)
	}
	row["sku"] = map[string]any{"name": v.in.InstanceType, "tier": "Standard"}
	row["properties"] = map[string]any{"orchestrationMode": "Uniform", "provisioningState": "Succeeded", "virtualMachineProfile": profile}
	row["tags"] = map[string]any{}
	row["zones"] = nil
	return row
}

// graphSetVM is a Uniform scale set member's row in ComputeResources: its
// ARM model (sku, no priority: VirtualMachineScaleSetVMProperties has
// none) with the power state under properties.extended.instanceView.
func (s *Server) graphSetVM(v *vm) kqlRow {
	row := graphResource(v.id(), v.name, "microsoft.compute/virtualmachinescalesets/virtualmachines", v)
	row["sku"] = map[string]any{"name": v.in.InstanceType, "tier": "Standard"}
	row["properties"] = map[string]any{"timeCreated": s.created(v.in), "provisioningState": "Succeeded", "latestModelApplied": true,
		"extended": s.extended(v)}
	return row
}

func (s *Server) extended(v *vm) map[string]any {
	code := powerCode(s.inv.StateOf(v.in.ID))
	return map[string]any{"instanceView": map[string]any{"powerState": map[string]any{"code": code, "displayStatus": "VM " + strings.TrimPrefix(code, "PowerState/")}}}
}

func jsonCopy(v any) map[string]any {
	b, _ := json.Marshal(v)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return out
}

func anyTags(t map[string]string) map[string]any {
	out := map[string]any{}
	for k, v := range t {
		out[k] = v
	}
	return out
}

func anyZones(z []string) any {
	if len(z) == 0 {
		return nil
	}
	out := make([]any, len(z))
	for i, x := range z {
		out[i] = x
	}
	return out
}

// quotaHeaders writes Resource Graph's user quota headers.
func (s *Server) quotaHeaders(w http.ResponseWriter) {
	remaining := 15
	if s.opts.GraphQuota > 0 {
		now := time.Now() // the quota is of wall time, whatever the simulated clock
		s.mu.Lock()
		kept := s.quota[:0]
		for _, t := range s.quota {
			if now.Sub(t) < 5*time.Second {
				kept = append(kept, t)
			}
		}
		s.quota = append(kept, now)
		remaining = max(0, s.opts.GraphQuota-len(s.quota))
		s.mu.Unlock()
	}
	w.Header().Set("x-ms-user-quota-remaining", strconv.Itoa(remaining))
	w.Header().Set("x-ms-user-quota-resets-after", "00:00:05")
}
