package idlestop

import (
	"errors"
	"path/filepath"
)

// StateDir is where idle-stop keeps its state: $XDG_STATE_HOME/gpufinops, or
// ~/.local/state/gpufinops when XDG_STATE_HOME is unset. It is an error when
// neither that nor HOME is set.
func StateDir(lookup func(string) (string, bool)) (string, error) {
	if dir, ok := lookup("XDG_STATE_HOME"); ok && filepath.IsAbs(dir) {
		return filepath.Join(dir, "gpufinops"), nil
	}
	if home, ok := lookup("HOME"); ok && filepath.IsAbs(home) {
		return filepath.Join(home, ".local", "state", "gpufinops"), nil
	}
	return "", errors.New("neither $XDG_STATE_HOME nor $HOME is an absolute path")
}

// The default paths under StateDir.
const (
	// DefaultAuditFile is the audit log of --execute runs without --audit-log.
	DefaultAuditFile = "idle-stop.jsonl"
	// DefaultLockSubdir holds the target locks and the stop ledger.
	DefaultLockSubdir = "locks"
	// LedgerFile is the stop ledger's name in the lock directory.
	LedgerFile = "stops.jsonl"
)
