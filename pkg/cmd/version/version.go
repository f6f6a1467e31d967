// Package version implements `gpufinops version`.
package version

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/gpufinops/gpufinops/pkg/build"
	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/pkg/tableprinter"
	"github.com/gpufinops/gpufinops/pricing"
)

// VersionOptions are the inputs of `gpufinops version`.
type VersionOptions struct {
	IO      *iostreams.IOStreams
	Catalog func() (pricing.Catalog, error)
}

// NewCmdVersion prints the build and the catalog's data sources.
func NewCmdVersion(f *cmdutil.Factory) *cobra.Command {
	opts := &VersionOptions{IO: f.IOStreams, Catalog: f.Catalog}
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, build and catalog data dates",
		Args:  cobra.NoArgs,
		RunE:  func(*cobra.Command, []string) error { return versionRun(opts) },
	}
}

func versionRun(opts *VersionOptions) error {
	out := opts.IO.Out
	fmt.Fprintf(out, "gpufinops %s", build.Version)
	if build.Commit != "" {
		fmt.Fprintf(out, " (%s", build.Commit)
		if build.Date != "" {
			fmt.Fprintf(out, ", %s", build.Date)
		}
		fmt.Fprint(out, ")")
	}
	fmt.Fprintf(out, " %s/%s %s\n", runtime.GOOS, runtime.GOARCH, runtime.Version())
	cat, err := opts.Catalog()
	if err != nil {
		return err
	}
	fmt.Fprintln(out, "catalog:")
	t := tableprinter.New(out, opts.IO.IsStdoutTTY(), "data", "as of", "source")
	t.SetWidth(opts.IO.TerminalWidth())
	t.Key(0, 1)
	t.Truncate(0, 16)
	t.Truncate(2, 12)
	for _, s := range cat.Sources() {
		t.AddRow(s.Name, s.AsOf, s.Origin)
	}
	return t.Render()
}
