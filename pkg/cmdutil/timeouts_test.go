package cmdutil

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpufinops/gpufinops/pkg/config"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
)

// parseFleetFlags parses args as a command with the fleet flags would and
// validates them.
func parseFleetFlags(t *testing.T, args ...string) (FleetFlags, error) {
	t.Helper()
	var in FleetFlags
	cmd := &cobra.Command{Use: "x", RunE: func(*cobra.Command, []string) error { return in.Validate() }}
	AddFleetFlags(cmd, &in)
	cmd.SetArgs(args)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	return in, cmd.Execute()
}

// TestTimeoutFlagsReachTheScan: --connect-timeout, --request-timeout and
// --run-timeout replace timeouts.* in the configuration the scan (and so
// every adapter) is given; a flag not given keeps the configured value.
func TestTimeoutFlagsReachTheScan(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want config.TimeoutsConfig
	}{
		{nil, config.TimeoutsConfig{Connect: 7 * time.Second, Request: 20 * time.Second, Run: time.Hour}},
		{[]string{"--connect-timeout", "2s"}, config.TimeoutsConfig{Connect: 2 * time.Second, Request: 20 * time.Second, Run: time.Hour}},
		{[]string{"--connect-timeout=500ms", "--request-timeout", "1m"}, config.TimeoutsConfig{Connect: 500 * time.Millisecond, Request: time.Minute, Run: time.Hour}},
		{[]string{"--connect-timeout", "10m", "--run-timeout", "5m"}, config.TimeoutsConfig{Connect: 10 * time.Minute, Request: 20 * time.Second, Run: 5 * time.Minute}},
	} {
		in, err := parseFleetFlags(t, append([]string{"--provider", "aws"}, tc.args...)...)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		var got config.TimeoutsConfig
		scan := func(_ context.Context, _ FleetFlags, c *config.Config) (*Scan, error) {
			got = c.Timeouts
			return &Scan{Fleet: &fleet.Fleet{}}, nil
		}
		cfg := func() (*config.Config, error) {
			return &config.Config{Timeouts: config.TimeoutsConfig{Connect: 7 * time.Second, Request: 20 * time.Second, Run: time.Hour}}, nil
		}
		if _, err := ReadFleet(context.Background(), cfg, func() (pricing.Catalog, error) { return catalog.Embedded() }, nil, scan, in); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if got != tc.want {
			t.Errorf("%v: the scan got %+v, want %+v", tc.args, got, tc.want)
		}
	}
}

// TestConnectTimeoutFlagRefused: --connect-timeout outside timeouts.connect's
// range, not a duration, or without a live scan is a usage error (exit 2)
// naming the flag.
func TestConnectTimeoutFlagRefused(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--provider", "aws", "--connect-timeout", "0s"}, "--connect-timeout: 0s is outside"},
		{[]string{"--provider", "aws", "--connect-timeout", "-3s"}, "--connect-timeout: -3s is outside"},
		{[]string{"--provider", "gcp", "--connect-timeout", "11m"}, "--connect-timeout: 11m0s is outside"},
		{[]string{"--provider", "azure", "--connect-timeout", "1h"}, "--connect-timeout: 1h0m0s is outside"},
		{[]string{"--provider", "aws", "--connect-timeout", "10"}, `--connect-timeout`},
		{[]string{"--provider", "aws", "--connect-timeout", "fast"}, `--connect-timeout`},
		{[]string{"--demo", "--connect-timeout", "1s"}, "--connect-timeout needs --provider"},
		{[]string{"--fleet", "f.json", "--connect-timeout", "1s"}, "--connect-timeout needs --provider"},
	} {
		_, err := parseFleetFlags(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want an error with %q", tc.args, err, tc.want)
			continue
		}
		var fe *FlagError
		if !errors.As(err, &fe) && !strings.Contains(err.Error(), "invalid argument") {
			t.Errorf("%v: %T %v is not a usage error", tc.args, err, err)
		}
	}
}
