package report

import (
	"maps"

	"github.com/gpufinops/gpufinops/pkg/commitplan"
	"github.com/gpufinops/gpufinops/pkg/governance"
	"github.com/gpufinops/gpufinops/pkg/sharing"
)

// This file holds the sections added in schema 1.1: cost allocation, AI cost
// metrics, the tag audit, and compact forms of the sharing and commitment
// plans. Like the rest of the report they copy the engine's figures (money
// rounded to cents) and compute none.

// Untagged is the key of the allocation bucket of instances that do not say
// which team, project, workload type or environment they belong to.
const Untagged = governance.Untagged

// Allocation splits the fleet's current and optimized monthly cost by team,
// project, workload type, environment and provider. In every dimension the
// buckets add up to the summary's totals; unpriced instances count with no
// cost. Buckets are costliest first, ties by key, Untagged last.
type Allocation struct {
	// CurrentMonthlyCost is the fleet's current monthly cost, as in the summary.
	CurrentMonthlyCost Money `json:"currentMonthlyCost"`
	// OptimizedMonthlyCost is the fleet's optimized monthly cost, as in the summary.
	OptimizedMonthlyCost Money `json:"optimizedMonthlyCost"`
	// ByTeam splits by the Team tag.
	ByTeam []CostBucket `json:"byTeam"`
	// ByProject splits by the Project tag.
	ByProject []CostBucket `json:"byProject"`
	// ByWorkloadType splits by the WorkloadType tag, else the fleet's workload type.
	ByWorkloadType []CostBucket `json:"byWorkloadType"`
	// ByEnvironment splits by the Environment tag.
	ByEnvironment []CostBucket `json:"byEnvironment"`
	// ByProvider splits by cloud.
	ByProvider []CostBucket `json:"byProvider"`
}

// CostBucket is the cost of the instances that share one value of a
// dimension.
type CostBucket struct {
	// Key is the value, e.g. a team's name, or "(untagged)".
	Key string `json:"key"`
	// Instances counts the instances in the bucket, priced or not.
	Instances int `json:"instances"`
	// CurrentMonthlyCost is what they cost a month now.
	CurrentMonthlyCost Money `json:"currentMonthlyCost"`
	// OptimizedMonthlyCost is what they cost after every recommendation.
	OptimizedMonthlyCost Money `json:"optimizedMonthlyCost"`
	// SharePercent is the bucket's share of the fleet's current cost, one decimal.
	SharePercent float64 `json:"sharePercent"`
}

// AIMetrics are the AI cost metrics of the fleet: how much of the paid GPU
// time did work, and what a busy GPU-hour, a million output tokens, a thousand
// requests and a training run cost. A figure is absent where the fleet lacks
// what it needs. docs/governance.md gives every formula.
type AIMetrics struct {
	Fleet FleetAIMetrics `json:"fleet"`
	// Instances has one entry per instance, in the plan's order.
	Instances []InstanceAIMetrics `json:"instances"`
	// TrainingRuns are sorted by ID.
	TrainingRuns []TrainingRun `json:"trainingRuns"`
}

// FleetAIMetrics are the fleet's AI cost metrics: sums over the instances
// that have the data.
type FleetAIMetrics struct {
	// PaidGPUHours is GPUs × billed hours a month, summed over every instance.
	PaidGPUHours float64 `json:"paidGpuHours"`
	// MeasuredGPUHours is the paid GPU-hours of the instances with utilization data.
	MeasuredGPUHours float64 `json:"measuredGpuHours"`
	// BusyGPUHours is their busy GPU-hours: average utilization × paid GPU-hours.
	BusyGPUHours float64 `json:"busyGpuHours"`
	// GPUEfficiencyPercent is busy ÷ measured GPU-hours × 100, one decimal.
	GPUEfficiencyPercent *float64 `json:"gpuEfficiencyPercent,omitempty"`
	// CostPerBusyGPUHour is the monthly cost of the priced, measured instances
	// ÷ their busy GPU-hours, USD rounded to cents.
	CostPerBusyGPUHour *Money `json:"costPerBusyGpuHour,omitempty"`
	// MonthlyOutputTokens sums the instances that report tokens per second.
	MonthlyOutputTokens float64 `json:"monthlyOutputTokens"`
	// MonthlyRequests sums the instances that report requests per second.
	MonthlyRequests float64 `json:"monthlyRequests"`
	// CostPerMillionTokens is their cost per 1M output tokens, USD to four decimals.
	CostPerMillionTokens *Number `json:"costPerMillionTokens,omitempty"`
	// CostPerThousandRequests is their cost per 1,000 requests, USD to four decimals.
	CostPerThousandRequests *Number `json:"costPerThousandRequests,omitempty"`
}

