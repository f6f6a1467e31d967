package cmdutil

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"
)

// The output formats. A command supports some of them; AddOutputFlags names
// the ones it does.
const (
	FormatTable    = "table"
	FormatWide     = "wide"
	FormatJSON     = "json"
	FormatYAML     = "yaml"
	FormatCSV      = "csv"
	FormatMarkdown = "markdown"
	FormatHTML     = "html"
)

// OutputFlag is an -o/--output value restricted to a list of formats.
type OutputFlag struct {
	Value   string
	Allowed []string
}

// String implements pflag.Value.
func (o *OutputFlag) String() string { return o.Value }

// Set implements pflag.Value and rejects formats not in Allowed.
func (o *OutputFlag) Set(v string) error {
	if slices.Contains(o.Allowed, v) {
		o.Value = v
		return nil
	}
	return fmt.Errorf("%q is not one of %s", v, strings.Join(o.Allowed, ", "))
}

// Type implements pflag.Value.
func (o *OutputFlag) Type() string { return "format" }

// Output is what the output flags of one command selected: the format and,
// for JSON, a --jq or --template filter.
type Output struct {
	flag      OutputFlag
	jq        string
	jqTimeout time.Duration
	template  string
	// Filter is the compiled --jq or --template; nil prints the whole document.
	Filter Filter
}

// Format is the selected format.
func (o *Output) Format() string { return o.flag.Value }

// AddOutputFlags gives cmd -o/--output with formats (the first is the
// default) and, when json is one of them, --jq, --jq-timeout and --template
// for the JSON document. The flags are checked before the command runs: a
// filter with -o other than json is a usage error, and a filter without -o
// selects json, as gh's --jq and --template do.
func AddOutputFlags(cmd *cobra.Command, formats ...string) *Output {
	o := &Output{flag: OutputFlag{Value: formats[0], Allowed: formats}}
	cmd.Flags().VarP(&o.flag, "output", "o", "output format: "+strings.Join(formats, "|"))
	_ = cmd.RegisterFlagCompletionFunc("output", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return formats, cobra.ShellCompDirectiveNoFileComp
	})
	if !slices.Contains(formats, FormatJSON) {
		return o
	}
	cmd.Flags().StringVarP(&o.jq, "jq", "q", "", "filter the JSON output with a jq expression (implies -o json)")
	cmd.Flags().DurationVar(&o.jqTimeout, "jq-timeout", DefaultJQTimeout, "stop a --jq program that runs longer than this")
	cmd.Flags().StringVarP(&o.template, "template", "t", "", "format the JSON output with a Go template (implies -o json; see docs/output.md)")
	cmd.MarkFlagsMutuallyExclusive("jq", "template")
	check := cmd.PreRunE
	cmd.PreRunE = func(c *cobra.Command, args []string) error {
		if err := o.check(c.Flags().Changed("output")); err != nil {
			return err
		}
		if check != nil {
			return check(c, args)
		}
		return nil
	}
	return o
}

// check compiles the filter; explicit says -o was given.
func (o *Output) check(explicit bool) error {
	name, expr := "--jq", o.jq
	if o.template != "" {
		name, expr = "--template", o.template
	}
	if expr == "" {
		return nil
	}
	if o.flag.Value != FormatJSON {
		if explicit {
			return FlagErrorf("%s needs -o json (the output is %s)", name, o.flag.Value)
		}
		o.flag.Value = FormatJSON
	}
	if o.template != "" {
		t, err := CompileTemplate(o.template)
		if err != nil {
			return err
		}
		o.Filter = t
		return nil
	}
	if err := CheckJQTimeout(o.jqTimeout); err != nil {
		return err
	}
	q, err := CompileJQ(o.jq)
	if err != nil {
		return err
	}
	q.Timeout = o.jqTimeout
	o.Filter = q
	return nil
}

// Quiet reports whether format is for machines or files rather than a
// person at a table: then a scan shows no progress.
func Quiet(format string) bool { return format != FormatTable && format != FormatWide }

// A Filter turns a command's JSON document into what is printed: --jq or
// --template.
type Filter interface {
	Run(ctx context.Context, w io.Writer, data []byte) error
}

// A Printer writes a command's output in one format.
type Printer func(w io.Writer) error

// Printers are a command's printers by format. JSON and YAML need none: Print
// writes the document; a command whose document has its own encoder (the
// fleet file, the streamed report) gives a "json" or "yaml" printer instead.
type Printers map[string]Printer

// Print writes the output in format: the document doc as JSON (through
// filter when it is not nil) or YAML, or the command's printer for the
// format. A format without a printer is an error of the command.
func Print(ctx context.Context, w io.Writer, format string, filter Filter, doc any, p Printers) error {
	if format == FormatJSON && filter != nil {
		var buf bytes.Buffer
		if err := jsonPrinter(doc, p)(&buf); err != nil {
			return err
		}
		return filter.Run(ctx, w, buf.Bytes())
	}
	switch pr := p[format]; {
	case pr != nil:
		return pr(w)
	case format == FormatJSON:
		return WriteJSON(w, doc)
	case format == FormatYAML && doc != nil:
		return WriteYAML(w, doc)
	}
	return fmt.Errorf("internal error: no %s printer", format)
}

func jsonPrinter(doc any, p Printers) Printer {
	if pr := p[FormatJSON]; pr != nil {
		return pr
	}
	return func(w io.Writer) error { return WriteJSON(w, doc) }
}

// WriteJSON writes v indented by two spaces, with a final newline and
// without escaping <, > and &: the JSON form of every command.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// WriteYAML writes v's JSON form as YAML, so that both name fields alike.
func WriteYAML(w io.Writer, v any) error {
	j, err := json.Marshal(v)
	if err != nil {
		return err
	}
	y, err := yaml.JSONToYAML(j)
	if err != nil {
		return err
	}
	_, err = w.Write(y)
	return err
}
