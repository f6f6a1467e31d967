package billing

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	"github.com/spf13/cobra"

	"github.com/gpufinops/gpufinops/pkg/billing"
	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/pkg/money"
	"github.com/gpufinops/gpufinops/pkg/tableprinter"
	"github.com/gpufinops/gpufinops/pkg/text"
	"github.com/gpufinops/gpufinops/pricing"
)

// SummaryOptions are the inputs of `gpufinops billing summary`.
type SummaryOptions struct {
	IO      *iostreams.IOStreams
	Catalog func() (pricing.Catalog, error)
	Ctx     context.Context

	// Source is --billing: a FOCUS file or folder.
	Source string
	// Start and End bound the window; zero is open.
	Start, End time.Time
	// Version is --focus-version; "" detects it.
	Version string
	Format  string
	// Filter is the --jq or --template filter of the JSON output; nil prints it whole.
	Filter cmdutil.Filter
}

// NewCmdSummary builds `billing summary`; runF replaces the run function in tests.
func NewCmdSummary(f *cmdutil.Factory, runF func(*SummaryOptions) error) *cobra.Command {
	opts := &SummaryOptions{IO: f.IOStreams, Catalog: f.Catalog}
	var out *cmdutil.Output
	var start, end string
	cmd := &cobra.Command{
		Use:   "summary --billing SOURCE",
		Short: "Total a FOCUS export's GPU instance charges per resource",
		Long: `Summary reads a FOCUS export (1.0 to 1.3; CSV, gzip CSV or Parquet; a file or
a folder in the Data Exports layout) and lists, per GPU instance, the billed,
effective and list cost, the hours consumed, the effective hourly rate
(EffectiveCost ÷ hours), and the shares of those hours that a commitment
covered, that ran as spot (PricingCategory Dynamic) and that ran on a capacity
reservation. Commitments with unused rows follow, as a finding of their own.

GPU instances are found by the instance type in SkuPriceDetails (FOCUS 1.1+),
x_InstanceType or a whole word of ChargeDescription, known to the catalog as a
GPU type. Commitment purchase rows are left out (their cost is amortised into
the usage rows' EffectiveCost). See docs/billing.md.`,
		Example: `  $ gpufinops billing summary --billing focus.csv
  $ gpufinops billing summary --billing ./data/ -o json --jq '.resources[] | {resourceId, effectiveHourlyRate}'
  $ gpufinops billing summary --billing export.csv.gz --start 2025-01-01 --end 2025-02-01 -o csv`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Ctx = cmd.Context()
			opts.Format, opts.Filter = out.Format(), out.Filter
			if opts.Source == "" {
				return cmdutil.FlagErrorf("--billing: give a FOCUS export file or folder")
			}
			var err error
			if opts.Start, opts.End, err = Window(start, end, "--start", "--end"); err != nil {
				return err
			}
			if opts.Version != "" && !validVersion(opts.Version) {
				return cmdutil.FlagErrorf("--focus-version: %q is not one of 1.0, 1.1, 1.2, 1.3", opts.Version)
			}
			if runF != nil {
				return runF(opts)
			}
			return summaryRun(opts)
		},
	}
	cmd.Flags().StringVar(&opts.Source, "billing", "", "FOCUS export: a .csv, .csv.gz or .parquet file, or a folder of them")
	cmd.Flags().StringVar(&start, "start", "", "count charges starting at or after this date (YYYY-MM-DD or RFC 3339, UTC)")
	cmd.Flags().StringVar(&end, "end", "", "count charges starting before this date (YYYY-MM-DD or RFC 3339, UTC)")
	cmd.Flags().StringVar(&opts.Version, "focus-version", "", "read the export as this FOCUS version (default: from its columns)")
	out = cmdutil.AddOutputFlags(cmd, cmdutil.FormatTable, cmdutil.FormatJSON, cmdutil.FormatCSV)
	return cmd
}

func validVersion(v string) bool {
	for _, k := range billing.Versions {
		if v == k {
			return true
		}
	}
	return false
}

// Window parses a window's two flags; an empty flag is an open bound.
func Window(start, end, startFlag, endFlag string) (time.Time, time.Time, error) {
	s, err := date(start, startFlag)
	if err != nil {
		return s, s, err
	}
	e, err := date(end, endFlag)
	if err != nil {
		return s, e, err
	}
	if !s.IsZero() && !e.IsZero() && !e.After(s) {
		return s, e, cmdutil.FlagErrorf("%s %s is not after %s %s", endFlag, end, startFlag, start)
	}
	return s, e, nil
}

