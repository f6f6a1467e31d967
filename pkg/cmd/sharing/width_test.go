package sharing

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/testutil"
)

// On a terminal the plan fits 80 and 200 columns.
func TestPlanTableWidths(t *testing.T) {
	for _, w := range testutil.TableWidths {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			opts, out, _ := options(t, testFleet, "table", true)
			opts.IO.SetTerminalWidth(w)
			opts.IO.SetStderrTTY(true)
			if err := planRun(opts); err != nil {
				t.Fatal(err)
			}
			testutil.AssertGolden(t, fmt.Sprintf("testdata/plan-table-tty-%d.txt", w), out.Bytes())
			testutil.AssertFits(t, out.String(), w)
			testutil.AssertNotCut(t, out.String(), "TENANTS", "FREES")
			// The tenants and the machines freed wrap; nothing is cut.
			if strings.Contains(out.String(), "…") {
				t.Errorf("a cell is cut:\n%s", out)
			}
			testutil.AssertFits(t, opts.IO.ErrOut.(*bytes.Buffer).String(), w)
		})
	}
}
