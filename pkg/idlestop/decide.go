package idlestop

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/protect"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/providers"
)

// Candidate is one machine to decide on.
type Candidate struct {
	// Instance carries the state, tags, launch time and Utilization.Samples
	// over the window (Utilization.Window, when set, gives its end).
	Instance fleet.Instance
	// Scope is where the instance lives and how it is stopped.
	Scope providers.Scope
	// Hourly is the instance's hourly price; nil when unpriced.
	Hourly *pricing.Price
	// Period is the sampling period of the samples; zero infers it from the
	// smallest gap between samples (60s with a single sample).
	Period time.Duration
}

// Action is what Decide chose for a machine.
type Action string

// The two decisions.
const (
	Stop Action = "stop"
	Skip Action = "skip"
)

// Reason is a stable, machine-readable code for a decision.
type Reason string

// The reasons, in the order Decide checks them, then the reasons Execute adds.
const (
	ReasonAlreadyStopped   Reason = "already-stopped"
	ReasonNotSelected      Reason = "not-selected"
	ReasonExempt           Reason = "exempt"
	ReasonOptedOut         Reason = "opted-out"
	ReasonNotOptedIn       Reason = "not-opted-in"
	ReasonProduction       Reason = "production"
	ReasonSpotNotStoppable Reason = "spot-not-stoppable"
	ReasonJustLaunched     Reason = "just-launched"
	ReasonNoMetrics        Reason = "no-metrics"
	ReasonPartialMetrics   Reason = "partial-metrics"
	ReasonStaleMetrics     Reason = "stale-metrics"
	ReasonBusy             Reason = "busy"
	// ReasonManaged: an Auto Scaling group, node pool or cluster service
	// owns the machine; the message names it and what to do instead.
	ReasonManaged Reason = "managed"
	// ReasonLaunchUnknown: a running machine without a launch time.
	ReasonLaunchUnknown Reason = "launch-time-unknown"
	// ReasonInference: an inference or serving workload.
	ReasonInference Reason = "inference"
	// ReasonPartialGPUs: some of the instance's GPUs did not report.
	ReasonPartialGPUs Reason = "partial-gpus"
	// ReasonGPUMemoryHeld: GPU memory in use above the policy's share.
	ReasonGPUMemoryHeld Reason = "gpu-memory-held"
	// ReasonCPUBusy: the host CPU is busy.
	ReasonCPUBusy Reason = "cpu-busy"
	// ReasonInstanceStore: instance-store disks and protect_instance_store.
	ReasonInstanceStore Reason = "instance-store"
	ReasonIdle          Reason = "idle"
	// ReasonStoppedAllocated: the machine is powered off but still
	// allocated (Azure PowerState/stopped), so billed as if running; it is
	// deallocated without metrics, the power state being the evidence.
	ReasonStoppedAllocated Reason = "stopped-allocated"
	// ReasonGone: the re-check no longer found the machine.
	ReasonGone Reason = "gone"
	// ReasonRecheckFailed: the re-check failed, so nothing was stopped.
	ReasonRecheckFailed Reason = "recheck-failed"
	// ReasonMultiHost: an idle host of a multi-host job whose other hosts
	// work.
	ReasonMultiHost Reason = "multi-host"
	// ReasonManagedKind: an item of a managed AI service other than a
	// notebook (an endpoint, a job, a compute cluster, a Studio app), which
	// idle-stop never stops; the message says what to do instead.
	ReasonManagedKind = Reason(protect.ReasonManagedKind)
)

// The tags Decide reads besides the policy's exemption tag and selectors.
const (
	TagAutoShutdown = "AutoShutdown"
	TagEnvironment  = "Environment"
)

