package recommend

import (
	"testing"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
)

// TestIdleUnderHostOnlyCUD: an idle g2-standard-4 ($0.784/h on demand at
// the live unit prices: 4 × 0.03 + 16 × 0.004 + 0.6) whose vCPUs and memory
// a resource-based CUD covers but not its L4. Stopping it frees the CUD's
// host part, still paid, and saves the L4's hours: 0.6 × 730 = $438.00 a
// month, not zero (the machine counted covered) and not all of it.
func TestIdleUnderHostOnlyCUD(t *testing.T) {
	base, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	cat := pricing.Overlay(base, g2Live())
	in := inst("small", "g2-standard-4", withUtil(agg(idle, idle, idle, idle)), func(in *fleet.Instance) {
		in.Provider, in.Region, in.Zone = fleet.GCP, "europe-west4", "europe-west4-a"
	})
	commit := decimal.RequireFromString("0.13")
	f := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind, Instances: []fleet.Instance{in},
		Commitments: []fleet.Held{{ID: "cud-host", Provider: fleet.GCP, Kind: fleet.HeldResourceCUD, Term: "1y", Scope: fleet.HeldScope{Region: "europe-west4"},
			InstanceFamily: "g2", Resources: []fleet.HeldResource{{Type: "vcpu", Amount: 4}, {Type: "memory", Amount: 16}}, HourlyCommitment: &commit}}}
	if err := pricing.Complete(f, cat); err != nil {
		t.Fatal(err)
	}
	p := Run(f, cat, DefaultPolicy())
	checkSums(t, p)
	checkHeld(t, p)
	var stop *Recommendation
	for i, r := range p.Recommendations {
		if r.Kind == KindIdleStop && r.ResourceID == "small" {
			stop = &p.Recommendations[i]
		}
	}
	if stop == nil {
		t.Fatalf("no idle-stop for the machine whose L4 no commitment covers: %+v", p.Recommendations)
	}
	if want := decimal.RequireFromString("438"); !stop.MonthlySavings.Equal(want) {
		t.Errorf("stop saves %s a month, want %s (the L4's hours)", stop.MonthlySavings, want)
	}
	for _, ic := range p.Instances {
		if ic.ResourceID == "small" && (ic.CoveredShare != 0.23 || !ic.CommitmentMonthly.Equal(decimal.RequireFromString("94.9"))) {
			t.Errorf("covered %v, commitment %s a month; want 0.23 and 94.90 (0.13 × 730)", ic.CoveredShare, ic.CommitmentMonthly)
		}
	}
}
