package recommend

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/gpufinops/gpufinops/internal/fleetgen"
	"github.com/gpufinops/gpufinops/internal/purchasetest"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
)

// TestPhasesRecordAfterFinding: RunWith finds all of a phase's changes
// before it records any, which is the plan of recording each change as soon
// as its instance's rule finds it only while no rule reads what recording
// another instance's change leaves. On generated fleets (every cloud,
// schedules, samples, hostile edge cases) the plans must be the same, byte
// for byte.
func TestPhasesRecordAfterFinding(t *testing.T) {
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	saved := append([]phase(nil), phases...)
	defer copy(phases, saved)
	pol := DefaultPolicy().WithPurchases(purchasetest.Purchases())
	for seed := range uint64(6) {
		run := func() []byte {
			f := fleetgen.Generate(fleetgen.Options{Instances: 500, Seed: seed, SampleShare: 0.2, MaxSamples: 300, Hostile: seed%2 == 1})
			if err := pricing.Complete(f, cat); err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(RunWith(f, cat, pol, Options{}))
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
		want := run()
		for i, ph := range saved {
			if ph.each == nil {
				continue
			}
			rule := ph.each
			// Record at once and hand RunWith nothing to record.
			phases[i] = phase{each: func(e *engine, s *state) *change {
				if c := rule(e, s); c != nil {
					e.record(s, c)
				}
				return nil
			}}
		}
		got := run()
		copy(phases, saved)
		if !bytes.Equal(got, want) {
			i := 0
			for i < min(len(got), len(want)) && got[i] == want[i] {
				i++
			}
			t.Fatalf("fleet %d: recording as found differs at byte %d: …%s… against …%s…", seed, i,
				got[max(0, i-200):min(len(got), i+200)], want[max(0, i-200):min(len(want), i+200)])
		}
	}
}
