package doctor

import (
	"fmt"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/pkg/testutil"
	"github.com/gpufinops/gpufinops/providers"
)

// widthReport has an account-wide scope and a region with long details.
var widthReport = &Report{
	Scopes: []ScopeResult{
		{Scope: providers.Scope{Provider: fleet.AWS, Account: "123456789012"}, Checks: []providers.Check{
			{Name: "credentials", Status: providers.CheckOK, Detail: "arn:aws:sts::123456789012:assumed-role/gpufinops-readonly/session-2026-11-30"},
		}},
		{Scope: providers.Scope{Provider: fleet.AWS, Account: "123456789012", Region: "ap-southeast-3"}, Checks: []providers.Check{
			{Name: "permission", Action: "ec2:DescribeInstances", Method: "DryRun", Status: providers.CheckOK, Detail: "allowed"},
			{Name: "permission", Action: "cloudwatch:GetMetricData", Method: "one call", Status: providers.CheckMissing,
				Detail: "AccessDenied: User: arn:aws:iam::123456789012:user/ci is not authorized to perform: cloudwatch:GetMetricData",
				Fix:    "grant cloudwatch:GetMetricData (see 'gpufinops iam-policy aws')"},
			{Name: "metrics", Status: providers.CheckWarn, Detail: "no DCGM metrics in CWAgent for 3 of 4 GPU instances: utilization falls back to the fleet's"},
		}},
	},
	Summary: Summary{OK: 2, Missing: 1, Warn: 1},
}

// On a terminal the checks fit 80 and 200 columns.
func TestDoctorTableWidths(t *testing.T) {
	for _, w := range testutil.TableWidths {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			ios, _, out, _ := iostreams.Test()
			ios.SetStdoutTTY(true)
			ios.SetTerminalWidth(w)
			if err := write(&DoctorOptions{IO: ios, Output: "table"}, widthReport); err != nil {
				t.Fatal(err)
			}
			testutil.AssertGolden(t, fmt.Sprintf("testdata/table-tty-%d.golden", w), out.Bytes())
			testutil.AssertFits(t, out.String(), w)
			testutil.AssertNotCut(t, out.String(), "CHECK", "DETAIL")
		})
	}
}
