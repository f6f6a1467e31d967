package prices

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/pkg/testutil"
	"github.com/gpufinops/gpufinops/pricing/catalog"
)

// On a terminal the table fits 80 and 200 columns.
func TestPricesTableWidths(t *testing.T) {
	for _, w := range testutil.TableWidths {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			ios, _, out, _ := iostreams.Test()
			ios.SetStdoutTTY(true)
			ios.SetTerminalWidth(w)
			ios.SetStderrTTY(true)
			opts := PricesOptions{IO: ios, Catalog: catalog.Embedded, GPU: "H100", Output: "table",
				Now: func() time.Time { return time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC) }}
			if err := pricesRun(&opts); err != nil {
				t.Fatal(err)
			}
			testutil.AssertGolden(t, fmt.Sprintf("testdata/h100-tty-%d.golden", w), out.Bytes())
			testutil.AssertFits(t, out.String(), w)
			testutil.AssertNotCut(t, out.String())
			testutil.AssertFits(t, ios.ErrOut.(*bytes.Buffer).String(), w)
		})
	}
}
