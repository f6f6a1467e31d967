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

// TableCells reads the column headed header (upper-case, as a terminal table
// prints it) back from the first terminal table in out: one cell per row, a
// wrapped cell's continuation lines joined by spaces. A row starts on a line
// whose first column is not blank; the table ends at a blank line.
func TableCells(out, header string) []string {
	lines := strings.Split(out, "\n")
	var cells []string
	start := -1
	for _, l := range lines {
		plain := tableprinter.StripColor(l)
		if start < 0 {
			if i := strings.Index(plain, header); i >= 0 && strings.HasPrefix(plain, strings.ToUpper(plain[:1])) && plain == strings.ToUpper(plain) {
				start = len([]rune(plain[:i]))
			}
			continue
		}
		if strings.TrimSpace(plain) == "" {
			break
		}
		r := []rune(plain)
		cell := ""
		if start < len(r) {
			cell = string(r[start:])
			if i := strings.Index(cell, "  "); i >= 0 {
				cell = cell[:i]
			}
			cell = strings.TrimSpace(cell)
		}
		if r[0] != ' ' || len(cells) == 0 {
			cells = append(cells, cell)
		} else if cell != "" {
			cells[len(cells)-1] += " " + cell
		}
	}
	return cells
}

// AssertNotCut fails the test for every word of out that lost its start
// ("…a00000000004e": an identifier that can no longer be copied, where the
// middle should have given way) and for every cell under the given headers
// (upper-case: what the user acts on, such as ACTION or REASON) that holds a
// "…": those wrap, they are never cut.
func AssertNotCut(t *testing.T, out string, headers ...string) {
	t.Helper()
	for i, l := range strings.Split(tableprinter.StripColor(out), "\n") {
		for _, w := range strings.Fields(l) {
			if strings.HasPrefix(w, "…") && w != "…" {
				t.Errorf("line %d: %q is cut at the front: %q", i+1, w, l)
			}
		}
	}
	for _, h := range headers {
		cells := TableCells(out, h)
		if len(cells) == 0 {
			t.Errorf("no column %s in:\n%s", h, out)
		}
		for _, c := range cells {
			if strings.Contains(c, "…") {
				t.Errorf("%s cell is cut: %q", h, c)
			}
		}
	}
}
