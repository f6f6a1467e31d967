// Package report turns the engine's Plan into the versioned report users and
// machines read: a JSON envelope with types of its own (so the engine can change
// without changing the file format), printers for table, wide, json, csv and
// markdown, Load to read a report back, and Verify to check that it adds up.
//
// The report never computes money. It copies the engine's figures, rounded to
// cents, and Verify asserts that the summary is the sum of its parts.
package report

import (
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/governance"
	"github.com/gpufinops/gpufinops/pkg/recommend"
	"github.com/gpufinops/gpufinops/pricing"
)

// SchemaVersion is the version of the report format written by this build.
// Additive changes bump the minor; removals and renames bump the major.
//
// 1.1 added allocation, aiMetrics, tagAudit, sharing and commitments, the
// quantize, share and tagging kinds, and the quantize, sharing and governance
// policies. Fields added in 1.1 are pointers: nil in a 1.0 report read by Load.
//
// 1.2 added exchangeRate and exchangeRateSource: a report printed with
// --currency states the rate its amounts were converted at (see Convert).
//
// 1.3 added utilizationSource and utilizationCoverage per instance: where its
// utilization came from (a metrics source) and how much of the window it covers.
//
// 1.4 added scope, reason and instanceCount to warnings, the scope-failed and
// metrics-failed warning codes for the parts of a scan that failed, the
// utilizationSource "unknown" for an instance whose metrics source failed, and
// evidence.purchase on commitment recommendations: what to buy in the cloud's
// own unit, its hourly cost, discount, break-even and rate source.
//
// 1.5 added shortAction per recommendation: the action in a few words with
// the price, amount or schedule to act on, for tables.
//
// 1.6 added billing (the reconciliation with a FOCUS billing export given
// with --billing) and priceBasis per instance: whether its price is the
// bill's effective rate or the list price.
// 1.6 also added shard: a partial report of one slice of a scan's scopes
// (analyze --shard I/N), which `report merge` joins.
//
// 1.7 added what commitments the fleet already holds pay: per instance
// commitmentMonthlyCost, coveredShare and coveredBy, in the summary
// unusedCommitmentMonthlyCost (commitments no instance carries), and
// commitmentsHeld (each commitment's paid, used and unused cost, and the
// fleet's coverage), with the warning codes unused-commitment,
// stopped-committed and covered-no-saving.
//
// 1.8 added managed AI items (SageMaker, Vertex AI, Azure ML): managed per
// instance (service, kind, name, replicas), change and command per
// recommendation (the cloud-neutral change advised on a managed item and the
// cloud's command for it), the managed policy, and the warning code managed.
const SchemaVersion = "1.8"

// ToolName is the tool named in every report.
const ToolName = "gpufinops"

// SourceDemo is the source path recorded for the embedded demo fleet.
const SourceDemo = "demo"

// Meta is what a report needs besides the plan.
type Meta struct {
	// GeneratedAt is the report's time; pass the injected clock's now.
	GeneratedAt time.Time
	// ToolVersion is the gpufinops version that made the report.
	ToolVersion string
	// FleetName is the fleet's metadata.name.
	FleetName string
	// FleetSource is where the fleet came from: the file's path, "-" for
	// standard input, or SourceDemo for the embedded demo fleet.
	FleetSource string
	// Catalog lists the data sets the prices came from.
	Catalog []pricing.Source
	// ScanWarnings are the parts of the scan that failed (the fleet's
	// metadata.warnings); they lead the report's warnings.
	ScanWarnings []fleet.ScanWarning
	// Billing is the reconciliation with a billing export; nil without one.
	Billing *Billing
	// Shard marks a partial report; nil for a whole scan.
	Shard *Shard
}

// Report is the versioned report envelope.
type Report struct {
	// SchemaVersion is the report format's version, "major.minor".
	SchemaVersion string `json:"schemaVersion"`
	// GeneratedAt is when the report was made (RFC 3339, UTC).
	GeneratedAt time.Time `json:"generatedAt"`
	// Currency of every monthly amount in the report: USD, or the currency
	// given with --currency. Hourly prices carry their own currency.
	Currency string `json:"currency" jsonschema:"pattern=^[A-Z]{3}$"`
	// ExchangeRate is the units of Currency per USD the amounts were
	// converted at; absent for USD (since 1.2).
	ExchangeRate *Number `json:"exchangeRate,omitempty"`
	// ExchangeRateSource says where the rate came from: the --exchange-rate
	// flag, the config file or the environment (since 1.2).
	ExchangeRateSource string `json:"exchangeRateSource,omitempty"`
	// Tool is the program that wrote the report.
	Tool Tool `json:"tool"`
	// Source is the fleet the report is about.
	Source Source `json:"source"`
	// Shard marks a partial report: the slice of the scan's scopes it covers
	// (analyze --shard I/N); absent for a whole scan (since 1.6).
	Shard *Shard `json:"shard,omitempty"`
	// Catalog lists the price and hardware data sets used, with their dates.
	Catalog []CatalogSource `json:"catalog"`
	// Policy is the thresholds the rules applied.
	Policy Policy `json:"policy"`
	// Summary totals the report.
	Summary Summary `json:"summary"`
	// Recommendations are in the order the engine gave them.
	Recommendations []Recommendation `json:"recommendations"`
	// Instances lists every instance with its current and optimized cost.
	Instances []Instance `json:"instances"`
	// Warnings are what the engine could not decide or price.
	Warnings []Warning `json:"warnings"`
	// Allocation splits the monthly cost by team, project, workload type,
	// environment and provider (since 1.1).
	Allocation *Allocation `json:"allocation,omitempty"`
	// AIMetrics are the AI cost metrics: GPU efficiency, cost per busy
	// GPU-hour, per 1M output tokens, per 1,000 requests, per training run
	// (since 1.1).
	AIMetrics *AIMetrics `json:"aiMetrics,omitempty"`
	// TagAudit is the tag audit against the governance policy (since 1.1).
	TagAudit *TagAudit `json:"tagAudit,omitempty"`
	// Sharing is the GPU sharing plan behind the share recommendations (since 1.1).
	Sharing *Sharing `json:"sharing,omitempty"`
	// Commitments is the commitment plan behind the commitment
	// recommendations, without its hourly curves (since 1.1).
	Commitments *Commitments `json:"commitments,omitempty"`
	// CommitmentsHeld is what the commitments the fleet holds cover, pay
	// and leave unused (since 1.7).
	CommitmentsHeld *CommitmentsHeld `json:"commitmentsHeld,omitempty"`
	// Billing reconciles the costs with a FOCUS billing export given with
	// --billing (since 1.6).
	Billing *Billing `json:"billing,omitempty"`
}

