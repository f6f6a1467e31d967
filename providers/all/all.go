// Package all registers every cloud; only the command factory imports it.
package all

import (
	// Register the clouds.
	_ "github.com/gpufinops/gpufinops/providers/aws"
	_ "github.com/gpufinops/gpufinops/providers/azure"
	_ "github.com/gpufinops/gpufinops/providers/gcp"
)
