package fleet

import (
	"strconv"
	"strings"
)

// The tags that describe a workload where the snapshot has no workload block
// (clouds carry no such block: an adapter reads these tags). Keys and the
// WorkloadType value match ignoring case, '-', '_' and spaces, so GCP's
// lower-case labels (workload_type, model_name) count too.
const (
	TagWorkloadType   = "WorkloadType"
	TagModelName      = "ModelName"
	TagModelPrecision = "ModelPrecision"
	TagCheckpoints    = "Checkpoints"
	TagTrainingRun    = "TrainingRun"
)

// workloadTagValues maps normalised WorkloadType tag values to workload types.
var workloadTagValues = map[string]WorkloadType{
	"training": Training, "train": Training, "pretraining": Training,
	"finetuning": FineTuning, "finetune": FineTuning, "lora": FineTuning,
	"hpo": HPO, "hyperparametersearch": HPO, "hyperparametertuning": HPO,
	"inference": Inference, "serving": Inference,
	"development": Development, "dev": Development, "notebook": Development,
	"batch": Batch,
}

func normTag(s string) string {
	return strings.ToLower(strings.NewReplacer("-", "", "_", "", " ", "").Replace(s))
}

func tagValue(tags map[string]string, key string) (string, bool) {
	want := normTag(key)
	for k, v := range tags {
		if normTag(k) == want {
			return strings.TrimSpace(v), true
		}
	}
	return "", false
}

// WorkloadFromTags reads a workload from the instance's tags: WorkloadType
// (required: Training, FineTuning, HPO, Inference, Development, Batch and a
// few synonyms), ModelName, ModelPrecision (fp32, fp16, bf16, int8, int4),
// Checkpoints (true/false) and TrainingRun. It returns nil when WorkloadType
// is absent or unknown, or a precision or checkpoints value is not valid.
func WorkloadFromTags(tags map[string]string) *Workload {
	v, ok := tagValue(tags, TagWorkloadType)
	if !ok {
		return nil
	}
	t, ok := workloadTagValues[normTag(v)]
	if !ok {
		return nil
	}
	w := &Workload{Type: t}
	w.Model, _ = tagValue(tags, TagModelName)
	w.TrainingRun, _ = tagValue(tags, TagTrainingRun)
	if p, ok := tagValue(tags, TagModelPrecision); ok {
		p = strings.ToLower(p)
		if !validPrecision(p) {
			return nil
		}
		w.Precision = p
	}
	if c, ok := tagValue(tags, TagCheckpoints); ok {
		b, err := strconv.ParseBool(c)
		if err != nil {
			return nil
		}
		w.Checkpoints = &b
	}
	return w
}

func validPrecision(p string) bool {
	for _, q := range Precisions {
		if q == p {
			return true
		}
	}
	return false
}
