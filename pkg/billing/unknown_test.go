package billing

import (
	"context"
	"strings"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// A GPU type whose count nobody knows (GPUs says yes with a count of 0, as
// CatalogGPUs does for a registered GPU family the catalog lacks) is
// counted, never dropped, with its GPU count unknown and a warning naming
// it.
func TestUnknownGPUCountIsCounted(t *testing.T) {
	gpus := func(p fleet.Provider, typ string) (float64, bool) {
		switch {
		case p == fleet.AWS && typ == "g5.4xlarge":
			return 1, true
		case p == fleet.AWS && typ == "g3.4xlarge":
			return 0, true
		}
		return 0, false
	}
	s, err := Read(context.Background(), sample, Options{GPUs: gpus})
	if err != nil {
		t.Fatal(err)
	}
	byType := map[string]int{}
	for _, r := range s.Resources {
		byType[r.InstanceType]++
		if r.InstanceType == "g3.4xlarge" && r.GPUCount != 0 {
			t.Errorf("%s: gpuCount %v, want unknown (0)", r.ResourceID, r.GPUCount)
		}
	}
	if byType["g5.4xlarge"] != 8 || byType["g3.4xlarge"] != 2 || len(s.Resources) != 10 {
		t.Errorf("resources by type %v, want 8 g5.4xlarge and 2 g3.4xlarge", byType)
	}
	if len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0], "aws g3.4xlarge") || !strings.Contains(s.Warnings[0], "2 resources") {
		t.Errorf("warnings %q", s.Warnings)
	}
	if d := NewDocument(sample, s); len(d.Warnings) != 1 {
		t.Errorf("document warnings %q", d.Warnings)
	}
}
