package pgserver

import (
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
)

// TestStartQueryStop starts a server, runs a query on it, and stops it:
// the server process is gone and its folder removed.
func TestStartQueryStop(t *testing.T) {
	s, err := Start(t.Context())
	var missing *NotInstalledError
	if errors.As(err, &missing) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	cols, rows, err := s.Query(`SELECT CAST('1.005' AS NUMERIC) * 3 AS x, NULL AS y`)
	if err != nil || len(cols) != 2 || len(rows) != 1 || *rows[0][0] != "3.015" || rows[0][1] != nil {
		t.Fatalf("query: %v %v %v", cols, rows, err)
	}
	if _, _, err := s.Query("SELEC 1"); err == nil || !strings.Contains(err.Error(), "syntax error") || strings.Contains(err.Error(), "\n") {
		t.Errorf("a bad query: %v", err)
	}
	pid := s.cmd.Process.Pid
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.Dir()); !os.IsNotExist(err) {
		t.Errorf("%s is still there: %v", s.Dir(), err)
	}
	if err := syscall.Kill(pid, 0); err == nil {
		t.Errorf("postgres %d still runs", pid)
	}
	if err := s.Stop(); err != nil {
		t.Errorf("a second Stop: %v", err)
	}
}

func TestIdent(t *testing.T) {
	if got := Ident(`focus.gpu"bill`); got != `"focus"."gpu""bill"` {
		t.Errorf("Ident: %s", got)
	}
}

// A folder without PostgreSQL's programs is a NotInstalledError that says
// what to install.
func TestNotInstalled(t *testing.T) {
	t.Setenv(BinEnv, t.TempDir())
	_, err := Start(t.Context())
	var missing *NotInstalledError
	if !errors.As(err, &missing) || missing.Program != "initdb" || !strings.Contains(err.Error(), "apt-get install postgresql") {
		t.Errorf("Start: %v", err)
	}
	if Installed() == nil {
		t.Error("Installed: nil")
	}
}

func TestPsqlError(t *testing.T) {
	stderr := "psql:<stdin>:1: ERROR:  relation \"focus.nope\" does not exist\nLINE 27: FROM \"focus\".\"nope\"\n              ^\n"
	if got := psqlError(stderr, errors.New("exit status 1")).Error(); got != `relation "focus.nope" does not exist (line 27: FROM "focus"."nope")` {
		t.Errorf("psqlError: %s", got)
	}
	if got := psqlError("", errors.New("exit status 2")).Error(); got != "exit status 2" {
		t.Errorf("psqlError without a message: %s", got)
	}
}
