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

// PluralNumber is Plural for a count that may be fractional, as GPU counts
// are: "1 GPU", "0.5 GPUs", "8 GPUs".
func PluralNumber(n float64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.FormatFloat(n, 'g', -1, 64) + " " + noun + "s"
}
