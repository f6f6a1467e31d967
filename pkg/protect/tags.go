package protect

import (
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// The values of yes/no tags, compared folded (Fold). Any other value is
// neither.
var (
	trueValues  = []string{"true", "yes", "y", "on", "1", "enabled", "enable", "allow", "allowed", "t"}
	falseValues = []string{"false", "no", "n", "off", "0", "f"}
	// optOutValues read as "do not stop" under an auto-stop switch besides
	// the false ones.
	optOutValues = []string{"disabled", "disable", "never", "deny", "denied", "none", "exempt", "skip", "skipped", "keep",
		"protected", "ignore", "ignored", "exclude", "excluded", "opt-out", "optout", "opted-out"}
)

// IsTrueValue reports whether a tag or policy value reads as yes.
func IsTrueValue(v string) bool { return slices.Contains(trueValues, FoldValue(v)) }

// IsFalseValue reports whether a tag or policy value reads as no.
func IsFalseValue(v string) bool { return slices.Contains(falseValues, FoldValue(v)) }

// IsOptOutValue reports whether a switch value reads as "do not stop".
func IsOptOutValue(v string) bool {
	return IsFalseValue(v) || slices.Contains(optOutValues, FoldValue(v))
}

// FoldValue is how whole values compare: trimmed, lower case, with '_' and
// runs of spaces read as '-' (prod_eu and "prod eu" are prod-eu).
func FoldValue(v string) string {
	v = strings.ToLower(strings.TrimSpace(v))
	v = valueSeparators.Replace(v)
	for strings.Contains(v, "--") {
		v = strings.ReplaceAll(v, "--", "-")
	}
	return v
}

var valueSeparators = strings.NewReplacer("_", "-", " ", "-", "\t", "-")

// MatchAny reports whether the folded value matches one of the folded
// patterns; a pattern may hold '*' wildcards (prod-*, *-prod).
func MatchAny(v string, patterns []string) bool {
	v = FoldValue(v)
	for _, pat := range patterns {
		pat = FoldValue(pat)
		if pat == v {
			return true
		}
		if strings.Contains(pat, "*") {
			if ok, err := path.Match(strings.ReplaceAll(pat, "/", "\x00"), strings.ReplaceAll(v, "/", "\x00")); err == nil && ok {
				return true
			}
		}
	}
	return false
}

// TagValues returns the keys that fold to key's (fleet.NormTagKey) or spell
// the same words (Tokens: Deployment.Environment is DeploymentEnvironment),
// sorted, and their values, trimmed.
func TagValues(tags map[string]string, key string) (keys, values []string) {
	want, words := fleet.NormTagKey(key), configured(key)
	if want == "" {
		return nil, nil
	}
	for k := range tags {
		if fleet.NormTagKey(k) == want || words != "" && phrase(k) == words {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		values = append(values, strings.TrimSpace(tags[k]))
	}
	return keys, values
}

// Finding is a protection: why the machine is left running.
type Finding struct {
	Reason Reason `json:"reason"`
	// Message says why in a sentence.
	Message string `json:"message"`
	// Tag is the tag that says so (key=value), when one does.
	Tag string `json:"tag,omitempty"`
	// Owner is the controller that owns the machine (ReasonManaged).
	Owner *fleet.ManagedBy `json:"owner,omitempty"`
}

type tag struct {
	key, value string
	kt, vt     []string
}

func sortedTags(tags map[string]string) []tag {
	keys := make([]string, 0, len(tags))
	for k := range tags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]tag, len(keys))
	for i, k := range keys {
		v := strings.TrimSpace(tags[k])
		out[i] = tag{key: k, value: v, kt: Tokens(k), vt: Tokens(v)}
	}
	return out
}

func (t tag) String() string { return strings.TrimSpace(t.key) + "=" + quoteEmpty(t.value) }

func quoteEmpty(v string) string {
	if v == "" {
		return `""`
	}
	return v
}

