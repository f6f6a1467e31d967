package idlestop

import (
	"errors"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers/fake"
)

// Through the command: an idle SageMaker notebook is stopped with the VMs;
// an idle endpoint, a Studio app, a training job beside it are listed with
// their kind's reason and never reach the cloud's stop.
func TestIdleStopManagedItems(t *testing.T) {
	f := recentFleet()
	idle := f.Instances[0] // idle-1
	add := func(id, typ string, kind fleet.ManagedKind) {
		in := idle
		in.ID, in.Name, in.InstanceType = id, id, typ
		in.Tags = map[string]string{"team": "ml"}
		in.Managed = &fleet.Managed{Service: fleet.SageMaker, Kind: kind, Replicas: fleet.Replicas{Current: 1}}
		f.Instances = append(f.Instances, in)
	}
	arn := "arn:aws:sagemaker:us-east-1:111122223333:"
	add(arn+"notebook-instance/nb", "ml.g5.xlarge", fleet.KindNotebook)
	add(arn+"endpoint/chat/variant/AllTraffic", "ml.g5.xlarge", fleet.KindEndpoint)
	add(arn+"app/d-1/bob/JupyterLab/default", "ml.g5.xlarge", fleet.KindStudioApp)
	add(arn+"training-job/ft", "ml.g5.xlarge", fleet.KindTrainingJob)
	p := fake.New(f, fake.Options{Regions: []string{"us-east-1", "us-west-2"}})
	r := runFake(t, p, "--execute")
	// Until the catalog prices ml.* types, they are an unknown-type warning
	// (exit 3), never a reason to stop or keep.
	var pe *cmdutil.PartialError
	if r.err != nil && !errors.As(r.err, &pe) {
		t.Fatal(r.err)
	}
	if pe != nil {
		for _, f := range pe.Failures {
			t.Logf("warning: %v", f)
		}
	}
	want := map[string]string{
		arn + "notebook-instance/nb":             "stop/idle",
		arn + "endpoint/chat/variant/AllTraffic": "skip/managed-kind",
		arn + "app/d-1/bob/JupyterLab/default":   "skip/managed-kind",
		arn + "training-job/ft":                  "skip/managed-kind",
		"idle-1":                                 "stop/idle",
	}
	for id, w := range want {
		if r.decisions[id] != w {
			t.Errorf("%s: %q, want %q", id, r.decisions[id], w)
		}
		if stopped := p.State(id) == fleet.Stopped; stopped != (w == "stop/idle") {
			t.Errorf("%s is %s after --execute", id, p.State(id))
		}
	}
}
