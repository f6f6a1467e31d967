package idlestop

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/config"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/idlestop"
	"github.com/gpufinops/gpufinops/providers"
)

// runFlags are the time and lock flags; nil when not given.
type runFlags struct {
	ConnectTimeout *time.Duration
	RequestTimeout *time.Duration
	RunTimeout     *time.Duration
	Grace          *time.Duration
	LockDir        *string
	LockWait       *time.Duration
}

// addRunFlags registers the time and lock flags; the returned function
// validates and records the ones given.
func addRunFlags(cmd *cobra.Command, rf *runFlags) func() error {
	var (
		connect, request, run, grace, wait time.Duration
		dir                                string
	)
	fl := cmd.Flags()
	fl.DurationVar(&connect, "connect-timeout", config.DefaultConnectTimeout, "bound opening a connection to the cloud (TCP and TLS); not retried when it passes")
	fl.DurationVar(&request, "request-timeout", config.DefaultRequestTimeout, "bound each request to the cloud or the webhook (one attempt)")
	fl.DurationVar(&run, "run-timeout", config.DefaultRunTimeout, "bound the whole run, retries included; past it, exit 3")
	fl.DurationVar(&grace, "grace-period", idlestop.DefaultGrace, "after SIGINT/SIGTERM or the run timeout, let stops in flight finish this long")
	fl.StringVar(&dir, "lock-dir", "", "directory of the per-account locks and the shared stop ledger (default $XDG_STATE_HOME/gpufinops/locks)")
	fl.DurationVar(&wait, "lock-wait", config.DefaultLockWait, "wait this long for another run's lock, then stop nothing")
	return func() error {
		for _, d := range []struct {
			name, key string
			v         time.Duration
			dst       **time.Duration
		}{
			{"connect-timeout", "timeouts.connect", connect, &rf.ConnectTimeout},
			{"request-timeout", "timeouts.request", request, &rf.RequestTimeout},
			{"run-timeout", "timeouts.run", run, &rf.RunTimeout},
			{"grace-period", "timeouts.grace", grace, &rf.Grace},
			{"lock-wait", "locks.wait", wait, &rf.LockWait},
		} {
			if !fl.Changed(d.name) {
				continue
			}
			if err := config.DurationRanges[d.key].Check(d.v); err != nil {
				return cmdutil.FlagErrorf("--%s: %v", d.name, err)
			}
			v := d.v
			*d.dst = &v
		}
		if fl.Changed("lock-dir") {
			if dir == "" {
				return cmdutil.FlagErrorf("--lock-dir: empty; give a directory")
			}
			rf.LockDir = &dir
		}
		return nil
	}
}

// settings are the time and lock settings in effect: config, then flags.
type settings struct {
	connect, request, run, grace, lockWait time.Duration
	lockDir, auditLog                      string
}

// settings merges the configuration and the flags, and picks the default
// audit log and lock directory under the XDG state directory.
func (o *IdleStopOptions) settings(cfg *config.Config) (settings, error) {
	s := settings{connect: cfg.Timeouts.Connect, request: cfg.Timeouts.Request, run: cfg.Timeouts.Run, grace: cfg.Timeouts.Grace,
		lockWait: cfg.Locks.Wait, lockDir: cfg.Locks.Dir, auditLog: o.AuditLog}
	// A Config built in code may leave them zero: the defaults apply.
	if s.connect <= 0 {
		s.connect = config.DefaultConnectTimeout
	}
	if s.request <= 0 {
		s.request = config.DefaultRequestTimeout
	}
	if s.run <= 0 {
		s.run = config.DefaultRunTimeout
	}
	if s.lockWait <= 0 {
		s.lockWait = config.DefaultLockWait
	}
	if o.Run.ConnectTimeout != nil {
		s.connect = *o.Run.ConnectTimeout
	}
	if o.Run.RequestTimeout != nil {
		s.request = *o.Run.RequestTimeout
	}
	if o.Run.RunTimeout != nil {
		s.run = *o.Run.RunTimeout
	}
	if o.Run.Grace != nil {
		s.grace = *o.Run.Grace
	}
	if o.Run.LockWait != nil {
		s.lockWait = *o.Run.LockWait
	}
	if o.Run.LockDir != nil {
		s.lockDir = *o.Run.LockDir
	}
	if s.auditLog == "" {
		s.auditLog = cfg.Audit.Log
	}
	if !o.Execute {
		return s, nil
	}
	lookup := o.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	if s.auditLog == "" || s.lockDir == "" {
		state, err := idlestop.StateDir(lookup)
		if err != nil {
			return s, cmdutil.FlagErrorf("--execute needs an audit log and a lock directory: give --audit-log FILE and --lock-dir DIR (%v to default to)", err)
		}
		if s.auditLog == "" {
			s.auditLog = filepath.Join(state, idlestop.DefaultAuditFile)
		}
		if s.lockDir == "" {
			s.lockDir = filepath.Join(state, idlestop.DefaultLockSubdir)
		}
	}
	return s, nil
}

