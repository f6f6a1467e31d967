package inventory

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/testutil"
)

// On a terminal the table fits 80 and 200 columns.
func TestInventoryTableWidths(t *testing.T) {
	for _, w := range testutil.TableWidths {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			f, _, out, _ := testFactory(t, fakeCatalog{})
			f.IOStreams.SetStdoutTTY(true)
			f.IOStreams.SetTerminalWidth(w)
			f.IOStreams.SetStderrTTY(true)
			opts := &InventoryOptions{IO: f.IOStreams, Fleet: f.Fleet, Catalog: f.Catalog, Input: cmdutil.FleetFlags{Demo: true}, Output: "table"}
			if err := inventoryRun(opts); err != nil {
				t.Fatal(err)
			}
			testutil.AssertGolden(t, fmt.Sprintf("testdata/demo-table-tty-%d.golden", w), out.Bytes())
			testutil.AssertFits(t, out.String(), w)
			testutil.AssertNotCut(t, out.String())
			testutil.AssertFits(t, f.IOStreams.ErrOut.(*bytes.Buffer).String(), w)
		})
	}
}
