package providers

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// slowCloud lists each region after its delay, honouring ctx as an SDK does.
type slowCloud struct {
	*fakeCloud
	delay map[string]time.Duration
}

func (s slowCloud) ListGPUInstances(ctx context.Context, sc Scope) ([]fleet.Instance, error) {
	select {
	case <-time.After(s.delay[sc.Region]):
	case <-ctx.Done():
		return nil, fmt.Errorf("operation error: %w", ctx.Err())
	}
	return s.fakeCloud.ListGPUInstances(ctx, sc)
}

// TestCollectTimeLimit: when the scan's time limit ends, the scopes that
// finished are kept, the others are failures naming the limit, and Collect
// returns no error; a caller's own cancellation is still an error.
func TestCollectTimeLimit(t *testing.T) {
	f := &fakeCloud{instances: map[string][]fleet.Instance{}}
	delay := map[string]time.Duration{}
	for i, d := range []time.Duration{0, time.Hour, 0, time.Hour, time.Hour} {
		region := fmt.Sprintf("r%d", i)
		f.scopes = append(f.scopes, Scope{Provider: fleet.AWS, Account: "1", Region: region})
		f.instances[region] = []fleet.Instance{{ID: "i-" + region, Provider: fleet.AWS, Region: region}}
		delay[region] = d
	}
	p := slowCloud{f, delay}

	ctx, cancel := WithTimeLimit(context.Background(), 100*time.Millisecond)
	defer cancel()
	res, err := Collect(ctx, p, CollectOptions{Concurrency: 5})
	if err != nil {
		t.Fatalf("Collect: %v", err)
	}
	if got := len(res.Fleet.Instances); got != 2 {
		t.Errorf("%d instances kept, want the 2 that answered", got)
	}
	if len(res.Failures) != 3 {
		t.Fatalf("failures %v, want 3", res.Failures)
	}
	for _, fe := range res.Failures {
		if !errors.Is(fe, ErrTimeLimit) || delay[fe.Scope.Region] == 0 {
			t.Errorf("failure %v: want the time limit, for a slow region", fe)
		}
	}

	ctx2, cancel2 := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel2)
	if _, err := Collect(ctx2, p, CollectOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled scan: err %v, want context.Canceled", err)
	}

	ctx3, cancel3 := WithTimeLimit(context.Background(), 0)
	defer cancel3()
	if _, ok := ctx3.Deadline(); ok {
		t.Error("a zero limit set a deadline")
	}
}

// TestCollectTimeLimitProperty: over random clouds (delays, concurrency,
// limits), every scope is either kept whole or a failure naming the time
// limit, never both and never lost, and a scope that answers well inside
// the limit is always kept.
func TestCollectTimeLimitProperty(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	for round := 0; round < 20; round++ {
		f := &fakeCloud{instances: map[string][]fleet.Instance{}}
		delay := map[string]time.Duration{}
		n := 1 + rng.Intn(12)
		for i := 0; i < n; i++ {
			region := fmt.Sprintf("r%02d", i)
			f.scopes = append(f.scopes, Scope{Provider: fleet.AWS, Account: "1", Region: region})
			f.instances[region] = []fleet.Instance{{ID: "i-" + region, Provider: fleet.AWS, Region: region}}
			if rng.Intn(3) == 0 {
				delay[region] = time.Hour // hangs
			}
		}
		// Limits well above a loaded machine's scheduling delays, so that a
		// scope answering at once is inside them; the rounds run side by
		// side, each mostly waiting on its limit.
		limit := time.Duration(300+rng.Intn(200)) * time.Millisecond
		t.Run(fmt.Sprintf("round %d", round), func(t *testing.T) {
			t.Parallel()
			checkTimeLimitRound(t, f, delay, limit)
		})
	}
}

// checkTimeLimitRound scans f, whose scopes in delay hang, under limit.
func checkTimeLimitRound(t *testing.T, f *fakeCloud, delay map[string]time.Duration, limit time.Duration) {
	n := len(f.scopes)
	ctx, cancel := WithTimeLimit(context.Background(), limit)
	res, err := Collect(ctx, slowCloud{f, delay}, CollectOptions{Concurrency: n})
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	kept := map[string]bool{}
	for _, in := range res.Fleet.Instances {
		kept[in.Region] = true
	}
	for _, fe := range res.Failures {
		if kept[fe.Scope.Region] || !errors.Is(fe, ErrTimeLimit) {
			t.Errorf("failure %v for a kept scope or not the limit", fe)
		}
		kept[fe.Scope.Region] = true
	}
	for _, sc := range f.scopes {
		if !kept[sc.Region] {
			t.Errorf("scope %s neither kept nor failed", sc.Region)
		}
	}
	for _, in := range res.Fleet.Instances {
		if delay[in.Region] != 0 {
			t.Errorf("hung scope %s kept", in.Region)
		}
	}
	if got := len(res.Fleet.Instances) + len(res.Failures); got != n {
		t.Errorf("%d kept + failed, want %d", got, n)
	}
	fast := 0
	for _, sc := range f.scopes {
		if delay[sc.Region] == 0 {
			fast++
		}
	}
	if len(res.Fleet.Instances) != fast {
		t.Errorf("%d kept, want the %d that answer at once (limit %v)", len(res.Fleet.Instances), fast, limit)
	}
}