// InstanceAIMetrics are one instance's AI cost metrics for a month.
type InstanceAIMetrics struct {
	ResourceID string `json:"resourceId"`
	// Model is the fleet's model name, else the ModelName tag.
	Model    string  `json:"model,omitempty"`
	GPUCount float64 `json:"gpuCount"`
	// MonthlyHours is the billed hours a month.
	MonthlyHours float64 `json:"monthlyHours"`
	// MonthlyCost is its current monthly cost; absent when it has no price.
	MonthlyCost *Money `json:"monthlyCost,omitempty"`
	// PaidGPUHours is GPUs × billed hours a month.
	PaidGPUHours float64 `json:"paidGpuHours"`
	// GPUUtilAvg is the average utilization of the busiest GPU, percent.
	GPUUtilAvg *float64 `json:"gpuUtilAvg,omitempty"`
	// BusyGPUHours is GPUUtilAvg ÷ 100 × PaidGPUHours.
	BusyGPUHours *float64 `json:"busyGpuHours,omitempty"`
	// GPUEfficiencyPercent is BusyGPUHours ÷ PaidGPUHours × 100.
	GPUEfficiencyPercent *float64 `json:"gpuEfficiencyPercent,omitempty"`
	// CostPerGPUHour is MonthlyCost ÷ PaidGPUHours.
	CostPerGPUHour *Money `json:"costPerGpuHour,omitempty"`
	// CostPerBusyGPUHour is MonthlyCost ÷ BusyGPUHours.
	CostPerBusyGPUHour *Money `json:"costPerBusyGpuHour,omitempty"`
	// TokensPerSecond is the fleet's output throughput.
	TokensPerSecond *float64 `json:"tokensPerSecond,omitempty"`
	// RequestsPerSecond is the fleet's request rate.
	RequestsPerSecond *float64 `json:"requestsPerSecond,omitempty"`
	// MonthlyOutputTokens is TokensPerSecond × 3600 × billed hours.
	MonthlyOutputTokens *float64 `json:"monthlyOutputTokens,omitempty"`
	// MonthlyRequests is RequestsPerSecond × 3600 × billed hours.
	MonthlyRequests *float64 `json:"monthlyRequests,omitempty"`
	// CostPerMillionTokens is MonthlyCost ÷ MonthlyOutputTokens × 1,000,000.
	CostPerMillionTokens *Number `json:"costPerMillionTokens,omitempty"`
	// CostPerThousandRequests is MonthlyCost ÷ MonthlyRequests × 1,000.
	CostPerThousandRequests *Number `json:"costPerThousandRequests,omitempty"`
	// TrainingRun is the run the instance works on, if any.
	TrainingRun string `json:"trainingRun,omitempty"`
}

