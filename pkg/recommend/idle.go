package recommend

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/protect"
)

// idleRule stops instances whose GPUs do nothing, and puts instances that are
// busy only at recurring times of the week on an on/off schedule.
// An instance that would be judged idle (or put on a schedule) but whose
// utilization covers less of its window than policy.idle.min_coverage gets a
// warning instead: the gaps may be when it worked.
//
// Every change it makes goes through guard: a machine idle-stop protects
// keeps running, and its advice says why and what releasing it would save.
// An instance whose samples never carry all of its GPUs is not judged idle
// (partial-gpus): a GPU without data is not idle. Where the source set
// utilization.coverage, that says how many GPUs reported instead.
func idleRule(e *engine, s *state) *change {
	if s.inst.StoppedAllocated && s.inst.State == fleet.Running {
		return instanceStoreNote(s, e.guard(s, deallocateChange(e, s), false))
	}
	c := idleJudge(e, s)
	if cov := s.inst.Utilization.EffectiveCoverage(gpuCount(s)); c != nil && cov < e.policy.Idle.MinCoverage {
		e.warn(s.inst.ID, WarnLowCoverage, "utilization covers %s %% of the window's GPU-hours (hours with GPU data ÷ running hours, GPUs reporting ÷ GPUs): not judged idle and no schedule", pct(cov*100))
		return nil
	}
	if c != nil && c.kind == KindIdleStop && c.stop && s.inst.Utilization != nil && s.inst.Utilization.Coverage == nil {
		if ev := protect.Measure(s.inst.Utilization, gpuCount(s)); ev.HasGPU && ev.MaxGPUs < ev.WantGPUs {
			e.warn(s.inst.ID, WarnPartialGPUs, "at most %d of its %d GPUs reported: a GPU without data is not idle, so it is not judged idle", ev.MaxGPUs, ev.WantGPUs)
			return nil
		}
	}
	return instanceStoreNote(s, e.guard(s, c, c != nil && c.kind == KindIdleStop))
}

// instanceStoreNote warns, once per machine, that stopping or deallocating
// it (for good or on a schedule) loses the data on its instance store:
// AWS instance store, Azure local NVMe, GCP local SSD.
func instanceStoreNote(s *state, c *change) *change {
	if c == nil || s.inst.InstanceStoreGB <= 0 || (c.kind != KindIdleStop && c.kind != KindSchedule) {
		return c
	}
	verb := "stopping it"
	if c.target == "deallocated" {
		verb = "deallocating it"
	}
	note := fmt.Sprintf("instance store: %s loses the data on its %s GB of local NVMe disks (instance store, local SSD); copy what must be kept first", verb, pct(s.inst.InstanceStoreGB))
	for _, n := range c.riskNotes {
		if strings.HasPrefix(n, "instance store:") {
			return c
		}
	}
	c.riskNotes = append(c.riskNotes, note)
	return c
}

func idleJudge(e *engine, s *state) *change {
	sum := s.summary
	if sum == nil || sum.GPU == nil {
		return nil
	}
	thr := e.policy.Idle.GPUPercent
	if samples := s.inst.Utilization.Samples; len(samples) > 0 {
		busy := 0
		for _, smp := range samples {
			if v, ok := smp.GPU.Max(); ok && v >= thr {
				busy++
			}
		}
		if busy > 0 {
			return scheduleChange(e, s, busy)
		}
	} else if sum.GPU.P95 >= thr {
		return nil
	}
	return idleStopChange(e, s)
}

// deallocateChange is the advice for a machine stopped but still allocated:
// it does no work and is billed as if running, so releasing its hardware
// saves its whole compute cost, whatever its (absent) utilization.
func deallocateChange(e *engine, s *state) *change {
	if s.lifecycle == fleet.Committed {
		e.warn(s.inst.ID, WarnIdleCommitted, "stopped but still allocated, on a commitment: deallocating it saves only if the commitment can cover other usage")
		e.heldBack(s, &change{kind: KindIdleStop, stop: true})
		return nil
	}
	c := &change{
		kind:       KindIdleStop,
		stop:       true,
		target:     "deallocated",
		short:      "deallocate",
		confidence: High,
		risk:       Low,
		action:     "Deallocate it: it is stopped but still allocated, so it is billed as if running",
		rationale:  fmt.Sprintf("The machine is powered off without releasing its hardware and was billed %s h a month for no work.", pct(s.hours)),
		evidence: Evidence{
			Prices:  priceList(s.price),
			Formula: "saving = hourly price × monthly hours; a deallocated machine is not billed for compute (its disks still are)",
		},
	}
	if o := e.owner(s); o != nil {
		c.short = "shrink " + ownerShort(o)
		c.action = "Do not deallocate it directly: " + ownerAction(o) + "; it is stopped but still allocated, so it is billed as if running"
		c.riskNotes = append(c.riskNotes, ownerRisk(o))
		c.risk = Medium
	}
	return c
}

