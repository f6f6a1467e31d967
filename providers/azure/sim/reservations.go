package sim

import (
	"encoding/json"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers/simkit"
)

// The simulator serves the fleet file's Azure commitments (Fleet.Commitments)
// as the reservations and savings plans APIs answer them
// (azure-rest-api-specs: Microsoft.Capacity 2022-11-01 Reservation_ListAll,
// ReservationResponse; Microsoft.BillingBenefits 2022-11-01
// SavingsPlan_ListAll, SavingsPlanModel). Both are tenant-level lists,
// paged by nextLink ($skiptoken, a number: how many to skip, as both
// models type it); an expired commitment is listed with provisioningState
// Expired. The reservations list rolls its counts up in summary, the
// savings plans list in additionalProperties (SavingsPlanModelListResult).

// commitmentOps are the operations of this file.
var commitmentOps = []string{"capacity:ListReservations", "billingbenefits:ListSavingsPlans"}

// defaultCommitmentPage is how many commitments a page lists when
// Options.CommitmentPage is zero.
const defaultCommitmentPage = 50

func init() {
	Actions["ListReservations"] = "Microsoft.Capacity/reservationOrders/reservations/read"
	Actions["ListSavingsPlans"] = "Microsoft.BillingBenefits/savingsPlanOrders/savingsPlans/read"
}

// claimsCommitments reports whether a path is one of this file's.
func claimsCommitments(p string) bool {
	return strings.EqualFold(p, "/providers/Microsoft.Capacity/reservations") || strings.EqualFold(p, "/providers/Microsoft.BillingBenefits/savingsPlans")
}

// classifyCommitments recognises this file's requests.
func classifyCommitments(r *http.Request, req request) (request, bool) {
	if r.Method != http.MethodGet {
		return req, false
	}
	switch {
	case strings.EqualFold(r.URL.Path, "/providers/Microsoft.Capacity/reservations"):
		req.service, req.op = "capacity", "ListReservations"
	case strings.EqualFold(r.URL.Path, "/providers/Microsoft.BillingBenefits/savingsPlans"):
		req.service, req.op = "billingbenefits", "ListSavingsPlans"
	default:
		return req, false
	}
	return req, true
}

// heldOf is the Azure commitments of f, each billed to a subscription
// (sub when it names none).
func heldOf(f *fleet.Fleet, sub string) []fleet.Held {
	var out []fleet.Held
	for _, h := range f.Commitments {
		if h.Provider != fleet.Azure {
			continue
		}
		if h.Account == "" {
			h.Account = sub
		}
		out = append(out, h)
	}
	return out
}

