// Package pgtest starts a throwaway PostgreSQL (Debian's binaries) for
// tests, on a Unix socket in a temporary folder, and loads FOCUS exports
// into it: the real SQL engine the push-down's queries run on.
package pgtest

import (
	"bytes"
	"encoding/csv"
	"errors"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/billing/bqsim"
)

// DB is a running server.
type DB struct {
	sock string
}

// pgBin finds a PostgreSQL program on PATH or where Debian's postgresql
// package puts the server's (/usr/lib/postgresql/<version>/bin), the newest
// version first.
func pgBin(name string) (string, bool) {
	if p, err := exec.LookPath(name); err == nil {
		return p, true
	}
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/" + name)
	if len(found) == 0 {
		return "", false
	}
	sort.Slice(found, func(i, j int) bool { return pgVersion(found[i]) > pgVersion(found[j]) })
	return found[0], true
}

// pgVersion is the major version in a /usr/lib/postgresql/<version>/bin path.
func pgVersion(path string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(path))))
	return v
}

// Start starts a server, stopped and removed when the test ends; it skips
// the test when PostgreSQL is not installed.
func Start(t testing.TB) *DB {
	t.Helper()
	bins := map[string]string{}
	for _, b := range []string{"initdb", "pg_ctl", "psql"} {
		path, ok := pgBin(b)
		if !ok {
			t.Skipf("no %s: PostgreSQL is not installed", b)
		}
		bins[b] = path
	}
	dir, err := os.MkdirTemp("", "gpufinops-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	as := func(name string, args ...string) *exec.Cmd { return exec.Command(name, args...) }
	if os.Geteuid() == 0 {
		// PostgreSQL refuses to run as root: run the server as postgres.
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Skip("running as root without a postgres user")
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
		as = func(name string, args ...string) *exec.Cmd {
			return exec.Command("runuser", append([]string{"-u", "postgres", "--", name}, args...)...)
		}
	}
	data := filepath.Join(dir, "data")
	for _, c := range []*exec.Cmd{
		as(bins["initdb"], "-D", data, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-sync"),
		as(bins["pg_ctl"], "-D", data, "-w", "-l", filepath.Join(dir, "log"), "-o", "-k "+dir+" -c listen_addresses= -F", "start"),
	} {
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", c.Args, err, out)
		}
	}
	t.Cleanup(func() { _ = as(bins["pg_ctl"], "-D", data, "-m", "immediate", "stop").Run() })
	return &DB{sock: dir}
}

// Run runs psql with args; the error is psql's message.
func (d *DB) Run(args ...string) ([]byte, error) {
	c := exec.Command("psql", append([]string{"-h", d.sock, "-U", "postgres", "-d", "postgres", "-X", "-q", "-v", "ON_ERROR_STOP=1"}, args...)...)
	var stderr bytes.Buffer
	c.Stderr = &stderr
	out, err := c.Output()
	if err != nil {
		return nil, errors.New(strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// MustRun is Run that fails the test on an error.
func (d *DB) MustRun(t testing.TB, args ...string) []byte {
	t.Helper()
	out, err := d.Run(args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Query runs one query: its column names and rows, nil for a NULL.
func (d *DB) Query(q string) ([]string, [][]*string, error) {
	out, err := d.Run("--csv", "-P", "null=NULL", "-c", q)
	if err != nil {
		return nil, nil, err
	}
	recs, err := csv.NewReader(bytes.NewReader(out)).ReadAll()
	if err != nil || len(recs) == 0 {
		return nil, nil, err
	}
	rows := make([][]*string, len(recs)-1)
	for i, rec := range recs[1:] {
		rows[i] = make([]*string, len(rec))
		for j := range rec {
			if rec[j] != "NULL" {
				rows[i][j] = &rec[j]
			}
		}
	}
	return recs[0], rows, nil
}

// LoadFOCUS creates table (schema-qualified names are created with their
// schema) with header's columns, typed as a warehouse holds FOCUS (costs
// and quantities NUMERIC, periods TIMESTAMP, the rest TEXT), and copies the
// CSV file at path into it, NULL for the literal NULL.
func (d *DB) LoadFOCUS(t testing.TB, table string, header []string, path string) {
	t.Helper()
	parts := strings.Split(table, ".")
	for i, p := range parts {
		parts[i] = `"` + p + `"`
	}
	if len(parts) == 2 {
		d.MustRun(t, "-c", "CREATE SCHEMA IF NOT EXISTS "+parts[0])
	}
	ref := strings.Join(parts, ".")
	var cols []string
	for _, c := range header {
		typ := "TEXT"
		switch c {
		case "BilledCost", "EffectiveCost", "ListCost", "ContractedCost", "ConsumedQuantity", "ListUnitPrice", "PricingQuantity", "ContractedUnitPrice":
			typ = "NUMERIC"
		case "BillingPeriodStart", "BillingPeriodEnd", "ChargePeriodStart", "ChargePeriodEnd":
			typ = "TIMESTAMP"
		}
		cols = append(cols, `"`+c+`" `+typ)
	}
	d.MustRun(t, "-c", "CREATE TABLE "+ref+" ("+strings.Join(cols, ", ")+")")
	d.MustRun(t, "-c", `\copy `+ref+` FROM '`+path+`' WITH (FORMAT csv, HEADER true, NULL 'NULL')`)
}

// Describe names the result columns of a query and their PostgreSQL types,
// without running it (psql's \gdesc).
func (d *DB) Describe(q string) (names, types []string, err error) {
	c := exec.Command("psql", "-h", d.sock, "-U", "postgres", "-d", "postgres", "-X", "-q", "-v", "ON_ERROR_STOP=1", "--csv")
	c.Stdin = strings.NewReader(strings.TrimRight(strings.TrimSpace(q), ";") + " \\gdesc\n")
	var stderr bytes.Buffer
	c.Stderr = &stderr
	out, err := c.Output()
	if err != nil {
		return nil, nil, errors.New(strings.TrimSpace(stderr.String()))
	}
	recs, err := csv.NewReader(bytes.NewReader(out)).ReadAll()
	if err != nil {
		return nil, nil, err
	}
	for _, r := range recs[1:] {
		names, types = append(names, r[0]), append(types, r[1])
	}
	return names, types, nil
}

// GoogleSQL is a bqsim.Exec that runs GoogleSQL on db after
// mapping the four spellings that differ in the aggregation: backticked
// `project.dataset.table` to "dataset"."table", other backticks to double
// quotes, BIGNUMERIC to NUMERIC, STRING to TEXT. Everything else (SUM,
// CAST, COALESCE, LOWER, GROUP BY ordinals, TIMESTAMP literals) is the
// engine's own.
func GoogleSQL(db *DB) bqsim.Exec {
	table := regexp.MustCompile("`[^`.]+\\.([^`.]+)\\.([^`.]+)`")
	return func(q string) ([]bqsim.Column, [][]*string, error) {
		q = table.ReplaceAllString(q, `"$1"."$2"`)
		q = strings.ReplaceAll(q, "`", `"`)
		q = strings.ReplaceAll(q, "BIGNUMERIC", "NUMERIC")
		q = strings.ReplaceAll(q, "AS STRING)", "AS TEXT)")
		names, types, err := db.Describe(q)
		if err != nil {
			return nil, nil, err
		}
		_, rows, err := db.Query(q)
		if err != nil {
			return nil, nil, err
		}
		cols := make([]bqsim.Column, len(names))
		for i, n := range names {
			t := "STRING"
			switch {
			case types[i] == "numeric":
				t = "BIGNUMERIC"
			case types[i] == "bigint" || types[i] == "integer":
				t = "INTEGER"
			case strings.HasPrefix(types[i], "timestamp"):
				t = "TIMESTAMP"
			}
			cols[i] = bqsim.Column{Name: n, Type: t}
		}
		return cols, rows, nil
	}
}
