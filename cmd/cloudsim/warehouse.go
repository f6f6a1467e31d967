package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/gpufinops/gpufinops/internal/focusgen"
	"github.com/gpufinops/gpufinops/internal/pgserver"
	"github.com/gpufinops/gpufinops/internal/warehousesim"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/providers/simkit"
)

// warehouseConfig serves the FOCUS export through Athena's and BigQuery's
// query APIs (--sql-engine).
type warehouseConfig struct {
	engine, athena, bigquery string
}

// warehouseFlags adds the warehouse flags; check runs after parsing.
func warehouseFlags(fs *flag.FlagSet, c *config) (check func() error) {
	w := &c.warehouse
	fs.StringVar(&w.engine, "sql-engine", "", "serve the --focus-export through Athena's and BigQuery's query APIs on this SQL engine: postgres (Debian's PostgreSQL)")
	fs.StringVar(&w.athena, "athena-table", "", "with --sql-engine, the Athena WORKGROUP/DATABASE.TABLE that holds the export (default "+warehousesim.DefaultAthena+")")
	fs.StringVar(&w.bigquery, "bigquery-table", "", "with --sql-engine, the BigQuery PROJECT.DATASET.TABLE that holds the export (default "+warehousesim.DefaultBigQuery+")")
	return func() error {
		switch {
		case w.engine == "" && (w.athena != "" || w.bigquery != ""):
			return errors.New("--athena-table and --bigquery-table need --sql-engine postgres")
		case w.engine == "":
			return nil
		case w.engine != "postgres":
			return fmt.Errorf("--sql-engine %q: the one engine is postgres", w.engine)
		case c.focusPath == "":
			return errors.New("--sql-engine serves the FOCUS export: give --focus-export FILE too")
		}
		if _, err := warehousesim.ParseAthena(w.athena); err != nil {
			return fmt.Errorf("--athena-table %w", err)
		}
		if _, err := warehousesim.ParseBigQuery(w.bigquery); err != nil {
			return fmt.Errorf("--bigquery-table %w", err)
		}
		if err := pgserver.Installed(); err != nil {
			return fmt.Errorf("--sql-engine postgres: %w", err)
		}
		return nil
	}
}

// servedWarehouse is the running warehouse, nil when none is served.
type servedWarehouse struct {
	*warehousesim.Warehouse
}

// startWarehouse starts the SQL engine and loads the export written at
// c.focusPath (for a Parquet export, the same rows written again as CSV,
// which PostgreSQL's COPY reads). It returns nil without --sql-engine.
func startWarehouse(ctx context.Context, c *config, f *fleet.Fleet, cat pricing.Catalog, kit *simkit.Kit, stdout io.Writer) (*servedWarehouse, error) {
	if c.warehouse.engine == "" {
		return nil, nil
	}
	csvPath := c.focusPath
	if focusKind(csvPath) != "csv" {
		dir, err := os.MkdirTemp("", "gpufinops-focus-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		csvPath = filepath.Join(dir, "focus.csv")
		if _, err := writeExport(csvPath, f, warehousesim.Bill(c.focusStart, c.focusHours, cat)); err != nil {
			return nil, err
		}
	}
	w, err := warehousesim.Start(ctx, warehousesim.Options{CSV: csvPath, Header: focusgen.Header,
		Athena: c.warehouse.athena, BigQuery: c.warehouse.bigquery, Kit: kit})
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(stdout, "cloudsim: PostgreSQL %s holds the FOCUS export (stopped and removed on exit)\n", w.Dir())
	return &servedWarehouse{w}, nil
}

// sims are the warehouse APIs to mount before the clouds' simulators.
func (w *servedWarehouse) sims() []simkit.Sim {
	if w == nil {
		return nil
	}
	return w.Sims()
}

// announce prints how to query the tables at url.
func (w *servedWarehouse) announce(url string, stdout io.Writer) {
	if w == nil {
		return
	}
	for _, note := range w.Notes(url) {
		fmt.Fprintf(stdout, "cloudsim: %s\n", note)
	}
}

// close stops the engine and removes its folder.
func (w *servedWarehouse) close(stderr io.Writer) {
	if w == nil {
		return
	}
	if err := w.Close(); err != nil {
		fmt.Fprintf(stderr, "cloudsim: stopping PostgreSQL: %s\n", oneLine(err))
	}
}
