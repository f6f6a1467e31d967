package recommend

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/governance"
	"github.com/gpufinops/gpufinops/pkg/sharing"
	"github.com/gpufinops/gpufinops/pricing"
)

// Policy holds every threshold the rules apply. docs/rules.md documents each
// default; config files, GPUFINOPS_* variables and flags override them.
type Policy struct {
	Idle       IdlePolicy        `json:"idle" mapstructure:"idle"`
	Rightsize  RightsizePolicy   `json:"rightsize" mapstructure:"rightsize"`
	Quantize   QuantizePolicy    `json:"quantize" mapstructure:"quantize"`
	Sharing    sharing.Policy    `json:"sharing" mapstructure:"sharing"`
	Governance governance.Policy `json:"governance" mapstructure:"governance"`
	Spot       SpotPolicy        `json:"spot" mapstructure:"spot"`
	Commitment CommitmentPolicy  `json:"commitment" mapstructure:"commitment"`
	// Managed configures the rules for managed AI items (managed.go).
	Managed ManagedPolicy `json:"managed" mapstructure:"managed"`
	// MinWindowHours is the shortest utilization window that earns high confidence.
	MinWindowHours float64 `json:"minWindowHours" mapstructure:"min_window_hours"`
	// Prices sets how old a price may be before the report warns.
	Prices PricePolicy `json:"prices" mapstructure:"prices"`
}

// PricePolicy sets the age, in days before the report's date, past which a
// price used is warned about (the price's own as-of date; see
// docs/catalog.md).
type PricePolicy struct {
	// MaxSpotAgeDays is the age limit of spot prices and spot advice.
	MaxSpotAgeDays int `json:"maxSpotAgeDays" mapstructure:"max_spot_age_days"`
	// MaxListAgeDays is the age limit of every other price: on-demand list
	// prices and commitment rates.
	MaxListAgeDays int `json:"maxListAgeDays" mapstructure:"max_list_age_days"`
}

// IdlePolicy configures idle-stop and schedules.
type IdlePolicy struct {
	// GPUPercent: below this (p95 of the busiest GPU) an instance is idle.
	GPUPercent float64 `json:"gpuPercent" mapstructure:"gpu_percent"`
	// ScheduleMaxBusyPercent: an always-on instance busy in at most this share
	// of hours gets an on/off schedule.
	ScheduleMaxBusyPercent float64 `json:"scheduleMaxBusyPercent" mapstructure:"schedule_max_busy_percent"`
	// ScheduleMinSavingsPercent: a schedule must cut at least this share of hours.
	ScheduleMinSavingsPercent float64 `json:"scheduleMinSavingsPercent" mapstructure:"schedule_min_savings_percent"`
	// ScheduleMinDays is the fewest days of samples a schedule is derived from.
	ScheduleMinDays float64 `json:"scheduleMinDays" mapstructure:"schedule_min_days"`
	// ScheduleMinWeeks is how many weeks of the window a busy hour of the
	// week must recur in: with fewer weeks of samples a schedule has low
	// confidence; with more, busy samples whose hours do not recur (random
	// spikes) give no schedule.
	ScheduleMinWeeks int `json:"scheduleMinWeeks" mapstructure:"schedule_min_weeks"`
	// ScheduleBufferHours are added before and after each busy stretch.
	ScheduleBufferHours int `json:"scheduleBufferHours" mapstructure:"schedule_buffer_hours"`
	// MinCoverage: an instance whose utilization covers less of its window
	// (0–1) is never judged idle.
	MinCoverage float64 `json:"minCoverage" mapstructure:"min_coverage"`
}

