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
	"time"

	"github.com/gofrs/flock"
)

// ledgerKeep is how long ledger entries are kept; older ones are dropped
// when the ledger is written.
const ledgerKeep = 24 * time.Hour

// ledgerLockWait bounds the wait for the ledger's own lock, which a run holds
// only for the time it takes to read and rewrite the file.
const ledgerLockWait = 30 * time.Second

// Ledger is the stop ledger that makes --max-stops a cap on every run sharing
// a lock directory, not on each run alone: each run reserves its stops in it
// right before sending them, and a reservation counts against every run
// that starts within Window after it, whether or not the stop succeeded.
// So max_stops is the most stops all runs together send in any Window
// (default: the run timeout, the longest a run may take).
type Ledger struct {
	// Path is the ledger file (JSON Lines); Path+".lock" guards it.
	Path string
	// Window is how long a reservation counts.
	Window time.Duration
}

// LedgerEntry is one reserved stop.
type LedgerEntry struct {
	Time       time.Time `json:"time"`
	RunID      string    `json:"runId"`
	Target     string    `json:"target"`
	ResourceID string    `json:"resourceId"`
}

// Reserve records the stops of run runID under the ledger's lock, or, when
// they and the other runs' reservations of the last Window exceed maxStops,
// records nothing and returns a *TooManyError. A ledger it cannot read or
// parse is an error naming the file and line: nothing is stopped.
func (l *Ledger) Reserve(ctx context.Context, runID string, stops []Decision, maxStops int, now time.Time) error {
	if l == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(l.Path), 0o750); err != nil {
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
	var keep []LedgerEntry
	recent := 0
	for _, e := range entries {
		if now.Sub(e.Time) > ledgerKeep {
			continue
		}
		keep = append(keep, e)
		if e.RunID != runID && now.Sub(e.Time) < l.Window {
			recent++
		}
	}
	if len(stops)+recent > maxStops {
		return &TooManyError{Stops: len(stops), Max: maxStops, Recent: recent, Window: l.Window}
	}
	for _, d := range stops {
		keep = append(keep, LedgerEntry{Time: now.UTC(), RunID: runID, Target: Target(d.Scope), ResourceID: d.ResourceID})
	}
	return writeLedger(l.Path, keep)
}

// Recent returns the entries of the last window before now.
func (l *Ledger) Recent(now time.Time) ([]LedgerEntry, error) {
	entries, err := readLedger(l.Path)
	var out []LedgerEntry
	for _, e := range entries {
		if now.Sub(e.Time) < l.Window {
			out = append(out, e)
		}
	}
	return out, err
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
