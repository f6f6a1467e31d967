package iampolicy

import (
	"fmt"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/pkg/testutil"
	"github.com/gpufinops/gpufinops/providers"
)

// wide is a cloud whose permissions are as long as AWS's: the table must
// cut the purposes to fit, never the actions.
var wide = &providers.Policy{
	Kind: "policy",
	Analyze: []providers.Permission{
		{Action: "wide:DescribeInstanceTypeOfferings", Purpose: "list which GPU instance types each region and zone offers, to price the alternatives a rightsize recommendation names"},
		{Action: "wide:GetMetricData", Purpose: "read GPU utilization (average, p95, maximum) and memory over the lookback window, batched 500 queries a call"},
	},
	IdleStop: []providers.Permission{
		{Action: "wide:StopInstances", Purpose: "stop an idle instance that carries the opt-in tag and passes every protection rule (idle-stop --execute only)"},
	},
	Document: func(bool) ([]byte, error) { return []byte("{}\n"), nil },
}

func init() { providers.Register(&providers.RegInfo{Name: "wide", Policy: wide}) }

// On a terminal the policy's table fits 80 and 200 columns.
func TestIAMPolicyTableWidths(t *testing.T) {
	for _, w := range testutil.TableWidths {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			ios, _, out, _ := iostreams.Test()
			ios.SetStdoutTTY(true)
			ios.SetTerminalWidth(w)
			if err := iamPolicyRun(&IAMPolicyOptions{IO: ios, Cloud: "wide", Output: "table", IdleStop: true}); err != nil {
				t.Fatal(err)
			}
			testutil.AssertGolden(t, fmt.Sprintf("testdata/wide-idle-stop-tty-%d.golden", w), out.Bytes())
			testutil.AssertFits(t, out.String(), w)
			testutil.AssertNotCut(t, out.String(), "WHY")
		})
	}
}
