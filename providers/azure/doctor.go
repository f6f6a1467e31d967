package azure

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v7"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing/catalog"
	"github.com/gpufinops/gpufinops/providers"
)

var _ providers.Doctor = (*Provider)(nil)

// TelegrafConfig is the Telegraf configuration that sends the GPU metrics
// gpufinops reads to Azure Monitor (docs/azure.md).
const TelegrafConfig = `[[inputs.nvidia_smi]]
  interval = "60s"
[[outputs.azure_monitor]]
  namespace_prefix = "Telegraf/"
  # on the VM, with a managed identity holding Monitoring Metrics Publisher`

// CheckPermissions implements providers.Doctor. Without a region: a token
// for ARM, the subscription (Subscriptions Get), Resource Graph (one row),
// the Retail Prices API, the commitment lists (commitmentChecks), and the
// role's effective permissions: the reads of
// RoleAnalyze, and the deallocate action idle-stop needs (a warning when
// missing: analyze works without it). With a region: the region's VM
// listing (Resource Graph, one row), its Uniform scale-set members (the
// ComputeResources table) and Resource SKUs (one page).
func (p *Provider) CheckPermissions(ctx context.Context, scope providers.Scope) []providers.Check {
	var out []providers.Check
	add := func(action, method string, err error) {
		c := providers.Check{Name: "permission", Action: action, Method: method, Status: providers.CheckOK}
		switch {
		case err == nil:
		case errors.Is(err, providers.ErrPermission):
			c.Status, c.Detail, c.Fix = providers.CheckMissing, err.Error(), "grant the role from 'gpufinops iam-policy azure' (or Reader and Monitoring Reader) on the subscription"
		case errors.Is(err, providers.ErrCredentials):
			c.Status, c.Detail, c.Fix = providers.CheckMissing, err.Error(), providers.FixOf(err)
		default:
			c.Status, c.Detail = providers.CheckError, err.Error()
		}
		out = append(out, c)
	}
	if scope.Region == "" {
		_, err := p.cred.GetToken(ctx, policy.TokenRequestOptions{Scopes: []string{armAudience + "/.default"}})
		c := providers.Check{Name: "credentials", Method: "a token for Azure Resource Manager", Status: providers.CheckOK}
		if err != nil {
			c.Status, c.Detail, c.Fix = providers.CheckMissing, classify(err).Error(), missingCredentialsFix
			return append(out, c)
		}
		out = append(out, c)
		_, err = p.subs.Get(ctx, scope.Account, nil)
		add("Microsoft.Resources/subscriptions/read", "one call", classify(err))
		_, err = p.query(ctx, []string{scope.Account}, regionsQuery)
		add("Microsoft.Compute/virtualMachines/read", "Resource Graph, one query", err)
		_, err = p.retailItems(ctx, "eastus", priceFilter("eastus", []string{"Standard_NC24ads_A100_v4"}))
		add("Retail Prices API (public)", "one query", err)
		out = append(out, p.commitmentChecks(ctx)...)
		perms, err := p.permissionsOf(ctx, scope.Account, "")
		if err != nil {
			add("Microsoft.Authorization/permissions", "one call", err)
			return out
		}
		for _, perm := range RoleAnalyze {
			if isAMLAction(perm.Action) {
				if p.az.managedAI {
					out = append(out, amlPermissionCheck(perms, perm))
				}
				continue
			}
			var err error
			if !perms.allows(perm.Action) {
				err = fmt.Errorf("%w: the role lacks %s (%s)", providers.ErrPermission, perm.Action, perm.Purpose)
			}
			add(perm.Action, "effective permissions", err)
		}
		c = providers.Check{Name: "permission", Action: ActionDeallocate, Method: "effective permissions", Status: providers.CheckOK}
		if !perms.allows(ActionDeallocate) {
			c.Status, c.Detail, c.Fix = providers.CheckWarn, "the role cannot deallocate VMs: idle-stop --execute would fail (analyze is unaffected)", "gpufinops iam-policy azure --idle-stop"
		}
		return append(out, c)
	}
	_, err := p.query(ctx, []string{scope.Account}, graphQuery(scope.Region))
	add("Microsoft.Compute/virtualMachines/read", "Resource Graph, one query", err)
	out = append(out, p.checkComputeResources(ctx, scope))
	f, err := p.compute(scope.Account)
	if err == nil {
		pager := f.NewResourceSKUsClient().NewListPager(&armcompute.ResourceSKUsClientListOptions{Filter: to.Ptr("location eq '" + scope.Region + "'")})
		_, err = pager.NextPage(ctx)
		err = classify(err)
	}
	add("Microsoft.Compute/skus/read", "one page", err)
	return out
}

