// Package fleet holds the snapshot gpufinops decides on: GPU instances with their
// hardware, purchase option, running hours, tags, utilization and workload, and the
// file form (JSON or YAML, apiVersion gpufinops/v1, kind Fleet) that carries it.
//
// The package is the bottom of the import graph: it imports nothing of gpufinops.
package fleet

import (
	"time"

	"github.com/shopspring/decimal"
)

// APIVersion and Kind identify a fleet document.
const (
	APIVersion = "gpufinops/v1"
	Kind       = "Fleet"
)

// Provider names a cloud.
type Provider string

// The supported clouds.
const (
	AWS   Provider = "aws"
	Azure Provider = "azure"
	GCP   Provider = "gcp"
)

// Providers lists the supported clouds in display order.
var Providers = []Provider{AWS, Azure, GCP}

// Valid reports whether p is a supported cloud.
func (p Provider) Valid() bool {
	for _, q := range Providers {
		if p == q {
			return true
		}
	}
	return false
}

// Lifecycle is how an instance is bought.
type Lifecycle string

// The purchase options an instance can run under.
const (
	OnDemand  Lifecycle = "on-demand"
	Spot      Lifecycle = "spot"
	Committed Lifecycle = "committed"
)

// State is whether an instance is running (and billed) or stopped.
type State string

// The instance states gpufinops distinguishes.
const (
	Running State = "running"
	Stopped State = "stopped"
)

// WorkloadType says what an instance is used for; it drives spot and sharing advice.
type WorkloadType string

// The workload types the engine knows.
const (
	Training    WorkloadType = "training"
	FineTuning  WorkloadType = "fine-tuning"
	HPO         WorkloadType = "hpo"
	Inference   WorkloadType = "inference"
	Development WorkloadType = "development"
	Batch       WorkloadType = "batch"
)

// WorkloadTypes lists every valid workload type.
var WorkloadTypes = []WorkloadType{Training, FineTuning, HPO, Inference, Development, Batch}

// Fleet is one snapshot of GPU instances across clouds.
type Fleet struct {
	APIVersion string     `json:"apiVersion"`
	Kind       string     `json:"kind"`
	Metadata   Metadata   `json:"metadata,omitzero"`
	Instances  []Instance `json:"instances"`
	// Commitments are what the accounts have already bought; see Held.
	Commitments []Held `json:"commitments,omitempty"`
}

// Metadata describes where and when a snapshot was taken.
type Metadata struct {
	Name        string     `json:"name,omitempty"`
	Description string     `json:"description,omitempty"`
	GeneratedAt *time.Time `json:"generatedAt,omitempty"`
	Source      string     `json:"source,omitempty"`
	// Warnings are the parts of the scan that made the snapshot and failed;
	// a report of the snapshot repeats them.
	Warnings []ScanWarning `json:"warnings,omitempty"`
}

