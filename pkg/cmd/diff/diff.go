// Package diff implements `gpufinops diff OLD.json NEW.json`: what changed
// between two reports.
package diff

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/pkg/report"
	"github.com/gpufinops/gpufinops/pkg/reportdiff"
)

// DiffOptions are the inputs of `gpufinops diff`.
type DiffOptions struct {
	IO *iostreams.IOStreams
	// Open opens a report file; nil means os.Open. "-" is standard input.
	Open func(path string) (io.ReadCloser, error)

	// OldPath and NewPath are the two reports, "-" for standard input.
	OldPath string
	NewPath string
	// Output is table, json or markdown.
	Output string
	// Filter is the --jq or --template filter of the JSON output; nil prints it whole.
	Filter cmdutil.Filter
}

// NewCmdDiff builds the command; runF replaces the run function in tests.
func NewCmdDiff(f *cmdutil.Factory, runF func(*DiffOptions) error) *cobra.Command {
	opts := &DiffOptions{IO: f.IOStreams}
	var output *cmdutil.Output
	cmd := &cobra.Command{
		Use:   "diff OLD.json NEW.json",
		Short: "Show what changed between two JSON reports",
		Long: `Compare two reports written by 'gpufinops analyze -o json': the change in current
cost, optimized cost and savings; the instances added, removed and changed (type,
lifecycle, state, cost); and the recommendations new, resolved and changed.

Both reports are read with the same loader as every other command: a report of a
schema version this gpufinops does not read, or a truncated or invalid file, is
refused with exit code 2. Use "-" for one of the two to read it from standard
input. The markdown output is made for pull-request comments: totals first,
details folded.`,
		Example: `  $ gpufinops diff last-week.json today.json
  $ gpufinops diff base.json head.json -o markdown > comment.md
  $ gpufinops analyze --demo -o json | gpufinops diff baseline.json - -o json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 2 {
				return cmdutil.FlagErrorf("give two reports: gpufinops diff OLD.json NEW.json")
			}
			if args[0] == "-" && args[1] == "-" {
				return cmdutil.FlagErrorf("only one of the two reports can be read from standard input")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.OldPath, opts.NewPath = args[0], args[1]
			opts.Output, opts.Filter = output.Format(), output.Filter
			if runF != nil {
				return runF(opts)
			}
			return diffRun(opts)
		},
	}
	output = cmdutil.AddOutputFlags(cmd, reportdiff.Formats...)
	return cmd
}

func diffRun(opts *DiffOptions) error {
	old, err := load(opts, opts.OldPath)
	if err != nil {
		return err
	}
	new, err := load(opts, opts.NewPath)
	if err != nil {
		return err
	}
	d, err := reportdiff.Compare(old, new, opts.OldPath, opts.NewPath)
	if err != nil {
		return &cmdutil.InputError{Err: err}
	}
	popts := reportdiff.PrintOptions{TTY: opts.IO.IsStdoutTTY(), Width: opts.IO.TerminalWidth()}
	printers := cmdutil.Printers{}
	for _, format := range reportdiff.Formats {
		printers[format] = func(w io.Writer) error { return reportdiff.Write(w, d, format, popts) }
	}
	return cmdutil.Print(context.Background(), opts.IO.Out, opts.Output, opts.Filter, d, printers)
}

// load reads one report; every failure is a one-line InputError naming the file.
func load(opts *DiffOptions, path string) (*report.Report, error) {
	r, err := report.LoadPath(path, opts.IO.In, opts.Open)
	if err != nil {
		return nil, &cmdutil.InputError{Err: err}
	}
	return r, nil
}
