package fleet

import (
	"math/bits"
	"slices"
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

// hasTag reports whether any tag's key folds to key's.
func hasTag(tags map[string]string, key string) bool {
	want := normTag(key)
	for k := range tags {
		if NormTagKey(k) == want {
			return true
		}
	}
	return false
}

// WorkloadTypeFromTags reads only the WorkloadType tag; ok is false when it
// is absent, names no known workload type, or its spellings (WorkloadType
// and workload_type) name different things.
func WorkloadTypeFromTags(tags map[string]string) (WorkloadType, bool) {
	named, unknown := workloadTypesNamed(tags)
	if unknown || bits.OnesCount(named) != 1 {
		return "", false
	}
	return WorkloadTypes[bits.TrailingZeros(named)], true
}

// WorkloadTypesFromTags returns every known workload type that some spelling
// of the WorkloadType tag names, in sorted order: what a protection rule
// reads, since any one of them may be the true one.
func WorkloadTypesFromTags(tags map[string]string) []WorkloadType {
	named, _ := workloadTypesNamed(tags)
	var out []WorkloadType
	for i, t := range WorkloadTypes {
		if named&(1<<i) != 0 {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return out
}

// workloadTypesNamed reads every spelling of the WorkloadType tag with a
// value (an empty one counts as absent): named has bit i set when one names
// WorkloadTypes[i], unknown is set when one names no known type.
func workloadTypesNamed(tags map[string]string) (named uint, unknown bool) {
	want := normTag(TagWorkloadType)
	for k, v := range tags {
		v = strings.TrimSpace(v)
		if v == "" || NormTagKey(k) != want {
			continue
		}
		if t, ok := workloadTagValues[normTag(v)]; ok {
			named |= 1 << slices.Index(WorkloadTypes, t)
		} else {
			unknown = true
		}
	}
	return named, unknown
}

// WorkloadFromTags reads a workload from the instance's tags: WorkloadType
// (required: Training, FineTuning, HPO, Inference, Development, Batch and a
// few synonyms), ModelName, ModelParams ("8B", "350M"), ModelPrecision (fp32,
// fp16, bf16, int8, int4), Checkpoints (true/false) and TrainingRun; an
// empty value counts as absent. It returns nil when WorkloadType is absent or
// unknown, a parameter, precision or checkpoints value is not valid, or two
// spellings of one key disagree.
func WorkloadFromTags(tags map[string]string) *Workload {
	t, ok := WorkloadTypeFromTags(tags)
	if !ok {
		return nil
	}
	v, ok := workloadTagValuesOf(tags)
	if !ok {
		return nil // spellings that disagree: which one holds is not known
	}
	w := &Workload{Type: t, Model: v[tagModel], TrainingRun: v[tagRun]}
	if s := v[tagParams]; s != "" {
		n, ok := parseBillions(s)
		if !ok {
			return nil
		}
		w.ParamsBillions = n
	}
	if p := strings.ToLower(v[tagPrecision]); p != "" {
		if !validPrecision(p) {
			return nil
		}
		w.Precision = p
	}
	if c := v[tagCheckpoints]; c != "" {
		b, err := strconv.ParseBool(c)
		if err != nil {
			return nil
		}
		w.Checkpoints = &b
	}
	return w
}

// The workload tags besides WorkloadType, as indexes of workloadTagKeys.
const (
	tagModel = iota
	tagParams
	tagRun
	tagPrecision
	tagCheckpoints
)

// workloadTagKeys are the folded keys of the workload tags besides WorkloadType.
var workloadTagKeys = [...]string{
	tagModel: normTag(TagModelName), tagParams: normTag(TagModelParams), tagRun: normTag(TagTrainingRun),
	tagPrecision: normTag(TagModelPrecision), tagCheckpoints: normTag(TagCheckpoints),
}

// workloadTagValuesOf reads the workload tags besides WorkloadType in one
// pass, trimmed ("" where absent); ok is false when two spellings of one key
// carry different values.
func workloadTagValuesOf(tags map[string]string) (v [len(workloadTagKeys)]string, ok bool) {
	var seen [len(workloadTagKeys)]bool
	for k, x := range tags {
		nk := NormTagKey(k)
		for i, want := range workloadTagKeys {
			if nk != want {
				continue
			}
			x = strings.TrimSpace(x)
			if seen[i] && v[i] != x {
				return v, false
			}
			v[i], seen[i] = x, true
		}
	}
	return v, true
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
// plain number of billions: digits with at most one decimal point, above
// zero and at most MaxParamsBillions. Signs, exponents, underscores, hex,
// NaN and infinities (all of which strconv.ParseFloat takes) are refused.
func parseBillions(s string) (float64, bool) {
	s = strings.TrimSpace(s)
	divisor := 1.0
	switch {
	case strings.HasSuffix(s, "B"), strings.HasSuffix(s, "b"):
		s = s[:len(s)-1]
	case strings.HasSuffix(s, "M"), strings.HasSuffix(s, "m"):
		s, divisor = s[:len(s)-1], 1000
	}
	digits, dot := 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case isDigit(c):
			digits++
		case c == '.' && !dot:
			dot = true
		default:
			return 0, false
		}
	}
	if digits == 0 {
		return 0, false
	}
	n, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, false
	}
	n /= divisor
	if !(n > 0 && n <= MaxParamsBillions) {
		return 0, false
	}
	return n, true
}

// badModelParams reports the ModelParams tag (key as written, and value)
// when a WorkloadType tag names a workload but ModelParams is not a
// parameter count, so WorkloadFromTags read no workload.
func badModelParams(tags map[string]string) (key, value string, bad bool) {
	if _, ok := WorkloadTypeFromTags(tags); !ok {
		return "", "", false
	}
	want := normTag(TagModelParams)
	for k, v := range tags {
		if NormTagKey(k) != want || strings.TrimSpace(v) == "" {
			continue
		}
		if _, ok := parseBillions(v); !ok && (!bad || k < key) { // the first key in order, on every run
			key, value, bad = k, v, true
		}
	}
	return key, value, bad
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
		if !hasTag(existing, k) {
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
