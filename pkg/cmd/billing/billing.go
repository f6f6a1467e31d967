// Package billing implements `gpufinops billing`: what a FOCUS billing
// export says the GPU instances cost (`summary`).
package billing

import (
	"github.com/spf13/cobra"

	"github.com/gpufinops/gpufinops/pkg/cmdutil"
)

// NewCmdBilling builds the `billing` noun and its verbs.
func NewCmdBilling(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "billing <command>",
		Short: "Read FOCUS billing exports: what the GPU instances really cost",
		Long: `Read a FOCUS billing export (AWS Data Exports, Azure Cost Management exports,
the GCP FOCUS export; CSV, gzip CSV or Parquet, a file or a folder) and total
its GPU instance charges per resource. See docs/billing.md.`,
		Example: `  $ gpufinops billing summary --billing focus.csv
  $ gpufinops billing summary --billing ./exports/ --start 2025-01-01 --end 2025-02-01 -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(NewCmdSummary(f, nil))
	return cmd
}
