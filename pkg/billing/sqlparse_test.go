package billing_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/internal/focusgen"
	"github.com/gpufinops/gpufinops/internal/pgtest"
	"github.com/gpufinops/gpufinops/pkg/billing"
)

// parserDir holds the pinned node-sql-parser (npm ci there installs it).
const parserDir = "testdata/sqlparse"

// aggregateCase is one generated query.
type aggregateCase struct {
	name    string
	dialect billing.Dialect
	version string
	sql     string
}

// aggregateCases are AggregateSQL's queries for every dialect, FOCUS
// version and kind of window.
func aggregateCases(t *testing.T) []aggregateCase {
	t.Helper()
	start, end := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	windows := map[string]billing.Options{"open": {}, "from": {Start: start}, "until": {End: end}, "window": {Start: start, End: end}}
	tables := map[billing.Dialect]string{billing.Trino: "cur.focus_export", billing.GoogleSQL: "my-proj.billing.focus_v1", billing.Postgres: "focus.gpu_bill"}
	var out []aggregateCase
	for _, d := range []billing.Dialect{billing.Trino, billing.GoogleSQL, billing.Postgres} {
		for _, v := range billing.Versions {
			for wname, o := range windows {
				q, err := billing.AggregateSQL(d, tables[d], v, o)
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, aggregateCase{fmt.Sprintf("%s/%s/%s", d, v, wname), d, v, q})
			}
		}
	}
	return out
}

// parserFor is node-sql-parser's database option for a dialect: Athena's
// engine is Trino, whose grammar and Athena's are both checked.
var parserFor = map[billing.Dialect][]string{
	billing.Trino:     {"trino", "athena"},
	billing.GoogleSQL: {"bigquery"},
	billing.Postgres:  {"postgresql"},
}

type parseResult struct {
	Name   string `json:"name"`
	Error  string `json:"error"`
	Offset int    `json:"offset"`
}

// parse runs testdata/sqlparse/parse.js over statements, named by key.
func parse(t *testing.T, node string, statements map[string][2]string) map[string]parseResult {
	t.Helper()
	type in struct {
		Name     string `json:"name"`
		Database string `json:"database"`
		SQL      string `json:"sql"`
	}
	var batch []in
	for name, s := range statements {
		batch = append(batch, in{name, s[0], s[1]})
	}
	body, err := json.Marshal(batch)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, filepath.Join(parserDir, "parse.js"))
	cmd.Stdin = bytes.NewReader(body)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node parse.js: %v: %s", err, stderr.String())
	}
	var results []parseResult
	if err := json.Unmarshal(out, &results); err != nil {
		t.Fatalf("parse.js wrote %q: %v", out, err)
	}
	got := map[string]parseResult{}
	for _, r := range results {
		got[r.Name] = r
	}
	if len(got) != len(statements) {
		t.Fatalf("parse.js answered %d of %d statements", len(got), len(statements))
	}
	return got
}

// TestAggregateSQLParses feeds every generated query to node-sql-parser
// (pinned in testdata/sqlparse) in its dialect's grammar: Trino's and
// Athena's for Athena, BigQuery's, PostgreSQL's. A broken query must be
// refused by each grammar, so that a parser accepting anything cannot pass.
//
// node-sql-parser 5.4.0's BigQuery grammar lacks the BIGNUMERIC type that
// BigQuery accepts (CAST(x AS BIGNUMERIC)); the test holds that its one
// refusal is there, at a BIGNUMERIC, and checks the rest of the statement
// with NUMERIC in its place. The SQL sent to BigQuery is unchanged.
func TestAggregateSQLParses(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the generated SQL is not checked by node-sql-parser")
	}
	if _, err := os.Stat(filepath.Join(parserDir, "node_modules", "node-sql-parser", "package.json")); err != nil {
		t.Skipf("node-sql-parser is not installed: run npm ci --prefix pkg/billing/%s", parserDir)
	}
	cases := aggregateCases(t)
	statements := map[string][2]string{}
	for _, c := range cases {
		for _, db := range parserFor[c.dialect] {
			statements[c.name+"@"+db] = [2]string{db, c.sql}
			if c.dialect == billing.GoogleSQL {
				statements[c.name+"@"+db+"/numeric"] = [2]string{db, strings.ReplaceAll(c.sql, "BIGNUMERIC", "NUMERIC")}
			}
			// The same query with its WHERE clause's parenthesis left open.
			broken := strings.Replace(c.sql, "'purchase')))", "'purchase'))", 1)
			if broken == c.sql {
				t.Fatalf("%s: no WHERE clause to break:\n%s", c.name, c.sql)
			}
			statements[c.name+"@"+db+"/broken"] = [2]string{db, broken}
		}
	}
	got := parse(t, node, statements)
	for _, c := range cases {
		for _, db := range parserFor[c.dialect] {
			key := c.name + "@" + db
			r := got[key]
			switch {
			case c.dialect == billing.GoogleSQL && r.Error != "":
				if r.Offset < 0 || !strings.HasPrefix(c.sql[r.Offset:], "BIGNUMERIC") {
					t.Errorf("%s: refused, not at a BIGNUMERIC (offset %d): %s\n%s", key, r.Offset, r.Error, c.sql)
				}
				if n := got[key+"/numeric"]; n.Error != "" {
					t.Errorf("%s (NUMERIC for BIGNUMERIC): %s at offset %d", key, n.Error, n.Offset)
				}
			case c.dialect == billing.GoogleSQL:
				t.Logf("%s: node-sql-parser now accepts BIGNUMERIC: the NUMERIC stand-in and its note can go", key)
			case r.Error != "":
				t.Errorf("%s: %s at offset %d\n%s", key, r.Error, r.Offset, c.sql)
			}
			if got[key+"/broken"].Error == "" {
				t.Errorf("%s: the parser accepted a query with an unclosed parenthesis", key)
			}
		}
	}
	t.Logf("%d generated queries, %d statements parsed", len(cases), len(statements))
}

// TestAggregateSQLPreparesOnPostgres: PostgreSQL's own parser and planner
// accept every generated PostgreSQL query (PREPARE, on a table with every
// column a FOCUS 1.0–1.3 export may have), and refuse a broken one.
func TestAggregateSQLPreparesOnPostgres(t *testing.T) {
	db := pgtest.Start(t)
	cols := append([]string{"ServiceProviderName", "HostProviderName"}, focusgen.Header...)
	if err := db.CreateFOCUS("focus.gpu_bill", cols); err != nil {
		t.Fatal(err)
	}
	var script strings.Builder
	n := 0
	for _, c := range aggregateCases(t) {
		if c.dialect != billing.Postgres {
			continue
		}
		n++
		fmt.Fprintf(&script, "PREPARE q%d AS %s;\n", n, strings.TrimSpace(c.sql))
	}
	if _, err := db.Run("-c", script.String()); err != nil {
		t.Fatalf("PREPARE: %v", err)
	}
	q, _ := billing.AggregateSQL(billing.Postgres, "focus.gpu_bill", billing.V12, billing.Options{})
	if _, err := db.Run("-c", "PREPARE broken AS "+strings.Replace(q, "GROUP BY", "GROUP", 1)); err == nil {
		t.Error("PostgreSQL prepared a broken query")
	}
	t.Logf("%d queries prepared", n)
}
