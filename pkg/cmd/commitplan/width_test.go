package commitplan

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/gpufinops/gpufinops/internal/purchasetest"
	"github.com/gpufinops/gpufinops/pkg/recommend"
	"github.com/gpufinops/gpufinops/pkg/testutil"
)

// On a terminal the plan, tables and prose, fits 80 and 200 columns.
func TestCommitPlanTableWidths(t *testing.T) {
	for _, w := range testutil.TableWidths {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			opts, out := demoOptions(t, "table", true, recommend.DefaultPolicy().WithPurchases(purchasetest.Purchases()))
			opts.IO.SetTerminalWidth(w)
			opts.IO.SetStderrTTY(true)
			if err := commitPlanRun(opts); err != nil {
				t.Fatal(err)
			}
			testutil.AssertGolden(t, fmt.Sprintf("testdata/demo-table-tty-%d.txt", w), out.Bytes())
			testutil.AssertFits(t, out.String(), w)
			testutil.AssertNotCut(t, out.String(), "CHEAPEST")
			testutil.AssertFits(t, opts.IO.ErrOut.(*bytes.Buffer).String(), w)
		})
	}
}
