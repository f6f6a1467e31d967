package file

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

func TestDemoMatchesTestdata(t *testing.T) {
	b, err := os.ReadFile("../../testdata/fleets/demo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, demoYAML) {
		t.Error("testdata/fleets/demo.yaml differs from providers/file/demo.yaml; copy the embedded one over it")
	}
}

func TestDemoFreshCopy(t *testing.T) {
	a, err := Demo()
	if err != nil {
		t.Fatal(err)
	}
	a.Instances[0].ID = "changed"
	b, err := Demo()
	if err != nil {
		t.Fatal(err)
	}
	if b.Instances[0].ID != "train-p4d-1" {
		t.Error("Demo returned a shared fleet")
	}
}

// TestDemoFleet pins the facts other packages' tests and the docs rely on.
func TestDemoFleet(t *testing.T) {
	f, err := Demo()
	if err != nil {
		t.Fatal(err)
	}
	if f.Metadata.Name != "demo-nlp-platform" {
		t.Errorf("name %q", f.Metadata.Name)
	}
	if want := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC); f.Metadata.GeneratedAt == nil || !f.Metadata.GeneratedAt.Equal(want) {
		t.Errorf("generatedAt %v", f.Metadata.GeneratedAt)
	}
	window := fleet.TimeRange{Start: time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC), End: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)}

	type row struct {
		provider fleet.Provider
		account  string
		region   string
		typ      string
		workload fleet.WorkloadType
		monthly  float64
	}
	const aws = "111122223333"
	want := map[string]row{
		"train-p4d-1":    {fleet.AWS, aws, "us-east-1", "p4d.24xlarge", fleet.Training, 60 * 730 / 168.0},
		"train-p4d-2":    {fleet.AWS, aws, "us-east-1", "p4d.24xlarge", fleet.Training, 60 * 730 / 168.0},
		"ft-g5-1":        {fleet.AWS, aws, "us-east-1", "g5.4xlarge", fleet.FineTuning, 40 * 730 / 168.0},
		"ft-g5-2":        {fleet.AWS, aws, "us-east-1", "g5.4xlarge", fleet.FineTuning, 40 * 730 / 168.0},
		"nd-h100-eval":   {fleet.Azure, "0b1f6471-1bf0-4dda-aec3-cb9272f09590", "eastus", "Standard_ND96isr_H100_v5", fleet.Batch, 730},
		"gcp-a100-train": {fleet.GCP, "ml-platform-prod", "us-central1", "a2-highgpu-1g", fleet.Training, 730},
		"gcp-l4-infer":   {fleet.GCP, "ml-platform-prod", "us-central1", "g2-standard-8", fleet.Inference, 730},
		// Managed AI items: monthly hours count every replica.
		sagemakerEndpoint: {fleet.AWS, aws, "us-east-1", "ml.g5.12xlarge", "", 2 * 730},
		sagemakerNotebook: {fleet.AWS, aws, "us-east-1", "ml.g5.xlarge", fleet.Development, 730},
		azureMLCompute:    {fleet.Azure, "0b1f6471-1bf0-4dda-aec3-cb9272f09590", "eastus", "Standard_NC24ads_A100_v4", "", 730},
		vertexDeployment:  {fleet.GCP, "ml-platform-prod", "us-central1", "a3-highgpu-1g", "", 3 * 730},
	}
	// The service, kind and replicas each managed item is read with.
	wantManaged := map[string]string{
		sagemakerEndpoint: "sagemaker endpoint 2",
		sagemakerNotebook: "sagemaker notebook 1",
		azureMLCompute:    "azure-ml notebook 1",
		vertexDeployment:  "vertex-ai endpoint 3",
	}
	for i := 1; i <= 4; i++ {
		want["infer-g5-"+string(rune('0'+i))] = row{fleet.AWS, aws, "us-east-1", "g5.2xlarge", fleet.Inference, 730}
		want["hpo-g5-"+string(rune('0'+i))] = row{fleet.AWS, aws, "us-east-1", "g5.xlarge", fleet.HPO, 30 * 730 / 168.0}
	}
	for i := 1; i <= 8; i++ {
		want["nb-g4dn-"+string(rune('0'+i))] = row{fleet.AWS, aws, "us-east-1", "g4dn.xlarge", fleet.Development, 730}
	}
	if len(f.Instances) != len(want) {
		t.Errorf("%d instances, want %d", len(f.Instances), len(want))
	}
	untagged := 0
	for _, in := range f.Instances {
		w, ok := want[in.ID]
		if !ok {
			t.Errorf("unexpected instance %s", in.ID)
			continue
		}
		got := row{in.Provider, in.Account, in.Region, in.InstanceType, "", in.MonthlyHours()}
		if in.Workload != nil {
			got.workload = in.Workload.Type
		}
		if diff := cmp.Diff(w, got, cmp.AllowUnexported(row{})); diff != "" {
			t.Errorf("%s (-want +got):\n%s", in.ID, diff)
		}
		if m, ok := wantManaged[in.ID]; ok != in.IsManaged() {
			t.Errorf("%s: managed %v, want %v", in.ID, in.IsManaged(), ok)
		} else if ok {
			if got := fmt.Sprintf("%s %s %d", in.Managed.Service, in.Managed.Kind, in.Managed.CurrentReplicas()); got != m {
				t.Errorf("%s: managed %q, want %q", in.ID, got, m)
			}
		}
		if in.Lifecycle != fleet.OnDemand || in.State != fleet.Running {
			t.Errorf("%s: %s %s", in.ID, in.Lifecycle, in.State)
		}
		u := in.Utilization
		if u == nil || u.Window == nil || *u.Window != window {
			t.Errorf("%s: utilization window is not the demo week", in.ID)
			continue
		}
		if len(in.Tags) == 0 {
			untagged++
		}
		s := u.Summarize()
		if strings.HasPrefix(in.ID, "nb-") {
			if len(u.Samples) != 168 {
				t.Errorf("%s: %d samples, want 168", in.ID, len(u.Samples))
			}
			if in.ID == "nb-g4dn-8" && s.GPU.Max > 4 {
				t.Errorf("%s: idle notebook peaks at %v%% GPU", in.ID, s.GPU.Max)
			}
			// Light notebooks: busy (≥ 15 %) in office hours, light enough to share a GPU (< 40 %).
			if in.ID != "nb-g4dn-8" && (s.GPU.Avg < 3 || s.GPU.Avg > 10 || s.GPU.P95 < 15 || s.GPU.P95 >= 40) {
				t.Errorf("%s: GPU %+v is not a light weekday-office-hours notebook", in.ID, *s.GPU)
			}
		}
		if strings.HasPrefix(in.ID, "infer-") && (s.GPU.P95 >= 50 || s.GPUMemory.P95 <= 40 || s.CPU.P95 >= 30 || s.Memory.P95 >= 40) {
			t.Errorf("%s: %+v does not fit the rightsizing example", in.ID, s)
		}
	}
	if untagged < 2 {
		t.Errorf("%d untagged instances; governance needs at least 2", untagged)
	}
}

