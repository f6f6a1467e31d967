package azure

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/providers"
)

var _ providers.CommitmentLister = (*Provider)(nil)

// The commitment APIs (no Go SDK module of them is on the module proxy's
// list this build may use: they are read through azcore's ARM pipeline,
// typed after azure-rest-api-specs), as scan warnings and doctor name them.
const (
	// apiReservations is Microsoft.Capacity's Reservation_ListAll.
	apiReservations = "Microsoft.Capacity/reservations:list"
	// apiSavingsPlans is Microsoft.BillingBenefits' SavingsPlan_ListAll.
	apiSavingsPlans = "Microsoft.BillingBenefits/savingsPlans:list"

	reservationsPath      = "/providers/Microsoft.Capacity/reservations"
	reservationsVersion   = "2022-11-01"
	savingsPlansPath      = "/providers/Microsoft.BillingBenefits/savingsPlans"
	savingsPlansVersion   = "2022-11-01"
	kindAzureSavingsPlan  = "savings-plan"
	maxCommitmentPages    = 1000
	commitmentStateActive = "Succeeded"
)

// armReservation is a reservation as Reservation_ListAll answers it
// (ReservationResponse, API 2022-11-01).
type armReservation struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Location string `json:"location"`
	SKU      struct {
		Name string `json:"name"`
	} `json:"sku"`
	Properties struct {
		ReservedResourceType   string          `json:"reservedResourceType"`
		InstanceFlexibility    string          `json:"instanceFlexibility"`
		AppliedScopes          []string        `json:"appliedScopes"`
		AppliedScopeType       string          `json:"appliedScopeType"`
		AppliedScopeProperties *appliedScope   `json:"appliedScopeProperties"`
		Quantity               float64         `json:"quantity"`
		ProvisioningState      string          `json:"provisioningState"`
		EffectiveDateTime      string          `json:"effectiveDateTime"`
		BenefitStartTime       string          `json:"benefitStartTime"`
		ExpiryDateTime         string          `json:"expiryDateTime"`
		ExpiryDate             string          `json:"expiryDate"`
		BillingPlan            string          `json:"billingPlan"`
		BillingScopeID         string          `json:"billingScopeId"`
		Term                   string          `json:"term"`
		Commitment             *armCommitment  `json:"commitment"` // savings plans only
		Utilization            json.RawMessage `json:"utilization"`
	} `json:"properties"`
}

// appliedScope is AppliedScopeProperties.
type appliedScope struct {
	TenantID          string `json:"tenantId"`
	ManagementGroupID string `json:"managementGroupId"`
	SubscriptionID    string `json:"subscriptionId"`
	ResourceGroupID   string `json:"resourceGroupId"`
}

// armCommitment is a savings plan's Commitment (an hourly amount).
type armCommitment struct {
	CurrencyCode string          `json:"currencyCode"`
	Amount       decimal.Decimal `json:"amount"`
	Grain        string          `json:"grain"`
}

type armList struct {
	Value    []armReservation `json:"value"`
	NextLink string           `json:"nextLink"`
}

// commitmentClient is the ARM client of the commitment reads.
func (p *Provider) commitmentClient() (*arm.Client, error) {
	return arm.NewClient("gpufinops-azure-commitments", "v1", p.cred, p.arm)
}

// ListCommitments implements providers.CommitmentLister. Reservations and
// savings plans belong to the billing account, not to a subscription:
// whatever the scopes, one paged Reservation_ListAll
// (GET /providers/Microsoft.Capacity/reservations) and one paged
// SavingsPlan_ListAll (GET /providers/Microsoft.BillingBenefits/savingsPlans)
// list those the credentials may read; those provisioned (Succeeded) and
// not expired are kept. VM reservations only: others (SQL, storage…) are
// not GPU capacity.
func (p *Provider) ListCommitments(ctx context.Context, scopes []providers.Scope) ([]fleet.Held, []*providers.ScopeError) {
	if len(scopes) == 0 {
		return nil, nil
	}
	var (
		mu     sync.Mutex
		held   []fleet.Held
		failed []*providers.ScopeError
		wg     sync.WaitGroup
	)
	for _, api := range []string{apiReservations, apiSavingsPlans} {
		wg.Go(func() {
			got, err := p.listHeld(ctx, api)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed = append(failed, &providers.ScopeError{Scope: providers.Scope{Provider: fleet.Azure}, Commitments: true, Source: api, Err: err})
				return
			}
			held = append(held, got...)
		})
	}
	wg.Wait()
	return held, failed
}

