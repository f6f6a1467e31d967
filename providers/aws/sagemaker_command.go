package aws

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// shellSafe are the arguments a POSIX shell reads as one word unquoted.
var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_./:=,@+%-]+$`)

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// awsCLI is an aws CLI command line: its words quoted, --region last.
func awsCLI(region string, words ...string) string {
	out := make([]string, 0, len(words)+2)
	for _, w := range words {
		out = append(out, shellQuote(w))
	}
	if region != "" {
		out = append(out, "--region", shellQuote(region))
	}
	return strings.Join(out, " ")
}

// ManagedCommand spells an advised change to a SageMaker item as the aws
// CLI command that makes it (providers.RegInfo.ManagedCommand); "" when
// SageMaker has no command for it (a running training job's purchase
// option, an endpoint's instance type, which needs a new endpoint
// configuration naming the model, a notebook's idle shutdown, which needs a
// lifecycle configuration script).
func ManagedCommand(in *fleet.Instance, c fleet.ManagedChange) string {
	if in == nil || !isSageMaker(in) {
		return ""
	}
	m := in.Managed
	region := in.Region
	switch m.Kind {
	case fleet.KindEndpoint:
		return endpointCommand(in, c, region)
	case fleet.KindNotebook:
		name := resourceName(in)
		switch c.Action {
		case fleet.ActionStopNotebook:
			return awsCLI(region, "aws", "sagemaker", "stop-notebook-instance", "--notebook-instance-name", name)
		case fleet.ActionChangeInstanceType:
			if c.InstanceType == "" {
				return ""
			}
			// SageMaker changes a notebook's type only while it is stopped.
			return awsCLI(region, "aws", "sagemaker", "stop-notebook-instance", "--notebook-instance-name", name) + " && " +
				awsCLI(region, "aws", "sagemaker", "wait", "notebook-instance-stopped", "--notebook-instance-name", name) + " && " +
				awsCLI(region, "aws", "sagemaker", "update-notebook-instance", "--notebook-instance-name", name, "--instance-type", c.InstanceType)
		}
	case fleet.KindStudioApp:
		domain, owner, appType, app, ok := studioApp(in)
		if !ok {
			return ""
		}
		switch c.Action {
		case fleet.ActionStopNotebook:
			// A Studio app stops by being deleted; its space or home
			// directory (EBS/EFS) stays. JupyterLab and Code Editor
			// apps run in a space, the classic apps under a user
			// profile.
			who := "--user-profile-name"
			if appType == "JupyterLab" || appType == "CodeEditor" {
				who = "--space-name"
			}
			return awsCLI(region, "aws", "sagemaker", "delete-app", "--domain-id", domain, who, owner, "--app-type", appType, "--app-name", app)
		case fleet.ActionIdleShutdown:
			settings := map[string]string{"JupyterLab": "JupyterLabAppSettings", "CodeEditor": "CodeEditorAppSettings"}[appType]
			if settings == "" || c.IdleShutdownMinutes <= 0 {
				return ""
			}
			json := fmt.Sprintf(`{"%s":{"AppLifecycleManagement":{"IdleSettings":{"LifecycleManagement":"ENABLED","IdleTimeoutInMinutes":%d}}}}`, settings, int(c.IdleShutdownMinutes+0.5))
			return awsCLI(region, "aws", "sagemaker", "update-domain", "--domain-id", domain, "--default-user-settings", json)
		}
	}
	return ""
}

// endpointCommand spells a change to an endpoint's production variant.
func endpointCommand(in *fleet.Instance, c fleet.ManagedChange, region string) string {
	m := in.Managed
	endpoint, variant := m.Endpoint, m.Deployment
	if endpoint == "" || variant == "" {
		if typ, name, ok := sageMakerResource(in.ID); ok && typ == "endpoint" {
			endpoint, variant, _ = strings.Cut(name, "/variant/")
		}
	}
	if endpoint == "" {
		return ""
	}
	scalable := func(minimum, maximum int) string {
		return awsCLI(region, "aws", "application-autoscaling", "register-scalable-target", "--service-namespace", "sagemaker",
			"--resource-id", "endpoint/"+endpoint+"/variant/"+variant, "--scalable-dimension", "sagemaker:variant:DesiredInstanceCount",
			"--min-capacity", strconv.Itoa(minimum), "--max-capacity", strconv.Itoa(maximum))
	}
	maxOf := func(n int) int {
		if m.MaxReplicas() != nil {
			return max(*m.MaxReplicas(), n, 1)
		}
		return max(m.CurrentReplicas(), n, 1)
	}
	switch c.Action {
	case fleet.ActionDeleteEndpoint:
		return awsCLI(region, "aws", "sagemaker", "delete-endpoint", "--endpoint-name", endpoint)
	case fleet.ActionScaleToZero:
		if variant == "" {
			return ""
		}
		return scalable(0, maxOf(1))
	case fleet.ActionSetReplicas:
		if variant == "" || c.Replicas < 0 {
			return ""
		}
		cmd := awsCLI(region, "aws", "sagemaker", "update-endpoint-weights-and-capacities", "--endpoint-name", endpoint,
			"--desired-weights-and-capacities", "VariantName="+variant+",DesiredInstanceCount="+strconv.Itoa(c.Replicas))
		if m.MinReplicas() != nil {
			cmd += " && " + scalable(c.Replicas, maxOf(c.Replicas))
		}
		return cmd
	case fleet.ActionSetMinReplicas:
		if variant == "" || c.Replicas < 0 {
			return ""
		}
		return scalable(c.Replicas, maxOf(c.Replicas))
	}
	return ""
}

// resourceName is the name in a SageMaker ARN ("notebook-instance/<name>"),
// else the instance's name.
func resourceName(in *fleet.Instance) string {
	if _, name, ok := sageMakerResource(in.ID); ok && name != "" && !strings.Contains(name, "/") {
		return name
	}
	return in.Name
}

// studioApp reads a Studio app's ARN: app/<domain>/<user or space>/<type>/<name>.
func studioApp(in *fleet.Instance) (domain, owner, appType, name string, ok bool) {
	typ, rest, isARN := sageMakerResource(in.ID)
	if !isARN || typ != "app" {
		return "", "", "", "", false
	}
	parts := strings.Split(rest, "/")
	if len(parts) != 4 {
		return "", "", "", "", false
	}
	return parts[0], parts[1], parts[2], parts[3], true
}
