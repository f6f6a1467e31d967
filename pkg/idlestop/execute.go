package idlestop

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers"
)

// The results Execute records on stop decisions.
const (
	// ResultStopped: the stop was sent and accepted.
	ResultStopped = "stopped"
	// ResultAlreadyStopped: the machine was already stopped or stopping (a no-op).
	ResultAlreadyStopped = "already-stopped"
	// ResultNotStoppable: the cloud cannot stop it (a one-time spot instance).
	ResultNotStoppable = "not-stoppable"
	// ResultNotFound: the machine no longer exists.
	ResultNotFound = "not-found"
	// ResultFailed: the stop failed; Error says why.
	ResultFailed = "failed"
	// ResultDryRun: a dry run; the machine would be stopped.
	ResultDryRun = "dry-run"
	// ResultNotAttempted: the run ended (cap, permission check, cancellation)
	// before this machine was stopped; Error says why.
	ResultNotAttempted = "not-attempted"
	// ResultUnknown: the stop was sent but its answer never came (the run
	// was interrupted or timed out, or the request timed out): the machine
	// may be stopping. Never counted as failed; the next run reconciles it.
	ResultUnknown = "unknown"
)

// DefaultGrace is how long stops in flight may finish after the run is
// interrupted (SIGINT, SIGTERM) or times out, before they are abandoned.
const DefaultGrace = 10 * time.Second

// DefaultConcurrency is how many stops run at once.
const DefaultConcurrency = 4

// DefaultThrottlePause is the pause before the one extra try of a throttled stop.
const DefaultThrottlePause = 2 * time.Second

// Options configure Execute.
type Options struct {
	// Stopper stops the machines (the provider's capability).
	Stopper providers.Stopper
	// Recheck reads the stop candidates again right before the stops: their
	// state, tags and latest samples, keyed by ResourceID. A machine missing
	// from the map is skipped as gone. Required with Execute.
	Recheck func(ctx context.Context, stops []Decision) (map[string]Candidate, error)
	// Concurrency bounds the stops (and permission checks) at once;
	// DefaultConcurrency when zero.
	Concurrency int
	// Execute stops machines; without it Execute is a dry run that calls
	// only the permission check.
	Execute bool
	// Audit receives every decision and the summary; nil logs nothing.
	Audit *Audit
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Policy re-decides the re-checked candidates and caps the stops.
	Policy Policy
	// ThrottlePause is the pause before retrying a throttled stop once;
	// DefaultThrottlePause when zero.
	ThrottlePause time.Duration
	// Grace is how long stops in flight may still run once ctx ends (no new
	// stop starts then); after it they are abandoned and logged unknown.
	// Zero abandons them at once.
	Grace time.Duration
	// Lock, when set, must hold the target of every machine stopped; a stop
	// outside it is not attempted.
	Lock *TargetLock
	// Ledger, when set, makes Policy.MaxStops a cap on the stops of all runs
	// sharing it that run at the same time (Ledger.Reserve), checked right
	// before the stops; Execute closes it when the stops end.
	Ledger *Ledger
}

// Summary is what a run did.
type Summary struct {
	RunID   string    `json:"runId"`
	Start   time.Time `json:"start"`
	End     time.Time `json:"end"`
	Execute bool      `json:"execute"`
	// Considered is the number of machines decided on; Stop and Skip split
	// them by final decision.
	Considered int `json:"considered"`
	Stop       int `json:"stop"`
	Skip       int `json:"skip"`
	// Reasons counts the final decisions by reason.
	Reasons map[Reason]int `json:"reasons"`
	// Results counts the stop decisions by result.
	Results map[string]int `json:"results"`
	// Stopped is the number of machines stopped; Failed the stops that
	// failed (ResultFailed); Unknown the stops sent whose answer never came
	// (ResultUnknown).
	Stopped int `json:"stopped"`
	Failed  int `json:"failed"`
	Unknown int `json:"unknown"`
	// HourlySavings and MonthlySavings are what the stopped machines save
	// (in a dry run: what the stop decisions would save).
	HourlySavings  Amount `json:"hourlySavings"`
	MonthlySavings Amount `json:"monthlySavings"`
	// Failures lists "resourceId: error" for each failed stop.
	Failures []string `json:"failures,omitempty"`
	// Error is the error the run ended with, if any.
	Error string `json:"error,omitempty"`
}

