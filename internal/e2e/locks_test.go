package e2e

import (
	"path/filepath"
	"sync"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/cmdutil"
)

func TestIdleStopLocksPerAccount(t *testing.T) {
	t.Run("concurrent runs with different audit logs never both act", func(t *testing.T) {
		e := startSim(t, mixedFleet(), nil)
		dir := t.TempDir()
		var wg sync.WaitGroup
		errs, outs := make([]error, 3), make([]string, 3)
		for i := range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				opts, out, _ := e.options(t, true, filepath.Join(dir, "audit-"+string(rune('a'+i))+".jsonl"), nil)
				errs[i] = idleStopRunForTest(opts)
				outs[i] = out.String()
			}()
		}
		wg.Wait()
		stops := 0
		for i := range 3 {
			if errs[i] != nil {
				t.Fatal(errs[i])
			}
			stops += decode(t, outs[i]).Summary.Stopped
		}
		if stops != 2 {
			t.Errorf("three runs stopped %d machines together, want 2 (each once)", stops)
		}
		// Each stop was sent once: one intent in all the logs together.
		intents := 0
		for i := range 3 {
			for _, l := range auditLines(t, filepath.Join(dir, "audit-"+string(rune('a'+i))+".jsonl")) {
				if l["type"] == "intent" {
					intents++
				}
			}
		}
		if intents != 2 {
			t.Errorf("%d intents across the logs, want 2", intents)
		}
	})

	t.Run("--max-stops caps the stops of runs sharing the lock directory", func(t *testing.T) {
		locks := t.TempDir()
		three := 3
		// The first run stops its two idle machines (cap 3).
		a := startSim(t, mixedFleet(), nil)
		opts, _, _ := a.options(t, true, filepath.Join(t.TempDir(), "a.jsonl"), nil)
		opts.MaxStops, opts.Run.LockDir = &three, &locks
		if err := idleStopRunForTest(opts); err != nil {
			t.Fatal(err)
		}
		// A second run in the same window, over another fleet, has two
		// candidates too: 2 + 2 > 3, so it stops nothing and exits 5.
		b := startSim(t, mixedFleet(), nil)
		opts, _, _ = b.options(t, true, filepath.Join(t.TempDir(), "b.jsonl"), nil)
		opts.MaxStops, opts.Run.LockDir = &three, &locks
		err := idleStopRunForTest(opts)
		if cmdutil.ExitCodeFor(err) != cmdutil.ExitGate {
			t.Fatalf("got %v (exit %d), want exit 5", err, cmdutil.ExitCodeFor(err))
		}
		for id, s := range b.states() {
			if s == "stopped" && id != "stopped" {
				t.Errorf("%s stopped past the shared cap", id)
			}
		}
		// With its own lock directory the cap is its own.
		other := t.TempDir()
		opts, _, _ = b.options(t, true, filepath.Join(t.TempDir(), "b.jsonl"), nil)
		opts.MaxStops, opts.Run.LockDir = &three, &other
		if err := idleStopRunForTest(opts); err != nil {
			t.Fatal(err)
		}
	})
}
