package main

import "github.com/gpufinops/gpufinops/pkg/fleet"

// simulated reports whether the registered simulators serve in: every VM,
// an Azure ML item (the Azure simulator serves Azure ML) and a Vertex AI
// Workbench instance (a Compute Engine VM). SageMaker items and Vertex AI
// deployments and jobs wait for their simulators, written on other branches
// of issue 35; EC2 and Compute Engine do not show them.
func simulated(in *fleet.Instance) bool {
	m := in.Managed
	return m == nil || m.Service == fleet.AzureML || (m.Service == fleet.VertexAI && m.Kind == fleet.KindNotebook)
}
