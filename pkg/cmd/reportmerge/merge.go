// Package reportmerge implements `gpufinops report merge A.json B.json …`:
// the partial reports of a sharded scan (analyze --shard I/N) joined into
// one.
package reportmerge

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/pkg/report"
)

// MergeOptions are the inputs of `gpufinops report merge`.
type MergeOptions struct {
	IO *iostreams.IOStreams
	// Open opens a report file; nil means os.Open.
	Open func(path string) (io.ReadCloser, error)
	// Paths are the partial reports.
	Paths []string
	// Format is one of report.Formats.
	Format string
	// Filter is the --jq or --template filter of the JSON output; nil prints it whole.
	Filter cmdutil.Filter
}

// NewCmdReport builds `gpufinops report`, the parent of merge; runF
// replaces merge's run function in tests.
func NewCmdReport(f *cmdutil.Factory, runF func(*MergeOptions) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "report",
		Short: "Work on JSON reports: merge the parts of a sharded scan",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(NewCmdMerge(f, runF))
	return cmd
}

// NewCmdMerge builds `gpufinops report merge`.
func NewCmdMerge(f *cmdutil.Factory, runF func(*MergeOptions) error) *cobra.Command {
	opts := &MergeOptions{IO: f.IOStreams}
	var out *cmdutil.Output
	cmd := &cobra.Command{
		Use:   "merge PART.json…",
		Short: "Merge the partial reports of 'analyze --shard I/N' into one",
		Long: `Merge reads the partial JSON reports of a sharded scan, one per shard 1/N … N/N,
and writes the whole report: every instance, recommendation and warning, the
summary and the cost allocation summed from them, checked to add up.

It refuses, with exit code 2 and the file at fault: a file that is not a report
or not partial, a part that does not add up by itself (changed or cut after
analyze wrote it), a shard outside 1/N … N/N, given twice or missing, parts of
different shard counts,
schema major versions, currencies, policies or price catalogs, and an instance
in two parts. The fleet-wide sections (sharing and commitment plans, AI metrics,
tag audit summary) are left out of the merge; their recommendations stay.`,
		Example: `  $ gpufinops report merge part-*.json -o json > report.json
  $ gpufinops report merge part-1.json part-2.json part-3.json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmdutil.FlagErrorf("give the partial reports: gpufinops report merge PART.json…")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Paths = args
			opts.Format, opts.Filter = out.Format(), out.Filter
			if runF != nil {
				return runF(opts)
			}
			return mergeRun(opts)
		},
	}
	out = cmdutil.AddOutputFlags(cmd, report.Formats...)
	return cmd
}

func mergeRun(opts *MergeOptions) error {
	parts := make([]report.Part, 0, len(opts.Paths))
	for _, p := range opts.Paths {
		r, err := load(opts, p)
		if err != nil {
			return err
		}
		parts = append(parts, report.Part{Name: p, Report: r})
	}
	merged, err := report.Merge(parts)
	if err != nil {
		return &cmdutil.InputError{Err: err}
	}
	if err := merged.Verify(); err != nil {
		return &cmdutil.InputError{Err: fmt.Errorf("the merged report: %w", err)}
	}
	popts := report.PrintOptions{TTY: opts.IO.IsStdoutTTY(), Width: opts.IO.TerminalWidth()}
	printers := cmdutil.Printers{}
	for _, format := range report.Formats {
		printers[format] = func(w io.Writer) error { return report.Write(w, merged, format, popts) }
	}
	return cmdutil.Print(context.Background(), opts.IO.Out, opts.Format, opts.Filter, nil, printers)
}

// load reads one report; every failure is a one-line InputError naming the file.
func load(opts *MergeOptions, path string) (*report.Report, error) {
	r, err := report.LoadPath(path, opts.IO.In, opts.Open)
	if err != nil {
		return nil, &cmdutil.InputError{Err: err}
	}
	return r, nil
}
