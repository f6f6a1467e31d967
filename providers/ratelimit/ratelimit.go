// Package ratelimit paces an adapter's requests with one token bucket per
// cloud API and scope (an AWS account and region, an Azure subscription, a
// GCP project), set to the quota the cloud documents for that API, and
// adapts each bucket to the throttling answers it gets: a throttled request
// lowers the bucket's rate (multiplicative decrease down to a floor) and
// pauses it for the answer's Retry-After; successes bring it back up
// (additive increase) to the documented quota. The buckets are
// golang.org/x/time/rate limiters.
//
// At the documented quotas a scan's requests rarely wait: the buckets are
// there for fleets (or other tools sharing the quota) that would otherwise
// burn through the cloud's own bucket and spend the scan in retries. The
// package knows no cloud: each adapter names its APIs, their quotas and
// which answers are throttling.
package ratelimit

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
)

// Quota is a documented request rate: Requests per Per, with bursts of up
// to Burst requests. A zero Quota is unlimited: its bucket counts requests
// and honours Retry-After but never paces.
type Quota struct {
	Requests int
	Per      time.Duration
	Burst    int
}

// PerSecond is a token bucket of burst requests refilling at n a second
// (how EC2 and ARM document their buckets).
func PerSecond(n, burst int) Quota { return Quota{Requests: n, Per: time.Second, Burst: burst} }

// PerMinute is a quota of n requests a minute counted in fixed minutes (how
// GCP documents its rate quotas, which refill at the minute's end): a burst
// of a tenth of n, refilling at the other nine tenths over the minute, so no
// 60 s window holds more than n requests.
func PerMinute(n int) Quota {
	b := max(1, n/10)
	// One a minute is a burst of one refilling once a minute, never a
	// refill of none (which would be unlimited).
	return Quota{Requests: max(1, n-b), Per: time.Minute, Burst: b}
}

// Unlimited reports whether q paces nothing.
func (q Quota) Unlimited() bool { return q.Requests <= 0 || q.Per <= 0 }

// Limit is q's refill rate.
func (q Quota) Limit() rate.Limit {
	if q.Unlimited() {
		return rate.Inf
	}
	return rate.Limit(float64(q.Requests) / q.Per.Seconds())
}

func (q Quota) String() string {
	if q.Unlimited() {
		return "unlimited"
	}
	per := q.Per.String()
	switch q.Per {
	case time.Second:
		per = "s"
	case time.Minute:
		per = "m"
	}
	return fmt.Sprintf("%d/%s:%d", q.Requests, per, q.Burst)
}

// ParseQuota reads a quota written N/PER[:BURST], PER being s, m or a Go
// duration (15/5s:15, 20/s:100, 1500/m), or "off" for unlimited. A burst
// left out is N, except that N/m without one is PerMinute(N).
func ParseQuota(s string) (Quota, error) {
	if s == "off" {
		return Quota{}, nil
	}
	spec, burstText, hasBurst := strings.Cut(s, ":")
	nText, perText, ok := strings.Cut(spec, "/")
	if !ok {
		return Quota{}, fmt.Errorf("%q: want N/PER[:BURST], e.g. 20/s:100, or off", s)
	}
	n, err := strconv.Atoi(nText)
	if err != nil || n < 1 {
		return Quota{}, fmt.Errorf("%q: %q is not a positive number of requests", s, nText)
	}
	var per time.Duration
	switch perText {
	case "s":
		per = time.Second
	case "m":
		if !hasBurst {
			return PerMinute(n), nil
		}
		per = time.Minute
	default:
		if per, err = time.ParseDuration(perText); err != nil || per <= 0 {
			return Quota{}, fmt.Errorf("%q: %q is not s, m or a positive duration", s, perText)
		}
	}
	q := Quota{Requests: n, Per: per, Burst: n}
	if hasBurst {
		if q.Burst, err = strconv.Atoi(burstText); err != nil || q.Burst < 1 {
			return Quota{}, fmt.Errorf("%q: %q is not a positive burst", s, burstText)
		}
	}
	return q, nil
}

// The adaptation. A throttle multiplies the rate by Decrease, never below
// Floor times the quota; a success adds Increase times the quota, never
// above it. With these, random throttling of one request in ten (each
// throttle a cut) keeps a bucket at about 85 % of its quota on average,
// nine successes undoing most of a cut, while a cloud that keeps throttling
// brings it to the floor within seven throttles.
const (
	Decrease = 0.7
	Increase = 0.05
	Floor    = 0.1
)

// MaxPause bounds the pause one Retry-After imposes on a bucket.
const MaxPause = time.Minute