// The demo's managed AI items, by their IDs.
const (
	sagemakerEndpoint = "arn:aws:sagemaker:us-east-1:111122223333:endpoint/summarizer-demo/variant/AllTraffic"
	sagemakerNotebook = "arn:aws:sagemaker:us-east-1:111122223333:notebook-instance/nb-dana"
	azureMLCompute    = "/subscriptions/0b1f6471-1bf0-4dda-aec3-cb9272f09590/resourceGroups/nlp-ml/providers/Microsoft.MachineLearningServices/workspaces/ws-nlp/computes/ci-erin"
	vertexDeployment  = "projects/ml-platform-prod/locations/us-central1/endpoints/6120004417/deployedModels/3301"
)

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "fleet.yaml")
	if err := os.WriteFile(path, demoYAML, 0o644); err != nil {
		t.Fatal(err)
	}
	demo, err := Demo()
	if err != nil {
		t.Fatal(err)
	}
	got, err := Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !cmp.Equal(demo, got) {
		t.Error("loading the demo file differs from Demo()")
	}
	got, err = Load("-", bytes.NewReader(demoYAML))
	if err != nil {
		t.Fatal(err)
	}
	if !cmp.Equal(demo, got) {
		t.Error("reading the demo from stdin differs from Demo()")
	}
}

func TestLoadErrors(t *testing.T) {
	t.Chdir(t.TempDir())
	if err := os.WriteFile("bad.yaml", []byte("apiVersion: v1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load("fleet.yaml", nil)
	if err == nil || err.Error() != "open fleet.yaml: no such file or directory" || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	_, err = Load("bad.yaml", nil)
	if err == nil || err.Error() != `bad.yaml: apiVersion: found "v1", want "gpufinops/v1"` {
		t.Errorf("bad file: %v", err)
	}
	_, err = Load("-", strings.NewReader("kind: Fleet\n"))
	if err == nil || err.Error() != `<stdin>: apiVersion: missing; want "gpufinops/v1"` {
		t.Errorf("bad stdin: %v", err)
	}
	_, err = Load("-", iotest.ErrReader(errors.New("broken pipe")))
	if err == nil || err.Error() != "reading the fleet from standard input: broken pipe" {
		t.Errorf("stdin read error: %v", err)
	}
	_, err = Load("-", nil)
	if err == nil || err.Error() != "no standard input to read the fleet from" {
		t.Errorf("no stdin: %v", err)
	}
}
