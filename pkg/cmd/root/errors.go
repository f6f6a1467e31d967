package root

import (
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/suggest"
)

// Cobra's flag-group errors, to be put in plain words.
var (
	exclusiveGroup = regexp.MustCompile(`if any flags in the group \[([^\]]*)\] are set none of the others can be; \[([^\]]*)\] were all set`)
	togetherGroup  = regexp.MustCompile(`if any flags in the group \[([^\]]*)\] are set they must all be set; missing \[([^\]]*)\]`)
	oneOfGroup     = regexp.MustCompile(`at least one of the flags in the group \[([^\]]*)\] is required`)
)

// humanize rewrites cobra's raw usage errors in plain words: mutually
// exclusive flags, flags needed together and one-of groups. Other errors
// pass unchanged.
func humanize(err error) error {
	msg := err.Error()
	flags := func(list string) []string {
		var out []string
		for _, f := range strings.Fields(list) {
			out = append(out, "--"+f)
		}
		return out
	}
	switch {
	case exclusiveGroup.MatchString(msg):
		m := exclusiveGroup.FindStringSubmatch(msg)
		set, group := flags(m[2]), flags(m[1])
		return cmdutil.FlagErrorf("%s cannot be used together: give only one of %s", orList(set, "and"), orList(group, "or"))
	case togetherGroup.MatchString(msg):
		m := togetherGroup.FindStringSubmatch(msg)
		missing, group := flags(m[2]), flags(m[1])
		return cmdutil.FlagErrorf("%s go together: add %s", orList(group, "and"), orList(missing, "and"))
	case oneOfGroup.MatchString(msg):
		m := oneOfGroup.FindStringSubmatch(msg)
		return cmdutil.FlagErrorf("give one of %s", orList(flags(m[1]), "or"))
	}
	return err
}

// orList joins "a", "a and b", "a, b and c" with word as the last joint.
func orList(items []string, word string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " " + word + " " + items[len(items)-1]
}

// unknownCommand is the error for an argument that names no subcommand of
// cmd, with the subcommands it is close to.
func unknownCommand(cmd *cobra.Command, arg string) error {
	var names []string
	for _, c := range cmd.Commands() {
		if !c.IsAvailableCommand() && c.Name() != "help" {
			continue
		}
		names = append(names, c.Name())
		names = append(names, c.Aliases...)
	}
	msg := fmt.Sprintf("unknown command %q for %q", arg, cmd.CommandPath())
	if s := suggest.Phrase(arg, names, suggest.Quoted); s != "" {
		msg += s
	} else if len(names) > 0 {
		msg += "; its commands are " + orList(names, "and")
	}
	return cmdutil.FlagErrorf("%s", msg)
}

// suggestSubcommands makes every command with subcommands, at every level,
// answer an unknown subcommand with "did you mean" (cobra suggests only at
// the top, and only in its own words) and show its help when given none.
func suggestSubcommands(cmd *cobra.Command) {
	for _, c := range cmd.Commands() {
		suggestSubcommands(c)
	}
	if !cmd.HasSubCommands() {
		return
	}
	cmd.Args = func(c *cobra.Command, args []string) error {
		if len(args) > 0 {
			return unknownCommand(c, args[0])
		}
		return nil
	}
	if cmd.Run == nil && cmd.RunE == nil {
		cmd.RunE = func(c *cobra.Command, _ []string) error { return c.Help() }
	}
}

// fixer is an error that carries a remedy (providers.FixError).
type fixer interface {
	error
	Fix() string
	Detail() error
}

// printFix writes the remedy attached to err, if any, and with debug the
// detail it replaced (the SDK's message).
func printFix(w io.Writer, err error, debug bool) {
	var fe fixer
	if !errors.As(err, &fe) {
		return
	}
	if fix := fe.Fix(); fix != "" {
		fmt.Fprintln(w, fix)
	}
	if d := fe.Detail(); d != nil && debug {
		fmt.Fprintf(w, "detail: %v\n", d)
	}
}