// Shard is slice Index (from 1) of Count of a scan's scopes.
type Shard struct {
	Index int `json:"index" jsonschema:"minimum=1"`
	Count int `json:"count" jsonschema:"minimum=1"`
}

// Tool names the program that wrote a report.
type Tool struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Source names the fleet a report is about.
type Source struct {
	// Fleet is the fleet's name.
	Fleet string `json:"fleet"`
	// Path is the fleet file read, "-" for standard input, or "demo" for the
	// embedded demo fleet.
	Path string `json:"path"`
}

// CatalogSource is one data set behind the prices.
type CatalogSource struct {
	Name     string `json:"name"`
	Provider string `json:"provider,omitempty"`
	// AsOf is the date (YYYY-MM-DD) the data was taken.
	AsOf string `json:"asOf"`
}

// Policy is the thresholds the rules applied; docs/rules.md explains each.
// It mirrors the engine's policy in the report's own types, so that the
// engine's configuration can change without changing the report format.
type Policy struct {
	Idle      IdlePolicy      `json:"idle"`
	Rightsize RightsizePolicy `json:"rightsize"`
	// Quantize is the quantization thresholds (since 1.1).
	Quantize *QuantizePolicy `json:"quantize,omitempty"`
	// Sharing is the GPU sharing thresholds (since 1.1).
	Sharing    *SharingPolicy   `json:"sharing,omitempty"`
	Spot       SpotPolicy       `json:"spot"`
	Commitment CommitmentPolicy `json:"commitment"`
	// Governance is the tag policy the audit and the tagging
	// recommendations apply (since 1.1).
	Governance *GovernancePolicy `json:"governance,omitempty"`
	// Managed is the managed AI items' thresholds (since 1.8).
	Managed *ManagedPolicy `json:"managed,omitempty"`
	// MinWindowHours is the shortest utilization window that earns high confidence.
	MinWindowHours float64 `json:"minWindowHours"`
}

// ManagedPolicy is the managed AI items' thresholds (docs/managed-ai.md#rules).
type ManagedPolicy struct {
	// IdleMinHours: an endpoint with no request over at least this window is idle.
	IdleMinHours float64 `json:"idleMinHours"`
	// TargetGPUPercent: an endpoint's replicas are cut to reach this GPU p95.
	TargetGPUPercent float64 `json:"targetGpuPercent"`
	// ProductionMinReplicas: a production-tagged deployment keeps this many.
	ProductionMinReplicas int `json:"productionMinReplicas"`
	// IdleShutdownMinutes is the idle shutdown advised for notebooks.
	IdleShutdownMinutes float64 `json:"idleShutdownMinutes"`
	// ClusterScaleDownMinutes: a cluster scaling down slower gets a note.
	ClusterScaleDownMinutes float64 `json:"clusterScaleDownMinutes"`
	// JobMaxHours: a job on on-demand longer than this is advised managed spot.
	JobMaxHours float64 `json:"jobMaxHours"`
}

// IdlePolicy is the idle-stop and schedule thresholds.
type IdlePolicy struct {
	// GPUPercent: below this GPU p95 an instance is idle.
	GPUPercent float64 `json:"gpuPercent"`
	// ScheduleMaxBusyPercent: an always-on instance busy in at most this share
	// of hours gets a schedule.
	ScheduleMaxBusyPercent float64 `json:"scheduleMaxBusyPercent"`
	// ScheduleMinSavingsPercent: a schedule cuts at least this share of hours.
	ScheduleMinSavingsPercent float64 `json:"scheduleMinSavingsPercent"`
	// ScheduleMinDays is the fewest days of samples a schedule is derived from.
	ScheduleMinDays float64 `json:"scheduleMinDays"`
	// ScheduleBufferHours are added before and after each busy stretch.
	ScheduleBufferHours int `json:"scheduleBufferHours"`
}

// RightsizePolicy is the rightsizing thresholds.
type RightsizePolicy struct {
	// GPUPercent: GPU p95 below this allows a smaller GPU.
	GPUPercent float64 `json:"gpuPercent"`
	// GPUMemoryPercent: GPU memory p95 below this allows a smaller GPU.
	GPUMemoryPercent float64 `json:"gpuMemoryPercent"`
	// HeadroomPercent is added to the peaks a target must hold.
	HeadroomPercent float64 `json:"headroomPercent"`
	// HostCPUPercent: host CPU p95 below this (and host memory below its
	// threshold) allows a smaller host.
	HostCPUPercent float64 `json:"hostCpuPercent"`
	// HostMemoryPercent: host memory p95 below this allows a smaller host.
	HostMemoryPercent float64 `json:"hostMemoryPercent"`
	// MinSavingsPercent: a move saves at least this share of the cost.
	MinSavingsPercent float64 `json:"minSavingsPercent"`
}

// QuantizePolicy is the thresholds for serving models at a lower precision.
type QuantizePolicy struct {
	// TargetUtilPercent is the GPU load a quantized replica may be planned to.
	TargetUtilPercent float64 `json:"targetUtilPercent"`
	// MinReplicas is the fewest replicas kept for a model served by several.
	MinReplicas int `json:"minReplicas"`
	// Context is the tokens per sequence a replica's KV cache is sized for
	// when the fleet does not say.
	Context int `json:"context"`
	// Batch is the sequences decoded at once a replica's KV cache is sized
	// for when the fleet does not say.
	Batch int `json:"batch"`
	// MinSavingsPercent: quantizing saves at least this share of the replicas' cost.
	MinSavingsPercent float64 `json:"minSavingsPercent"`
}

// SharingPolicy is the GPU sharing thresholds (time-slicing and MIG).
type SharingPolicy struct {
	// DevelopmentMaxGPUPercent: a development instance with GPU p95 below
	// this may share a GPU.
	DevelopmentMaxGPUPercent float64 `json:"developmentMaxGpuPercent"`
	// InferenceMaxGPUPercent: an inference instance with GPU p95 below this
	// may share a GPU.
	InferenceMaxGPUPercent float64 `json:"inferenceMaxGpuPercent"`
	// TargetGPUPercent caps the sum of the tenants' GPU p95 on one
	// time-sliced GPU.
	TargetGPUPercent float64 `json:"targetGpuPercent"`
	// HeadroomPercent is added to every memory peak and, for MIG, to the GPU
	// p95 a partition must cover.
	HeadroomPercent float64 `json:"headroomPercent"`
	// MaxReplicas caps the tenants on one time-sliced GPU.
	MaxReplicas int `json:"maxReplicas"`
	// MIG partitions MIG-capable GPUs for inference tenants; false
	// time-slices them.
	MIG bool `json:"mig"`
}

