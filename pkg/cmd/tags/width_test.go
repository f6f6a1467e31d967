package tags

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/testutil"
)

// On a terminal the audit fits 80 and 200 columns.
func TestAuditTableWidths(t *testing.T) {
	for _, w := range testutil.TableWidths {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			opts, out, _ := demoOptions(t, "table", true)
			opts.IO.SetTerminalWidth(w)
			opts.IO.SetStderrTTY(true)
			if err := auditRun(opts); err != nil {
				t.Fatal(err)
			}
			testutil.AssertGolden(t, fmt.Sprintf("testdata/demo-table-tty-%d.txt", w), out.Bytes())
			testutil.AssertFits(t, out.String(), w)
			testutil.AssertNotCut(t, out.String(), "MISSING")
			testutil.AssertFits(t, opts.IO.ErrOut.(*bytes.Buffer).String(), w)
		})
	}
}
