// Package recommend is the engine: pure rules that turn a fleet snapshot, the
// catalog and a policy into priced recommendations, and the planner that
// combines them per instance so that no saving is counted twice.
package recommend

import (
	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/commitplan"
	"github.com/gpufinops/gpufinops/pkg/coverage"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/governance"
	"github.com/gpufinops/gpufinops/pkg/sharing"
	"github.com/gpufinops/gpufinops/pricing"
)

// Kind is the strategy a recommendation comes from.
type Kind string

// The recommendation kinds, in the order the planner applies them.
const (
	KindIdleStop   Kind = "idle-stop"
	KindSchedule   Kind = "schedule"
	KindRightsize  Kind = "rightsize"
	KindQuantize   Kind = "quantize"
	KindShare      Kind = "share"
	KindSpot       Kind = "spot"
	KindCommitment Kind = "commitment"
	KindTagging    Kind = "tagging"
)

// Kinds lists every kind in planner order.
var Kinds = []Kind{KindIdleStop, KindSchedule, KindRightsize, KindQuantize, KindShare, KindSpot, KindCommitment, KindTagging}

// Level grades confidence (how good the data is) and risk (what can go wrong).
type Level string

// The three levels.
const (
	Low    Level = "low"
	Medium Level = "medium"
	High   Level = "high"
)

// Recommendation is one change to one instance with its price.
//
// Money is USD per month, rounded to cents. CurrentMonthly is the cost before
// this change but after any earlier change to the same instance (see After), so
// the savings of all recommendations add up without double counting.
type Recommendation struct {
	ID           string         `json:"id"`
	ResourceID   string         `json:"resourceId"`
	Provider     fleet.Provider `json:"provider"`
	Account      string         `json:"account,omitempty"`
	Region       string         `json:"region"`
	InstanceType string         `json:"instanceType"`
	Kind         Kind           `json:"kind"`
	// Action says what to do, in a sentence.
	Action string `json:"action"`
	// ShortAction says what to do in a few words, with the figure to act on
	// (a price, an amount, a schedule), for a table column.
	ShortAction      string          `json:"shortAction"`
	CurrentMonthly   decimal.Decimal `json:"currentMonthlyCost"`
	ProjectedMonthly decimal.Decimal `json:"projectedMonthlyCost"`
	MonthlySavings   decimal.Decimal `json:"monthlySavings"`
	Confidence       Level           `json:"confidence"`
	Risk             Level           `json:"risk"`
	RiskNotes        []string        `json:"riskNotes,omitempty"`
	Rationale        string          `json:"rationale"`
	Evidence         Evidence        `json:"evidence"`
	// After is the ID of the recommendation this one is priced after, if any.
	After string `json:"after,omitempty"`
	// Target is the proposed instance type, purchase option or schedule.
	Target string `json:"target,omitempty"`
	// Protected is set when the protection idle-stop applies (pkg/protect)
	// holds a stop, schedule or deallocate back.
	Protected *Protected `json:"protected,omitempty"`
	// Change is the exact change advised on a managed AI item, named
	// cloud-neutrally; nil on a virtual machine's advice.
	Change *Change `json:"change,omitempty"`
	// Command is the cloud's command that makes Change (the adapter spells
	// it); empty when none is known or the item is protected.
	Command string `json:"command,omitempty"`
}

// Change is an advised change to a managed AI item (fleet.ManagedChange).
type Change struct {
	// Action is the change: delete-endpoint, scale-to-zero, set-replicas,
	// set-min-replicas, change-instance-type, stop-notebook,
	// enable-idle-shutdown or use-managed-spot.
	Action fleet.ManagedAction `json:"action"`
	// Replicas is the count set by set-replicas and set-min-replicas.
	Replicas *int `json:"replicas,omitempty"`
	// InstanceType is the target of change-instance-type.
	InstanceType string `json:"instanceType,omitempty"`
	// IdleShutdownMinutes is the setting of enable-idle-shutdown.
	IdleShutdownMinutes *float64 `json:"idleShutdownMinutes,omitempty"`
}

// changeOf is the report's form of a managed change.
func changeOf(mc fleet.ManagedChange) *Change {
	c := &Change{Action: mc.Action, InstanceType: mc.InstanceType}
	switch mc.Action {
	case fleet.ActionSetReplicas, fleet.ActionSetMinReplicas:
		n := mc.Replicas
		c.Replicas = &n
	case fleet.ActionIdleShutdown:
		m := mc.IdleShutdownMinutes
		c.IdleShutdownMinutes = &m
	}
	return c
}

// replicas is how many replicas bill; 0 for a VM (nil).
func (m *ManagedRef) replicas() int {
	if m == nil {
		return 0
	}
	return m.Replicas
}

// ManagedRef says what a managed AI item is, for the report to name it.
type ManagedRef struct {
	Service fleet.ManagedService `json:"service"`
	Kind    fleet.ManagedKind    `json:"kind"`
	// Name is the item's name: endpoint/deployment, notebook, app, job or
	// cluster.
	Name string `json:"name,omitempty"`
	// Replicas are the replicas (nodes) billing now.
	Replicas int `json:"replicas"`
}

