package testutil

import (
	"strings"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/tableprinter"
)

// TableWidths are the terminal widths every command's table is tested at: a
// standard terminal and a wide one.
var TableWidths = []int{80, 200}

// AssertFits fails the test for every line of out wider than width terminal
// columns (colour codes aside).
func AssertFits(t *testing.T, out string, width int) {
	t.Helper()
	for i, l := range strings.Split(out, "\n") {
		if n := tableprinter.Width(l); n > width {
			t.Errorf("line %d is %d columns, wider than %d: %q", i+1, n, width, l)
		}
	}
}