// Metrics are the figures a decision was made on.
type Metrics struct {
	// GPUMaxPercent is the busiest GPU's highest utilization in the window;
	// GPUAvgPercent the busiest GPU's average over the samples.
	GPUMaxPercent float64 `json:"gpuMaxPercent"`
	GPUAvgPercent float64 `json:"gpuAvgPercent"`
	// Samples is the number of samples with GPU values in the window.
	Samples int `json:"samples"`
	// Coverage is the share (0–1) of the window the samples cover.
	Coverage float64 `json:"coverage"`
	// Latest is the time of the latest GPU sample, if any.
	Latest      *time.Time `json:"latest,omitempty"`
	WindowStart time.Time  `json:"windowStart"`
	WindowEnd   time.Time  `json:"windowEnd"`
}

// Decision is the outcome for one machine: stop or skip, why, and after
// Execute what happened.
type Decision struct {
	Time         time.Time         `json:"time"`
	Provider     fleet.Provider    `json:"provider"`
	Account      string            `json:"account,omitempty"`
	Region       string            `json:"region,omitempty"`
	ResourceID   string            `json:"resourceId"`
	Name         string            `json:"name,omitempty"`
	InstanceType string            `json:"instanceType,omitempty"`
	Tags         map[string]string `json:"tags,omitempty"`
	Metrics      Metrics           `json:"metrics"`
	Decision     Action            `json:"decision"`
	Reason       Reason            `json:"reason"`
	// Message says the reason in a sentence.
	Message string `json:"message"`
	// ManagedBy is the controller that owns the machine, if any.
	ManagedBy *fleet.ManagedBy `json:"managedBy,omitempty"`
	// Service and ManagedKind say what a managed AI service's item is
	// (a notebook is stopped through the service's own stop API); empty
	// for a VM.
	Service     fleet.ManagedService `json:"service,omitempty"`
	ManagedKind fleet.ManagedKind    `json:"managedKind,omitempty"`
	// Warnings are what a stop costs besides the machine's work: the data
	// on instance-store disks, a hibernation setting not used.
	Warnings []string `json:"warnings,omitempty"`
	// HourlySavings and MonthlySavings (hourly × 730) are what stopping saves;
	// zero for skips and unpriced machines.
	HourlySavings  Amount `json:"hourlySavings"`
	MonthlySavings Amount `json:"monthlySavings"`
	// Executed is true when a real stop was sent.
	Executed bool `json:"executed"`
	// Result is the stop's outcome (see the Result* constants); empty for
	// skips.
	Result string `json:"result,omitempty"`
	// Error is the error a stop (or the run) ended with.
	Error string `json:"error,omitempty"`
	// Scope is where the machine is stopped; not logged (Provider, Account
	// and Region are).
	Scope providers.Scope `json:"-"`
}

// Decide makes exactly one Decision per candidate, in input order. It is pure
// and deterministic: the same candidates, now and policy give the same
// decisions. The checks run in this order and the first that applies skips
// the machine: a managed AI service's item other than a notebook (never
// stopped: an endpoint, job, compute cluster or Studio app), not running, selectors, owned by a controller, exemption,
// AutoShutdown opt-out (or missing opt-in), production, spot, unknown launch
// time, uptime, inference workload, no metrics, partial metrics, GPUs
// missing from the samples, stale metrics, busy GPU, GPU memory held, busy
// host CPU, instance store (when protected); a machine that passes all of
// them is stopped as idle, with warnings for instance store and
// hibernation. Tag keys compare ignoring case, '-', '_' and spaces, values
// ignoring case; a protection tag whose value is not recognised protects.
//
// The protections (owner, exemption, opt-out, production, spot, inference,
// GPU memory held, busy CPU, multi-host peers) are pkg/protect's, the same
// analyze applies. An idle machine that shares a multi-host group (a job,
// cluster, placement group or slice tag) with a candidate that works, or
// whose data cannot show it idle, is left running (multi-host).
func Decide(in []Candidate, now time.Time, p Policy) []Decision {
	p = p.effective()
	pp := p.Protection()
	insts := make([]*fleet.Instance, len(in))
	for i := range in {
		insts[i] = &in[i].Instance
	}
	peers := protect.NewPeers(insts, func(i int) bool { return working(in[i], now, p, pp) }, pp)
	out := make([]Decision, 0, len(in))
	for i, c := range in {
		d := decide(c, now, p, pp)
		if d.Decision == Stop && d.Reason != ReasonStoppedAllocated {
			if f := peers.Check(i); f != nil {
				d.Decision, d.Reason, d.Message, d.Warnings = Skip, ReasonMultiHost, f.Message, nil
				d.HourlySavings, d.MonthlySavings = Amount{}, Amount{}
			}
		}
		out = append(out, d)
	}
	return out
}

