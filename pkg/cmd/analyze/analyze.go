// Package analyze implements `gpufinops analyze`: price a fleet, run the
// engine and print the report.
package analyze

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpufinops/gpufinops/pkg/build"
	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/config"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/pkg/recommend"
	"github.com/gpufinops/gpufinops/pkg/report"
	"github.com/gpufinops/gpufinops/pricing"
)

// AnalyzeOptions are the inputs of `gpufinops analyze`.
type AnalyzeOptions struct {
	IO      *iostreams.IOStreams
	Config  func() (*config.Config, error)
	Catalog func() (pricing.Catalog, error)
	Fleet   func(path string, demo bool) (*fleet.Fleet, error)
	// Scan reads the clouds live (--provider); Ctx bounds it.
	Scan cmdutil.ScanFunc
	Ctx  context.Context
	Now  func() time.Time

	Input  cmdutil.FleetFlags
	Format string

	// Policy overrides from flags; nil when the flag was not given.
	IdleThreshold  *float64
	CommitmentTerm *string
}

// NewCmdAnalyze builds the command; runF replaces the run function in tests.
func NewCmdAnalyze(f *cmdutil.Factory, runF func(*AnalyzeOptions) error) *cobra.Command {
	opts := &AnalyzeOptions{IO: f.IOStreams, Config: f.Config, Catalog: f.Catalog, Fleet: f.Fleet, Scan: f.Scan, Now: f.Now}
	var idle float64
	var term string
	var out *cmdutil.OutputFlag
	cmd := &cobra.Command{
		Use:   "analyze (--fleet FILE | --demo)",
		Short: "Recommend how to cut a GPU fleet's spend, with the saving of each change",
		Long: `Analyze reads a fleet snapshot, prices every instance from the catalog, and
applies the rules in order (idle-stop and schedules, rightsizing, spot,
commitments) so that each saving is computed on what the earlier ones left and
the total is the sum of its parts. Every recommendation carries its evidence:
the metrics, the thresholds and the prices used (see -o json).

Thresholds come from the policy (docs/rules.md); override them in the config
file, with GPUFINOPS_POLICY_* variables, or with the flags below.`,
		Example: `  $ gpufinops analyze --demo
  $ gpufinops analyze --fleet fleet.yaml -o json > report.json
  $ gpufinops inventory --demo -o json | gpufinops analyze --fleet - -o markdown
  $ gpufinops analyze --demo --idle-threshold 10 --commitment-term 3y`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Ctx = cmd.Context()
			opts.Format = out.Value
			if err := opts.Input.Validate(); err != nil {
				return err
			}
			if cmd.Flags().Changed("idle-threshold") {
				if idle < 0 || idle > 100 {
					return cmdutil.FlagErrorf("--idle-threshold: %v is outside 0–100", idle)
				}
				opts.IdleThreshold = &idle
			}
			if cmd.Flags().Changed("commitment-term") {
				if term != "1y" && term != "3y" {
					return cmdutil.FlagErrorf("--commitment-term: %q is not 1y or 3y", term)
				}
				opts.CommitmentTerm = &term
			}
			if runF != nil {
				return runF(opts)
			}
			return analyzeRun(opts)
		},
	}
	cmdutil.AddFleetFlags(cmd, &opts.Input)
	out = cmdutil.AddOutputFlag(cmd, report.Formats...)
	def := recommend.DefaultPolicy()
	cmd.Flags().Float64Var(&idle, "idle-threshold", def.Idle.GPUPercent, "GPU busy % (p95 of the busiest GPU) below which an instance is idle")
	cmd.Flags().StringVar(&term, "commitment-term", def.Commitment.Term, "commitment term to recommend: 1y or 3y")
	return cmd
}

func analyzeRun(opts *AnalyzeOptions) (err error) {
	in, err := cmdutil.ReadFleet(opts.Ctx, opts.Config, opts.Catalog, opts.Fleet, opts.Scan, opts.Input)
	if err != nil {
		return err
	}
	defer in.Finish(opts.IO.ErrOut, &err)
	cat, fl := in.Catalog, in.Fleet
	policy := in.Config.Policy
	if opts.IdleThreshold != nil {
		policy.Idle.GPUPercent = *opts.IdleThreshold
	}
	if opts.CommitmentTerm != nil {
		policy.Commitment.Term = *opts.CommitmentTerm
	}
	source := opts.Input.Path
	if opts.Input.Demo {
		source = "demo"
	}

	plan := recommend.Run(fl, cat, policy)
	rep := report.New(plan, report.Meta{
		GeneratedAt: opts.Now(),
		ToolVersion: build.Version,
		FleetName:   fl.Metadata.Name,
		FleetSource: source,
		Catalog:     cat.Sources(),
	})
	popts := report.PrintOptions{TTY: opts.IO.IsStdoutTTY(), Width: opts.IO.TerminalWidth()}
	if opts.IO.ColorEnabled() {
		popts.Color = opts.IO.ColorScheme()
	}
	return report.Write(opts.IO.Out, rep, opts.Format, popts)
}
