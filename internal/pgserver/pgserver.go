// Package pgserver starts a private PostgreSQL server (Debian's binaries, or
// PostgreSQL's programs on PATH) on a Unix socket in a temporary folder,
// loads FOCUS exports into it and runs queries with psql: the real SQL
// engine behind the simulated warehouses (cmd/cloudsim --sql-engine
// postgres) and the push-down tests (internal/pgtest). Stop stops the
// server and removes its folder; on Linux the server also dies with the
// process that started it.
package pgserver

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gpufinops/gpufinops/providers/gcp/sim/bqsim"
)

// NotInstalledError is Start's error when a PostgreSQL program is missing.
type NotInstalledError struct {
	// Program is the missing program, e.g. initdb.
	Program string
}

func (e *NotInstalledError) Error() string {
	if dir := os.Getenv(BinEnv); dir != "" {
		return "PostgreSQL's " + e.Program + " is not in " + BinEnv + "=" + dir + ": install PostgreSQL (apt-get install postgresql) or point " + BinEnv + " at its bin folder"
	}
	return "PostgreSQL's " + e.Program + " is not installed: install PostgreSQL (apt-get install postgresql) or put its bin folder on PATH"
}

// programs are the PostgreSQL programs a server needs.
var programs = []string{"initdb", "postgres", "psql"}

// Server is a running PostgreSQL server.
type Server struct {
	dir  string
	bins map[string]string
	cmd  *exec.Cmd
	done chan error

	stopOnce sync.Once
	stopErr  error
}

// BinEnv names a folder holding PostgreSQL's programs (for cloudsim and the
// tests; not a gpufinops setting); when set, they are
// looked for there only.
const BinEnv = "CLOUDSIM_PG_BIN"

// find finds a PostgreSQL program: in BinEnv's folder when it is set, else
// where Debian's postgresql package puts the server's
// (/usr/lib/postgresql/<version>/bin, the newest version first), else on
// PATH.
func find(name string) (string, bool) {
	if dir := os.Getenv(BinEnv); dir != "" {
		p := filepath.Join(dir, name)
		fi, err := os.Stat(p)
		return p, err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
	}
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/" + name)
	if len(found) > 0 {
		sort.Slice(found, func(i, j int) bool { return version(found[i]) > version(found[j]) })
		return found[0], true
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, true
	}
	return "", false
}

// version is the major version in a /usr/lib/postgresql/<version>/bin path.
func version(path string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(path))))
	return v
}

// Installed reports whether the programs a server needs are found; the
// error is a *NotInstalledError naming the first missing one.
func Installed() error {
	_, err := programPaths()
	return err
}

func programPaths() (map[string]string, error) {
	bins := map[string]string{}
	for _, p := range programs {
		path, ok := find(p)
		if !ok {
			return nil, &NotInstalledError{Program: p}
		}
		bins[p] = path
	}
	return bins, nil
}

// Start initialises a database cluster in a new temporary folder and starts
// a server on a Unix socket there (no TCP port), waiting until it accepts
// connections or ctx ends. As root the server runs as the postgres user
// (PostgreSQL refuses root).
func Start(ctx context.Context) (*Server, error) {
	bins, err := programPaths()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "gpufinops-pg-")
	if err != nil {
		return nil, err
	}
	s := &Server{dir: dir, bins: bins, done: make(chan error, 1)}
	if err := s.start(ctx); err != nil {
		_ = s.Stop()
		return nil, err
	}
	return s, nil
}

