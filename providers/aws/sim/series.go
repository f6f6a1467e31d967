package sim

// The metric series the simulated CloudWatch serves, made from the fleet.
//
// Every AWS instance has an hourly pattern (one value per hour) that repeats
// without end, and publishes a datapoint every minute, as the CloudWatch
// agent does by default: every minute of an hour carries that hour's value,
// so the hourly averages are the pattern (see series.each; minute datapoints
// are made on the fly, never stored). The patterns:
//
//   - Instances with utilization samples replay them. The pattern is the
//     utilization window (or, without one, the span of the samples) and is
//     anchored on the window's start, so it repeats every window length and a
//     7-day window repeats weekly on the same weekdays and hours; at
//     Options.Now = window end the last window is the file's samples exactly.
//     Samples in the same hour are averaged; hours without a sample have no
//     datapoint.
//   - Instances with summary statistics {avg, p95, max} follow a weekly
//     pattern: the hours they run (see runningWeek) get values whose mean,
//     95th percentile (fleet.Percentile) and maximum are the file's figures
//     (see shapeValues), over every whole week and any whole number of weeks.
//   - Instances without utilization have no GPU series; EC2's CPUUtilization
//     still exists for the hours they run (defaultCPU).
//
// Only complete minutes before Options.Now have datapoints, and none while
// an instance is stopped (see runLog). SetLoad overrides an instance's GPU
// utilization from Now on. How CloudWatch keeps and aggregates the minutes
// is in cloudwatch.go (aggregate).

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// The metrics the simulator publishes: the CloudWatch agent's nvidia_gpu and
// mem plugins with append_dimensions (InstanceId, InstanceType), and EC2's own
// CPUUtilization.
const (
	agentNamespace = "CWAgent"
	ec2Namespace   = "AWS/EC2"

	metricGPUUtil     = "nvidia_smi_utilization_gpu" // percent
	metricGPUMemUsed  = "nvidia_smi_memory_used"     // MiB
	metricGPUMemTotal = "nvidia_smi_memory_total"    // MiB
	metricMemUsed     = "mem_used_percent"           // host memory, percent
	metricCPU         = "CPUUtilization"             // percent
)

// defaultCPU is the host CPU of instances whose file has no utilization at
// all: EC2 reports CPUUtilization whether or not the agent runs.
var defaultCPU = fleet.Stats{Avg: 4, P95: 9, Max: 17}

// dimension is a CloudWatch dimension.
type dimension struct{ Name, Value string }

// series is one metric of one instance.
type series struct {
	namespace, name string
	dims            []dimension // in the order the agent publishes them
	unit            string
	inst            *instSeries
	// values has one entry per slot of inst.clock; NaN is no datapoint.
	// GPU indexes of one instance share it.
	values []float64
}

// key identifies a series for the exact match GetMetricData needs: namespace,
// name and the dimension set, order aside.
func (se *series) key() string { return seriesKey(se.namespace, se.name, se.dims) }

func seriesKey(namespace, name string, dims []dimension) string {
	parts := make([]string, len(dims))
	for i, d := range dims {
		parts[i] = d.Name + "=" + d.Value
	}
	sort.Strings(parts)
	return namespace + "\x00" + name + "\x00" + strings.Join(parts, "\x00")
}

// instSeries is what CloudWatch knows of one instance.
type instSeries struct {
	id, region string
	// stoppedInFleet: the fleet has the instance stopped, so it has no
	// datapoints until it is started.
	stoppedInFleet bool
	clock          slotClock
	series         []*series
}

// slotClock maps an hour to its slot in a repeating pattern.
type slotClock struct {
	// loc set: a weekly pattern, slot = local weekday × 24 + local hour.
	loc *time.Location
	// loc nil: slot = whole hours since anchor, modulo n.
	anchor time.Time
	n      int
}

// weekHours is the length of a weekly pattern.
const weekHours = 7 * 24

func (c slotClock) size() int {
	if c.loc != nil {
		return weekHours
	}
	return c.n
}

