package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/billing/focusgen"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
)

// The served fleet's bill: a negotiated discount, a quarter of each
// on-demand instance's hours on a savings plan, and an hour's unused part.
var (
	focusDiscount           = decimal.RequireFromString("0.12")
	focusCommitted          = decimal.RequireFromString("0.25")
	focusCommitmentDiscount = decimal.RequireFromString("0.28")
	focusUnused             = decimal.RequireFromString("1.25")
)

// focusKind is the export format by the file's name: csv, parquet or "".
func focusKind(path string) string {
	switch p := strings.ToLower(path); {
	case strings.HasSuffix(p, ".csv"):
		return "csv"
	case strings.HasSuffix(p, ".parquet"):
		return "parquet"
	}
	return ""
}

// focusOptions are the served fleet's export: the catalog's on-demand
// prices, hours hourly rows per instance from start.
func focusOptions(start time.Time, hours int, cat pricing.Catalog) focusgen.Options {
	return focusgen.Options{
		Start: start, Hours: hours,
		List: func(in *fleet.Instance) (decimal.Decimal, bool) {
			off, ok := cat.Offer(in.Provider, in.Region, in.InstanceType)
			if !ok || off.OnDemand == nil || in.State == fleet.Stopped {
				return decimal.Zero, false
			}
			return off.OnDemand.Hourly, true
		},
		Discount: focusDiscount, Committed: focusCommitted, CommitmentDiscount: focusCommitmentDiscount,
		UnusedCommitment: focusUnused, Noise: 1,
	}
}

// writeFOCUS writes the fleet's FOCUS 1.2 export (--focus-export) and
// says what it holds.
func writeFOCUS(path string, start time.Time, hours int, f *fleet.Fleet, cat pricing.Catalog, stdout io.Writer) error {
	tot, err := writeExport(path, f, focusOptions(start, hours, cat))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "cloudsim: FOCUS 1.2 export at %s: %d rows, %d GPU instance-hours from %s, GPU EffectiveCost %s USD (billed %s, list %s), unused commitment %s\n",
		path, tot.Rows, tot.GPURows, start.Format(time.RFC3339), tot.GPUEffective, tot.GPUBilled, tot.GPUList, tot.Unused)
	return nil
}

// writeExport writes f's export to path, CSV or Parquet by its name.
func writeExport(path string, f *fleet.Fleet, o focusgen.Options) (focusgen.Totals, error) {
	out, err := os.Create(path)
	if err != nil {
		return focusgen.Totals{}, err
	}
	write := focusgen.WriteCSV
	if focusKind(path) == "parquet" {
		write = focusgen.WriteParquet
	}
	tot, err := write(out, f.Instances, o)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return tot, err
}