// TrainingRun is the cost of one training run: the instances whose workload
// or TrainingRun tag names it.
type TrainingRun struct {
	ID        string   `json:"id"`
	Instances []string `json:"instances"`
	GPUCount  float64  `json:"gpuCount"`
	// Priced is false when an instance of the run has no price: its costs
	// then leave that instance out, and RunCost is absent.
	Priced bool `json:"priced"`
	// MonthlyCost sums the priced instances' current monthly costs.
	MonthlyCost Money `json:"monthlyCost"`
	// ExpectedHours is the longest expected run time of its instances.
	ExpectedHours *float64 `json:"expectedHours,omitempty"`
	// RunCost is what the whole run costs: Σ hourly price × the instance's
	// expected hours.
	RunCost *Money `json:"runCost,omitempty"`
}

// TagAudit is the audit of the instances' tags against the governance policy
// (policy.governance): compliance, untagged spend, per-tag counts and the
// instances with a violation. `gpufinops tags audit` shows every message.
type TagAudit struct {
	// InstanceCount is the number of instances audited.
	InstanceCount int `json:"instanceCount"`
	// CompliantCount counts those with nothing missing or invalid.
	CompliantCount int `json:"compliantCount"`
	// UntaggedMonthlyCost is the current monthly cost of the instances with a
	// missing or invalid tag, each counted once.
	UntaggedMonthlyCost Money `json:"untaggedMonthlyCost"`
	// CompliancePercentByInstances is CompliantCount ÷ InstanceCount × 100, one
	// decimal; 100 for an empty fleet.
	CompliancePercentByInstances float64 `json:"compliancePercentByInstances"`
	// CompliancePercentBySpend is the compliant share of the current monthly
	// cost, one decimal; 100 when nothing is spent.
	CompliancePercentBySpend float64 `json:"compliancePercentBySpend"`
	// Tags counts the violations per tag, required tags first in policy order.
	Tags []TagCount `json:"tags"`
	// Violations are the instances with at least one violation, costliest first.
	Violations []TagViolation `json:"violations"`
}

// TagCount counts one tag's violations across the fleet.
type TagCount struct {
	Tag      string `json:"tag"`
	Required bool   `json:"required"`
	// Missing counts instances without the tag or with an empty value.
	Missing int `json:"missing"`
	// Invalid counts instances whose value is not one of the allowed values.
	Invalid int `json:"invalid"`
	// CaseMismatch counts instances that spell the key or value differently.
	CaseMismatch int `json:"caseMismatch"`
	// MonthlyCost is the current monthly cost of the instances where the tag is
	// missing or invalid.
	MonthlyCost Money `json:"monthlyCost"`
}

// TagViolation is one instance's tag problems.
type TagViolation struct {
	ResourceID string `json:"resourceId"`
	// Compliant is true when only spellings differ (nothing missing or invalid).
	Compliant bool `json:"compliant"`
	// Missing lists the tags to add, in policy order.
	Missing []string `json:"missing"`
	// Invalid lists the tags whose values are not allowed.
	Invalid []string `json:"invalid"`
	// CaseMismatch lists the tags spelt other than the policy spells them.
	CaseMismatch []string `json:"caseMismatch"`
	// MonthlyCost is the instance's current monthly cost; absent when it has
	// no price.
	MonthlyCost *Money `json:"monthlyCost,omitempty"`
}

// Sharing is the GPU sharing plan behind the share recommendations: which
// GPUs the tenants share and which instances that frees. `gpufinops sharing
// plan` prints it whole, with the GPU Operator configuration.
type Sharing struct {
	// FreedMonthlyCost is the monthly cost of every freed instance: the share
	// recommendations' savings.
	FreedMonthlyCost Money `json:"freedMonthlyCost"`
	// Groups are the shared GPUs of one mode and instance type in one place.
	Groups []SharingGroup `json:"groups"`
}

