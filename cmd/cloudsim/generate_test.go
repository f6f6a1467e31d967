package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
	"github.com/gpufinops/gpufinops/providers/file"
	"github.com/gpufinops/gpufinops/providers/simkit"
)

// TestGenerateServable: a generated fleet, JSON by --out's extension, loads,
// completes from the catalog and is served whole by every simulator; the
// same seed writes the same bytes.
func TestGenerateServable(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "fleet.json")
	args := []string{"--instances", "400", "--seed", "7", "--regions", "4", "--accounts", "2", "--out", path}
	var stdout, stderr bytes.Buffer
	if rc := runGenerate(args, &stdout, &stderr); rc != exitOK {
		t.Fatalf("rc %d: %s", rc, stderr.String())
	}
	first, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(first, []byte("{")) {
		t.Fatalf("not JSON: %.40s", first)
	}
	if rc := runGenerate(args, &stdout, &stderr); rc != exitOK {
		t.Fatalf("rc %d: %s", rc, stderr.String())
	}
	if again, _ := os.ReadFile(path); !bytes.Equal(first, again) {
		t.Fatal("one seed wrote two fleets")
	}
	f, err := file.Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	if err := pricing.Complete(f, cat); err != nil {
		t.Fatal(err)
	}
	want := map[fleet.Provider]int{}
	for _, in := range f.Instances {
		if simulated(&in) {
			want[in.Provider]++
		}
	}
	kit, err := simkit.New(simkit.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, reg := range simkit.Registered() {
		sim, err := reg.Build(f, simkit.Env{Kit: kit, Now: func() time.Time { return time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC) }})
		if err != nil {
			t.Fatalf("%s: %v", reg.Title, err)
		}
		if got := len(sim.State()); got != want[reg.Provider] || got == 0 {
			t.Errorf("%s serves %d instances, the fleet has %d", reg.Title, got, want[reg.Provider])
		}
	}
}

// TestGenerateBadFlags: each bad flag is exit 2 and a message naming it.
func TestGenerateBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "--instances 0"},
		{[]string{"--instances", "-3"}, "--instances -3"},
		{[]string{"--instances", "x"}, `invalid value "x" for flag -instances`},
		{[]string{"--instances", "5", "--clouds", "aws,ibm"}, `--clouds "aws,ibm"`},
		{[]string{"--instances", "5", "--regions", "0"}, "--regions 0"},
		{[]string{"--instances", "5", "--regions", "us-east-1,,x"}, "--regions"},
		{[]string{"--instances", "5", "--clouds", "aws", "--regions", "mars-1"}, "mars-1"},
		{[]string{"--instances", "5", "--accounts", "0"}, "--accounts 0"},
		{[]string{"--instances", "10000001"}, "--instances 10000001: want a number of instances from 1 to 10000000"},
		{[]string{"--instances", "100000000000"}, "--instances 100000000000"},
		{[]string{"--instances", "99999999999999999999"}, "value out of range"},
		{[]string{"--instances", "5", "--accounts", "100001"}, "--accounts 100001: want a number of accounts per cloud from 1 to 100000"},
		{[]string{"--instances", "5", "--accounts", "9223372036854775807"}, "--accounts 9223372036854775807"},
		{[]string{"--instances", "5", "--format", "xml"}, `--format "xml"`},
		{[]string{"--instances", "5", "extra"}, `unexpected argument "extra"`},
	} {
		var stdout, stderr bytes.Buffer
		if rc := run(append([]string{"generate"}, tc.args...), &stdout, &stderr); rc != exitUsage || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%q: rc %d, %q; want 2 and %q", tc.args, rc, stderr.String(), tc.want)
		}
	}
}

// TestGenerateOutIsAtomic: a write that fails halfway leaves neither the
// file asked for nor a temporary one; an existing file is replaced whole only
// when the write succeeds.
func TestGenerateOutIsAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "fleet.json")
	boom := errors.New("disk full")
	err := writeFileAtomic(path, func(w io.Writer) error {
		io.WriteString(w, `{"apiVersion":`)
		return boom
	})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "--out "+path+": ") {
		t.Fatalf("error %v, want %v naming --out %s", err, boom, path)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("a failed write left %v", ents)
	}
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeFileAtomic(path, func(w io.Writer) error { return boom }); !errors.Is(err, boom) {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Fatalf("a failed write changed the file to %q", b)
	}
	if err := writeFileAtomic(path, func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "new" {
		t.Fatalf("file is %q after a write of new", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("the directory holds %v", ents)
	}
	var stdout, stderr bytes.Buffer
	if rc := run([]string{"generate", "--instances", "3", "--out", filepath.Join(dir, "missing", "f.json")}, &stdout, &stderr); rc != exitError || !strings.Contains(stderr.String(), "--out "+filepath.Join(dir, "missing", "f.json")+": no such file or directory") {
		t.Errorf("rc %d, %q", rc, stderr.String())
	}
}