// listHeld reads every page of one commitment API.
func (p *Provider) listHeld(ctx context.Context, api string) ([]fleet.Held, error) {
	return p.listHeldPages(ctx, api, 0)
}

// listHeldPages reads the first pages of one commitment API (all of them
// when pages is zero).
func (p *Provider) listHeldPages(ctx context.Context, api string, pages int) ([]fleet.Held, error) {
	c, err := p.commitmentClient()
	if err != nil {
		return nil, err
	}
	path, version := reservationsPath, reservationsVersion
	if api == apiSavingsPlans {
		path, version = savingsPlansPath, savingsPlansVersion
	}
	first, err := url.Parse(strings.TrimRight(c.Endpoint(), "/") + path)
	if err != nil {
		return nil, err
	}
	q := first.Query()
	q.Set("api-version", version)
	first.RawQuery = q.Encode()
	now := p.opts.Now()
	var out []fleet.Held
	next := first.String()
	for n := 0; next != "" && (pages <= 0 || n < pages); n++ {
		if n >= maxCommitmentPages {
			return nil, fmt.Errorf("more than %d pages", maxCommitmentPages)
		}
		if u, err := url.Parse(next); err != nil || u.Host != first.Host {
			return nil, fmt.Errorf("nextLink %q does not continue %s", next, first.Host)
		}
		req, err := runtime.NewRequest(ctx, http.MethodGet, next)
		if err != nil {
			return nil, err
		}
		resp, err := c.Pipeline().Do(req)
		if err != nil {
			return nil, classify(err)
		}
		if !runtime.HasStatusCode(resp, http.StatusOK) {
			return nil, classify(runtime.NewResponseError(resp))
		}
		var page armList
		if err := runtime.UnmarshalAsJSON(resp, &page); err != nil {
			return nil, err
		}
		for _, r := range page.Value {
			h, ok, err := heldFrom(api, r, now)
			if err != nil {
				return nil, err
			}
			if ok {
				out = append(out, h)
			}
		}
		next = page.NextLink
	}
	return out, nil
}

// heldFrom is a reservation or savings plan as a held commitment; false for
// one not in force at now (not Succeeded, or expired) or not for VMs.
func heldFrom(api string, r armReservation, now time.Time) (fleet.Held, bool, error) {
	pr := r.Properties
	if !strings.EqualFold(pr.ProvisioningState, commitmentStateActive) {
		return fleet.Held{}, false, nil
	}
	h := fleet.Held{
		ID: r.ID, Provider: fleet.Azure, Account: heldSubscription(pr.BillingScopeID),
		Term: heldTerm(pr.Term), Payment: heldPayment(api, pr.BillingPlan), Source: api,
		Scope: scopeOf(pr.AppliedScopeType, pr.AppliedScopes, pr.AppliedScopeProperties),
	}
	var err error
	start := pr.BenefitStartTime
	if start == "" {
		start = pr.EffectiveDateTime
	}
	if h.Start, err = armTime(start); err != nil {
		return h, false, fmt.Errorf("%s: benefitStartTime: %w", r.ID, err)
	}
	end := pr.ExpiryDateTime
	if end == "" {
		end = pr.ExpiryDate
	}
	if h.End, err = armTime(end); err != nil {
		return h, false, fmt.Errorf("%s: expiryDateTime: %w", r.ID, err)
	}
	if h.End != nil && !now.Before(*h.End) {
		return h, false, nil
	}
	if api == apiSavingsPlans {
		h.Kind = kindAzureSavingsPlan
		if pr.Commitment == nil {
			return h, false, fmt.Errorf("%s: a savings plan without a commitment", r.ID)
		}
		amount := pr.Commitment.Amount
		h.HourlyCommitment = &amount
		return h, true, nil
	}
	if t := pr.ReservedResourceType; t != "" && !strings.EqualFold(t, "VirtualMachines") {
		return h, false, nil
	}
	h.Kind = string(pricing.Reservation)
	h.Scope.Region = strings.ToLower(strings.ReplaceAll(r.Location, " ", ""))
	h.InstanceType = r.SKU.Name
	h.Count = pr.Quantity
	h.SizeFlexible = strings.EqualFold(pr.InstanceFlexibility, "On")
	return h, true, nil
}

