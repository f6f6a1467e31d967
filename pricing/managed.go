package pricing

import (
	"strings"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// SageMakerPrefix starts every SageMaker instance type: "ml.g5.xlarge" runs
// on the hardware of EC2's g5.xlarge, and the catalog knows it by that name.
const SageMakerPrefix = "ml."

// VertexTasks are the Vertex AI price groups a priced machine belongs to:
// online/batch prediction and custom training.
var VertexTasks = []string{"prediction", "training"}

// VertexTypeName is the name the catalog knows a Vertex AI machine by (a
// managed item's priceType, per replica-hour):
// "vertex-ai/prediction/a3-highgpu-1g", or, for an N1 machine, the one
// family whose machine type does not imply its accelerators, with them in
// Vertex AI's enum spelling: "vertex-ai/training/n1-standard-8+1xNVIDIA_TESLA_T4".
// The accelerators a MachineSpec repeats for other families (a2, a3, g2, …)
// are left out, so either spelling of a spec gives one name.
func VertexTypeName(task, machineType, acceleratorType string, acceleratorCount float64) string {
	name := string(fleet.VertexAI) + "/" + task + "/" + machineType
	if acceleratorType != "" && acceleratorCount > 0 && strings.HasPrefix(strings.ToLower(machineType), "n1-") {
		name = AttachedTypeName(name, acceleratorType, acceleratorCount)
	}
	return name
}
