package cmdutil

import (
	"errors"
	"fmt"
	"testing"
)

func TestExitCodeFor(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want ExitCode
	}{
		{nil, ExitOK},
		{errors.New("boom"), ExitError},
		{FlagErrorf("bad flag"), ExitUsage},
		{fmt.Errorf("wrapped: %w", &InputError{Err: errors.New("bad file")}), ExitUsage},
		{&PartialError{Failures: []error{errors.New("eu-west-1: throttled")}}, ExitPartial},
		{&CredentialsError{Err: errors.New("no credentials")}, ExitCredentials},
		{&GateError{Reason: "savings>5000"}, ExitGate},
		{SilentError, ExitError},
		{&IncompleteError{Err: errors.New("the run took longer than --run-timeout 10m0s")}, ExitPartial},
		{fmt.Errorf("idle-stop: %w", &IncompleteError{Err: errors.New("interrupted by terminated")}), ExitPartial},
	} {
		if got := ExitCodeFor(tc.err); got != tc.want {
			t.Errorf("ExitCodeFor(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}
