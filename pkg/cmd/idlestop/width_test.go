package idlestop

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/idlestop"
	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/pkg/testutil"
)

// widthDecisions are a stop and two skips with long IDs, types and results.
var widthDecisions = []idlestop.Decision{
	{Provider: fleet.Azure, Region: "southeastasia", ResourceID: "/subscriptions/0000/resourceGroups/ml/providers/Microsoft.Compute/virtualMachines/eval-h100-01",
		InstanceType: "Standard_ND96isr_H100_v5", Decision: idlestop.Stop, Reason: idlestop.ReasonIdle,
		Metrics:       idlestop.Metrics{GPUMaxPercent: 0.4, Samples: 288},
		HourlySavings: idlestop.Amount{Decimal: decimal.RequireFromString("98.32")}, MonthlySavings: idlestop.Amount{Decimal: decimal.RequireFromString("71773.60")},
		Result: "dry-run"},
	{Provider: fleet.AWS, Region: "us-east-1", ResourceID: "i-0123456789abcdef0", InstanceType: "g4dn.xlarge",
		Decision: idlestop.Skip, Reason: idlestop.ReasonNotOptedIn, Metrics: idlestop.Metrics{GPUMaxPercent: 2, Samples: 288}},
	{Provider: fleet.GCP, Region: "europe-west4", ResourceID: "projects/ml/zones/europe-west4-a/instances/train-a100", InstanceType: "a2-highgpu-1g",
		Decision: idlestop.Skip, Reason: idlestop.ReasonPartialMetrics, Metrics: idlestop.Metrics{GPUMaxPercent: 1, Samples: 40}},
}

// On a terminal the decisions fit 80 and 200 columns.
func TestIdleStopTableWidths(t *testing.T) {
	for _, w := range testutil.TableWidths {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			ios, _, out, _ := iostreams.Test()
			ios.SetStdoutTTY(true)
			ios.SetTerminalWidth(w)
			ios.SetStderrTTY(true)
			s := idlestop.Summary{Considered: 3, Stop: 1, Skip: 2}
			if err := write(&IdleStopOptions{IO: ios, Output: "table"}, s, widthDecisions, nil, ""); err != nil {
				t.Fatal(err)
			}
			testutil.AssertGolden(t, fmt.Sprintf("testdata/table-tty-%d.golden", w), out.Bytes())
			testutil.AssertFits(t, out.String(), w)
			testutil.AssertFits(t, ios.ErrOut.(*bytes.Buffer).String(), w)
		})
	}
}