// Protected says why a machine is protected from a stop, schedule or
// deallocation, and what releasing it would save.
type Protected struct {
	// Reason is the protection's code, as idle-stop reports it (exempt,
	// opted-out, production, spot-not-stoppable, inference, gpu-memory-held,
	// cpu-busy, multi-host, …).
	Reason string `json:"reason"`
	// Message says why in a sentence; Tag is the tag that says so.
	Message string `json:"message"`
	Tag     string `json:"tag,omitempty"`
	// PotentialMonthlySavings is what the advice would save if the
	// protection were released.
	PotentialMonthlySavings decimal.Decimal `json:"potentialMonthlySavings"`
	// Counted is true when the saving is counted anyway (--include-protected).
	Counted bool `json:"counted"`
}

// Evidence is how a recommendation was computed.
type Evidence struct {
	// Metrics are the observed figures (percent, hours), e.g. "gpuUtilP95".
	Metrics map[string]float64 `json:"metrics,omitempty"`
	// Thresholds are the policy values the metrics were compared with.
	Thresholds map[string]float64 `json:"thresholds,omitempty"`
	// Prices are the hourly prices used.
	Prices []pricing.Price `json:"prices,omitempty"`
	// Hours are the billed hours per month before and after.
	HoursBefore float64 `json:"monthlyHoursBefore"`
	HoursAfter  float64 `json:"monthlyHoursAfter"`
	// Formula states the arithmetic in words.
	Formula string `json:"formula"`
	// Notes carry anything else the user should know.
	Notes []string `json:"notes,omitempty"`
	// Purchase is what a commitment recommendation buys; nil for the others.
	Purchase *Purchase `json:"purchase,omitempty"`
}

