package fleet

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // schedule time zones must resolve wherever the binary runs

	"github.com/shopspring/decimal"
)

// Limits of the file format. The bounds on hardware and prices lie far
// above any instance a cloud sells, so a value beyond them is a typo or a
// unit mix-up (MiB for GiB, cents for dollars), not a big machine.
const (
	// MaxHoursPerMonth is the most hours a calendar month has (31 × 24).
	MaxHoursPerMonth = 744.0
	// MaxGPUsPerInstance bounds gpu.count and the values of a per-GPU sample.
	MaxGPUsPerInstance = 64
	// MaxGPUMemoryGiB bounds gpu.memoryGiB (memory of one GPU).
	MaxGPUMemoryGiB = 1024
	// MaxVCPUs bounds vcpus.
	MaxVCPUs = 4096
	// MaxMemoryGiB bounds memoryGiB (host memory).
	MaxMemoryGiB = 65536
	// MaxHourlyPrice bounds hourlyPrice, in USD per instance-hour.
	MaxHourlyPrice = 10000
	// MaxParamsBillions bounds workload.paramsBillions (100 trillion).
	MaxParamsBillions = 100000
	// MaxThroughput bounds workload.tokensPerSecond and requestsPerSecond.
	MaxThroughput = 1e9
	// MaxTrainingRunHours bounds workload.trainingRunHours (about 11 years).
	MaxTrainingRunHours = 100000
	// MaxWindow bounds the span of a utilization window.
	MaxWindow = 10 * 365 * 24 * time.Hour
)

var maxHourlyPrice = decimal.NewFromInt(MaxHourlyPrice)

// Precisions lists the valid workload precisions.
var Precisions = []string{"fp32", "fp16", "bf16", "int8", "int4"}

// Lifecycles lists the valid lifecycles.
var Lifecycles = []Lifecycle{OnDemand, Spot, Committed}

// States lists the valid instance states.
var States = []State{Running, Stopped}

// applyDefaults fills what a file may leave out: lifecycle on-demand, state
// running, a workload read from the tags when there is no workload block
// (WorkloadFromTags) and the owner read from the tags when there is no
// managedBy (DetectOwner).
func (f *Fleet) applyDefaults() {
	for i := range f.Instances {
		in := &f.Instances[i]
		if in.Lifecycle == "" {
			in.Lifecycle = OnDemand
		}
		if in.State == "" {
			in.State = Running
		}
		if in.Workload == nil {
			in.Workload = WorkloadFromTags(in.Tags)
		}
		if in.ManagedBy == nil {
			in.ManagedBy = DetectOwner(in.ID, in.Tags)
		}
	}
}

// Validate checks the fleet against the rules of the file format and returns
// the first problem, in document order, as an *Error; nil when there is none.
func (f *Fleet) Validate() error {
	c := &checker{inst: -1}
	if f.APIVersion != APIVersion {
		c.failf("apiVersion", "found %q, want %q", f.APIVersion, APIVersion)
	}
	if f.Kind != Kind {
		c.failf("kind", "found %q, want %q", f.Kind, Kind)
	}
	for i, w := range f.Metadata.Warnings {
		c.scanWarning(fmt.Sprintf("metadata.warnings[%d].", i), w)
	}
	seen := map[string]int{}
	for i := range f.Instances {
		in := &f.Instances[i]
		c.inst = i
		if in.ID == "" {
			c.failf("id", "missing")
		} else if j, dup := seen[in.ID]; dup {
			c.failf("id", "%q is already the id of instances[%d]", in.ID, j)
		} else {
			seen[in.ID] = i
		}
		c.instance(in)
	}
	c.commitments(f)
	if c.first == nil {
		return nil
	}
	return locate(c.first.path, func(i int) string {
		if i < len(f.Instances) {
			return f.Instances[i].ID
		}
		return ""
	}, c.first.msg)
}

type problem struct{ path, msg string }

// checker keeps the first problem found; later checks are no-ops. A check
// names the field it checks below the path in inst and at, which is spelled
// only for a problem: a fleet without one builds no paths.
type checker struct {
	first *problem
	// inst is the index of the instance being checked, or -1 outside the
	// instances.
	inst int
	// at are the parts of the path below the instance, if any.
	at []string
}

func (c *checker) failf(field, format string, args ...any) {
	if c.first == nil {
		c.first = &problem{c.path(field), fmt.Sprintf(format, args...)}
	}
}

