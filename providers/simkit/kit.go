// Package simkit is the cloud-neutral machinery of the wire-level cloud
// simulators (providers/<cloud>/sim): fault injection with seeded
// throttling, server errors, latency, failing scopes and per-operation
// delays and hangs; request counters; the /_sim/* control endpoints; opaque
// page tokens; per-scope views of a fleet with live instance state; and the
// series synthesizer that turns a fleet's utilization figures into hourly
// patterns with the same avg, p95 and max over the hours an instance runs.
//
// A simulator keeps only its cloud's wire formats: it recognises a request
// (service, operation, scope), hands it to Kit.Serve with a function that
// writes an error in that request's format, and serves what is left. A
// registry (Register, Registered) lets cmd/cloudsim mount every simulator
// on one port (Mux).
//
// simkit imports only pkg/fleet and the standard library, so a simulator
// built on it shares no code with the client it checks.
package simkit

import (
	"fmt"
	"math/rand"
	"net/http"
	"sync"
	"time"
)

// Call is one request as the fault middleware sees it.
type Call struct {
	// Service and Op name the request, e.g. "ec2" and "DescribeInstances";
	// they key the counters and the per-operation faults.
	Service, Op string
	// Scope is where the request acts (a region, subscription or project);
	// Options.FailScopes and Options.Fault match it.
	Scope string
	// Dialect words the injected errors; nil is DefaultDialect.
	Dialect *Dialect
	// WriteError answers the call with an error in its own wire format.
	WriteError func(w http.ResponseWriter, status int, code, msg string)
}

// Dialect is how a cloud words the errors the kit injects. Simulators that
// share a Kit keep their own dialects.
type Dialect struct {
	// Throttle is the cloud's throttling answer for a call (status and
	// code); nil is 429 "Throttling".
	Throttle func(Call) (status int, code string)
	// InternalCode is the code of injected server errors; "" is
	// "InternalError".
	InternalCode string
	// ScopeKind names a scope in error messages ("region"); "" is "scope".
	ScopeKind string
}

// DefaultDialect is the dialect of calls that name none.
var DefaultDialect = &Dialect{}

func (d *Dialect) throttle(c Call) (int, string) {
	if d.Throttle == nil {
		return http.StatusTooManyRequests, "Throttling"
	}
	return d.Throttle(c)
}

func (d *Dialect) internalCode() string {
	if d.InternalCode == "" {
		return "InternalError"
	}
	return d.InternalCode
}

func (d *Dialect) scopeKind() string {
	if d.ScopeKind == "" {
		return "scope"
	}
	return d.ScopeKind
}

// Options configure a Kit's faults.
type Options struct {
	// Latency is added to every request.
	Latency time.Duration
	// ThrottleRate and ErrorRate are the shares (0–1) of requests answered
	// with the cloud's throttling error and with HTTP 500.
	ThrottleRate, ErrorRate float64
	// FailScopes answer every request for those scopes with HTTP 500.
	FailScopes []string
	// Fault, when set, is asked before each request is served; a non-zero
	// status answers the request with that status and error code.
	Fault func(service, op, scope string) (status int, code string)
	// Delays and Hang are the per-operation faults (see OpFaults).
	Delays map[string]time.Duration
	Hang   []string
	// Ops, when set, are the operations ("service:Op") the simulators
	// answer: a fault naming none of them, now or later through
	// POST /_sim/faults, is refused rather than never firing.
	Ops []string
	// Seed makes the random faults repeatable: the same seed and the same
	// sequence of requests give the same faults.
	Seed int64
}

// Kit is the fault middleware and request counters one or more simulators
// share. It is safe for concurrent use.
type Kit struct {
	opts Options

	mu  sync.Mutex
	rng *rand.Rand

	counter Counter
	ops     OpFaults
}

// MustNew is New for a simulator built from a test's or cloudsim's own
// options, where a refused fault is a programming error: it panics.
func MustNew(opts Options) *Kit {
	k, err := New(opts)
	if err != nil {
		panic("simkit.New: " + err.Error())
	}
	return k
}