// TooManyError is returned when more machines would be stopped than the cap
// allows; nothing is stopped. Recent is the stops that other runs, still
// running, reserved in the stop ledger (zero without a ledger).
type TooManyError struct {
	Stops  int
	Max    int
	Recent int
}

func (e *TooManyError) Error() string {
	if e.Recent > 0 {
		return fmt.Sprintf("%d machines would be stopped and other runs still running stop %d, more than idle_stop.max_stops (%d) together: nothing was stopped", e.Stops, e.Recent, e.Max)
	}
	return fmt.Sprintf("%d machines would be stopped, more than idle_stop.max_stops (%d): nothing was stopped", e.Stops, e.Max)
}

// Cap returns a *TooManyError when decisions hold more stops than maxStops.
func Cap(decisions []Decision, maxStops int) error {
	n := countStops(decisions)
	if n > maxStops {
		return &TooManyError{Stops: n, Max: maxStops}
	}
	return nil
}

func countStops(ds []Decision) int {
	n := 0
	for _, d := range ds {
		if d.Decision == Stop {
			n++
		}
	}
	return n
}

// Execute carries out the decisions, updating them in place (Result, Error,
// Executed; re-checked machines get their fresh decision), and returns the
// run's summary. In order:
//
//  1. a permission check: one dry-run Stop per distinct scope among the stop
//     decisions; ErrPermission or ErrCredentials ends the run with an error
//     wrapping it before anything is stopped;
//  2. the cap (Cap with Policy.MaxStops): a *TooManyError, nothing stopped;
//  3. without Options.Execute, a dry run: stop decisions get ResultDryRun;
//  4. the re-check: Recheck reads every stop candidate again and Decide runs
//     on the fresh data; a machine that became busy, was stopped, lost its
//     metrics or is gone is skipped with its new reason;
//  5. with a Ledger, the reservation of the stops against the other runs
//     still running (a *TooManyError, nothing stopped);
//  6. the stops, Concurrency at a time, each only after its intent line is
//     synced to the audit log. A throttled stop is retried once after
//     ThrottlePause; an already stopped machine is a no-op; one failure
//     never stops the others. Failed stops are counted in Summary.Failed,
//     not returned as an error. Once ctx ends no stop starts; those in
//     flight get Grace, then are abandoned: a stop without an answer
//     (cancelled, timed out) is ResultUnknown, never ResultFailed.
//
// Every decision is written to the audit log as soon as it is final (skips
// first, each stop as an outcome line when it returns), then the summary.
// When the run ends early, every decision not yet logged is logged with
// ResultNotAttempted.
// The error is non-nil for an invalid policy, a missing Stopper or Recheck,
// a failed permission check, the cap, a failed re-check, a cancelled ctx or
// an audit log that cannot be written.
func Execute(ctx context.Context, decisions []Decision, opts Options) (Summary, error) {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	conc := opts.Concurrency
	if conc <= 0 {
		conc = DefaultConcurrency
	}
	pause := opts.ThrottlePause
	if pause <= 0 {
		pause = DefaultThrottlePause
	}
	r := &run{ds: decisions, audit: opts.Audit, logged: make([]bool, len(decisions)), intended: make([]bool, len(decisions))}
	sum := Summary{RunID: opts.Audit.RunID(), Start: now(), Execute: opts.Execute}
	if sum.RunID == "" {
		sum.RunID = NewRunID(sum.Start)
	}
	finish := func(runErr error) (Summary, error) {
		if runErr != nil {
			for i := range r.ds {
				if r.ds[i].Decision == Stop && r.ds[i].Result == "" {
					r.ds[i].Result, r.ds[i].Error = ResultNotAttempted, runErr.Error()
				}
			}
		}
		for i := range r.ds {
			r.log(i)
		}
		sum.End = now()
		tally(&sum, r.ds)
		if runErr != nil {
			sum.Error = runErr.Error()
		}
		if err := opts.Audit.WriteSummary(sum); err != nil {
			r.auditErr(err)
		}
		return sum, errors.Join(runErr, r.auditError)
	}

	if err := opts.Policy.Validate(); err != nil {
		return finish(err)
	}
	stops := stopIndexes(r.ds)
	if len(stops) > 0 && opts.Stopper == nil {
		return finish(errors.New("the provider cannot stop machines"))
	}
	if opts.Execute && len(stops) > 0 && opts.Recheck == nil {
		return finish(errors.New("idlestop: Options.Recheck is required to execute"))
	}
	// The skips are final: log them now.
	for i := range r.ds {
		if r.ds[i].Decision != Stop {
			r.log(i)
		}
	}
	if err := r.auditError; err != nil {
		return finish(fmt.Errorf("nothing was stopped: %w", err))
	}

	// 1. Permission check.
	if err := checkPermission(ctx, opts.Stopper, r.ds, stops, conc, pause); err != nil {
		return finish(err)
	}
	// 2. Cap.
	if err := Cap(r.ds, opts.Policy.MaxStops); err != nil {
		return finish(err)
	}
	// 3. Dry run.
	if !opts.Execute {
		for _, i := range stops {
			r.ds[i].Result = ResultDryRun
		}
		return finish(nil)
	}
	// 4. Re-check.
	if len(stops) > 0 {
		cands := make([]Decision, len(stops))
		for k, i := range stops {
			cands[k] = r.ds[i]
		}
		fresh, err := opts.Recheck(ctx, cands)
		if err != nil {
			for _, i := range stops {
				d := &r.ds[i]
				d.Decision, d.Reason = Skip, ReasonRecheckFailed
				d.Message = "the re-check before stopping failed, so the machine was left running"
				d.HourlySavings, d.MonthlySavings = Amount{}, Amount{}
				d.Error = err.Error()
			}
			return finish(fmt.Errorf("re-check before stopping: %w; nothing was stopped", err))
		}
		t := now()
		for _, i := range stops {
			d := &r.ds[i]
			c, ok := fresh[d.ResourceID]
			if !ok {
				d.Decision, d.Reason, d.Time = Skip, ReasonGone, t
				d.Message = "the machine was not found at the re-check before stopping"
				d.HourlySavings, d.MonthlySavings = Amount{}, Amount{}
				r.log(i)
				continue
			}
			nd := decide(c, t, opts.Policy.effective(), opts.Policy.Protection())
			if nd.Scope == (providers.Scope{}) {
				nd.Scope = d.Scope
			}
			*d = nd
			if d.Decision != Stop {
				r.log(i)
			}
		}
		stops = stopIndexes(r.ds)
	}
	// 4b. The shared cap.
	if opts.Ledger != nil && len(stops) > 0 {
		list := make([]Decision, len(stops))
		for k, i := range stops {
			list[k] = r.ds[i]
		}
		err := opts.Ledger.Reserve(ctx, sum.RunID, list, opts.Policy.MaxStops, now())
		// The reservations count against other runs until the stops end.
		defer opts.Ledger.Close()
		if err != nil {
			return finish(err)
		}
	}
	// 5. Stops: no new one once ctx ends; those in flight get opts.Grace.
	callCtx, release := graceContext(ctx, opts.Grace)
	defer release()
	sem := make(chan struct{}, conc)
	var wg sync.WaitGroup
	for _, i := range stops {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		d := &r.ds[i]
		if opts.Lock != nil && !opts.Lock.Holds(d.Scope) {
			d.Result, d.Error = ResultNotAttempted, fmt.Sprintf("this run holds no lock for %s", Target(d.Scope))
			r.log(i)
			<-sem
			continue
		}
		// The intent is on disk before the stop is sent, or it is not sent.
		if err := opts.Audit.WriteIntent(*d, now().UTC()); err != nil {
			r.auditErr(err)
			<-sem
			break
		}
		r.mu.Lock()
		r.intended[i] = true
		r.mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			res, err := stopOnce(callCtx, opts.Stopper, d.Scope, d.ResourceID, false, pause)
			d.Executed = true
			d.Time = now()
			setResult(d, res, err)
			r.log(i)
		}()
	}
	wg.Wait()
	if err := r.auditError; err != nil {
		return finish(fmt.Errorf("the audit log failed, so no further machine was stopped: %w", err))
	}
	return finish(ended(ctx))
}