// path spells the path to field.
func (c *checker) path(field string) string {
	var b strings.Builder
	if c.inst >= 0 {
		fmt.Fprintf(&b, "instances[%d].", c.inst)
	}
	for _, p := range c.at {
		b.WriteString(p)
	}
	b.WriteString(field)
	return b.String()
}

// enter makes part the next part of the path; leave drops it.
func (c *checker) enter(part string) { c.at = append(c.at, part) }

func (c *checker) leave() { c.at = c.at[:len(c.at)-1] }

func (c *checker) instance(in *Instance) {
	switch {
	case in.Provider == "":
		c.failf("provider", "missing; want one of %s", list(Providers))
	case !in.Provider.Valid():
		c.failf("provider", "%q is not one of %s", in.Provider, list(Providers))
	}
	if in.Region == "" {
		c.failf("region", "missing")
	}
	if in.InstanceType == "" {
		c.failf("instanceType", "missing")
	}
	c.quantity("gpu.count", in.GPU.Count, MaxGPUsPerInstance, "")
	c.quantity("gpu.memoryGiB", in.GPU.MemoryGiB, MaxGPUMemoryGiB, " GiB")
	c.quantity("vcpus", in.VCPUs, MaxVCPUs, "")
	c.quantity("memoryGiB", in.MemoryGiB, MaxMemoryGiB, " GiB")
	oneOf(c, "lifecycle", in.Lifecycle, Lifecycles)
	oneOf(c, "state", in.State, States)
	if in.SpotInterruption != "" {
		oneOf(c, "spotInterruption", in.SpotInterruption, SpotInterruptions)
	}
	if in.StoppedAllocated && in.State == Stopped {
		c.failf("stoppedAllocated", "true with state stopped; a machine still allocated is billed: its state is running")
	}
	c.enter("usage")
	c.usage(in.Usage)
	c.leave()
	for k := range in.Tags {
		if strings.TrimSpace(k) == "" {
			c.failf("tags", "a tag has an empty key")
		}
	}
	if in.Workload == nil {
		if k, v, bad := badModelParams(in.Tags); bad {
			c.failf("tags", "%s %q is not a parameter count such as 8B or 350M (above 0, at most %s billion)", strconv.Quote(k), v, num(MaxParamsBillions))
		}
	}
	c.enter("utilization")
	c.utilization(in.Utilization)
	c.leave()
	if in.Workload != nil {
		c.enter("workload")
		c.workload(in.Workload)
		c.leave()
	}
	if in.ManagedBy != nil && strings.TrimSpace(string(in.ManagedBy.Kind)) == "" {
		c.failf("managedBy.kind", "missing; name the kind of owner, e.g. auto-scaling-group")
	}
	if math.IsInf(in.InstanceStoreGB, 0) || in.InstanceStoreGB > 1e6 {
		c.failf("instanceStoreGB", "%s is not a disk size in GB", num(in.InstanceStoreGB))
	}
	c.nonNegative("instanceStoreGB", in.InstanceStoreGB)
	if in.HourlyPrice != nil {
		c.price("hourlyPrice", *in.HourlyPrice)
	}
	if cm := in.Commitment; cm != nil {
		if in.Lifecycle != Committed {
			c.failf("commitment", "is set but lifecycle is %q, not committed", in.Lifecycle)
		}
		if cm.Term != "" && !slices.Contains(CommitmentTerms, cm.Term) {
			c.failf("commitment.term", "%q is not one of 1y, 3y, 5y", cm.Term)
		}
		if r := cm.HourlyRate; r != nil && (r.IsNegative() || r.GreaterThan(decimal.NewFromInt(1_000_000))) {
			c.failf("commitment.hourlyRate", "%s is not a USD hourly rate in [0, 1000000]", r)
		}
	}
	if in.Managed != nil {
		c.enter("managed.")
		c.managed(in.Managed)
		c.leave()
	}
	c.sampleWidths(in)
}

// price checks a USD hourly price without arithmetic on absurd exponents
// (1e1000000000 is a valid decimal; comparing it would allocate its digits).
func (c *checker) price(p string, d decimal.Decimal) {
	magnitude := int64(d.NumDigits()) + int64(d.Exponent()) // digits before the point
	switch {
	case d.IsNegative():
		c.failf(p, "%s is negative", compact(d))
	case d.Exponent() < -64:
		c.failf(p, "%s has more than 64 decimal places", compact(d))
	case magnitude > 6 || d.GreaterThan(maxHourlyPrice):
		c.failf(p, "%s is above %d USD an hour; give the price of one instance-hour in USD", compact(d), MaxHourlyPrice)
	}
}

