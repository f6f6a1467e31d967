package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers/file"
)

// noCloudGPUMetric reports whether in's cloud publishes no GPU metric for it
// (SageMaker notebooks and Studio apps: docs/managed-ai.md#sagemaker-aws),
// so a scan through the simulators has no utilization for it where a file
// may carry one from Prometheus or nvidia-smi.
func noCloudGPUMetric(in *fleet.Instance) bool {
	m := in.Managed
	return m != nil && m.Service == fleet.SageMaker && (m.Kind == fleet.KindNotebook || m.Kind == fleet.KindStudioApp)
}

// asScanned is f as a scan of the simulators reads it: every item, without
// the utilization no cloud metric gives (noCloudGPUMetric).
func asScanned(f *fleet.Fleet) *fleet.Fleet {
	out := *f
	out.Instances = make([]fleet.Instance, len(f.Instances))
	for i, in := range f.Instances {
		if noCloudGPUMetric(&in) {
			in.Utilization = nil
		}
		out.Instances[i] = in
	}
	return &out
}

// scannedDemoFile is the demo as a scan reads it, as a fleet file: the
// file side of a comparison with a scan of every cloud.
func scannedDemoFile(t *testing.T) string {
	t.Helper()
	demo, err := file.Demo()
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := fleet.Write(&b, asScanned(demo), fleet.FormatYAML); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "demo-scanned.yaml")
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
