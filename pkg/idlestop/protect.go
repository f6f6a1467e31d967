package idlestop

import (
	"github.com/gpufinops/gpufinops/pkg/protect"
)

// IsTrueValue reports whether a tag or policy value reads as yes.
func IsTrueValue(v string) bool { return protect.IsTrueValue(v) }

// IsFalseValue reports whether a tag or policy value reads as no.
func IsFalseValue(v string) bool { return protect.IsFalseValue(v) }

// Protection is the shared protection policy (pkg/protect) this policy
// configures: analyze reads the same one, so both commands protect the same
// machines.
func (p Policy) Protection() protect.Policy {
	p = p.effective()
	return protect.Policy{
		ExemptTag:           p.ExemptTag,
		ExemptValue:         p.ExemptValue,
		IncludeProduction:   p.IncludeProduction,
		ProductionTags:      p.ProductionTags,
		ProductionValues:    p.ProductionValues,
		NonProductionValues: p.NonProductionValues,
		RequireOptIn:        p.RequireOptIn,
		ProtectInference:    p.ProtectInference,
		GPUPercent:          p.GPUPercent,
		GPUMemoryPercent:    p.GPUMemoryPercent,
		CPUPercent:          p.CPUPercent,
		Rules:               protect.Rules{}.WithExtra(p.ExemptPhrases, p.ServingStacks, p.GroupTags),
	}
}

// selected reports whether the tags carry every selector; when several
// keys fold to a selector's key, all of their values must match.
func selected(tags map[string]string, p Policy) (string, bool) {
	for _, k := range sortedKeys(p.Selectors) {
		want := p.Selectors[k]
		_, vals := protect.TagValues(tags, k)
		if len(vals) == 0 {
			return k + "=" + want, false
		}
		for _, v := range vals {
			if protect.FoldValue(v) != protect.FoldValue(want) {
				return k + "=" + want, false
			}
		}
	}
	return "", true
}
