package ratelimit

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/time/rate"
)

// fakeClock is a Set's clock that sleeping moves forward.
type fakeClock struct {
	mu    sync.Mutex
	t     time.Time
	slept time.Duration
	naps  int
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *fakeClock) sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	c.slept += d
	c.naps++
	return nil
}

func (c *fakeClock) advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

func newFake(t *testing.T, quotas map[string]Quota, overrides ...string) (*Set, *fakeClock) {
	t.Helper()
	s, err := NewSet(quotas, overrides)
	if err != nil {
		t.Fatal(err)
	}
	c := &fakeClock{t: time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)}
	s.now, s.sleep = c.now, c.sleep
	return s, c
}

func TestBurstThenRefill(t *testing.T) {
	s, c := newFake(t, map[string]Quota{"ec2": PerSecond(20, 100)})
	b := s.Bucket("ec2", "a/us-east-1")
	ctx := context.Background()
	for range 100 {
		if _, err := b.Wait(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if c.naps != 0 {
		t.Fatalf("the burst of 100 slept %d times", c.naps)
	}
	for range 20 {
		b.Wait(ctx)
	}
	// 20 more at 20 a second: 50 ms each, one second in all.
	if c.naps != 20 || c.slept != time.Second {
		t.Fatalf("20 requests past the burst: %d naps, %v; want 20, 1s", c.naps, c.slept)
	}
	if st := s.Stats()[0]; st.Requests != 120 || st.Waited != 20 || st.Throttled != 0 {
		t.Fatalf("stats %+v", st)
	}
	// Other scopes and APIs have buckets of their own.
	if s.Bucket("ec2", "a/us-west-2") == b || s.Bucket("ec2", "a/us-east-1") != b {
		t.Fatal("buckets are per API and scope, made once")
	}
}

func TestThrottleLowersOncePerRound(t *testing.T) {
	s, c := newFake(t, map[string]Quota{"arm-read": PerSecond(25, 250)})
	b := s.Bucket("arm-read", "sub")
	ctx := context.Background()
	sent1, _ := b.Wait(ctx)
	sent2, _ := b.Wait(ctx)
	c.advance(time.Millisecond)
	b.Throttled(sent1, 0)
	if got, want := b.lim.Limit(), 25*Decrease; !near(got, want) {
		t.Fatalf("after a throttle: limit %v, want %v", got, want)
	}
	if got := b.lim.Burst(); got != 175 {
		t.Fatalf("burst %d, want 175 (250 × 0.7)", got)
	}
	// Sent before the cut: the same round, no second cut.
	b.Throttled(sent2, 0)
	if got := b.lim.Limit(); !near(got, 25*Decrease) {
		t.Fatalf("a second throttle of the same round cut again: %v", got)
	}
	c.advance(time.Millisecond)
	sent3, _ := b.Wait(ctx)
	b.Throttled(sent3, 0)
	if got := b.lim.Limit(); !near(got, 25*Decrease*Decrease) {
		t.Fatalf("a throttle of a later request: %v, want %v", got, 25*Decrease*Decrease)
	}
	for range 50 {
		c.advance(time.Millisecond)
		sent, _ := b.Wait(ctx)
		b.Throttled(sent, 0)
	}
	if got := b.lim.Limit(); !near(got, 25*Floor) || b.lim.Burst() != 25 {
		t.Fatalf("sustained throttling: %v burst %d, want the floor %v burst 25", got, b.lim.Burst(), 25*Floor)
	}
	if st := s.Stats()[0]; st.Throttled != 53 {
		t.Fatalf("throttles counted %d, want 53", st.Throttled)
	}
}

func TestRetryAfterPauses(t *testing.T) {
	s, c := newFake(t, map[string]Quota{"graph": {Requests: 15, Per: 5 * time.Second, Burst: 15}, "prices": {}})
	ctx := context.Background()
	for _, api := range []string{"graph", "prices"} {
		b := s.Bucket(api, "")
		sent, _ := b.Wait(ctx)
		c.slept = 0
		b.Throttled(sent, 3*time.Second)
		b.Wait(ctx)
		if c.slept != 3*time.Second {
			t.Fatalf("%s: the request after a Retry-After of 3 s slept %v", api, c.slept)
		}
		// A pause longer than MaxPause is cut to it.
		sent, _ = b.Wait(ctx)
		c.slept = 0
		b.Throttled(sent, time.Hour)
		b.Wait(ctx)
		if c.slept != MaxPause {
			t.Fatalf("%s: Retry-After of an hour slept %v, want %v", api, c.slept, MaxPause)
		}
	}
	if got := s.Bucket("prices", "").lim.Limit(); got != rate.Inf {
		t.Fatalf("an unlimited bucket got a limit: %v", got)
	}
}

func TestWaitHonoursCancellation(t *testing.T) {
	s, err := NewSet(map[string]Quota{"x": PerSecond(1, 1)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	b := s.Bucket("x", "")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	b.Wait(ctx)
	start := time.Now()
	if _, err := b.Wait(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait past the deadline: %v", err)
	}
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Fatalf("Wait held on %v after its context ended", d)
	}
	// The cancelled reservation gave its token back: the next request
	// waits about one second, not two.
	r := b.lim.ReserveN(time.Now(), 1)
	if d := r.Delay(); d > 1100*time.Millisecond {
		t.Fatalf("the next token is %v away", d)
	}
}

// TestAdaptationStaysInBounds is the property: whatever the sequence of
// successes and throttles, the rate stays within [Floor × quota, quota] and
// the burst within [1, quota's burst], and enough successes bring both
// back to the quota.
func TestAdaptationStaysInBounds(t *testing.T) {
	quotas := map[string]Quota{"ec2": PerSecond(20, 100), "cw": PerSecond(50, 50), "graph": {Requests: 15, Per: 5 * time.Second, Burst: 15}, "compute": PerMinute(1500), "one": PerSecond(1, 1)}
	recover := int(math.Ceil((1 - Floor) / Increase))
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 1))
		for _, api := range APIs(quotas) {
			s, c := newFake(t, quotas)
			q := s.Quota(api)
			b := s.Bucket(api, "scope")
			share := rng.Float64()
			for i := range 300 {
				c.advance(time.Duration(rng.IntN(100)) * time.Millisecond)
				sent := c.now().Add(-time.Duration(rng.IntN(200)) * time.Millisecond)
				if rng.Float64() < share {
					b.Throttled(sent, 0)
				} else {
					b.OK()
				}
				lim, burst := float64(b.lim.Limit()), b.lim.Burst()
				if lim < Floor*float64(q.Limit())-1e-9 || lim > float64(q.Limit())+1e-9 || burst < 1 || burst > q.Burst {
					t.Fatalf("seed %d %s step %d: limit %v burst %d outside [%v, %v] and [1, %d]", seed, api, i, lim, burst, Floor*float64(q.Limit()), q.Limit(), q.Burst)
				}
			}
			for range recover {
				b.OK()
			}
			if !near(b.lim.Limit(), float64(q.Limit())) || b.lim.Burst() != q.Burst {
				t.Fatalf("seed %d %s: after %d successes limit %v burst %d, want %v and %d", seed, api, recover, b.lim.Limit(), b.lim.Burst(), q.Limit(), q.Burst)
			}
		}
	}
}