// isAMLAction reports whether an action is one of Azure ML's.
func isAMLAction(action string) bool {
	return strings.HasPrefix(action, "Microsoft.MachineLearningServices/")
}

// amlPermissionCheck is one Azure ML read: a warning when missing, since
// the scan goes on without the managed AI items.
func amlPermissionCheck(perms *permissions, perm providers.Permission) providers.Check {
	c := providers.Check{Name: "permission", Action: perm.Action, Method: "effective permissions", Status: providers.CheckOK}
	if !perms.allows(perm.Action) {
		c.Status = providers.CheckWarn
		c.Detail = fmt.Sprintf("the role lacks %s (%s): the scan leaves the Azure ML items out and says so", perm.Action, perm.Purpose)
		c.Fix = "grant the role from 'gpufinops iam-policy azure', or set providers.azure." + OptManagedAI + ": false to skip Azure ML"
	}
	return c
}

// CheckCoverage implements providers.Doctor: how many of the scope's
// running GPU VMs publish GPU metrics over the last week, for every GPU (a
// VM some of whose GPUs are missing is partial, not publishing).
func (p *Provider) CheckCoverage(ctx context.Context, scope providers.Scope) (checks []providers.Check) {
	if scope.Region == "" {
		return []providers.Check{{Name: "metrics", Status: providers.CheckOK, Detail: "checked per region"}}
	}
	listed, err := p.ListGPUInstances(ctx, scope)
	if err != nil {
		return []providers.Check{{Name: "metrics", Status: providers.CheckError, Detail: err.Error()}}
	}
	defer func() {
		cat, _ := catalog.Embedded()
		checks = append(checks, providers.UnknownTypesCheck(listed, cat)...)
	}()
	now := p.opts.Now().UTC().Truncate(time.Hour)
	if _, err := p.ReadUtilization(ctx, scope, listed, fleet.TimeRange{Start: now.Add(-7 * 24 * time.Hour), End: now}); err != nil {
		return []providers.Check{{Name: "metrics", Status: providers.CheckError, Detail: err.Error()}}
	}
	cov := providers.CoverageOf(listed, func(i int) int { return providers.SamplesReporting(&listed[i]) })
	c := providers.Check{Name: "metrics", Method: "metrics:getBatch, " + p.az.namespace, Status: providers.CheckOK, Detail: cov.Detail("GPU VMs")}
	if !cov.OK() {
		c.Status = providers.CheckWarn
		c.Fix = "install Telegraf with this configuration on each VM:\n" + TelegrafConfig
	}
	return []providers.Check{c}
}

// checkComputeResources reads the region's Uniform scale-set members from
// Resource Graph's ComputeResources table, the only place Azure lists them
// (AKS GPU node pools among them; FACTS.md): a caller that cannot query the
// table would miss those GPU nodes. Resource Graph leaves out the rows the
// caller may not read rather than failing, so the check reports how many
// members it sees; the effective permissions check covers the action.
func (p *Provider) checkComputeResources(ctx context.Context, scope providers.Scope) providers.Check {
	c := providers.Check{Name: "permission", Action: "Microsoft.Compute/virtualMachineScaleSets/virtualMachines/read",
		Method: "Resource Graph, ComputeResources table, one query", Status: providers.CheckOK}
	rows, err := p.query(ctx, []string{scope.Account}, membersQuery(scope.Region))
	switch {
	case err == nil:
		c.Detail = fmt.Sprintf("%d Uniform scale-set GPU VMs (AKS node pools among them) visible", len(rows))
	case errors.Is(err, providers.ErrPermission):
		c.Status, c.Detail, c.Fix = providers.CheckMissing, err.Error(), "grant Microsoft.Compute/virtualMachineScaleSets/virtualMachines/read ('gpufinops iam-policy azure'): without it AKS and other Uniform scale-set GPU nodes are not listed"
	default:
		c.Status, c.Detail = providers.CheckError, "the ComputeResources table cannot be queried, so Uniform scale-set (AKS) GPU nodes would not be listed: "+err.Error()
	}
	return c
}
