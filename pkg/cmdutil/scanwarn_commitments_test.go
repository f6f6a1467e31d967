package cmdutil

import (
	"errors"
	"strings"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers"
)

// A commitment API that failed is a commitments-failed warning of its
// scope whose reason names the API and what the advice may then do.
func TestScanWarningOfCommitments(t *testing.T) {
	err := &providers.ScopeError{Scope: providers.Scope{Provider: fleet.AWS, Account: "1"}, Commitments: true,
		Source: "savingsplans:DescribeSavingsPlans", Err: errors.New("permission denied")}
	w := ScanWarningOf(err)
	if w.Code != providers.ScanCommitmentsFailed || w.Provider != fleet.AWS || w.Account != "1" || w.Source != "savingsplans:DescribeSavingsPlans" {
		t.Errorf("warning %+v", w)
	}
	if !strings.HasPrefix(w.Reason, "savingsplans:DescribeSavingsPlans: permission denied") || !strings.Contains(w.Reason, "savings on capacity already committed") {
		t.Errorf("reason %q", w.Reason)
	}
}