// slot returns the pattern slot of the hour starting at t.
func (c slotClock) slot(t time.Time) int {
	if c.loc == time.UTC {
		secs := t.Unix()
		days := floorDiv(secs, 86400)
		weekday := ((days+4)%7 + 7) % 7 // 1970-01-01 was a Thursday
		return int(weekday*24 + floorDiv(secs-days*86400, 3600))
	}
	if c.loc != nil {
		lt := t.In(c.loc)
		return int(lt.Weekday())*24 + lt.Hour()
	}
	h := floorDiv(int64(t.Sub(c.anchor)), int64(time.Hour))
	return int(((h % int64(c.n)) + int64(c.n)) % int64(c.n))
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// gpuInfo is what the agent's name dimension and memory_total say of an
// instance's GPUs.
type gpuInfo struct {
	count  int
	model  string
	memMiB float64
}

// gpuInfoOf takes the GPU model, count and memory from the instance's gpu
// block, else from Options.Types. A fractional GPU (g6f) is one device.
func (s *Server) gpuInfoOf(in fleet.Instance) gpuInfo {
	g := gpuInfo{model: in.GPU.Model, memMiB: in.GPU.MemoryGiB * 1024}
	count := in.GPU.Count
	if t, ok := s.types[in.InstanceType]; ok {
		if g.model == "" {
			g.model = t.GPUName
		}
		if g.memMiB == 0 {
			g.memMiB = float64(t.GPUMemoryMiB)
		}
		if count == 0 {
			count = t.GPUCount
		}
	}
	g.count = max(int(math.Ceil(count)), 1)
	if g.model == "" {
		g.model = "GPU"
	}
	return g
}

// buildInstance makes an instance's series.
func (s *Server) buildInstance(in fleet.Instance) *instSeries {
	is := &instSeries{id: in.ID, region: in.Region, stoppedInFleet: in.State == fleet.Stopped}
	g := s.gpuInfoOf(in)
	u := in.Utilization
	switch {
	case u != nil && len(u.Samples) > 0:
		is.samples(in, u, g)
	case u != nil && (u.GPU != nil || u.GPUMemory != nil || u.CPU != nil || u.Memory != nil):
		is.stats(in, u, g)
	default:
		running, loc := runningWeek(in.Usage)
		is.clock = slotClock{loc: loc}
		is.add(ec2Namespace, metricCPU, "Percent", is.ec2Dims(), weekly(running, shapeValues(defaultCPU, count(running), seedOf(in.ID, metricCPU))))
	}
	return is
}

func (is *instSeries) ec2Dims() []dimension {
	return []dimension{{"InstanceId", is.id}}
}

func agentDims(in fleet.Instance) []dimension {
	return []dimension{{"InstanceId", in.ID}, {"InstanceType", in.InstanceType}}
}

func gpuDims(in fleet.Instance, g gpuInfo, index int) []dimension {
	return append(agentDims(in), dimension{"index", strconv.Itoa(index)}, dimension{"name", g.model})
}

// add appends a series unless it has no datapoint at all.
func (is *instSeries) add(namespace, name, unit string, dims []dimension, values []float64) {
	for _, v := range values {
		if !math.IsNaN(v) {
			is.series = append(is.series, &series{namespace: namespace, name: name, unit: unit, dims: dims, inst: is, values: values})
			return
		}
	}
}

// addGPU adds per-GPU series: util and memory percentages per GPU index
// (nil: none), memory as used and total MiB.
func (is *instSeries) addGPU(in fleet.Instance, g gpuInfo, util, memPct [][]float64) {
	for i := 0; i < g.count; i++ {
		if i < len(util) && util[i] != nil {
			is.add(agentNamespace, metricGPUUtil, "None", gpuDims(in, g, i), util[i])
		}
	}
	if g.memMiB <= 0 {
		return
	}
	// GPU indexes that share a percentage series share the MiB ones.
	used := map[*float64][]float64{}
	total := map[*float64][]float64{}
	for i := 0; i < g.count; i++ {
		if i >= len(memPct) || len(memPct[i]) == 0 {
			continue
		}
		pct := memPct[i]
		k := &pct[0]
		if used[k] == nil {
			u, t := make([]float64, len(pct)), make([]float64, len(pct))
			for j, p := range pct {
				u[j], t[j] = p*g.memMiB/100, g.memMiB
				if math.IsNaN(p) {
					t[j] = math.NaN()
				}
			}
			used[k], total[k] = u, t
		}
		is.add(agentNamespace, metricGPUMemUsed, "None", gpuDims(in, g, i), used[k])
		is.add(agentNamespace, metricGPUMemTotal, "None", gpuDims(in, g, i), total[k])
	}
}

// samples replays utilization samples over the utilization window.
func (is *instSeries) samples(in fleet.Instance, u *fleet.Utilization, g gpuInfo) {
	sorted := append([]fleet.Sample(nil), u.Samples...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Time.Before(sorted[j].Time) })
	window := fleet.SampleWindow(sorted)
	if u.Window != nil {
		window = *u.Window
	}
	anchor := window.Start.Truncate(time.Hour)
	n := max(int(math.Ceil(window.End.Sub(anchor).Hours())), 1)
	is.clock = slotClock{anchor: anchor, n: n}
	for _, smp := range sorted {
		g.count = max(g.count, len(smp.GPU), len(smp.GPUMemory))
	}

	// Hourly averages: sums and counts per slot.
	type acc struct{ sum, n []float64 }
	newAcc := func() *acc { return &acc{make([]float64, n), make([]float64, n)} }
	util, mem := make([]*acc, g.count), make([]*acc, g.count)
	cpu, host := newAcc(), newAcc()
	put := func(a *acc, slot int, v float64) { a.sum[slot] += v; a.n[slot]++ }
	perGPU := func(dst []*acc, slot int, values fleet.PerGPU) {
		for i := range dst {
			var v float64
			switch {
			case len(values) == 1: // one figure: the busiest GPU, so every GPU
				v = values[0]
			case i < len(values):
				v = values[i]
			default:
				continue
			}
			if dst[i] == nil {
				dst[i] = newAcc()
			}
			put(dst[i], slot, v)
		}
	}
	for _, smp := range sorted {
		slot := is.clock.slot(smp.Time)
		perGPU(util, slot, smp.GPU)
		perGPU(mem, slot, smp.GPUMemory)
		if smp.CPU != nil {
			put(cpu, slot, *smp.CPU)
		}
		if smp.Memory != nil {
			put(host, slot, *smp.Memory)
		}
	}
	mean := func(a *acc) []float64 {
		if a == nil {
			return nil
		}
		out := make([]float64, n)
		for i := range out {
			out[i] = math.NaN()
			if a.n[i] > 0 {
				out[i] = a.sum[i] / a.n[i]
			}
		}
		return out
	}
	utilV, memV := make([][]float64, g.count), make([][]float64, g.count)
	for i := range util {
		utilV[i], memV[i] = mean(util[i]), mean(mem[i])
	}
	is.addGPU(in, g, utilV, memV)
	is.add(agentNamespace, metricMemUsed, "Percent", agentDims(in), mean(host))
	is.add(ec2Namespace, metricCPU, "Percent", is.ec2Dims(), mean(cpu))
}

