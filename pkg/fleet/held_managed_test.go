package fleet

import "testing"

func TestHeldCovers(t *testing.T) {
	vm := &Instance{Provider: AWS, InstanceType: "g5.xlarge"}
	managed := func(p Provider, s ManagedService, k ManagedKind, priceType string) *Instance {
		return &Instance{Provider: p, Managed: &Managed{Service: s, Kind: k, PriceType: priceType}}
	}
	sm := managed(AWS, SageMaker, KindEndpoint, "")
	smNotebook := managed(AWS, SageMaker, KindNotebook, "")
	aml := managed(Azure, AzureML, KindEndpoint, "")
	amlCluster := managed(Azure, AzureML, KindComputeCluster, "")
	vxEndpoint := managed(GCP, VertexAI, KindEndpoint, "vertex-ai/prediction/a2-highgpu-1g")
	vxJob := managed(GCP, VertexAI, KindTrainingJob, "vertex-ai/training/a2-highgpu-8g")
	workbench := managed(GCP, VertexAI, KindNotebook, "")
	for _, c := range []struct {
		name string
		in   *Instance
		kind string
		want bool
	}{
		{"VM by an RI", vm, HeldStandardRI, true},
		{"VM by a compute SP", vm, HeldComputeSavingsPlan, true},
		{"VM never by a SageMaker SP", vm, HeldSageMakerSavingsPlan, false},
		{"SageMaker endpoint by a SageMaker SP", sm, HeldSageMakerSavingsPlan, true},
		{"SageMaker notebook by a SageMaker SP", smNotebook, HeldSageMakerSavingsPlan, true},
		{"SageMaker never by a compute SP", sm, HeldComputeSavingsPlan, false},
		{"SageMaker never by an EC2 SP", sm, HeldEC2SavingsPlan, false},
		{"SageMaker never by an RI", sm, HeldStandardRI, false},
		{"SageMaker never by a convertible RI", smNotebook, HeldConvertibleRI, false},
		{"Azure ML deployment by a VM reservation", aml, HeldReservation, true},
		{"Azure ML cluster by a VM reservation", amlCluster, HeldReservation, true},
		{"Azure ML not by the savings plan", aml, HeldSavingsPlan, false},
		{"Azure ML not by a capacity reservation", amlCluster, HeldCapacityReservation, false},
		{"Vertex endpoint never by a resource CUD", vxEndpoint, HeldResourceCUD, false},
		{"Vertex job never by a spend CUD", vxJob, HeldSpendCUD, false},
		{"Workbench VM by a resource CUD", workbench, HeldResourceCUD, true},
		{"Workbench VM by a spend CUD", workbench, HeldSpendCUD, true},
		{"Workbench never by a SageMaker SP", workbench, HeldSageMakerSavingsPlan, false},
	} {
		if got := HeldCovers(c.kind, c.in); got != c.want {
			t.Errorf("%s: HeldCovers(%s) = %v, want %v", c.name, c.kind, got, c.want)
		}
	}
	// Every kind a cloud sells: a SageMaker item is covered by exactly one.
	n := 0
	for _, k := range HeldKinds[AWS] {
		if HeldCovers(k, sm) {
			n++
		}
	}
	if n != 1 {
		t.Errorf("a SageMaker item is covered by %d AWS kinds, want 1", n)
	}
}
