// Package metrics is where GPU utilization comes from when it is not the
// cloud's own metric system: a Prometheus-compatible store holding NVIDIA DCGM
// exporter series, or nvidia-smi CSV files. A Source fills the utilization of
// a fleet's instances over a window, the way a provider's UtilizationReader
// does, and says how complete it is.
package metrics

import (
	"context"

	"github.com/gpufinops/gpufinops/pkg/fleet"

	// The Prometheus HTTP API client (being wired in).
	_ "github.com/prometheus/client_golang/api"
)

// Coverage is how much of the window an instance's utilization covers.
type Coverage struct {
	// Source names where the figures came from, e.g. "prometheus" or
	// "nvidia-smi:gpu-host-1.csv".
	Source string `json:"source"`
	// Fraction is the share of the window (0–1) with samples.
	Fraction float64 `json:"fraction"`
}

// Result is what a Source read.
type Result struct {
	// Coverage per instance ID; an instance the source has nothing for is absent.
	Coverage map[string]Coverage
	// Notes tell the user what did not match (a label mapping that matched
	// no series, an instance with no data).
	Notes []string
}

// Source fills Utilization (samples over the window, and its Window) of the
// instances it has data for, in place, and leaves the others untouched.
type Source interface {
	Name() string
	Read(ctx context.Context, instances []fleet.Instance, window fleet.TimeRange) (Result, error)
}
