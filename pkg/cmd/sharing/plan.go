package sharing

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"
	"github.com/spf13/cobra"

	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/config"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/pkg/money"
	"github.com/gpufinops/gpufinops/pkg/recommend"
	"github.com/gpufinops/gpufinops/pkg/sharing"
	"github.com/gpufinops/gpufinops/pkg/tableprinter"
	"github.com/gpufinops/gpufinops/pkg/text"
	"github.com/gpufinops/gpufinops/pricing"
)

// PlanOptions are the inputs of `gpufinops sharing plan`.
type PlanOptions struct {
	IO      *iostreams.IOStreams
	Config  func() (*config.Config, error)
	Catalog func() (pricing.Catalog, error)
	Fleet   func(path string, demo bool) (*fleet.Fleet, error)
	// Scan reads the clouds live (--provider); Ctx bounds it.
	Scan cmdutil.ScanFunc
	Ctx  context.Context

	Input cmdutil.FleetFlags
	// Format is table, json or yaml (the GPU Operator manifests).
	Format string
	// Filter is the --jq or --template filter of the JSON output; nil prints it whole.
	Filter cmdutil.Filter
}

// NewCmdPlan builds `sharing plan`; runF replaces the run function in tests.
func NewCmdPlan(f *cmdutil.Factory, runF func(*PlanOptions) error) *cobra.Command {
	opts := &PlanOptions{IO: f.IOStreams, Config: f.Config, Catalog: f.Catalog, Fleet: f.Fleet, Scan: f.Scan}
	var out *cmdutil.Output
	cmd := &cobra.Command{
		Use:   "plan (--fleet FILE | --demo)",
		Short: "Pack lightly used GPUs onto fewer GPUs by time-slicing or MIG",
		Long: `Plan finds running single-GPU instances with a development workload (GPU p95
below 40 %) or light inference (below 30 %) and packs them, per provider,
region, account and instance type, onto as few of their own GPUs as the
measured load and memory peaks allow. The instances that are left without work
can stop; their monthly cost is the saving.

Inference on MIG-capable GPUs (A100, H100, H200, B200) gets isolated MIG
partitions; everything else time-slices. The plan is computed after the
engine's earlier recommendations (idle-stop, schedules, rightsizing), so an
instance stopped or moved to another GPU by them is not a candidate.

-o yaml prints the NVIDIA GPU Operator ConfigMaps (device plugin time-slicing
config, MIG manager config) with the node labels to set as annotations; see
docs/sharing.md for how to apply them.`,
		Example: `  $ gpufinops sharing plan --demo
  $ gpufinops sharing plan --fleet fleet.yaml -o json
  $ gpufinops sharing plan --fleet fleet.yaml -o yaml > gpu-sharing.yaml`,
		Args: cmdutil.FleetArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Ctx = cmd.Context()
			opts.Format, opts.Filter = out.Format(), out.Filter
			if err := opts.Input.Validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return planRun(opts)
		},
	}
	cmdutil.AddFleetFlags(cmd, &opts.Input)
	out = cmdutil.AddOutputFlags(cmd, cmdutil.FormatTable, cmdutil.FormatJSON, cmdutil.FormatYAML)
	return cmd
}

func planRun(opts *PlanOptions) (err error) {
	opts.Input.Quiet = cmdutil.Quiet(opts.Format)
	in, err := cmdutil.ReadFleet(opts.Ctx, opts.Config, opts.Catalog, opts.Fleet, opts.Scan, opts.Input)
	if err != nil {
		return err
	}
	defer in.Finish(opts.IO.ErrOut, &err)
	cfg, cat, fl := in.Config, in.Catalog, in.Fleet
	plan := recommend.Run(fl, cat, cfg.Policy)
	sp := plan.Sharing

	return cmdutil.Print(opts.Ctx, opts.IO.Out, opts.Format, opts.Filter, sharing.NewDocument(sp), cmdutil.Printers{
		// -o yaml is the GPU Operator's manifests, not the plan.
		cmdutil.FormatYAML: func(w io.Writer) error {
			b, err := sharing.Manifests(sp)
			if err != nil {
				return err
			}
			if _, err := w.Write(b); err != nil {
				return err
			}
			writeSummary(opts.IO, sp)
			return nil
		},
		cmdutil.FormatTable: func(w io.Writer) error {
			if err := writeTable(w, opts.IO.IsStdoutTTY(), opts.IO.TerminalWidth(), sp); err != nil {
				return err
			}
			writeSummary(opts.IO, sp)
			return nil
		},
	})
}

func writeTable(w io.Writer, tty bool, width int, sp sharing.Plan) error {
	if len(sp.Groups) == 0 {
		return nil
	}
	t := tableprinter.New(w, tty, "mode", "provider", "account", "region", "instance type", "gpu", "host",
		"tenants", "gpu load", "gpu memory", "layout", "frees", "freed monthly")
	t.AlignRight(8, 9, 12)
	// On a terminal the host, what it takes in and what that frees stay:
	// the host loses its middle at most, the tenants and the machines freed
	// wrap onto continuation lines and are never cut.
	t.SetWidth(width)
	t.Key(6, 7, 11, 12)
	t.TruncateMiddle(6, 12)
	t.WrapColumn(7, 14)
	t.WrapColumn(11, 12)
	t.WrapColumn(10, 10)
	t.DropOrder(2, 1, 5, 3, 0, 9, 4, 10, 8, 11)
	for _, g := range sp.Groups {
		for _, h := range g.Hosts {
			var frees []string
			freed := decimal.Zero
			for _, m := range g.Moves {
				if m.Host == h.InstanceID {
					frees = append(frees, m.InstanceID)
					freed = freed.Add(m.MonthlyCost)
				}
			}
			t.AddRow(string(g.Mode), string(g.Provider), dash(g.Account), g.Region, g.InstanceType, g.GPUModel, h.InstanceID,
				strings.Join(h.Tenants, " "), money.PercentFloat(h.GPULoadPercent),
				num(h.GPUMemoryGiB)+" of "+num(g.GPUMemoryGiB)+" GiB",
				layoutText(g, h), strings.Join(frees, " "), money.Cell(freed, money.USD, tty))
		}
	}
	return t.Render()
}

// layoutText is "4 replicas" for time-slicing or the MIG devices, largest first.
func layoutText(g sharing.Group, h sharing.Host) string {
	if g.Mode != sharing.MIG {
		return fmt.Sprintf("%d replicas", g.Replicas)
	}
	names := make([]string, 0, len(h.MIGDevices))
	for n := range h.MIGDevices {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int {
		return cmp.Or(cmp.Compare(computeSlices(b), computeSlices(a)), cmp.Compare(a, b))
	})
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%d×%s", h.MIGDevices[n], n)
	}
	return strings.Join(parts, " ")
}

// computeSlices reads a MIG profile's leading compute slice count ("3g.40gb" → 3).
func computeSlices(profile string) int {
	n, _ := strconv.Atoi(strings.SplitN(profile, "g", 2)[0])
	return n
}

// writeSummary tells what the plan frees and its notes, on stderr.
func writeSummary(ios *iostreams.IOStreams, sp sharing.Plan) {
	freed := 0
	for _, g := range sp.Groups {
		freed += len(g.Freed)
	}
	if freed == 0 {
		ios.Notef("No GPU can be shared: nothing to free.\n")
	} else {
		ios.Notef("Frees %s: %s a month.\n", text.Plural(freed, "instance"), money.Inline(sp.FreedMonthly, pricing.Currency, ios.IsStderrTTY()))
	}
	for _, n := range sp.Notes {
		ios.Notef("note: %s\n", n)
	}
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