// compact prints a decimal without expanding a huge exponent.
func compact(d decimal.Decimal) string {
	if e := d.Exponent(); e > 20 || e < -70 {
		return fmt.Sprintf("%se%d", d.Coefficient(), e)
	}
	return d.String()
}

// sampleWidths refuses samples with more per-GPU values than the instance
// has GPUs (when gpu.count is given) or than any instance has.
func (c *checker) sampleWidths(in *Instance) {
	if in.Utilization == nil {
		return
	}
	limit := MaxGPUsPerInstance
	if n := in.GPU.Count; n >= 1 && n <= MaxGPUsPerInstance && n == math.Trunc(n) {
		limit = int(n)
	}
	for i, s := range in.Utilization.Samples {
		for _, f := range []struct {
			name string
			v    PerGPU
		}{{"gpu", s.GPU}, {"gpuMemory", s.GPUMemory}} {
			if len(f.v) > 1 && len(f.v) > limit {
				c.failf(fmt.Sprintf("utilization.samples[%d].%s", i, f.name), "%d values, but the instance has %d GPUs", len(f.v), limit)
			}
		}
	}
}

func (c *checker) usage(u Usage) {
	var set []string
	if u.HoursPerMonth != nil {
		set = append(set, "hoursPerMonth")
		c.nonNegative(".hoursPerMonth", *u.HoursPerMonth)
		if *u.HoursPerMonth > MaxHoursPerMonth {
			c.failf(".hoursPerMonth", "%s is more than the %s hours of the longest month", num(*u.HoursPerMonth), num(MaxHoursPerMonth))
		}
	}
	if u.HoursPerWeek != nil {
		set = append(set, "hoursPerWeek")
		c.nonNegative(".hoursPerWeek", *u.HoursPerWeek)
		if *u.HoursPerWeek > HoursPerWeek {
			c.failf(".hoursPerWeek", "%s is more than the %s hours of a week", num(*u.HoursPerWeek), num(HoursPerWeek))
		}
	}
	if s := u.Schedule; s != nil {
		set = append(set, "schedule")
		if len(s.Windows) == 0 {
			c.failf(".schedule.windows", "empty; give at least one window (an instance that never runs is state: stopped)")
		}
		var on WeekMinutes
		if _, err := s.fill(&on); err != nil {
			field, msg, _ := strings.Cut(err.Error(), ": ") // "windows[0].start: ..." or "timezone: ..."
			c.failf(".schedule."+field, "%s", msg)
		}
	}
	if len(set) > 1 {
		c.failf("", "give at most one of hoursPerMonth, hoursPerWeek and schedule; found %s", strings.Join(set, " and "))
	}
}

func (c *checker) utilization(u *Utilization) {
	if u == nil {
		return
	}
	if w := u.Window; w != nil {
		switch {
		case w.Start.IsZero():
			c.failf(".window.start", "missing")
		case w.End.IsZero():
			c.failf(".window.end", "missing")
		case !w.End.After(w.Start):
			c.failf(".window", "end %s is not after start %s", w.End.Format(time.RFC3339), w.Start.Format(time.RFC3339))
		case w.End.Sub(w.Start) > MaxWindow:
			c.failf(".window", "%s to %s is longer than 10 years", w.Start.Format(time.RFC3339), w.End.Format(time.RFC3339))
		}
	}
	if u.Coverage != nil && !(*u.Coverage >= 0 && *u.Coverage <= 1) {
		c.failf(".coverage", "%s is outside 0–1", num(*u.Coverage))
	}
	if u.Source != "" && strings.TrimSpace(u.Source) == "" {
		c.failf(".source", "blank; name where the figures came from or leave the field out")
	}
	if len(u.Samples) > 0 && (u.GPU != nil || u.GPUMemory != nil || u.CPU != nil || u.Memory != nil) {
		c.failf("", "give either statistics (gpu, gpuMemory, cpu, memory) or samples, not both")
	}
	for _, s := range []struct {
		name  string
		stats *Stats
	}{{".gpu", u.GPU}, {".gpuMemory", u.GPUMemory}, {".cpu", u.CPU}, {".memory", u.Memory}} {
		if s.stats == nil {
			continue
		}
		c.enter(s.name)
		c.percent(".avg", s.stats.Avg)
		c.percent(".p95", s.stats.P95)
		c.percent(".max", s.stats.Max)
		if s.stats.Avg > s.stats.P95 {
			c.failf("", "avg %s is above p95 %s", num(s.stats.Avg), num(s.stats.P95))
		}
		if s.stats.P95 > s.stats.Max {
			c.failf("", "p95 %s is above max %s", num(s.stats.P95), num(s.stats.Max))
		}
		c.leave()
	}
	for i, s := range u.Samples {
		if sampleValid(&s, u.Window) {
			continue // nothing to report: no paths to build
		}
		c.enter(fmt.Sprintf(".samples[%d]", i))
		c.sample(&s, u.Window)
		c.leave()
	}
}

