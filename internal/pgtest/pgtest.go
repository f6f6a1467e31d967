// Package pgtest starts a throwaway PostgreSQL (internal/pgserver) for
// tests and loads FOCUS exports into it: the real SQL engine the
// push-down's queries run on. A test skips when PostgreSQL is not
// installed.
package pgtest

import (
	"errors"
	"testing"

	"github.com/gpufinops/gpufinops/internal/pgserver"
	"github.com/gpufinops/gpufinops/providers/gcp/sim/bqsim"
)

// DB is a running server, stopped and removed when its test ends.
type DB struct {
	*pgserver.Server
}

// Start starts a server for t; it skips the test when PostgreSQL is not
// installed.
func Start(t testing.TB) *DB {
	t.Helper()
	s, err := pgserver.Start(t.Context())
	var missing *pgserver.NotInstalledError
	if errors.As(err, &missing) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Error(err)
		}
	})
	return &DB{s}
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

// LoadFOCUS is pgserver's LoadFOCUS that fails the test on an error.
func (d *DB) LoadFOCUS(t testing.TB, table string, header []string, path string) {
	t.Helper()
	if err := d.Server.LoadFOCUS(table, header, path); err != nil {
		t.Fatal(err)
	}
}

// GoogleSQL is pgserver.GoogleSQL on d.
func GoogleSQL(d *DB) bqsim.Exec { return pgserver.GoogleSQL(d.Server) }