// SharingGroup is the shared GPUs of one mode and one instance type in one
// provider, region and account.
type SharingGroup struct {
	// Mode is time-slicing or mig.
	Mode         string `json:"mode" jsonschema:"enum=time-slicing,enum=mig"`
	Provider     string `json:"provider" jsonschema:"enum=aws,enum=azure,enum=gcp"`
	Region       string `json:"region"`
	Account      string `json:"account,omitempty"`
	InstanceType string `json:"instanceType"`
	GPUModel     string `json:"gpuModel"`
	// Replicas is the time-slicing replicas per GPU (time-slicing only).
	Replicas int `json:"replicas,omitempty"`
	// Hosts are the instances that stay and whose GPUs are shared.
	Hosts []SharingHost `json:"hosts"`
	// Freed lists the instances that stop once their work has moved.
	Freed []string `json:"freed"`
	// FreedMonthlyCost is the monthly cost of the freed instances.
	FreedMonthlyCost Money `json:"freedMonthlyCost"`
}

// SharingHost is one instance that stays and whose GPU its tenants share.
type SharingHost struct {
	ResourceID string `json:"resourceId"`
	// Tenants are the instances whose work runs on its GPU, the host first.
	Tenants []string `json:"tenants"`
	// MIGDevices counts the MIG profiles of its layout, e.g. {"3g.40gb": 1}
	// (mig only).
	MIGDevices map[string]int `json:"migDevices,omitempty"`
}

// Commitments is the commitment plan behind the commitment recommendations,
// per provider, region and family, for each term. The hourly usage curves and
// cost curves are left out: `gpufinops commit-plan -o json` has them.
type Commitments struct {
	// Term is the policy's term, the one the commitment recommendations buy:
	// the groups' savings at Term add up to summary.savingsByKind.commitment.
	Term string `json:"term" jsonschema:"enum=1y,enum=3y"`
	// RecommendedMonthlySavings is the sum of the groups' savings at their
	// recommended terms, which may differ from Term.
	RecommendedMonthlySavings Money `json:"recommendedMonthlySavings"`
	// Groups are sorted by provider, region and family.
	Groups []CommitmentGroup `json:"groups"`
}

// CommitmentGroup is one commitment scope: an AWS instance family, Azure VM
// series or GCP machine family in one region.
type CommitmentGroup struct {
	Provider string `json:"provider" jsonschema:"enum=aws,enum=azure,enum=gcp"`
	Region   string `json:"region"`
	Family   string `json:"family"`
	// RecommendedTerm is the term that saves most, or "none" when none saves.
	RecommendedTerm string `json:"recommendedTerm" jsonschema:"enum=1y,enum=3y,enum=none"`
	// Terms is the best commitment for each term, shortest first.
	Terms []CommitmentTerm `json:"terms"`
}

// CommitmentTerm is the best commitment for one term and what it costs.
type CommitmentTerm struct {
	Term string `json:"term" jsonschema:"enum=1y,enum=3y"`
	// Discount is the term's discount off on-demand (0.35 = 35 % off).
	Discount float64 `json:"discount"`
	// CommitHourly is the on-demand USD per hour the commitment covers.
	CommitHourly Number `json:"commitHourly"`
	// CommittedMonthlyCost is what the commitment costs a month, used or not.
	CommittedMonthlyCost Money `json:"committedMonthlyCost"`
	// TotalMonthlyCost is the group's monthly cost with it: committed plus
	// on-demand and spot usage above it.
	TotalMonthlyCost Money `json:"totalMonthlyCost"`
	// MonthlySavings is what it saves over no commitment.
	MonthlySavings Money `json:"monthlySavings"`
	// Utilization is the share (0–1) of the committed dollars used.
	Utilization float64 `json:"utilization"`
	// BreakEven is 1 − discount: a level pays when usage exceeds it in more
	// than this share of hours.
	BreakEven float64 `json:"breakEven"`
}

func newAllocation(a governance.Allocation) *Allocation {
	return &Allocation{
		CurrentMonthlyCost:   NewMoney(a.MonthlyCost.Decimal),
		OptimizedMonthlyCost: NewMoney(a.OptimizedMonthlyCost.Decimal),
		ByTeam:               newBuckets(a.ByTeam),
		ByProject:            newBuckets(a.ByProject),
		ByWorkloadType:       newBuckets(a.ByWorkloadType),
		ByEnvironment:        newBuckets(a.ByEnvironment),
		ByProvider:           newBuckets(a.ByProvider),
	}
}

