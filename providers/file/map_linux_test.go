package file

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpufinops/gpufinops/internal/fleetgen"
	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// writeFleet writes a generated fleet of n instances in format (hostile
// edge cases and raw samples included) and returns its path.
func writeFleet(t *testing.T, format string, n int) string {
	t.Helper()
	f := fleetgen.Generate(fleetgen.Options{Instances: n, Seed: 7, SampleShare: 0.3, MaxSamples: 200, Hostile: true})
	b, err := fleet.Marshal(f, format)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "fleet."+format)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestMappedFleetOutlivesMapping parses a mapped file, unmaps it and then
// reads every field of the result: a string or slice left pointing into the
// mapping would fault here and crash the test.
func TestMappedFleetOutlivesMapping(t *testing.T) {
	for format, n := range map[string]int{"json": 1200, "yaml": 300} {
		t.Run(format, func(t *testing.T) {
			path := writeFleet(t, format, n)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			want, err := fleet.Parse(path, b)
			if err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			data, unmap, err := mapFile(f, len(b))
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			got, err := parseMapped(path, data)
			unmap()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("mapped parse differs from the read one (-read +mapped):\n%s", diff)
			}
			if format == "json" && len(b) < mapMinBytes {
				t.Fatalf("the JSON fleet is %d bytes, under mapMinBytes: Load reads it", len(b))
			}
			loaded, err := Load(path, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !cmp.Equal(want, loaded) {
				t.Error("Load differs from parsing the file's bytes")
			}
		})
	}
}

// TestMappedFileShrinks truncates a file after it is mapped: the parse
// reads past the file's new end, which faults, and must say so in an
// error, not crash.
func TestMappedFileShrinks(t *testing.T) {
	path := writeFleet(t, "json", 1200)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	data, unmap, err := mapFile(f, int(st.Size()))
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	defer unmap()
	if err := os.Truncate(path, 4096); err != nil {
		t.Fatal(err)
	}
	_, err = parseMapped(path, data)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "changed while it was read") {
		t.Fatalf("parse of a shrunk mapping: %v, want an error that names the file and says it changed", err)
	}
}

// TestLoadLargeErrorsAsRead checks that a large file's errors are the ones
// its bytes give when read: the mapped path names the same file, line and
// column, for a syntax error and for a value the checks refuse.
func TestLoadLargeErrorsAsRead(t *testing.T) {
	path := writeFleet(t, "json", 1200)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i := strings.LastIndex(string(b), `"state": "running"`)
	for name, bad := range map[string]string{
		"syntax":  string(b[:len(b)-3]),
		"refused": string(b[:i]) + `"state": "sleeping"` + string(b[i+len(`"state": "running"`):]),
	} {
		if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		_, want := fleet.Parse(path, []byte(bad))
		_, got := Load(path, nil)
		if want == nil || got == nil || got.Error() != want.Error() {
			t.Errorf("%s: Load: %v\nParse: %v", name, got, want)
		}
	}
}