// RightsizePolicy configures rightsizing.
type RightsizePolicy struct {
	// GPUPercent: GPU p95 below this allows a smaller GPU.
	GPUPercent float64 `json:"gpuPercent" mapstructure:"gpu_percent"`
	// GPUMemoryPercent: GPU memory p95 below this allows a smaller GPU.
	GPUMemoryPercent float64 `json:"gpuMemoryPercent" mapstructure:"gpu_memory_percent"`
	// PeakGPUPercent: a GPU whose busiest sample (max) reached this keeps
	// its class, whatever its p95: a spiky workload needs its peaks.
	PeakGPUPercent float64 `json:"peakGpuPercent" mapstructure:"peak_gpu_percent"`
	// HeadroomPercent is added to the peaks a target must hold.
	HeadroomPercent float64 `json:"headroomPercent" mapstructure:"headroom_percent"`
	// HostCPUPercent and HostMemoryPercent: host p95s below both allow a smaller
	// host with the same GPUs.
	HostCPUPercent    float64 `json:"hostCpuPercent" mapstructure:"host_cpu_percent"`
	HostMemoryPercent float64 `json:"hostMemoryPercent" mapstructure:"host_memory_percent"`
	// MinSavingsPercent: a move must save at least this share of the cost.
	MinSavingsPercent float64 `json:"minSavingsPercent" mapstructure:"min_savings_percent"`
}

// ManagedPolicy configures the rules for managed AI items (SageMaker,
// Vertex AI, Azure ML): docs/managed-ai.md#rules.
type ManagedPolicy struct {
	// IdleMinHours is the shortest window over which an endpoint's zero
	// requests make it idle.
	IdleMinHours float64 `json:"idleMinHours" mapstructure:"idle_min_hours"`
	// TargetGPUPercent is the busiest GPU's p95 an endpoint's remaining
	// replicas (or smaller type) may reach; below it, replicas are removed.
	TargetGPUPercent float64 `json:"targetGpuPercent" mapstructure:"target_gpu_percent"`
	// ProductionMinReplicas is the fewest replicas a production-tagged
	// deployment keeps (Microsoft recommends at least 3 in production).
	ProductionMinReplicas int `json:"productionMinReplicas" mapstructure:"production_min_replicas"`
	// IdleShutdownMinutes is the idle shutdown advised where a notebook has
	// none.
	IdleShutdownMinutes float64 `json:"idleShutdownMinutes" mapstructure:"idle_shutdown_minutes"`
	// ClusterScaleDownMinutes: a compute cluster whose idle nodes wait longer
	// than this before scaling down gets a note.
	ClusterScaleDownMinutes float64 `json:"clusterScaleDownMinutes" mapstructure:"cluster_scale_down_minutes"`
	// JobMaxHours: a training or processing job running longer than this on
	// on-demand capacity is advised the service's managed spot.
	JobMaxHours float64 `json:"jobMaxHours" mapstructure:"job_max_hours"`
}

// SpotPolicy configures spot advice.
type SpotPolicy struct {
	// Workloads lists the workload types that may move to spot.
	Workloads []fleet.WorkloadType `json:"workloads" mapstructure:"workloads"`
	// MaxBandIndex: spot is advised only up to this interruption band (0–4).
	MaxBandIndex int `json:"maxBandIndex" mapstructure:"max_band_index"`
	// CheckpointWriteGBps is the speed checkpoints are written at, to size
	// the checkpoint write time from the model's parameter count.
	CheckpointWriteGBps float64 `json:"checkpointWriteGBps" mapstructure:"checkpoint_write_gbps"`
	// CheckpointBytesPerParam is the checkpoint size per parameter (weights,
	// master weights and optimizer state).
	CheckpointBytesPerParam float64 `json:"checkpointBytesPerParam" mapstructure:"checkpoint_bytes_per_param"`
	// CheckpointMinutes is the write time assumed when the model size is unknown.
	CheckpointMinutes float64 `json:"checkpointMinutes" mapstructure:"checkpoint_minutes"`
	// RestartMinutes is the time to get a replacement running and reload.
	RestartMinutes float64 `json:"restartMinutes" mapstructure:"restart_minutes"`
	// InterruptionsPerMonth is assumed where the cloud publishes no rate.
	InterruptionsPerMonth float64 `json:"interruptionsPerMonth" mapstructure:"interruptions_per_month"`
}