// Instance is one GPU virtual machine.
type Instance struct {
	ID           string            `json:"id"`
	Name         string            `json:"name,omitempty"`
	Provider     Provider          `json:"provider"`
	Account      string            `json:"account,omitempty"`
	Region       string            `json:"region"`
	Zone         string            `json:"zone,omitempty"`
	InstanceType string            `json:"instanceType"`
	GPU          GPU               `json:"gpu,omitzero"`
	VCPUs        float64           `json:"vcpus,omitempty"`
	MemoryGiB    float64           `json:"memoryGiB,omitempty"`
	Lifecycle    Lifecycle         `json:"lifecycle"`
	State        State             `json:"state"`
	LaunchTime   *time.Time        `json:"launchTime,omitempty"`
	Usage        Usage             `json:"usage,omitzero"`
	Tags         map[string]string `json:"tags,omitempty"`
	Utilization  *Utilization      `json:"utilization,omitempty"`
	Workload     *Workload         `json:"workload,omitempty"`
	// HourlyPrice overrides the catalog price (a negotiated or billed rate, USD per hour).
	HourlyPrice *decimal.Decimal `json:"hourlyPrice,omitempty"`
	// ManagedBy names the controller that owns the instance (an Auto Scaling
	// group, a node pool, a cluster service); filled from the tags when a
	// file leaves it out (DetectOwner).
	ManagedBy *ManagedBy `json:"managedBy,omitempty" jsonschema_description:"The controller that owns the instance (Auto Scaling group, node pool, cluster service); read from the tags when left out. An owned instance is never stopped directly."`
	// InstanceStoreGB is the local instance-store (NVMe) disk of the instance
	// type, in GB; its data is lost when the instance stops.
	InstanceStoreGB float64 `json:"instanceStoreGB,omitempty" jsonschema:"minimum=0" jsonschema_description:"Local instance-store (NVMe) disk of the instance type in GB; lost when the instance stops."`
	// Hibernation is true when the instance was launched with hibernation
	// enabled.
	Hibernation bool `json:"hibernation,omitempty" jsonschema_description:"The instance was launched with hibernation enabled."`
	// StoppedAllocated is true for an instance stopped from inside (or
	// powered off) that still holds its hardware, so it is billed as if
	// running (Azure's PowerState/stopped, not deallocated); its state is
	// running.
	StoppedAllocated bool `json:"stoppedAllocated,omitempty" jsonschema_description:"Stopped but still allocated (Azure PowerState/stopped): billed as if running; state stays running. Deallocating it ends compute billing."`
	// SpotInterruption is what the cloud does to a spot instance when it
	// reclaims it: SpotDeallocate (Azure eviction policy Deallocate),
	// SpotStop (GCP instanceTerminationAction STOP), SpotDelete or
	// SpotTerminate. A spot instance the cloud itself would stop can be
	// stopped; empty (unknown) or any other value keeps it protected.
	SpotInterruption SpotInterruption `json:"spotInterruption,omitempty"`
	// PlacementGroups name the cloud's placement constructs the instance
	// was launched into: an AWS placement group (Placement.GroupId, else
	// GroupName), an Azure proximity placement group (its resource ID), the
	// GCP placement and workload policies attached to it (every attached
	// policy when their kinds could not be read). Instances of one account
	// and region sharing one are hosts of one multi-host group.
	PlacementGroups []string `json:"placementGroups,omitempty"`
	// ResourcePolicies are the other policies attached to the instance,
	// which place nothing (a GCP instance or snapshot schedule): shared by
	// many instances, they make no group.
	ResourcePolicies []string `json:"resourcePolicies,omitempty"`
	// Commitment is the reservation or savings plan a committed instance
	// runs under, and what it pays.
	Commitment *Commitment `json:"commitment,omitempty"`
	// Managed is set on an item a managed AI service runs (an endpoint
	// deployment, notebook, Studio app, job or compute cluster) rather than
	// a virtual machine of the account's own.
	Managed *Managed `json:"managed,omitempty" jsonschema_description:"Set on an item a managed AI service (SageMaker, Vertex AI, Azure ML) runs and bills, rather than a virtual machine of the account's own; see docs/managed-ai.md."`
}

// SpotInterruption is what the cloud does to a spot instance it reclaims.
type SpotInterruption string

// The interruption behaviours a spot instance can have.
const (
	SpotDeallocate SpotInterruption = "deallocate"
	SpotStop       SpotInterruption = "stop"
	SpotDelete     SpotInterruption = "delete"
	SpotTerminate  SpotInterruption = "terminate"
)

// SpotInterruptions lists the valid spot interruption behaviours.
var SpotInterruptions = []SpotInterruption{SpotDeallocate, SpotStop, SpotDelete, SpotTerminate}

// Stoppable reports whether the behaviour keeps the machine's disks when
// the cloud reclaims it, so it can be stopped (deallocated) like on-demand.
func (s SpotInterruption) Stoppable() bool {
	return s == SpotDeallocate || s == SpotStop
}

// Commitment is the reservation or savings plan an instance (lifecycle
// committed) is covered by.
type Commitment struct {
	// ID names the fleet-level commitment (Held.ID) that covers the
	// instance, when known.
	ID string `json:"id,omitempty"`
	// Kind is what was bought, e.g. "compute-savings-plan",
	// "ec2-instance-savings-plan", "standard-reserved-instance",
	// "reservation" (Azure) or "resource-cud" (GCP).
	Kind string `json:"kind,omitempty"`
	// Term is "1y", "3y" or "5y".
	Term string `json:"term,omitempty"`
	// Payment is the payment option, e.g. "no-upfront".
	Payment string `json:"payment,omitempty"`
	// HourlyRate is the effective USD per instance-hour it pays (upfront
	// amortised); nil when unknown.
	HourlyRate *decimal.Decimal `json:"hourlyRate,omitempty"`
}

// CommitmentTerms are the terms a fleet commitment may have.
var CommitmentTerms = []string{"1y", "3y", "5y"}

// GPU describes the accelerators of an instance. Count may be fractional for
// partitioned GPUs (AWS g6f). MemoryGiB is per GPU.
type GPU struct {
	Model     string  `json:"model,omitempty"`
	Count     float64 `json:"count,omitempty"`
	MemoryGiB float64 `json:"memoryGiB,omitempty"`
}

