package aws

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/smithy-go"

	"github.com/gpufinops/gpufinops/providers"
)

func stopFake() *fakeEC2 {
	return &fakeEC2{
		instances: []ec2Instance{
			testInstance("i-run", "g5.xlarge", "running", "", nil),
			testInstance("i-spot", "g5.xlarge", "running", "spot", nil),
			testInstance("i-off", "g5.xlarge", "stopped", "", nil),
			testInstance("i-gone", "g5.xlarge", "terminated", "", nil),
		},
		oneTimeSpot: map[string]bool{"i-spot": true},
	}
}

func TestStopUnit(t *testing.T) {
	ctx := context.Background()
	f := stopFake()

	res, err := stopInstance(ctx, f, "i-run", true)
	if err != nil || res != (providers.StopResult{PreviousState: "running", CurrentState: "running"}) {
		t.Fatalf("dry run = %+v, %v", res, err)
	}
	if f.dryRuns != 1 || f.stopCalls != 0 {
		t.Errorf("dry run: %d dry runs, %d stops; want 1 and 0", f.dryRuns, f.stopCalls)
	}

	res, err = stopInstance(ctx, f, "i-run", false)
	if err != nil || res != (providers.StopResult{PreviousState: "running", CurrentState: "stopping"}) {
		t.Fatalf("stop = %+v, %v", res, err)
	}
	if f.dryRuns != 2 || f.stopCalls != 1 {
		t.Errorf("stop: %d dry runs, %d stops; want 2 and 1", f.dryRuns, f.stopCalls)
	}
	// Idempotent: the second stop finds it stopped and calls nothing.
	res, err = stopInstance(ctx, f, "i-run", false)
	if err != nil || !res.AlreadyStopped || res.CurrentState != "stopped" {
		t.Fatalf("second stop = %+v, %v", res, err)
	}
	if f.dryRuns != 2 || f.stopCalls != 1 {
		t.Errorf("second stop called StopInstances: %d dry runs, %d stops", f.dryRuns, f.stopCalls)
	}
	if res, err := stopInstance(ctx, f, "i-off", true); err != nil || !res.AlreadyStopped {
		t.Errorf("dry run of a stopped instance = %+v, %v", res, err)
	}

	_, err = stopInstance(ctx, f, "i-spot", false)
	if !errors.Is(err, providers.ErrNotStoppable) || !strings.Contains(err.Error(), "one-time Spot") || !strings.Contains(err.Error(), "never terminates") {
		t.Errorf("one-time spot: %v", err)
	}
	for _, id := range []string{"i-nope", "i-gone"} {
		if _, err := stopInstance(ctx, f, id, false); !errors.Is(err, providers.ErrNotFound) || !strings.Contains(err.Error(), id) {
			t.Errorf("%s: %v, want ErrNotFound naming it", id, err)
		}
	}

	f = stopFake()
	f.denyStop = true
	if _, err := stopInstance(ctx, f, "i-run", true); !errors.Is(err, providers.ErrPermission) {
		t.Errorf("denied dry run: %v", err)
	}
	if f.stopCalls != 0 {
		t.Errorf("denied: StopInstances called for real")
	}

	f = stopFake()
	f.err = &smithy.GenericAPIError{Code: "RequestLimitExceeded", Message: "slow down"}
	if _, err := stopInstance(ctx, f, "i-run", false); !errors.Is(err, providers.ErrThrottled) {
		t.Errorf("throttled: %v", err)
	}

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := unitProvider().Stop(cctx, providers.Scope{}, "i-run", false); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}
