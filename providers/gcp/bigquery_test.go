package gcp

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/internal/billingtest"
	"github.com/gpufinops/gpufinops/internal/pgtest"
	"github.com/gpufinops/gpufinops/pkg/billing"
	"github.com/gpufinops/gpufinops/providers/gcp/sim/bqsim"
)

// TestBigQueryPushDown sends the bill reader's GoogleSQL query through the
// adapter's billing capability (cloud.google.com/go/bigquery) to bqsim over
// PostgreSQL: the local reader's summary, in one query and a few pages.
func TestBigQueryPushDown(t *testing.T) {
	db := pgtest.Start(t)
	fl, path := billingtest.LoadedExport(t, db, "billing.focus")
	sim := bqsim.New(pgtest.GoogleSQL(db), "proj")
	sim.PageSize = 3
	srv := httptest.NewServer(sim)
	defer srv.Close()
	t.Setenv(BigQueryEndpointEnv, srv.URL+"/")
	o := billing.Options{Keep: billing.Keys(fl), End: time.Date(2025, 1, 2, 12, 0, 0, 0, time.UTC)}
	local, err := billing.Read(context.Background(), path, o)
	if err != nil {
		t.Fatal(err)
	}
	pushed, err := billing.Load(context.Background(), "bigquery://proj.billing.focus", o)
	if err != nil {
		t.Fatal(err)
	}
	if !billingtest.EqualSummaries(local, pushed) {
		t.Errorf("BigQuery differs from local:\n local  %+v\n pushed %+v", local.Resources, pushed.Resources)
	}
	calls := sim.Calls()
	if calls["jobs.query"] != 1 || calls["jobs.getQueryResults"] < 2 {
		t.Errorf("calls %v: want one query read in pages", calls)
	}
	if q := sim.Queries(); len(q) != 1 || !strings.Contains(q[0], "FROM `proj.billing.focus`") || !strings.Contains(q[0], "BIGNUMERIC") {
		t.Errorf("queries %q", q)
	}
	if _, err := billing.Load(context.Background(), "bigquery://other.billing.focus", o); err == nil || !strings.Contains(err.Error(), "Not found: Project other") {
		t.Errorf("unknown project: %v", err)
	}
	if _, err := billing.Load(context.Background(), "bigquery://proj.billing.missing", o); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing table: %v", err)
	}
	if _, err := billing.Load(context.Background(), "bigquery://proj.focus", o); err == nil || !strings.Contains(err.Error(), "want bigquery://PROJECT.DATASET.TABLE") {
		t.Errorf("bad source: %v", err)
	}
}