func idleStopChange(e *engine, s *state) *change {
	sum := s.summary
	thr := e.policy.Idle.GPUPercent
	if s.lifecycle == fleet.Committed {
		e.warn(s.inst.ID, WarnIdleCommitted, "GPU p95 %s %% is below the idle threshold of %s %%, but the instance is on a commitment: stopping it saves only if the commitment can cover other usage",
			pct(sum.GPU.P95), pct(thr))
		e.heldBack(s, &change{kind: KindIdleStop, stop: true})
		return nil
	}
	c := &change{
		kind:       KindIdleStop,
		stop:       true,
		target:     "stopped",
		short:      "stop",
		confidence: e.confidenceFor(s),
		risk:       Low,
		action:     fmt.Sprintf("Stop it: the busiest GPU's p95 was %s %% over %s (idle below %s %%)", pct(sum.GPU.P95), windowText(sum), pct(thr)),
		rationale: fmt.Sprintf("Its GPUs were idle for the whole window (p95 %s %%, max %s %%) while it was billed %s h a month.",
			pct(sum.GPU.P95), pct(sum.GPU.Max), pct(s.hours)),
		evidence: Evidence{
			Metrics:    utilMetrics(sum),
			Thresholds: map[string]float64{"idleGpuPercent": thr},
			Prices:     priceList(s.price),
			Formula:    "saving = hourly price × monthly hours; a stopped instance is not billed for compute (its disks still are)",
		},
	}
	if sum.GPU.Max >= thr {
		c.riskNotes = append(c.riskNotes, fmt.Sprintf("the GPU peaked at %s %%: find out what ran before stopping", pct(sum.GPU.Max)))
		c.risk = Medium
	}
	if w := s.inst.Workload; w != nil && w.Type == fleet.Inference {
		c.riskNotes = append(c.riskNotes, "an inference endpoint with rare traffic may still be needed: check its callers, or scale it to zero instead")
		c.risk = Medium
	}
	if o := e.owner(s); o != nil {
		c.short = "shrink " + ownerShort(o)
		c.action = fmt.Sprintf("Do not stop it directly: %s; the busiest GPU's p95 was %s %% over %s (idle below %s %%)", ownerAction(o), pct(sum.GPU.P95), windowText(sum), pct(thr))
		c.riskNotes = append(c.riskNotes, ownerRisk(o))
		c.risk = Medium
	}
	return c
}

// ownerAction is what to do with an owned instance's controller instead of
// stopping the instance: "<kind> <name> owns it: <what to do>".
func ownerAction(o *fleet.ManagedBy) string {
	who := string(o.Kind)
	if o.Name != "" {
		who += " " + o.Name
	}
	return who + " owns it, so " + fleet.OwnerAction(o.Kind)
}

func ownerRisk(o *fleet.ManagedBy) string {
	return fmt.Sprintf("managed by %s: a stopped member is replaced or breaks its cluster; change the owner's capacity instead", o.Kind)
}