// Set is an adapter's buckets: one per API and scope, made on first use
// from the API's quota and shared by every goroutine of the adapter.
type Set struct {
	quotas map[string]Quota
	off    bool
	now    func() time.Time
	sleep  func(context.Context, time.Duration) error

	mu      sync.Mutex
	buckets map[bucketKey]*Bucket
}

type bucketKey struct{ api, scope string }

// NewSet makes the buckets of the APIs in quotas (an API missing from it is
// unlimited). Each override is API=QUOTA (see ParseQuota) and replaces that
// API's quota; the single override "off" turns every bucket off. An
// override naming an API not in quotas is an error, which lists them.
func NewSet(quotas map[string]Quota, overrides []string) (*Set, error) {
	s := &Set{quotas: make(map[string]Quota, len(quotas)), now: time.Now, sleep: sleep, buckets: map[bucketKey]*Bucket{}}
	for api, q := range quotas {
		s.quotas[api] = q
	}
	for _, o := range overrides {
		if o == "off" {
			s.off = true
			continue
		}
		api, spec, ok := strings.Cut(o, "=")
		if _, known := quotas[api]; !ok || !known {
			return nil, fmt.Errorf("%q: want API=N/PER[:BURST] or off, the API one of %s", o, strings.Join(APIs(quotas), ", "))
		}
		q, err := ParseQuota(spec)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", api, err)
		}
		s.quotas[api] = q
	}
	return s, nil
}

// APIs are the names of quotas, sorted.
func APIs(quotas map[string]Quota) []string {
	out := make([]string, 0, len(quotas))
	for api := range quotas {
		out = append(out, api)
	}
	sort.Strings(out)
	return out
}

// Bucket is the bucket of api in scope, nil when the set is off (a nil
// Bucket's methods do nothing).
func (s *Set) Bucket(api, scope string) *Bucket {
	if s == nil || s.off {
		return nil
	}
	k := bucketKey{api, scope}
	s.mu.Lock()
	defer s.mu.Unlock()
	if b, ok := s.buckets[k]; ok {
		return b
	}
	q := s.quotas[api]
	b := &Bucket{set: s, api: api, scope: scope, quota: q, lim: rate.NewLimiter(q.Limit(), max(1, q.Burst))}
	b.cur = float64(q.Limit())
	b.lowest = b.cur
	s.buckets[k] = b
	return b
}

// Bucket paces the requests of one API in one scope.
type Bucket struct {
	set        *Set
	api, scope string
	quota      Quota
	lim        *rate.Limiter

	requests, throttles, waited atomic.Int64

	mu sync.Mutex
	// cur is the rate now, in requests a second.
	cur float64
	// lowest is the lowest cur has been.
	lowest float64
	// cut is when the rate was last lowered: a throttled answer to a
	// request sent before it answers the old rate and lowers it no more.
	cut   time.Time
	pause time.Time
}

// Wait takes a token for one request (one attempt: each retry takes its
// own), sleeping while the bucket is paused or empty, and returns the time
// it let the request go, for Throttled.
func (b *Bucket) Wait(ctx context.Context) (sent time.Time, err error) {
	if b == nil {
		return time.Time{}, nil
	}
	b.requests.Add(1)
	for {
		now := b.set.now()
		b.mu.Lock()
		pause := b.pause.Sub(now)
		b.mu.Unlock()
		if pause <= 0 {
			break
		}
		b.waited.Add(1)
		if err := b.set.sleep(ctx, pause); err != nil {
			return time.Time{}, err
		}
	}
	now := b.set.now()
	r := b.lim.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		b.waited.Add(1)
		if err := b.set.sleep(ctx, d); err != nil {
			r.CancelAt(b.set.now())
			return time.Time{}, err
		}
	}
	return b.set.now(), nil
}