// Usage says how many hours a month an instance runs. At most one field is set;
// none means a running instance runs all 730 hours of a month.
type Usage struct {
	HoursPerMonth *float64  `json:"hoursPerMonth,omitempty"`
	HoursPerWeek  *float64  `json:"hoursPerWeek,omitempty"`
	Schedule      *Schedule `json:"schedule,omitempty"`
}

// Schedule is a weekly on/off schedule.
type Schedule struct {
	Timezone string   `json:"timezone,omitempty"`
	Windows  []Window `json:"windows"`
}

// Window is a daily time range on some weekdays. Start and End are "HH:MM";
// End "24:00" means midnight at the end of the day.
type Window struct {
	Days  []string `json:"days"`
	Start string   `json:"start"`
	End   string   `json:"end"`
}

// Utilization is what an instance's GPUs and host did over a window, either as
// summary statistics or as raw samples from which the engine computes them.
// GPU values are of the busiest GPU at each instant.
type Utilization struct {
	Window    *TimeRange `json:"window,omitempty"`
	GPU       *Stats     `json:"gpu,omitempty"`
	GPUMemory *Stats     `json:"gpuMemory,omitempty"`
	CPU       *Stats     `json:"cpu,omitempty"`
	Memory    *Stats     `json:"memory,omitempty"`
	Samples   []Sample   `json:"samples,omitempty"`
	// Source says where the figures came from when a metrics source filled
	// them, e.g. "cloudwatch", "prometheus" or "nvidia-smi:gpu-1.csv".
	Source string `json:"source,omitempty"`
	// Coverage is the share (0–1) of the window with data; nil means unknown
	// (taken as complete).
	Coverage *float64 `json:"coverage,omitempty"`
}

// CoverageFraction is Coverage, or 1 when it is unknown.
func (u *Utilization) CoverageFraction() float64 {
	if u == nil || u.Coverage == nil {
		return 1
	}
	return *u.Coverage
}

// TimeRange is a half-open interval [Start, End).
type TimeRange struct {
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
}

// Hours is the length of the range in hours.
func (r TimeRange) Hours() float64 { return r.End.Sub(r.Start).Hours() }

// Stats are percentages (0–100) over a window.
type Stats struct {
	Avg float64 `json:"avg"`
	P95 float64 `json:"p95"`
	Max float64 `json:"max"`
}

// Sample is one timestamped reading. GPU and GPUMemory hold one value per GPU
// (a single number is accepted for one GPU); CPU and Memory are host percentages.
type Sample struct {
	Time      time.Time `json:"time"`
	GPU       PerGPU    `json:"gpu,omitempty"`
	GPUMemory PerGPU    `json:"gpuMemory,omitempty"`
	CPU       *float64  `json:"cpu,omitempty"`
	Memory    *float64  `json:"memory,omitempty"`
}

// Workload describes what runs on an instance.
type Workload struct {
	Type WorkloadType `json:"type"`
	// Model is the model's name, e.g. "llama-3.1-8b".
	Model string `json:"model,omitempty"`
	// ParamsBillions is the parameter count in billions.
	ParamsBillions float64 `json:"paramsBillions,omitempty"`
	// Precision is the weights' precision: fp32, fp16, bf16, int8 or int4.
	Precision string `json:"precision,omitempty"`
	// Checkpoints says whether the job saves and resumes from checkpoints.
	Checkpoints *bool `json:"checkpoints,omitempty"`
	// TokensPerSecond is the average of output tokens served per second over the
	// hours the instance ran in the utilization window (inference).
	TokensPerSecond float64 `json:"tokensPerSecond,omitempty" jsonschema:"minimum=0" jsonschema_description:"Average output tokens served per second while the instance ran (inference); for cost per token."`
	// RequestsPerSecond is the average of requests served per second over the
	// same hours (inference).
	RequestsPerSecond float64 `json:"requestsPerSecond,omitempty" jsonschema:"minimum=0" jsonschema_description:"Average requests served per second while the instance ran (inference); for cost per request."`
	// TrainingRun names the training run the instance works on; instances with
	// the same name are one run (e.g. the nodes of a multi-node job).
	TrainingRun string `json:"trainingRun,omitempty" jsonschema_description:"Name of the training run the instance works on; instances with the same name are one run."`
	// TrainingRunHours is how many billed hours the instance is expected to run
	// for the whole training run; it prices the run.
	TrainingRunHours float64 `json:"trainingRunHours,omitempty" jsonschema:"minimum=0" jsonschema_description:"Billed hours the instance is expected to run for the whole training run; prices the run. Needs trainingRun."`
}