// stats turns summary statistics into a weekly pattern over the hours the
// instance runs. Every GPU gets the series: the file describes the busiest.
// A metric the file leaves out has no series.
func (is *instSeries) stats(in fleet.Instance, u *fleet.Utilization, g gpuInfo) {
	running, loc := runningWeek(in.Usage)
	is.clock = slotClock{loc: loc}
	n := count(running)
	shaped := func(st *fleet.Stats, metric string) []float64 {
		if st == nil {
			return nil
		}
		return weekly(running, shapeValues(*st, n, seedOf(in.ID, metric)))
	}
	gpu, mem := shaped(u.GPU, metricGPUUtil), shaped(u.GPUMemory, metricGPUMemUsed)
	utilV, memV := make([][]float64, g.count), make([][]float64, g.count)
	for i := range utilV {
		utilV[i], memV[i] = gpu, mem
	}
	is.addGPU(in, g, utilV, memV)
	if v := shaped(u.Memory, metricMemUsed); v != nil {
		is.add(agentNamespace, metricMemUsed, "Percent", agentDims(in), v)
	}
	if v := shaped(u.CPU, metricCPU); v != nil {
		is.add(ec2Namespace, metricCPU, "Percent", is.ec2Dims(), v)
	}
}

// weekly spreads values over the running slots of a week, in slot order;
// the other slots have no datapoint.
func weekly(running *[weekHours]bool, values []float64) []float64 {
	out := make([]float64, weekHours)
	j := 0
	for i := range out {
		out[i] = math.NaN()
		if running[i] && j < len(values) {
			out[i] = values[j]
			j++
		}
	}
	return out
}

func count(running *[weekHours]bool) int {
	n := 0
	for _, r := range running {
		if r {
			n++
		}
	}
	return n
}

// seedOf makes the deterministic seed of one metric of one instance.
func seedOf(id, metric string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(id + "\x00" + metric))
	return h.Sum64()
}

