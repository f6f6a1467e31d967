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
	TagModelParams    = "ModelParams"
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

// normTag lowercases s and drops '-', '_' and ' ', so "Workload-Type",
// "workload_type" and "workloadtype" compare equal. It runs for every tag key
// of every instance, so it allocates only when it has to change s.
func normTag(s string) string {
	clean := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '-' || c == '_' || c == ' ' || c >= 0x80 || ('A' <= c && c <= 'Z') {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if c := s[i]; c != '-' && c != '_' && c != ' ' {
			b = append(b, c)
		}
	}
	return strings.ToLower(string(b))
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

// WorkloadTypeFromTags reads only the WorkloadType tag; ok is false when it
// is absent or names no known workload type.
func WorkloadTypeFromTags(tags map[string]string) (WorkloadType, bool) {
	v, ok := tagValue(tags, TagWorkloadType)
	if !ok {
		return "", false
	}
	t, ok := workloadTagValues[normTag(v)]
	return t, ok
}

// WorkloadFromTags reads a workload from the instance's tags: WorkloadType
// (required: Training, FineTuning, HPO, Inference, Development, Batch and a
// few synonyms), ModelName, ModelParams ("8B", "350M"), ModelPrecision (fp32,
// fp16, bf16, int8, int4), Checkpoints (true/false) and TrainingRun. It returns nil when WorkloadType
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
	if v, ok := tagValue(tags, TagModelParams); ok {
		n, ok := parseBillions(v)
		if !ok {
			return nil
		}
		w.ParamsBillions = n
	}
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

// parseBillions reads a parameter count such as "8B", "7.2b", "350M" or a
// plain number of billions.
func parseBillions(s string) (float64, bool) {
	s = strings.TrimSpace(strings.ToUpper(s))
	divisor := 1.0
	switch {
	case strings.HasSuffix(s, "B"):
		s = strings.TrimSuffix(s, "B")
	case strings.HasSuffix(s, "M"):
		s, divisor = strings.TrimSuffix(s, "M"), 1000
	}
	n, err := strconv.ParseFloat(s, 64)
	if err != nil || n <= 0 {
		return 0, false
	}
	return n / divisor, true
}

// workloadTagNames are the WorkloadType tag values WorkloadTags writes.
var workloadTagNames = map[WorkloadType]string{
	Training: "Training", FineTuning: "FineTuning", HPO: "HPO",
	Inference: "Inference", Development: "Development", Batch: "Batch",
}

// WorkloadTags is the inverse of WorkloadFromTags: the tags that carry w, for
// a cloud (or a simulator) that has no workload block. Keys already in
// existing are left out, so an instance's own tags win.
func WorkloadTags(w *Workload, existing map[string]string) map[string]string {
	out := map[string]string{}
	if w == nil {
		return out
	}
	add := func(k, v string) {
		if v == "" {
			return
		}
		if _, ok := tagValue(existing, k); !ok {
			out[k] = v
		}
	}
	add(TagWorkloadType, workloadTagNames[w.Type])
	add(TagModelName, w.Model)
	if w.ParamsBillions > 0 {
		add(TagModelParams, strconv.FormatFloat(w.ParamsBillions, 'f', -1, 64)+"B")
	}
	add(TagModelPrecision, w.Precision)
	if w.Checkpoints != nil {
		add(TagCheckpoints, strconv.FormatBool(*w.Checkpoints))
	}
	add(TagTrainingRun, w.TrainingRun)
	return out
}
