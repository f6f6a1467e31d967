package idlestop

import (
	"path"
	"sort"
	"strings"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// The values of yes/no tags (AutoShutdown, the exemption tag) idle-stop
// recognises, after trimming and case folding. Any other value is neither.
var (
	trueValues  = []string{"true", "yes", "y", "on", "1", "enabled", "enable", "allow", "allowed", "t"}
	falseValues = []string{"false", "no", "n", "off", "0", "f"}
	// optOutValues are AutoShutdown values that read as "do not stop" besides
	// the false-like ones.
	optOutValues = []string{"disabled", "disable", "never", "deny", "denied", "none", "exempt", "skip", "keep", "protected"}
)

// IsTrueValue reports whether a tag or policy value reads as yes.
func IsTrueValue(v string) bool { return inFolded(v, trueValues) }

// IsFalseValue reports whether a tag or policy value reads as no.
func IsFalseValue(v string) bool { return inFolded(v, falseValues) }

func inFolded(v string, list []string) bool {
	v = foldValue(v)
	for _, x := range list {
		if v == x {
			return true
		}
	}
	return false
}

// valueSeparators read "_" and white space in a tag value as "-".
var valueSeparators = strings.NewReplacer("_", "-", " ", "-", "\t", "-")

// foldValue is how tag values compare: trimmed, lower case, with '_' and
// runs of spaces read as '-' (prod_eu and "prod eu" are prod-eu).
func foldValue(v string) string {
	v = strings.ToLower(strings.TrimSpace(v))
	v = valueSeparators.Replace(v)
	for strings.Contains(v, "--") {
		v = strings.ReplaceAll(v, "--", "-")
	}
	return v
}

// tagValues returns every value of the tags whose keys fold to key's
// (fleet.NormTagKey), in key order, trimmed; found is false when none does.
func tagValues(tags map[string]string, key string) (keys, values []string) {
	want := fleet.NormTagKey(key)
	if want == "" {
		return nil, nil
	}
	for k := range tags {
		if fleet.NormTagKey(k) == want {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		values = append(values, strings.TrimSpace(tags[k]))
	}
	return keys, values
}

// protection is what the tags say about stopping a machine; the first
// protective finding wins.
type protection struct {
	reason  Reason
	message string
}

// exemption: the exemption tag with any value other than a false-like one
// protects; so does its configured value. Several tags folding to the key
// protect when any one does.
func exemption(tags map[string]string, p Policy) *protection {
	keys, vals := tagValues(tags, p.ExemptTag)
	for i, v := range vals {
		if IsFalseValue(v) && !strings.EqualFold(v, strings.TrimSpace(p.ExemptValue)) {
			continue
		}
		msg := "the machine is tagged " + keys[i] + "=" + quoteEmpty(v)
		if !strings.EqualFold(v, strings.TrimSpace(p.ExemptValue)) && !IsTrueValue(v) {
			msg += " (a value not recognised as false protects the machine)"
		}
		return &protection{ReasonExempt, msg}
	}
	return nil
}

// autoShutdown reads AutoShutdown: a false-like value opts out; a value that
// is neither true- nor false-like protects, said so; with RequireOptIn, only
// true-like values (all of them, when several keys fold to AutoShutdown) let
// a machine be stopped.
func autoShutdown(tags map[string]string, p Policy) *protection {
	keys, vals := tagValues(tags, TagAutoShutdown)
	for i, v := range vals {
		switch {
		case IsTrueValue(v):
		case IsFalseValue(v), inFolded(v, optOutValues):
			return &protection{ReasonOptedOut, "the machine is tagged " + keys[i] + "=" + quoteEmpty(v)}
		default:
			return &protection{ReasonOptedOut, "the machine is tagged " + keys[i] + "=" + quoteEmpty(v) + ", which is neither true nor false: an unrecognised value protects the machine"}
		}
	}
	if p.RequireOptIn && len(vals) == 0 {
		return &protection{ReasonNotOptedIn, "opt-in is required and the machine is not tagged " + TagAutoShutdown + "=true"}
	}
	return nil
}

// production reads the production tags (Policy.ProductionTags): a value
// matching Policy.ProductionValues is production; a value in
// Policy.NonProductionValues is not; any other value protects as
// production, said so. IncludeProduction lets both be stopped.
func production(tags map[string]string, p Policy) *protection {
	if p.IncludeProduction {
		return nil
	}
	for _, key := range p.ProductionTags {
		keys, vals := tagValues(tags, key)
		for i, v := range vals {
			switch {
			case matchAny(v, p.NonProductionValues):
			case matchAny(v, p.ProductionValues):
				return &protection{ReasonProduction, "the machine is tagged " + keys[i] + "=" + quoteEmpty(v) + " and production is protected (--include-production stops it)"}
			default:
				return &protection{ReasonProduction, "the machine is tagged " + keys[i] + "=" + quoteEmpty(v) + ", not a known non-production value: it is protected as production (idle_stop.non_production_values lists the values that may stop)"}
			}
		}
	}
	return nil
}

// matchAny reports whether the folded value matches one of the folded
// patterns; a pattern may hold '*' wildcards (prod-*, *-prod).
func matchAny(v string, patterns []string) bool {
	v = foldValue(v)
	for _, pat := range patterns {
		pat = foldValue(pat)
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

// selected reports whether the tags carry every selector; when several
// keys fold to a selector's key, all of their values must match.
func selected(tags map[string]string, p Policy) (string, bool) {
	for _, k := range sortedKeys(p.Selectors) {
		want := p.Selectors[k]
		_, vals := tagValues(tags, k)
		if len(vals) == 0 {
			return k + "=" + want, false
		}
		for _, v := range vals {
			if foldValue(v) != foldValue(want) {
				return k + "=" + want, false
			}
		}
	}
	return "", true
}

// protectedByTags runs the tag protections in order: exemption,
// AutoShutdown, production.
func protectedByTags(tags map[string]string, p Policy) *protection {
	if pr := exemption(tags, p); pr != nil {
		return pr
	}
	if pr := autoShutdown(tags, p); pr != nil {
		return pr
	}
	return production(tags, p)
}

func quoteEmpty(v string) string {
	if v == "" {
		return `""`
	}
	return v
}