// Warning is something the engine could not decide or price.
type Warning struct {
	ResourceID string `json:"resourceId,omitempty"`
	// Code is stable and machine-readable, e.g. "no-utilization" or "unpriced".
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Warning codes.
const (
	WarnNoUtilization   = "no-utilization"
	WarnUnpriced        = "unpriced"
	WarnUnknownType     = "unknown-instance-type"
	WarnIdleCommitted   = "idle-committed"
	WarnShortWindow     = "short-window"
	WarnNoSpotPrice     = "no-spot-price"
	WarnNoCheckpointing = "no-checkpointing"
	// WarnLowCoverage: the utilization covers too little of its window for
	// the instance to be judged idle.
	WarnLowCoverage = "low-coverage"
	// WarnNoCommitmentRate: no commitment rate is known for a type and
	// region, so no commitment is advised for it.
	WarnNoCommitmentRate = "no-commitment-rate"
	// WarnNoCommitmentKind: the policy names no commitment kind for a
	// provider (policy.commitment.plans), so none is advised there.
	WarnNoCommitmentKind = "no-commitment-kind"
	// WarnUsageTrend: a group's usage rose or fell materially within the
	// window; its commitment is sized on the last week.
	WarnUsageTrend = "usage-trend"
	// WarnNotRecurring: an instance's busy hours do not recur across weeks,
	// so no schedule is learned from them.
	WarnNotRecurring = "schedule-not-recurring"
	// WarnPartialGPUs: some of an instance's GPUs report no data, so it is
	// not judged idle.
	WarnPartialGPUs = "partial-gpus"
	// WarnCommitmentRateUnknown: a committed instance's rate is not in the
	// fleet; it is priced at an assumed rate, said so in its price source.
	WarnCommitmentRateUnknown = "commitment-rate-unknown"
	// WarnUnusedCommitment: a commitment the fleet holds is paid for hours
	// nothing uses; the message gives the USD a month and what could use it.
	WarnUnusedCommitment = "unused-commitment"
	// WarnStoppedCommitted: a stopped instance still carries a commitment,
	// which is paid whether it runs or not.
	WarnStoppedCommitted = "stopped-committed"
	// WarnCoveredNoSaving: a change (stop, schedule, rightsize, spot) would
	// save nothing because commitments pay for the instance's hours; it
	// would only free commitment for other usage.
	WarnCoveredNoSaving = "covered-no-saving"
	// WarnManaged: a managed AI item the rules could not judge (requests
	// or metrics unknown), or a fact about its commitments.
	WarnManaged = "managed"
)

// InstanceCost is what one instance costs now.
type InstanceCost struct {
	ResourceID   string          `json:"resourceId"`
	Provider     fleet.Provider  `json:"provider"`
	Account      string          `json:"account,omitempty"`
	Region       string          `json:"region"`
	InstanceType string          `json:"instanceType"`
	GPUModel     string          `json:"gpuModel,omitempty"`
	GPUCount     float64         `json:"gpuCount"`
	Lifecycle    fleet.Lifecycle `json:"lifecycle"`
	State        fleet.State     `json:"state"`
	MonthlyHours float64         `json:"monthlyHours"`
	// UtilizationSource and UtilizationCoverage are the fleet's
	// utilization.source and utilization.coverage, when given.
	UtilizationSource   string   `json:"utilizationSource,omitempty"`
	UtilizationCoverage *float64 `json:"utilizationCoverage,omitempty"`
	// GPUUtilP95 is the 95th percentile of the busiest GPU's utilization,
	// percent, as the rules read it; nil without GPU data.
	GPUUtilP95 *float64 `json:"gpuUtilP95,omitempty"`
	// Hourly is the price the cost was computed from; nil when unpriced.
	Hourly *pricing.Price `json:"hourlyPrice,omitempty"`
	// PriceBasis is "bill" when Hourly is the effective rate a billing
	// export gave, "list" when the bill had none for it; "" without a bill.
	PriceBasis string `json:"priceBasis,omitempty"`
	// CommitmentMonthly is the part of MonthlyCost commitments charge,
	// paid whatever is done with the instance; CoveredShare the part (0–1)
	// of its hours they cover and CoveredBy their IDs ("implicit" for a
	// commitment the instance names without one in the fleet).
	CommitmentMonthly decimal.Decimal `json:"commitmentMonthlyCost,omitzero"`
	CoveredShare      float64         `json:"coveredShare,omitempty"`
	CoveredBy         []string        `json:"coveredBy,omitempty"`
	MonthlyCost       decimal.Decimal `json:"monthlyCost"`
	Priced            bool            `json:"priced"`
	OptimizedCost     decimal.Decimal `json:"optimizedMonthlyCost"`
	MonthlySavings    decimal.Decimal `json:"monthlySavings"`
	// Final is the instance as the plan leaves it; nil when unpriced.
	Final *FinalState `json:"final,omitempty"`
	// Managed names the managed AI item the instance is; nil for a
	// virtual machine.
	Managed *ManagedRef `json:"managed,omitempty"`
}

// FinalState is an instance after every recommendation for it.
type FinalState struct {
	InstanceType string          `json:"instanceType"`
	GPUModel     string          `json:"gpuModel,omitempty"`
	GPUCount     float64         `json:"gpuCount"`
	Lifecycle    fleet.Lifecycle `json:"lifecycle"`
	// Hourly is the price it pays per hour, in its final purchase option.
	Hourly       pricing.Price `json:"hourly"`
	MonthlyHours float64       `json:"monthlyHours"`
	Stopped      bool          `json:"stopped"`
	// Schedule is the weekly schedule it runs on, when one is known (UTC).
	Schedule *fleet.Schedule `json:"schedule,omitempty"`
}

// Summary totals a plan. Current equals the sum of instance costs, Savings the
// sum of recommendation savings, and Optimized is Current minus Savings.
type Summary struct {
	CurrentMonthly   decimal.Decimal `json:"currentMonthlyCost"`
	OptimizedMonthly decimal.Decimal `json:"optimizedMonthlyCost"`
	MonthlySavings   decimal.Decimal `json:"monthlySavings"`
	// SavingsPercent is Savings / Current × 100, rounded to one decimal.
	SavingsPercent decimal.Decimal `json:"savingsPercent"`
	InstanceCount  int             `json:"instanceCount"`
	// GPUCount counts every billed replica's GPUs.
	GPUCount      float64                  `json:"gpuCount"`
	UnpricedCount int                      `json:"unpricedCount"`
	SavingsByKind map[Kind]decimal.Decimal `json:"savingsByKind"`
	// UnusedCommitmentMonthly is what commitments that cover no instance
	// cost a month; it is part of CurrentMonthly and OptimizedMonthly (a
	// commitment is paid whatever the plan does).
	UnusedCommitmentMonthly decimal.Decimal `json:"unusedCommitmentMonthlyCost,omitzero"`
}

// Plan is the engine's whole answer for one fleet.
type Plan struct {
	Instances       []InstanceCost   `json:"instances"`
	Recommendations []Recommendation `json:"recommendations"`
	Warnings        []Warning        `json:"warnings"`
	Summary         Summary          `json:"summary"`
	Policy          Policy           `json:"policy"`
	// Sharing is the GPU sharing plan behind the share recommendations.
	Sharing sharing.Plan `json:"sharing"`
	// Commitments is the commitment plan behind the commitment recommendations.
	Commitments commitplan.Plan `json:"commitments"`
	// Governance is the tag audit, cost allocation and AI cost metrics.
	Governance governance.Report `json:"governance"`
	// Held is the allocation of the commitments the fleet holds: what each
	// pays, uses and leaves unused; HeldCoverage how much of the fleet's
	// usage they cover.
	Held []coverage.Usage `json:"-"`
	// HeldInstances is the allocation per instance ID, bill-priced
	// instances included (their cost is the bill's, their coverage still
	// the commitments').
	HeldInstances map[string]*coverage.Covered `json:"-"`
	HeldCoverage  HeldCoverage                 `json:"-"`
	// Reallocations are what the plan's changes free of held commitments
	// and which instances would take it (commitment-reallocation
	// warnings); not counted in the summary.
	Reallocations []Reallocation `json:"-"`
}

// HeldCoverage is the on-demand value of the running usage commitments
// cover (Covered), of all running usage with an on-demand price (OnDemand),
// monthly, and their ratio (0–1).
type HeldCoverage struct {
	Covered, OnDemand decimal.Decimal
	Share             float64
}