// working reports whether a running candidate works in the window, or its
// data cannot show it idle: what keeps its multi-host peers running.
func working(c Candidate, now time.Time, p Policy, pp protect.Policy) bool {
	if c.Instance.State != fleet.Running || c.Instance.StoppedAllocated {
		return false
	}
	ev := measure(c, now, p)
	if !ev.hasGPU || ev.m.Coverage < p.MinCoverage || ev.maxGPUs < ev.wantGPUs || ev.rawMax >= p.GPUPercent {
		return true
	}
	return protect.InUse(ev.shared(), p.Window.String(), pp) != nil
}

func decide(c Candidate, now time.Time, p Policy, pp protect.Policy) Decision {
	p = p.effective()
	inst := c.Instance
	d := Decision{
		Time:         now,
		Provider:     inst.Provider,
		Account:      inst.Account,
		Region:       inst.Region,
		ResourceID:   inst.ID,
		Name:         inst.Name,
		InstanceType: inst.InstanceType,
		Tags:         copyTags(inst.Tags),
		Decision:     Skip,
		Scope:        c.Scope,
	}
	if d.Provider == "" {
		d.Provider = c.Scope.Provider
	}
	if d.Account == "" {
		d.Account = c.Scope.Account
	}
	if d.Region == "" {
		d.Region = c.Scope.Region
	}
	ev := measure(c, now, p)
	m := ev.m
	d.Metrics = m
	skip := func(r Reason, format string, args ...any) Decision {
		d.Reason, d.Message = r, fmt.Sprintf(format, args...)
		return d
	}
	if owner := protect.Owner(&inst, pp); owner != nil {
		d.ManagedBy = owner
	}
	if m := inst.Managed; m != nil {
		d.Service, d.ManagedKind = m.Service, m.Kind
	}
	if f := protect.ManagedKind(&inst); f != nil {
		return skip(ReasonManagedKind, "%s", f.Message)
	}
	if inst.State != fleet.Running {
		state := string(inst.State)
		if state == "" {
			state = "unknown"
		}
		return skip(ReasonAlreadyStopped, "the machine is %s, not running", state)
	}
	if sel, ok := selected(inst.Tags, p); !ok {
		return skip(ReasonNotSelected, "the machine lacks the selector tag %s", sel)
	}
	if o := d.ManagedBy; o != nil {
		name := ""
		if o.Name != "" {
			name = " " + o.Name
		}
		return skip(ReasonManaged, "the machine is managed by %s%s, which would replace or miss it: %s", o.Kind, name, fleet.OwnerAction(o.Kind))
	}
	if f := protect.Tags(inst.Tags, pp); f != nil {
		return skip(Reason(f.Reason), "%s", f.Message)
	}
	if f := protect.Spot(&inst); f != nil {
		return skip(ReasonSpotNotStoppable, "%s", f.Message)
	}
	if inst.StoppedAllocated {
		return stoppedAllocated(d, c, inst, p, pp)
	}
	if inst.LaunchTime == nil || inst.LaunchTime.IsZero() {
		return skip(ReasonLaunchUnknown, "the machine's launch time is unknown, so its uptime cannot be checked")
	}
	if up := now.Sub(*inst.LaunchTime); up < p.MinUptime {
		return skip(ReasonJustLaunched, "the machine was launched %s ago, less than the minimum uptime of %s", roundDur(up), p.MinUptime)
	}
	if p.ProtectInference {
		if f := protect.Inference(&inst, pp); f != nil {
			return skip(ReasonInference, "%s; set idle_stop.protect_inference false to judge it by utilization", f.Message)
		}
	}
	if !ev.hasGPU {
		if ev.summaryOnly {
			return skip(ReasonNoMetrics, "the machine has only summary GPU statistics, no samples to judge the last %s on", p.Window)
		}
		return skip(ReasonNoMetrics, "the machine has no GPU metrics")
	}
	if m.Coverage < p.MinCoverage {
		return skip(ReasonPartialMetrics, "GPU samples cover %.1f %% of the last %s, less than the required %.1f %%", m.Coverage*100, p.Window, p.MinCoverage*100)
	}
	if ev.maxGPUs < ev.wantGPUs || ev.fullCoverage < p.MinCoverage {
		return skip(ReasonPartialGPUs, "samples with all %d GPUs reporting cover %.1f %% of the last %s (at most %d GPUs reported in a sample): a GPU without data is not idle", ev.wantGPUs, ev.fullCoverage*100, p.Window, ev.maxGPUs)
	}
	if age := m.WindowEnd.Sub(ev.latest); age > p.StaleAfter {
		return skip(ReasonStaleMetrics, "the latest GPU sample is %s old, older than %s", roundDur(age), p.StaleAfter)
	}
	if ev.rawMax >= p.GPUPercent {
		return skip(ReasonBusy, "the busiest GPU reached %.1f %% in the last %s (threshold %.4g %%)", m.GPUMaxPercent, p.Window, p.GPUPercent)
	}
	if f := protect.InUse(ev.shared(), "the last "+p.Window.String(), pp); f != nil {
		return skip(Reason(f.Reason), "%s", f.Message)
	}
	if f := instanceStore(&d, inst, p); f != nil {
		return skip(ReasonInstanceStore, "%s", *f)
	}
	if inst.Hibernation {
		d.Warnings = append(d.Warnings, "hibernation is enabled: idle-stop stops the machine (it never hibernates), so its memory is not kept")
	}
	d.Decision, d.Reason = Stop, ReasonIdle
	d.Message = fmt.Sprintf("every GPU stayed below %.4g %% for the last %s (max %.1f %%, average %.1f %%)", p.GPUPercent, p.Window, m.GPUMaxPercent, m.GPUAvgPercent)
	setSavings(&d, c)
	return d
}

