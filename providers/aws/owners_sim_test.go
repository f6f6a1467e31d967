package aws

import (
	"context"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers/aws/sim"
)

// Through the real SDK: owner tags become managedBy, the type's
// InstanceStorageInfo becomes instanceStoreGB and HibernationOptions
// becomes hibernation.
func TestSimOwnersInstanceStoreHibernation(t *testing.T) {
	mk := func(id, typ string, tags map[string]string) fleet.Instance {
		return fleet.Instance{ID: id, Provider: fleet.AWS, Region: "us-east-1", InstanceType: typ, Lifecycle: fleet.OnDemand, State: fleet.Running, Tags: tags}
	}
	hib := mk("i-hib", "p3.2xlarge", nil)
	hib.Hibernation = true
	f := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind, Instances: []fleet.Instance{
		mk("i-asg", "g5.xlarge", map[string]string{"aws:autoscaling:groupName": "gpu-asg"}),
		mk("i-karp", "g6.12xlarge", map[string]string{"karpenter.sh/nodepool": "gpu", "aws:ec2:fleet-id": "fleet-1"}),
		mk("i-plain", "p3.2xlarge", map[string]string{"Team": "ml"}),
		hib,
	}}
	srv, _ := scanSim(t, f, sim.Options{})
	p := scanProvider(t, srv.URL, "us-east-1")
	got, err := p.ListGPUInstances(context.Background(), scopeOf(t, p, "us-east-1"))
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]fleet.Instance{}
	for _, in := range got {
		by[in.ID] = in
	}
	if m := by["i-asg"].ManagedBy; m == nil || m.Kind != fleet.OwnerAutoScalingGroup || m.Name != "gpu-asg" {
		t.Errorf("i-asg managedBy %+v", m)
	}
	if m := by["i-karp"].ManagedBy; m == nil || m.Kind != fleet.OwnerKarpenter {
		t.Errorf("i-karp managedBy %+v", m)
	}
	if by["i-plain"].ManagedBy != nil || by["i-plain"].InstanceStoreGB != 0 || by["i-plain"].Hibernation {
		t.Errorf("i-plain %+v", by["i-plain"])
	}
	if by["i-asg"].InstanceStoreGB != 250 || by["i-karp"].InstanceStoreGB != 3760 {
		t.Errorf("instance store: g5.xlarge %v GB, g6.12xlarge %v GB", by["i-asg"].InstanceStoreGB, by["i-karp"].InstanceStoreGB)
	}
	if !by["i-hib"].Hibernation {
		t.Errorf("i-hib hibernation not read")
	}
}
