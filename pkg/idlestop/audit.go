package idlestop

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/gofrs/flock"
)

// DefaultLockWait is how long OpenAudit waits for another run to release the
// audit log's lock. A run every 15 minutes normally holds it for seconds; a
// run still holding it after this long is stuck or overlapping, and the new
// run fails (nothing stopped) instead of queueing behind it indefinitely.
const DefaultLockWait = 5 * time.Minute

// lockRetry is how often a waiting run tries the lock again.
const lockRetry = 100 * time.Millisecond

// Audit is an append-only JSON Lines audit log, held exclusively by one run.
// Every line is one JSON object with "type" (LineDecision, LineIntent,
// LineOutcome, LineReconciled or LineSummary) and the run's "runId"; each
// line is written with one append and fsync'd before the call returns, so a
// crash leaves only whole, durable lines, and an intent line is on disk
// before its stop is sent. The lock is
// an flock(2) on path+".lock", held from OpenAudit until Close: a second run,
// in this process or another, waits for it (DefaultLockWait) and never
// interleaves its lines. Open the log before collecting the fleet so that a
// run waiting for the lock sees the stops of the run before it. A nil *Audit
// records nothing.
type Audit struct {
	mu    sync.Mutex
	path  string
	runID string
	f     *os.File
	lock  *flock.Flock
}

// OpenAudit opens (creating, mode 0640) the audit log at path for appending
// and takes its run lock, waiting up to DefaultLockWait for another run.
func OpenAudit(path string) (*Audit, error) {
	return OpenAuditWait(context.Background(), path, DefaultLockWait)
}

// OpenAuditWait is OpenAudit with a context and the longest wait for the lock.
func OpenAuditWait(ctx context.Context, path string, wait time.Duration) (*Audit, error) {
	if path == "" {
		return nil, errors.New("audit log: no path given")
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return nil, fmt.Errorf("audit log: %w", err)
		}
	}
	lockPath := path + ".lock"
	lk := flock.New(lockPath, flock.SetPermissions(0o640))
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	ok, err := lk.TryLockContext(wctx, lockRetry)
	if !ok || err != nil {
		_ = lk.Close()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("audit log: waiting for the lock %s: %w", lockPath, ctx.Err())
		}
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("audit log: locking %s: %w", lockPath, err)
		}
		return nil, fmt.Errorf("audit log: another idle-stop run still holds %s after %s; nothing was stopped", lockPath, wait)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o640)
	if err != nil {
		_ = lk.Close()
		return nil, fmt.Errorf("audit log: %w", err)
	}
	if err := endLine(f); err != nil {
		_ = f.Close()
		_ = lk.Close()
		return nil, fmt.Errorf("audit log %s: %w", path, err)
	}
	return &Audit{path: path, runID: NewRunID(time.Now()), f: f, lock: lk}, nil
}

// endLine ends a last line torn by a crash, so that the next line starts on
// its own.
func endLine(f *os.File) error {
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		return err
	}
	var last [1]byte
	if _, err := f.ReadAt(last[:], st.Size()-1); err != nil {
		return err
	}
	if last[0] == '\n' {
		return nil
	}
	if _, err := f.Write([]byte{'\n'}); err != nil {
		return err
	}
	return f.Sync()
}

// NewRunID returns a run id: the UTC time and 8 random hex digits, e.g.
// 20261130T120000Z-4f2a9c01.
func NewRunID(t time.Time) string {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return t.UTC().Format("20060102T150405.000000000Z")
	}
	return t.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

// RunID is the id on every line this run writes; "" for a nil Audit.
func (a *Audit) RunID() string {
	if a == nil {
		return ""
	}
	return a.runID
}

// Path is the log's path.
func (a *Audit) Path() string {
	if a == nil {
		return ""
	}
	return a.path
}

// decisionLine is one decision as logged.
type decisionLine struct {
	Type  string `json:"type"`
	RunID string `json:"runId"`
	Decision
}

// summaryLine is a run's summary as logged.
type summaryLine struct {
	Type string `json:"type"`
	Summary
}

// WriteDecision appends one decision line and syncs it to disk.
func (a *Audit) WriteDecision(d Decision) error {
	if a == nil {
		return nil
	}
	return a.write(decisionLine{Type: LineDecision, RunID: a.runID, Decision: d})
}

// WriteIntent appends the intent line of a stop about to be sent and syncs
// it to disk; send the stop only when it returns nil.
func (a *Audit) WriteIntent(d Decision, t time.Time) error {
	if a == nil {
		return nil
	}
	return a.write(Intent{Type: LineIntent, RunID: a.runID, Time: t, Provider: d.Provider, Account: d.Account,
		Region: d.Region, Profile: d.Scope.Profile, ResourceID: d.ResourceID, InstanceType: d.InstanceType, Service: d.Service})
}

// WriteOutcome appends a stop decision with its result, after the stop call
// returned (or was abandoned), and syncs it to disk.
func (a *Audit) WriteOutcome(d Decision) error {
	if a == nil {
		return nil
	}
	return a.write(decisionLine{Type: LineOutcome, RunID: a.runID, Decision: d})
}

// WriteReconciled appends a reconciled line (its Type and RunID set to the
// log's) and syncs it to disk.
func (a *Audit) WriteReconciled(r Reconciled) error {
	if a == nil {
		return nil
	}
	r.Type, r.RunID = LineReconciled, a.runID
	return a.write(r)
}

// WriteSummary appends the run's summary line (its RunID set to the log's)
// and syncs it to disk.
func (a *Audit) WriteSummary(s Summary) error {
	if a == nil {
		return nil
	}
	s.RunID = a.runID
	return a.write(summaryLine{Type: LineSummary, Summary: s})
}

func (a *Audit) write(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	b = append(b, '\n')
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.f == nil {
		return fmt.Errorf("audit log %s: already closed", a.path)
	}
	if _, err := a.f.Write(b); err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	if err := a.f.Sync(); err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	return nil
}

// Close closes the log and releases the run lock. It is safe to call twice.
func (a *Audit) Close() error {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.f == nil {
		return nil
	}
	err := a.f.Close()
	a.f = nil
	if uerr := a.lock.Close(); uerr != nil && err == nil { // Close unlocks
		err = uerr
	}
	if err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	return nil
}