// targets are the provider:account pairs the run may act on.
func targets(ctx context.Context, provs []providers.Provider) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	for _, p := range provs {
		scopes, err := p.Scopes(ctx)
		if err != nil {
			return nil, fmt.Errorf("%s: listing accounts to lock: %w", p.Name(), err)
		}
		for _, sc := range scopes {
			if t := idlestop.Target(sc); !seen[t] {
				seen[t] = true
				out = append(out, t)
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// lookupStates reads machines' states for Reconcile through the provider's
// listing of the scope.
func lookupStates(byName map[fleet.Provider]providers.Provider) idlestop.StateLookup {
	return func(ctx context.Context, sc providers.Scope, ids []string) (map[string]fleet.State, error) {
		p, ok := byName[sc.Provider]
		if !ok {
			return nil, fmt.Errorf("%s is not among this run's providers", sc.Provider)
		}
		all, err := p.ListGPUInstances(ctx, sc)
		if err != nil {
			return nil, err
		}
		want := map[string]bool{}
		for _, id := range ids {
			want[id] = true
		}
		out := map[string]fleet.State{}
		for _, in := range all {
			if want[in.ID] {
				out[in.ID] = in.State
			}
		}
		return out, nil
	}
}

// reconcile settles the earlier runs' unsettled intents and says so on w.
func reconcile(ctx context.Context, w io.Writer, audit *idlestop.Audit, lock *idlestop.TargetLock, byName map[fleet.Provider]providers.Provider, now func() time.Time) error {
	rs, torn, err := idlestop.Reconcile(ctx, audit, idlestop.ReconcileOptions{
		Lookup: lookupStates(byName),
		Covers: func(sc providers.Scope) bool { _, ok := byName[sc.Provider]; return ok && lock.Holds(sc) },
		Now:    now,
	})
	if torn > 0 {
		fmt.Fprintf(w, "warning: %s: %d torn line(s) skipped (a run was killed while writing)\n", audit.Path(), torn)
	}
	for _, r := range rs {
		msg := r.State
		if r.Error != "" {
			msg += " (" + r.Error + ")"
		}
		fmt.Fprintf(w, "reconciled: %s: the stop run %s sent at %s has no recorded answer; the machine is %s\n", r.ResourceID, r.IntentRunID, r.IntentTime.UTC().Format(time.RFC3339), msg)
	}
	return err
}

// incomplete explains a run that ended early, in one line, exit 3.
func incomplete(ctx context.Context, s idlestop.Summary, execute bool) error {
	cause := context.Cause(ctx)
	if cause == nil {
		cause = ctx.Err()
	}
	notAttempted := s.Results[idlestop.ResultNotAttempted]
	what := "nothing was stopped"
	switch {
	case !execute:
	case s.Stopped == 0 && s.Unknown == 0 && notAttempted > 0:
		what = fmt.Sprintf("nothing was stopped (%d not attempted)", notAttempted)
	case s.Stopped > 0 || s.Unknown > 0:
		what = fmt.Sprintf("%d stopped, %d not attempted", s.Stopped, notAttempted)
		if s.Unknown > 0 {
			what = fmt.Sprintf("%d stopped, %d unknown (the next run reconciles them), %d not attempted", s.Stopped, s.Unknown, notAttempted)
		}
	}
	return &cmdutil.IncompleteError{Err: fmt.Errorf("idle-stop ended early: %v; %s", cause, what)}
}

// timeoutCause is the cause of a run that outlived --run-timeout.
type timeoutCause struct{ limit time.Duration }

func (e *timeoutCause) Error() string {
	return fmt.Sprintf("the run took longer than --run-timeout %s (an endpoint did not answer in time)", e.limit)
}
