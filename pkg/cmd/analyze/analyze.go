// Package analyze implements `gpufinops analyze`. STUB: being built.
package analyze

import (
	"github.com/spf13/cobra"

	"github.com/gpufinops/gpufinops/pkg/cmdutil"
)

// AnalyzeOptions are the inputs of the command.
type AnalyzeOptions struct{}

// NewCmdAnalyze builds the command; runF replaces the run function in tests.
func NewCmdAnalyze(f *cmdutil.Factory, runF func(*AnalyzeOptions) error) *cobra.Command {
	return &cobra.Command{Use: "analyze"}
}
