package gcp

import (
	"context"
	"testing"

	"cloud.google.com/go/compute/apiv1/computepb"
	"google.golang.org/protobuf/proto"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers"
	"github.com/gpufinops/gpufinops/providers/gcp/sim"
)

// A Spot VM's instanceTerminationAction says whether it can be stopped:
// STOP yes, DELETE no, and an action left out or unknown is unknown
// (protected).
func TestSpotInterruptionOfTerminationAction(t *testing.T) {
	for action, want := range map[string]fleet.SpotInterruption{
		"STOP": fleet.SpotStop, "DELETE": fleet.SpotDelete, "": "", "INSTANCE_TERMINATION_ACTION_UNSPECIFIED": "", "stop": fleet.SpotStop,
	} {
		s := &computepb.Scheduling{ProvisioningModel: proto.String("SPOT")}
		if action != "" {
			s.InstanceTerminationAction = proto.String(action)
		}
		if got := spotInterruptionOf(s); got != want {
			t.Errorf("%q: %q, want %q", action, got, want)
		}
	}
}

// TestSpotTerminationActionListed: through the simulator, a Spot VM the
// fleet says is deleted when reclaimed is listed with delete, one stopped
// with stop (Compute Engine's default), a standard VM with none.
func TestSpotTerminationActionListed(t *testing.T) {
	mk := func(id string, life fleet.Lifecycle, si fleet.SpotInterruption) fleet.Instance {
		return fleet.Instance{ID: id, Provider: fleet.GCP, Account: testProject, Region: "us-east1", Zone: "us-east1-c", InstanceType: "n1-standard-8",
			GPU: fleet.GPU{Model: "T4", Count: 1}, Lifecycle: life, SpotInterruption: si, State: fleet.Running}
	}
	f := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind, Instances: []fleet.Instance{
		mk("spot-stop", fleet.Spot, fleet.SpotStop), mk("spot-default", fleet.Spot, ""),
		mk("spot-delete", fleet.Spot, fleet.SpotDelete), mk("standard", fleet.OnDemand, ""),
	}}
	s := sim.New(f, simOptions(t, f))
	p := newProvider(t, startSim(t, s), []string{"us-east1"})
	got, err := p.ListGPUInstances(context.Background(), providers.Scope{Provider: fleet.GCP, Account: testProject, Region: "us-east1"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]fleet.SpotInterruption{"spot-stop": fleet.SpotStop, "spot-default": fleet.SpotStop, "spot-delete": fleet.SpotDelete, "standard": ""}
	if len(got) != len(want) {
		t.Fatalf("listed %d VMs, want %d", len(got), len(want))
	}
	for _, in := range got {
		if w, ok := want[in.ID]; !ok || in.SpotInterruption != w {
			t.Errorf("%s (%s): spot interruption %q, want %q", in.ID, in.Lifecycle, in.SpotInterruption, w)
		}
	}
}
