package idlestop

import (
	"bytes"
	"fmt"
	"strings"
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
			testutil.AssertNotCut(t, out.String(), "REASON", "RESULT")
			testutil.AssertFits(t, ios.ErrOut.(*bytes.Buffer).String(), w)
		})
	}
}

// TestIdleStopTableNoData: a machine without samples shows "no data", not
// a 0.0 % busiest GPU; a machine left running shows no saving ("-"), not
// $0.00; a warning several machines share is said once, naming them; and
// the summary's saving is written as the table writes money.
func TestIdleStopTableNoData(t *testing.T) {
	store := "instance store: stopping loses the data on the 125 GB of local NVMe disks"
	var ds []idlestop.Decision
	for i := range 5 {
		ds = append(ds, idlestop.Decision{Provider: fleet.AWS, ResourceID: fmt.Sprintf("nb-%d", i), Decision: idlestop.Stop, Reason: idlestop.ReasonIdle,
			Metrics: idlestop.Metrics{GPUMaxPercent: 1, Samples: 30}, Warnings: []string{store},
			MonthlySavings: idlestop.Amount{Decimal: decimal.RequireFromString("1383.98")}})
	}
	ds = append(ds,
		idlestop.Decision{Provider: fleet.AWS, ResourceID: "hib", Decision: idlestop.Stop, Reason: idlestop.ReasonIdle,
			Metrics: idlestop.Metrics{Samples: 30}, Warnings: []string{"hibernation is configured but not used"}},
		idlestop.Decision{Provider: fleet.AWS, ResourceID: "ft-1", Decision: idlestop.Skip, Reason: idlestop.ReasonNoMetrics},
		idlestop.Decision{Provider: fleet.AWS, ResourceID: "train-1", Decision: idlestop.Skip, Reason: idlestop.ReasonOptedOut})
	for _, tty := range []bool{true, false} {
		ios, _, out, errOut := iostreams.Test()
		ios.SetStdoutTTY(tty)
		ios.SetStderrTTY(tty)
		ios.SetTerminalWidth(200)
		s := idlestop.Summary{Considered: len(ds), Stop: 6, Skip: 2, MonthlySavings: idlestop.Amount{Decimal: decimal.RequireFromString("6919.90")}}
		if err := write(&IdleStopOptions{IO: ios, Output: "table"}, s, ds, nil, ""); err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n")[1:] {
			id := strings.Fields(l)[0]
			switch {
			case (id == "ft-1" || id == "train-1") && (!strings.Contains(l, "no data") || strings.Contains(l, "0.0") || strings.Contains(l, "0.00")):
				t.Errorf("tty %v: %s without data: %q", tty, id, l)
			case strings.HasPrefix(id, "nb-") && !strings.Contains(l, map[bool]string{true: "$1,383.98", false: "1383.98"}[tty]):
				t.Errorf("tty %v: %s's saving: %q", tty, id, l)
			}
		}
		e := errOut.String()
		if n := strings.Count(e, store); n != 1 {
			t.Errorf("tty %v: the instance-store warning %d times:\n%s", tty, n, e)
		}
		for _, want := range []string{"warning: 5 machines (nb-0, nb-1, nb-2 and 2 more): " + store, "warning: hib: hibernation",
			map[bool]string{true: "saving $6,919.90 a month", false: "saving 6919.90 USD a month"}[tty]} {
			if !strings.Contains(strings.ReplaceAll(e, "\n  ", " "), want) {
				t.Errorf("tty %v: stderr lacks %q:\n%s", tty, want, e)
			}
		}
	}
}
