// Package suggest finds the names a mistyped one was probably meant to be,
// for "did you mean" hints: subcommands, --fail-on metrics, configuration
// keys, environment variables and instance types. It imports only the
// standard library so that any package can use it.
package suggest

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// Max is the most suggestions For returns.
const Max = 3

// For returns up to Max candidates close to input, in the candidates'
// order: those at the smallest edit distance (Damerau–Levenshtein,
// case-insensitive) from input within a third of its length (at least 1, at
// most 3); when there are none, those that input (at least 3 characters) is a
// prefix of. An exact match, or an empty input, gives none.
func For(input string, candidates []string) []string {
	in := strings.ToLower(input)
	n := utf8.RuneCountInString(in)
	if n == 0 {
		return nil
	}
	limit := min(max(n/3, 1), 3)
	type hit struct {
		name string
		dist int
	}
	var hits []hit
	seen := map[string]bool{}
	for _, c := range candidates {
		lc := strings.ToLower(c)
		if lc == in {
			return nil
		}
		if seen[c] {
			continue
		}
		d := distance(in, lc)
		switch {
		case d <= limit:
		case n >= 3 && strings.HasPrefix(lc, in):
			d = limit + 1
		default:
			continue
		}
		seen[c] = true
		hits = append(hits, hit{c, d})
	}
	best := limit + 1
	for _, h := range hits {
		best = min(best, h.dist)
	}
	hits = slices.DeleteFunc(hits, func(h hit) bool { return h.dist > best })
	out := make([]string, 0, min(len(hits), Max))
	for _, h := range hits[:min(len(hits), Max)] {
		out = append(out, h.name)
	}
	return out
}

// Phrase is "; did you mean X?" (or "X or Y?", "X, Y or Z?") with each
// suggestion quoted by quote, or "" when there is none.
func Phrase(input string, candidates []string, quote func(string) string) string {
	s := For(input, candidates)
	if len(s) == 0 {
		return ""
	}
	q := make([]string, len(s))
	for i, x := range s {
		q[i] = quote(x)
	}
	if len(q) == 1 {
		return "; did you mean " + q[0] + "?"
	}
	return "; did you mean " + strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1] + "?"
}

// Quoted quotes a name in double quotes, as Go's %q does for plain text.
func Quoted(s string) string { return `"` + s + `"` }

// distance is the optimal string alignment distance between a and b: the
// fewest insertions, deletions, substitutions and swaps of two neighbours.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
