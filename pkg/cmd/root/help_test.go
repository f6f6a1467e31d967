package root

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/spf13/cobra"
)

// commandPaths walks the tree under c: every command's words after the root.
func commandPaths(c *cobra.Command, prefix []string) [][]string {
	var out [][]string
	for _, s := range c.Commands() {
		if s.Hidden {
			continue
		}
		p := append(append([]string{}, prefix...), s.Name())
		out = append(out, p)
		out = append(out, commandPaths(s, p)...)
	}
	return out
}

// TestHelpFitsTheTerminal: the help of every command of the tree (help
// topics, completion and its shells included) fits the terminal at 80 and
// 120 columns, and 80 when the width is unknown; it wraps at word
// boundaries (every word of the unwrapped help is still there, in order)
// and shows boolean flags as plain flags.
func TestHelpFitsTheTerminal(t *testing.T) {
	f, _, _ := testFactory()
	paths := append([][]string{nil}, commandPaths(NewCmdRoot(f), nil)...)
	if len(paths) < 25 {
		t.Fatalf("walked only %d commands", len(paths))
	}
	for _, width := range []int{80, 120, 0} {
		limit := width
		if limit == 0 {
			limit = 80
		}
		for _, p := range paths {
			for _, args := range [][]string{append(append([]string{}, p...), "--help"), append([]string{"help"}, p...)} {
				f, out, errOut := testFactory()
				f.IOStreams.SetTerminalWidth(width)
				if code := Run(context.Background(), f, args); code != 0 {
					t.Fatalf("%v: exit %d: %s", args, code, errOut)
				}
				help := out.String()
				if help == "" {
					t.Fatalf("%v: no help", args)
				}
				for i, l := range strings.Split(help, "\n") {
					if n := utf8.RuneCountInString(l); n > limit {
						t.Errorf("%v at %d columns: line %d has %d columns: %q", args, width, i+1, n, l)
					}
				}
				if strings.Contains(help, "[=true|false]") || strings.Contains(help, "[=true]") {
					t.Errorf("%v: a boolean flag shows a value:\n%s", args, help)
				}
			}
		}
	}
}

// TestHelpKeepsEveryWord: wrapping only moves words to new lines (and adds
// a backslash to a wrapped shell example); no word is cut or lost.
func TestHelpKeepsEveryWord(t *testing.T) {
	f, _, _ := testFactory()
	for _, p := range append([][]string{nil}, commandPaths(NewCmdRoot(f), nil)...) {
		words := func(width int) []string {
			f, out, _ := testFactory()
			f.IOStreams.SetTerminalWidth(width)
			Run(context.Background(), f, append(append([]string{}, p...), "--help"))
			var ws []string
			for _, w := range strings.Fields(out.String()) {
				if w != `\` {
					ws = append(ws, w)
				}
			}
			return ws
		}
		wide, narrow := words(10000), words(80)
		// A word longer than the room is split after a separator: join
		// the pieces back before comparing.
		if strings.Join(wide, "") != strings.Join(narrow, "") {
			t.Errorf("%v: the words differ at 80 columns:\n%q\n%q", p, wide, narrow)
		}
		if len(narrow) < 10 {
			t.Errorf("%v: %d words of help", p, len(narrow))
		}
	}
}
