package recommend

import (
	"testing"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// TestRightsizeKeepsFlexibleCoverage: a g5.2xlarge (16 normalized units,
// $884.76 a month on demand) half covered by a size-flexible g5.xlarge RI
// (8 units, $0.60/h) is rightsized to a g5.xlarge. The RI's 8 units cover
// the g5.xlarge in full, so the move saves the uncovered half, $442.38;
// before, the new size was billed every hour and the move saved nothing.
// An RI for the g5.2xlarge alone (not size-flexible) does not follow it.
func TestRightsizeKeepsFlexibleCoverage(t *testing.T) {
	over := inst("a", "g5.2xlarge", withUtil(agg(fleet.Stats{Avg: 35, P95: 46, Max: 71}, memHigh, hostLow, fleet.Stats{Avg: 21, P95: 25, Max: 31})))
	for _, tc := range []struct {
		name   string
		held   fleet.Held
		saving string // "" when no rightsize is recommended
	}{
		{"size-flexible RI of the smaller size", ri("ri", "g5.xlarge", 1, "0.6", true), "442.38"},
		{"size-flexible RI of its own size", ri("ri", "g5.2xlarge", 1, "0.8", true), "0"},
		{"RI of its own size only", ri("ri", "g5.2xlarge", 1, "0.8", false), ""},
		{"RI of another size, not flexible", ri("ri", "g5.xlarge", 1, "0.6", false), "150.38"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := runHeld(t, []fleet.Held{tc.held}, over)
			var got *Recommendation
			for i, r := range p.Recommendations {
				if r.Kind == KindRightsize {
					got = &p.Recommendations[i]
				}
			}
			switch {
			case tc.saving == "" && got != nil:
				t.Errorf("rightsize to %s saving %s recommended, whose hours the RI pays", got.Target, got.MonthlySavings)
			case tc.saving != "" && tc.saving != "0" && (got == nil || got.Target != "g5.xlarge" || !got.MonthlySavings.Equal(decimal.RequireFromString(tc.saving))):
				t.Errorf("rightsize %+v, want to g5.xlarge saving %s", got, tc.saving)
			case tc.saving == "0" && got != nil && got.MonthlySavings.IsPositive():
				t.Errorf("rightsize within a fully covered flexible RI saves %s", got.MonthlySavings)
			}
		})
	}
}