func newBuckets(bs []governance.Bucket) []CostBucket {
	out := make([]CostBucket, 0, len(bs))
	for _, b := range bs {
		out = append(out, CostBucket{
			Key:                  b.Key,
			Instances:            b.Instances,
			CurrentMonthlyCost:   NewMoney(b.MonthlyCost.Decimal),
			OptimizedMonthlyCost: NewMoney(b.OptimizedMonthlyCost.Decimal),
			SharePercent:         b.SharePercent,
		})
	}
	return out
}

func newAIMetrics(m governance.Metrics) *AIMetrics {
	f := m.Fleet
	out := &AIMetrics{
		Fleet: FleetAIMetrics{
			PaidGPUHours:            f.PaidGPUHours,
			MeasuredGPUHours:        f.MeasuredGPUHours,
			BusyGPUHours:            f.BusyGPUHours,
			GPUEfficiencyPercent:    copyPtr(f.EfficiencyPercent),
			CostPerBusyGPUHour:      moneyPtr(f.CostPerBusyGPUHour),
			MonthlyOutputTokens:     f.MonthlyOutputTokens,
			MonthlyRequests:         f.MonthlyRequests,
			CostPerMillionTokens:    unitPtr(f.CostPerMillionTokens),
			CostPerThousandRequests: unitPtr(f.CostPerThousandRequests),
		},
		Instances:    make([]InstanceAIMetrics, 0, len(m.Instances)),
		TrainingRuns: make([]TrainingRun, 0, len(m.TrainingRuns)),
	}
	for _, im := range m.Instances {
		in := InstanceAIMetrics{
			ResourceID:              im.ResourceID,
			Model:                   im.Model,
			GPUCount:                im.GPUCount,
			MonthlyHours:            im.MonthlyHours,
			PaidGPUHours:            im.PaidGPUHours,
			GPUUtilAvg:              copyPtr(im.GPUUtilAvg),
			BusyGPUHours:            copyPtr(im.BusyGPUHours),
			GPUEfficiencyPercent:    copyPtr(im.EfficiencyPercent),
			CostPerGPUHour:          moneyPtr(im.CostPerGPUHour),
			CostPerBusyGPUHour:      moneyPtr(im.CostPerBusyGPUHour),
			TokensPerSecond:         copyPtr(im.TokensPerSecond),
			RequestsPerSecond:       copyPtr(im.RequestsPerSecond),
			MonthlyOutputTokens:     copyPtr(im.MonthlyOutputTokens),
			MonthlyRequests:         copyPtr(im.MonthlyRequests),
			CostPerMillionTokens:    unitPtr(im.CostPerMillionTokens),
			CostPerThousandRequests: unitPtr(im.CostPerThousandRequests),
			TrainingRun:             im.TrainingRun,
		}
		if im.Priced {
			in.MonthlyCost = moneyPtr(&im.MonthlyCost)
		}
		out.Instances = append(out.Instances, in)
	}
	for _, tr := range m.TrainingRuns {
		out.TrainingRuns = append(out.TrainingRuns, TrainingRun{
			ID:            tr.ID,
			Instances:     copyStrings(tr.Instances),
			GPUCount:      tr.GPUCount,
			Priced:        tr.Priced,
			MonthlyCost:   NewMoney(tr.MonthlyCost.Decimal),
			ExpectedHours: copyPtr(tr.ExpectedHours),
			RunCost:       moneyPtr(tr.RunCost),
		})
	}
	return out
}

