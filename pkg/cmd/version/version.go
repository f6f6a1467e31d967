// Package version implements `gpufinops version`.
package version

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/gpufinops/gpufinops/pkg/build"
	"github.com/gpufinops/gpufinops/pkg/cmdutil"
)

// NewCmdVersion prints the build and the catalog's data sources.
func NewCmdVersion(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, build and catalog data dates",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := f.IOStreams.Out
			fmt.Fprintf(out, "gpufinops %s", build.Version)
			if build.Commit != "" {
				fmt.Fprintf(out, " (%s", build.Commit)
				if build.Date != "" {
					fmt.Fprintf(out, ", %s", build.Date)
				}
				fmt.Fprint(out, ")")
			}
			fmt.Fprintf(out, " %s/%s %s\n", runtime.GOOS, runtime.GOARCH, runtime.Version())
			cat, err := f.Catalog()
			if err != nil {
				return err
			}
			fmt.Fprintln(out, "catalog:")
			for _, s := range cat.Sources() {
				fmt.Fprintf(out, "  %-28s as of %s  %s\n", s.Name, s.AsOf, s.Origin)
			}
			return nil
		},
	}
}