// ended is nil while ctx runs, else why it ended (its cause: the signal or
// the run timeout).
func ended(ctx context.Context) error {
	if ctx.Err() == nil {
		return nil
	}
	if c := context.Cause(ctx); c != nil && !errors.Is(c, ctx.Err()) {
		return fmt.Errorf("%w (%w)", c, ctx.Err())
	}
	return ctx.Err()
}

// graceContext is the context of the calls in flight: it outlives ctx by
// grace, then is cancelled with the reason.
func graceContext(ctx context.Context, grace time.Duration) (context.Context, context.CancelFunc) {
	if grace <= 0 {
		return context.WithCancel(ctx)
	}
	call, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	abandon := func() {
		cancel(fmt.Errorf("abandoned %s after the run ended: %w", grace, context.Cause(ctx)))
	}
	stop := context.AfterFunc(ctx, func() { time.AfterFunc(grace, abandon) })
	return call, func() { stop(); cancel(nil) }
}

// run tracks which decisions are in the audit log.
type run struct {
	ds         []Decision
	audit      *Audit
	mu         sync.Mutex
	logged     []bool
	intended   []bool // an intent line was written: the final line is an outcome
	auditError error
}

// log writes decision i to the audit log unless it already is: an outcome
// line after an intent, else a decision line.
func (r *run) log(i int) {
	r.mu.Lock()
	if r.logged[i] {
		r.mu.Unlock()
		return
	}
	r.logged[i] = true
	intended := r.intended[i]
	r.mu.Unlock()
	write := r.audit.WriteDecision
	if intended {
		write = r.audit.WriteOutcome
	}
	if err := write(r.ds[i]); err != nil {
		r.auditErr(err)
	}
}

