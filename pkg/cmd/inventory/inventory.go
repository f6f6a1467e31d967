// Package inventory implements `gpufinops inventory`. STUB: being built.
package inventory

import (
	"github.com/spf13/cobra"

	"github.com/gpufinops/gpufinops/pkg/cmdutil"
)

// InventoryOptions are the inputs of the command.
type InventoryOptions struct{}

// NewCmdInventory builds the command; runF replaces the run function in tests.
func NewCmdInventory(f *cmdutil.Factory, runF func(*InventoryOptions) error) *cobra.Command {
	return &cobra.Command{Use: "inventory"}
}
