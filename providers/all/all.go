// Package all registers every cloud adapter; only the command factory imports it.
package all

import (
	// Register the adapters.
	_ "github.com/gpufinops/gpufinops/providers/aws"
)