func date(v, flag string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	for _, l := range []string{"2006-01-02", time.RFC3339} {
		if t, err := time.Parse(l, v); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, cmdutil.FlagErrorf("%s: %q is not a date (want YYYY-MM-DD or RFC 3339)", flag, v)
}

// Read loads a --billing source with the catalog's GPU types; a bad export
// (naming file, row and column) or source is an InputError.
func Read(ctx context.Context, source string, o billing.Options, cat pricing.Catalog) (*billing.Summary, error) {
	o.GPUs = billing.CatalogGPUs(cat)
	s, err := billing.Load(ctx, source, o)
	if err != nil {
		var be *billing.Error
		if errors.As(err, &be) || errors.Is(err, billing.ErrSource) {
			return nil, &cmdutil.InputError{Err: err}
		}
		// A warehouse's errors (credentials, a failed query) are its own.
		return nil, err
	}
	return s, nil
}

func summaryRun(opts *SummaryOptions) error {
	cat, err := opts.Catalog()
	if err != nil {
		return err
	}
	s, err := Read(opts.Ctx, opts.Source, billing.Options{Version: opts.Version, Start: opts.Start, End: opts.End}, cat)
	if err != nil {
		return err
	}
	doc := billing.NewDocument(opts.Source, s)
	return cmdutil.Print(opts.Ctx, opts.IO.Out, opts.Format, opts.Filter, doc, cmdutil.Printers{
		cmdutil.FormatTable: func(w io.Writer) error {
			if err := writeTable(w, opts.IO.IsStdoutTTY(), opts.IO.TerminalWidth(), doc); err != nil {
				return err
			}
			writeFooter(opts.IO.ErrOut, opts.IO.IsStderrTTY(), opts.IO.TerminalWidth(), doc)
			return nil
		},
		cmdutil.FormatCSV: func(w io.Writer) error { return writeCSV(w, doc) },
	})
}

func writeTable(w io.Writer, tty bool, width int, d billing.Document) error {
	t := tableprinter.New(w, tty, "resource", "provider", "region", "instance type", "hours", "billed", "effective",
		"list", "effective/h", "committed", "spot", "reserved")
	t.AlignRight(4, 5, 6, 7, 8, 9, 10, 11)
	t.SetWidth(width)
	t.Key(0, 6)
	// An AWS instance id (19 characters) is never shortened; a longer
	// resource id loses its middle, keeping its head and its name.
	t.TruncateMiddle(0, 20)
	t.DropOrder(2, 1, 11, 7, 5, 10, 9, 3)
	for _, r := range d.Resources {
		rate := "-"
		if r.EffectiveHourlyRate != nil {
			rate = money.CellPlaces(*r.EffectiveHourlyRate, d.Currency, 4, tty)
		}
		t.AddRow(r.ResourceID, string(r.Provider), dash(r.Region), dash(r.InstanceType), r.Hours.StringFixed(2),
			money.Cell(r.BilledCost, d.Currency, tty), money.Cell(r.EffectiveCost, d.Currency, tty), money.Cell(r.ListCost, d.Currency, tty),
			rate, pct(r.CommitmentShare), pct(r.SpotShare), pct(r.CapacityReservationShare))
	}
	return t.Render()
}

// writeFooter totals the table and names the unused commitments, on stderr,
// wrapped to the terminal's width when stderr is one.
func writeFooter(w io.Writer, tty bool, width int, d billing.Document) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s, %s GPU-instance hours: billed %s, effective %s, list %s (%s of %s rows).\n",
		text.Plural(len(d.Resources), "GPU instance"), d.Hours.StringFixed(2), money.Inline(d.BilledCost, d.Currency, tty),
		money.Inline(d.EffectiveCost, d.Currency, tty), money.Inline(d.ListCost, d.Currency, tty),
		strconv.FormatInt(d.GPURows, 10), strconv.FormatInt(d.Rows, 10))
	for _, c := range d.UnusedCommitments {
		what := "commitment"
		if c.GPU {
			what = "GPU commitment"
		}
		fmt.Fprintf(&b, "finding: %s %s (%s) left %s unused.\n", what, c.ID, dash(c.Type), money.Inline(c.UnusedEffectiveCost, d.Currency, tty))
	}
	for _, w := range d.Warnings {
		fmt.Fprintf(&b, "warning: %s.\n", w)
	}
	out := b.String()
	if tty && width > 0 {
		out = tableprinter.Wrap(out, width)
	}
	_, _ = io.WriteString(w, out)
}

func writeCSV(w io.Writer, d billing.Document) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"resourceId", "provider", "account", "region", "instanceType", "gpuCount", "billedCost",
		"effectiveCost", "listCost", "hours", "effectiveHourlyRate", "commitmentCoveredShare", "spotShare", "capacityReservationShare", "currency"})
	for _, r := range d.Resources {
		rate := ""
		if r.EffectiveHourlyRate != nil {
			rate = r.EffectiveHourlyRate.String()
		}
		_ = cw.Write([]string{r.ResourceID, string(r.Provider), r.Account, r.Region, r.InstanceType,
			strconv.FormatFloat(r.GPUCount, 'f', -1, 64), r.BilledCost.String(), r.EffectiveCost.String(), r.ListCost.String(),
			r.Hours.String(), rate, share(r.CommitmentShare), share(r.SpotShare), share(r.CapacityReservationShare), d.Currency})
	}
	cw.Flush()
	return cw.Error()
}

func share(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func pct(f float64) string {
	return money.Percent(decimal.NewFromFloat(f * 100))
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