func armTime(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

func armDate(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format("2006-01-02")
}

// appliedScope is a commitment's scope as ARM words it: appliedScopeType,
// appliedScopes (the older list) and appliedScopeProperties.
func appliedScope(h fleet.Held) (typ string, scopes []string, props map[string]any, friendly string) {
	switch h.Scope.Level {
	case "account":
		var list []string
		for _, a := range h.Scope.Accounts {
			list = append(list, "/subscriptions/"+a)
		}
		props = map[string]any{}
		if len(list) > 0 {
			props["subscriptionId"] = list[0]
		}
		return "Single", list, props, "Single"
	case "resource-group":
		props = map[string]any{}
		if len(h.Scope.Accounts) > 0 {
			props["resourceGroupId"] = h.Scope.Accounts[0]
		}
		return "Single", h.Scope.Accounts, props, "ResourceGroup"
	case "management-group":
		props = map[string]any{"tenantId": "72f988bf-86f1-41af-91ab-2d7cd011db47"}
		if len(h.Scope.Accounts) > 0 {
			props["managementGroupId"] = h.Scope.Accounts[0]
		}
		return "ManagementGroup", nil, props, "ManagementGroup"
	}
	return "Shared", nil, nil, "Shared"
}

func isoTerm(term string) string {
	switch term {
	case "3y":
		return "P3Y"
	case "5y":
		return "P5Y"
	}
	return "P1Y"
}

// state is Succeeded, or Expired from End on.
func (s *Server) heldState(h fleet.Held) string {
	if h.End != nil && !s.opts.Now().Before(*h.End) {
		return "Expired"
	}
	return "Succeeded"
}

// reservationJSON is a VM reservation as Reservation_ListAll answers it.
func (s *Server) reservationJSON(h fleet.Held) map[string]any {
	typ, scopes, props, friendly := appliedScope(h)
	state := s.heldState(h)
	billing := "Upfront"
	if h.Payment == "monthly" {
		billing = "Monthly"
	}
	flex := "Off"
	if h.SizeFlexible {
		flex = "On"
	}
	p := map[string]any{
		"reservedResourceType": "VirtualMachines", "instanceFlexibility": flex, "displayName": "VM_RI_" + armDate(h.Start),
		"appliedScopeType": typ, "archived": false, "quantity": h.Count, "provisioningState": state, "displayProvisioningState": state,
		"effectiveDateTime": armTime(h.Start), "benefitStartTime": armTime(h.Start), "purchaseDate": armDate(h.Start), "purchaseDateTime": armTime(h.Start),
		"expiryDate": armDate(h.End), "expiryDateTime": armTime(h.End), "billingPlan": billing, "billingScopeId": "/subscriptions/" + h.Account,
		"term": isoTerm(h.Term), "renew": false, "userFriendlyAppliedScopeType": friendly, "skuDescription": h.InstanceType,
	}
	if scopes != nil {
		p["appliedScopes"] = scopes
	}
	if props != nil {
		p["appliedScopeProperties"] = props
	}
	name := h.ID
	if parts := strings.Split(strings.Trim(h.ID, "/"), "/"); len(parts) >= 6 {
		name = parts[3] + "/" + parts[5]
	}
	return map[string]any{"id": h.ID, "name": name, "type": "Microsoft.Capacity/reservationOrders/reservations", "etag": 1,
		"location": h.Scope.Region, "kind": "Microsoft.Compute", "sku": map[string]any{"name": h.InstanceType}, "properties": p}
}

// savingsPlanJSON is a savings plan as SavingsPlan_ListAll answers it:
// the commitment an hourly amount in USD, billed monthly (P1M) or, with no
// billing plan, paid up front.
func (s *Server) savingsPlanJSON(h fleet.Held) map[string]any {
	typ, _, props, friendly := appliedScope(h)
	state := s.heldState(h)
	amount := "0"
	if h.HourlyCommitment != nil {
		amount = h.HourlyCommitment.String()
	}
	p := map[string]any{
		"displayName": "Compute_SavingsPlan_" + armDate(h.Start), "provisioningState": state, "displayProvisioningState": state,
		"userFriendlyAppliedScopeType": friendly, "billingScopeId": "/subscriptions/" + h.Account, "term": isoTerm(h.Term),
		"appliedScopeType": typ, "commitment": map[string]any{"grain": "Hourly", "currencyCode": "USD", "amount": json.Number(amount)},
		"effectiveDateTime": armTime(h.Start), "benefitStartTime": armTime(h.Start), "purchaseDateTime": armTime(h.Start),
		"expiryDateTime": armTime(h.End), "renew": false,
	}
	if h.Payment == "monthly" {
		p["billingPlan"] = "P1M"
	}
	if props != nil {
		p["appliedScopeProperties"] = props
	}
	parts := strings.Split(strings.Trim(h.ID, "/"), "/")
	return map[string]any{"id": h.ID, "name": parts[len(parts)-1], "type": "Microsoft.BillingBenefits/savingsPlanOrders/savingsPlans",
		"sku": map[string]any{"name": "Compute_Savings_Plan"}, "properties": p}
}

// serveCommitments answers ListReservations and ListSavingsPlans, a page
// of Options.CommitmentPage at a time.
func (s *Server) serveCommitments(w http.ResponseWriter, req request) {
	var items []map[string]any
	counts := map[string]int{}
	for _, h := range s.held {
		switch {
		case req.op == "ListReservations" && h.Kind == "reservation":
			items = append(items, s.reservationJSON(h))
		case req.op == "ListSavingsPlans" && h.Kind == "savings-plan":
			items = append(items, s.savingsPlanJSON(h))
		default:
			continue
		}
		counts[strings.ToLower(s.heldState(h))]++
	}
	sort.SliceStable(items, func(i, j int) bool { return items[i]["id"].(string) < items[j]["id"].(string) })
	q := req.r.URL.Query()
	// Both models type $skiptoken as a number, "the number of reservations
	// (savings plans) to skip": the nextLink carries the offset.
	off := 0
	if tok := q.Get("$skiptoken"); tok != "" {
		n, err := strconv.Atoi(tok)
		if err != nil || n < 0 || n > len(items) {
			writeError(w, http.StatusBadRequest, "InvalidSkipToken", "The $skiptoken is not valid.")
			return
		}
		off = n
	}
	size := s.opts.CommitmentPage
	if size <= 0 {
		size = defaultCommitmentPage
	}
	from, to, next := simkit.Page(len(items), off, size)
	summary := map[string]any{"succeededCount": counts["succeeded"], "expiredCount": counts["expired"], "failedCount": 0, "pendingCount": 0, "cancelledCount": 0}
	out := map[string]any{"value": append([]map[string]any{}, items[from:to]...)}
	if req.op == "ListReservations" {
		// ReservationsListResult.summary.
		out["summary"] = summary
	} else {
		// SavingsPlanModelListResult names its roll-up "additionalProperties":
		// a list of SavingsPlanSummary, {name: "summary", value: counts}.
		out["additionalProperties"] = []map[string]any{{"name": "summary", "value": summary}}
	}
	if next >= 0 {
		nq := url.Values{}
		nq.Set("api-version", q.Get("api-version"))
		for _, k := range []string{"$filter", "$orderby", "selectedState", "take"} {
			if v := q.Get(k); v != "" {
				nq.Set(k, v)
			}
		}
		nq.Set("$skiptoken", strconv.Itoa(next))
		out["nextLink"] = baseURL(req.r) + req.r.URL.Path + "?" + nq.Encode()
	}
	writeJSON(w, out)
}
