// Package prices implements `gpufinops prices`. STUB: being built.
package prices

import (
	"github.com/spf13/cobra"

	"github.com/gpufinops/gpufinops/pkg/cmdutil"
)

// PricesOptions are the inputs of the command.
type PricesOptions struct{}

// NewCmdPrices builds the command; runF replaces the run function in tests.
func NewCmdPrices(f *cmdutil.Factory, runF func(*PricesOptions) error) *cobra.Command {
	return &cobra.Command{Use: "prices"}
}
