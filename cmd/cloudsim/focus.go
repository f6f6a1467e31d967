package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/gpufinops/gpufinops/internal/focusgen"
	"github.com/gpufinops/gpufinops/internal/warehousesim"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
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

// writeFOCUS writes the fleet's FOCUS 1.2 export (--focus-export) and
// says what it holds.
func writeFOCUS(path string, start time.Time, hours int, f *fleet.Fleet, cat pricing.Catalog, stdout io.Writer) error {
	tot, err := writeExport(path, f, warehousesim.Bill(start, hours, cat))
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
