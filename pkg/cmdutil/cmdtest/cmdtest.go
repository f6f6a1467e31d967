// Package cmdtest holds helpers for testing commands' flag parsing.
package cmdtest

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/iostreams"
)

// Parse builds a command with newCmd on test streams, executes it with args
// and returns the options its run function received (nil when it was not
// called) with Execute's error.
func Parse[O any](t *testing.T, newCmd func(*cmdutil.Factory, func(*O) error) *cobra.Command, args []string) (*O, error) {
	t.Helper()
	ios, _, _, _ := iostreams.Test()
	var got *O
	cmd := newCmd(&cmdutil.Factory{IOStreams: ios}, func(o *O) error { got = o; return nil })
	cmd.SetArgs(args)
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	return got, cmd.Execute()
}

// CheckErr fails the test when err does not contain wantErr, or when wantErr
// is empty and err is not nil. It returns true when an error was wanted, so
// the caller stops there.
func CheckErr(t *testing.T, err error, wantErr string) bool {
	t.Helper()
	if wantErr != "" {
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("error %v, want %q", err, wantErr)
		}
		return true
	}
	if err != nil {
		t.Fatal(err)
	}
	return false
}
