package governance

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// The tag keys gpufinops reads. Keys match case-insensitively and ignoring
// '-', '_' and spaces, so the GCP label workload_type stands for WorkloadType.
const (
	TagTeam         = "Team"
	TagProject      = "Project"
	TagEnvironment  = "Environment"
	TagWorkloadType = "WorkloadType"
	TagModelName    = "ModelName"
	TagCostCenter   = "CostCenter"
	TagAutoShutdown = "AutoShutdown"
	// TagTrainingRun names a training run when the fleet's workload has no
	// trainingRun field.
	TagTrainingRun = "TrainingRun"
)

// The WorkloadType values of the default policy.
const (
	WorkloadTraining    = "Training"
	WorkloadInference   = "Inference"
	WorkloadFineTuning  = "FineTuning"
	WorkloadDevelopment = "Development"
)

// Policy says which tags every GPU instance must carry and which values some of
// them may take.
type Policy struct {
	// RequiredTags must be on every instance, with a non-empty value. TagModelName
	// is required only for the workloads in ModelNameWorkloads.
	RequiredTags []string `json:"requiredTags" mapstructure:"required_tags"`
	// AllowedValues restricts the values of some tags. A value is checked when
	// the tag is present, whether or not it is required.
	AllowedValues []AllowedValues `json:"allowedValues" mapstructure:"allowed_values"`
	// ModelNameWorkloads are the WorkloadType values (of the tag, or mapped from
	// the fleet's workload type) for which ModelName is required.
	ModelNameWorkloads []string `json:"modelNameWorkloads" mapstructure:"model_name_workloads"`
}

// AllowedValues lists the values one tag may take.
type AllowedValues struct {
	Tag    string   `json:"tag" mapstructure:"tag"`
	Values []string `json:"values" mapstructure:"values"`
}

// DefaultPolicy requires Team, Project, Environment, WorkloadType, ModelName
// (for training, inference and fine-tuning), CostCenter and AutoShutdown, and
// restricts Environment and WorkloadType to their documented values.
func DefaultPolicy() Policy {
	return Policy{
		RequiredTags: []string{TagTeam, TagProject, TagEnvironment, TagWorkloadType, TagModelName, TagCostCenter, TagAutoShutdown},
		AllowedValues: []AllowedValues{
			{Tag: TagEnvironment, Values: []string{"Production", "Staging", "Development", "Experiment"}},
			{Tag: TagWorkloadType, Values: []string{WorkloadTraining, WorkloadInference, WorkloadFineTuning, WorkloadDevelopment}},
		},
		ModelNameWorkloads: []string{WorkloadTraining, WorkloadInference, WorkloadFineTuning},
	}
}

// Validate reports the first problem in the policy: an empty tag name or value,
// or a tag listed twice (names compare as tag keys do).
func (p Policy) Validate() error {
	seen := map[string]string{}
	for i, t := range p.RequiredTags {
		if strings.TrimSpace(t) == "" {
			return fmt.Errorf("governance policy: requiredTags[%d] is empty", i)
		}
		if prev, dup := seen[fold(t)]; dup {
			return fmt.Errorf("governance policy: requiredTags lists %q and %q, which are the same tag", prev, t)
		}
		seen[fold(t)] = t
	}
	tags := map[string]string{}
	for i, a := range p.AllowedValues {
		if strings.TrimSpace(a.Tag) == "" {
			return fmt.Errorf("governance policy: allowedValues[%d].tag is empty", i)
		}
		if prev, dup := tags[fold(a.Tag)]; dup {
			return fmt.Errorf("governance policy: allowedValues lists %q and %q, which are the same tag", prev, a.Tag)
		}
		tags[fold(a.Tag)] = a.Tag
		if len(a.Values) == 0 {
			return fmt.Errorf("governance policy: allowedValues for %s is empty; give at least one value or drop the entry", a.Tag)
		}
		for j, v := range a.Values {
			if strings.TrimSpace(v) == "" {
				return fmt.Errorf("governance policy: allowedValues for %s: values[%d] is empty", a.Tag, j)
			}
		}
	}
	for i, w := range p.ModelNameWorkloads {
		if strings.TrimSpace(w) == "" {
			return fmt.Errorf("governance policy: modelNameWorkloads[%d] is empty", i)
		}
	}
	return nil
}

// ParseTagList reads a comma-separated list of tag keys, such as the value of
// --require: "Team,Project, CostCenter". It refuses empty entries and repeats.
func ParseTagList(s string) ([]string, error) {
	var out []string
	seen := map[string]string{}
	for _, t := range strings.Split(s, ",") {
		t = strings.TrimSpace(t)
		if t == "" {
			return nil, errors.New("an empty tag name; give keys separated by commas, e.g. Team,Project")
		}
		if prev, dup := seen[fold(t)]; dup {
			if prev == t {
				return nil, fmt.Errorf("%s is listed twice", t)
			}
			return nil, fmt.Errorf("%s and %s are the same tag", prev, t)
		}
		seen[fold(t)] = t
		out = append(out, t)
	}
	return out, nil
}