// New builds a Kit. It fails on a latency outside 0 to MaxDelay and on
// per-operation faults SetFaults refuses.
func New(opts Options) (*Kit, error) {
	if opts.Latency < 0 || opts.Latency > MaxDelay {
		return nil, fmt.Errorf("latency %v: want 0 to %v", opts.Latency, MaxDelay)
	}
	k := &Kit{opts: opts, rng: rand.New(rand.NewSource(opts.Seed))}
	k.ops.Known(opts.Ops)
	if err := k.ops.Set(Faults{Delays: opts.Delays, Hang: opts.Hang}); err != nil {
		return nil, err
	}
	return k, nil
}

// Serve counts the call, applies the faults in a fixed order (latency, a
// failing scope, Options.Fault, a seeded throttle or server error, a hang,
// a delay) and otherwise calls serve. serve writes the answer; with a delay
// it writes into a buffer that is sent after the delay.
func (k *Kit) Serve(w http.ResponseWriter, r *http.Request, c Call, serve func(http.ResponseWriter)) {
	if c.Dialect == nil {
		c.Dialect = DefaultDialect
	}
	k.counter.Add(c.Service, c.Op)
	if k.opts.Latency > 0 {
		t := time.NewTimer(k.opts.Latency)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
	}
	if k.failScope(c.Scope) {
		c.WriteError(w, http.StatusInternalServerError, c.Dialect.internalCode(), "simulated outage of "+c.Dialect.scopeKind()+" "+c.Scope)
		return
	}
	if k.opts.Fault != nil {
		if status, code := k.opts.Fault(c.Service, c.Op, c.Scope); status != 0 {
			c.WriteError(w, status, code, "simulated "+code+" for "+c.Op+" in "+c.Scope)
			return
		}
	}
	if status, code, ok := k.randomFault(c); ok {
		c.WriteError(w, status, code, "simulated "+code)
		return
	}
	hang, delay := k.ops.For(c.Service, c.Op)
	if hang {
		<-r.Context().Done() // never answered, never done
		return
	}
	if delay > 0 {
		serveHeld(w, r, delay, serve)
		return
	}
	serve(w)
}

// FailsScope reports whether Options.FailScopes fails the scope. A
// simulator whose cloud reports a failing part inside a successful answer
// (GCP's aggregated listing names unreachable zones) asks it instead of
// failing the whole call.
func (k *Kit) FailsScope(scope string) bool { return k.failScope(scope) }

func (k *Kit) failScope(scope string) bool {
	for _, s := range k.opts.FailScopes {
		if s == scope {
			return true
		}
	}
	return false
}

// randomFault draws once from the seeded source and decides whether the
// call is throttled or fails with a server error.
func (k *Kit) randomFault(c Call) (status int, code string, ok bool) {
	k.mu.Lock()
	x := k.rng.Float64()
	k.mu.Unlock()
	switch {
	case x < k.opts.ThrottleRate:
		status, code = c.Dialect.throttle(c)
		return status, code, true
	case x < k.opts.ThrottleRate+k.opts.ErrorRate:
		return http.StatusInternalServerError, c.Dialect.internalCode(), true
	}
	return 0, "", false
}

// Counts returns the requests served so far: service → operation → count.
func (k *Kit) Counts() map[string]map[string]int { return k.counter.Counts() }

// ResetCounts zeroes the request counters.
func (k *Kit) ResetCounts() { k.counter.Reset() }

// SetFaults replaces the per-operation faults (see OpFaults.Set).
func (k *Kit) SetFaults(f Faults) error { return k.ops.Set(f) }

// CurrentFaults returns the per-operation faults in effect.
func (k *Kit) CurrentFaults() Faults { return k.ops.Current() }

// Counter counts requests per service and operation. The zero value is
// ready; it is safe for concurrent use.
type Counter struct {
	mu     sync.Mutex
	counts map[string]map[string]int
}

// Add counts one request.
func (c *Counter) Add(service, op string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.counts == nil {
		c.counts = map[string]map[string]int{}
	}
	if c.counts[service] == nil {
		c.counts[service] = map[string]int{}
	}
	c.counts[service][op]++
}

// Counts returns a copy of the counts: service → operation → count.
func (c *Counter) Counts() map[string]map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]map[string]int{}
	for svc, ops := range c.counts {
		out[svc] = map[string]int{}
		for op, n := range ops {
			out[svc][op] = n
		}
	}
	return out
}

// Reset zeroes the counts.
func (c *Counter) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.counts = nil
}

// Total adds up counts.
func Total(counts map[string]map[string]int) int {
	n := 0
	for _, ops := range counts {
		for _, k := range ops {
			n += k
		}
	}
	return n
}
