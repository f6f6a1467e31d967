package idlestop

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"sync"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/providers"
)

// chaosStopper answers each machine's real stop with a seeded behaviour:
// success, a refusal, a slow success, or no answer until the call's
// context ends. It records which stops it carried out.
type chaosStopper struct {
	mu      sync.Mutex
	plan    map[string]int // 0 ok, 1 refused, 2 slow, 3 hangs
	carried map[string]bool
	sent    map[string]bool
}

func (c *chaosStopper) Stop(ctx context.Context, sc providers.Scope, id string, dry bool) (providers.StopResult, error) {
	if dry {
		return providers.StopResult{PreviousState: "running", CurrentState: "running"}, nil
	}
	c.mu.Lock()
	c.sent[id] = true
	p := c.plan[id]
	c.mu.Unlock()
	switch p {
	case 1:
		return providers.StopResult{}, errors.New("IncorrectInstanceState: refused")
	case 2:
		select {
		case <-time.After(20 * time.Millisecond):
		case <-ctx.Done():
			return providers.StopResult{}, ctx.Err()
		}
	case 3:
		c.mu.Lock()
		c.carried[id] = true // the cloud acts, the answer never comes
		c.mu.Unlock()
		<-ctx.Done()
		return providers.StopResult{}, fmt.Errorf("%s: %w", id, ctx.Err())
	}
	c.mu.Lock()
	c.carried[id] = true
	c.mu.Unlock()
	return providers.StopResult{PreviousState: "running", CurrentState: "stopping"}, nil
}

// TestExecuteJournalProperties runs Execute over seeded fleets, stopper
// behaviours, interruption times and grace periods, and checks the audit
// log's promises every time:
//   - every machine has exactly one final line (decision or outcome), and
//     the summary is last;
//   - every stop the stopper received has an intent before its outcome;
//     every machine the cloud stopped has an intent;
//   - an outcome is failed only for a refusal, unknown only for a stop that
//     got no answer; a stop never sent is not-attempted or skipped;
//   - the summary's counts equal the lines'.
func TestExecuteJournalProperties(t *testing.T) {
	seeds := 60
	if testing.Short() {
		seeds = 15
	}
	for seed := range seeds {
		rng := rand.New(rand.NewSource(int64(seed)))
		n := 1 + rng.Intn(9)
		var cs []Candidate
		plan := map[string]int{}
		for i := range n {
			id := fmt.Sprintf("i-%d", i)
			cs = append(cs, cand(id))
			plan[id] = rng.Intn(4)
		}
		st := &chaosStopper{plan: plan, carried: map[string]bool{}, sent: map[string]bool{}}
		audit, path := openAudit(t)
		ctx, cancel := context.WithCancelCause(context.Background())
		after := time.Duration(rng.Intn(40)) * time.Millisecond
		timer := time.AfterFunc(after, func() { cancel(errors.New("interrupted by terminated")) })
		o := opts(st, cs, audit)
		o.Policy.MaxStops = 20
		o.Concurrency = 1 + rng.Intn(4)
		o.Grace = time.Duration(rng.Intn(3)) * 15 * time.Millisecond
		ds := Decide(cs, now, o.Policy)
		sum, _ := Execute(ctx, ds, o)
		timer.Stop()
		cancel(nil)
		audit.Close()

		lines := readAudit(t, path)
		if len(lines) == 0 || lines[len(lines)-1]["type"] != LineSummary {
			t.Fatalf("seed %d: no summary last", seed)
		}
		final := map[string]map[string]any{}
		intentAt := map[string]int{}
		counts := map[string]int{}
		for i, l := range lines[:len(lines)-1] {
			id := fmt.Sprint(l["resourceId"])
			switch l["type"] {
			case LineIntent:
				if _, dup := intentAt[id]; dup {
					t.Fatalf("seed %d: two intents for %s", seed, id)
				}
				intentAt[id] = i
			case LineDecision, LineOutcome:
				if final[id] != nil {
					t.Fatalf("seed %d: two final lines for %s", seed, id)
				}
				final[id] = l
				at, ok := intentAt[id]
				if (l["type"] == LineOutcome) != ok || at > i {
					t.Fatalf("seed %d: %s %v without an intent before it", seed, id, l["type"])
				}
				if r, ok := l["result"].(string); ok {
					counts[r]++
				}
			default:
				t.Fatalf("seed %d: line type %v", seed, l["type"])
			}
		}
		if len(final) != n {
			t.Fatalf("seed %d: %d final lines for %d machines", seed, len(final), n)
		}
		for id := range st.sent {
			if _, ok := intentAt[id]; !ok {
				t.Fatalf("seed %d: %s sent without an intent", seed, id)
			}
		}
		for id := range st.carried {
			if _, ok := intentAt[id]; !ok {
				t.Fatalf("seed %d: %s stopped without an intent", seed, id)
			}
		}
		for id, l := range final {
			res := l["result"]
			switch {
			case !st.sent[id] && res != ResultNotAttempted:
				t.Fatalf("seed %d: %s never sent, logged %v", seed, id, res)
			case res == ResultFailed && plan[id] != 1:
				t.Fatalf("seed %d: %s (plan %d) logged failed", seed, id, plan[id])
			case res == ResultUnknown && plan[id] == 1:
				t.Fatalf("seed %d: a refusal logged unknown", seed)
			case plan[id] == 3 && st.sent[id] && res != ResultUnknown:
				t.Fatalf("seed %d: %s got no answer, logged %v", seed, id, res)
			}
		}
		if sum.Stopped != counts[ResultStopped] || sum.Failed != counts[ResultFailed] || sum.Unknown != counts[ResultUnknown] || sum.Considered != n {
			t.Fatalf("seed %d: summary %+v, lines %v", seed, sum, counts)
		}
	}
}