// GovernancePolicy is the tag policy: the tags every GPU instance must carry
// and the values some of them may take.
type GovernancePolicy struct {
	// RequiredTags must be on every instance with a non-empty value; ModelName
	// only for the workloads in ModelNameWorkloads.
	RequiredTags []string `json:"requiredTags"`
	// AllowedValues restricts the values of some tags.
	AllowedValues []AllowedTagValues `json:"allowedValues"`
	// ModelNameWorkloads are the workload types that must name their model.
	ModelNameWorkloads []string `json:"modelNameWorkloads"`
}

// AllowedTagValues lists the values one tag may take.
type AllowedTagValues struct {
	Tag    string   `json:"tag"`
	Values []string `json:"values"`
}

// SpotPolicy is the spot thresholds.
type SpotPolicy struct {
	// Workloads lists the workload types that may move to spot.
	Workloads []string `json:"workloads"`
	// MaxBandIndex: spot is advised up to this interruption band (0–4).
	MaxBandIndex int `json:"maxBandIndex"`
	// CheckpointWriteGBps sizes checkpoint write time from the model size.
	CheckpointWriteGBps float64 `json:"checkpointWriteGBps"`
	// CheckpointBytesPerParam is the checkpoint size per model parameter.
	CheckpointBytesPerParam float64 `json:"checkpointBytesPerParam"`
	// CheckpointMinutes is the write time assumed when the model size is unknown.
	CheckpointMinutes float64 `json:"checkpointMinutes"`
	// RestartMinutes is the time to resume after an interruption.
	RestartMinutes float64 `json:"restartMinutes"`
	// InterruptionsPerMonth is assumed where no interruption rate is published.
	InterruptionsPerMonth float64 `json:"interruptionsPerMonth"`
}

// CommitmentPolicy is the commitment thresholds.
type CommitmentPolicy struct {
	// Term is the term recommended.
	Term string `json:"term" jsonschema:"enum=1y,enum=3y"`
	// Discounts1y maps provider to the 1-year discount (0.35 = 35 % off).
	Discounts1y map[string]float64 `json:"discounts1y"`
	// Discounts3y maps provider to the 3-year discount.
	Discounts3y map[string]float64 `json:"discounts3y"`
	// Names maps provider to what its commitment is called, e.g. "Compute
	// Savings Plan" (since 1.1).
	Names map[string]string `json:"names,omitempty"`
	// Plans maps provider to the commitment kind bought, Payments to its
	// payment option (since 1.4).
	Plans    map[string]string `json:"plans,omitempty"`
	Payments map[string]string `json:"payments,omitempty"`
	// TrendPercent is the usage change that sizes a commitment on the last
	// week (since 1.4).
	TrendPercent float64 `json:"trendPercent,omitempty"`
}

// Summary totals a report. CurrentMonthlyCost is the sum of the priced
// instances' costs, MonthlySavings the sum of the recommendations' savings, and
// OptimizedMonthlyCost their difference.
type Summary struct {
	// CurrentMonthlyCost is what the priced instances cost a month now.
	CurrentMonthlyCost Money `json:"currentMonthlyCost"`
	// OptimizedMonthlyCost is the monthly cost after every recommendation.
	OptimizedMonthlyCost Money `json:"optimizedMonthlyCost"`
	// MonthlySavings is current minus optimized.
	MonthlySavings Money `json:"monthlySavings"`
	// SavingsPercent is savings / current × 100, rounded to one decimal.
	SavingsPercent Number `json:"savingsPercent"`
	// InstanceCount counts every instance, priced or not.
	InstanceCount int `json:"instanceCount"`
	// GPUCount counts GPUs; partitions of a GPU count as fractions.
	GPUCount float64 `json:"gpuCount"`
	// UnpricedCount counts instances without a price, left out of the costs.
	UnpricedCount int `json:"unpricedCount"`
	// SavingsByKind maps every recommendation kind to its monthly savings.
	SavingsByKind map[string]Money `json:"savingsByKind"`
	// UnusedCommitmentMonthlyCost is what commitments that no instance
	// carries cost a month, unused; it is part of the current and optimized
	// costs (since 1.7).
	UnusedCommitmentMonthlyCost *Money `json:"unusedCommitmentMonthlyCost,omitempty"`
}

// Recommendation is one change to one instance, with its price and evidence.
type Recommendation struct {
	// ID is stable across runs on the same fleet.
	ID         string `json:"id"`
	ResourceID string `json:"resourceId"`
	Provider   string `json:"provider" jsonschema:"enum=aws,enum=azure,enum=gcp"`
	Account    string `json:"account,omitempty"`
	Region     string `json:"region"`
	// InstanceType is the instance's type in the fleet, before any change.
	InstanceType string `json:"instanceType"`
	// Kind is the strategy that made the recommendation.
	Kind string `json:"kind"`
	// Action says what to do, in a sentence.
	Action string `json:"action"`
	// ShortAction says what to do in a few words with the figure to act on,
	// e.g. "spot $7.25/h, ckpt 17 min" (since 1.5); the table shows it.
	ShortAction string `json:"shortAction,omitempty"`
	// Target is the proposed instance type, purchase option or schedule.
	Target string `json:"target,omitempty"`
	// CurrentMonthlyCost is the cost before this change, after any earlier
	// change to the same instance (see after).
	CurrentMonthlyCost Money `json:"currentMonthlyCost"`
	// ProjectedMonthlyCost is the cost after this change.
	ProjectedMonthlyCost Money `json:"projectedMonthlyCost"`
	// MonthlySavings is current minus projected.
	MonthlySavings Money `json:"monthlySavings"`
	// Confidence grades the data the recommendation rests on.
	Confidence string `json:"confidence" jsonschema:"enum=low,enum=medium,enum=high"`
	// Risk grades what can go wrong.
	Risk string `json:"risk" jsonschema:"enum=low,enum=medium,enum=high"`
	// RiskNotes say what can go wrong.
	RiskNotes []string `json:"riskNotes"`
	// Rationale says why, in a sentence or two.
	Rationale string `json:"rationale"`
	// Evidence is how the figures were computed.
	Evidence Evidence `json:"evidence"`
	// After is the ID of the recommendation this one is priced after.
	After string `json:"after,omitempty"`
	// Protected is set when the protection idle-stop applies holds a stop,
	// schedule or deallocation back: why, and what releasing it would save.
	Protected *Protected `json:"protected,omitempty"`
	// Change is the change advised on a managed AI item, named the same on
	// every cloud (since 1.8).
	Change *Change `json:"change,omitempty"`
	// Command is the cloud's command that makes the change; absent when
	// none is known or the item is protected (since 1.8).
	Command string `json:"command,omitempty"`
}

