// Package file reads fleet snapshots from files and serves the embedded demo
// fleet. STUB: being built.
package file

import (
	"errors"
	"io"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// Demo returns the embedded demo fleet.
func Demo() (*fleet.Fleet, error) { return nil, errors.New("demo: not built yet") }

// Load reads a fleet file; path "-" reads stdin.
func Load(path string, stdin io.Reader) (*fleet.Fleet, error) {
	return nil, errors.New("load: not built yet")
}
