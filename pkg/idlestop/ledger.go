package idlestop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/gofrs/flock"
)

// ledgerLockWait bounds the wait for the ledger's own lock, which a run holds
// only for the time it takes to read and rewrite the file.
const ledgerLockWait = 30 * time.Second

// Ledger is the stop ledger that makes --max-stops a cap on all runs that
// run at the same time and share a lock directory, not on each run alone.
// Right before sending its stops a run reserves them in the ledger and from
// then until Close holds a lock of its own (runs/RUNID.lock beside the
// ledger) that says it is still running. A reservation counts against the
// other runs while its run is alive; once the run has ended (Close, exit,
// or a kill, which drops the lock) its reservations no longer count and are
// dropped. So max_stops bounds the stops of every set of runs that overlap
// in time, and a run that starts after the others ended has the whole cap.
type Ledger struct {
	// Path is the ledger file (JSON Lines); Path+".lock" guards it.
	Path string

	mu   sync.Mutex
	mine *flock.Flock // this run's liveness lock, from its reservation to Close
}

// LedgerEntry is one reserved stop.
type LedgerEntry struct {
	Time       time.Time `json:"time"`
	RunID      string    `json:"runId"`
	Target     string    `json:"target"`
	ResourceID string    `json:"resourceId"`
}

// Reserve records the stops of run runID under the ledger's lock, or, when
// they and the reservations of the other runs still running exceed
// maxStops, records nothing and returns a *TooManyError. A ledger it cannot
// read or parse is an error naming the file and line: nothing is stopped.
// Call Close when the run ends.
func (l *Ledger) Reserve(ctx context.Context, runID string, stops []Decision, maxStops int, now time.Time) error {
	if l == nil {
		return nil
	}
	dir := filepath.Dir(l.Path)
	if err := os.MkdirAll(filepath.Join(dir, "runs"), 0o750); err != nil {
		return fmt.Errorf("stop ledger: %w", err)
	}
	lk := flock.New(l.Path+".lock", flock.SetPermissions(0o640))
	wctx, cancel := context.WithTimeout(ctx, ledgerLockWait)
	defer cancel()
	ok, err := lk.TryLockContext(wctx, lockRetry)
	if !ok || err != nil {
		_ = lk.Close()
		if err == nil {
			err = errors.New("another run holds it")
		}
		return fmt.Errorf("stop ledger %s: locking: %w; nothing was stopped", l.Path, err)
	}
	defer lk.Close()
	entries, err := readLedger(l.Path)
	if err != nil {
		return err
	}
	alive := map[string]bool{}
	var keep []LedgerEntry
	recent := 0
	for _, e := range entries {
		live, seen := alive[e.RunID]
		if !seen {
			live = e.RunID == runID || l.running(e.RunID)
			alive[e.RunID] = live
		}
		if !live {
			continue
		}
		keep = append(keep, e)
		if e.RunID != runID {
			recent++
		}
	}
	if len(stops)+recent > maxStops {
		return &TooManyError{Stops: len(stops), Max: maxStops, Recent: recent}
	}
	if err := l.markRunning(runID); err != nil {
		return err
	}
	for _, d := range stops {
		keep = append(keep, LedgerEntry{Time: now.UTC(), RunID: runID, Target: Target(d.Scope), ResourceID: d.ResourceID})
	}
	return writeLedger(l.Path, keep)
}

// runLock is the path of a run's liveness lock.
func (l *Ledger) runLock(runID string) string {
	return filepath.Join(filepath.Dir(l.Path), "runs", lockName(runID))
}

// running says whether another run holds its liveness lock.
func (l *Ledger) running(runID string) bool {
	lk := flock.New(l.runLock(runID), flock.SetPermissions(0o640))
	ok, err := lk.TryLock()
	if err != nil {
		return true // cannot tell: count it
	}
	if ok { // nobody holds it: the run has ended
		_ = lk.Close()
		_ = os.Remove(l.runLock(runID))
		return false
	}
	return true
}

// markRunning takes this run's liveness lock, once.
func (l *Ledger) markRunning(runID string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mine != nil {
		return nil
	}
	lk := flock.New(l.runLock(runID), flock.SetPermissions(0o640))
	ok, err := lk.TryLock()
	if err != nil || !ok {
		_ = lk.Close()
		if err == nil {
			err = errors.New("held by another process")
		}
		return fmt.Errorf("stop ledger: run lock %s: %w; nothing was stopped", l.runLock(runID), err)
	}
	l.mine = lk
	return nil
}

// Close ends this run's reservations: they no longer count against others.
// It is safe to call on a nil Ledger and twice.
func (l *Ledger) Close() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mine == nil {
		return nil
	}
	path := l.mine.Path()
	err := l.mine.Close()
	l.mine = nil
	_ = os.Remove(path)
	return err
}

// Entries returns the reservations in the ledger.
func (l *Ledger) Entries() ([]LedgerEntry, error) {
	return readLedger(l.Path)
}

func readLedger(path string) ([]LedgerEntry, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("stop ledger: %w", err)
	}
	var out []LedgerEntry
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var e LedgerEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Time.IsZero() || e.RunID == "" {
			return nil, fmt.Errorf("stop ledger %s:%d: not a {\"time\", \"runId\", \"target\", \"resourceId\"} line; nothing was stopped (remove the file to reset the cap)", path, n)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("stop ledger %s: %w", path, err)
	}
	return out, nil
}

// writeLedger replaces the ledger atomically: a synced temporary file renamed
// over it.
func writeLedger(path string, entries []LedgerEntry) error {
	var buf bytes.Buffer
	for _, e := range entries {
		b, err := json.Marshal(e)
		if err != nil {
			return fmt.Errorf("stop ledger: %w", err)
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("stop ledger: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(buf.Bytes()); err != nil {
		tmp.Close()
		return fmt.Errorf("stop ledger: %w", err)
	}
	if err := tmp.Chmod(0o640); err != nil {
		tmp.Close()
		return fmt.Errorf("stop ledger: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("stop ledger: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("stop ledger: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("stop ledger: %w", err)
	}
	return nil
}