// sample checks one sample of a utilization whose window is w.
func (c *checker) sample(s *Sample, w *TimeRange) {
	if s.Time.IsZero() {
		c.failf(".time", "missing")
	} else if w != nil && !w.Start.IsZero() && !w.End.IsZero() &&
		(s.Time.Before(w.Start) || !s.Time.Before(w.End)) {
		c.failf(".time", "%s is outside the window %s to %s", s.Time.Format(time.RFC3339),
			w.Start.Format(time.RFC3339), w.End.Format(time.RFC3339))
	}
	c.perGPU(".gpu", s.GPU)
	c.perGPU(".gpuMemory", s.GPUMemory)
	if s.CPU != nil {
		c.percent(".cpu", *s.CPU)
	}
	if s.Memory != nil {
		c.percent(".memory", *s.Memory)
	}
}

// sampleValid reports whether checker.sample finds nothing wrong with s in
// window w: only a sample it fails has its paths built.
func sampleValid(s *Sample, w *TimeRange) bool {
	if s.Time.IsZero() || w != nil && !w.Start.IsZero() && !w.End.IsZero() && (s.Time.Before(w.Start) || !s.Time.Before(w.End)) {
		return false
	}
	for _, l := range []PerGPU{s.GPU, s.GPUMemory} {
		for _, v := range l {
			if !(v >= 0 && v <= 100) {
				return false
			}
		}
	}
	return (s.CPU == nil || *s.CPU >= 0 && *s.CPU <= 100) && (s.Memory == nil || *s.Memory >= 0 && *s.Memory <= 100)
}

func (c *checker) perGPU(field string, values PerGPU) {
	if len(values) == 1 {
		c.percent(field, values[0])
		return
	}
	for i, v := range values {
		c.percent(fmt.Sprintf("%s[%d]", field, i), v)
	}
}

func (c *checker) workload(w *Workload) {
	oneOf(c, ".type", w.Type, WorkloadTypes)
	c.quantity(".paramsBillions", w.ParamsBillions, MaxParamsBillions, "")
	if w.Precision != "" {
		oneOf(c, ".precision", w.Precision, Precisions)
	}
	c.quantity(".tokensPerSecond", w.TokensPerSecond, MaxThroughput, "")
	c.quantity(".requestsPerSecond", w.RequestsPerSecond, MaxThroughput, "")
	if w.TrainingRun != "" && strings.TrimSpace(w.TrainingRun) == "" {
		c.failf(".trainingRun", "blank; name the run or leave the field out")
	}
	c.quantity(".trainingRunHours", w.TrainingRunHours, MaxTrainingRunHours, "")
	if w.TrainingRunHours != 0 && w.TrainingRun == "" {
		c.failf(".trainingRunHours", "given without trainingRun; name the run it belongs to")
	}
}

func (c *checker) nonNegative(p string, v float64) {
	c.finite(p, v)
	if v < 0 {
		c.failf(p, "%s is negative", num(v))
	}
}

// quantity refuses v unless it is a finite number in 0–limit.
func (c *checker) quantity(p string, v, limit float64, unit string) {
	c.nonNegative(p, v)
	if v > limit {
		c.failf(p, "%s is above the limit of %s%s", num(v), num(limit), unit)
	}
}

func (c *checker) finite(p string, v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		c.failf(p, "%s is not a finite number", num(v))
	}
}

func (c *checker) percent(p string, v float64) {
	if !(v >= 0 && v <= 100) {
		c.failf(p, "%s is outside 0–100", num(v))
	}
}

func oneOf[T ~string](c *checker, p string, v T, allowed []T) {
	for _, a := range allowed {
		if v == a {
			return
		}
	}
	if v == "" {
		c.failf(p, "missing; want one of %s", list(allowed))
		return
	}
	c.failf(p, "%q is not one of %s", v, list(allowed))
}

func list[T ~string](values []T) string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = string(v)
	}
	return strings.Join(out, ", ")
}

// num writes v in plain decimal, or with an exponent where that would take
// more than about twenty digits (1e+300, not three hundred zeros).
func num(v float64) string {
	if a := math.Abs(v); a != 0 && (a >= 1e21 || a < 1e-6) {
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}
