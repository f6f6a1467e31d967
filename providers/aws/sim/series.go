package sim

// The metric series the simulated CloudWatch serves, made from the fleet by
// simkit's series synthesizer (simkit.Synthesize: samples replayed, summary
// figures shaped over the running hours, idle CPU for instances without
// utilization), named as the CloudWatch agent and EC2 publish them.
//
// Every AWS instance publishes a datapoint every minute, as the CloudWatch
// agent does by default: every minute of an hour carries that hour's value,
// so the hourly averages are the pattern (simkit.Each; minute datapoints
// are made on the fly, never stored). Only complete minutes before
// Options.Now have datapoints, and none while an instance is stopped
// (simkit.Timeline). SetLoad overrides an instance's GPU utilization from
// Now on. How CloudWatch keeps and aggregates the minutes is in
// cloudwatch.go (aggregate).

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers/simkit"
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
	// account is the fleet's account of the instance: ListMetrics lists
	// only the caller's.
	account string
	// stoppedInFleet: the fleet has the instance stopped, so it has no
	// datapoints until it is started.
	stoppedInFleet bool
	clock          simkit.Clock
	series         []*series
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

// seedKeys seed the synthesized values with the metric names.
var seedKeys = simkit.Keys{GPU: metricGPUUtil, GPUMemory: metricGPUMemUsed, CPU: metricCPU, Memory: metricMemUsed}

// buildInstance makes an instance's series.
func (s *Server) buildInstance(in fleet.Instance) *instSeries {
	if isSageMaker(&in) {
		return s.buildSageMaker(in)
	}
	is := &instSeries{id: in.ID, region: in.Region, account: in.Account, stoppedInFleet: in.State == fleet.Stopped}
	g := s.gpuInfoOf(in)
	p := simkit.Synthesize(in, g.count, seedKeys, defaultCPU)
	is.clock = p.Clock
	g.count = max(g.count, len(p.GPU))
	is.addGPU(in, g, p.GPU, p.GPUMemory)
	is.add(agentNamespace, metricMemUsed, "Percent", agentDims(in), p.Memory)
	is.add(ec2Namespace, metricCPU, "Percent", is.ec2Dims(), p.CPU)
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

// cwState is the simulated CloudWatch's own state: the series, built once
// from the fleet, and the timeline of stops seen and GPU loads set.
type cwState struct {
	once     sync.Once
	all      []*series                     // in fleet order
	byRegion map[string]map[string]*series // region → key → series
	insts    map[string]*instSeries
	timeline *simkit.Timeline
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
	st.timeline = simkit.NewTimeline()
	for _, in := range s.inv.Instances() {
		is := s.buildInstance(in)
		st.insts[in.ID] = is
		st.timeline.Add(in.ID, is.stoppedInFleet) // stopped in the fleet: since ever
		if st.byRegion[in.Region] == nil {
			st.byRegion[in.Region] = map[string]*series{}
		}
		for _, se := range is.series {
			st.all = append(st.all, se)
			st.byRegion[in.Region][se.key()] = se
		}
	}
}

// running reports whether an EC2 state name is a running one.
func running(state string) bool { return state == "running" || state == "pending" }

// observe records the instance's live state at now and returns what a
// request at now sees of it.
func (st *cwState) observe(s *Server, id string, now time.Time) simkit.View {
	return st.timeline.Observe(id, running(s.stateOf(id)), now)
}

// SetLoad makes every GPU of the instance report gpuPercent utilization
// from the simulator's Now (its minute) onward, until set again; earlier
// datapoints keep the fleet's pattern. Stops still remove datapoints. It
// fails for an unknown instance (simkit.ErrNoInstance), a value outside
// 0–100, and an instance without GPU metrics.
func (s *Server) SetLoad(id string, gpuPercent float64) error {
	if math.IsNaN(gpuPercent) || gpuPercent < 0 || gpuPercent > 100 {
		return fmt.Errorf("gpu %v: want a percentage from 0 to 100", gpuPercent)
	}
	st := s.cw()
	is, ok := st.insts[id]
	if !ok {
		return fmt.Errorf("%w: %s", simkit.ErrNoInstance, id)
	}
	gpu := false
	for _, se := range is.series {
		gpu = gpu || se.name == metricGPUUtil
	}
	if !gpu {
		return fmt.Errorf("%s has no GPU metrics (the fleet gives it no GPU utilization)", id)
	}
	return st.timeline.SetLoad(id, gpuPercent, s.opts.Now())
}

// each calls fn, in time order, for the runs of minutes with a datapoint in
// [from, to) (simkit.Each); GPU utilization follows the loads set.
func (se *series) each(from, to time.Time, view simkit.View, fn func(a, z time.Time, v float64)) {
	var loads []simkit.Load
	if se.name == metricGPUUtil {
		loads = view.Loads
	}
	simkit.Each(se.values, se.inst.clock, from, to, view.Down, loads, fn)
}

// eachUnix is each in Unix seconds (simkit.EachUnix): from and to are
// minute starts.
func (se *series) eachUnix(from, to int64, view simkit.View, fn func(a, z int64, v float64)) {
	var loads []simkit.Load
	if se.name == metricGPUUtil {
		loads = view.Loads
	}
	simkit.EachUnix(se.values, se.inst.clock, from, to, view.Down, loads, fn)
}
