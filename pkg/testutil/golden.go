// Package testutil holds test helpers: golden files and a fixed clock.
package testutil

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// UpdateEnv is the environment variable that, set to 1, makes AssertGolden
// rewrite golden files instead of comparing: `make golden` sets it for every
// package at once. The -update flag does the same for one package's tests.
const UpdateEnv = "GPUFINOPS_UPDATE_GOLDEN"

var update = flag.Bool("update", false, "rewrite golden files (or set "+UpdateEnv+"=1)")

// Updating reports whether golden files are being rewritten: -update, or
// GPUFINOPS_UPDATE_GOLDEN=1.
func Updating() bool { return *update || os.Getenv(UpdateEnv) == "1" }

// FixedNow is the clock every golden test uses.
var FixedNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// Now returns FixedNow; pass it where a func() time.Time is wanted.
func Now() time.Time { return FixedNow }

// AssertGolden compares got with the file at path (relative to the test's
// package) and rewrites it when Updating.
func AssertGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if Updating() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run with -update or "+UpdateEnv+"=1 to create it): %v", err)
	}
	if string(want) != string(got) {
		t.Errorf("output differs from %s (-want +got); run 'go test -update' or 'make golden' to accept:\n%s",
			path, cmp.Diff(strings.Split(string(want), "\n"), strings.Split(string(got), "\n")))
	}
}