func found(r Reason, t tag, msg string) *Finding {
	return &Finding{Reason: r, Message: msg, Tag: t.String()}
}

// Tags reads the tag protections in order: exemption (the configured tag,
// then any key or value holding an exemption phrase), the auto-stop switch
// (opted out, or not opted in), production. Nil when none applies.
func Tags(tags map[string]string, p Policy) *Finding {
	return tagsOf(tags, sortedTags(tags), p.effective())
}

// tagsOf is Tags on tags already split into words (ts) with an effective
// policy.
func tagsOf(tags map[string]string, ts []tag, p Policy) *Finding {
	if f := exemption(tags, ts, p); f != nil {
		return f
	}
	if f := autoStop(ts, p); f != nil {
		return f
	}
	return production(tags, ts, p)
}

// exemption: the configured exemption tag with any value but a false one;
// then a key spelling an exemption phrase (shutdown-exempt, DoNotStop,
// keep_running) with any value but a false one; then a value spelling one
// (always-on, do-not-stop) under any key.
func exemption(tags map[string]string, ts []tag, p Policy) *Finding {
	keys, vals := TagValues(tags, p.ExemptTag)
	for i, v := range vals {
		if IsFalseValue(v) && !strings.EqualFold(v, strings.TrimSpace(p.ExemptValue)) {
			continue
		}
		msg := "the machine is tagged " + keys[i] + "=" + quoteEmpty(v)
		if !strings.EqualFold(v, strings.TrimSpace(p.ExemptValue)) && !IsTrueValue(v) {
			msg += " (a value not recognised as false protects the machine)"
		}
		return &Finding{Reason: ReasonExempt, Message: msg, Tag: keys[i] + "=" + quoteEmpty(v)}
	}
	for _, t := range ts {
		if f := toolOptOut(t); f != nil {
			return f
		}
	}
	for _, t := range ts {
		ph := firstPhrase(t.kt, p.Rules.ExemptPhrases)
		if ph == "" || IsFalseValue(t.value) {
			continue
		}
		msg := "the machine is tagged " + t.String() + ": the key reads as an exemption (" + ph + ")"
		if !IsTrueValue(t.value) {
			msg += "; a value not recognised as false protects the machine"
		}
		return found(ReasonExempt, t, msg)
	}
	for _, t := range ts {
		if firstPhrase(t.kt, p.Rules.SwitchPhrases) != "" {
			continue // an auto-stop switch's value is read by autoStop
		}
		if ph := firstPhrase(t.vt, p.Rules.ExemptPhrases); ph != "" && !negated(t.vt) {
			return found(ReasonExempt, t, "the machine is tagged "+t.String()+": the value reads as an exemption ("+ph+")")
		}
	}
	return nil
}

// toolName names this tool in a tag key (in matching form: GpuFinOps,
// gpu-finops); optOutKeyWords, beside it, make the key an opt-out
// (gpufinops-ignore, gpufinops:skip, GpuFinOpsExclude).
const toolName = "gpufinops"

var (
	optOutKeyWords = []string{"ignore", "skip", "exclude", "exempt", "optout", "off", "disable", "disabled"}
)

// toolOptOut: a key naming the tool opts the machine out with any value a
// yes would be (gpufinops-ignore=true) or, for the key that is just the
// name (gpufinops, GpuFinOps), any value
// but a yes or an opt-in word (gpufinops=skip, gpufinops=off): the
// machine's owner asked this tool to leave it alone. A key naming the
// tool with a false value (gpufinops-ignore=false) or an enabling one
// (gpufinops=enabled) does not protect.
func toolOptOut(t tag) *Finding {
	if !hasPhrase(t.kt, toolName) {
		return nil
	}
	if anyWord(t.kt, optOutKeyWords) || hasPhrase(t.kt, "optout") {
		if IsFalseValue(t.value) {
			return nil
		}
		return found(ReasonExempt, t, "the machine is tagged "+t.String()+": the key asks gpufinops to leave it alone")
	}
	if joined(t.kt) != toolName || t.value == "" || IsTrueValue(t.value) || slices.Contains([]string{"include", "included", "manage", "managed", "stop", "allow", "opt-in", "optin"}, FoldValue(t.value)) {
		return nil
	}
	return found(ReasonExempt, t, "the machine is tagged "+t.String()+": a value naming no opt-in under the tool's own key leaves the machine alone")
}

