// Package protect is the one protection decision gpufinops has: whether a
// machine must be left running, and why. idle-stop consults it before every
// stop and analyze before every stop, schedule and deallocate advice, so
// the two commands cannot disagree about a machine. Its signals are data
// (Rules): exemption phrases, production keys and values, inference roles
// and serving stacks, multi-host group keys and the controllers that own
// machines, per cloud, matched on normalised words (Tokens), never on exact
// spellings. When a signal is ambiguous, the machine is protected and the
// message says so.
package protect

import (
	"slices"
)

// Reason is a stable, machine-readable code for a protection.
type Reason string

// The protections, in the order Check tries them.
const (
	ReasonManaged    Reason = "managed"
	ReasonExempt     Reason = "exempt"
	ReasonOptedOut   Reason = "opted-out"
	ReasonNotOptedIn Reason = "not-opted-in"
	ReasonProduction Reason = "production"
	ReasonSpot       Reason = "spot-not-stoppable"
	ReasonInference  Reason = "inference"
	// ReasonGPUMemoryHeld: a process holds GPU memory (a loaded model).
	ReasonGPUMemoryHeld Reason = "gpu-memory-held"
	// ReasonCPUBusy: the host CPU works.
	ReasonCPUBusy Reason = "cpu-busy"
	// ReasonPartialGPUs: some GPUs report no data; missing data is not idle.
	ReasonPartialGPUs Reason = "partial-gpus"
	// ReasonMultiHost: a member of a multi-host job whose other hosts work.
	ReasonMultiHost Reason = "multi-host"
)

// Policy is what protects a machine. idle-stop's configuration (idle_stop.*)
// fills it for both commands (see idlestop.Policy.Protection).
type Policy struct {
	// ExemptTag exempts a machine carrying it with any value but a false
	// one; ExemptValue is the value the docs use.
	ExemptTag   string
	ExemptValue string
	// IncludeProduction lets production machines be stopped.
	IncludeProduction bool
	// ProductionTags are the keys whose any value not in
	// NonProductionValues protects; ProductionValues ('*' wildcards) are
	// the values that mean production under those keys and under the
	// production words of Rules.
	ProductionTags      []string
	ProductionValues    []string
	NonProductionValues []string
	// RequireOptIn protects every machine without an auto-shutdown switch
	// set to a true value.
	RequireOptIn bool
	// ProtectInference protects inference and serving machines.
	ProtectInference bool
	// GPUPercent, GPUMemoryPercent and CPUPercent are the use thresholds:
	// a GPU at or above GPUPercent, GPU memory above GPUMemoryPercent, a
	// host CPU p95 above CPUPercent mean the machine (or a multi-host
	// peer) works.
	GPUPercent, GPUMemoryPercent, CPUPercent float64
	// Rules are the signals; the zero value means DefaultRules.
	Rules Rules
}

// Rules are the words and tags that signal protection, per class.
type Rules struct {
	// ExemptPhrases in a key (any non-false value) or a value exempt a
	// machine: do-not-stop, keep-running, exempt, always-on, …
	ExemptPhrases []string
	// SwitchPhrases name the auto-stop switch keys (auto-shutdown,
	// auto-stop, idle-shutdown): a true value allows a stop, any other
	// value protects.
	SwitchPhrases []string
	// ProductionWords in a key make it an environment key (env, stage,
	// tier, deployment, lifecycle): a production value under it protects.
	ProductionWords []string
	// InferenceKeyWords name a role key (role, service, app, component):
	// a value holding one of InferenceValueWords (serving, inference,
	// endpoint, api) protects as inference.
	InferenceKeyWords   []string
	InferenceValueWords []string
	// ServingStacks anywhere in a key or value protect as inference.
	ServingStacks []string
	// GroupKeys are whole keys (normalised) whose value names a multi-host
	// job: members sharing a value are one group.
	GroupKeys []string
	// Controllers are owner signals beyond the clouds' owner tags.
	Controllers []Controller
}