// scheduleChange derives an on/off schedule from hourly activity. The schedule
// covers every weekday hour in which any sample was busy, widened by the
// policy's buffer, in UTC.
func scheduleChange(e *engine, s *state, busy int) *change {
	pol := e.policy.Idle
	samples := append([]fleet.Sample(nil), s.inst.Utilization.Samples...)
	sort.SliceStable(samples, func(i, j int) bool { return samples[i].Time.Before(samples[j].Time) })
	step := fleet.SampleStep(samples)
	window := fleet.SampleWindow(samples)
	if s.inst.Utilization.Window != nil {
		window = *s.inst.Utilization.Window
	}
	if step > time.Hour || window.Hours() < pol.ScheduleMinDays*24 {
		return nil
	}
	busyPct := 100 * float64(busy) / float64(len(samples))
	if busyPct > pol.ScheduleMaxBusyPercent {
		return nil
	}
	var busyHours [7][24]bool
	for _, smp := range samples {
		if v, ok := smp.GPU.Max(); ok && v >= pol.GPUPercent {
			t := smp.Time.UTC()
			busyHours[t.Weekday()][t.Hour()] = true
		}
	}
	weeks, recurring := recurrence(samples, window.Start, pol.GPUPercent)
	minWeeks := max(pol.ScheduleMinWeeks, 1)
	if weeks >= minWeeks && recurring < scheduleRecurShare {
		e.warn(s.inst.ID, WarnNotRecurring, "its busy hours do not recur across weeks (%s %% of busy samples fall in hours of the week busy in at least %d weeks): no schedule is learned from random activity", pct(recurring*100), minWeeks)
		return nil
	}
	windows, perWeek := deriveSchedule(busyHours, pol.ScheduleBufferHours)
	after := math.Min(s.hours, perWeek*fleet.HoursPerMonth/fleet.HoursPerWeek)
	if s.hours <= 0 || (s.hours-after)/s.hours*100 < pol.ScheduleMinSavingsPercent {
		return nil
	}
	sched := scheduleText(windows)
	c := &change{
		kind:       KindSchedule,
		target:     sched,
		short:      "schedule " + scheduleShort(windows),
		schedule:   fleetSchedule(windows),
		price:      s.price,
		hours:      after,
		confidence: e.confidenceFor(s),
		risk:       Low,
		action:     fmt.Sprintf("Run it on a schedule, %s (%s h/week instead of %s)", sched, pct(perWeek), pct(s.hours*fleet.HoursPerWeek/fleet.HoursPerMonth)),
		rationale: fmt.Sprintf("Its GPUs were busy (≥ %s %%) in %s %% of the hourly samples, always inside the same hours of the week; outside them it idles.",
			pct(pol.GPUPercent), pct(busyPct)),
		evidence: Evidence{
			Metrics: mergeMetrics(utilMetrics(s.summary), map[string]float64{
				"busySamplePercent":     round2(busyPct),
				"scheduledHoursPerWeek": round2(perWeek),
			}),
			Thresholds: map[string]float64{
				"idleGpuPercent":            pol.GPUPercent,
				"scheduleMaxBusyPercent":    pol.ScheduleMaxBusyPercent,
				"scheduleMinSavingsPercent": pol.ScheduleMinSavingsPercent,
				"scheduleBufferHours":       float64(pol.ScheduleBufferHours),
			},
			Prices:  priceList(s.price),
			Formula: "projected = hourly price × scheduled hours per week × 730 / 168",
			Notes:   []string{"the schedule is in UTC, the samples' time zone"},
		},
	}
	c.evidence.Metrics["weeksObserved"] = float64(weeks)
	c.evidence.Metrics["recurringBusyPercent"] = round2(recurring * 100)
	if weeks < minWeeks {
		c.confidence = Low
		c.evidence.Notes = append(c.evidence.Notes, fmt.Sprintf("the samples span %d week(s): the pattern is not shown to recur across %d weeks, so confidence is low", weeks, minWeeks))
	}
	if w := s.inst.Workload; w == nil || w.Type != fleet.Development {
		c.risk = Medium
		c.riskNotes = append(c.riskNotes, "work outside the observed hours will find it stopped: agree the schedule with its users")
	}
	if o := e.owner(s); o != nil {
		c.short = "schedule " + ownerShort(o) + " " + scheduleShort(windows)
		c.action = fmt.Sprintf("Scale its owner on a schedule, %s (%s h/week instead of %s): %s, with a scheduled scale-down policy outside these hours", sched, pct(perWeek), pct(s.hours*fleet.HoursPerWeek/fleet.HoursPerMonth), ownerAction(o))
		c.risk = Medium
		c.riskNotes = append(c.riskNotes, ownerRisk(o))
	}
	return c
}

// scheduleWindow is one daily on-period shared by some weekdays.
type scheduleWindow struct {
	days       []time.Weekday
	start, end int
}