// negated reports whether a value denies an exemption outright ("not
// exempt", "non-protected"): only then does an exemption phrase in it not
// protect.
func negated(vt []string) bool {
	return len(vt) >= 2 && (vt[0] == "not" || vt[0] == "non" || vt[0] == "un")
}

// autoStop reads the auto-stop switches (AutoShutdown, auto-stop,
// idle_shutdown): a true value allows a stop; a false or opt-out value
// opts out; any other value protects, said so. With RequireOptIn, a machine
// without a true switch is not opted in.
func autoStop(ts []tag, p Policy) *Finding {
	optedIn := false
	for _, t := range ts {
		if firstPhrase(t.kt, p.Rules.SwitchPhrases) == "" || firstPhrase(t.kt, p.Rules.ExemptPhrases) != "" {
			continue // exemption keys are read by exemption
		}
		switch {
		case IsTrueValue(t.value):
			optedIn = true
		case IsOptOutValue(t.value), firstPhrase(t.vt, p.Rules.ExemptPhrases) != "":
			return found(ReasonOptedOut, t, "the machine is tagged "+t.String())
		default:
			return found(ReasonOptedOut, t, "the machine is tagged "+t.String()+", which is neither true nor false: an unrecognised value of an auto-stop key protects the machine")
		}
	}
	if p.RequireOptIn && !optedIn {
		return &Finding{Reason: ReasonNotOptedIn, Message: "opt-in is required and the machine is not tagged AutoShutdown=true"}
	}
	return nil
}

// prodWords are the value words that mean production under an environment
// key that is not configured.
var prodWords = []string{"prod", "prd", "production", "live", "prodn"}

// production reads the configured production tags (any value not listed as
// non-production protects, said so), then any key holding a production
// word (env, stage, tier, deployment, lifecycle …): there a production value
// (prod, production, prd, live, prod-eu, eu-prod-1) protects.
// IncludeProduction lets both be stopped.
func production(tags map[string]string, ts []tag, p Policy) *Finding {
	if p.IncludeProduction {
		return nil
	}
	for _, key := range p.ProductionTags {
		keys, vals := TagValues(tags, key)
		for i, v := range vals {
			t := tag{key: keys[i], value: v}
			switch {
			case MatchAny(v, p.NonProductionValues):
			case MatchAny(v, p.ProductionValues):
				return found(ReasonProduction, t, "the machine is tagged "+t.String()+" and production is protected (--include-production stops it)")
			default:
				return found(ReasonProduction, t, "the machine is tagged "+t.String()+", not a known non-production value: it is protected as production (idle_stop.non_production_values lists the values that may stop)")
			}
		}
	}
	for _, t := range ts {
		if !anyWord(t.kt, p.Rules.ProductionWords) || MatchAny(t.value, p.NonProductionValues) ||
			negated(t.vt) || anyWord(t.vt, []string{"pre", "preprod", "nonprod"}) {
			continue
		}
		if MatchAny(t.value, p.ProductionValues) || anyWord(t.vt, prodWords) {
			return found(ReasonProduction, t, "the machine is tagged "+t.String()+": an environment key with a production value, and production is protected (--include-production stops it)")
		}
	}
	for _, t := range ts {
		if slices.Contains(strongProd, FoldValue(t.value)) && !IsFalseValue(t.value) {
			return found(ReasonProduction, t, "the machine is tagged "+t.String()+": the whole value says production under a key not listed as an environment key, which protects it (fail-safe; --include-production stops it)")
		}
		if critical(t) {
			return found(ReasonProduction, t, "the machine is tagged "+t.String()+": it is marked business-critical, protected like production (--include-production stops it)")
		}
	}
	return nil
}

