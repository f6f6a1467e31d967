package fleet

import (
	"reflect"
	"testing"
)

func TestWorkloadFromTags(t *testing.T) {
	yes := true
	for _, tc := range []struct {
		name string
		tags map[string]string
		want *Workload
	}{
		{"none", map[string]string{"Team": "ml"}, nil},
		{"training with everything", map[string]string{"WorkloadType": "Training", "ModelName": "llama-3.1-8b", "ModelPrecision": "BF16", "Checkpoints": "true", "TrainingRun": "run-1"},
			&Workload{Type: Training, Model: "llama-3.1-8b", Precision: "bf16", Checkpoints: &yes, TrainingRun: "run-1"}},
		{"GCP labels", map[string]string{"workload_type": "fine-tuning", "model_name": "mistral-7b"}, &Workload{Type: FineTuning, Model: "mistral-7b"}},
		{"synonyms", map[string]string{"workloadtype": "HPO"}, &Workload{Type: HPO}},
		{"unknown type", map[string]string{"WorkloadType": "Gaming"}, nil},
		{"bad precision", map[string]string{"WorkloadType": "Inference", "ModelPrecision": "fp64"}, nil},
		{"bad checkpoints", map[string]string{"WorkloadType": "Training", "Checkpoints": "sometimes"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := WorkloadFromTags(tc.tags); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestParseReadsWorkloadFromTags(t *testing.T) {
	f, err := Parse("f.yaml", []byte(`apiVersion: gpufinops/v1
kind: Fleet
instances:
  - {id: a, provider: aws, region: us-east-1, instanceType: g5.xlarge, tags: {WorkloadType: Inference, ModelName: mistral-7b}}
  - {id: b, provider: aws, region: us-east-1, instanceType: g5.xlarge, tags: {WorkloadType: Inference}, workload: {type: batch}}
`))
	if err != nil {
		t.Fatal(err)
	}
	if w := f.Instances[0].Workload; w == nil || w.Type != Inference || w.Model != "mistral-7b" {
		t.Errorf("from tags: %+v", w)
	}
	if w := f.Instances[1].Workload; w.Type != Batch {
		t.Errorf("a workload block wins over tags: %+v", w)
	}
}

func TestWorkloadTagsRoundTrip(t *testing.T) {
	no := false
	w := &Workload{Type: FineTuning, Model: "llama-3.1-8b", ParamsBillions: 8, Precision: "bf16", Checkpoints: &no, TrainingRun: "r"}
	tags := WorkloadTags(w, nil)
	if got := WorkloadFromTags(tags); !reflect.DeepEqual(got, w) {
		t.Errorf("round trip: %+v from %v", got, tags)
	}
	if got := WorkloadTags(w, map[string]string{"workload_type": "Training"}); got["WorkloadType"] != "" {
		t.Errorf("an existing tag must win: %v", got)
	}
	if n, ok := parseBillions("350M"); !ok || n != 0.35 {
		t.Errorf("350M = %v %v", n, ok)
	}
}
