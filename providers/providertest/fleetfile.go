package providertest

import (
	"os"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// ReadFleet reads and parses the fleet file at path (testdata/fleets/…,
// relative to the test's package), as `analyze --fleet` would.
func ReadFleet(t testing.TB, path string) *fleet.Fleet {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := fleet.Parse(path, data)
	if err != nil {
		t.Fatal(err)
	}
	return f
}
