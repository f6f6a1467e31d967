package reportdiff

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/testutil"
)

// On a terminal the diff fits 80 and 200 columns.
func TestWriteTableWidths(t *testing.T) {
	d := testDiff(t)
	for _, w := range testutil.TableWidths {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			var b bytes.Buffer
			if err := Write(&b, d, "table", PrintOptions{TTY: true, Width: w}); err != nil {
				t.Fatal(err)
			}
			testutil.AssertGolden(t, fmt.Sprintf("testdata/diff_tty_%d.golden", w), b.Bytes())
			testutil.AssertFits(t, b.String(), w)
			testutil.AssertNotCut(t, b.String(), "DETAILS")
		})
	}
}