// runningWeek returns the hours of a week an instance runs, as slots (local
// weekday × 24 + local hour) in the returned zone:
//
//   - usage.schedule: the hours whose start lies in a window, in the
//     schedule's time zone (UTC by default);
//   - usage.hoursPerWeek, or usage.hoursPerMonth × 168/730: that many hours
//     (rounded) in UTC, as one contiguous block a day starting at 08:00:
//     Monday to Friday first, evenly, up to 16 hours a day (08:00–24:00);
//     then Saturday and Sunday likewise; beyond 112 hours every day's block
//     grows past midnight, evenly, up to 24 hours;
//   - otherwise every hour.
func runningWeek(u fleet.Usage) (*[weekHours]bool, *time.Location) {
	var on [weekHours]bool
	switch {
	case u.Schedule != nil:
		loc := time.UTC
		if u.Schedule.Timezone != "" {
			if l, err := time.LoadLocation(u.Schedule.Timezone); err == nil {
				loc = l
			}
		}
		return scheduleWeek(u.Schedule, loc), loc
	case u.HoursPerWeek != nil:
		return blockWeek(int(math.Round(*u.HoursPerWeek))), time.UTC
	case u.HoursPerMonth != nil:
		return blockWeek(int(math.Round(*u.HoursPerMonth * fleet.HoursPerWeek / fleet.HoursPerMonth))), time.UTC
	}
	for i := range on {
		on[i] = true
	}
	return &on, time.UTC
}

// scheduleWeek marks the local hours whose start lies in a window. Hours
// start at the zone's minute offset from UTC (:30 in India).
func scheduleWeek(sch *fleet.Schedule, loc *time.Location) *[weekHours]bool {
	var on [weekHours]bool
	_, off := time.Date(2026, 1, 5, 12, 0, 0, 0, time.UTC).In(loc).Zone()
	minute := ((off%3600)/60 + 60) % 60
	week, _, err := sch.Week()
	if err != nil {
		return &on // the fleet was validated: unreachable
	}
	for d := range 7 {
		for h := 0; h < 24; h++ {
			on[d*24+h] = week[d*24*60+h*60+minute]
		}
	}
	return &on
}

// blockWeek places h hours a week as daily blocks from 08:00 UTC (see
// runningWeek).
func blockWeek(h int) *[weekHours]bool {
	h = min(max(h, 0), weekHours)
	weekdays := []time.Weekday{time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday}
	weekend := []time.Weekday{time.Saturday, time.Sunday}
	all := append(append([]time.Weekday(nil), weekdays...), weekend...)
	length := map[time.Weekday]int{}
	// spread gives up to room more hours to each day, evenly, first days
	// first, and returns what is left of h.
	spread := func(days []time.Weekday, room, h int) int {
		give := min(h, room*len(days))
		for i, d := range days {
			n := give / len(days)
			if i < give%len(days) {
				n++
			}
			length[d] += n
		}
		return h - give
	}
	h = spread(weekdays, 16, h)
	h = spread(weekend, 16, h)
	spread(all, 8, h)
	var on [weekHours]bool
	for d, n := range length {
		for i := 0; i < n; i++ {
			on[(int(d)*24+8+i)%weekHours] = true
		}
	}
	return &on
}

