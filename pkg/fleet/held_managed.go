package fleet

// HeldCovers reports whether a commitment of kind (a Held.Kind) can cover
// the instance's usage, as the clouds' bills apply them: a virtual machine
// is covered by its cloud's VM commitments, never by a SageMaker Savings
// Plan. Managed AI items bill under their service's own usage types:
//
//   - SageMaker ml.* usage: only SageMaker Savings Plans (EC2 Reserved
//     Instances and EC2 Instance or Compute Savings Plans do not apply);
//   - Azure ML compute instances, clusters and managed online deployments
//     bill as the VMs of their size: Azure VM reservations apply ("the
//     discount is automatically applied to your Azure Machine Learning
//     managed compute"); the Azure savings plan is not documented to;
//   - Vertex AI prediction and training bill Vertex SKUs: no Compute Engine
//     commitment applies; a Workbench instance is a Compute Engine VM in
//     the project (no price type) and is covered like one.
func HeldCovers(kind string, in *Instance) bool {
	m := in.Managed
	if m == nil {
		return kind != HeldSageMakerSavingsPlan
	}
	switch m.Service {
	case SageMaker:
		return kind == HeldSageMakerSavingsPlan
	case AzureML:
		return kind == HeldReservation
	case VertexAI:
		return m.Kind == KindNotebook && m.PriceType == "" && kind != HeldSageMakerSavingsPlan
	}
	return false
}
