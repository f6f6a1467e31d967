package sim

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/gpufinops/gpufinops/providers/simkit"
)

// Resource Graph: the simulator understands the shapes of query gpufinops
// sends (VMs and scale-set VMs of one region, projected; or a summary of
// subscription and location) and evaluates their filters itself: the
// resource types, location =~ '…', size startswith '…'. Rows are served in
// resource ID order, paged with $skipToken (the page size is
// options.$top, else Options.GraphPage, at most 1,000).

var reStartswith = regexp.MustCompile(`(?i)size\s+startswith\s+'([^']*)'`)

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
	lower := strings.ToLower(q.Query)
	if !strings.HasPrefix(strings.TrimSpace(lower), "resources") || !strings.Contains(lower, "microsoft.compute/virtualmachines") {
		writeError(w, http.StatusBadRequest, "InvalidQuery", "gpufinops azure sim: only queries of the Resources table for virtual machines are served")
		return
	}
	subs := map[string]bool{}
	for _, sub := range q.Subscriptions {
		subs[strings.ToLower(sub)] = true
	}
	loc := ""
	if m := reLocation.FindStringSubmatch(q.Query); m != nil {
		loc = strings.ToLower(m[1])
	}
	prefix := ""
	if m := reStartswith.FindStringSubmatch(q.Query); m != nil {
		prefix = strings.ToLower(m[1])
	}
	sets := strings.Contains(lower, "virtualmachinescalesets/virtualmachines")
	var rows []map[string]any
	summary := map[[2]string]int{}
	var order [][2]string
	for _, v := range s.vms {
		in := v.in
		switch {
		case len(subs) > 0 && !subs[strings.ToLower(v.sub)]:
			continue
		case loc != "" && in.Region != loc:
			continue
		case !strings.HasPrefix(strings.ToLower(in.InstanceType), prefix):
			continue
		case v.set != "" && !sets:
			continue
		}
		if strings.Contains(lower, "summarize") {
			k := [2]string{v.sub, in.Region}
			if summary[k] == 0 {
				order = append(order, k)
			}
			summary[k]++
			continue
		}
		typ := "microsoft.compute/virtualmachines"
		vmss := ""
		if v.set != "" {
			typ, vmss = "microsoft.compute/virtualmachinescalesets/virtualmachines", v.setID()
		}
		eviction := ""
		if in.Lifecycle == "spot" {
			eviction = "Deallocate"
		}
		rows = append(rows, map[string]any{"id": v.id(), "name": v.name, "type": typ, "subscriptionId": v.sub, "resourceGroup": v.rg,
			"location": in.Region, "zones": zones(in), "tags": tagsOf(in), "size": in.InstanceType, "priority": priority(in),
			"eviction": eviction, "power": powerCode(s.inv.StateOf(in.ID)), "created": s.created(in), "vmss": vmss})
	}
	for _, k := range order {
		rows = append(rows, map[string]any{"subscriptionId": k[0], "location": k[1], "count_": summary[k]})
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
	body := map[string]any{"totalRecords": len(rows), "count": to - from, "resultTruncated": "false", "data": append([]map[string]any{}, rows[from:to]...), "facets": []any{}}
	if next > 0 {
		body["$skipToken"] = simkit.EncodeToken(next, fp)
	}
	writeJSON(w, body)
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