// stoppedAllocated decides on a machine powered off but still allocated
// (Azure PowerState/stopped), whose selector, owner, tags and spot
// protections already passed: it does no work and is billed as if running,
// so it is deallocated with no metrics and no uptime check, the power state
// being the evidence. Inference protection and instance store still apply;
// multi-host peers do not (a powered-off host does no work for its job),
// as in analyze's deallocate advice.
func stoppedAllocated(d Decision, c Candidate, inst fleet.Instance, p Policy, pp protect.Policy) Decision {
	if p.ProtectInference {
		if f := protect.Inference(&inst, pp); f != nil {
			d.Reason = ReasonInference
			d.Message = f.Message + "; set idle_stop.protect_inference false to judge it by utilization"
			return d
		}
	}
	if f := instanceStore(&d, inst, p); f != nil {
		d.Reason, d.Message = ReasonInstanceStore, *f
		return d
	}
	d.Decision, d.Reason = Stop, ReasonStoppedAllocated
	d.Message = "the machine is powered off but still allocated, so it is billed as if running: deallocating it ends its compute billing"
	setSavings(&d, c)
	return d
}

// instanceStore warns (once) that a stop loses the machine's instance
// store, or, under protect_instance_store, returns why it is skipped.
func instanceStore(d *Decision, inst fleet.Instance, p Policy) *string {
	if inst.InstanceStoreGB <= 0 {
		return nil
	}
	if p.ProtectInstanceStore {
		msg := fmt.Sprintf("the machine has %.0f GB of instance store, whose data a stop loses, and idle_stop.protect_instance_store is set", inst.InstanceStoreGB)
		return &msg
	}
	d.Warnings = append(d.Warnings, fmt.Sprintf("instance store: stopping loses the data on the %.0f GB of local NVMe disks (idle_stop.protect_instance_store keeps such machines running)", inst.InstanceStoreGB))
	return nil
}

