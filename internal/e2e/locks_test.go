package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers"
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

	t.Run("--max-stops caps the stops of runs over other accounts running at the same time", func(t *testing.T) {
		locks := t.TempDir()
		three := 3
		// Run a, over account 111122223333, reserves its two stops and is
		// held in its first stop.
		a := startSim(t, mixedFleet(), nil)
		gate := &gatedStop{reached: make(chan struct{}), release: make(chan struct{})}
		optsA, outA, _ := a.options(t, true, filepath.Join(t.TempDir(), "a.jsonl"), func(p providers.Provider) providers.Provider { gate.Provider = p; return gate })
		optsA.MaxStops, optsA.Run.LockDir = &three, &locks
		errA := make(chan error, 1)
		go func() { errA <- idleStopRunForTest(optsA) }()
		select {
		case <-gate.reached:
		case err := <-errA:
			t.Fatalf("run a ended before stopping: %v", err)
		}
		// Run b, over another account at the same time, has two candidates
		// too: 2 + 2 > 3, so it stops nothing and exits 5.
		other := mixedFleet()
		for i := range other.Instances {
			other.Instances[i].Account = "444455556666"
		}
		b := startSim(t, other, nil)
		optsB, _, _ := b.options(t, true, filepath.Join(t.TempDir(), "b.jsonl"), nil)
		optsB.MaxStops, optsB.Run.LockDir = &three, &locks
		err := idleStopRunForTest(optsB)
		if cmdutil.ExitCodeFor(err) != cmdutil.ExitGate || !strings.Contains(err.Error(), "other runs still running stop 2") {
			t.Fatalf("got %v (exit %d), want exit 5", err, cmdutil.ExitCodeFor(err))
		}
		for id, s := range b.states() {
			if s == "stopped" && id != "stopped" {
				t.Errorf("%s stopped past the shared cap", id)
			}
		}
		close(gate.release)
		if err := <-errA; err != nil {
			t.Fatal(err)
		}
		if r := decode(t, outA.String()); r.Summary.Stopped != 2 {
			t.Fatalf("run a: %+v", r.Summary)
		}
		// Run a has ended: run b now has the whole cap.
		optsB, _, _ = b.options(t, true, filepath.Join(t.TempDir(), "b.jsonl"), nil)
		optsB.MaxStops, optsB.Run.LockDir = &three, &locks
		if err := idleStopRunForTest(optsB); err != nil {
			t.Fatal(err)
		}
	})
}

// gatedStop holds the first real stop until release is closed.
type gatedStop struct {
	providers.Provider
	reached, release chan struct{}
	once             sync.Once
}

func (g *gatedStop) ReadUtilization(ctx context.Context, s providers.Scope, in []fleet.Instance, w fleet.TimeRange) ([]string, error) {
	return g.Provider.(providers.UtilizationReader).ReadUtilization(ctx, s, in, w)
}

func (g *gatedStop) Stop(ctx context.Context, s providers.Scope, id string, dry bool) (providers.StopResult, error) {
	if !dry {
		g.once.Do(func() { close(g.reached) })
		<-g.release
	}
	return g.Provider.(providers.Stopper).Stop(ctx, s, id, dry)
}
