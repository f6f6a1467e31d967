// Package text holds the small wording helpers every printer shares.
package text

import "strconv"

// Plural is n and the noun, adding "s" unless n is 1: "1 instance",
// "3 instances".
func Plural(n int, noun string) string { return PluralOf(n, noun, noun+"s") }

// PluralOf is n and one or many by n: "1 policy", "2 policies".
func PluralOf(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