func (r *run) auditErr(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.auditError == nil {
		r.auditError = err
	}
}

func stopIndexes(ds []Decision) []int {
	var out []int
	for i, d := range ds {
		if d.Decision == Stop {
			out = append(out, i)
		}
	}
	return out
}

// stopAPI is a scope and the service whose stop API stops a machine there
// (empty for the cloud's VMs): each needs its own permission.
type stopAPI struct {
	scope   providers.Scope
	service fleet.ManagedService
}

// checkPermission runs one dry-run stop per scope and stop API (the VMs',
// each managed service's), on its first stop candidate; when that machine
// cannot tell (already stopped, gone, not stoppable) the next one is tried.
// Other errors are left to the stops themselves.
func checkPermission(ctx context.Context, s providers.Stopper, ds []Decision, stops []int, conc int, pause time.Duration) error {
	byAPI := map[stopAPI][]int{}
	var apis []stopAPI
	for _, i := range stops {
		a := stopAPI{ds[i].Scope, ds[i].Service}
		if _, ok := byAPI[a]; !ok {
			apis = append(apis, a)
		}
		byAPI[a] = append(byAPI[a], i)
	}
	sort.SliceStable(apis, func(a, b int) bool {
		ka := apis[a].scope.String() + apis[a].scope.Profile + "\x00" + string(apis[a].service)
		kb := apis[b].scope.String() + apis[b].scope.Profile + "\x00" + string(apis[b].service)
		return ka < kb
	})
	errs := make([]error, len(apis))
	sem := make(chan struct{}, conc)
	var wg sync.WaitGroup
	for k, a := range apis {
		sc := a.scope
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			for _, i := range byAPI[a] {
				res, err := stopOnce(ctx, s, sc, ds[i].ResourceID, true, pause)
				switch {
				case errors.Is(err, providers.ErrPermission), errors.Is(err, providers.ErrCredentials):
					errs[k] = fmt.Errorf("permission check in %s (dry-run stop of %s): %w; nothing was stopped", sc, ds[i].ResourceID, err)
					return
				case ctx.Err() != nil:
					errs[k] = ctx.Err()
					return
				case err == nil && !res.AlreadyStopped:
					return // verified
				case err == nil, errors.Is(err, providers.ErrNotFound), errors.Is(err, providers.ErrNotStoppable):
					continue // this machine cannot tell; try the next
				default:
					return // unknown: the stop itself will report it
				}
			}
		}()
	}
	wg.Wait()
	if err := ended(ctx); err != nil {
		return err
	}
	return errors.Join(errs...)
}