func newTagAudit(a governance.Audit) *TagAudit {
	out := &TagAudit{
		InstanceCount:                a.InstanceCount,
		CompliantCount:               a.CompliantCount,
		UntaggedMonthlyCost:          NewMoney(a.NonCompliantMonthlyCost.Decimal),
		CompliancePercentByInstances: a.CompliancePercentByInstances,
		CompliancePercentBySpend:     a.CompliancePercentBySpend,
		Tags:                         make([]TagCount, 0, len(a.Tags)),
		Violations:                   make([]TagViolation, 0, len(a.Violations)),
	}
	for _, t := range a.Tags {
		out.Tags = append(out.Tags, TagCount{
			Tag: t.Tag, Required: t.Required, Missing: t.Missing, Invalid: t.Invalid,
			CaseMismatch: t.CaseMismatch, MonthlyCost: NewMoney(t.MonthlyCost.Decimal),
		})
	}
	for _, v := range a.Violations {
		tv := TagViolation{
			ResourceID:   v.ResourceID,
			Compliant:    v.Compliant,
			Missing:      copyStrings(v.Missing),
			Invalid:      copyStrings(v.Invalid),
			CaseMismatch: copyStrings(v.CaseMismatch),
		}
		if v.Priced {
			tv.MonthlyCost = moneyPtr(&v.MonthlyCost)
		}
		out.Violations = append(out.Violations, tv)
	}
	return out
}

func newSharing(p sharing.Plan) *Sharing {
	out := &Sharing{FreedMonthlyCost: NewMoney(p.FreedMonthly), Groups: make([]SharingGroup, 0, len(p.Groups))}
	for _, g := range p.Groups {
		sg := SharingGroup{
			Mode:             string(g.Mode),
			Provider:         string(g.Provider),
			Region:           g.Region,
			Account:          g.Account,
			InstanceType:     g.InstanceType,
			GPUModel:         g.GPUModel,
			Replicas:         g.Replicas,
			Hosts:            make([]SharingHost, 0, len(g.Hosts)),
			Freed:            copyStrings(g.Freed),
			FreedMonthlyCost: NewMoney(g.FreedMonthly),
		}
		for _, h := range g.Hosts {
			host := SharingHost{ResourceID: h.InstanceID, Tenants: copyStrings(h.Tenants)}
			if len(h.MIGDevices) > 0 {
				host.MIGDevices = maps.Clone(h.MIGDevices)
			}
			sg.Hosts = append(sg.Hosts, host)
		}
		out.Groups = append(out.Groups, sg)
	}
	return out
}

// newCommitments keeps each group's terms without the curves. term is the
// policy's, which the commitment recommendations buy.
func newCommitments(p commitplan.Plan, term string) *Commitments {
	out := &Commitments{
		Term:                      term,
		RecommendedMonthlySavings: NewMoney(p.SavingsMonthly),
		Groups:                    make([]CommitmentGroup, 0, len(p.Groups)),
	}
	for _, g := range p.Groups {
		cg := CommitmentGroup{
			Provider:        string(g.Provider),
			Region:          g.Region,
			Family:          g.Family,
			RecommendedTerm: g.Recommended,
			Terms:           make([]CommitmentTerm, 0, len(g.Terms)),
		}
		for _, t := range g.Terms {
			ct := CommitmentTerm{
				Term:                 t.Term,
				Discount:             t.Discount,
				CommitHourly:         NewNumber(t.CommitHourly),
				CommittedMonthlyCost: NewMoney(t.CommittedMonthly),
				TotalMonthlyCost:     NewMoney(t.TotalMonthly),
				MonthlySavings:       NewMoney(t.SavingsMonthly),
				Utilization:          t.Utilization,
				BreakEven:            t.BreakEven,
			}
			cg.Terms = append(cg.Terms, ct)
		}
		out.Groups = append(out.Groups, cg)
	}
	return out
}

func copyPtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func moneyPtr(m *governance.Money) *Money {
	if m == nil {
		return nil
	}
	v := NewMoney(m.Decimal)
	return &v
}

func unitPtr(u *governance.UnitCost) *Number {
	if u == nil {
		return nil
	}
	v := NewNumber(u.Decimal)
	return &v
}
