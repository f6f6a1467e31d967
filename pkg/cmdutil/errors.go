// Package cmdutil holds what every command shares: the Factory, the typed errors
// and their exit codes, and flag helpers.
package cmdutil

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers"
)

// ExitCode is a documented process exit status (see `gpufinops help exit-codes`).
type ExitCode int

// The exit codes. They are stable: scripts depend on them.
const (
	ExitOK          ExitCode = 0
	ExitError       ExitCode = 1
	ExitUsage       ExitCode = 2
	ExitPartial     ExitCode = 3
	ExitCredentials ExitCode = 4
	ExitGate        ExitCode = 5
)

// FlagError is a bad flag or argument; the command's usage hint follows it.
type FlagError struct{ Err error }

func (e *FlagError) Error() string { return e.Err.Error() }
func (e *FlagError) Unwrap() error { return e.Err }

// FlagErrorf builds a FlagError.
func FlagErrorf(format string, args ...any) error {
	return &FlagError{Err: fmt.Errorf(format, args...)}
}

// InputError is invalid input data: a fleet file, a config file, a report.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// PartialError means some scopes failed; the output for the rest was written.
type PartialError struct{ Failures []error }

func (e *PartialError) Error() string {
	var scopes, other int
	var said []error
	for _, f := range e.Failures {
		var sf *ScanFailure
		switch {
		case !errors.As(f, &sf):
			said = append(said, f)
		case sf.Warning.Code == fleet.ScanScopeFailed:
			scopes++
		default:
			other++
		}
	}
	// A scan failure is a warning of its own, on stderr and in the report:
	// the error counts it rather than saying it again. Other failures are
	// said here.
	var parts []string
	if scopes > 0 {
		parts = append(parts, fmt.Sprintf("%d scope(s) could not be read", scopes))
	}
	if other > 0 {
		parts = append(parts, fmt.Sprintf("%d other warning(s)", other))
	}
	msg := "partial result: " + strings.Join(parts, " and ")
	switch {
	case len(said) > 0 && len(parts) > 0:
		return msg + " (see the warnings); " + ErrorText(errors.Join(said...))
	case len(said) > 0:
		return "partial result: " + ErrorText(errors.Join(said...))
	}
	return msg + " (see the warnings)"
}

// CredentialsError means credentials are missing or lack a permission.
type CredentialsError struct{ Err error }

func (e *CredentialsError) Error() string { return e.Err.Error() }
func (e *CredentialsError) Unwrap() error { return e.Err }

// GateError means a --fail-on gate tripped after the report was written.
type GateError struct{ Reason string }

func (e *GateError) Error() string { return "gate tripped: " + e.Reason }

// IncompleteError means the run ended early, at a time limit or on a
// signal; what was done was written and recorded (exit 3, like a partial
// result).
type IncompleteError struct{ Err error }

func (e *IncompleteError) Error() string { return e.Err.Error() }
func (e *IncompleteError) Unwrap() error { return e.Err }

// SilentError exits 1 with nothing more printed.
var SilentError = errors.New("SilentError")

// ExitCodeFor maps an error to its exit code. It is the only such mapping.
func ExitCodeFor(err error) ExitCode {
	var (
		flagErr    *FlagError
		inputErr   *InputError
		partialErr *PartialError
		credErr    *CredentialsError
		gateErr    *GateError
		incomplete *IncompleteError
	)
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &flagErr), errors.As(err, &inputErr):
		return ExitUsage
	case errors.As(err, &partialErr), errors.As(err, &incomplete):
		return ExitPartial
	case errors.As(err, &credErr):
		return ExitCredentials
	case errors.As(err, &gateErr):
		return ExitGate
	default:
		return ExitError
	}
}

// ErrorText is err's message as the command line prints it: an SDK's
// wrapping of a refused connection or a request timeout reduced to the
// operation and the cause (providers.Brief).
func ErrorText(err error) string { return providers.Brief(err) }
