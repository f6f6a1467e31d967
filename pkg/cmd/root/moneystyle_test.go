package root

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/money"
)

var (
	dollars     = regexp.MustCompile(`-?\$[0-9][0-9,]*(\.[0-9]+)?`)
	plainUSD    = regexp.MustCompile(`[0-9] ?USD\b`)
	tightPct    = regexp.MustCompile(`[0-9]%`)
	spacedPct   = regexp.MustCompile(`[0-9.]+ %`)
	dollarDigit = regexp.MustCompile(`\$[0-9]`)
)

// TestOneMoneyFormatPerOutput: on a terminal every command writes money one
// way, "$12,345.67" (each amount reads back as a number), never
// "12345.67 USD", and percentages one way, "12.5 %", never "12.5%"; in a
// pipe no amount has a "$". The demo fleet through each command that shows
// money. (analyze's and sharing plan's tables are tested with their
// printers.)
func TestOneMoneyFormatPerOutput(t *testing.T) {
	for _, args := range [][]string{
		{"commit-plan", "--demo"},
		{"tags", "audit", "--demo"},
		{"prices", "--gpu", "H100"},
		{"prices", "--spot-only", "--provider", "gcp"},
		{"fit", "--model", "llama-3.1-70b"},
		{"inventory", "--demo"},
		{"inventory", "--demo", "-o", "wide"},
		{"billing", "summary", "--billing", "../../../testdata/billing/focus-1.0-sample.csv"},
		{"analyze", "--demo"},
		{"analyze", "--demo", "--by", "strategy"},
		{"analyze", "--demo", "-o", "wide"},
		{"sharing", "plan", "--demo"},
		{"diff", "../../reportdiff/testdata/old.json", "../../reportdiff/testdata/new.json"},
		{"fit", "--list-models"},
	} {
		for _, tty := range []bool{true, false} {
			out, errOut := runOffline(t, args, tty, 200)
			page := out + errOut
			if tty {
				n := 0
				for _, s := range dollars.FindAllString(page, -1) {
					n++
					if _, err := money.ParseAmount(s, money.USD); err != nil {
						t.Errorf("%v: %v", args, err)
					}
				}
				if n == 0 && args[0] != "inventory" && !slices.Contains(args, "--list-models") {
					t.Errorf("%v: no amounts on the terminal:\n%s", args, page)
				}
				for _, re := range []*regexp.Regexp{plainUSD, tightPct} {
					if m := re.FindAllString(recordedAside(args, page), 3); m != nil {
						t.Errorf("%v on a terminal: %q, another style than the output's:\n%s", args, m, context3(page, m[0]))
					}
				}
			} else if m := dollarDigit.FindAllString(sentencesAside(args, page), 3); m != nil {
				t.Errorf("%v in a pipe: %q:\n%s", args, m, context3(page, m[0]))
			}
			if m := tightPct.FindAllString(recordedAside(args, page), 3); m != nil && len(spacedPct.FindAllString(page, 1)) > 0 {
				t.Errorf("%v (tty %v): two percent styles, %q and %q", args, tty, m, spacedPct.FindString(page))
			}
		}
	}
}

// sentencesAside is page less, for analyze and diff, the recommendations'
// action sentences: they are recorded in the report as written, in USD with
// "$", and printed as recorded in every output (docs/output.md). Every other
// amount in a pipe is plain.
func sentencesAside(args []string, page string) string {
	page = recordedAside(args, page)
	if args[0] != "analyze" && args[0] != "diff" {
		return page
	}
	var keep []string
	for _, l := range strings.Split(page, "\n") {
		if !actionText.MatchString(l) {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// actionText is how an action sentence or short action shows money: an
// hourly rate, a monthly amount after a verb, a saving in brackets.
var actionText = regexp.MustCompile(`(spot|at|of|commit|ri|sp|cud|reservation|instead of) \$[0-9]|\$[0-9][0-9,.]*/h`)

// recordedAside is page less, for diff, the recommendations' table: its
// details are sentences from the two report files compared, in the style of
// the version that wrote them.
func recordedAside(args []string, page string) string {
	if args[0] != "diff" {
		return page
	}
	if i := strings.Index(page, "\nRecommendations:"); i >= 0 {
		if j := strings.Index(page[i+1:], "\n"); j >= 0 {
			return page[:i+1+j]
		}
	}
	return page
}

// context3 is the line of page that holds s.
func context3(page, s string) string {
	i := strings.Index(page, s)
	start := strings.LastIndex(page[:i], "\n") + 1
	end := strings.Index(page[i:], "\n")
	if end < 0 {
		return page[start:]
	}
	return page[start : i+end]
}
