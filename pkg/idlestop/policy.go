package idlestop

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/gpufinops/gpufinops/pkg/protect"
)

// Policy is what makes a machine safe to stop. Keys are configured under
// idle_stop.* (mapstructure tags); durations are Go durations ("30m").
// Validate is the one place its limits are checked, whether a value came
// from a flag, the config file or the environment.
type Policy struct {
	// GPUPercent: a machine is busy when its busiest GPU reached this
	// utilization (%) at any sample of the window.
	GPUPercent float64 `json:"gpuPercent" mapstructure:"gpu_percent"`
	// GPUMemoryPercent: a machine whose GPU memory use went above this share
	// (%) of a GPU's memory at any sample holds a process (a loaded model)
	// and is in use.
	GPUMemoryPercent float64 `json:"gpuMemoryPercent" mapstructure:"gpu_memory_percent"`
	// CPUPercent: a machine whose host CPU p95 over the window is above this
	// (%) is busy on the host (data loading, a CPU job).
	CPUPercent float64 `json:"cpuPercent" mapstructure:"cpu_percent"`
	// Window is how far back the samples are judged.
	Window time.Duration `json:"window" mapstructure:"window"`
	// MinUptime spares machines launched less than this long ago.
	MinUptime time.Duration `json:"minUptime" mapstructure:"min_uptime"`
	// ExemptTag and ExemptValue: a machine carrying the exemption tag is
	// never stopped, whatever its value unless the value reads as false
	// (false, no, off, 0); ExemptValue is the value the docs and IAM policy
	// use.
	ExemptTag   string `json:"exemptTag" mapstructure:"exempt_tag"`
	ExemptValue string `json:"exemptValue" mapstructure:"exempt_value"`
	// IncludeProduction allows stopping production machines.
	IncludeProduction bool `json:"includeProduction" mapstructure:"include_production"`
	// ProductionTags are the tag keys that say a machine's environment;
	// they compare ignoring case, '-', '_' and spaces.
	ProductionTags []string `json:"productionTags" mapstructure:"production_tags"`
	// ProductionValues are the environment values that mean production
	// ('*' is a wildcard: prod-*). A value that is in neither list is
	// treated as production.
	ProductionValues []string `json:"productionValues" mapstructure:"production_values"`
	// NonProductionValues are the environment values that may be stopped.
	NonProductionValues []string `json:"nonProductionValues" mapstructure:"non_production_values"`
	// RequireOptIn stops only machines tagged AutoShutdown=true.
	RequireOptIn bool `json:"requireOptIn" mapstructure:"require_opt_in"`
	// ProtectInference leaves inference and serving machines (WorkloadType
	// tag or workload block) running.
	ProtectInference bool `json:"protectInference" mapstructure:"protect_inference"`
	// ProtectInstanceStore leaves machines with local instance-store disks
	// running; without it they are stopped with a warning that the disks'
	// data is lost.
	ProtectInstanceStore bool `json:"protectInstanceStore" mapstructure:"protect_instance_store"`
	// MaxStops is the most machines one run may stop; more stop decisions
	// than this stop nothing (Cap).
	MaxStops int `json:"maxStops" mapstructure:"max_stops"`
	// ExemptPhrases, ServingStacks and GroupTags add to the protection
	// signals' defaults (pkg/protect): phrases that exempt a machine in a
	// tag key or value, serving stacks that mark inference, and tag keys
	// whose value names a multi-host job.
	ExemptPhrases []string `json:"exemptPhrases,omitempty" mapstructure:"exempt_phrases"`
	ServingStacks []string `json:"servingStacks,omitempty" mapstructure:"serving_stacks"`
	GroupTags     []string `json:"groupTags,omitempty" mapstructure:"group_tags"`
	// Selectors are tags (key: value) a machine must all carry to be
	// considered; empty considers every machine.
	Selectors map[string]string `json:"selectors,omitempty" mapstructure:"selectors"`
	// StaleAfter: metrics whose latest sample is older than this before the
	// window's end are stale.
	StaleAfter time.Duration `json:"staleAfter" mapstructure:"stale_after"`
	// MinCoverage is the share (0–1) of the window that must have samples of
	// every GPU.
	MinCoverage float64 `json:"minCoverage" mapstructure:"min_coverage"`
}

// The limits Validate applies.
const (
	MinWindow     = 5 * time.Minute
	MaxWindow     = 24 * time.Hour
	MaxMinUptime  = 30 * 24 * time.Hour
	MaxStaleAfter = 24 * time.Hour
	// MaxMaxStops bounds the blast-radius cap itself.
	MaxMaxStops = 10000
)

// DefaultProductionTags, DefaultProductionValues and
// DefaultNonProductionValues are the environment spellings recognised by
// default.
var (
	DefaultProductionTags      = protect.DefaultProductionTags
	DefaultProductionValues    = protect.DefaultProductionValues
	DefaultNonProductionValues = protect.DefaultNonProductionValues
)

// DefaultPolicy is the conservative policy idle-stop runs with by default.
func DefaultPolicy() Policy {
	return Policy{
		GPUPercent:          15,
		GPUMemoryPercent:    20,
		CPUPercent:          25,
		Window:              30 * time.Minute,
		MinUptime:           60 * time.Minute,
		ExemptTag:           "auto-shutdown-exempt",
		ExemptValue:         "true",
		ProductionTags:      append([]string(nil), DefaultProductionTags...),
		ProductionValues:    append([]string(nil), DefaultProductionValues...),
		NonProductionValues: append([]string(nil), DefaultNonProductionValues...),
		ProtectInference:    true,
		MaxStops:            10,
		StaleAfter:          10 * time.Minute,
		MinCoverage:         0.8,
	}
}