func setSavings(d *Decision, c Candidate) {
	if h, ok := hourly(c); ok {
		d.HourlySavings = Amount{h}
		d.MonthlySavings = Amount{h.Mul(decimal.NewFromFloat(fleet.HoursPerMonth)).Round(2)}
	}
}

// shared is the evidence in pkg/protect's form.
func (ev evidence) shared() protect.Evidence {
	return protect.Evidence{HasGPU: ev.hasGPU, GPUMax: ev.rawMax, WantGPUs: ev.wantGPUs, MaxGPUs: ev.maxGPUs,
		HasMem: ev.hasMem, MemMax: ev.memMax, HasCPU: ev.hasCPU, CPUP95: ev.cpuP95}
}

// hourly is the machine's hourly price: the instance's own override first,
// else the candidate's price.
func hourly(c Candidate) (decimal.Decimal, bool) {
	if c.Instance.HourlyPrice != nil {
		return *c.Instance.HourlyPrice, true
	}
	if c.Hourly != nil {
		return c.Hourly.Hourly, true
	}
	return decimal.Zero, false
}

// evidence is what the samples of the window say.
type evidence struct {
	m Metrics
	// rawMax is the unrounded busiest GPU; latest the latest GPU sample at
	// or before the window's end (any age).
	rawMax float64
	latest time.Time
	// hasGPU: any GPU sample exists; summaryOnly: the utilization has
	// summary statistics but no samples.
	hasGPU, summaryOnly bool
	// wantGPUs is how many GPUs every sample must carry; maxGPUs the most
	// one did; fullCoverage the share of the window covered by samples with
	// all of them.
	wantGPUs, maxGPUs int
	fullCoverage      float64
	// memMax is the highest GPU memory use, cpuP95 the host CPU's p95, each
	// when the samples carry it.
	memMax, cpuP95 float64
	hasMem, hasCPU bool
}

// measure reads the samples of the policy window [end-Window, end), where end
// is the utilization window's end or now. Only samples that start inside the
// window count. A sample counts as full evidence only when every GPU of the
// instance (GPU.Count rounded up, at least one) has a finite value.
func measure(c Candidate, now time.Time, p Policy) (ev evidence) {
	end := now
	u := c.Instance.Utilization
	if u != nil && u.Window != nil && !u.Window.End.IsZero() {
		end = u.Window.End
	}
	start := end.Add(-p.Window)
	ev.m.WindowStart, ev.m.WindowEnd = start, end
	ev.wantGPUs = wantGPUs(c.Instance.GPU.Count)
	if u == nil {
		return ev
	}
	var times, full []time.Time
	var sum float64
	var cpus []float64
	for _, s := range u.Samples {
		busiest, n := maxFinite(s.GPU)
		if n == 0 || s.Time.After(end) {
			continue
		}
		if !ev.hasGPU || s.Time.After(ev.latest) {
			ev.latest = s.Time
		}
		ev.hasGPU = true
		if s.Time.Before(start) || !s.Time.Before(end) {
			continue
		}
		if ev.m.Samples == 0 || busiest > ev.rawMax {
			ev.rawMax = busiest
		}
		sum += busiest
		ev.m.Samples++
		times = append(times, s.Time)
		ev.maxGPUs = max(ev.maxGPUs, n)
		if n >= ev.wantGPUs {
			full = append(full, s.Time)
		}
		if mem, k := maxFinite(s.GPUMemory); k > 0 {
			ev.memMax = max(ev.memMax, mem)
			ev.hasMem = true
		}
		if s.CPU != nil && !math.IsNaN(*s.CPU) && !math.IsInf(*s.CPU, 0) {
			cpus = append(cpus, *s.CPU)
		}
	}
	if ev.hasGPU {
		l := ev.latest
		ev.m.Latest = &l
	}
	ev.summaryOnly = !ev.hasGPU && u.GPU != nil
	if ev.m.Samples > 0 {
		ev.m.GPUAvgPercent = round2(sum / float64(ev.m.Samples))
		ev.m.GPUMaxPercent = round2(ev.rawMax)
		period := c.Period
		if period <= 0 {
			period = inferPeriod(times)
		}
		// A window that reaches past now (the re-check's current minute)
		// is judged for coverage up to the last complete minute: data that
		// cannot exist yet is not missing.
		covEnd := end
		if end.After(now) {
			covEnd = now.Truncate(time.Minute)
			if !covEnd.After(start) {
				covEnd = end
			}
		}
		ev.m.Coverage = coverage(times, start, covEnd, period)
		ev.fullCoverage = coverage(full, start, covEnd, period)
	}
	if len(cpus) > 0 {
		ev.hasCPU = true
		ev.cpuP95 = fleet.Percentile(sortedCopy(cpus), 95)
	}
	return ev
}