// Change is a change advised on a managed AI item (since 1.8).
type Change struct {
	// Action is delete-endpoint, scale-to-zero, set-replicas,
	// set-min-replicas, change-instance-type, stop-notebook,
	// enable-idle-shutdown or use-managed-spot.
	Action string `json:"action" jsonschema:"enum=delete-endpoint,enum=scale-to-zero,enum=set-replicas,enum=set-min-replicas,enum=change-instance-type,enum=stop-notebook,enum=enable-idle-shutdown,enum=use-managed-spot"`
	// Replicas is the count set-replicas and set-min-replicas set.
	Replicas *int `json:"replicas,omitempty"`
	// InstanceType is the type change-instance-type moves to.
	InstanceType string `json:"instanceType,omitempty"`
	// IdleShutdownMinutes is the idle shutdown enable-idle-shutdown sets.
	IdleShutdownMinutes *float64 `json:"idleShutdownMinutes,omitempty"`
}

// Managed says what managed AI item an instance is (since 1.8).
type Managed struct {
	// Service is sagemaker, vertex-ai or azure-ml.
	Service string `json:"service" jsonschema:"enum=sagemaker,enum=vertex-ai,enum=azure-ml"`
	// Kind is endpoint, notebook, studio-app, training-job, processing-job
	// or compute-cluster.
	Kind string `json:"kind" jsonschema:"enum=endpoint,enum=notebook,enum=studio-app,enum=training-job,enum=processing-job,enum=compute-cluster"`
	// Name is the item's name (endpoint/deployment, notebook, app, job,
	// cluster).
	Name string `json:"name,omitempty"`
	// Replicas are the replicas or nodes billing now.
	Replicas int `json:"replicas"`
}

// Protected says why a machine is protected from a stop, schedule or
// deallocation (the same decision idle-stop makes), and what releasing it
// would save.
type Protected struct {
	// Reason is the protection's code, as idle-stop reports it: exempt,
	// opted-out, not-opted-in, production, spot-not-stoppable, inference,
	// gpu-memory-held, cpu-busy or multi-host.
	Reason string `json:"reason"`
	// Message says why in a sentence.
	Message string `json:"message"`
	// Tag is the tag that says so (key=value), when one does.
	Tag string `json:"tag,omitempty"`
	// PotentialMonthlySavings is what the advice would save if the
	// protection were released.
	PotentialMonthlySavings Money `json:"potentialMonthlySavings"`
	// Counted is true when the saving is counted in the report anyway
	// (analyze --include-protected).
	Counted bool `json:"counted"`
}

// Evidence is how a recommendation was computed.
type Evidence struct {
	// Metrics are the observed figures (percent, hours), e.g. "gpuUtilP95".
	Metrics map[string]float64 `json:"metrics"`
	// Thresholds are the policy values the metrics were compared with.
	Thresholds map[string]float64 `json:"thresholds"`
	// Prices are the hourly prices used.
	Prices []Price `json:"prices"`
	// MonthlyHoursBefore is the billed hours a month before the change.
	MonthlyHoursBefore float64 `json:"monthlyHoursBefore"`
	// MonthlyHoursAfter is the billed hours a month after the change.
	MonthlyHoursAfter float64 `json:"monthlyHoursAfter"`
	// Formula states the arithmetic in words.
	Formula string `json:"formula"`
	// Notes carry anything else worth knowing.
	Notes []string `json:"notes"`
	// Purchase is what a commitment recommendation buys (1.4); absent on
	// other kinds.
	Purchase *Purchase `json:"purchase,omitempty"`
}

// Purchase is a commitment to buy, in the cloud's own unit. Hourly figures
// are USD, like prices.
type Purchase struct {
	// Kind is the commitment kind, e.g. compute-savings-plan, reservation,
	// resource-cud; Name is its label.
	Kind    string `json:"kind"`
	Name    string `json:"name"`
	Term    string `json:"term"`
	Payment string `json:"payment,omitempty"`
	Region  string `json:"region"`
	// Scope is the family whose usage it covers.
	Scope string `json:"scope"`
	// CommitmentHourly is what the commitment costs per hour, used or not
	// (a Savings Plan's hourly commitment as AWS defines it).
	CommitmentHourly Number `json:"commitmentHourly"`
	// CoversOnDemandHourly is the on-demand spend per hour it covers.
	CoversOnDemandHourly Number `json:"coversOnDemandHourly"`
	// DiscountPercent is the discount off on-demand the saving uses.
	DiscountPercent float64 `json:"discountPercent"`
	// BreakEvenUtilizationPercent: it pays when used more than this share of
	// its hours.
	BreakEvenUtilizationPercent float64 `json:"breakEvenUtilizationPercent"`
	// Quantity of InstanceType, for commitments bought as whole instances,
	// and the resources that adds up to (vCPUs, memory, GPUs).
	Quantity     int     `json:"quantity,omitempty"`
	InstanceType string  `json:"instanceType,omitempty"`
	VCPUs        float64 `json:"vcpus,omitempty"`
	MemoryGiB    float64 `json:"memoryGiB,omitempty"`
	GPUs         float64 `json:"gpus,omitempty"`
	GPUModel     string  `json:"gpuModel,omitempty"`
	// RateSource, RateOrigin (file:line or "live") and RateAsOf say where the
	// rate comes from.
	RateSource string `json:"rateSource"`
	RateOrigin string `json:"rateOrigin,omitempty"`
	RateAsOf   string `json:"rateAsOf,omitempty"`
	// Live is true for a rate read from the cloud on this run.
	Live bool `json:"live,omitempty"`
	// Approximation says the rate stands in for the kind bought.
	Approximation string `json:"approximation,omitempty"`
}