func (s *Server) start(ctx context.Context) error {
	var uid, gid = -1, -1
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return errors.New("PostgreSQL refuses to run as root and there is no postgres user to run it as (Debian's postgresql package creates one)")
		}
		uid, _ = strconv.Atoi(u.Uid)
		gid, _ = strconv.Atoi(u.Gid)
		if err := os.Chmod(s.dir, 0o755); err != nil {
			return err
		}
		if err := os.Chown(s.dir, uid, gid); err != nil {
			return err
		}
	}
	data := filepath.Join(s.dir, "data")
	initdb := exec.CommandContext(ctx, s.bins["initdb"], "-D", data, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-sync")
	initdb.SysProcAttr, initdb.Env = procAttr(uid, gid), serverEnv()
	if out, err := initdb.CombinedOutput(); err != nil {
		return fmt.Errorf("initdb: %v: %s", err, lastLine(out))
	}
	log, err := os.Create(filepath.Join(s.dir, "log"))
	if err != nil {
		return err
	}
	defer log.Close()
	// -F: no fsync, the data is thrown away. No TCP listener: the socket in dir.
	s.cmd = exec.Command(s.bins["postgres"], "-D", data, "-k", s.dir, "-c", "listen_addresses=", "-F")
	s.cmd.SysProcAttr, s.cmd.Env = procAttr(uid, gid), serverEnv()
	s.cmd.Stdout, s.cmd.Stderr = log, log
	if err := s.cmd.Start(); err != nil {
		return fmt.Errorf("starting postgres: %w", err)
	}
	go func() { s.done <- s.cmd.Wait() }()
	for delay := 20 * time.Millisecond; ; delay = min(2*delay, 500*time.Millisecond) {
		if _, err := s.Run("-c", "SELECT 1"); err == nil {
			return nil
		}
		select {
		case err := <-s.done:
			s.done <- err
			b, _ := os.ReadFile(filepath.Join(s.dir, "log"))
			return fmt.Errorf("postgres exited (%v): %s", err, lastLine(b))
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
	}
}

// serverEnv is the environment of initdb and the server: the process's,
// with a locale every system has.
func serverEnv() []string {
	return append(os.Environ(), "LC_ALL=C", "LANG=C")
}

// lastLine is the last non-empty line of a program's output.
func lastLine(out []byte) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// Dir is the server's folder: its data, log and socket.
func (s *Server) Dir() string { return s.dir }

// Stop stops the server (a fast shutdown, then a kill after ten seconds)
// and removes its folder. It may be called more than once.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() {
		if s.cmd != nil && s.cmd.Process != nil {
			_ = s.cmd.Process.Signal(os.Interrupt) // SIGINT: fast shutdown
			select {
			case <-s.done:
			case <-time.After(10 * time.Second):
				_ = s.cmd.Process.Kill()
				<-s.done
			}
		}
		s.stopErr = os.RemoveAll(s.dir)
	})
	return s.stopErr
}

// Run runs psql with args against the server; the error is psql's message.
func (s *Server) Run(args ...string) ([]byte, error) {
	c := exec.Command(s.bins["psql"], append([]string{"-h", s.dir, "-U", "postgres", "-d", "postgres", "-X", "-q", "-v", "ON_ERROR_STOP=1"}, args...)...)
	var stderr bytes.Buffer
	c.Stderr = &stderr
	out, err := c.Output()
	if err != nil {
		return nil, psqlError(stderr.String(), err)
	}
	return out, nil
}

// psqlError is psql's message on one line: the error without its ERROR:
// prefix, and the line of the query it points at (psql's LINE n: and caret
// lines), as the warehouses word a bad query; err when psql wrote nothing.
func psqlError(stderr string, err error) error {
	var msg, at string
	for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
		l = strings.TrimSpace(l)
		switch {
		case msg == "":
			if i := strings.Index(l, "ERROR:"); i >= 0 {
				l = l[i+len("ERROR:"):]
			}
			msg = strings.TrimSpace(l)
		case at == "" && strings.HasPrefix(l, "LINE "):
			at = "line " + strings.TrimPrefix(l, "LINE ")
		}
	}
	switch {
	case msg == "":
		return err
	case at != "":
		return errors.New(msg + " (" + at + ")")
	}
	return errors.New(msg)
}