// Validate reports the first invalid setting, naming its idle_stop.* key:
// numbers must be finite and in range, and no setting may make a protected
// machine stoppable (an exemption value that reads as false, a blank
// exemption tag, a blank production tag, a non-production value that is a
// production one). Zero GPU memory and CPU thresholds and empty production
// lists mean the defaults.
func (p Policy) Validate() error {
	percent := func(key string, v float64) error {
		if math.IsNaN(v) || math.IsInf(v, 0) || !(v > 0 && v <= 100) {
			return fmt.Errorf("idle_stop.%s: %v is outside (0, 100]", key, v)
		}
		return nil
	}
	if err := percent("gpu_percent", p.GPUPercent); err != nil {
		return err
	}
	// Zero (a policy written before these settings existed) is the default.
	if p.GPUMemoryPercent != 0 {
		if err := percent("gpu_memory_percent", p.GPUMemoryPercent); err != nil {
			return err
		}
	}
	if p.CPUPercent != 0 {
		if err := percent("cpu_percent", p.CPUPercent); err != nil {
			return err
		}
	}
	switch {
	case p.Window < MinWindow || p.Window > MaxWindow:
		return fmt.Errorf("idle_stop.window: %v is outside %v–%v", p.Window, fmtDur(MinWindow), fmtDur(MaxWindow))
	case p.MinUptime < 0:
		return fmt.Errorf("idle_stop.min_uptime: %v is negative", p.MinUptime)
	case p.MinUptime > MaxMinUptime:
		return fmt.Errorf("idle_stop.min_uptime: %v is outside 0–%v", p.MinUptime, fmtDur(MaxMinUptime))
	case strings.TrimSpace(p.ExemptTag) == "":
		return fmt.Errorf("idle_stop.exempt_tag: must not be empty (it would exempt nothing)")
	case strings.TrimSpace(p.ExemptValue) == "":
		return fmt.Errorf("idle_stop.exempt_value: must not be empty")
	case IsFalseValue(p.ExemptValue) || slices.Contains([]string{"disabled", "disable", "never", "none", "deny", "denied"}, protect.FoldValue(p.ExemptValue)):
		return fmt.Errorf("idle_stop.exempt_value: %q reads as false: exempted machines would be stoppable; use true", p.ExemptValue)
	case p.MaxStops < 0:
		return fmt.Errorf("idle_stop.max_stops: %d is negative", p.MaxStops)
	case p.MaxStops < 1 || p.MaxStops > MaxMaxStops:
		return fmt.Errorf("idle_stop.max_stops: %d is outside 1–%d", p.MaxStops, MaxMaxStops)
	case p.StaleAfter <= 0 || p.StaleAfter > MaxStaleAfter:
		return fmt.Errorf("idle_stop.stale_after: %v is outside (0, %v]", p.StaleAfter, fmtDur(MaxStaleAfter))
	case math.IsNaN(p.MinCoverage) || !(p.MinCoverage >= 0 && p.MinCoverage <= 1):
		return fmt.Errorf("idle_stop.min_coverage: %v is outside 0–1", p.MinCoverage)
	}
	if err := blankEntry("production_tags", p.ProductionTags); err != nil {
		return err
	}
	if err := blankEntry("production_values", p.ProductionValues); err != nil {
		return err
	}
	if err := blankEntry("non_production_values", p.NonProductionValues); err != nil {
		return err
	}
	if err := blankEntry("exempt_phrases", p.ExemptPhrases); err != nil {
		return err
	}
	if err := blankEntry("serving_stacks", p.ServingStacks); err != nil {
		return err
	}
	if err := blankEntry("group_tags", p.GroupTags); err != nil {
		return err
	}
	for _, v := range p.NonProductionValues {
		if strings.Contains(v, "*") {
			return fmt.Errorf("idle_stop.non_production_values: %q: wildcards are not allowed here (a pattern could let production machines stop)", v)
		}
		if protect.MatchAny(v, []string{"prod", "prd", "production", "live"}) || protect.MatchAny(v, literals(p.ProductionValues)) {
			return fmt.Errorf("idle_stop.non_production_values: %q is a production value", v)
		}
	}
	for _, k := range sortedKeys(p.Selectors) {
		if strings.TrimSpace(k) == "" {
			return fmt.Errorf("idle_stop.selectors: a selector has an empty tag key (value %q)", p.Selectors[k])
		}
	}
	return nil
}

// literals are the entries without wildcards.
func literals(list []string) []string {
	var out []string
	for _, s := range list {
		if !strings.Contains(s, "*") {
			out = append(out, s)
		}
	}
	return out
}

// effective fills what a policy leaves unset with the defaults: zero
// GPU memory and CPU thresholds, empty production tag and value lists (an
// empty list never turns production protection off; include_production
// does).
func (p Policy) effective() Policy {
	if p.GPUMemoryPercent == 0 {
		p.GPUMemoryPercent = DefaultPolicy().GPUMemoryPercent
	}
	if p.CPUPercent == 0 {
		p.CPUPercent = DefaultPolicy().CPUPercent
	}
	if len(p.ProductionTags) == 0 {
		p.ProductionTags = DefaultProductionTags
	}
	if len(p.ProductionValues) == 0 {
		p.ProductionValues = DefaultProductionValues
	}
	if len(p.NonProductionValues) == 0 {
		p.NonProductionValues = DefaultNonProductionValues
	}
	return p
}

func blankEntry(key string, list []string) error {
	for i, s := range list {
		if strings.TrimSpace(s) == "" {
			return fmt.Errorf("idle_stop.%s: entry %d is blank", key, i+1)
		}
	}
	return nil
}

func fmtDur(d time.Duration) string {
	switch {
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return d.String()
}
