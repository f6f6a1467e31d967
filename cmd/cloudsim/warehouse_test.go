package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/internal/pgserver"
	"github.com/gpufinops/gpufinops/pkg/billing"
	"github.com/gpufinops/gpufinops/providers/aws"
	"github.com/gpufinops/gpufinops/providers/gcp"
)

// --sql-engine postgres serves the export through Athena's and BigQuery's
// APIs on cloudsim's port: the real SDKs read the summary the file gives,
// the requests are counted with the clouds', and SIGINT stops PostgreSQL
// and removes its folder.
func TestServeWarehouse(t *testing.T) {
	if err := pgserver.Installed(); err != nil {
		t.Skip(err)
	}
	path := filepath.Join(t.TempDir(), "bill.parquet")
	url, stop := startRun(t, "--demo", "--focus-export", path, "--focus-start", "2026-11-01", "--focus-hours", "24", "--sql-engine", "postgres",
		"--athena-table", "wg1/bills.focus_v12", "--bigquery-table", "my-billing.exports.focus")
	t.Setenv("AWS_ENDPOINT_URL", url)
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_CONFIG_FILE", os.DevNull)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", os.DevNull)
	t.Setenv(gcp.BigQueryEndpointEnv, url+"/")
	aws.AthenaPoll = time.Millisecond
	ctx := context.Background()
	local, err := billing.Read(ctx, path, billing.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := summaryJSON(t, local)
	for _, src := range []string{"athena://wg1/bills.focus_v12", "bigquery://my-billing.exports.focus"} {
		s, err := billing.Load(ctx, src, billing.Options{})
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if got := summaryJSON(t, s); got != want {
			t.Errorf("%s differs from the file:\n got  %s\n want %s", src, got, want)
		}
	}
	resp, err := http.Get(url + "/_sim/requests")
	if err != nil {
		t.Fatal(err)
	}
	var counts map[string]map[string]int
	err = json.NewDecoder(resp.Body).Decode(&counts)
	resp.Body.Close()
	if err != nil || counts["athena"]["StartQueryExecution"] != 1 || counts["bigquery"]["jobs.query"] != 1 {
		t.Errorf("requests %v (%v): want one Athena and one BigQuery query", counts, err)
	}
	code, stdout, stderr := stop()
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, line := range []string{"gpufinops billing summary --billing athena://wg1/bills.focus_v12", "GPUFINOPS_BIGQUERY_ENDPOINT=" + url + "/ gpufinops billing summary --billing bigquery://my-billing.exports.focus"} {
		if !strings.Contains(stdout, line) {
			t.Errorf("stdout lacks %q:\n%s", line, stdout)
		}
	}
	m := regexp.MustCompile(`cloudsim: PostgreSQL (\S+) holds the FOCUS export`).FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("stdout names no PostgreSQL folder:\n%s", stdout)
	}
	if _, err := os.Stat(m[1]); !os.IsNotExist(err) {
		t.Errorf("%s is still there after SIGINT: %v", m[1], err)
	}
}

// summaryJSON is what a push-down must reproduce of a summary: every
// resource and unused commitment and the totals (not the files read or the
// rows counted, which differ by source).
func summaryJSON(t *testing.T, s *billing.Summary) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"resources": s.Resources, "unused": s.Unused, "effective": s.EffectiveCost,
		"billed": s.BilledCost, "list": s.ListCost, "hours": s.Hours, "gpuRows": s.GPURows, "currency": s.Currency})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The warehouse flags' bad values, and a machine without PostgreSQL: one
// line, exit 2, before anything is written.
func TestWarehouseBadFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		env  bool
		want string
	}{
		{"engine", []string{"--demo", "--focus-export", "b.csv", "--sql-engine", "mysql"}, false, `--sql-engine "mysql": the one engine is postgres`},
		{"no export", []string{"--demo", "--sql-engine", "postgres"}, false, "give --focus-export FILE too"},
		{"table without engine", []string{"--demo", "--athena-table", "primary/a.b"}, false, "need --sql-engine postgres"},
		{"athena table", []string{"--demo", "--focus-export", "b.csv", "--sql-engine", "postgres", "--athena-table", "focus.bill"}, false, `--athena-table "focus.bill": want WORKGROUP/DATABASE.TABLE`},
		{"bigquery table", []string{"--demo", "--focus-export", "b.csv", "--sql-engine", "postgres", "--bigquery-table", "P.billing"}, false, `--bigquery-table "P.billing": want PROJECT.DATASET.TABLE`},
		{"not installed", []string{"--demo", "--focus-export", "b.csv", "--sql-engine", "postgres"}, true, "--sql-engine postgres: PostgreSQL's initdb is not in " + pgserver.BinEnv},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.env {
				t.Setenv(pgserver.BinEnv, t.TempDir())
			}
			var stdout, stderr bytes.Buffer
			if code := run(tc.args, &stdout, &stderr); code != exitUsage {
				t.Errorf("exit %d, want %d", code, exitUsage)
			}
			msg := stderr.String()
			if !strings.Contains(msg, tc.want) || strings.Count(msg, "\n") != 1 || stdout.Len() != 0 {
				t.Errorf("stderr %q, want one line with %q (stdout %q)", msg, tc.want, stdout.String())
			}
			if tc.env && !strings.Contains(msg, "apt-get install postgresql") {
				t.Errorf("stderr %q does not say what to install", msg)
			}
		})
	}
}
