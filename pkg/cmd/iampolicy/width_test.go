package iampolicy

import (
	"fmt"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/pkg/testutil"
)

// On a terminal the policy's table fits 80 and 200 columns.
func TestIAMPolicyTableWidths(t *testing.T) {
	for _, w := range testutil.TableWidths {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			ios, _, out, _ := iostreams.Test()
			ios.SetStdoutTTY(true)
			ios.SetTerminalWidth(w)
			if err := iamPolicyRun(&IAMPolicyOptions{IO: ios, Cloud: "aws", Output: "table", IdleStop: true}); err != nil {
				t.Fatal(err)
			}
			testutil.AssertGolden(t, fmt.Sprintf("testdata/aws-idle-stop-tty-%d.golden", w), out.Bytes())
			testutil.AssertFits(t, out.String(), w)
		})
	}
}
