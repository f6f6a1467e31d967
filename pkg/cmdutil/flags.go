package cmdutil

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gpufinops/gpufinops/pkg/config"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
)

// OutputFlag is an -o/--output value restricted to a list of formats.
type OutputFlag struct {
	Value   string
	Allowed []string
}

// String implements pflag.Value.
func (o *OutputFlag) String() string { return o.Value }

// Set implements pflag.Value and rejects formats not in Allowed.
func (o *OutputFlag) Set(v string) error {
	for _, a := range o.Allowed {
		if v == a {
			o.Value = v
			return nil
		}
	}
	return fmt.Errorf("%q is not one of %s", v, strings.Join(o.Allowed, ", "))
}

// Type implements pflag.Value.
func (o *OutputFlag) Type() string { return "format" }

// AddOutputFlag adds -o/--output with the allowed formats; the first is the default.
func AddOutputFlag(cmd *cobra.Command, allowed ...string) *OutputFlag {
	o := &OutputFlag{Value: allowed[0], Allowed: allowed}
	cmd.Flags().VarP(o, "output", "o", "output format: "+strings.Join(allowed, "|"))
	_ = cmd.RegisterFlagCompletionFunc("output", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return allowed, cobra.ShellCompDirectiveNoFileComp
	})
	return o
}

// FleetFlags are the inputs shared by commands that read a fleet.
type FleetFlags struct {
	Path string
	Demo bool
}

// AddFleetFlags adds --fleet and --demo.
func AddFleetFlags(cmd *cobra.Command, f *FleetFlags) {
	cmd.Flags().StringVarP(&f.Path, "fleet", "f", "", "fleet snapshot to read (JSON or YAML; - for stdin)")
	cmd.Flags().BoolVar(&f.Demo, "demo", false, "use the embedded demo fleet")
	cmd.MarkFlagsMutuallyExclusive("fleet", "demo")
	_ = cmd.MarkFlagFilename("fleet", "json", "yaml", "yml")
}

// Validate requires exactly one input.
func (f *FleetFlags) Validate() error {
	if f.Path == "" && !f.Demo {
		return FlagErrorf("give a fleet: --fleet FILE or --demo")
	}
	return nil
}

// SourceName is what messages call the fleet: its path, "<stdin>" or
// "demo.yaml", the names the fleet loader (providers/file) uses too.
func (f *FleetFlags) SourceName() string {
	switch {
	case f.Demo:
		return "demo.yaml"
	case f.Path == "-":
		return "<stdin>"
	}
	return f.Path
}

// CompleteFleet fills the fleet's hardware from the catalog. Its errors are
// InputErrors with the fleet's name on every line (one line per instance).
func CompleteFleet(fl *fleet.Fleet, cat pricing.Catalog, in FleetFlags) error {
	if err := pricing.Complete(fl, cat); err != nil {
		lines := strings.Split(err.Error(), "\n")
		for i, l := range lines {
			lines[i] = in.SourceName() + ": " + l
		}
		return &InputError{Err: errors.New(strings.Join(lines, "\n"))}
	}
	return nil
}

// FleetInputs is what the fleet commands work on: the configuration, the
// catalog, and the fleet completed from the catalog.
type FleetInputs struct {
	Config  *config.Config
	Catalog pricing.Catalog
	Fleet   *fleet.Fleet
}

// ReadFleet reads the configuration, the catalog and the fleet named by in,
// and completes the fleet's hardware from the catalog.
func ReadFleet(cfg func() (*config.Config, error), cat func() (pricing.Catalog, error), read func(path string, demo bool) (*fleet.Fleet, error), in FleetFlags) (*FleetInputs, error) {
	c, err := cfg()
	if err != nil {
		return nil, err
	}
	k, err := cat()
	if err != nil {
		return nil, err
	}
	fl, err := read(in.Path, in.Demo)
	if err != nil {
		return nil, err
	}
	if err := CompleteFleet(fl, k, in); err != nil {
		return nil, err
	}
	return &FleetInputs{Config: c, Catalog: k, Fleet: fl}, nil
}
