package idlestop

import (
	"fmt"
	"strings"
	"time"
)

// Policy is what makes a machine safe to stop. Keys are configured under
// idle_stop.* (mapstructure tags); durations are Go durations ("30m").
type Policy struct {
	// GPUPercent: a machine is busy when its busiest GPU reached this
	// utilization (%) at any sample of the window.
	GPUPercent float64 `json:"gpuPercent" mapstructure:"gpu_percent"`
	// Window is how far back the samples are judged.
	Window time.Duration `json:"window" mapstructure:"window"`
	// MinUptime spares machines launched less than this long ago.
	MinUptime time.Duration `json:"minUptime" mapstructure:"min_uptime"`
	// ExemptTag and ExemptValue: a machine tagged so is never stopped.
	ExemptTag   string `json:"exemptTag" mapstructure:"exempt_tag"`
	ExemptValue string `json:"exemptValue" mapstructure:"exempt_value"`
	// IncludeProduction allows stopping machines tagged Environment=Production.
	IncludeProduction bool `json:"includeProduction" mapstructure:"include_production"`
	// RequireOptIn stops only machines tagged AutoShutdown=true.
	RequireOptIn bool `json:"requireOptIn" mapstructure:"require_opt_in"`
	// MaxStops is the most machines one run may stop; more stop decisions
	// than this stop nothing (Cap).
	MaxStops int `json:"maxStops" mapstructure:"max_stops"`
	// Selectors are tags (key: value) a machine must all carry to be
	// considered; empty considers every machine.
	Selectors map[string]string `json:"selectors,omitempty" mapstructure:"selectors"`
	// StaleAfter: metrics whose latest sample is older than this before the
	// window's end are stale.
	StaleAfter time.Duration `json:"staleAfter" mapstructure:"stale_after"`
	// MinCoverage is the share (0–1) of the window that must have samples.
	MinCoverage float64 `json:"minCoverage" mapstructure:"min_coverage"`
}

// DefaultPolicy is the conservative policy idle-stop runs with by default.
func DefaultPolicy() Policy {
	return Policy{
		GPUPercent:  15,
		Window:      30 * time.Minute,
		MinUptime:   60 * time.Minute,
		ExemptTag:   "auto-shutdown-exempt",
		ExemptValue: "true",
		MaxStops:    10,
		StaleAfter:  10 * time.Minute,
		MinCoverage: 0.8,
	}
}

// Validate reports the first invalid setting, naming its idle_stop.* key.
func (p Policy) Validate() error {
	switch {
	case !(p.GPUPercent > 0 && p.GPUPercent <= 100):
		return fmt.Errorf("idle_stop.gpu_percent: %v is outside (0, 100]", p.GPUPercent)
	case p.Window <= 0:
		return fmt.Errorf("idle_stop.window: %v must be positive", p.Window)
	case p.MinUptime < 0:
		return fmt.Errorf("idle_stop.min_uptime: %v must not be negative", p.MinUptime)
	case strings.TrimSpace(p.ExemptTag) == "":
		return fmt.Errorf("idle_stop.exempt_tag: must not be empty")
	case strings.TrimSpace(p.ExemptValue) == "":
		return fmt.Errorf("idle_stop.exempt_value: must not be empty")
	case p.MaxStops < 1:
		return fmt.Errorf("idle_stop.max_stops: %d is below 1", p.MaxStops)
	case p.StaleAfter <= 0:
		return fmt.Errorf("idle_stop.stale_after: %v must be positive", p.StaleAfter)
	case !(p.MinCoverage >= 0 && p.MinCoverage <= 1):
		return fmt.Errorf("idle_stop.min_coverage: %v is outside 0–1", p.MinCoverage)
	}
	for k, v := range p.Selectors {
		if strings.TrimSpace(k) == "" {
			return fmt.Errorf("idle_stop.selectors: a selector has an empty tag key (value %q)", v)
		}
	}
	return nil
}
