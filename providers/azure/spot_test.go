package azure

import (
	"testing"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// A Spot VM's eviction policy says whether it can be stopped: Deallocate
// yes, Delete no, and an empty or unknown policy is unknown (protected).
func TestSpotInterruptionOfEvictionPolicy(t *testing.T) {
	for _, tc := range []struct {
		priority, eviction string
		want               fleet.SpotInterruption
	}{
		{"Spot", "Deallocate", fleet.SpotDeallocate},
		{"spot", "deallocate", fleet.SpotDeallocate},
		{"Low", "Deallocate", fleet.SpotDeallocate},
		{"Spot", "Delete", fleet.SpotDelete},
		{"Spot", "", ""},
		{"Spot", "Hibernate", ""},
		{"Regular", "Deallocate", ""},
		{"", "", ""},
	} {
		if got := SpotInterruption(tc.priority, tc.eviction); got != tc.want {
			t.Errorf("%q/%q: %q, want %q", tc.priority, tc.eviction, got, tc.want)
		}
	}
}