func newPurchase(p *recommend.Purchase) *Purchase {
	if p == nil {
		return nil
	}
	return &Purchase{
		Kind: p.Kind, Name: p.Name, Term: p.Term, Payment: p.Payment, Region: p.Region, Scope: p.Scope,
		CommitmentHourly: NewNumber(p.CommitmentHourly), CoversOnDemandHourly: NewNumber(p.CoversOnDemandHourly),
		DiscountPercent: p.DiscountPercent, BreakEvenUtilizationPercent: p.BreakEvenUtilizationPercent,
		Quantity: p.Quantity, InstanceType: p.InstanceType, VCPUs: p.VCPUs, MemoryGiB: p.MemoryGiB, GPUs: p.GPUs, GPUModel: p.GPUModel,
		RateSource: p.RateSource, RateOrigin: p.RateOrigin, RateAsOf: p.RateAsOf, Live: p.Live, Approximation: p.Approximation,
	}
}

// Price is an hourly price and where it came from.
type Price struct {
	Provider     string `json:"provider" jsonschema:"enum=aws,enum=azure,enum=gcp"`
	Region       string `json:"region"`
	InstanceType string `json:"instanceType"`
	// Option is the purchase option, e.g. "on-demand" or "spot".
	Option string `json:"option"`
	// Hourly is the price per unit at full precision.
	Hourly   Number `json:"hourly"`
	Currency string `json:"currency"`
	// Unit is what one price buys, "hour" (one instance-hour).
	Unit string `json:"unit"`
	// Zone is the zone the price was read in, when the source is per zone.
	Zone string `json:"zone,omitempty"`
	// Source names the data set.
	Source string `json:"source"`
	// AsOf is the date (YYYY-MM-DD) the price was taken.
	AsOf string `json:"asOf"`
}

// Instance is one instance with its current and optimized monthly cost.
// The costs are absent when the instance has no price.
type Instance struct {
	ResourceID   string `json:"resourceId"`
	Provider     string `json:"provider" jsonschema:"enum=aws,enum=azure,enum=gcp"`
	Account      string `json:"account,omitempty"`
	Region       string `json:"region"`
	InstanceType string `json:"instanceType"`
	GPUModel     string `json:"gpuModel,omitempty"`
	// GPUCount may be fractional for partitioned GPUs.
	GPUCount float64 `json:"gpuCount"`
	// Lifecycle is how the instance is bought: on-demand, spot or committed.
	Lifecycle string `json:"lifecycle"`
	// State is running or stopped.
	State string `json:"state"`
	// MonthlyHours is the billed hours a month.
	MonthlyHours float64 `json:"monthlyHours"`
	// Priced is false when no price was found; the costs are then absent.
	Priced bool `json:"priced"`
	// UtilizationSource says where the instance's utilization came from, e.g.
	// prometheus or nvidia-smi:gpu-1.csv (since 1.3).
	UtilizationSource string `json:"utilizationSource,omitempty"`
	// UtilizationCoverage is the share (0–1) of the window with utilization
	// data, when the source says (since 1.3).
	UtilizationCoverage *float64 `json:"utilizationCoverage,omitempty"`
	// GPUUtilP95 is the 95th percentile of the busiest GPU's utilization
	// over the window, percent, the figure the rules decide on; absent
	// without GPU data (since 1.4).
	GPUUtilP95 *float64 `json:"gpuUtilP95,omitempty"`
	// HourlyPrice is the price the cost was computed from.
	HourlyPrice *Price `json:"hourlyPrice,omitempty"`
	// PriceBasis is "bill" when the price is the effective rate a billing
	// export gave (--billing), "list" when the bill had none for the
	// instance; absent without a bill (since 1.6).
	PriceBasis string `json:"priceBasis,omitempty"`
	// CommitmentMonthlyCost is the part of its cost the commitments covering
	// it charge, paid whatever is done with it; CoveredShare the part (0–1)
	// of its hours they cover; CoveredBy their IDs, "implicit" for a
	// commitment it names without one in the fleet (since 1.7).
	CommitmentMonthlyCost *Money   `json:"commitmentMonthlyCost,omitempty"`
	CoveredShare          float64  `json:"coveredShare,omitempty"`
	CoveredBy             []string `json:"coveredBy,omitempty"`
	// CurrentMonthlyCost is what the instance costs a month now.
	CurrentMonthlyCost *Money `json:"currentMonthlyCost,omitempty"`
	// OptimizedMonthlyCost is the cost after every recommendation for it.
	OptimizedMonthlyCost *Money `json:"optimizedMonthlyCost,omitempty"`
	// MonthlySavings is current minus optimized.
	MonthlySavings *Money `json:"monthlySavings,omitempty"`
	// Managed names the managed AI item the instance is; absent for a
	// virtual machine (since 1.8).
	Managed *Managed `json:"managed,omitempty"`
}

// Warning is something the engine could not decide or price, or a part of
// the scan that failed.
type Warning struct {
	ResourceID string `json:"resourceId,omitempty"`
	// Code is stable and machine-readable, e.g. "unpriced" or "scope-failed".
	Code    string `json:"code"`
	Message string `json:"message"`
	// Scope is the part of the scan that failed, for scope-failed and
	// metrics-failed (since 1.4).
	Scope *WarningScope `json:"scope,omitempty"`
	// Reason is the error the scope failed with, on one line (since 1.4).
	Reason string `json:"reason,omitempty"`
	// InstanceCount counts the instances a metrics-failed warning left with
	// utilization unknown (since 1.4), an unknown-type warning kept without
	// the facts it names, or a stale-price warning's prices priced (since
	// 1.7).
	InstanceCount int `json:"instanceCount,omitempty"`
	// StalePrice is the prices a stale-price warning is about (since 1.7):
	// the warnings of one data set, kind and date are summarised by it.
	StalePrice *StalePrice `json:"stalePrice,omitempty"`
}

// StalePrice is the prices a stale-price warning is about.
type StalePrice struct {
	// Kind is the prices' kind: list (on-demand), spot or commitment.
	Kind string `json:"kind" jsonschema:"enum=list,enum=spot,enum=commitment"`
	// Source is the data set the prices come from, one name for all its
	// rates (a commitment data set reads "… rates (data set)").
	Source string `json:"source"`
	// AsOf is the prices' date, YYYY-MM-DD.
	AsOf string `json:"asOf"`
	// AgeDays is how many days old the prices are on the report's date.
	AgeDays int `json:"ageDays"`
	// LimitDays is the policy's limit on their age, in days.
	LimitDays int `json:"limitDays"`
	// PolicyKey is the policy setting that sets the limit.
	PolicyKey string `json:"policyKey"`
}

