// Package inventory implements `gpufinops inventory`: the fleet snapshot with
// its hardware completed from the catalog, as a table or in the file format.
package inventory

import (
	"context"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/config"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/pkg/tableprinter"
	"github.com/gpufinops/gpufinops/pricing"
)

// InventoryOptions are the inputs of `gpufinops inventory`.
type InventoryOptions struct {
	IO      *iostreams.IOStreams
	Fleet   func(path string, demo bool) (*fleet.Fleet, error)
	Catalog func() (pricing.Catalog, error)
	Config  func() (*config.Config, error)
	// Scan reads the clouds live (--provider); Ctx bounds it.
	Scan cmdutil.ScanFunc
	Ctx  context.Context

	Input cmdutil.FleetFlags
	// Output is table, wide, json or yaml.
	Output string
	// Filter is the --jq or --template filter of the JSON output; nil prints it whole.
	Filter cmdutil.Filter
}

// NewCmdInventory builds the command; runF replaces the run function in tests.
func NewCmdInventory(f *cmdutil.Factory, runF func(*InventoryOptions) error) *cobra.Command {
	opts := &InventoryOptions{IO: f.IOStreams, Fleet: f.Fleet, Catalog: f.Catalog, Config: f.Config, Scan: f.Scan}
	var output *cmdutil.Output
	cmd := &cobra.Command{
		Use:   "inventory {--fleet FILE | --demo} [flags]",
		Short: "List the GPU instances of a fleet snapshot",
		Long: `List the GPU instances of a fleet snapshot, with GPU model, count and memory,
vCPUs and host memory filled in from the catalog by instance type.

The table shows each instance's billed hours per month (730 is 24/7) and, as
"gpu util", the 95th percentile of its busiest GPU's utilization in percent over
the observed window (- when the snapshot has none). -o wide adds account, zone, hardware, workload
and tags. -o json and -o yaml write the completed snapshot in the fleet file
format (docs/fleet-format.md), which every command reads back with --fleet.
A scan that missed a region or a metrics source records it in the snapshot's
metadata.warnings, exits 3, and a report of the snapshot repeats it.`,
		Example: `  $ gpufinops inventory --demo
  $ gpufinops inventory --fleet fleet.yaml -o wide
  $ gpufinops inventory --demo -o json | gpufinops analyze --fleet -`,
		Args: cmdutil.FleetArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Ctx = cmd.Context()
			opts.Output, opts.Filter = output.Format(), output.Filter
			if err := opts.Input.Validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return inventoryRun(opts)
		},
	}
	cmdutil.AddFleetFlags(cmd, &opts.Input)
	output = cmdutil.AddOutputFlags(cmd, cmdutil.FormatTable, cmdutil.FormatWide, cmdutil.FormatJSON, cmdutil.FormatYAML)
	return cmd
}

func inventoryRun(opts *InventoryOptions) (err error) {
	opts.Input.Quiet = cmdutil.Quiet(opts.Output)
	in, err := cmdutil.ReadFleet(opts.Ctx, opts.Config, opts.Catalog, opts.Fleet, opts.Scan, opts.Input)
	if err != nil {
		return err
	}
	defer in.Finish(opts.IO.ErrOut, &err)
	f := in.Fleet
	table := func(wide bool) cmdutil.Printer {
		return func(io.Writer) error {
			if len(f.Instances) == 0 {
				opts.IO.Notef("%s has no instances\n", opts.Input.SourceName())
				return nil
			}
			return writeTable(opts, f, wide)
		}
	}
	// The document is the snapshot in the fleet file format, versioned by
	// its apiVersion and kind, which every command reads back.
	return cmdutil.Print(opts.Ctx, opts.IO.Out, opts.Output, opts.Filter, f, cmdutil.Printers{
		cmdutil.FormatJSON:  func(w io.Writer) error { return fleet.Write(w, f, fleet.FormatJSON) },
		cmdutil.FormatYAML:  func(w io.Writer) error { return fleet.Write(w, f, fleet.FormatYAML) },
		cmdutil.FormatTable: table(false),
		cmdutil.FormatWide:  table(true),
	})
}

func writeTable(opts *InventoryOptions, f *fleet.Fleet, wide bool) error {
	// Headers are words only: the terminal renderer splits them at punctuation
	// and digits ("p95" would print as "P 95").
	headers := []string{"id", "provider", "region", "type", "gpu", "lifecycle", "state", "hours per month", "gpu util"}
	right := []int{7, 8}
	if wide {
		headers = []string{"id", "provider", "account", "region", "zone", "type", "gpu", "GiB per GPU", "vCPUs", "RAM GiB",
			"lifecycle", "state", "hours per month", "gpu util", "workload", "tags"}
		right = []int{7, 8, 9, 12, 13}
	}
	t := tableprinter.New(opts.IO.Out, opts.IO.IsStdoutTTY(), headers...)
	t.AlignRight(right...)
	if !wide {
		// On a terminal: the ID loses its middle, and only beyond an AWS
		// instance ID's 19 characters; the hours, the provider (the region
		// tells it), the lifecycle and the state give way first.
		t.SetWidth(opts.IO.TerminalWidth())
		t.Key(0, 8)
		t.TruncateMiddle(0, 19)
		t.Truncate(2, 14)
		t.TruncateMiddle(3, 12)
		t.Truncate(4, 10)
		t.DropOrder(7, 1, 5, 6)
	}
	var gpus float64
	unknown := f.Metadata.UnknownUtilization()
	for _, in := range f.Instances {
		gpus += in.GPU.Count
		p95 := "-"
		if s := in.Utilization.Summarize(); s != nil {
			p95 = number(s.GPU.P95)
		} else if _, ok := unknown[in.ID]; ok {
			p95 = fleet.UtilizationUnknown
		}
		hours := number(in.MonthlyHours())
		if !wide {
			t.AddRow(in.ID, string(in.Provider), in.Region, in.InstanceType, gpu(in.GPU), string(in.Lifecycle),
				string(in.State), hours, p95)
			continue
		}
		t.AddRow(in.ID, string(in.Provider), dash(in.Account), in.Region, dash(in.Zone), in.InstanceType, gpu(in.GPU),
			number(in.GPU.MemoryGiB), number(in.VCPUs), number(in.MemoryGiB), string(in.Lifecycle), string(in.State),
			hours, p95, workload(in.Workload), tags(in.Tags))
	}
	if err := t.Render(); err != nil {
		return err
	}
	if opts.IO.IsStdoutTTY() {
		legend := "- = no data"
		if len(unknown) > 0 {
			legend += ", unknown = its metrics source failed"
		}
		opts.IO.Notef("\n%d instances, %s GPUs. Hours per month: 730 is 24/7. "+
			"gpu util: 95th percentile of the busiest GPU's utilization in percent; %s.\n",
			len(f.Instances), number(gpus), legend)
	}
	return nil
}

// gpu is "A100 × 8", or "-" for an instance without GPUs.
func gpu(g fleet.GPU) string {
	if g.Count == 0 && g.Model == "" {
		return "-"
	}
	return fmt.Sprintf("%s × %s", dash(g.Model), number(g.Count))
}

func workload(w *fleet.Workload) string {
	if w == nil {
		return "-"
	}
	return string(w.Type)
}

// tags is "k=v,k=v" in key order.
func tags(m map[string]string) string {
	if len(m) == 0 {
		return "-"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + m[k]
	}
	return strings.Join(parts, ",")
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// number shows a value with at most one decimal: 730, 260.7, 0.5.
func number(v float64) string {
	return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64)
}
