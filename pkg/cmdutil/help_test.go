package cmdutil

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"
)

// TestWrapTextProperties: on random prose, lists, two-column lines and
// shell examples, at many widths, every line fits, no word that fits is cut,
// and the words come out in order (a word longer than the room only split).
func TestWrapTextProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(36, 80))
	word := func() string {
		const letters = "abcdefghijklmnopqrstuvwxyz–×éABC0123456789"
		n := 1 + rng.IntN(12)
		if rng.IntN(30) == 0 {
			n = 40 + rng.IntN(90) // an over-long token: a URL, a list of fields
		}
		r := []rune(letters)
		var b strings.Builder
		for i := range n {
			if i > 0 && rng.IntN(8) == 0 {
				b.WriteRune([]rune(",/=.")[rng.IntN(4)])
				continue
			}
			b.WriteRune(r[rng.IntN(len(r))])
		}
		return b.String()
	}
	for i := range 2000 {
		width := 20 + rng.IntN(180)
		var words []string
		for range 1 + rng.IntN(40) {
			words = append(words, word())
		}
		prefix := []string{"", "  ", "  - ", "  3. ", "  name      ", "      --flag string   "}[rng.IntN(6)]
		line := prefix + strings.Join(words, " ")
		got := WrapText(line, width)
		for _, l := range strings.Split(got, "\n") {
			if n := utf8.RuneCountInString(l); n > width {
				t.Fatalf("case %d, width %d: line of %d columns %q from %q", i, width, n, l, line)
			}
		}
		fields := strings.Fields(got)
		for _, w := range words {
			if utf8.RuneCountInString(w) <= width-utf8.RuneCountInString(prefix)-4 && !slices.Contains(fields, w) {
				t.Fatalf("case %d, width %d: %q was cut: %q", i, width, w, got)
			}
		}
		if strings.Join(strings.Fields(line), "") != strings.Join(fields, "") {
			t.Fatalf("case %d, width %d: words changed: %q from %q", i, width, got, line)
		}
	}
}

func TestWrapTextShellExample(t *testing.T) {
	for _, tc := range []struct {
		in    string
		width int
		want  string
	}{
		{"  $ gpufinops analyze --demo", 80, "  $ gpufinops analyze --demo"},
		{"  $ gpufinops analyze --fleet fleet.yaml -o markdown --markdown-summary --full-report \"$RUN_URL\"", 80,
			"  $ gpufinops analyze --fleet fleet.yaml -o markdown --markdown-summary \\\n      --full-report \"$RUN_URL\""},
		{"  $ gpufinops analyze --demo --fail-on 'savings:spot>1000 && confidence=high' -o json", 60,
			"  $ gpufinops analyze --demo \\\n      --fail-on 'savings:spot>1000 && confidence=high' \\\n      -o json"},
		{"  $ gpufinops fit --params 13B --precision int8 --context 8192 --batch 16 -o json", 76,
			"  $ gpufinops fit --params 13B --precision int8 --context 8192 --batch 16 \\\n      -o json"},
		{`$ a "b c d" e`, 12, "$ a \\\n    \"b c d\" \\\n    e"},
		{"  $ gpufinops catalog update --file snapshot.json --replace   # what 'make catalog' runs", 60,
			"  $ gpufinops catalog update --file snapshot.json \\\n      --replace # what 'make catalog' runs"},
		{"  $ gpufinops analyze --fleet fleet.yaml -o json --fail-on 'savings>5000' > report.json", 76,
			"  $ gpufinops analyze --fleet fleet.yaml -o json --fail-on 'savings>5000' \\\n      > report.json"},
	} {
		if got := WrapText(tc.in, tc.width); got != tc.want {
			t.Errorf("%q at %d:\n%s\nwant\n%s", tc.in, tc.width, got, tc.want)
		}
	}
}

// TestFlagUsages: booleans are plain flags, a long name moves its
// description to the next line, and defaults other than zero are shown.
func TestFlagUsages(t *testing.T) {
	cmd := &cobra.Command{Use: "x"}
	var b bool
	var s string
	var n int
	cmd.Flags().BoolVarP(&b, "demo", "d", false, "use the demo")
	cmd.Flags().BoolVar(&b, "on", true, "on by default")
	cmd.Flags().StringVar(&s, "a-very-long-flag-name-indeed", "", "help")
	cmd.Flags().StringVar(&s, "name", "x", "a name")
	cmd.Flags().IntVar(&n, "count", 0, "how many")
	got := FlagUsages(cmd.Flags(), 60)
	want := `      --a-very-long-flag-name-indeed string
                      help
      --count int     how many
  -d, --demo          use the demo
      --name string   a name (default "x")
      --on            on by default (default true)
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestFlagUsagesKeepsCommonFlagsOnOneLine: at 80 columns a duration flag
// with a long name and a repeatable string flag start their description on
// their own line, and a repeatable flag reads "string", not "stringArray".
func TestFlagUsagesKeepsCommonFlagsOnOneLine(t *testing.T) {
	cmd := &cobra.Command{Use: "x"}
	var d time.Duration
	var ss []string
	var s string
	cmd.Flags().DurationVar(&d, "connect-timeout", 0, "bound opening a connection")
	cmd.Flags().DurationVar(&d, "request-timeout", 0, "bound each request")
	cmd.Flags().StringArrayVar(&ss, "metrics-file", nil, "nvidia-smi CSV (repeatable)")
	cmd.Flags().StringVar(&s, "prometheus-bearer-token-file", "", "file holding a bearer token")
	got := FlagUsages(cmd.Flags(), 80)
	for _, want := range []string{
		"      --connect-timeout duration   bound opening a connection\n",
		"      --metrics-file string        nvidia-smi CSV (repeatable)\n",
		"      --prometheus-bearer-token-file string\n" + strings.Repeat(" ", 35) + "file holding a bearer token\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("lacks %q:\n%s", want, got)
		}
	}
}