// allowed returns the values a tag may take, or nil when any value goes.
func (p Policy) allowed(tag string) []string {
	for _, a := range p.AllowedValues {
		if fold(a.Tag) == fold(tag) {
			return a.Values
		}
	}
	return nil
}

// needsModelName says whether ModelName is required of an instance of class.
func (p Policy) needsModelName(class string) bool {
	for _, w := range p.ModelNameWorkloads {
		if class != "" && fold(w) == fold(class) {
			return true
		}
	}
	return false
}

// fold is the form keys and values are compared in: lower case, without '-',
// '_' and spaces. "WorkloadType", "workload_type" and "workload-type" fold
// alike, and so do "FineTuning" and "fine-tuning".
func fold(s string) string {
	s = strings.TrimSpace(s)
	// Most keys and values are folded already: return them as they are,
	// without building a string (this runs per tag per instance).
	folded := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || c == '-' || c == '_' || c == ' ' || ('A' <= c && c <= 'Z') {
			folded = false
			break
		}
	}
	if folded {
		return s
	}
	foldMu.RLock()
	f, ok := foldCache[s]
	foldMu.RUnlock()
	if ok {
		return f
	}
	f = foldSlow(s)
	foldMu.Lock()
	if len(foldCache) >= maxFolded {
		clear(foldCache)
	}
	foldCache[s] = f
	foldMu.Unlock()
	return f
}

// The folded forms of the keys and values that need building: a fleet's tag
// keys and values repeat across its instances, and fold runs per tag per
// policy key per instance. The cache is emptied when it reaches maxFolded, so
// unique values (names, e-mail addresses) cannot grow it without bound.
var (
	foldMu    sync.RWMutex
	foldCache = map[string]string{}
)

const maxFolded = 1 << 14

func foldSlow(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range strings.ToLower(s) {
		if r == '-' || r == '_' || r == ' ' {
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// tag is one policy key as found on an instance.
type tag struct {
	key, value string
	found      bool
	// exact is true when the key is spelt as the policy spells it.
	exact bool
}

// lookup finds key among tags: the exact key first, else the first key (in
// sorted order) that folds alike.
func lookup(tags map[string]string, key string) tag {
	if v, ok := tags[key]; ok {
		return tag{key: key, value: v, found: true, exact: true}
	}
	var keys []string
	want := fold(key)
	for k := range tags {
		if fold(k) == want {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return tag{}
	}
	sort.Strings(keys)
	return tag{key: keys[0], value: tags[keys[0]], found: true}
}

// canonical returns the allowed value v stands for and whether it is spelt
// exactly so; ok is false when v is not allowed.
func canonical(v string, allowed []string) (value string, exact, ok bool) {
	return allowedSet{values: allowed}.canonical(v)
}

// canonical is canonical of v among a's values, folded once.
func (a allowedSet) canonical(v string) (value string, exact, ok bool) {
	for _, x := range a.values {
		if v == x {
			return x, true, true
		}
	}
	if len(a.values) == 0 {
		return "", false, false
	}
	fv := fold(v)
	for i, x := range a.values {
		var fx string
		if a.folded != nil {
			fx = a.folded[i]
		} else {
			fx = fold(x)
		}
		if fv == fx {
			return x, false, true
		}
	}
	return "", false, false
}

// WorkloadClass maps a fleet workload type to a WorkloadType tag value:
// training and hpo are Training, fine-tuning is FineTuning, inference and
// batch are Inference, development is Development.
func WorkloadClass(t fleet.WorkloadType) string {
	switch t {
	case fleet.Training, fleet.HPO:
		return WorkloadTraining
	case fleet.FineTuning:
		return WorkloadFineTuning
	case fleet.Inference, fleet.Batch:
		return WorkloadInference
	case fleet.Development:
		return WorkloadDevelopment
	}
	return ""
}

// classOf is an item's WorkloadType: the tag's value when the policy allows it
// (in the policy's spelling), else the fleet's workload type mapped by
// WorkloadClass, else the tag's value as written when the policy does not
// restrict it; "" when nothing says.
func (p Policy) classOf(it Item) string {
	return classFrom(lookup(it.Tags, TagWorkloadType).value, it.Workload, allowedSet{values: p.allowed(TagWorkloadType)})
}

// lowerCaseLabels says whether a cloud's tags are lower-case by rule (GCP
// labels allow only lower-case letters, digits, '-' and '_'), so "team" is
// the only way to write Team there; the cloud registers it.
func lowerCaseLabels(p fleet.Provider) bool { return fleet.LowercaseTags(p) }