// TestRandomThrottlingKeepsTheQuota: one throttle in ten, spread at random
// as a simulator's --throttle-rate 0.1 does, and every one of them a cut
// (requests one at a time), keeps a bucket near its quota.
func TestRandomThrottlingKeepsTheQuota(t *testing.T) {
	s, c := newFake(t, map[string]Quota{"ec2": PerSecond(20, 100)})
	b := s.Bucket("ec2", "")
	rng := rand.New(rand.NewPCG(1, 2))
	var sum float64
	const n = 10000
	for range n {
		sent, _ := b.Wait(context.Background())
		c.advance(time.Millisecond)
		if rng.IntN(10) == 0 {
			b.Throttled(sent, 0)
		} else {
			b.OK()
		}
		sum += float64(b.lim.Limit())
	}
	if mean := sum / n; mean < 0.8*20 {
		t.Fatalf("mean rate under 10 %% random throttling %.1f/s, want at least 80 %% of 20", mean)
	}
}

// TestPerMinuteWindow: a quota of N a minute lets at most N requests go in
// the first minute, close to N, for small and large N alike.
func TestPerMinuteWindow(t *testing.T) {
	for _, quota := range []int{1, 2, 3, 9, 10, 11, 100, 1500} {
		q := PerMinute(quota)
		if q.Unlimited() {
			t.Fatalf("PerMinute(%d) is unlimited", quota)
		}
		s, c := newFake(t, map[string]Quota{"compute-read": q})
		b := s.Bucket("compute-read", "p")
		start := c.now()
		n := 0
		for {
			sent, _ := b.Wait(context.Background())
			if sent.Sub(start) >= time.Minute {
				break
			}
			n++
		}
		if n > quota || n < quota-quota/100-1 {
			t.Fatalf("PerMinute(%d): %d requests in the first minute, want at most %d and close to it", quota, n, quota)
		}
	}
}

