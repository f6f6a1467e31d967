package providers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// An instance reporting fewer GPUs than it has is partial, never counted as
// publishing; one reporting none is without; stopped ones are not counted.
func TestCoverageOfPartialGPUs(t *testing.T) {
	ins := []fleet.Instance{
		{ID: "full", State: fleet.Running, GPU: fleet.GPU{Count: 4}},
		{ID: "half", State: fleet.Running, GPU: fleet.GPU{Count: 4}},
		{ID: "none", State: fleet.Running, GPU: fleet.GPU{Count: 1}},
		{ID: "frac", State: fleet.Running, GPU: fleet.GPU{Count: 0.5}},
		{ID: "off", State: fleet.Stopped, GPU: fleet.GPU{Count: 8}},
	}
	reporting := map[string]int{"full": 4, "half": 2, "frac": 1}
	c := CoverageOf(ins, func(i int) int { return reporting[ins[i].ID] })
	if c.Running != 4 || c.OK() || fmt.Sprint(c.Partial) != "[half (2 of 4 GPUs)]" || fmt.Sprint(c.Without) != "[none]" {
		t.Fatalf("%+v", c)
	}
	if d := c.Detail("GPU VMs"); d != "2 of 4 running GPU VMs publish GPU metrics for every GPU; partial: half (2 of 4 GPUs); without: none" {
		t.Errorf("detail %q", d)
	}
	in := fleet.Instance{GPU: fleet.GPU{Count: 4}, Utilization: &fleet.Utilization{Samples: []fleet.Sample{{GPU: fleet.PerGPU{1, 2}}, {GPU: fleet.PerGPU{1}}}}}
	if n := SamplesReporting(&in); n != 2 {
		t.Errorf("samples of 2 GPUs at most: %d", n)
	}
	in.Utilization = &fleet.Utilization{GPU: &fleet.Stats{Avg: 1}}
	if n := SamplesReporting(&in); n != 4 {
		t.Errorf("summary figures: %d", n)
	}
}

type stopFunc func(id string) error

func (f stopFunc) Stop(_ context.Context, _ Scope, id string, dryRun bool) (StopResult, error) {
	if !dryRun {
		panic("doctor stopped " + id)
	}
	return StopResult{}, f(id)
}

// StopCheck dry-runs on an opted-in, unowned, running instance first, skips
// those that cannot be stopped, warns when denied and says when it had
// nothing to try.
func TestStopCheck(t *testing.T) {
	ins := []fleet.Instance{
		{ID: "owned", State: fleet.Running, Tags: map[string]string{"AutoShutdown": "true", "managed-by": "karpenter"}},
		{ID: "off", State: fleet.Stopped, Tags: map[string]string{"auto-shutdown": "true"}},
		{ID: "plain", State: fleet.Running},
		{ID: "spot", State: fleet.Running, Tags: map[string]string{"auto_shutdown": "TRUE"}},
		{ID: "opted", State: fleet.Running, Tags: map[string]string{"AutoShutdown": "true"}},
	}
	var tried []string
	ok := stopFunc(func(id string) error {
		tried = append(tried, id)
		if id == "spot" {
			return fmt.Errorf("%w: a one-time spot instance", ErrNotStoppable)
		}
		return nil
	})
	c := StopCheck(context.Background(), ok, Scope{}, ins, "x:Stop", "DryRun", "fix")
	// The owned and the stopped are never tried; the opted-in come first,
	// and one that cannot be stopped (spot) is passed over.
	if c.Status != CheckOK || c.Method != "DryRun on opted" || fmt.Sprint(tried) != "[spot opted]" {
		t.Errorf("%+v after %v", c, tried)
	}
	denied := stopFunc(func(id string) error { return fmt.Errorf("%w: not allowed", ErrPermission) })
	c = StopCheck(context.Background(), denied, Scope{}, ins, "x:Stop", "DryRun", "fix")
	if c.Status != CheckWarn || c.Fix != "fix" || !strings.Contains(c.Detail, "analyze is unaffected") {
		t.Errorf("denied: %+v", c)
	}
	c = StopCheck(context.Background(), denied, Scope{}, ins[1:2], "x:Stop", "DryRun", "fix")
	if c.Status != CheckOK || !strings.HasPrefix(c.Detail, "not checked") {
		t.Errorf("nothing to try: %+v", c)
	}
	broken := stopFunc(func(string) error { return errors.New("boom") })
	if c = StopCheck(context.Background(), broken, Scope{}, ins, "x:Stop", "DryRun", "fix"); c.Status != CheckError {
		t.Errorf("an error: %+v", c)
	}
}
