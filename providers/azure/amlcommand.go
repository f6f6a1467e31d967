package azure

import (
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// ManagedCommand spells an advised change to an Azure ML item as the Azure
// CLI (ml extension) command that makes it, naming the item's workspace,
// resource group and subscription from its ARM ID; "" when the change has
// no single command on Azure ML (a managed online deployment cannot scale
// to zero nor change its instance type in place; a cluster's priority is
// fixed at creation) or the item is none of Azure ML's.
func ManagedCommand(in *fleet.Instance, c fleet.ManagedChange) string {
	if in == nil || in.Managed == nil || in.Managed.Service != fleet.AzureML {
		return ""
	}
	ref, ok := amlRef(in)
	if !ok {
		return ""
	}
	where := " --resource-group " + shQuote(ref.rg) + " --workspace-name " + shQuote(ref.ws) + " --subscription " + shQuote(ref.sub)
	switch in.Managed.Kind {
	case fleet.KindEndpoint:
		dep := "--name " + shQuote(ref.name) + " --endpoint-name " + shQuote(ref.endpoint)
		switch c.Action {
		case fleet.ActionDeleteEndpoint:
			return "az ml online-deployment delete " + dep + where + " --yes"
		case fleet.ActionSetReplicas:
			if c.Replicas < 1 {
				return "" // a managed online deployment keeps at least one instance
			}
			return "az ml online-deployment update " + dep + where + " --set instance_count=" + strconv.Itoa(c.Replicas)
		}
	case fleet.KindNotebook:
		name := "--name " + shQuote(ref.name)
		switch c.Action {
		case fleet.ActionStopNotebook:
			return "az ml compute stop " + name + where
		case fleet.ActionIdleShutdown:
			if m := math.Round(c.IdleShutdownMinutes); m >= 15 && m <= 3*24*60 {
				return "az ml compute update " + name + where + " --idle-time-before-shutdown-minutes " + strconv.Itoa(int(m))
			}
		}
	case fleet.KindComputeCluster:
		name := "--name " + shQuote(ref.name)
		switch c.Action {
		case fleet.ActionScaleToZero:
			return "az ml compute update " + name + where + " --min-instances 0"
		case fleet.ActionSetMinReplicas:
			if c.Replicas >= 0 {
				return "az ml compute update " + name + where + " --min-instances " + strconv.Itoa(c.Replicas)
			}
		case fleet.ActionIdleShutdown:
			if s := math.Round(c.IdleShutdownMinutes * 60); s > 0 {
				return "az ml compute update " + name + where + " --idle-time-before-scale-down " + strconv.Itoa(int(s))
			}
		}
	}
	return ""
}

// amlItemRef is what names an Azure ML item to the CLI.
type amlItemRef struct{ sub, rg, ws, endpoint, name string }

var reAMLItem = regexp.MustCompile(`(?i)^/subscriptions/([^/]+)/resourceGroups/([^/]+)/providers/Microsoft\.MachineLearningServices/workspaces/([^/]+)/(?:onlineEndpoints/([^/]+)/deployments|computes)/([^/]+)$`)

func amlRef(in *fleet.Instance) (amlItemRef, bool) {
	m := reAMLItem.FindStringSubmatch(in.ID)
	if m == nil {
		return amlItemRef{}, false
	}
	return amlItemRef{sub: m[1], rg: m[2], ws: m[3], endpoint: m[4], name: m[5]}, true
}

var shSafe = regexp.MustCompile(`^[A-Za-z0-9._/:=@+-]+$`)

// shQuote is s as one POSIX shell word.
func shQuote(s string) string {
	if shSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
