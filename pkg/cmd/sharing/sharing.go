// Package sharing implements `gpufinops sharing`: GPU sharing plans (`plan`)
// that pack lightly used GPUs onto fewer physical GPUs by time-slicing or MIG,
// with the NVIDIA GPU Operator manifests that apply them.
package sharing

import (
	"github.com/spf13/cobra"

	"github.com/gpufinops/gpufinops/pkg/cmdutil"
)

// NewCmdSharing builds the `sharing` noun and its verbs.
func NewCmdSharing(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sharing <command>",
		Short: "Plan GPU sharing (time-slicing, MIG) for notebooks and light inference",
		Long: `Find single-GPU instances that use little of their GPU (development notebooks,
light inference) and pack them onto fewer physical GPUs with NVIDIA time-slicing
or MIG partitions, freeing the rest. See docs/sharing.md.`,
		Example: `  $ gpufinops sharing plan --demo
  $ gpufinops sharing plan --fleet fleet.yaml -o yaml | kubectl apply -f -`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(NewCmdPlan(f, nil))
	return cmd
}
