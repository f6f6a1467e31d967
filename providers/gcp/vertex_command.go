package gcp

import (
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// ManagedCommand spells an advised change to a Vertex AI item as the
// gcloud command to run (providers.RegInfo.ManagedCommand), from the
// item's own fields: undeploying an endpoint's deployed model, stopping a
// Workbench instance, turning on its idle shutdown. "" where gcloud's GA
// commands have none for the change (replica counts of a deployed model
// change only by redeploying it, which needs the model the fleet does not
// keep; a compute cluster is Azure's) or the item lacks what it needs.
func ManagedCommand(in *fleet.Instance, c fleet.ManagedChange) string {
	m := in.Managed
	if in.Provider != fleet.GCP || m == nil || m.Service != fleet.VertexAI || in.Account == "" {
		return ""
	}
	project := "--project=" + shellQuote(in.Account)
	switch {
	case c.Action == fleet.ActionDeleteEndpoint && m.Kind == fleet.KindEndpoint:
		region := firstOf(m.Workspace, in.Region)
		if m.Endpoint == "" || m.Deployment == "" || region == "" {
			return ""
		}
		return strings.Join([]string{"gcloud ai endpoints undeploy-model", shellQuote(m.Endpoint), project,
			"--region=" + shellQuote(region), "--deployed-model-id=" + shellQuote(m.Deployment)}, " ")
	case m.Kind == fleet.KindNotebook && (c.Action == fleet.ActionStopNotebook || c.Action == fleet.ActionIdleShutdown):
		zone := firstOf(m.Workspace, in.Zone)
		name := in.Name
		if isWorkbenchName(in.ID) {
			name, zone = nameOf(in.ID), nameSegment(in.ID, "locations")
		}
		if name == "" || zone == "" {
			return ""
		}
		args := []string{"gcloud workbench instances", "stop", shellQuote(name), project, "--location=" + shellQuote(zone)}
		if c.Action == fleet.ActionIdleShutdown {
			if c.IdleShutdownMinutes <= 0 || math.IsNaN(c.IdleShutdownMinutes) || math.IsInf(c.IdleShutdownMinutes, 0) {
				return ""
			}
			secs := strconv.FormatInt(int64(math.Round(c.IdleShutdownMinutes*60)), 10)
			args[1] = "update"
			args = append(args, "--metadata=idle-timeout-seconds="+secs)
		}
		return strings.Join(args, " ")
	}
	return ""
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// plainWord is an argument the shell reads as itself.
var plainWord = regexp.MustCompile(`^[A-Za-z0-9@%+=:,./_-]+$`)

// shellQuote quotes s for a POSIX shell where it needs it.
func shellQuote(s string) string {
	if plainWord.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