// CommitmentPolicy configures commitment advice. Rates come from the
// catalog's commitment data (live Savings Plans rates on AWS scans); a type
// and region without a rate gets no commitment advice.
type CommitmentPolicy struct {
	// Term is the term recommended: "1y" or "3y".
	Term string `json:"term" mapstructure:"term"`
	// Plans maps provider to the commitment kind to buy (pricing.CommitmentKind:
	// compute-savings-plan, ec2-instance-savings-plan, reservation, resource-cud, …).
	Plans map[string]string `json:"plans" mapstructure:"plans"`
	// Payments maps provider to the payment option (no-upfront,
	// partial-upfront, all-upfront); a provider not named takes the one its
	// data has.
	Payments map[string]string `json:"payments" mapstructure:"payments"`
	// Discounts1y and Discounts3y are explicitly configured (negotiated)
	// discounts, fractions of on-demand (0.35 = 35 % off), per provider; set,
	// they replace the catalog's rates for that provider and term. Empty by
	// default: no flat percentage is ever assumed.
	Discounts1y map[string]float64 `json:"discounts1y" mapstructure:"discounts_1y"`
	Discounts3y map[string]float64 `json:"discounts3y" mapstructure:"discounts_3y"`
	// TrendPercent: a change of the last week's usage against the weeks
	// before of at least this percent sizes the commitment on the last week,
	// with a warning and lower confidence.
	TrendPercent float64 `json:"trendPercent" mapstructure:"trend_percent"`
	// Names maps provider to what the recommendation calls its commitment.
	Names map[string]string `json:"names" mapstructure:"names"`
}

// DefaultPolicy returns the documented defaults.
func DefaultPolicy() Policy {
	return Policy{
		Idle: IdlePolicy{
			GPUPercent:                15,
			ScheduleMaxBusyPercent:    60,
			ScheduleMinSavingsPercent: 25,
			ScheduleMinDays:           7,
			ScheduleMinWeeks:          2,
			ScheduleBufferHours:       1,
			MinCoverage:               0.8,
		},
		Rightsize: RightsizePolicy{
			GPUPercent:        50,
			GPUMemoryPercent:  40,
			HeadroomPercent:   20,
			PeakGPUPercent:    80,
			HostCPUPercent:    30,
			HostMemoryPercent: 40,
			MinSavingsPercent: 10,
		},
		Quantize: QuantizePolicy{
			TargetUtilPercent: 70,
			MinReplicas:       2,
			Context:           4096,
			Batch:             8,
			MinSavingsPercent: 10,
		},
		Sharing:    sharing.DefaultPolicy(),
		Governance: governance.DefaultPolicy(),
		Spot: SpotPolicy{
			Workloads:               []fleet.WorkloadType{fleet.Training, fleet.FineTuning, fleet.HPO, fleet.Batch},
			MaxBandIndex:            4,
			CheckpointWriteGBps:     1,
			CheckpointBytesPerParam: 14,
			CheckpointMinutes:       5,
			RestartMinutes:          10,
			InterruptionsPerMonth:   1,
		},
		// Which commitment each cloud sells, and its payment and name, are
		// the clouds' own facts (providers.RegInfo.Purchase): pkg/config
		// fills Plans, Payments and Names from the registry, and a cloud
		// without a plan gets no commitment advice.
		Commitment: CommitmentPolicy{
			Term:         "1y",
			Plans:        map[string]string{},
			Payments:     map[string]string{},
			Discounts1y:  map[string]float64{},
			Discounts3y:  map[string]float64{},
			TrendPercent: 20,
			Names:        map[string]string{},
		},
		Managed: ManagedPolicy{
			IdleMinHours:            72,
			TargetGPUPercent:        50,
			ProductionMinReplicas:   3,
			IdleShutdownMinutes:     60,
			ClusterScaleDownMinutes: 30,
			JobMaxHours:             24,
		},
		MinWindowHours: 168,
		Prices:         PricePolicy{MaxSpotAgeDays: pricing.DefaultMaxSpotAgeDays, MaxListAgeDays: pricing.DefaultMaxListAgeDays},
	}
}

// WithPurchases is p with each provider's commitment kind, payment option
// and name added where p names none: the clouds' own facts
// (providers.RegInfo.Purchase), which pkg/config supplies in the binary.
func (p Policy) WithPurchases(plans, payments, names map[string]string) Policy {
	c := &p.Commitment
	c.Plans, c.Payments, c.Names = addMissing(c.Plans, plans), addMissing(c.Payments, payments), addMissing(c.Names, names)
	return p
}

// addMissing is a copy of m with the entries of add that m lacks.
func addMissing(m, add map[string]string) map[string]string {
	out := make(map[string]string, len(m)+len(add))
	maps.Copy(out, add)
	maps.Copy(out, m)
	return out
}