// strongProd are values that say production whatever the key
// (workspace=prod, realm=production).
var strongProd = []string{"prod", "prd", "production", "prodn", "production-critical"}

// critical reports a tag marking the machine critical: a value with the
// word critical (mission-critical, business_critical, Critical) not
// denied (non-critical, not-critical), or a criticality key with a high
// value (criticality=high, Criticality=Tier0).
func critical(t tag) bool {
	if anyWord(t.vt, []string{"critical", "missioncritical", "businesscritical"}) && !negated(t.vt) && !anyWord(t.vt, []string{"noncritical", "uncritical"}) {
		return true
	}
	if anyWord(t.kt, []string{"criticality", "critical", "businesscriticality"}) {
		v := FoldValue(t.value)
		return IsTrueValue(v) || slices.Contains([]string{"high", "very-high", "highest", "tier-0", "tier0", "tier-1", "tier1", "p0", "p1", "sev1", "sev-1"}, v)
	}
	return false
}

// anyWord reports whether a token is one of the words.
func anyWord(tokens, words []string) bool {
	for _, t := range tokens {
		if slices.Contains(words, t) {
			return true
		}
	}
	return false
}

// Inference reports whether a machine serves inference: the workload block
// or the WorkloadType tag says so, a role key (role, service, app,
// component, …) has a serving value (serving, inference, endpoint, api), or
// a key or value names a serving stack (triton, vllm, tgi, kserve, …).
func Inference(in *fleet.Instance, p Policy) *Finding {
	return inferenceOf(in, sortedTags(in.Tags), p.effective())
}

// inferenceOf is Inference on the machine's tags already split into words
// (ts) with an effective policy.
func inferenceOf(in *fleet.Instance, ts []tag, p Policy) *Finding {
	if in.Workload != nil && in.Workload.Type == fleet.Inference {
		return &Finding{Reason: ReasonInference, Message: "the machine serves inference (workload type), which may be needed at any time"}
	}
	if slices.Contains(fleet.WorkloadTypesFromTags(in.Tags), fleet.Inference) {
		return &Finding{Reason: ReasonInference, Message: "the machine serves inference (WorkloadType tag), which may be needed at any time"}
	}
	var stacks []string
	for _, t := range ts {
		if anyWord(t.kt, p.Rules.InferenceKeyWords) && anyWord(t.vt, p.Rules.InferenceValueWords) {
			return found(ReasonInference, t, "the machine is tagged "+t.String()+": a serving role, which may be needed at any time")
		}
		if stacks == nil {
			stacks = make([]string, len(p.Rules.ServingStacks))
			for i, s := range p.Rules.ServingStacks {
				stacks[i] = configured(s)
			}
		}
		for i, s := range p.Rules.ServingStacks {
			if hasStack(t.kt, stacks[i]) || hasStack(t.vt, stacks[i]) {
				return found(ReasonInference, t, "the machine is tagged "+t.String()+": it runs the serving stack "+s+", which may be needed at any time")
			}
		}
	}
	return nil
}

// hasStack matches a serving stack (ph, in matching form) on token boundaries: short names (tgi,
// nim) inside other words are not stacks; a name of five letters or more
// may start or end a word (tritonserver).
func hasStack(tokens []string, ph string) bool {
	for i := range tokens {
		if len(ph) >= 5 && (strings.HasPrefix(tokens[i], ph) || strings.HasSuffix(tokens[i], ph)) {
			return true
		}
		acc := ""
		for j := i; j < len(tokens) && len(acc) < len(ph); j++ {
			acc += tokens[j]
			if acc == ph {
				return true
			}
		}
	}
	return false
}