// OK records a request that was not throttled: the rate climbs back
// towards the quota.
func (b *Bucket) OK() {
	if b == nil || b.quota.Unlimited() {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if q := float64(b.quota.Limit()); b.cur < q {
		b.setRate(min(q, b.cur+Increase*q))
	}
}

// Throttled records a throttled answer to the request Wait let go at sent:
// the bucket pauses for retryAfter (when the cloud said; at most MaxPause)
// and, unless it was lowered after sent, lowers its rate.
func (b *Bucket) Throttled(sent time.Time, retryAfter time.Duration) {
	if b == nil {
		return
	}
	b.throttles.Add(1)
	now := b.set.now()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.pauseFor(now, retryAfter)
	if b.quota.Unlimited() || sent.Before(b.cut) {
		return
	}
	q := float64(b.quota.Limit())
	b.cut = now
	b.setRate(max(Floor*q, b.cur*Decrease))
}

// Pause holds the bucket's requests for d (at most MaxPause) without
// lowering its rate: for a cloud that says its quota is spent before it
// throttles.
func (b *Bucket) Pause(d time.Duration) {
	if b == nil {
		return
	}
	now := b.set.now()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.pauseFor(now, d)
}

// pauseFor pauses the bucket until now+d unless it is paused longer. b.mu
// is held.
func (b *Bucket) pauseFor(now time.Time, d time.Duration) {
	if d <= 0 {
		return
	}
	if until := now.Add(min(d, MaxPause)); until.After(b.pause) {
		b.pause = until
	}
}

// setRate moves the rate to r and the burst with it, in proportion to the
// quota's. b.mu is held.
func (b *Bucket) setRate(r float64) {
	b.cur = r
	b.lowest = min(b.lowest, r)
	now := b.set.now()
	b.lim.SetLimitAt(now, rate.Limit(r))
	b.lim.SetBurstAt(now, max(1, int(math.Round(float64(b.quota.Burst)*r/float64(b.quota.Limit())))))
}

// Stat is what a bucket has seen.
type Stat struct {
	API, Scope string
	// Quota is the bucket's configured quota.
	Quota Quota
	// Requests counts Wait's calls (attempts), Throttled the throttled
	// answers, Waited the requests that waited for a token or a pause.
	Requests, Throttled, Waited int64
	// Limit and Burst are the bucket's rate now (rate.Inf when unlimited).
	Limit rate.Limit
	Burst int
	// Lowest is the lowest rate the bucket went down to.
	Lowest rate.Limit
}

// Stats lists every bucket made so far, by API then scope.
func (s *Set) Stats() []Stat {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	out := make([]Stat, 0, len(s.buckets))
	for _, b := range s.buckets {
		b.mu.Lock()
		lowest := rate.Limit(b.lowest)
		b.mu.Unlock()
		out = append(out, Stat{API: b.api, Scope: b.scope, Quota: b.quota,
			Requests: b.requests.Load(), Throttled: b.throttles.Load(), Waited: b.waited.Load(),
			Limit: b.lim.Limit(), Burst: b.lim.Burst(), Lowest: lowest})
	}
	s.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if out[i].API != out[j].API {
			return out[i].API < out[j].API
		}
		return out[i].Scope < out[j].Scope
	})
	return out
}

// Adaptation is what a set's buckets did with the throttles they were told
// of, from Check.
type Adaptation struct {
	// Requests, Throttled and Waited are the buckets' sums.
	Requests, Throttled, Waited int64
	// ByAPI are the requests of each API's buckets; Scopes the scopes of
	// each API's buckets, in Stats' order.
	ByAPI  map[string]int64
	Scopes map[string][]string
	// Problems: a paced bucket throttled but never lowered, a rate outside
	// [Floor × quota, quota], or an API of Check's whose buckets none went
	// below the quota.
	Problems []string
}

// Check sums the buckets' statistics and reports, in Problems, a bucket
// that did not adapt as the package promises: lowered by its throttles and
// kept within its bounds, and lowered for each of apis.
func (s *Set) Check(apis ...string) Adaptation {
	a := Adaptation{ByAPI: map[string]int64{}, Scopes: map[string][]string{}}
	lowered := map[string]bool{}
	for _, st := range s.Stats() {
		a.Requests, a.Throttled, a.Waited = a.Requests+st.Requests, a.Throttled+st.Throttled, a.Waited+st.Waited
		a.ByAPI[st.API] += st.Requests
		a.Scopes[st.API] = append(a.Scopes[st.API], st.Scope)
		if st.Throttled > 0 && !st.Quota.Unlimited() && st.Lowest >= st.Quota.Limit() {
			a.Problems = append(a.Problems, fmt.Sprintf("%s %s: %d throttles left the rate at %v", st.API, st.Scope, st.Throttled, st.Lowest))
		}
		if st.Lowest < st.Quota.Limit() {
			lowered[st.API] = true
		}
		if st.Limit < Floor*st.Quota.Limit() || st.Limit > st.Quota.Limit() {
			a.Problems = append(a.Problems, fmt.Sprintf("%s %s: rate %v outside [floor, quota]", st.API, st.Scope, st.Limit))
		}
	}
	for _, api := range apis {
		if !lowered[api] {
			a.Problems = append(a.Problems, fmt.Sprintf("no %s bucket was lowered by its throttles", api))
		}
	}
	return a
}

// Quota is the quota api's buckets start from.
func (s *Set) Quota(api string) Quota { return s.quotas[api] }

// RetryAfter reads an HTTP Retry-After value: seconds or an HTTP date; 0
// when absent or unreadable.
func RetryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(v); err == nil {
		return max(0, time.Duration(n)*time.Second)
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(0, time.Until(t))
	}
	return 0
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
