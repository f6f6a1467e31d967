package pricing

import (
	"testing"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// TestQueryMatchesService: an empty Service matches virtual machines only,
// whatever the other fields; a Service matches that service's types only.
func TestQueryMatchesService(t *testing.T) {
	vm := Offer{Type: InstanceType{Provider: fleet.AWS, Name: "g5.xlarge", GPUModel: "A10G", GPUMemoryGiB: 24}, Region: "us-east-1"}
	ml := Offer{Type: InstanceType{Provider: fleet.AWS, Name: "ml.g5.xlarge", GPUModel: "A10G", GPUMemoryGiB: 24, Service: fleet.SageMaker}, Region: "us-east-1"}
	vx := Offer{Type: InstanceType{Provider: fleet.GCP, Name: "vertex-ai/prediction/a3-highgpu-1g", GPUModel: "H100", GPUMemoryGiB: 80, Service: fleet.VertexAI}, Region: "us-central1"}
	for _, tc := range []struct {
		q    Query
		want [3]bool // vm, ml, vx
	}{
		{Query{}, [3]bool{true, false, false}},
		{Query{Provider: fleet.AWS, Region: "US-EAST-1", GPUModel: "a10g"}, [3]bool{true, false, false}},
		{Query{InstanceType: "ML.G5.XLARGE"}, [3]bool{false, false, false}},
		{Query{Service: fleet.SageMaker}, [3]bool{false, true, false}},
		{Query{Service: fleet.SageMaker, InstanceType: "ml.G5.xlarge", MinGPUMemoryGiB: 24}, [3]bool{false, true, false}},
		{Query{Service: fleet.SageMaker, Provider: fleet.GCP}, [3]bool{false, false, false}},
		{Query{Service: fleet.VertexAI, GPUModel: "h100"}, [3]bool{false, false, true}},
		{Query{Service: fleet.AzureML}, [3]bool{false, false, false}},
	} {
		for i, o := range []Offer{vm, ml, vx} {
			if got := tc.q.Matches(o); got != tc.want[i] {
				t.Errorf("%+v matches %s = %v, want %v", tc.q, o.Type.Name, got, tc.want[i])
			}
		}
	}
}

func TestVertexTypeNameParses(t *testing.T) {
	name := VertexTypeName("prediction", "n1-standard-8", "NVIDIA_TESLA_T4", 2)
	host, accel, n, ok := ParseAttachedTypeName(name)
	if !ok || host != "vertex-ai/prediction/n1-standard-8" || accel != "NVIDIA_TESLA_T4" || n != 2 {
		t.Errorf("ParseAttachedTypeName(%q) = %q, %q, %v, %v", name, host, accel, n, ok)
	}
	for _, tc := range []struct {
		machine, accel string
		n              float64
		want           string
	}{
		{"a2-highgpu-1g", "NVIDIA_TESLA_A100", 1, "vertex-ai/training/a2-highgpu-1g"},
		{"a2-highgpu-1g", "", 0, "vertex-ai/training/a2-highgpu-1g"},
		{"g2-standard-8", "NVIDIA_L4", 1, "vertex-ai/training/g2-standard-8"},
		{"N1-STANDARD-4", "NVIDIA_TESLA_V100", 1, "vertex-ai/training/N1-STANDARD-4+1xNVIDIA_TESLA_V100"},
		{"n1-standard-4", "", 0, "vertex-ai/training/n1-standard-4"},
		{"n1-standard-4", "NVIDIA_TESLA_T4", 0, "vertex-ai/training/n1-standard-4"},
	} {
		if got := VertexTypeName("training", tc.machine, tc.accel, tc.n); got != tc.want {
			t.Errorf("VertexTypeName(training, %q, %q, %v) = %q, want %q", tc.machine, tc.accel, tc.n, got, tc.want)
		}
	}
}