// stopOnce calls Stop, and once more after pause when it was throttled.
func stopOnce(ctx context.Context, s providers.Stopper, sc providers.Scope, id string, dryRun bool, pause time.Duration) (providers.StopResult, error) {
	res, err := s.Stop(ctx, sc, id, dryRun)
	if !errors.Is(err, providers.ErrThrottled) {
		return res, err
	}
	t := time.NewTimer(pause)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return res, err
	}
	return s.Stop(ctx, sc, id, dryRun)
}

// setResult records a stop's answer. A cancellation or a timeout leaves the
// outcome unknown: the stop may have been carried out, so it is never
// logged as failed. An answer (a refusal too) is known, even when it comes
// after the run was interrupted.
func setResult(d *Decision, res providers.StopResult, err error) {
	switch {
	case err == nil && res.AlreadyStopped:
		d.Result = ResultAlreadyStopped
	case err == nil:
		d.Result = ResultStopped
	case isTimeout(err):
		d.Result = ResultUnknown
		d.Error = "no answer to the stop (" + providers.Brief(err) + "); it may have been carried out: the next run reconciles it"
	case errors.Is(err, providers.ErrNotStoppable):
		d.Result, d.Error = ResultNotStoppable, providers.Brief(err)
	case errors.Is(err, providers.ErrNotFound):
		d.Result, d.Error = ResultNotFound, providers.Brief(err)
	default:
		d.Result, d.Error = ResultFailed, providers.Brief(err)
	}
}

// tally fills the summary's counts and savings from the final decisions.
func tally(s *Summary, ds []Decision) {
	s.Considered = len(ds)
	s.Reasons = map[Reason]int{}
	s.Results = map[string]int{}
	s.HourlySavings, s.MonthlySavings = Amount{}, Amount{}
	for _, d := range ds {
		s.Reasons[d.Reason]++
		if d.Decision != Stop {
			s.Skip++
			continue
		}
		s.Stop++
		s.Results[d.Result]++
		switch d.Result {
		case ResultStopped:
			s.Stopped++
		case ResultFailed:
			s.Failed++
			s.Failures = append(s.Failures, d.ResourceID+": "+d.Error)
		case ResultUnknown:
			s.Unknown++
		}
		if d.Result == ResultStopped || (!s.Execute && d.Result == ResultDryRun) {
			s.HourlySavings = Amount{s.HourlySavings.Add(d.HourlySavings.Decimal)}
			s.MonthlySavings = Amount{s.MonthlySavings.Add(d.MonthlySavings.Decimal)}
		}
	}
}

// isTimeout says whether err is a cancellation or a timeout, after which the
// request's effect is unknown.
func isTimeout(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}
