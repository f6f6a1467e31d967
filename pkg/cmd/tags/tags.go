// Package tags implements `gpufinops tags`: the tag audit of a fleet (`audit`)
// with the spend each missing or invalid tag leaves unattributed, the cost by
// team, project, workload type and environment, and the AI cost metrics.
package tags

import (
	"github.com/spf13/cobra"

	"github.com/gpufinops/gpufinops/pkg/cmdutil"
)

// NewCmdTags builds the `tags` noun and its verbs.
func NewCmdTags(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tags <command>",
		Short: "Audit the tags that attribute GPU spend to teams, projects and workloads",
		Long: `Check every GPU instance against the tag policy (Team, Project, Environment,
WorkloadType, ModelName, CostCenter, AutoShutdown by default), show the monthly
spend that missing or invalid tags leave unattributed, allocate the cost by
team, project, workload type and environment, and compute AI cost metrics:
GPU efficiency, cost per busy GPU-hour, per 1M tokens, per 1,000 requests and
per training run. See docs/governance.md.`,
		Example: `  $ gpufinops tags audit --demo
  $ gpufinops tags audit --fleet fleet.yaml --require Team,Project,CostCenter -o csv`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(NewCmdAudit(f, nil))
	return cmd
}
