package idlestop

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/gofrs/flock"

	"github.com/gpufinops/gpufinops/providers"
)

// Target is what one lock guards: a provider and account ("aws:111122223333").
func Target(sc providers.Scope) string {
	return string(sc.Provider) + ":" + sc.Account
}

// TargetLock holds one flock per target, so that two runs over the same
// accounts never act at once, whatever their audit logs.
type TargetLock struct {
	dir     string
	targets []string
	locks   []*flock.Flock
}

// LockTargets takes the lock of every target under dir (created 0750), in
// sorted order so that two runs over overlapping targets cannot deadlock,
// waiting up to wait for each. On failure it releases what it took and says
// which target another run holds.
func LockTargets(ctx context.Context, dir string, targets []string, wait time.Duration) (*TargetLock, error) {
	if dir == "" {
		return nil, errors.New("lock directory: no path given")
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("lock directory: %w", err)
	}
	uniq := map[string]bool{}
	var ts []string
	for _, t := range targets {
		if !uniq[t] {
			uniq[t] = true
			ts = append(ts, t)
		}
	}
	sort.Strings(ts)
	l := &TargetLock{dir: dir}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	for _, t := range ts {
		path := filepath.Join(dir, lockName(t))
		lk := flock.New(path, flock.SetPermissions(0o640))
		ok, err := lk.TryLockContext(wctx, lockRetry)
		if !ok || err != nil {
			_ = lk.Close()
			_ = l.Release()
			switch {
			case ctx.Err() != nil:
				return nil, fmt.Errorf("waiting for the lock of %s (%s): %w", t, path, context.Cause(ctx))
			case err != nil && !errors.Is(err, context.DeadlineExceeded):
				return nil, fmt.Errorf("locking %s (%s): %w", t, path, err)
			}
			return nil, fmt.Errorf("another idle-stop run still holds the lock of %s (%s) after %s; nothing was stopped", t, path, wait)
		}
		l.targets = append(l.targets, t)
		l.locks = append(l.locks, lk)
	}
	return l, nil
}

// lockName is a target's lock file name: readable, and unique by a hash.
func lockName(t string) string {
	clean := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' {
			return r
		}
		return '_'
	}, t)
	if len(clean) > 64 {
		clean = clean[:64]
	}
	sum := sha256.Sum256([]byte(t))
	return clean + "-" + hex.EncodeToString(sum[:4]) + ".lock"
}

// Holds says whether the lock covers the scope's target; a nil lock holds
// nothing.
func (l *TargetLock) Holds(sc providers.Scope) bool {
	if l == nil {
		return false
	}
	t := Target(sc)
	i := sort.SearchStrings(l.targets, t)
	return i < len(l.targets) && l.targets[i] == t
}

// Targets lists the targets held, sorted.
func (l *TargetLock) Targets() []string {
	if l == nil {
		return nil
	}
	return append([]string(nil), l.targets...)
}

// Dir is the lock directory.
func (l *TargetLock) Dir() string {
	if l == nil {
		return ""
	}
	return l.dir
}

// Release unlocks every target; it is safe to call twice.
func (l *TargetLock) Release() error {
	if l == nil {
		return nil
	}
	var errs []error
	for i := len(l.locks) - 1; i >= 0; i-- {
		errs = append(errs, l.locks[i].Close())
	}
	l.locks, l.targets = nil, nil
	return errors.Join(errs...)
}