// wantGPUs is the number of GPUs a sample must carry: the instance type's
// count rounded up (a partition counts as one), at least one.
func wantGPUs(count float64) int {
	if math.IsNaN(count) || math.IsInf(count, 0) || count <= 1 {
		return 1
	}
	if count > 1024 {
		return 1024
	}
	return int(math.Ceil(count))
}

func sortedCopy(v []float64) []float64 {
	out := append([]float64(nil), v...)
	sort.Float64s(out)
	return out
}

// inferPeriod is the smallest gap between distinct sample times, or a minute
// with a single sample.
func inferPeriod(times []time.Time) time.Duration {
	ts := append([]time.Time(nil), times...)
	sort.Slice(ts, func(i, j int) bool { return ts[i].Before(ts[j]) })
	var period time.Duration
	for i := 1; i < len(ts); i++ {
		if g := ts[i].Sub(ts[i-1]); g > 0 && (period <= 0 || g < period) {
			period = g
		}
	}
	if period <= 0 {
		period = time.Minute
	}
	return period
}

// coverage is the share of [start, end) covered by samples that each cover
// [t, t+period). The period, when not given, is the smallest gap between
// distinct sample times, or a minute with a single sample.
func coverage(times []time.Time, start, end time.Time, period time.Duration) float64 {
	sort.Slice(times, func(i, j int) bool { return times[i].Before(times[j]) })
	if period <= 0 {
		for i := 1; i < len(times); i++ {
			if g := times[i].Sub(times[i-1]); g > 0 && (period <= 0 || g < period) {
				period = g
			}
		}
		if period <= 0 {
			period = time.Minute
		}
	}
	var covered time.Duration
	var reach time.Time // covered up to here
	for _, t := range times {
		from, to := t, t.Add(period)
		if to.After(end) {
			to = end
		}
		if from.Before(reach) {
			from = reach
		}
		if to.After(from) {
			covered += to.Sub(from)
			reach = to
		}
	}
	total := end.Sub(start)
	if total <= 0 {
		return 0
	}
	return math.Min(1, round4(float64(covered)/float64(total)))
}

// maxFinite is the highest finite value and how many values are finite.
func maxFinite(v fleet.PerGPU) (float64, int) {
	var best float64
	n := 0
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			continue
		}
		if n == 0 || x > best {
			best = x
		}
		n++
	}
	return best, n
}

func copyTags(t map[string]string) map[string]string {
	if len(t) == 0 {
		return nil
	}
	out := make(map[string]string, len(t))
	for k, v := range t {
		out[k] = v
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func roundDur(d time.Duration) time.Duration {
	if d > time.Minute {
		return d.Round(time.Second)
	}
	return d.Round(time.Millisecond)
}

func round2(v float64) float64 { return math.Round(v*100) / 100 }
func round4(v float64) float64 { return math.Round(v*10000) / 10000 }
