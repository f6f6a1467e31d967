package sim

import (
	"slices"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// Compute Engine shows the project's VMs and its Workbench instances (VMs
// of the project), never a Vertex AI deployment or job, nor another cloud's
// managed item.
func TestSplitManaged(t *testing.T) {
	f := &fleet.Fleet{Instances: []fleet.Instance{
		{ID: "vm-1", Provider: fleet.GCP},
		{ID: "projects/p/locations/us-central1/endpoints/1/deployedModels/2", Provider: fleet.GCP,
			Managed: &fleet.Managed{Service: fleet.VertexAI, Kind: fleet.KindEndpoint}},
		{ID: "projects/p/locations/us-central1-a/instances/wb", Provider: fleet.GCP,
			Managed: &fleet.Managed{Service: fleet.VertexAI, Kind: fleet.KindNotebook}},
		{ID: "projects/p/locations/us-central1/customJobs/3", Provider: fleet.GCP,
			Managed: &fleet.Managed{Service: fleet.VertexAI, Kind: fleet.KindTrainingJob}},
		{ID: "arn:aws:sagemaker:us-east-1:1:notebook-instance/nb", Provider: fleet.AWS,
			Managed: &fleet.Managed{Service: fleet.SageMaker, Kind: fleet.KindNotebook}},
	}}
	vms, vertex := splitManaged(f, "p")
	var got, gotVertex []string
	for _, in := range vms.Instances {
		if in.Provider == fleet.GCP {
			got = append(got, in.ID)
		}
	}
	for _, in := range vertex {
		gotVertex = append(gotVertex, in.ID)
	}
	if want := []string{"vm-1", "projects/p/locations/us-central1-a/instances/wb"}; !slices.Equal(got, want) {
		t.Errorf("Compute Engine serves %v, want %v", got, want)
	}
	if want := []string{"projects/p/locations/us-central1/endpoints/1/deployedModels/2", "projects/p/locations/us-central1/customJobs/3"}; !slices.Equal(gotVertex, want) {
		t.Errorf("Vertex AI serves %v, want %v", gotVertex, want)
	}
	if len(f.Instances) != 5 {
		t.Errorf("the fleet itself changed: %d items", len(f.Instances))
	}
}