// deriveSchedule turns busy hours into daily windows (first busy hour − buffer
// to last busy hour + 1 + buffer) grouped by identical times, and the hours
// per week they cover.
func deriveSchedule(busy [7][24]bool, buffer int) ([]scheduleWindow, float64) {
	var windows []scheduleWindow
	var total float64
	// Monday first, Sunday last, as people read a week.
	for _, d := range []time.Weekday{time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday, time.Saturday, time.Sunday} {
		first, last := -1, -1
		for h := 0; h < 24; h++ {
			if busy[d][h] {
				if first < 0 {
					first = h
				}
				last = h
			}
		}
		if first < 0 {
			continue
		}
		start := max(first-buffer, 0)
		end := min(last+1+buffer, 24)
		total += float64(end - start)
		merged := false
		for i := range windows {
			if windows[i].start == start && windows[i].end == end {
				windows[i].days = append(windows[i].days, d)
				merged = true
				break
			}
		}
		if !merged {
			windows = append(windows, scheduleWindow{days: []time.Weekday{d}, start: start, end: end})
		}
	}
	return windows, total
}

// fleetSchedule writes derived windows in the fleet file's form.
func fleetSchedule(ws []scheduleWindow) *fleet.Schedule {
	out := &fleet.Schedule{Timezone: "UTC"}
	for _, w := range ws {
		fw := fleet.Window{Start: fmt.Sprintf("%02d:00", w.start), End: fmt.Sprintf("%02d:00", w.end)}
		for _, d := range w.days {
			fw.Days = append(fw.Days, strings.ToLower(dayNames[d]))
		}
		out.Windows = append(out.Windows, fw)
	}
	return out
}

var dayNames = [7]string{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"}

func scheduleText(ws []scheduleWindow) string {
	parts := make([]string, len(ws))
	for i, w := range ws {
		parts[i] = fmt.Sprintf("%s %02d:00–%02d:00", daysText(w.days), w.start, w.end)
	}
	return strings.Join(parts, ", ") + " UTC"
}

// daysText writes consecutive days as a range: Mon–Fri, or Mon, Wed.
func daysText(days []time.Weekday) string {
	idx := func(d time.Weekday) int { return (int(d) + 6) % 7 } // Monday = 0
	var parts []string
	for i := 0; i < len(days); {
		j := i
		for j+1 < len(days) && idx(days[j+1]) == idx(days[j])+1 {
			j++
		}
		if j-i >= 2 {
			parts = append(parts, dayNames[days[i]]+"–"+dayNames[days[j]])
		} else {
			for k := i; k <= j; k++ {
				parts = append(parts, dayNames[days[k]])
			}
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

// scheduleRecurShare is the share of busy samples that must fall in hours
// of the week busy in at least policy.idle.schedule_min_weeks weeks.
const scheduleRecurShare = 0.8

// recurrence is how many whole weeks the samples span from start, and the
// share of busy samples whose hour of the week is busy in at least two of
// them.
func recurrence(samples []fleet.Sample, start time.Time, thr float64) (weeks int, share float64) {
	const week = 7 * 24 * time.Hour
	if len(samples) == 0 {
		return 0, 0
	}
	last := samples[len(samples)-1].Time
	if start.IsZero() || start.After(samples[0].Time) {
		start = samples[0].Time
	}
	weeks = int(last.Sub(start) / week)
	if last.Sub(start)%week > 6*24*time.Hour {
		weeks++
	}
	type slot struct{ day, hour int }
	seen := map[slot]map[int]bool{}
	var busy []slot
	for _, smp := range samples {
		v, ok := smp.GPU.Max()
		if !ok || v < thr {
			continue
		}
		t := smp.Time.UTC()
		k := slot{int(t.Weekday()), t.Hour()}
		if seen[k] == nil {
			seen[k] = map[int]bool{}
		}
		seen[k][int(smp.Time.Sub(start)/week)] = true
		busy = append(busy, k)
	}
	if len(busy) == 0 {
		return weeks, 1
	}
	rec := 0
	for _, k := range busy {
		if len(seen[k]) >= 2 {
			rec++
		}
	}
	return weeks, float64(rec) / float64(len(busy))
}