// PolicyError is a policy value out of range: the config key it is set
// under (e.g. "policy.idle.gpu_percent") and what is wrong with it. The
// command layer turns Key into the flag that set it, when a flag did.
type PolicyError struct {
	Key string
	Msg string
}

func (e *PolicyError) Error() string { return e.Key + ": " + e.Msg }

// MaxPolicyMagnitude bounds every number of the policy: no threshold, count
// or duration the rules use comes near it, so a larger one is a typo.
const MaxPolicyMagnitude = 1e9

// Validate reports the first value out of range as a *PolicyError naming its
// config key: NaN, ±Inf or a magnitude above MaxPolicyMagnitude anywhere,
// then each rule's own range.
func (p Policy) Validate() error {
	if err := checkNumbers(reflect.ValueOf(p), "policy"); err != nil {
		return err
	}
	if err := p.validate(); err != nil {
		var pe *PolicyError
		if errors.As(err, &pe) {
			return pe
		}
		// Sharing and governance name their keys in the text.
		msg := err.Error()
		if key, rest, ok := strings.Cut(msg, ": "); ok && strings.HasPrefix(key, "policy.") && !strings.Contains(key, " ") {
			return &PolicyError{Key: key, Msg: rest}
		}
		if rest, ok := strings.CutPrefix(msg, "governance policy: "); ok {
			return &PolicyError{Key: "policy.governance", Msg: rest}
		}
		return &PolicyError{Key: "policy", Msg: msg}
	}
	return nil
}

// checkNumbers walks v (a struct, map or number) and refuses the first
// number that is not finite or is absurdly large, naming its key.
func checkNumbers(v reflect.Value, key string) error {
	switch v.Kind() {
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			tag := t.Field(i).Tag.Get("mapstructure")
			if tag == "" || tag == "-" || !t.Field(i).IsExported() {
				continue
			}
			if err := checkNumbers(v.Field(i), key+"."+tag); err != nil {
				return err
			}
		}
	case reflect.Map:
		keys := v.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return fmt.Sprint(keys[i]) < fmt.Sprint(keys[j]) })
		for _, k := range keys {
			if err := checkNumbers(v.MapIndex(k), key+"."+fmt.Sprint(k)); err != nil {
				return err
			}
		}
	case reflect.Float32, reflect.Float64:
		f := v.Float()
		switch {
		case math.IsNaN(f) || math.IsInf(f, 0):
			return &PolicyError{Key: key, Msg: fmt.Sprintf("%v is not a finite number", f)}
		case math.Abs(f) > MaxPolicyMagnitude:
			return &PolicyError{Key: key, Msg: fmt.Sprintf("%g is out of range (at most %g)", f, MaxPolicyMagnitude)}
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if n := v.Int(); n > MaxPolicyMagnitude || n < -MaxPolicyMagnitude {
			return &PolicyError{Key: key, Msg: fmt.Sprintf("%d is out of range (at most %g)", n, MaxPolicyMagnitude)}
		}
	}
	return nil
}

// Upper bounds of the policy's open-ended values.
const (
	maxWindowHours    = 455 * 24 // CloudWatch keeps hourly data 455 days
	maxContextTokens  = 10_000_000
	maxBatch          = 1_000_000
	maxReplicas       = 100_000
	maxSpotMinutes    = 7 * 24 * 60
	maxInterruptions  = 30 * 24 * 60 // one a minute
	maxWriteGBps      = 1000
	maxBytesPerParam  = 64
	maxScheduleMinDay = 455
)