// WarningScope names a part of a scan: a provider's account and region, and
// the metrics source when that is what failed.
type WarningScope struct {
	Provider string `json:"provider,omitempty" jsonschema:"enum=aws,enum=azure,enum=gcp"`
	Account  string `json:"account,omitempty"`
	Region   string `json:"region,omitempty"`
	// Source is the metrics source: cloudwatch, prometheus, nvidia-smi.
	Source string `json:"source,omitempty"`
}

// String is "aws:123456789012/us-east-1", or the source for a metrics
// source of the whole fleet.
func (s *WarningScope) String() string {
	if s == nil {
		return ""
	}
	return fleet.ScanWarning{Provider: fleet.Provider(s.Provider), Account: s.Account, Region: s.Region, Source: s.Source}.Scope()
}

// New builds the report for plan. It copies the plan's figures (rounded to
// cents) and keeps its order; it computes no money.
func New(plan recommend.Plan, meta Meta) *Report { return build(&plan, meta, false) }

// Consume is New for a plan the caller is done with: it releases each part of
// the plan as soon as that part is in the report, so that a large fleet's plan
// and report are not both whole in memory. *plan is empty afterwards.
func Consume(plan *recommend.Plan, meta Meta) *Report { return build(plan, meta, true) }

func build(plan *recommend.Plan, meta Meta, release bool) *Report {
	r, conv := skeleton(plan, meta)
	if release {
		releaseRest(plan)
	}
	r.Recommendations = make([]Recommendation, 0, len(plan.Recommendations))
	for i := range plan.Recommendations {
		r.Recommendations = append(r.Recommendations, conv.recommendation(i, release))
	}
	if release {
		plan.Recommendations = nil
	}
	r.Instances = make([]Instance, 0, len(plan.Instances))
	for i := range plan.Instances {
		r.Instances = append(r.Instances, conv.instance(i, release))
	}
	if release {
		*plan = recommend.Plan{}
	}
	return r
}

// converter turns a plan's recommendations and instances into their report
// form one at a time; skeleton makes it with what they need from the rest.
type converter struct {
	plan *recommend.Plan
	// unknown are the instances a failed metrics source left without
	// utilization, noUtil those the engine warned have none.
	unknown map[string]*fleet.ScanWarning
	noUtil  map[string]bool
	// prices maps the plan's prices to their report form, made once each.
	prices map[*pricing.Price]*Price
	// evidencePrices, when not nil, is reused for each recommendation's
	// prices: the caller is done with a recommendation before the next.
	evidencePrices []Price
}

// skeleton is plan's report without its recommendations and instances (nil),
// and the converter that makes them. The plan's warnings, governance,
// sharing and commitments are in the report afterwards; its
// recommendations and instances are left for the converter.
func skeleton(plan *recommend.Plan, meta Meta) (*Report, *converter) {
	r := &Report{
		SchemaVersion: SchemaVersion,
		GeneratedAt:   meta.GeneratedAt.UTC().Truncate(time.Second),
		Currency:      pricing.Currency,
		Tool:          Tool{Name: ToolName, Version: meta.ToolVersion},
		Source:        Source{Fleet: meta.FleetName, Path: meta.FleetSource},
		Shard:         meta.Shard,
		Catalog:       make([]CatalogSource, 0, len(meta.Catalog)),
		Policy:        newPolicy(plan.Policy),
		Summary:       newSummary(plan.Summary),
		Warnings:      make([]Warning, 0, len(meta.ScanWarnings)+len(plan.Warnings)),
		Billing:       meta.Billing,
	}
	for _, s := range meta.Catalog {
		r.Catalog = append(r.Catalog, CatalogSource{Name: s.Name, Provider: s.Provider, AsOf: s.AsOf})
	}
	// An instance a failed metrics source left without utilization is
	// marked unknown, and its engine warning says why.
	c := &converter{
		plan:    plan,
		unknown: fleet.Metadata{Warnings: meta.ScanWarnings}.UnknownUtilization(),
		noUtil:  map[string]bool{},
		prices:  map[*pricing.Price]*Price{},
	}
	for _, w := range plan.Warnings {
		if w.Code == recommend.WarnNoUtilization {
			c.noUtil[w.ResourceID] = true
		}
	}
	for _, sw := range meta.ScanWarnings {
		r.Warnings = append(r.Warnings, newScanWarning(sw))
	}
	for _, w := range plan.Warnings {
		msg := w.Message
		if sw, ok := c.unknown[w.ResourceID]; ok && w.Code == recommend.WarnNoUtilization {
			msg = "utilization unknown: " + metricsSourceName(sw) + " could not be read for " + sw.Scope() + " (its " + fleet.ScanMetricsFailed + " warning says why); " + msg
		}
		r.Warnings = append(r.Warnings, Warning{ResourceID: w.ResourceID, Code: w.Code, Message: msg})
	}
	r.Warnings = append(r.Warnings, stalePriceWarnings(*plan, meta.GeneratedAt)...)
	gov := plan.Governance
	r.Allocation = newAllocation(gov.Allocation)
	r.AIMetrics = newAIMetrics(gov.Metrics)
	r.TagAudit = newTagAudit(gov.Audit)
	r.Sharing = newSharing(plan.Sharing)
	r.Commitments = newCommitments(plan.Commitments, plan.Policy.Commitment.Term)
	r.CommitmentsHeld = newCommitmentsHeld(plan.Held, plan.HeldCoverage)
	return r, c
}

// releaseRest clears all of plan that skeleton has put in the report: all
// but its recommendations and instances.
func releaseRest(plan *recommend.Plan) {
	*plan = recommend.Plan{Recommendations: plan.Recommendations, Instances: plan.Instances}
}

// recommendation is the plan's i-th recommendation in the report's types;
// release takes its maps and lists and clears it in the plan.
func (c *converter) recommendation(i int, release bool) Recommendation {
	rec := newRecommendation(c.plan.Recommendations[i], release, c.evidencePrices)
	if c.evidencePrices != nil {
		c.evidencePrices = rec.Evidence.Prices[:0]
	}
	if release {
		c.plan.Recommendations[i] = recommend.Recommendation{}
	}
	return rec
}

