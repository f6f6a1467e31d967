package azure

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v7"

	"github.com/gpufinops/gpufinops/providers"
)

var _ providers.Stopper = (*Provider)(nil)

// ActionDeallocate is the permission idle-stop needs.
const ActionDeallocate = "Microsoft.Compute/virtualMachines/deallocate/action"

// StopWait bounds how long Stop waits for a deallocation to finish.
var StopWait = 10 * time.Minute

// Stop deallocates one VM, which releases its compute and ends its compute
// billing; it never powers off (a powered-off VM stays allocated and billed)
// and never deletes. The VM is found among the scope's listed VMs (an ARM
// resource ID is taken as it is) and read again through ARM, not Resource
// Graph: gone → providers.ErrNotFound; deallocated or deallocating →
// AlreadyStopped. A scale-set member is providers.ErrNotStoppable: its scale
// set (an AKS node pool) owns it. Azure has no dry run: the permission is
// checked with the caller's effective permissions on the VM's resource group
// (Microsoft.Authorization/permissions). The deallocation is polled
// (Azure-AsyncOperation) to its end, at most StopWait.
func (p *Provider) Stop(ctx context.Context, scope providers.Scope, instanceID string, dryRun bool) (providers.StopResult, error) {
	if err := ctx.Err(); err != nil {
		return providers.StopResult{}, err
	}
	rid, err := p.resourceOf(ctx, scope, instanceID)
	if err != nil {
		return providers.StopResult{}, err
	}
	if isAMLID(rid) {
		return p.stopAML(ctx, rid, dryRun)
	}
	if strings.Contains(strings.ToLower(rid), "/virtualmachinescalesets/") {
		return providers.StopResult{}, fmt.Errorf("%s is a member of scale set %s, which owns it; scale the set instead: %w", instanceID, idPart(rid, "virtualMachineScaleSets"), providers.ErrNotStoppable)
	}
	sub, rg, name := subscriptionOf(rid), resourceGroupOf(rid), lastPart(rid)
	f, err := p.compute(sub)
	if err != nil {
		return providers.StopResult{}, err
	}
	vms := f.NewVirtualMachinesClient()
	got, err := vms.Get(ctx, rg, name, &armcompute.VirtualMachinesClientGetOptions{Expand: to.Ptr(armcompute.InstanceViewTypesInstanceView)})
	if err != nil {
		return providers.StopResult{}, stopError(ctx, instanceID, err)
	}
	if got.Properties != nil && got.Properties.VirtualMachineScaleSet != nil {
		return providers.StopResult{}, fmt.Errorf("%s belongs to scale set %s, which owns it: %w", instanceID, lastPart(deref(got.Properties.VirtualMachineScaleSet.ID)), providers.ErrNotStoppable)
	}
	state := "unknown"
	if got.Properties != nil && got.Properties.InstanceView != nil {
		state = strings.TrimPrefix(powerCode(got.Properties.InstanceView.Statuses), "PowerState/")
	}
	switch state {
	case "deallocated", "deallocating":
		return providers.StopResult{PreviousState: state, CurrentState: state, AlreadyStopped: true}, nil
	}
	if err := p.checkAction(ctx, sub, rg, ActionDeallocate); err != nil {
		return providers.StopResult{}, fmt.Errorf("%s: %w", instanceID, err)
	}
	if dryRun {
		return providers.StopResult{PreviousState: state, CurrentState: state}, nil
	}
	poller, err := vms.BeginDeallocate(ctx, rg, name, nil)
	if err != nil {
		return providers.StopResult{}, stopError(ctx, instanceID, err)
	}
	wait, cancel := context.WithTimeout(ctx, StopWait)
	defer cancel()
	if _, err := poller.PollUntilDone(wait, &runtime.PollUntilDoneOptions{Frequency: time.Second}); err != nil {
		if ctx.Err() == nil && wait.Err() != nil {
			return providers.StopResult{PreviousState: state, CurrentState: "deallocating"}, fmt.Errorf("%s: the deallocation did not finish within %s; it goes on in Azure", instanceID, StopWait)
		}
		return providers.StopResult{}, stopError(ctx, instanceID, err)
	}
	return providers.StopResult{PreviousState: state, CurrentState: "deallocated"}, nil
}

