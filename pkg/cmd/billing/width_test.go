package billing

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/pkg/testutil"
	"github.com/gpufinops/gpufinops/pricing/catalog"
)

// On a terminal the table and its footer fit 80 and 200 columns, and an AWS
// instance id is shown whole.
func TestSummaryTableWidths(t *testing.T) {
	for _, w := range testutil.TableWidths {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			ios, _, out, errOut := iostreams.Test()
			ios.SetStdoutTTY(true)
			ios.SetStderrTTY(true)
			ios.SetTerminalWidth(w)
			opts := SummaryOptions{IO: ios, Catalog: catalog.Embedded, Source: sample, Format: "table", Ctx: t.Context()}
			if err := summaryRun(&opts); err != nil {
				t.Fatal(err)
			}
			testutil.AssertGolden(t, fmt.Sprintf("testdata/summary-tty-%d.txt", w), out.Bytes())
			testutil.AssertGolden(t, fmt.Sprintf("testdata/summary-tty-%d.stderr.txt", w), errOut.Bytes())
			testutil.AssertFits(t, out.String(), w)
			testutil.AssertNotCut(t, out.String())
			testutil.AssertFits(t, errOut.String(), w)
			if !strings.Contains(out.String(), "i-006flle71l19b488a") {
				t.Errorf("the AWS instance id is shortened:\n%s", out)
			}
		})
	}
}
