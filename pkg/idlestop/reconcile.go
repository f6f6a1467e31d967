package idlestop

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers"
)

// StateLookup reads the current state of machines in one scope: id → state.
// A machine missing from the map no longer exists.
type StateLookup func(ctx context.Context, scope providers.Scope, ids []string) (map[string]fleet.State, error)

// ReconcileOptions configure Reconcile.
type ReconcileOptions struct {
	// Lookup reads the machines' states; required.
	Lookup StateLookup
	// Covers says whether this run can look a scope up (its provider and
	// account are among the run's, under its lock); nil covers every scope.
	// Intents of other scopes are left for a run that covers them.
	Covers func(providers.Scope) bool
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// Reconcile settles the intents of earlier runs that never wrote an outcome
// (a crash, a kill) or wrote an unknown one: it reads each machine's state
// from the cloud and appends a reconciled line saying what really happened
// (stopped, still running, gone, or unknown when the state cannot be read,
// which the next run tries again). Call it holding the audit log and the
// target locks, before anything is stopped. It returns the lines written and
// the number of torn lines skipped; the error is for an unreadable or
// unwritable log.
func Reconcile(ctx context.Context, a *Audit, opts ReconcileOptions) ([]Reconciled, int, error) {
	if a == nil {
		return nil, 0, nil
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	intents, torn, err := Unsettled(a.path)
	if err != nil || len(intents) == 0 {
		return nil, torn, err
	}
	byScope := map[providers.Scope][]Intent{}
	var scopes []providers.Scope
	for _, in := range intents {
		sc := in.Scope()
		if opts.Covers != nil && !opts.Covers(sc) {
			continue
		}
		if _, ok := byScope[sc]; !ok {
			scopes = append(scopes, sc)
		}
		byScope[sc] = append(byScope[sc], in)
	}
	sort.Slice(scopes, func(i, j int) bool {
		return scopes[i].String()+scopes[i].Profile < scopes[j].String()+scopes[j].Profile
	})
	var out []Reconciled
	for _, sc := range scopes {
		ins := byScope[sc]
		ids := make([]string, len(ins))
		for i, in := range ins {
			ids[i] = in.ResourceID
		}
		states, lerr := opts.Lookup(ctx, sc, ids)
		for _, in := range ins {
			r := Reconciled{Time: now().UTC(), IntentRunID: in.RunID, IntentTime: in.Time, Provider: in.Provider,
				Account: in.Account, Region: in.Region, ResourceID: in.ResourceID}
			switch st, ok := states[in.ResourceID]; {
			case lerr != nil:
				r.State, r.Error = ReconciledUnknown, fmt.Sprintf("reading %s: %v", sc, lerr)
			case !ok:
				r.State = ReconciledGone
			case st == fleet.Stopped:
				r.State, r.Observed = ReconciledStopped, string(st)
			case st == fleet.Running:
				r.State, r.Observed = ReconciledRunning, string(st)
			default:
				r.State, r.Observed = ReconciledUnknown, string(st)
			}
			if err := a.WriteReconciled(r); err != nil {
				return out, torn, err
			}
			r.Type, r.RunID = LineReconciled, a.runID
			out = append(out, r)
		}
	}
	return out, torn, nil
}
