// Package cmdtest holds helpers for command tests: flag parsing and
// providers for the Factory.
package cmdtest

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/config"
	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/providers"
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

// Providers is a Factory.Providers that builds ps whatever the flags say,
// for command tests over providers/fake.
func Providers(ps ...providers.Provider) func(context.Context, cmdutil.FleetFlags, *config.Config) ([]providers.Provider, error) {
	return func(context.Context, cmdutil.FleetFlags, *config.Config) ([]providers.Provider, error) {
		return ps, nil
	}
}