// Query runs one query: its column names and rows, nil for a NULL (and for
// the text NULL, which psql's CSV cannot tell apart).
func (s *Server) Query(q string) ([]string, [][]*string, error) {
	out, err := s.Run("--csv", "-P", "null=NULL", "-c", q)
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

// Describe names the result columns of a query and their PostgreSQL types,
// without running it (psql's \gdesc): the engine parses and plans it.
func (s *Server) Describe(q string) (names, types []string, err error) {
	c := exec.Command(s.bins["psql"], "-h", s.dir, "-U", "postgres", "-d", "postgres", "-X", "-q", "-v", "ON_ERROR_STOP=1", "--csv")
	c.Stdin = strings.NewReader(strings.TrimRight(strings.TrimSpace(q), ";") + " \\gdesc\n")
	var stderr bytes.Buffer
	c.Stderr = &stderr
	out, err := c.Output()
	if err != nil {
		return nil, nil, psqlError(stderr.String(), err)
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

// Ident quotes a possibly schema-qualified table name: a.b is "a"."b".
func Ident(table string) string {
	parts := strings.Split(table, ".")
	for i, p := range parts {
		parts[i] = `"` + strings.ReplaceAll(p, `"`, `""`) + `"`
	}
	return strings.Join(parts, ".")
}

// CreateFOCUS creates table (a schema-qualified name with its schema) with
// header's columns, typed as a warehouse holds FOCUS: costs and quantities
// NUMERIC, periods TIMESTAMP, the rest TEXT.
func (s *Server) CreateFOCUS(table string, header []string) error {
	if parts := strings.Split(table, "."); len(parts) == 2 {
		if _, err := s.Run("-c", "CREATE SCHEMA IF NOT EXISTS "+Ident(parts[0])); err != nil {
			return err
		}
	}
	var cols []string
	for _, c := range header {
		typ := "TEXT"
		switch c {
		case "BilledCost", "EffectiveCost", "ListCost", "ContractedCost", "ConsumedQuantity", "ListUnitPrice", "PricingQuantity", "ContractedUnitPrice":
			typ = "NUMERIC"
		case "BillingPeriodStart", "BillingPeriodEnd", "ChargePeriodStart", "ChargePeriodEnd":
			typ = "TIMESTAMP"
		}
		cols = append(cols, Ident(c)+" "+typ)
	}
	_, err := s.Run("-c", "CREATE TABLE "+Ident(table)+" ("+strings.Join(cols, ", ")+")")
	return err
}

// LoadFOCUS creates table as CreateFOCUS does and copies the CSV file at
// path (header's columns, a header row first) into it, NULL for the
// literal NULL.
func (s *Server) LoadFOCUS(table string, header []string, path string) error {
	if err := s.CreateFOCUS(table, header); err != nil {
		return err
	}
	if strings.ContainsAny(path, "'\n") {
		return fmt.Errorf("%s: a path with a quote or a newline cannot be loaded", path)
	}
	_, err := s.Run("-c", `\copy `+Ident(table)+` FROM '`+path+`' WITH (FORMAT csv, HEADER true, NULL 'NULL')`)
	return err
}

// googleTable is a backticked `project.dataset.table`.
var googleTable = regexp.MustCompile("`[^`.]+\\.([^`.]+)\\.([^`.]+)`")

// GoogleSQL is a bqsim.Exec that runs GoogleSQL on s after mapping the
// four spellings that differ in the aggregation: backticked
// `project.dataset.table` to "dataset"."table", other backticks to double
// quotes, BIGNUMERIC to NUMERIC, STRING to TEXT. Everything else (SUM,
// CAST, COALESCE, LOWER, GROUP BY ordinals, TIMESTAMP literals) is the
// engine's own. Result types are BigQuery's: BIGNUMERIC, INTEGER,
// TIMESTAMP, STRING.
func GoogleSQL(s *Server) bqsim.Exec {
	return func(q string) ([]bqsim.Column, [][]*string, error) {
		q = googleTable.ReplaceAllString(q, `"$1"."$2"`)
		q = strings.ReplaceAll(q, "`", `"`)
		q = strings.ReplaceAll(q, "BIGNUMERIC", "NUMERIC")
		q = strings.ReplaceAll(q, "AS STRING)", "AS TEXT)")
		names, types, err := s.Describe(q)
		if err != nil {
			return nil, nil, err
		}
		_, rows, err := s.Query(q)
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
