// Package catalog implements `gpufinops catalog`: `update` fetches current
// list prices from the clouds' price APIs into the overlay file every command
// lays over the embedded catalog, and `status` says where each cloud's prices
// come from, how old they are and what they cover.
package catalog

import (
	"github.com/spf13/cobra"

	"github.com/gpufinops/gpufinops/pkg/cmdutil"
)

// NewCmdCatalog builds the `catalog` noun and its verbs.
func NewCmdCatalog(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "catalog <command>",
		Short: "Refresh the price catalog from the clouds' price APIs and show where prices come from",
		Long: `gpufinops prices every instance from a dated catalog built into the binary (the
embedded snapshot). 'catalog update' fetches current list prices (on-demand, spot
and commitment rates) from the clouds' public price APIs into an overlay file in
your cache folder, which every command then lays over the snapshot: an
overlay price wins over the snapshot's for the same cloud, region and type, and
a live scan's own prices win over both. 'catalog status' shows each cloud's
sources, their age and coverage; 'catalog diff' what changed between two catalogs.
See docs/catalog-update.md.`,
		Example: `  $ gpufinops catalog update --provider aws --region us-east-1,us-west-2
  $ gpufinops catalog status
  $ gpufinops catalog diff`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(NewCmdUpdate(f, nil), NewCmdStatus(f, nil), NewCmdDiff(f, nil))
	return cmd
}
