package protect

import (
	"strings"
	"sync"
	"unicode"
)

// Tokens splits a tag key or value into lower-case words: at every rune that
// is neither a letter nor a digit (the separators each cloud's tag rules
// leave: '-', '_', '.', ':', '/', ' ', '@', '+', '='), and at camelCase
// boundaries (DoNotStop, HTTPServer). Apostrophes join (don't is dont).
func Tokens(s string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(s)
	for i, r := range rs {
		switch {
		case r == '\'' || r == '’':
			continue
		case !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsMark(r):
			flush()
			continue
		case unicode.IsUpper(r) && len(cur) > 0:
			prev := cur[len(cur)-1]
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
				flush()
			}
		}
		cur = append(cur, r)
	}
	flush()
	return out
}

// Fold is a key or value in its compared form: its tokens joined by '-'
// (DoNotStop, do_not_stop and "Do Not Stop" are all do-not-stop).
func Fold(s string) string { return strings.Join(Tokens(s), "-") }

// phrase is a phrase in matching form: its tokens run together.
func phrase(p string) string { return strings.Join(Tokens(p), "") }

// configured is phrase for the policy's own phrases, stacks and keys, a
// bounded set each machine's tags are matched against: worked out once,
// not once per machine and tag.
func configured(p string) string {
	if v, ok := configuredPhrases.Load(p); ok {
		return v.(string)
	}
	ph := phrase(p)
	configuredPhrases.Store(p, ph)
	return ph
}

var configuredPhrases sync.Map

// hasPhrase reports whether consecutive tokens, run together, spell the
// phrase (do + not + stop, donot + stop, donotstop all spell donotstop), or
// whether a phrase of six letters or more occurs inside one token (a GCP
// label written without separators: autoshutdownexempt).
func hasPhrase(tokens []string, ph string) bool {
	if ph == "" {
		return false
	}
	for i := range tokens {
		acc := ""
		for j := i; j < len(tokens); j++ {
			acc += tokens[j]
			if acc == ph {
				return true
			}
			if len(acc) >= len(ph) || !strings.HasPrefix(ph, acc) {
				break
			}
		}
		if len(ph) >= 6 && strings.Contains(tokens[i], ph) {
			return true
		}
	}
	return false
}

// firstPhrase is the first of the phrases the tokens hold, or "".
func firstPhrase(tokens []string, phrases []string) string {
	for _, p := range phrases {
		if hasPhrase(tokens, configured(p)) {
			return p
		}
	}
	return ""
}

// joined is the tokens run together: the key as a whole, for rules that
// name whole keys (job, cluster-name).
func joined(tokens []string) string { return strings.Join(tokens, "") }
