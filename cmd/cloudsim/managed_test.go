package main

import "github.com/gpufinops/gpufinops/pkg/fleet"

// simulated reports whether a simulator's state (/_sim/state) lists in: every
// VM, every SageMaker and Azure ML item, and a Vertex AI Workbench instance
// (a Compute Engine VM). Vertex AI deployments and jobs run in Google's
// tenant: the GCP simulator serves them from its Vertex AI API, not as
// instances of its state.
func simulated(in *fleet.Instance) bool {
	m := in.Managed
	return m == nil || m.Service != fleet.VertexAI || m.Kind == fleet.KindNotebook
}
