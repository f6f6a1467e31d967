package billing_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/internal/billingtest"
	"github.com/gpufinops/gpufinops/internal/focusgen"
	"github.com/gpufinops/gpufinops/internal/pgtest"
	"github.com/gpufinops/gpufinops/pkg/billing"
	"github.com/gpufinops/gpufinops/pkg/testutil"
)

// TestAggregateSQLGolden keeps each dialect's query in testdata, for review.
func TestAggregateSQLGolden(t *testing.T) {
	o := billing.Options{Start: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), End: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
	for d, table := range map[billing.Dialect]string{billing.Trino: "focus_db.focus_export", billing.GoogleSQL: "proj.billing.focus", billing.Postgres: "focus"} {
		q, err := billing.AggregateSQL(d, table, billing.V12, o)
		if err != nil {
			t.Fatal(err)
		}
		testutil.AssertGolden(t, "testdata/aggregate-"+string(d)+".sql", []byte(q))
	}
	if _, err := billing.AggregateSQL("mysql", "t", billing.V12, o); err == nil || !strings.Contains(err.Error(), `unknown SQL dialect "mysql"`) {
		t.Errorf("dialect: %v", err)
	}
	if _, err := billing.AggregateSQL(billing.Trino, "t", "0.9", o); err == nil {
		t.Error("version 0.9 accepted")
	}
	q10, _ := billing.AggregateSQL(billing.Trino, "t", billing.V10, billing.Options{})
	if strings.Contains(q10, "SkuPriceDetails") || strings.Contains(q10, "ChargePeriodStart\" >=") {
		t.Errorf("1.0 query names a 1.1 column or a window:\n%s", q10)
	}
}

// TestAggregateSQLOnPostgres runs AggregateSQL on a real engine over a
// generated export and folds the result: the same resources, hours,
// shares and unused commitments as the local reader of the same file.
func TestAggregateSQLOnPostgres(t *testing.T) {
	db := pgtest.Start(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "focus.csv")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	fl := billingtest.Fleet()
	if _, err := focusgen.WriteCSV(f, fl, billingtest.Options()); err != nil {
		t.Fatal(err)
	}
	f.Close()
	db.LoadFOCUS(t, "focus", focusgen.Header, path)
	for name, o := range map[string]billing.Options{
		"whole":  {},
		"window": {Start: time.Date(2025, 1, 1, 6, 0, 0, 0, time.UTC), End: time.Date(2025, 1, 2, 3, 0, 0, 0, time.UTC)},
	} {
		t.Run(name, func(t *testing.T) {
			o.Keep = billing.Keys(fl)
			local, err := billing.Read(context.Background(), path, o)
			if err != nil {
				t.Fatal(err)
			}
			query, err := billing.AggregateSQL(billing.Postgres, "focus", billing.V12, o)
			if err != nil {
				t.Fatal(err)
			}
			out := db.MustRun(t, "--csv", "-c", query)
			r := csv.NewReader(bytes.NewReader(out))
			header, err := r.Read()
			if err != nil {
				t.Fatal(err)
			}
			pushed, err := billing.FoldAggregates(context.Background(), "postgres", header, func() ([]string, error) {
				rec, err := r.Read()
				if err == io.EOF {
					return nil, io.EOF
				}
				return rec, err
			}, o)
			if err != nil {
				t.Fatal(err)
			}
			if !billingtest.EqualSummaries(local, pushed) {
				t.Errorf("pushed down differs from local:\n local  %+v\n pushed %+v", local.Resources, pushed.Resources)
			}
			if len(pushed.Resources) != 5 || pushed.GPURows != local.GPURows || !pushed.EffectiveCost.Equal(local.EffectiveCost) {
				t.Errorf("pushed %d resources, %d GPU rows, %s; local %d, %d, %s", len(pushed.Resources), pushed.GPURows, pushed.EffectiveCost,
					len(local.Resources), local.GPURows, local.EffectiveCost)
			}
		})
	}
}