// shapeValues returns n values whose mean, 95th percentile (fleet.Percentile:
// linear interpolation between closest ranks) and maximum are st's figures,
// in a deterministic order drawn from seed.
//
// Sorted, the values are: lows (each at most p95, their sum solved for the
// mean, spread around their own mean), then a plateau of values equal to p95,
// then one value at max. For n ≥ 21 the plateau covers the 95th-percentile
// rank of the values and of any whole number of copies of them, so every
// whole number of pattern repetitions has the same three figures. For
// 2 ≤ n ≤ 20 one value just below max is solved so that the interpolation
// gives p95 for the n values themselves. n = 1 is the mean.
//
// Figures no data could have are approached as closely as values in 0..max
// allow: a mean too low for p95 and max gives all lows at 0 (the mean comes
// out higher); p95 above max or a mean above p95 are lowered to them.
func shapeValues(st fleet.Stats, n int, seed uint64) []float64 {
	if n <= 0 {
		return nil
	}
	top := math.Max(st.Max, 0)
	p95 := math.Min(math.Max(st.P95, 0), top)
	avg := math.Min(math.Max(st.Avg, 0), p95)
	if n == 1 {
		return []float64{avg}
	}
	var lows, upper []float64 // upper: everything above the lows, sorted
	var capLow float64
	if n >= 21 {
		m := 95 * (n - 1) / 100 // the lows: floor(0.95 (n-1)), exactly
		q := n - 1 - m
		for i := 0; i < q; i++ {
			upper = append(upper, p95)
		}
		upper = append(upper, top)
		lows, capLow = make([]float64, m), p95
	} else {
		// rank 0.95 (n-1) lies between the last two values: solve the
		// lower one for p95.
		f := 0.95*float64(n-1) - float64(n-2)
		below := math.Max((p95-f*top)/(1-f), 0)
		upper = []float64{below, top}
		lows, capLow = make([]float64, n-2), below
	}
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	if m := len(lows); m > 0 {
		var fixed float64
		for _, v := range upper {
			fixed += v
		}
		sum := math.Min(math.Max(avg*float64(n)-fixed, 0), float64(m)*capLow)
		mid := sum / float64(m)
		amp := math.Min(mid, capLow-mid) // keeps every low in [0, capLow]
		w := make([]float64, m)
		var mean float64
		for i := range w {
			w[i] = rng.Float64()
			mean += w[i] / float64(m)
		}
		var peak float64
		for i := range w {
			w[i] -= mean
			peak = math.Max(peak, math.Abs(w[i]))
		}
		for i := range lows {
			v := mid
			if peak > 0 {
				v += amp * w[i] / peak
			}
			lows[i] = math.Min(math.Max(v, 0), capLow)
		}
	}
	out := append(lows, upper...)
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// cwState is the simulated CloudWatch's own state: the series, built once
// from the fleet, what it has seen of instance stops, and the GPU loads set
// with SetLoad.
type cwState struct {
	once     sync.Once
	all      []*series                     // in fleet order
	byRegion map[string]map[string]*series // region → key → series
	insts    map[string]*instSeries

	mu    sync.Mutex
	runs  map[string]*runLog      // instance ID → stops seen
	loads map[string][]loadChange // instance ID → GPU loads set, by time
}

// cw returns the server's CloudWatch state, building the series on first use.
func (s *Server) cw() *cwState {
	st := &s.cwState
	st.once.Do(func() { st.build(s) })
	return st
}

func (st *cwState) build(s *Server) {
	st.byRegion = map[string]map[string]*series{}
	st.insts = map[string]*instSeries{}
	st.runs = map[string]*runLog{}
	st.loads = map[string][]loadChange{}
	for _, in := range s.instances {
		is := s.buildInstance(in)
		st.insts[in.ID] = is
		if is.stoppedInFleet {
			st.runs[in.ID] = &runLog{stopped: true} // stopped since ever
		} else {
			st.runs[in.ID] = &runLog{}
		}
		if st.byRegion[in.Region] == nil {
			st.byRegion[in.Region] = map[string]*series{}
		}
		for _, se := range is.series {
			st.all = append(st.all, se)
			st.byRegion[in.Region][se.key()] = se
		}
	}
}

// runLog is what CloudWatch has seen of an instance's stops. The simulator
// learns of a stop (StopInstances) when it next serves CloudWatch, at
// Options.Now then; a minute has no datapoint when all of it lies in a stop
// (so an hour has datapoints when the instance ran in any part of it).
type runLog struct {
	stopped bool
	since   time.Time // start of the current stop; zero: stopped since ever
	gaps    []span    // stops that ended
}

type span struct{ from, to time.Time }

// farFuture ends the current stop.
var farFuture = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// down returns the minutes that lie wholly in a stop, as spans of minute
// starts [from, to), in time order.
func (r runLog) down() []span {
	var out []span
	for _, g := range r.gaps {
		if a, z := ceilTo(g.from, time.Minute), g.to.Truncate(time.Minute); z.After(a) {
			out = append(out, span{a, z})
		}
	}
	if r.stopped {
		out = append(out, span{ceilTo(r.since, time.Minute), farFuture})
	}
	return out
}

// ceilTo rounds t up to a multiple of d (as time.Truncate counts them).
func ceilTo(t time.Time, d time.Duration) time.Time {
	if f := t.Truncate(d); f.Before(t) {
		return f.Add(d)
	}
	return t
}

// running reports whether an EC2 state name is a running one.
func running(state string) bool { return state == "running" || state == "pending" }

// loadChange is a GPU utilization set with SetLoad: from its minute on,
// every GPU of the instance reports gpu (until the next change).
type loadChange struct {
	from time.Time
	gpu  float64
}

// instView is what one CloudWatch request sees of an instance: the minutes
// it was down and the loads set, as of the request's Now.
type instView struct {
	down    []span
	loads   []loadChange
	stopped bool
	since   time.Time // start of the current stop; zero: stopped since ever
}

// ranAfter reports whether the instance ran at some time after t: it runs
// now, or its current stop began after t.
func (v instView) ranAfter(t time.Time) bool {
	return !v.stopped || (!v.since.IsZero() && v.since.After(t))
}

// observe records the instance's live state at now and returns what a
// request at now sees of it.
func (st *cwState) observe(s *Server, id string, now time.Time) instView {
	live := running(s.stateOf(id))
	st.mu.Lock()
	defer st.mu.Unlock()
	r := st.runs[id]
	switch {
	case r.stopped && live:
		r.gaps = append(r.gaps, span{r.since, now})
		r.stopped, r.since = false, time.Time{}
	case !r.stopped && !live:
		r.stopped, r.since = true, now
	}
	return instView{
		down:    r.down(),
		loads:   append([]loadChange(nil), st.loads[id]...),
		stopped: r.stopped, since: r.since,
	}
}

// SetLoad makes every GPU of the instance report gpuPercent utilization
// from the simulator's Now (its minute) onward, until set again; earlier
// datapoints keep the fleet's pattern. Stops still remove datapoints. It
// fails for an unknown instance, a value outside 0–100, and an instance
// without GPU metrics.
func (s *Server) SetLoad(id string, gpuPercent float64) error {
	if math.IsNaN(gpuPercent) || gpuPercent < 0 || gpuPercent > 100 {
		return fmt.Errorf("gpu %v: want a percentage from 0 to 100", gpuPercent)
	}
	st := s.cw()
	is, ok := st.insts[id]
	if !ok {
		return fmt.Errorf("%w: %s", errNoInstance, id)
	}
	gpu := false
	for _, se := range is.series {
		gpu = gpu || se.name == metricGPUUtil
	}
	if !gpu {
		return fmt.Errorf("%s has no GPU metrics (the fleet gives it no GPU utilization)", id)
	}
	from := s.opts.Now().UTC().Truncate(time.Minute)
	st.mu.Lock()
	defer st.mu.Unlock()
	loads := st.loads[id]
	for len(loads) > 0 && !loads[len(loads)-1].from.Before(from) {
		loads = loads[:len(loads)-1]
	}
	st.loads[id] = append(loads, loadChange{from, gpuPercent})
	return nil
}

// errNoInstance is SetLoad's error for an unknown instance ID.
var errNoInstance = errors.New("no such instance")

// each calls fn, in time order, for the runs of minutes with a datapoint in
// [from, to) (minute starts; both on the minute): every minute of [a, z)
// has the value v. A minute carries its hour's pattern value (so hourly
// averages are the pattern), or for GPU utilization the load set last
// before it; minutes wholly in a stop have none. Nothing is stored per
// minute.
func (se *series) each(from, to time.Time, view instView, fn func(a, z time.Time, v float64)) {
	var loads []loadChange
	if se.name == metricGPUUtil {
		loads = view.loads
	}
	for h := from.Truncate(time.Hour); h.Before(to); h = h.Add(time.Hour) {
		a, z := h, h.Add(time.Hour)
		if a.Before(from) {
			a = from
		}
		if z.After(to) {
			z = to
		}
		pattern := se.values[se.inst.clock.slot(h)]
		for a.Before(z) {
			v, next := pattern, z
			for _, l := range loads {
				if l.from.After(a) {
					if l.from.Before(next) {
						next = l.from
					}
					break
				}
				v = l.gpu
			}
			if !math.IsNaN(v) {
				upRuns(a, next, view.down, v, fn)
			}
			a = next
		}
	}
}

// upRuns calls fn for the parts of [a, z) outside the down spans.
func upRuns(a, z time.Time, down []span, v float64, fn func(a, z time.Time, v float64)) {
	for _, d := range down {
		if !d.to.After(a) {
			continue
		}
		if !d.from.Before(z) {
			break
		}
		if d.from.After(a) {
			fn(a, d.from, v)
		}
		a = d.to
		if !a.Before(z) {
			return
		}
	}
	fn(a, z, v)
}