// instance is the plan's i-th instance in the report's types; release clears
// it in the plan.
func (c *converter) instance(i int, release bool) Instance {
	in := newInstance(c.plan.Instances[i], c.prices)
	if _, ok := c.unknown[in.ResourceID]; ok && in.UtilizationSource == "" && (c.noUtil[in.ResourceID] || in.State == string(fleet.Stopped)) {
		in.UtilizationSource = fleet.UtilizationUnknown
	}
	if release {
		c.plan.Instances[i] = recommend.InstanceCost{}
	}
	return in
}

// newScanWarning is the report's form of a failed part of the scan. Its text
// comes from clouds and files, so bytes that are not UTF-8 become U+FFFD here,
// once, and every format writes the same characters.
func newScanWarning(sw fleet.ScanWarning) Warning {
	w := Warning{Code: validText(sw.Code), Message: validText(sw.Message()), Reason: validText(sw.Reason)}
	if sw.Provider != "" || sw.Account != "" || sw.Region != "" || sw.Source != "" {
		w.Scope = &WarningScope{Provider: validText(string(sw.Provider)), Account: validText(sw.Account), Region: validText(sw.Region), Source: validText(sw.Source)}
	}
	if sw.Code == fleet.ScanMetricsFailed || sw.Code == fleet.ScanUnknownType {
		w.InstanceCount = len(sw.Instances)
	}
	return w
}

// validText is s with each run of bytes that are not UTF-8 replaced by U+FFFD,
// the way encoding/json would write them.
func validText(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }

func metricsSourceName(sw *fleet.ScanWarning) string {
	if sw.Source == "" {
		return "metrics"
	}
	return sw.Source
}

func newPolicy(p recommend.Policy) Policy {
	workloads := make([]string, 0, len(p.Spot.Workloads))
	for _, w := range p.Spot.Workloads {
		workloads = append(workloads, string(w))
	}
	return Policy{
		Idle: IdlePolicy{
			GPUPercent:                p.Idle.GPUPercent,
			ScheduleMaxBusyPercent:    p.Idle.ScheduleMaxBusyPercent,
			ScheduleMinSavingsPercent: p.Idle.ScheduleMinSavingsPercent,
			ScheduleMinDays:           p.Idle.ScheduleMinDays,
			ScheduleBufferHours:       p.Idle.ScheduleBufferHours,
		},
		Rightsize: RightsizePolicy{
			GPUPercent:        p.Rightsize.GPUPercent,
			GPUMemoryPercent:  p.Rightsize.GPUMemoryPercent,
			HeadroomPercent:   p.Rightsize.HeadroomPercent,
			HostCPUPercent:    p.Rightsize.HostCPUPercent,
			HostMemoryPercent: p.Rightsize.HostMemoryPercent,
			MinSavingsPercent: p.Rightsize.MinSavingsPercent,
		},
		Spot: SpotPolicy{
			Workloads:               workloads,
			MaxBandIndex:            p.Spot.MaxBandIndex,
			CheckpointWriteGBps:     p.Spot.CheckpointWriteGBps,
			CheckpointBytesPerParam: p.Spot.CheckpointBytesPerParam,
			CheckpointMinutes:       p.Spot.CheckpointMinutes,
			RestartMinutes:          p.Spot.RestartMinutes,
			InterruptionsPerMonth:   p.Spot.InterruptionsPerMonth,
		},
		Quantize: &QuantizePolicy{
			TargetUtilPercent: p.Quantize.TargetUtilPercent,
			MinReplicas:       p.Quantize.MinReplicas,
			Context:           p.Quantize.Context,
			Batch:             p.Quantize.Batch,
			MinSavingsPercent: p.Quantize.MinSavingsPercent,
		},
		Sharing: &SharingPolicy{
			DevelopmentMaxGPUPercent: p.Sharing.DevelopmentMaxGPUPercent,
			InferenceMaxGPUPercent:   p.Sharing.InferenceMaxGPUPercent,
			TargetGPUPercent:         p.Sharing.TargetGPUPercent,
			HeadroomPercent:          p.Sharing.HeadroomPercent,
			MaxReplicas:              p.Sharing.MaxReplicas,
			MIG:                      p.Sharing.MIG,
		},
		Commitment: CommitmentPolicy{
			Term:         p.Commitment.Term,
			Discounts1y:  copyFloats(p.Commitment.Discounts1y),
			Discounts3y:  copyFloats(p.Commitment.Discounts3y),
			Names:        maps.Clone(p.Commitment.Names),
			Plans:        maps.Clone(p.Commitment.Plans),
			Payments:     maps.Clone(p.Commitment.Payments),
			TrendPercent: p.Commitment.TrendPercent,
		},
		Governance:     newGovernancePolicy(p.Governance),
		Managed:        newManagedPolicy(p.Managed),
		MinWindowHours: p.MinWindowHours,
	}
}

// newManagedPolicy is nil for a policy without managed thresholds (a 1.7
// report's).
func newManagedPolicy(m recommend.ManagedPolicy) *ManagedPolicy {
	if m == (recommend.ManagedPolicy{}) {
		return nil
	}
	return &ManagedPolicy{IdleMinHours: m.IdleMinHours, TargetGPUPercent: m.TargetGPUPercent,
		ProductionMinReplicas: m.ProductionMinReplicas, IdleShutdownMinutes: m.IdleShutdownMinutes,
		ClusterScaleDownMinutes: m.ClusterScaleDownMinutes, JobMaxHours: m.JobMaxHours}
}

func newGovernancePolicy(p governance.Policy) *GovernancePolicy {
	g := &GovernancePolicy{
		RequiredTags:       copyStrings(p.RequiredTags),
		AllowedValues:      make([]AllowedTagValues, 0, len(p.AllowedValues)),
		ModelNameWorkloads: copyStrings(p.ModelNameWorkloads),
	}
	for _, a := range p.AllowedValues {
		g.AllowedValues = append(g.AllowedValues, AllowedTagValues{Tag: a.Tag, Values: copyStrings(a.Values)})
	}
	return g
}

