// Package sharing plans GPU sharing: which lightly used single-GPU instances
// (development notebooks, light inference) can move onto one physical GPU by
// time-slicing or by MIG partitions, which instances that frees, and the
// NVIDIA GPU Operator configuration that sets it up.
//
// The package is pure: tenants and a policy in, a plan out (Build), and the
// plan's Kubernetes manifests (Manifests). TenantFrom and TenantsFromFleet turn
// fleet instances into tenants, so that the engine and the `sharing plan`
// command pick candidates the same way. docs/sharing.md explains the rules.
package sharing

import (
	"fmt"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/envelope"
	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// Mode is how tenants share a physical GPU.
type Mode string

// The sharing modes.
const (
	// TimeSlicing interleaves the tenants' kernels on a whole GPU (NVIDIA device
	// plugin replicas). No memory or fault isolation; works on every NVIDIA GPU.
	TimeSlicing Mode = "time-slicing"
	// MIG partitions a GPU into isolated instances with their own compute
	// slices and memory (A100, H100, H200, B200).
	MIG Mode = "mig"
)

// Policy holds the thresholds of sharing. docs/sharing.md documents each
// default; the engine nests it under policy.sharing.
type Policy struct {
	// DevelopmentMaxGPUPercent: a development instance is a tenant when its GPU
	// p95 (busiest GPU) is below this.
	DevelopmentMaxGPUPercent float64 `json:"developmentMaxGpuPercent" mapstructure:"development_max_gpu_percent"`
	// InferenceMaxGPUPercent: an inference instance is light, and a tenant,
	// when its GPU p95 is below this.
	InferenceMaxGPUPercent float64 `json:"inferenceMaxGpuPercent" mapstructure:"inference_max_gpu_percent"`
	// TargetGPUPercent caps the sum of the tenants' GPU p95 on one time-sliced GPU.
	TargetGPUPercent float64 `json:"targetGpuPercent" mapstructure:"target_gpu_percent"`
	// HeadroomPercent is added to every memory peak (both modes) and, for MIG,
	// to the GPU p95 a partition's compute share must cover.
	HeadroomPercent float64 `json:"headroomPercent" mapstructure:"headroom_percent"`
	// MaxReplicas caps the tenants on one time-sliced GPU.
	MaxReplicas int `json:"maxReplicas" mapstructure:"max_replicas"`
	// MIG partitions MIG-capable GPUs (the catalog lists MIG profiles) for
	// inference tenants; false time-slices them like the rest.
	MIG bool `json:"mig" mapstructure:"mig"`
}

// DefaultPolicy returns the documented defaults.
func DefaultPolicy() Policy {
	return Policy{
		DevelopmentMaxGPUPercent: 40,
		InferenceMaxGPUPercent:   30,
		TargetGPUPercent:         80,
		HeadroomPercent:          10,
		MaxReplicas:              8,
		MIG:                      true,
	}
}

// Validate reports the first out-of-range value, naming its config key.
func (p Policy) Validate() error {
	for _, c := range []struct {
		key string
		v   float64
	}{
		{"development_max_gpu_percent", p.DevelopmentMaxGPUPercent},
		{"inference_max_gpu_percent", p.InferenceMaxGPUPercent},
		{"target_gpu_percent", p.TargetGPUPercent},
		{"headroom_percent", p.HeadroomPercent},
	} {
		if c.v < 0 || c.v > 100 {
			return fmt.Errorf("policy.sharing.%s: %v is outside 0–100", c.key, c.v)
		}
	}
	if p.TargetGPUPercent == 0 {
		return fmt.Errorf("policy.sharing.target_gpu_percent: 0 leaves no room for any tenant")
	}
	if p.MaxReplicas < 2 || p.MaxReplicas > 64 {
		return fmt.Errorf("policy.sharing.max_replicas: %d is outside 2–64", p.MaxReplicas)
	}
	return nil
}

// Tenant is one instance whose work could move onto a shared GPU. Percentages
// are 0–100 of its one GPU; memory is GiB.
type Tenant struct {
	InstanceID   string             `json:"instanceId"`
	Provider     fleet.Provider     `json:"provider"`
	Region       string             `json:"region"`
	Account      string             `json:"account,omitempty"`
	InstanceType string             `json:"instanceType"`
	Workload     fleet.WorkloadType `json:"workload"`
	GPUModel     string             `json:"gpuModel"`
	// GPUCount is 1: only single-GPU instances are tenants.
	GPUCount int `json:"gpuCount"`
	// GPUMemoryGiB is the memory of its GPU.
	GPUMemoryGiB float64 `json:"gpuMemoryGiB"`
	// GPUP95 is the 95th percentile of GPU utilization.
	GPUP95 float64 `json:"gpuP95"`
	// MemoryPeakGiB is the GPU memory peak: max % × GPUMemoryGiB.
	MemoryPeakGiB float64 `json:"memoryPeakGiB"`
	// MonthlyCost is what it still costs after earlier recommendations: what
	// freeing it saves.
	MonthlyCost decimal.Decimal `json:"monthlyCost"`
	// MonthlyHours is how long it runs a month; 0 means all month.
	MonthlyHours float64 `json:"monthlyHours,omitempty"`
	// Schedule is its weekly schedule, when it runs on one.
	Schedule *fleet.Schedule `json:"schedule,omitempty"`
}

// Plan is the sharing proposed for a fleet: groups of shared GPUs and the
// instances they free.
type Plan struct {
	Groups []Group `json:"groups"`
	// Notes explain instances left out and the plan's limits.
	Notes []string `json:"notes"`
	// FreedMonthly is the monthly cost of every freed instance.
	FreedMonthly decimal.Decimal `json:"freedMonthlyCost"`
	// Policy is the policy the plan was built with; nil when none was built.
	Policy *Policy `json:"policy,omitempty"`
}

// Group is the shared GPUs of one mode and one instance type in one provider,
// region and account.
type Group struct {
	Mode         Mode           `json:"mode"`
	Provider     fleet.Provider `json:"provider"`
	Region       string         `json:"region"`
	Account      string         `json:"account,omitempty"`
	InstanceType string         `json:"instanceType"`
	GPUModel     string         `json:"gpuModel"`
	GPUMemoryGiB float64        `json:"gpuMemoryGiB"`
	// Replicas is the time-slicing replicas per GPU: the most tenants on any
	// host of the group.
	Replicas int `json:"replicas,omitempty"`
	// Config is the device plugin config key the hosts are labelled with
	// (nvidia.com/device-plugin.config); time-slicing only.
	Config string `json:"config,omitempty"`
	Hosts  []Host `json:"hosts"`
	// Freed lists the instances that can stop once their work moved.
	Freed []string `json:"freed"`
	// Moves says where each freed instance's work goes.
	Moves        []Move          `json:"moves"`
	FreedMonthly decimal.Decimal `json:"freedMonthlyCost"`
}

// Host is one instance that stays and whose GPU the tenants share.
type Host struct {
	InstanceID string `json:"instanceId"`
	// Tenants are the instances whose work runs on this GPU, the host first.
	Tenants []string `json:"tenants"`
	// Profiles maps each tenant to its MIG profile (mig only).
	Profiles map[string]string `json:"profiles,omitempty"`
	// MIGDevices counts the MIG profiles of the layout, e.g. {"3g.40gb": 1}.
	MIGDevices map[string]int `json:"migDevices,omitempty"`
	// MIGConfig is the mig-parted config name the host is labelled with
	// (nvidia.com/mig.config).
	MIGConfig string `json:"migConfig,omitempty"`
	// GPULoadPercent is the sum of the tenants' GPU p95.
	GPULoadPercent float64 `json:"gpuLoadPercent"`
	// GPUMemoryGiB is the sum of the tenants' GPU memory peaks.
	GPUMemoryGiB float64 `json:"gpuMemoryGiB"`
}

// Move is one freed instance: its work moves to Host and it stops, which
// saves its MonthlyCost.
type Move struct {
	InstanceID string `json:"instanceId"`
	Host       string `json:"host"`
	// Profile is the MIG profile it gets on the host (mig only).
	Profile     string          `json:"profile,omitempty"`
	MonthlyCost decimal.Decimal `json:"monthlyCost"`
}

// MoveOf finds the move of a freed instance and its group; false when the
// instance is not freed by the plan.
func (p Plan) MoveOf(instanceID string) (Group, Move, bool) {
	for _, g := range p.Groups {
		for _, m := range g.Moves {
			if m.InstanceID == instanceID {
				return g, m, true
			}
		}
	}
	return Group{}, Move{}, false
}

// Kind and SchemaVersion head the JSON document of a plan.
const (
	Kind          = "SharingPlan"
	SchemaVersion = "1.0"
)

// Document is the JSON document of `gpufinops sharing plan -o json`: the
// header, then the plan.
type Document struct {
	envelope.Header
	Plan
}

// NewDocument is p's JSON document.
func NewDocument(p Plan) Document { return Document{envelope.New(Kind, SchemaVersion), p} }