// scopeOf maps an applied scope: Shared is the billing account's every
// subscription; Single a subscription or a resource group; ManagementGroup
// the group's subscriptions.
func scopeOf(typ string, scopes []string, props *appliedScope) fleet.HeldScope {
	if props == nil {
		props = &appliedScope{}
	}
	switch strings.ToLower(typ) {
	case "shared":
		return fleet.HeldScope{Level: "shared"}
	case "managementgroup":
		return fleet.HeldScope{Level: "management-group", Accounts: heldAccounts(props.ManagementGroupID)}
	}
	rg := props.ResourceGroupID
	sub := props.SubscriptionID
	for _, s := range scopes { // the older form of the same
		if strings.Contains(strings.ToLower(s), "/resourcegroups/") {
			rg = s
		} else if sub == "" {
			sub = s
		}
	}
	if rg != "" {
		return fleet.HeldScope{Level: "resource-group", Accounts: []string{rg}}
	}
	return fleet.HeldScope{Level: "account", Accounts: heldAccounts(heldSubscription(sub))}
}

func heldAccounts(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

// heldSubscription is the subscription ID of "/subscriptions/ID[/…]",
// else the value as it is.
func heldSubscription(id string) string {
	if sub := subscriptionOf(id); sub != "" {
		return sub
	}
	return id
}

// heldTerm maps P1Y, P3Y and P5Y to 1y, 3y and 5y.
func heldTerm(t string) string {
	switch strings.ToUpper(t) {
	case "P1Y":
		return "1y"
	case "P3Y":
		return "3y"
	case "P5Y":
		return "5y"
	}
	return strings.ToLower(t)
}

// heldPayment maps a billing plan: a reservation's Upfront or Monthly, a
// savings plan's P1M (monthly; none is paid up front).
func heldPayment(api, plan string) string {
	switch strings.ToLower(plan) {
	case "upfront":
		return pricing.PayAllUpfront
	case "monthly", "p1m":
		return pricing.PayMonthly
	case "":
		if api == apiSavingsPlans {
			return pricing.PayAllUpfront
		}
	}
	return plan
}

// armTime reads an ARM date-time (RFC 3339) or date (2006-01-02).
func armTime(s string) (*time.Time, error) {
	if s == "" {
		return nil, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			t = t.UTC()
			return &t, nil
		}
	}
	return nil, fmt.Errorf("%q is not a date-time", s)
}

// commitmentRoles are the built-in roles that read the commitments, and
// the scope they are assigned at: reservations and savings plans belong to
// the tenant's billing, not to a subscription, so the subscription's
// custom role cannot grant them.
var commitmentRoles = map[string]string{
	apiReservations: `az role assignment create --role "Reservations Reader" --assignee PRINCIPAL --scope /providers/Microsoft.Capacity`,
	apiSavingsPlans: `az role assignment create --role "Savings plan Reader" --assignee PRINCIPAL --scope /providers/Microsoft.BillingBenefits`,
}

// commitmentChecks are doctor's checks of the two commitment lists, one
// page each: a list denied is a warning (the scan goes on without those
// commitments, and says so), with the role assignment that grants it.
func (p *Provider) commitmentChecks(ctx context.Context) []providers.Check {
	var out []providers.Check
	for _, api := range []string{apiReservations, apiSavingsPlans} {
		c := providers.Check{Name: "permission", Action: RoleCommitments[len(out)].Action, Method: "one page of " + api, Status: providers.CheckOK}
		if _, err := p.listHeldPages(ctx, api, 1); err != nil {
			c.Detail = err.Error()
			switch {
			case errors.Is(err, providers.ErrPermission):
				c.Status = providers.CheckWarn
				c.Detail += "; the commitments it lists are missing from scans, whose advice may then count savings on committed capacity"
				c.Fix = commitmentRoles[api]
			default:
				c.Status = providers.CheckError
			}
		}
		out = append(out, c)
	}
	return out
}
