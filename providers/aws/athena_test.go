package aws

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/internal/billingtest"
	"github.com/gpufinops/gpufinops/internal/pgtest"
	"github.com/gpufinops/gpufinops/pkg/billing"
	"github.com/gpufinops/gpufinops/providers/aws/sim/athenasim"
)

// TestAthenaPushDown sends the bill reader's Athena query through the
// adapter's billing capability (the real AWS SDK) to the simulator, which
// runs it unchanged on PostgreSQL: the summary is the local reader's, read
// in one query and a few pages.
func TestAthenaPushDown(t *testing.T) {
	db := pgtest.Start(t)
	fl, path := billingtest.LoadedExport(t, db, "focus_db.focus_export")
	sim := athenasim.New(db.Query)
	sim.PageSize, sim.Polls = 4, 2
	srv := httptest.NewServer(sim)
	defer srv.Close()
	t.Setenv("AWS_ENDPOINT_URL_ATHENA", srv.URL)
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDSIMULATED")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "simulated")
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	AthenaPoll = time.Millisecond
	o := billing.Options{Keep: billing.Keys(fl), Start: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	local, err := billing.Read(context.Background(), path, o)
	if err != nil {
		t.Fatal(err)
	}
	pushed, err := billing.Load(context.Background(), "athena://primary/focus_db.focus_export", o)
	if err != nil {
		t.Fatal(err)
	}
	if !billingtest.EqualSummaries(local, pushed) {
		t.Errorf("Athena differs from local:\n local  %+v\n pushed %+v", local.Resources, pushed.Resources)
	}
	calls := sim.Calls()
	if calls["StartQueryExecution"] != 1 || calls["GetQueryExecution"] != 3 || calls["GetQueryResults"] < 2 {
		t.Errorf("calls %v: want one query, polled until done, read in pages", calls)
	}
	if q := sim.Queries(); len(q) != 1 || !strings.Contains(q[0], `FROM "focus_db"."focus_export"`) {
		t.Errorf("queries %q", q)
	}
	t.Logf("one query, %v requests, %d resources from %d export rows", calls, len(pushed.Resources), local.Rows)

	// A workgroup that does not exist, and a malformed source: clear errors.
	if _, err := billing.Load(context.Background(), "athena://nowhere/focus_db.focus_export", o); err == nil || !strings.Contains(err.Error(), "WorkGroup nowhere is not found") {
		t.Errorf("unknown workgroup: %v", err)
	}
	if _, err := billing.Load(context.Background(), "athena://primary/notable", o); err == nil || !strings.Contains(err.Error(), "want athena://WORKGROUP/DATABASE.TABLE") {
		t.Errorf("bad source: %v", err)
	}
	// A query the engine rejects fails with the engine's reason.
	if _, err := billing.Load(context.Background(), "athena://primary/focus_db.missing", o); err == nil || !strings.Contains(err.Error(), "failed") {
		t.Errorf("missing table: %v", err)
	}
}