func (p Policy) validate() error {
	pct := []struct {
		key string
		v   float64
	}{
		{"policy.idle.gpu_percent", p.Idle.GPUPercent},
		{"policy.idle.schedule_max_busy_percent", p.Idle.ScheduleMaxBusyPercent},
		{"policy.idle.schedule_min_savings_percent", p.Idle.ScheduleMinSavingsPercent},
		{"policy.rightsize.gpu_percent", p.Rightsize.GPUPercent},
		{"policy.rightsize.gpu_memory_percent", p.Rightsize.GPUMemoryPercent},
		{"policy.rightsize.headroom_percent", p.Rightsize.HeadroomPercent},
		{"policy.rightsize.peak_gpu_percent", p.Rightsize.PeakGPUPercent},
		{"policy.rightsize.host_cpu_percent", p.Rightsize.HostCPUPercent},
		{"policy.rightsize.host_memory_percent", p.Rightsize.HostMemoryPercent},
		{"policy.rightsize.min_savings_percent", p.Rightsize.MinSavingsPercent},
		{"policy.quantize.min_savings_percent", p.Quantize.MinSavingsPercent},
	}
	for _, c := range pct {
		if c.v < 0 || c.v > 100 {
			return fmt.Errorf("%s: %v is outside 0–100", c.key, c.v)
		}
	}
	if p.Quantize.TargetUtilPercent <= 0 || p.Quantize.TargetUtilPercent > 100 {
		return fmt.Errorf("policy.quantize.target_util_percent: %v is outside (0, 100]", p.Quantize.TargetUtilPercent)
	}
	for _, c := range []struct {
		key      string
		v, limit int
	}{
		{"policy.quantize.min_replicas", p.Quantize.MinReplicas, maxReplicas},
		{"policy.quantize.context", p.Quantize.Context, maxContextTokens},
		{"policy.quantize.batch", p.Quantize.Batch, maxBatch},
	} {
		if c.v < 1 || c.v > c.limit {
			return fmt.Errorf("%s: %d is outside 1–%d", c.key, c.v, c.limit)
		}
	}
	if err := p.Sharing.Validate(); err != nil {
		return err
	}
	if err := p.Governance.Validate(); err != nil {
		return err
	}
	if p.Idle.ScheduleMinWeeks < 1 || p.Idle.ScheduleMinWeeks > 8 {
		return fmt.Errorf("policy.idle.schedule_min_weeks: %d is outside 1–8", p.Idle.ScheduleMinWeeks)
	}
	if p.Idle.ScheduleMinDays < 1 || p.Idle.ScheduleMinDays > maxScheduleMinDay {
		return fmt.Errorf("policy.idle.schedule_min_days: %v is outside 1–%d", p.Idle.ScheduleMinDays, maxScheduleMinDay)
	}
	if p.Idle.MinCoverage < 0 || p.Idle.MinCoverage > 1 {
		return fmt.Errorf("policy.idle.min_coverage: %v is outside 0–1", p.Idle.MinCoverage)
	}
	if p.Idle.ScheduleBufferHours < 0 || p.Idle.ScheduleBufferHours > 6 {
		return fmt.Errorf("policy.idle.schedule_buffer_hours: %d is outside 0–6", p.Idle.ScheduleBufferHours)
	}
	if p.Spot.MaxBandIndex < 0 || p.Spot.MaxBandIndex > 4 {
		return fmt.Errorf("policy.spot.max_band_index: %d is outside 0–4", p.Spot.MaxBandIndex)
	}
	for _, c := range []struct {
		key      string
		v, limit float64
	}{
		{"policy.spot.checkpoint_write_gbps", p.Spot.CheckpointWriteGBps, maxWriteGBps},
		{"policy.spot.checkpoint_bytes_per_param", p.Spot.CheckpointBytesPerParam, maxBytesPerParam},
		{"policy.spot.checkpoint_minutes", p.Spot.CheckpointMinutes, maxSpotMinutes},
		{"policy.spot.interruptions_per_month", p.Spot.InterruptionsPerMonth, maxInterruptions},
	} {
		if c.v <= 0 || c.v > c.limit {
			return fmt.Errorf("%s: %v is outside (0, %v]", c.key, c.v, c.limit)
		}
	}
	if p.Spot.RestartMinutes < 0 || p.Spot.RestartMinutes > maxSpotMinutes {
		return fmt.Errorf("policy.spot.restart_minutes: %v is outside 0–%d", p.Spot.RestartMinutes, maxSpotMinutes)
	}
	for i, w := range p.Spot.Workloads {
		if !validWorkload(w) {
			return fmt.Errorf("policy.spot.workloads[%d]: %q is not one of %s", i, w, workloadList())
		}
	}
	if p.Commitment.Term != "1y" && p.Commitment.Term != "3y" {
		return fmt.Errorf("policy.commitment.term: %q is not 1y or 3y", p.Commitment.Term)
	}
	for _, m := range []struct {
		key string
		v   map[string]float64
	}{{"policy.commitment.discounts_1y", p.Commitment.Discounts1y}, {"policy.commitment.discounts_3y", p.Commitment.Discounts3y}} {
		keys := make([]string, 0, len(m.v))
		for k := range m.v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if !fleet.Provider(k).Valid() {
				return fmt.Errorf("%s: %q is not a provider (aws, azure, gcp)", m.key, k)
			}
			if d := m.v[k]; !(d >= 0 && d < 1) {
				return fmt.Errorf("%s.%s: %v is not a fraction in [0, 1)", m.key, k, d)
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(p.Commitment.Plans)) {
		if !fleet.Provider(k).Valid() {
			return fmt.Errorf("policy.commitment.plans: %q is not a provider (aws, azure, gcp)", k)
		}
		if kind := pricing.CommitmentKind(p.Commitment.Plans[k]); !kind.Valid() || kind == pricing.CapacityBlock {
			return fmt.Errorf("policy.commitment.plans.%s: %q is not a commitment kind (compute-savings-plan, ec2-instance-savings-plan, standard-reserved-instance, convertible-reserved-instance, reservation, azure-savings-plan, resource-cud)", k, p.Commitment.Plans[k])
		}
	}
	for _, k := range slices.Sorted(maps.Keys(p.Commitment.Payments)) {
		if !fleet.Provider(k).Valid() {
			return fmt.Errorf("policy.commitment.payments: %q is not a provider (aws, azure, gcp)", k)
		}
		if v := p.Commitment.Payments[k]; !slices.Contains(paymentOptions, v) {
			return fmt.Errorf("policy.commitment.payments.%s: %q is not one of %s", k, v, strings.Join(paymentOptions, ", "))
		}
	}
	if t := p.Commitment.TrendPercent; !(t > 0 && t <= 100) {
		return fmt.Errorf("policy.commitment.trend_percent: %v is outside (0, 100]", t)
	}
	if err := p.Managed.validate(); err != nil {
		return err
	}
	if p.MinWindowHours < 0 || p.MinWindowHours > maxWindowHours {
		return fmt.Errorf("policy.min_window_hours: %v is outside 0–%d", p.MinWindowHours, maxWindowHours)
	}
	for _, a := range []struct {
		key  string
		days int
	}{{"policy.prices.max_spot_age_days", p.Prices.MaxSpotAgeDays}, {"policy.prices.max_list_age_days", p.Prices.MaxListAgeDays}} {
		if a.days < 1 || a.days > 36500 {
			return fmt.Errorf("%s: %d is outside 1–36500 days", a.key, a.days)
		}
	}
	return nil
}

var paymentOptions = []string{pricing.PayNoUpfront, pricing.PayPartialUpfront, pricing.PayAllUpfront, pricing.PayUpfrontOrMonthly, pricing.PayMonthly}

func validWorkload(w fleet.WorkloadType) bool {
	for _, v := range fleet.WorkloadTypes {
		if v == w {
			return true
		}
	}
	return false
}

func workloadList() string {
	s := make([]string, len(fleet.WorkloadTypes))
	for i, w := range fleet.WorkloadTypes {
		s[i] = string(w)
	}
	return strings.Join(s, ", ")
}

func (m ManagedPolicy) validate() error {
	if t := m.TargetGPUPercent; !(t > 0 && t <= 100) {
		return fmt.Errorf("policy.managed.target_gpu_percent: %v is outside (0, 100]", t)
	}
	if m.ProductionMinReplicas < 1 || m.ProductionMinReplicas > maxReplicas {
		return fmt.Errorf("policy.managed.production_min_replicas: %d is outside 1–%d", m.ProductionMinReplicas, maxReplicas)
	}
	for _, c := range []struct {
		key      string
		v, limit float64
	}{
		{"policy.managed.idle_min_hours", m.IdleMinHours, maxWindowHours},
		{"policy.managed.idle_shutdown_minutes", m.IdleShutdownMinutes, maxSpotMinutes},
		{"policy.managed.cluster_scale_down_minutes", m.ClusterScaleDownMinutes, maxSpotMinutes},
		{"policy.managed.job_max_hours", m.JobMaxHours, maxWindowHours},
	} {
		if c.v <= 0 || c.v > c.limit {
			return fmt.Errorf("%s: %v is outside (0, %v]", c.key, c.v, c.limit)
		}
	}
	return nil
}
