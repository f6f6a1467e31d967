package protect

import "github.com/gpufinops/gpufinops/pkg/fleet"

// ReasonManagedKind: an item of a managed AI service that the tool never
// stops (an endpoint, a training or processing job, a compute cluster, a
// Studio app); analyze gives the change to make instead.
const ReasonManagedKind Reason = "managed-kind"

// Stoppable reports whether a machine is one idle-stop may stop: a VM, or
// a managed AI service's notebook (SageMaker notebook instance, Vertex AI
// Workbench instance, Azure ML compute instance), which the service's own
// stop API stops.
func Stoppable(in *fleet.Instance) bool {
	return in.Managed == nil || in.Managed.Kind == fleet.KindNotebook
}

// ManagedKind is why a managed item other than a notebook is never stopped,
// with what to do instead; nil for a VM and a notebook.
func ManagedKind(in *fleet.Instance) *Finding {
	if Stoppable(in) {
		return nil
	}
	var msg string
	switch in.Managed.Kind {
	case fleet.KindEndpoint:
		msg = "endpoint: gpufinops never deletes endpoints or their deployments; see analyze for the command"
	case fleet.KindTrainingJob:
		msg = "training job: runs to completion; gpufinops never stops a job (see analyze for managed spot)"
	case fleet.KindProcessingJob:
		msg = "processing job: runs to completion; gpufinops never stops a job"
	case fleet.KindComputeCluster:
		msg = "compute cluster: the service adds and removes its nodes; set its minimum nodes (see analyze)"
	case fleet.KindStudioApp:
		msg = "studio app: gpufinops never deletes a Studio app (it ends the user's session); delete it from Studio or set the domain's idle shutdown (see analyze)"
	default:
		msg = string(in.Managed.Kind) + ": not a kind gpufinops stops"
	}
	return &Finding{Reason: ReasonManagedKind, Message: msg}
}

// ownService reports whether the owner is the managed notebook's own
// service: the service is what stops it, so it does not protect it.
func ownService(in *fleet.Instance, o *fleet.ManagedBy) bool {
	if in.Managed == nil || in.Managed.Kind != fleet.KindNotebook || o == nil {
		return false
	}
	switch in.Managed.Service {
	case fleet.SageMaker:
		return o.Kind == fleet.OwnerSageMaker
	case fleet.VertexAI:
		return o.Kind == fleet.OwnerVertexAI
	case fleet.AzureML:
		return o.Kind == fleet.OwnerAzureML
	}
	return false
}
