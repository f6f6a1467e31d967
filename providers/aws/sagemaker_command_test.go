package aws

import (
	"testing"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers"
)

func TestManagedCommand(t *testing.T) {
	four, eight := 4, 8
	endpoint := &fleet.Instance{ID: "arn:aws:sagemaker:us-east-1:111122223333:endpoint/rerank/variant/primary", Provider: fleet.AWS, Region: "us-east-1",
		Managed: &fleet.Managed{Service: fleet.SageMaker, Kind: fleet.KindEndpoint, Endpoint: "rerank", Deployment: "primary", Replicas: &fleet.Replicas{Current: 4, Min: &four, Max: &eight}}}
	plain := &fleet.Instance{ID: "arn:aws:sagemaker:eu-west-1:111122223333:endpoint/chat-demo/variant/AllTraffic", Provider: fleet.AWS, Region: "eu-west-1",
		Managed: &fleet.Managed{Service: fleet.SageMaker, Kind: fleet.KindEndpoint, Replicas: &fleet.Replicas{Current: 2}}}
	notebook := &fleet.Instance{ID: "arn:aws:sagemaker:ap-south-1:111122223333:notebook-instance/nb-research-a", Name: "nb-research-a", Provider: fleet.AWS, Region: "ap-south-1",
		Managed: &fleet.Managed{Service: fleet.SageMaker, Kind: fleet.KindNotebook}}
	odd := &fleet.Instance{ID: "nb 'quoted'", Name: "nb 'quoted'", Provider: fleet.AWS, Region: "us-east-1",
		Managed: &fleet.Managed{Service: fleet.SageMaker, Kind: fleet.KindNotebook}}
	lab := &fleet.Instance{ID: "arn:aws:sagemaker:us-east-1:111122223333:app/d-abc123def456/bob/JupyterLab/default", Provider: fleet.AWS, Region: "us-east-1",
		Managed: &fleet.Managed{Service: fleet.SageMaker, Kind: fleet.KindStudioApp, Workspace: "d-abc123def456"}}
	kernel := &fleet.Instance{ID: "arn:aws:sagemaker:us-east-1:111122223333:app/d-abc123def456/carol/KernelGateway/datascience-1-0-ml-g4dn-xlarge-abc", Provider: fleet.AWS, Region: "us-east-1",
		Managed: &fleet.Managed{Service: fleet.SageMaker, Kind: fleet.KindStudioApp, Workspace: "d-abc123def456"}}
	job := &fleet.Instance{ID: "arn:aws:sagemaker:us-east-1:111122223333:training-job/llama-ft-1128", Provider: fleet.AWS, Region: "us-east-1",
		Managed: &fleet.Managed{Service: fleet.SageMaker, Kind: fleet.KindTrainingJob, Replicas: &fleet.Replicas{Current: 2}}}
	vertex := &fleet.Instance{ID: "projects/p/locations/l/endpoints/1/deployedModels/2", Provider: fleet.GCP, Managed: &fleet.Managed{Service: fleet.VertexAI, Kind: fleet.KindEndpoint}}
	vm := &fleet.Instance{ID: "i-0abc", Provider: fleet.AWS, Region: "us-east-1"}

	for _, tc := range []struct {
		in   *fleet.Instance
		c    fleet.ManagedChange
		want string
	}{
		{endpoint, fleet.ManagedChange{Action: fleet.ActionDeleteEndpoint}, "aws sagemaker delete-endpoint --endpoint-name rerank --region us-east-1"},
		{plain, fleet.ManagedChange{Action: fleet.ActionDeleteEndpoint}, "aws sagemaker delete-endpoint --endpoint-name chat-demo --region eu-west-1"},
		{endpoint, fleet.ManagedChange{Action: fleet.ActionScaleToZero}, "aws application-autoscaling register-scalable-target --service-namespace sagemaker --resource-id endpoint/rerank/variant/primary --scalable-dimension sagemaker:variant:DesiredInstanceCount --min-capacity 0 --max-capacity 8 --region us-east-1"},
		{plain, fleet.ManagedChange{Action: fleet.ActionScaleToZero}, "aws application-autoscaling register-scalable-target --service-namespace sagemaker --resource-id endpoint/chat-demo/variant/AllTraffic --scalable-dimension sagemaker:variant:DesiredInstanceCount --min-capacity 0 --max-capacity 2 --region eu-west-1"},
		{plain, fleet.ManagedChange{Action: fleet.ActionSetReplicas, Replicas: 1}, "aws sagemaker update-endpoint-weights-and-capacities --endpoint-name chat-demo --desired-weights-and-capacities VariantName=AllTraffic,DesiredInstanceCount=1 --region eu-west-1"},
		{endpoint, fleet.ManagedChange{Action: fleet.ActionSetReplicas, Replicas: 2}, "aws sagemaker update-endpoint-weights-and-capacities --endpoint-name rerank --desired-weights-and-capacities VariantName=primary,DesiredInstanceCount=2 --region us-east-1 && aws application-autoscaling register-scalable-target --service-namespace sagemaker --resource-id endpoint/rerank/variant/primary --scalable-dimension sagemaker:variant:DesiredInstanceCount --min-capacity 2 --max-capacity 8 --region us-east-1"},
		{endpoint, fleet.ManagedChange{Action: fleet.ActionSetMinReplicas, Replicas: 1}, "aws application-autoscaling register-scalable-target --service-namespace sagemaker --resource-id endpoint/rerank/variant/primary --scalable-dimension sagemaker:variant:DesiredInstanceCount --min-capacity 1 --max-capacity 8 --region us-east-1"},
		{endpoint, fleet.ManagedChange{Action: fleet.ActionChangeInstanceType, InstanceType: "ml.g6.2xlarge"}, ""},
		{endpoint, fleet.ManagedChange{Action: fleet.ActionStopNotebook}, ""},
		{notebook, fleet.ManagedChange{Action: fleet.ActionStopNotebook}, "aws sagemaker stop-notebook-instance --notebook-instance-name nb-research-a --region ap-south-1"},
		{odd, fleet.ManagedChange{Action: fleet.ActionStopNotebook}, `aws sagemaker stop-notebook-instance --notebook-instance-name 'nb '\''quoted'\''' --region us-east-1`},
		{notebook, fleet.ManagedChange{Action: fleet.ActionChangeInstanceType, InstanceType: "ml.g4dn.xlarge"}, "aws sagemaker stop-notebook-instance --notebook-instance-name nb-research-a --region ap-south-1 && aws sagemaker wait notebook-instance-stopped --notebook-instance-name nb-research-a --region ap-south-1 && aws sagemaker update-notebook-instance --notebook-instance-name nb-research-a --instance-type ml.g4dn.xlarge --region ap-south-1"},
		{notebook, fleet.ManagedChange{Action: fleet.ActionIdleShutdown, IdleShutdownMinutes: 60}, ""},
		{notebook, fleet.ManagedChange{Action: fleet.ActionDeleteEndpoint}, ""},
		{lab, fleet.ManagedChange{Action: fleet.ActionStopNotebook}, "aws sagemaker delete-app --domain-id d-abc123def456 --space-name bob --app-type JupyterLab --app-name default --region us-east-1"},
		{kernel, fleet.ManagedChange{Action: fleet.ActionStopNotebook}, "aws sagemaker delete-app --domain-id d-abc123def456 --user-profile-name carol --app-type KernelGateway --app-name datascience-1-0-ml-g4dn-xlarge-abc --region us-east-1"},
		{lab, fleet.ManagedChange{Action: fleet.ActionIdleShutdown, IdleShutdownMinutes: 60}, `aws sagemaker update-domain --domain-id d-abc123def456 --default-user-settings '{"JupyterLabAppSettings":{"AppLifecycleManagement":{"IdleSettings":{"LifecycleManagement":"ENABLED","IdleTimeoutInMinutes":60}}}}' --region us-east-1`},
		{kernel, fleet.ManagedChange{Action: fleet.ActionIdleShutdown, IdleShutdownMinutes: 60}, ""},
		{job, fleet.ManagedChange{Action: fleet.ActionManagedSpot}, ""},
		{job, fleet.ManagedChange{Action: fleet.ActionStopNotebook}, ""},
		{vertex, fleet.ManagedChange{Action: fleet.ActionDeleteEndpoint}, ""},
		{vm, fleet.ManagedChange{Action: fleet.ActionStopNotebook}, ""},
	} {
		if got := ManagedCommand(tc.in, tc.c); got != tc.want {
			t.Errorf("%s %s:\n got %s\nwant %s", tc.in.ID, tc.c.Action, got, tc.want)
		}
	}
	// Registered: the engine asks through providers.ManagedCommand.
	if got := providers.ManagedCommand(notebook, fleet.ManagedChange{Action: fleet.ActionStopNotebook}); got == "" {
		t.Error("providers.ManagedCommand knows no AWS command")
	}
}

// Every quoted argument reads back as the one word it was.
func FuzzShellQuote(f *testing.F) {
	for _, s := range []string{"nb-a", "a b", "it's", `"x"`, "", "$(rm)", "a\nb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q := shellQuote(s)
		if got, ok := unquoteShell(q); !ok || got != s {
			t.Errorf("shellQuote(%q) = %s, reads back as %q (%v)", s, q, got, ok)
		}
	})
}

// unquoteShell reads one POSIX shell word made of bare safe characters and
// single-quoted parts joined by \'.
func unquoteShell(q string) (string, bool) {
	if shellSafe.MatchString(q) {
		return q, true
	}
	var out []byte
	for i := 0; i < len(q); {
		switch {
		case q[i] == '\'':
			j := i + 1
			for j < len(q) && q[j] != '\'' {
				j++
			}
			if j == len(q) {
				return "", false
			}
			out = append(out, q[i+1:j]...)
			i = j + 1
		case q[i] == '\\' && i+1 < len(q):
			out = append(out, q[i+1])
			i += 2
		default:
			return "", false
		}
	}
	return string(out), true
}
