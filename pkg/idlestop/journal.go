package idlestop

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers"
)

// The audit log's line types.
const (
	// LineDecision is a machine's final decision when no stop was sent
	// (skips, dry runs, stops not attempted).
	LineDecision = "decision"
	// LineIntent is written and synced right before a stop is sent.
	LineIntent = "intent"
	// LineOutcome is a stop decision with what the stop call answered,
	// written when the call returns.
	LineOutcome = "outcome"
	// LineReconciled says what became of an intent whose outcome was never
	// written or was unknown, as a later run found it in the cloud.
	LineReconciled = "reconciled"
	// LineSummary ends a run.
	LineSummary = "summary"
)

// The states a reconciled line reports.
const (
	// ReconciledStopped: the machine is stopped (or stopping).
	ReconciledStopped = "stopped"
	// ReconciledRunning: the machine is still running; the stop did not happen.
	ReconciledRunning = "still-running"
	// ReconciledGone: the machine no longer exists.
	ReconciledGone = "gone"
	// ReconciledUnknown: its state could not be read; the next run tries again.
	ReconciledUnknown = "unknown"
)

// Intent is an intent line: a stop about to be sent.
type Intent struct {
	Type         string         `json:"type"`
	RunID        string         `json:"runId"`
	Time         time.Time      `json:"time"`
	Provider     fleet.Provider `json:"provider"`
	Account      string         `json:"account,omitempty"`
	Region       string         `json:"region,omitempty"`
	Profile      string         `json:"profile,omitempty"`
	ResourceID   string         `json:"resourceId"`
	InstanceType string         `json:"instanceType,omitempty"`
	// Service is the managed AI service whose stop API the stop goes to
	// (a notebook's); empty for a VM.
	Service fleet.ManagedService `json:"service,omitempty"`
}

// Scope is where the intent's machine lives.
func (i Intent) Scope() providers.Scope {
	return providers.Scope{Provider: i.Provider, Account: i.Account, Region: i.Region, Profile: i.Profile}
}

// Reconciled is a reconciled line: what a later run found of an unsettled
// intent.
type Reconciled struct {
	Type  string    `json:"type"`
	RunID string    `json:"runId"`
	Time  time.Time `json:"time"`
	// IntentRunID and IntentTime name the intent reconciled.
	IntentRunID string         `json:"intentRunId"`
	IntentTime  time.Time      `json:"intentTime"`
	Provider    fleet.Provider `json:"provider"`
	Account     string         `json:"account,omitempty"`
	Region      string         `json:"region,omitempty"`
	ResourceID  string         `json:"resourceId"`
	// State is one of the Reconciled* constants; Observed is the cloud's
	// state as read, Error why it could not be read.
	State    string `json:"state"`
	Observed string `json:"observed,omitempty"`
	Error    string `json:"error,omitempty"`
}

// intentKey identifies an intent: the run and the machine.
type intentKey struct{ run, id string }

// Unsettled reads an audit log and returns, in log order, the intents that
// have no outcome, or an unknown one, and no reconciled line other than
// unknown. A line that is not JSON (a write torn by a crash) is skipped and
// counted in torn. A missing log has no intents.
func Unsettled(path string) (intents []Intent, torn int, err error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("audit log: %w", err)
	}
	defer f.Close()
	return unsettled(f, path)
}

func unsettled(r io.Reader, path string) ([]Intent, int, error) {
	open := map[intentKey]Intent{}
	var order []intentKey
	torn := 0
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		b := sc.Bytes()
		if len(b) == 0 {
			continue
		}
		var l struct {
			Type        string `json:"type"`
			RunID       string `json:"runId"`
			ResourceID  string `json:"resourceId"`
			Result      string `json:"result"`
			IntentRunID string `json:"intentRunId"`
			State       string `json:"state"`
		}
		if err := json.Unmarshal(b, &l); err != nil {
			torn++
			continue
		}
		switch l.Type {
		case LineIntent:
			var in Intent
			if err := json.Unmarshal(b, &in); err != nil {
				torn++
				continue
			}
			k := intentKey{in.RunID, in.ResourceID}
			if _, seen := open[k]; !seen {
				order = append(order, k)
			}
			open[k] = in
		case LineOutcome:
			if l.Result != ResultUnknown {
				delete(open, intentKey{l.RunID, l.ResourceID})
			}
		case LineReconciled:
			if l.State != ReconciledUnknown {
				delete(open, intentKey{l.IntentRunID, l.ResourceID})
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, torn, fmt.Errorf("audit log %s: %w", path, err)
	}
	var out []Intent
	for _, k := range order {
		if in, ok := open[k]; ok {
			out = append(out, in)
			delete(open, k)
		}
	}
	return out, torn, nil
}