// DefaultRules are the signals recognised by default.
func DefaultRules() Rules {
	return Rules{
		ExemptPhrases: []string{
			"do not stop", "dont stop", "no stop", "never stop", "prevent stop", "stop protection",
			"do not shutdown", "dont shutdown", "no shutdown", "never shutdown", "prevent shutdown", "shutdown protection",
			"no auto shutdown", "no autostop", "no auto stop", "no idle stop",
			"keep running", "keep alive", "keep on", "always on", "always running", "24x7",
			"exempt", "exemption", "protected", "do not touch",
		},
		SwitchPhrases:       []string{"shutdown", "auto stop", "autostop", "idle stop", "auto off", "auto power off", "stop policy"},
		ProductionWords:     []string{"env", "environment", "environ", "stage", "tier", "deployment", "deploy", "lifecycle", "landscape", "ring"},
		InferenceKeyWords:   []string{"role", "service", "svc", "app", "application", "component", "workload", "purpose", "function", "usage", "type", "stack", "framework", "runtime", "engine"},
		InferenceValueWords: []string{"serving", "serve", "inference", "infer", "endpoint", "endpoints", "api", "predictor", "prediction", "predict", "online"},
		ServingStacks: []string{
			"triton", "vllm", "tgi", "text generation inference", "kserve", "seldon", "ray serve", "torchserve",
			"tensorrt llm", "trtllm", "sglang", "ollama", "bentoml", "tf serving", "tensorflow serving", "mlserver",
			"lmdeploy", "llama cpp", "openllm", "lorax", "nim", "infinity emb", "deepspeed mii",
			"model server", "modelmesh", "llm server",
		},
		GroupKeys: []string{
			"job", "job name", "job id", "training job", "training run", "run id", "mpi job", "pytorch job",
			"cluster", "cluster name", "cluster id", "ray cluster", "ray cluster name", "slurm cluster", "slurm cluster name",
			"slurm job", "slurm job id", "pbs job", "placement group", "placement group name", "aws ec2 placement group",
			"ppg", "proximity placement group", "tpu slice", "slice", "slice id", "multihost", "multi host group",
			"instance template", "instance group", "vmss",
		},
		Controllers: DefaultControllers,
	}
}

// The environment spellings recognised by default: the keys whose every
// value not listed as non-production protects, the production values and
// the non-production ones.
var (
	DefaultProductionTags      = []string{"Environment", "Env", "Stage", "Tier", "DeploymentEnvironment", "AppEnv"}
	DefaultProductionValues    = []string{"prod", "prd", "production", "live", "prod*", "prd*", "live-*", "*-prod", "*-prd", "*-production", "*-live", "*-prod-*", "*-prd-*", "*-production-*"}
	DefaultNonProductionValues = []string{
		"dev", "development", "develop", "test", "testing", "tst", "qa", "stage", "staging", "stg", "sandbox", "sbx",
		"research", "experiment", "experimental", "exp", "lab", "uat", "ci", "demo", "preview", "perf", "scratch",
		"personal", "nonprod", "non-prod", "non-production", "nonproduction", "training", "poc", "integration", "int",
	}
)

// DefaultPolicy is the protection both commands apply by default
// (idle_stop.* unset).
func DefaultPolicy() Policy {
	return Policy{
		ExemptTag:           "auto-shutdown-exempt",
		ExemptValue:         "true",
		ProductionTags:      slices.Clone(DefaultProductionTags),
		ProductionValues:    slices.Clone(DefaultProductionValues),
		NonProductionValues: slices.Clone(DefaultNonProductionValues),
		ProtectInference:    true,
		GPUPercent:          15,
		GPUMemoryPercent:    20,
		CPUPercent:          25,
	}
}

// effective fills what a policy leaves unset.
func (p Policy) effective() Policy {
	d := DefaultRules()
	r := &p.Rules
	r.ExemptPhrases = orDefault(r.ExemptPhrases, d.ExemptPhrases)
	r.SwitchPhrases = orDefault(r.SwitchPhrases, d.SwitchPhrases)
	r.ProductionWords = orDefault(r.ProductionWords, d.ProductionWords)
	r.InferenceKeyWords = orDefault(r.InferenceKeyWords, d.InferenceKeyWords)
	r.InferenceValueWords = orDefault(r.InferenceValueWords, d.InferenceValueWords)
	r.ServingStacks = orDefault(r.ServingStacks, d.ServingStacks)
	r.GroupKeys = orDefault(r.GroupKeys, d.GroupKeys)
	if r.Controllers == nil {
		r.Controllers = d.Controllers
	}
	if len(p.ProductionTags) == 0 {
		p.ProductionTags = DefaultProductionTags
	}
	if len(p.ProductionValues) == 0 {
		p.ProductionValues = DefaultProductionValues
	}
	if len(p.NonProductionValues) == 0 {
		p.NonProductionValues = DefaultNonProductionValues
	}
	if p.GPUPercent <= 0 {
		p.GPUPercent = 15
	}
	if p.GPUMemoryPercent <= 0 {
		p.GPUMemoryPercent = 20
	}
	if p.CPUPercent <= 0 {
		p.CPUPercent = 25
	}
	return p
}

// WithExtra adds phrases, serving stacks and group keys to the defaults (the
// idle_stop.exempt_phrases, serving_stacks and group_tags settings).
func (r Rules) WithExtra(exempt, stacks, groups []string) Rules {
	d := DefaultRules()
	if len(r.ExemptPhrases) == 0 {
		r.ExemptPhrases = d.ExemptPhrases
	}
	if len(r.ServingStacks) == 0 {
		r.ServingStacks = d.ServingStacks
	}
	if len(r.GroupKeys) == 0 {
		r.GroupKeys = d.GroupKeys
	}
	r.ExemptPhrases = slices.Concat(r.ExemptPhrases, exempt)
	r.ServingStacks = slices.Concat(r.ServingStacks, stacks)
	r.GroupKeys = slices.Concat(r.GroupKeys, groups)
	return r
}

func orDefault(v, d []string) []string {
	if len(v) == 0 {
		return d
	}
	return v
}