func TestOverrides(t *testing.T) {
	quotas := map[string]Quota{"ec2": PerSecond(20, 100), "pricing": {}}
	s, err := NewSet(quotas, []string{"ec2=5/s:1", "pricing=10/m"})
	if err != nil {
		t.Fatal(err)
	}
	if q := s.Quota("ec2"); q != PerSecond(5, 1) {
		t.Fatalf("ec2 %v", q)
	}
	if q := s.Quota("pricing"); q != PerMinute(10) || q.String() != "9/m:1" {
		t.Fatalf("pricing %v", q)
	}
	if quotas["ec2"] != PerSecond(20, 100) {
		t.Fatal("NewSet changed its defaults")
	}
	off, err := NewSet(quotas, []string{"off"})
	if err != nil || off.Bucket("ec2", "") != nil {
		t.Fatalf("off: %v %v", off.Bucket("ec2", ""), err)
	}
	var nilBucket *Bucket
	if _, err := nilBucket.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	nilBucket.OK()
	nilBucket.Throttled(time.Now(), time.Second)
	s, _ = NewSet(quotas, []string{"ec2=off"})
	if !s.Quota("ec2").Unlimited() {
		t.Fatal("ec2=off is not unlimited")
	}
	for _, bad := range []string{"ec3=1/s", "ec2", "ec2=1", "ec2=0/s", "ec2=1/x", "ec2=1/s:0", "ec2=1/-1s"} {
		if _, err := NewSet(quotas, []string{bad}); err == nil {
			t.Errorf("%q accepted", bad)
		} else if bad == "ec3=1/s" && !strings.Contains(err.Error(), "ec2, pricing") {
			t.Errorf("%q: the error does not list the APIs: %v", bad, err)
		}
	}
	for spec, want := range map[string]Quota{"15/5s:15": {15, 5 * time.Second, 15}, "20/s:100": PerSecond(20, 100), "50/s": PerSecond(50, 50), "off": {}} {
		if q, err := ParseQuota(spec); err != nil || q != want {
			t.Errorf("ParseQuota(%q) = %v, %v; want %v", spec, q, err, want)
		}
	}
}

// TestConcurrentUse runs many goroutines through shared buckets (for -race)
// and checks every request was counted.
func TestConcurrentUse(t *testing.T) {
	s, err := NewSet(map[string]Quota{"a": PerSecond(100000, 1000)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				b := s.Bucket("a", []string{"x", "y"}[g%2])
				sent, err := b.Wait(context.Background())
				if err != nil {
					t.Error(err)
					return
				}
				if i%10 == 0 {
					b.Throttled(sent, 0)
				} else {
					b.OK()
				}
			}
		})
	}
	wg.Wait()
	var n int64
	for _, st := range s.Stats() {
		n += st.Requests
	}
	if n != 1600 {
		t.Fatalf("%d requests counted, want 1600", n)
	}
}

func near(got rate.Limit, want float64) bool { return math.Abs(float64(got)-want) < 1e-6 }

func TestPauseAndRetryAfter(t *testing.T) {
	s, c := newFake(t, map[string]Quota{"graph": {Requests: 15, Per: 5 * time.Second, Burst: 15}})
	b := s.Bucket("graph", "")
	b.Pause(2 * time.Second)
	b.Pause(time.Second) // a shorter pause does not shorten it
	b.Wait(context.Background())
	if c.slept != 2*time.Second {
		t.Fatalf("slept %v after a pause of 2 s", c.slept)
	}
	if st := s.Stats()[0]; st.Throttled != 0 || st.Limit != 3 || st.Lowest != 3 {
		t.Fatalf("a pause changed the rate or counted a throttle: %+v", st)
	}
	for v, want := range map[string]time.Duration{"": 0, "3": 3 * time.Second, "-1": 0, "soon": 0,
		time.Now().Add(time.Hour).UTC().Format(http.TimeFormat): time.Hour} {
		if got := RetryAfter(v); got > want || got < want-2*time.Second {
			t.Errorf("RetryAfter(%q) = %v, want %v", v, got, want)
		}
	}
}

// TestCheck: Check sums requests by API and scope, and finds a throttled
// bucket never lowered and an API whose buckets none was lowered.
func TestCheck(t *testing.T) {
	s, err := NewSet(map[string]Quota{"a": PerSecond(10, 10), "b": PerSecond(10, 10)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ba, bb := s.Bucket("a", "x"), s.Bucket("b", "x")
	if _, err := ba.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if ad := s.Check(); ad.ByAPI["a"] != 1 || ad.Requests != 1 || !slices.Equal(ad.Scopes["a"], []string{"x"}) {
		t.Fatalf("one request of a in x: %+v", ad)
	}
	ba.Throttled(time.Now(), 0)
	if ad := s.Check("a"); len(ad.Problems) != 0 || ad.Throttled != 1 {
		t.Fatalf("a lowered: %+v", ad)
	}
	if ad := s.Check("a", "b"); len(ad.Problems) != 1 {
		t.Fatalf("b never lowered: %+v", ad)
	}
	bb.throttles.Add(1) // told of a throttle it did not act on
	if ad := s.Check(); len(ad.Problems) != 1 {
		t.Fatalf("b throttled, not lowered: %+v", ad)
	}
}
