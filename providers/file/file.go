// Package file reads fleet snapshots from files (JSON or YAML, see
// docs/fleet-format.md) and serves the embedded demo fleet.
package file

import (
	_ "embed"
	"errors"
	"fmt"
	"io"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// demoYAML is the demo fleet; testdata/fleets/demo.yaml is a byte-identical copy.
//
//go:embed demo.yaml
var demoYAML []byte

// StdinName is the name a fleet read from standard input goes by in errors.
const StdinName = "<stdin>"

// DemoName is the file name the demo fleet is parsed under; errors name it.
const DemoName = "demo.yaml"

// Demo returns the embedded demo fleet, a fresh copy on every call.
func Demo() (*fleet.Fleet, error) { return fleet.Parse(DemoName, demoYAML) }

// Load reads and validates a fleet file; path "-" reads stdin. Errors name
// the file, e.g. "open fleet.yaml: no such file or directory".
func Load(path string, stdin io.Reader) (*fleet.Fleet, error) {
	if path != "-" {
		return loadFile(path)
	}
	if stdin == nil {
		return nil, errors.New("no standard input to read the fleet from")
	}
	data, err := io.ReadAll(stdin)
	if err != nil {
		return nil, fmt.Errorf("reading the fleet from standard input: %w", err)
	}
	return fleet.Parse(StdinName, data)
}
