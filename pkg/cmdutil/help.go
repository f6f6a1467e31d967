package cmdutil

import (
	"cmp"
	"fmt"
	"io"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// SetHelp makes every command of the tree under root print its help and
// usage wrapped to width() columns at word boundaries, boolean flags as
// plain flags (--demo, not --demo[=true|false]). A command that sets its
// own help function keeps it (and can call WrapText itself).
func SetHelp(root *cobra.Command, width func() int) {
	root.SetHelpFunc(func(c *cobra.Command, _ []string) {
		var b strings.Builder
		if s := strings.TrimRightFunc(cmp.Or(c.Long, c.Short), isSpace); s != "" {
			b.WriteString(s + "\n\n")
		}
		if c.Runnable() || c.HasSubCommands() {
			writeUsage(&b, c, width())
		}
		_, _ = io.WriteString(c.OutOrStdout(), WrapText(b.String(), width()))
	})
	root.SetUsageFunc(func(c *cobra.Command) error {
		var b strings.Builder
		writeUsage(&b, c, width())
		_, err := io.WriteString(c.OutOrStderr(), WrapText(b.String(), width()))
		return err
	})
}

func isSpace(r rune) bool { return r == ' ' || r == '\n' || r == '\t' || r == '\r' }

// writeUsage is cobra's usage text with the flags rendered by flagUsages.
func writeUsage(b *strings.Builder, c *cobra.Command, width int) {
	b.WriteString("Usage:")
	if c.Runnable() {
		fmt.Fprintf(b, "\n  %s", c.UseLine())
	}
	if c.HasAvailableSubCommands() {
		fmt.Fprintf(b, "\n  %s [command]", c.CommandPath())
	}
	if len(c.Aliases) > 0 {
		fmt.Fprintf(b, "\n\nAliases:\n  %s", c.NameAndAliases())
	}
	if c.HasExample() {
		fmt.Fprintf(b, "\n\nExamples:\n%s", strings.TrimRightFunc(c.Example, isSpace))
	}
	if c.HasAvailableSubCommands() {
		listed := func(s *cobra.Command) bool { return s.IsAvailableCommand() || s.Name() == "help" }
		list := func(title string, in func(*cobra.Command) bool) {
			fmt.Fprintf(b, "\n\n%s", title)
			for _, s := range c.Commands() {
				if listed(s) && in(s) {
					fmt.Fprintf(b, "\n  %-*s  %s", s.NamePadding(), s.Name(), s.Short)
				}
			}
		}
		if len(c.Groups()) == 0 {
			list("Available Commands:", func(*cobra.Command) bool { return true })
		} else {
			for _, g := range c.Groups() {
				list(g.Title, func(s *cobra.Command) bool { return s.GroupID == g.ID })
			}
			if !c.AllChildCommandsHaveGroup() {
				list("Additional Commands:", func(s *cobra.Command) bool { return s.GroupID == "" })
			}
		}
	}
	if c.HasAvailableLocalFlags() {
		b.WriteString("\n\nFlags:\n" + strings.TrimRight(FlagUsages(c.LocalFlags(), width), "\n"))
	}
	if c.HasAvailableInheritedFlags() {
		b.WriteString("\n\nGlobal Flags:\n" + strings.TrimRight(FlagUsages(c.InheritedFlags(), width), "\n"))
	}
	if c.HasHelpSubCommands() {
		b.WriteString("\n\nAdditional help topics:")
		for _, s := range c.Commands() {
			if s.IsAdditionalHelpTopicCommand() {
				fmt.Fprintf(b, "\n  %-*s  %s", s.CommandPathPadding(), s.CommandPath(), s.Short)
			}
		}
	}
	if c.HasAvailableSubCommands() {
		fmt.Fprintf(b, "\n\nUse \"%s [command] --help\" for more information about a command.", c.CommandPath())
	}
	b.WriteString("\n")
}

// FlagUsages lists the visible flags of fs, one per flag, descriptions
// in a column wrapped to width; a boolean flag shows no value. A flag whose
// names pass the column starts its description on the next line.
func FlagUsages(fs *pflag.FlagSet, width int) string {
	type row struct{ names, help string }
	var rows []row
	longest := 0
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		names := "      --" + f.Name
		if f.Shorthand != "" && f.ShorthandDeprecated == "" {
			names = "  -" + f.Shorthand + ", --" + f.Name
		}
		varname, help := pflag.UnquoteUsage(f)
		switch {
		case f.Value.Type() == "bool" && f.NoOptDefVal == "true":
		case varname == "stringArray":
			names += " string" // repeatable: the description says so
		case varname != "":
			names += " " + varname
		}
		if f.NoOptDefVal != "" && f.Value.Type() != "bool" {
			names += "[=" + f.NoOptDefVal + "]"
		}
		if !zeroDefault(f) {
			if f.Value.Type() == "string" {
				help += fmt.Sprintf(" (default %q)", f.DefValue)
			} else {
				help += " (default " + f.DefValue + ")"
			}
		}
		if f.Deprecated != "" {
			help += " (DEPRECATED: " + f.Deprecated + ")"
		}
		rows = append(rows, row{names, help})
	})
	// The descriptions' column: after the longest names that leave more
	// than half the line to them (at 80 columns "--connect-timeout
	// duration" does); longer names put theirs on the next line.
	limit := max(width*9/20, 24)
	for _, r := range rows {
		if n := utf8.RuneCountInString(r.names); n+2 <= limit {
			longest = max(longest, n)
		}
	}
	col := min(longest+3, limit)
	var b strings.Builder
	for _, r := range rows {
		b.WriteString(r.names)
		n := utf8.RuneCountInString(r.names)
		if n+2 > col {
			b.WriteString("\n" + strings.Repeat(" ", col))
		} else {
			b.WriteString(strings.Repeat(" ", col-n))
		}
		for i, l := range wrapWords(strings.ReplaceAll(r.help, "\n", " "), width-col) {
			if i > 0 {
				b.WriteString("\n" + strings.Repeat(" ", col))
			}
			b.WriteString(l)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// zeroDefault reports whether f's default is its type's zero value, which
// the help does not show.
func zeroDefault(f *pflag.Flag) bool {
	switch f.DefValue {
	case "", "false", "0", "0s", "[]", "<nil>":
		return f.Value.Type() != "string" || f.DefValue == ""
	}
	return false
}

// WrapText breaks every line of s longer than width columns at word
// boundaries; a paragraph at the margin with such a line is filled again
// whole. A continuation lines up under the line's text: its second
// column when the line has two (a name, two spaces, a description), else
// its indentation and list marker. A shell example ("$ ...") continues with
// a backslash, never inside quotes, so it stays a command to copy. A word
// longer than the room left is broken after a comma, slash, equals sign or
// other separator, and only as a last resort inside it.
func WrapText(s string, width int) string {
	if width <= 0 {
		return s
	}
	lines := strings.Split(s, "\n")
	var out []string
	for i := 0; i < len(lines); {
		// A paragraph of prose (lines at the margin) with a line too long
		// is filled again as a whole rather than left ragged.
		j := i
		long := false
		for j < len(lines) && isProse(lines[j]) {
			long = long || utf8.RuneCountInString(strings.TrimRight(lines[j], " ")) > width
			j++
		}
		if long {
			out = append(out, wrapWords(strings.Join(lines[i:j], " "), width)...)
			i = j
			continue
		}
		if j == i {
			j = i + 1
		}
		for _, l := range lines[i:j] {
			out = append(out, wrapLine(strings.TrimRight(l, " "), width)...)
		}
		i = j
	}
	return strings.Join(out, "\n")
}

// isProse reports whether l is a line of a paragraph at the margin: not
// blank, not indented, not a list item or a shell example.
func isProse(l string) bool {
	return strings.TrimSpace(l) != "" && !strings.HasPrefix(l, " ") && !strings.HasPrefix(l, "\t") &&
		!listMarker.MatchString(l) && !shellPrompt.MatchString(l)
}

var (
	secondColumn = regexp.MustCompile(`^\s*\S+(?: \S+)*\s{2,}`)
	listMarker   = regexp.MustCompile(`^\s*(?:[-*•]|\d+[.)])\s+`)
	shellPrompt  = regexp.MustCompile(`^\s*\$ `)
)

func wrapLine(l string, width int) []string {
	if utf8.RuneCountInString(l) <= width {
		return []string{l}
	}
	lead := len(l) - len(strings.TrimLeft(l, " "))
	if shellPrompt.MatchString(l) {
		return wrapShell(l, width)
	}
	hang := lead
	if m := listMarker.FindString(l); m != "" {
		hang = utf8.RuneCountInString(m)
	} else if m := secondColumn.FindString(l); m != "" && utf8.RuneCountInString(m) <= width/2 {
		hang = utf8.RuneCountInString(m)
	}
	if hang > width/2 {
		hang = lead + 4
	}
	// The first line keeps its own text up to the hanging column (a name,
	// a marker), so wrap what follows it.
	head := string([]rune(l)[:hang])
	if strings.TrimSpace(head) == "" || !strings.HasSuffix(head, " ") {
		head, hang = strings.Repeat(" ", lead), lead
	}
	body := strings.TrimLeft(string([]rune(l)[len([]rune(head)):]), " ")
	parts := wrapWords(body, width-len([]rune(head)))
	out := []string{head + parts[0]}
	pad := strings.Repeat(" ", hang)
	for _, p := range parts[1:] {
		out = append(out, pad+p)
	}
	return out
}

// wrapWords splits s into lines of at most width columns at spaces,
// breaking a longer word after a separator, or inside it as a last resort.
func wrapWords(s string, width int) []string {
	width = max(width, 10)
	var lines []string
	cur := ""
	for _, w := range strings.Fields(s) {
		switch {
		case cur == "":
			cur = w
		case utf8.RuneCountInString(cur)+1+utf8.RuneCountInString(w) <= width:
			cur += " " + w
			continue
		default:
			lines = append(lines, cur)
			cur = w
		}
		for utf8.RuneCountInString(cur) > width {
			head, tail := splitWord(cur, width)
			lines = append(lines, head)
			cur = tail
		}
	}
	return append(lines, cur)
}

// splitWord cuts a word longer than width after its last separator that
// fits, else at width.
func splitWord(w string, width int) (string, string) {
	r := []rune(w)
	for i := width - 1; i > 0; i-- {
		if strings.ContainsRune(",/=&|;:.-_", r[i]) {
			return string(r[:i+1]), string(r[i+1:])
		}
	}
	return string(r[:width]), string(r[width:])
}

// wrapShell breaks a shell command line at spaces outside quotes, ending
// each broken line with " \" and indenting the rest.
func wrapShell(l string, width int) []string {
	lead := len(l) - len(strings.TrimLeft(l, " "))
	pad := strings.Repeat(" ", lead+4)
	var words []string
	var quote rune
	start := lead
	for i, c := range l {
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == ' ' && i >= lead:
			if i > start {
				words = append(words, l[start:i])
			}
			start = i + 1
		}
	}
	words = joinShellUnits(append(words, l[start:]))
	var out []string
	cur := strings.Repeat(" ", lead)
	for _, w := range words {
		if w == "" {
			continue
		}
		if strings.TrimSpace(cur) != "" && utf8.RuneCountInString(cur)+1+utf8.RuneCountInString(w)+2 > width {
			out = append(out, cur+" \\")
			cur = pad + w
			continue
		}
		if strings.TrimSpace(cur) != "" {
			cur += " "
		}
		cur += w
	}
	return append(out, cur)
}

// joinShellUnits keeps together what a shell example must not break
// between: a flag and the value after it ("-o json", "--region us-east-1"),
// a redirection or pipe and its target ("> report.json", "| jq"), and a
// trailing comment, which a backslash inside would not continue.
func joinShellUnits(words []string) []string {
	out := make([]string, 0, len(words))
	for i := 0; i < len(words); i++ {
		w := words[i]
		switch {
		case strings.HasPrefix(w, "#"):
			return append(out, strings.Join(words[i:], " "))
		case i+1 >= len(words) || strings.HasPrefix(words[i+1], "#"):
		case w == ">" || w == ">>" || w == "<" || w == "|" || w == "2>":
			w += " " + words[i+1]
			i++
		case strings.HasPrefix(w, "-") && !strings.Contains(w, "=") &&
			!strings.HasPrefix(words[i+1], "-") && !strings.ContainsAny(words[i+1][:1], "|&;<>\\"):
			w += " " + words[i+1]
			i++
		}
		out = append(out, w)
	}
	return out
}