func stopError(ctx context.Context, id string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	err = classify(err)
	if errors.Is(err, providers.ErrNotFound) || strings.Contains(err.Error(), "HTTP 404") {
		return fmt.Errorf("%s: %w", id, providers.ErrNotFound)
	}
	return fmt.Errorf("%s: %w", id, err)
}

// resourceOf is the ARM ID of a fleet ID in scope, listing the scope when
// it was not listed yet.
func (p *Provider) resourceOf(ctx context.Context, scope providers.Scope, id string) (string, error) {
	if strings.HasPrefix(strings.ToLower(id), "/subscriptions/") {
		return id, nil
	}
	p.mu.Lock()
	rid := p.resourceIDs[key(scope.Account, id)]
	p.mu.Unlock()
	if rid != "" {
		return rid, nil
	}
	if _, err := p.ListGPUInstances(ctx, scope); err != nil {
		return "", err
	}
	p.mu.Lock()
	rid = p.resourceIDs[key(scope.Account, id)]
	p.mu.Unlock()
	if rid == "" {
		return "", fmt.Errorf("%s: no such GPU VM in %s: %w", id, scope, providers.ErrNotFound)
	}
	return rid, nil
}

// permissions is Microsoft.Authorization/permissions' answer.
type permissions struct {
	Value []struct {
		Actions    []string `json:"actions"`
		NotActions []string `json:"notActions"`
	} `json:"value"`
}

// checkAction reports providers.ErrPermission when the caller's effective
// permissions on the resource group (or the subscription, rg "") lack action.
func (p *Provider) checkAction(ctx context.Context, sub, rg, action string) error {
	perms, err := p.permissionsOf(ctx, sub, rg)
	if err != nil {
		return err
	}
	if !perms.allows(action) {
		return fmt.Errorf("%w: the role lacks %s", providers.ErrPermission, action)
	}
	return nil
}

func (p *Provider) permissionsOf(ctx context.Context, sub, rg string) (*permissions, error) {
	c, err := arm.NewClient("gpufinops-azure", "v1", p.cred, p.arm)
	if err != nil {
		return nil, err
	}
	path := "/subscriptions/" + sub
	if rg != "" {
		path += "/resourceGroups/" + rg
	}
	req, err := runtime.NewRequest(ctx, http.MethodGet, runtime.JoinPaths(c.Endpoint(), path+"/providers/Microsoft.Authorization/permissions"))
	if err != nil {
		return nil, err
	}
	req.Raw().URL.RawQuery = "api-version=2022-04-01"
	resp, err := c.Pipeline().Do(req)
	if err != nil {
		return nil, classify(err)
	}
	if !runtime.HasStatusCode(resp, http.StatusOK) {
		return nil, fmt.Errorf("reading the role's permissions: %w", classify(runtime.NewResponseError(resp)))
	}
	var out permissions
	if err := runtime.UnmarshalAsJSON(resp, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// allows reports whether some grant has action among its actions and not
// among its notActions (ARM wildcards: "*", "Microsoft.Compute/*", "*/read").
func (ps *permissions) allows(action string) bool {
	for _, g := range ps.Value {
		if matchAny(g.Actions, action) && !matchAny(g.NotActions, action) {
			return true
		}
	}
	return false
}

func matchAny(patterns []string, action string) bool {
	for _, pat := range patterns {
		if ActionMatches(pat, action) {
			return true
		}
	}
	return false
}

// ActionMatches matches an ARM action against a role pattern, without case.
func ActionMatches(pattern, action string) bool {
	re := "(?i)^" + strings.ReplaceAll(regexp.QuoteMeta(pattern), `\*`, ".*") + "$"
	ok, err := regexp.MatchString(re, action)
	return err == nil && ok
}