func newSummary(s recommend.Summary) Summary {
	byKind := make(map[string]Money, len(recommend.Kinds))
	for _, k := range recommend.Kinds {
		byKind[string(k)] = Money{}
	}
	for k, v := range s.SavingsByKind {
		byKind[string(k)] = NewMoney(v)
	}
	out := Summary{
		CurrentMonthlyCost:   NewMoney(s.CurrentMonthly),
		OptimizedMonthlyCost: NewMoney(s.OptimizedMonthly),
		MonthlySavings:       NewMoney(s.MonthlySavings),
		SavingsPercent:       NewNumber(s.SavingsPercent),
		InstanceCount:        s.InstanceCount,
		GPUCount:             s.GPUCount,
		UnpricedCount:        s.UnpricedCount,
		SavingsByKind:        byKind,
	}
	if s.UnusedCommitmentMonthly.IsPositive() {
		m := NewMoney(s.UnusedCommitmentMonthly)
		out.UnusedCommitmentMonthlyCost = &m
	}
	return out
}

// newRecommendation is rec in the report's types. Its maps and lists are
// copied unless move: then rec is the caller's to give up and they are taken.
// Its prices are appended to prices (nil: a new list).
func newRecommendation(rec recommend.Recommendation, move bool, prices []Price) Recommendation {
	ev := rec.Evidence
	riskNotes, notes := rec.RiskNotes, ev.Notes
	metrics, thresholds := ev.Metrics, ev.Thresholds
	if !move || riskNotes == nil {
		riskNotes = copyStrings(riskNotes)
	}
	if !move || notes == nil {
		notes = copyStrings(notes)
	}
	if !move || metrics == nil {
		metrics = copyFloats(metrics)
	}
	if !move || thresholds == nil {
		thresholds = copyFloats(thresholds)
	}
	if prices == nil {
		prices = make([]Price, 0, len(ev.Prices))
	}
	for _, p := range ev.Prices {
		prices = append(prices, newPrice(p))
	}
	return Recommendation{
		ID:                   rec.ID,
		ResourceID:           rec.ResourceID,
		Provider:             string(rec.Provider),
		Account:              rec.Account,
		Region:               rec.Region,
		InstanceType:         rec.InstanceType,
		Kind:                 string(rec.Kind),
		Action:               rec.Action,
		ShortAction:          rec.ShortAction,
		Target:               rec.Target,
		CurrentMonthlyCost:   NewMoney(rec.CurrentMonthly),
		ProjectedMonthlyCost: NewMoney(rec.ProjectedMonthly),
		MonthlySavings:       NewMoney(rec.MonthlySavings),
		Confidence:           string(rec.Confidence),
		Risk:                 string(rec.Risk),
		RiskNotes:            riskNotes,
		Rationale:            rec.Rationale,
		Evidence: Evidence{
			Metrics:            metrics,
			Thresholds:         thresholds,
			Prices:             prices,
			MonthlyHoursBefore: ev.HoursBefore,
			MonthlyHoursAfter:  ev.HoursAfter,
			Formula:            ev.Formula,
			Notes:              notes,
			Purchase:           newPurchase(ev.Purchase),
		},
		After:     rec.After,
		Protected: newProtected(rec.Protected),
		Change:    newChange(rec.Change),
		Command:   rec.Command,
	}
}

func newChange(c *recommend.Change) *Change {
	if c == nil {
		return nil
	}
	return &Change{Action: string(c.Action), Replicas: c.Replicas, InstanceType: c.InstanceType, IdleShutdownMinutes: c.IdleShutdownMinutes}
}

func newProtected(p *recommend.Protected) *Protected {
	if p == nil {
		return nil
	}
	return &Protected{Reason: p.Reason, Message: p.Message, Tag: p.Tag, PotentialMonthlySavings: NewMoney(p.PotentialMonthlySavings), Counted: p.Counted}
}

func newPrice(p pricing.Price) Price {
	return Price{
		Provider:     string(p.Provider),
		Region:       p.Region,
		InstanceType: p.InstanceType,
		Option:       string(p.Option),
		Hourly:       NewNumber(p.Hourly),
		Currency:     p.Currency,
		Unit:         p.Unit,
		Zone:         p.Zone,
		Source:       p.Source,
		AsOf:         p.AsOf,
	}
}

// maxSharedPrices bounds the prices newInstance shares, as the engine does.
const maxSharedPrices = 4096

// newInstance is ic in the report's types; prices (nil: none) maps the
// plan's prices to their report form, made once each.
func newInstance(ic recommend.InstanceCost, prices map[*pricing.Price]*Price) Instance {
	in := Instance{
		ResourceID:   ic.ResourceID,
		Provider:     string(ic.Provider),
		Account:      ic.Account,
		Region:       ic.Region,
		InstanceType: ic.InstanceType,
		GPUModel:     ic.GPUModel,
		GPUCount:     ic.GPUCount,
		Lifecycle:    string(ic.Lifecycle),
		State:        string(ic.State),
		MonthlyHours: ic.MonthlyHours,
		Priced:       ic.Priced,
		PriceBasis:   ic.PriceBasis,

		UtilizationSource:   ic.UtilizationSource,
		UtilizationCoverage: ic.UtilizationCoverage,
		GPUUtilP95:          ic.GPUUtilP95,
		CoveredShare:        ic.CoveredShare,
		CoveredBy:           slices.Clone(ic.CoveredBy),
	}
	if m := ic.Managed; m != nil {
		in.Managed = &Managed{Service: string(m.Service), Kind: string(m.Kind), Name: m.Name, Replicas: m.Replicas}
	}
	if ic.Priced && !ic.CommitmentMonthly.IsZero() {
		m := NewMoney(ic.CommitmentMonthly)
		in.CommitmentMonthlyCost = &m
	}
	if ic.Priced {
		costs := &[3]Money{NewMoney(ic.MonthlyCost), NewMoney(ic.OptimizedCost), NewMoney(ic.MonthlySavings)}
		in.CurrentMonthlyCost, in.OptimizedMonthlyCost, in.MonthlySavings = &costs[0], &costs[1], &costs[2]
		if ic.Hourly != nil {
			p, ok := prices[ic.Hourly]
			if !ok {
				np := newPrice(*ic.Hourly)
				p = &np
				if prices != nil && len(prices) < maxSharedPrices {
					prices[ic.Hourly] = p
				}
			}
			in.HourlyPrice = p
		}
	}
	return in
}

func copyFloats(m map[string]float64) map[string]float64 {
	out := make(map[string]float64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func copyStrings(s []string) []string {
	return append(make([]string, 0, len(s)), s...)
}
