package protect

import (
	"testing"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// A managed notebook's own service does not own it; another owner does, and
// the same owner signal still owns an endpoint or a VM.
func TestOwnerOfManagedItems(t *testing.T) {
	services := map[fleet.ManagedService]fleet.OwnerKind{
		fleet.SageMaker: fleet.OwnerSageMaker, fleet.VertexAI: fleet.OwnerVertexAI, fleet.AzureML: fleet.OwnerAzureML,
	}
	for svc, own := range services {
		for _, kind := range fleet.ManagedKinds {
			for other := range services {
				in := &fleet.Instance{ID: "x", Managed: &fleet.Managed{Service: svc, Kind: kind}, ManagedBy: &fleet.ManagedBy{Kind: services[other]}}
				got := Owner(in, DefaultPolicy())
				free := kind == fleet.KindNotebook && services[other] == own
				if (got == nil) != free {
					t.Errorf("%s %s owned by %s: Owner %v", svc, kind, other, got)
				}
				vm := &fleet.Instance{ID: "x", ManagedBy: &fleet.ManagedBy{Kind: services[other]}}
				if Owner(vm, DefaultPolicy()) == nil {
					t.Errorf("a VM owned by %s: no owner", other)
				}
			}
			// A scheduler's tag owns every kind.
			in := &fleet.Instance{ID: "x", Managed: &fleet.Managed{Service: svc, Kind: kind}, ManagedBy: &fleet.ManagedBy{Kind: own},
				Tags: map[string]string{"slurm-cluster": "hpc"}}
			if kind == fleet.KindNotebook && Owner(in, DefaultPolicy()) == nil {
				t.Errorf("%s notebook with a slurm tag: no owner", svc)
			}
		}
	}
}

func TestManagedKindFinding(t *testing.T) {
	if ManagedKind(&fleet.Instance{}) != nil {
		t.Error("a VM has a managed-kind finding")
	}
	for _, kind := range fleet.ManagedKinds {
		f := ManagedKind(&fleet.Instance{Managed: &fleet.Managed{Service: fleet.SageMaker, Kind: kind}})
		if (f == nil) != (kind == fleet.KindNotebook) {
			t.Errorf("%s: finding %v", kind, f)
		}
		if f != nil && (f.Reason != ReasonManagedKind || f.Message == "") {
			t.Errorf("%s: %+v", kind, f)
		}
	}
}
