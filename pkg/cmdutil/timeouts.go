package cmdutil

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/gpufinops/gpufinops/pkg/config"
)

// ScanTimeouts are a live scan's --connect-timeout, --request-timeout and
// --run-timeout; each overrides its timeouts.* key when given.
type ScanTimeouts struct {
	Connect OptionalDuration
	Request OptionalDuration
	Run     OptionalDuration
}

// OptionalDuration is a duration flag that records whether it was given.
type OptionalDuration struct {
	D     time.Duration
	Given bool
}

// String implements pflag.Value.
func (d *OptionalDuration) String() string {
	if !d.Given {
		return ""
	}
	return d.D.String()
}

// Set implements pflag.Value.
func (d *OptionalDuration) Set(s string) error {
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	d.D, d.Given = v, true
	return nil
}

// Type implements pflag.Value.
func (d *OptionalDuration) Type() string { return "duration" }

// ConnectTimeoutHelp is the help of --connect-timeout on every command that
// has it.
const ConnectTimeoutHelp = "with --provider: bound opening a connection to the cloud (TCP and TLS); a connection not open in time is not retried (default timeouts.connect, 10s)"

func addScanTimeoutFlags(cmd *cobra.Command, t *ScanTimeouts) {
	cmd.Flags().Var(&t.Connect, "connect-timeout", ConnectTimeoutHelp)
	cmd.Flags().Var(&t.Request, "request-timeout", "with --provider: bound each request to the cloud, one attempt, not retried when it passes (default timeouts.request, 30s)")
	cmd.Flags().Var(&t.Run, "run-timeout", "with --provider: bound the whole scan, retries included; past it the report keeps the scopes read and exits 3 (default timeouts.run, 10m)")
}

// validate checks the ranges timeouts.* has in the configuration.
func (t *ScanTimeouts) validate(scanning bool) error {
	for _, d := range []struct {
		name, key string
		v         OptionalDuration
	}{
		{"connect-timeout", "timeouts.connect", t.Connect},
		{"request-timeout", "timeouts.request", t.Request},
		{"run-timeout", "timeouts.run", t.Run},
	} {
		if !d.v.Given {
			continue
		}
		if !scanning {
			return FlagErrorf("--%s needs --provider: it bounds a live scan", d.name)
		}
		if err := config.DurationRanges[d.key].Check(d.v.D); err != nil {
			return FlagErrorf("--%s: %v", d.name, err)
		}
	}
	return nil
}

// apply lays the flags given over the configuration's timeouts.
func (t *ScanTimeouts) apply(c *config.Config) {
	if t.Connect.Given {
		c.Timeouts.Connect = t.Connect.D
	}
	if t.Request.Given {
		c.Timeouts.Request = t.Request.D
	}
	if t.Run.Given {
		c.Timeouts.Run = t.Run.D
	}
}

// AddConnectTimeoutFlag adds --connect-timeout alone, to a command that
// talks to the clouds without a scan's other time limits (doctor); check it
// with ValidateConnectTimeout and lay it over the configuration with
// ApplyTimeouts.
func AddConnectTimeoutFlag(cmd *cobra.Command, f *FleetFlags) {
	cmd.Flags().Var(&f.Timeouts.Connect, "connect-timeout", ConnectTimeoutHelp)
}

// ValidateConnectTimeout checks --connect-timeout against timeouts.connect's
// range.
func (f *FleetFlags) ValidateConnectTimeout() error {
	t := ScanTimeouts{Connect: f.Timeouts.Connect}
	return t.validate(true)
}

// ApplyTimeouts lays the time-limit flags given over c.
func (f *FleetFlags) ApplyTimeouts(c *config.Config) { f.Timeouts.apply(c) }
