package sim

// Azure Monitor metrics. Azure has no GPU platform metric for VMs: the GPU
// series are Telegraf's nvidia_smi fields sent as custom metrics (namespace
// Options.Namespace, dimensions index, name and uuid per GPU), and the host
// CPU is the platform metric "Percentage CPU" of Microsoft.Compute/
// virtualMachines. Values come from simkit's series synthesizer: every
// minute carries its hour's value, and minutes while a VM is deallocated
// have none (simkit.Timeline). An interval with no datapoint is served as a
// timestamp without aggregates, as Azure Monitor does.

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers/simkit"
)

// PlatformNamespace is the namespace of the VM host metrics.
const PlatformNamespace = "Microsoft.Compute/virtualMachines"

// MetricCPU is the host CPU metric.
const MetricCPU = "Percentage CPU"

var idleCPU = fleet.Stats{Avg: 3, P95: 8, Max: 15}

// seriesState holds each VM's synthesized pattern, built once, and the
// timeline of stops seen and loads set.
type seriesState struct {
	once     sync.Once
	patterns map[string]simkit.Pattern
	timeline *simkit.Timeline
}

func (s *Server) metrics() *seriesState {
	st := &s.series
	st.once.Do(func() {
		st.patterns = map[string]simkit.Pattern{}
		st.timeline = simkit.NewTimeline()
		for _, v := range s.vms {
			gpus := max(int(math.Ceil(v.in.GPU.Count)), 1)
			st.patterns[v.in.ID] = simkit.Synthesize(*v.in, gpus, simkit.Keys{GPU: s.opts.GPUMetric, GPUMemory: s.opts.GPUMemoryMetric, CPU: MetricCPU, Memory: "mem"}, idleCPU)
			st.timeline.Add(v.in.ID, v.in.State == fleet.Stopped)
		}
		s.amlPatterns(st)
	})
	return st
}

// SetLoad implements simkit.Backend: every GPU of the VM reports
// gpuPercent from Now on.
func (s *Server) SetLoad(id string, gpuPercent float64) error {
	st := s.metrics()
	p, ok := st.patterns[id]
	if !ok {
		return fmt.Errorf("%w: %s", simkit.ErrNoInstance, id)
	}
	if len(p.GPU) == 0 {
		return fmt.Errorf("%s has no GPU metrics (the fleet gives it no GPU utilization)", id)
	}
	return st.timeline.SetLoad(id, gpuPercent, s.opts.Now())
}

var intervals = map[string]time.Duration{"PT1M": time.Minute, "PT5M": 5 * time.Minute, "PT15M": 15 * time.Minute, "PT30M": 30 * time.Minute,
	"PT1H": time.Hour, "PT6H": 6 * time.Hour, "PT12H": 12 * time.Hour, "P1D": 24 * time.Hour}

var reIndexFilter = regexp.MustCompile(`(?i)index\s+eq\s+'([^']*)'`)

// metricQuery is one metrics request's parameters.
type metricQuery struct {
	namespace  string
	names      []string
	from, to   time.Time
	interval   time.Duration
	intervalS  string
	aggs       []string
	splitIndex bool
	index      string
}

func parseMetricQuery(r *http.Request, batch bool) (metricQuery, error) {
	q := r.URL.Query()
	m := metricQuery{namespace: q.Get("metricnamespace"), intervalS: q.Get("interval")}
	if m.intervalS == "" {
		m.intervalS = "PT1H"
	}
	var ok bool
	if m.interval, ok = intervals[strings.ToUpper(m.intervalS)]; !ok {
		return m, fmt.Errorf("interval %q is not supported; want one of PT1M, PT5M, PT15M, PT30M, PT1H, PT6H, PT12H, P1D", m.intervalS)
	}
	for _, n := range strings.Split(q.Get("metricnames"), ",") {
		if n = strings.TrimSpace(n); n != "" {
			m.names = append(m.names, n)
		}
	}
	if len(m.names) == 0 || len(m.names) > 20 {
		return m, fmt.Errorf("metricnames: want 1 to 20 names")
	}
	var start, end string
	if batch {
		start, end = q.Get("starttime"), q.Get("endtime")
	} else {
		start, end, _ = strings.Cut(timespanOf(q.Get("timespan")), "/")
	}
	var err error
	if m.from, err = parseISOTime(start); err != nil {
		return m, fmt.Errorf("start time %q: %v", start, err)
	}
	if m.to, err = parseISOTime(end); err != nil {
		return m, fmt.Errorf("end time %q: %v", end, err)
	}
	if !m.to.After(m.from) {
		return m, fmt.Errorf("the time span ends before it starts")
	}
	aggs := q.Get("aggregation")
	if aggs == "" {
		aggs = "average"
	}
	for _, a := range strings.Split(aggs, ",") {
		m.aggs = append(m.aggs, strings.ToLower(strings.TrimSpace(a)))
	}
	filter := q.Get("filter")
	if filter == "" {
		filter = q.Get("$filter")
	}
	if f := reIndexFilter.FindStringSubmatch(filter); f != nil {
		m.splitIndex, m.index = true, f[1]
	}
	return m, nil
}

func (s *Server) serveMetrics(w http.ResponseWriter, req request) {
	batch := req.op == "MetricsBatch"
	mq, err := parseMetricQuery(req.r, batch)
	if err != nil {
		writeError(w, http.StatusBadRequest, "BadRequest", err.Error())
		return
	}
	if batch && (len(req.parts) == 0 || len(req.parts) > 50) {
		writeError(w, http.StatusBadRequest, "BadRequest", "resourceids: want 1 to 50 resource IDs")
		return
	}
	var values []map[string]any
	for _, id := range req.parts {
		v := s.byID[strings.ToLower(id)]
		if v == nil {
			if sub, region, ok := s.amlOwner(id); ok {
				if batch && !strings.EqualFold(sub, req.sub) {
					writeError(w, http.StatusBadRequest, "BadRequest", "resource "+id+" is not in subscription "+req.sub)
					return
				}
				filter := req.r.URL.Query().Get("filter")
				if filter == "" {
					filter = req.r.URL.Query().Get("$filter")
				}
				values = append(values, s.amlResourceMetrics(id, region, mq, filter))
				continue
			}
			if !batch {
				writeError(w, http.StatusNotFound, "ResourceNotFound", "The Resource '"+id+"' was not found.")
				return
			}
			continue
		}
		if batch && !strings.EqualFold(v.sub, req.sub) {
			writeError(w, http.StatusBadRequest, "BadRequest", "resource "+id+" is not in subscription "+req.sub)
			return
		}
		values = append(values, s.resourceMetrics(v, id, mq))
	}
	if batch {
		if values == nil {
			values = []map[string]any{} // an array, never null (metricBatch.json)
		}
		writeJSON(w, map[string]any{"values": values})
		return
	}
	// The single-resource answer is metrics_API.json's Response: cost,
	// timespan, interval, namespace, resourceregion and value; starttime,
	// endtime and resourceid are the batch's (FACTS.md).
	out := values[0]
	for _, k := range []string{"starttime", "endtime", "resourceid"} {
		delete(out, k)
	}
	out["timespan"] = mq.from.Format(time.RFC3339) + "/" + mq.to.Format(time.RFC3339)
	out["cost"] = 0
	writeJSON(w, out)
}

// resourceMetrics is one resource's answer: each metric asked for, with a
// time series per GPU index (split) or one over every index.
func (s *Server) resourceMetrics(v *vm, id string, mq metricQuery) map[string]any {
	st := s.metrics()
	p := st.patterns[v.in.ID]
	view := st.timeline.Observe(v.in.ID, s.inv.StateOf(v.in.ID) == "running", s.opts.Now())
	var metrics []map[string]any
	for _, name := range mq.names {
		var perIndex [][]float64
		var loads []simkit.Load
		unit := "Percent"
		switch {
		case strings.EqualFold(mq.namespace, PlatformNamespace) && name == MetricCPU:
			if p.CPU != nil {
				perIndex = [][]float64{p.CPU}
			}
		case strings.EqualFold(mq.namespace, s.opts.Namespace) && name == s.opts.GPUMetric:
			perIndex, loads, unit = p.GPU, view.Loads, "Unspecified"
		case strings.EqualFold(mq.namespace, s.opts.Namespace) && name == s.opts.GPUMemoryMetric:
			perIndex, unit = p.GPUMemory, "Unspecified"
		}
		var series []map[string]any
		if mq.splitIndex {
			for i, vals := range perIndex {
				if vals == nil || (mq.index != "*" && mq.index != strconv.Itoa(i)) {
					continue
				}
				if ts, ok := s.timeseries([][]float64{vals}, loads, p.Clock, view, mq); ok {
					ts["metadatavalues"] = []map[string]any{{"name": map[string]string{"value": "index", "localizedValue": "index"}, "value": strconv.Itoa(i)}}
					series = append(series, ts)
				}
			}
		} else if ts, ok := s.timeseries(perIndex, loads, p.Clock, view, mq); ok {
			ts["metadatavalues"] = []any{}
			series = append(series, ts)
		}
		if series == nil {
			series = []map[string]any{}
		}
		metrics = append(metrics, map[string]any{"id": id + "/providers/Microsoft.Insights/metrics/" + name, "type": "Microsoft.Insights/metrics",
			"name": map[string]string{"value": name, "localizedValue": name}, "displayDescription": "", "unit": unit,
			"timeseries": series, "errorCode": "Success"})
	}
	return map[string]any{"starttime": mq.from.Format(time.RFC3339), "endtime": mq.to.Format(time.RFC3339), "interval": mq.intervalS,
		"namespace": mq.namespace, "resourceregion": v.in.Region, "resourceid": id, "value": metrics}
}

// timeseries aggregates the minutes of every series given into intervals;
// false when none has a datapoint.
func (s *Server) timeseries(all [][]float64, loads []simkit.Load, clock simkit.Clock, view simkit.View, mq metricQuery) (map[string]any, bool) {
	from := mq.from.Truncate(time.Minute)
	to := mq.to.Truncate(time.Minute)
	if now := s.opts.Now().Truncate(time.Minute); to.After(now) {
		to = now
	}
	n := int(math.Ceil(float64(mq.to.Sub(from)) / float64(mq.interval)))
	sum := make([]float64, n)
	cnt := make([]float64, n)
	mx := make([]float64, n)
	mn := make([]float64, n)
	for i := range mn {
		mn[i] = math.Inf(1)
		mx[i] = math.Inf(-1)
	}
	seen := false
	for _, vals := range all {
		if vals == nil || !to.After(from) {
			continue
		}
		simkit.Each(vals, clock, from, to, view.Down, loads, func(a, z time.Time, v float64) {
			for t := a; t.Before(z); {
				b := int(t.Sub(from) / mq.interval)
				end := from.Add(time.Duration(b+1) * mq.interval)
				if end.After(z) {
					end = z
				}
				mins := end.Sub(t).Minutes()
				sum[b] += v * mins
				cnt[b] += mins
				mx[b] = math.Max(mx[b], v)
				mn[b] = math.Min(mn[b], v)
				seen = true
				t = end
			}
		})
	}
	if !seen {
		return nil, false
	}
	data := make([]metricPoint, 0, n)
	for b := 0; b < n; b++ {
		pt := metricPoint{TimeStamp: from.Add(time.Duration(b) * mq.interval).Format(time.RFC3339)}
		if cnt[b] > 0 {
			for _, a := range mq.aggs {
				switch a {
				case "average":
					pt.Average = round(sum[b] / cnt[b])
				case "maximum":
					pt.Maximum = round(mx[b])
				case "minimum":
					pt.Minimum = round(mn[b])
				case "total":
					pt.Total = round(sum[b])
				case "count":
					pt.Count = cnt[b]
				}
			}
		}
		data = append(data, pt)
	}
	return map[string]any{"data": data}, true
}

// metricPoint is one interval of a time series: its start and the
// aggregations asked for (the others absent). A struct, not a map, so that
// large answers encode without sorting keys; the fields are in the order a
// map's sorted keys were written.
type metricPoint struct {
	Average   json.Number `json:"average,omitempty"`
	Count     float64     `json:"count,omitempty"`
	Maximum   json.Number `json:"maximum,omitempty"`
	Minimum   json.Number `json:"minimum,omitempty"`
	TimeStamp string      `json:"timeStamp"`
	Total     json.Number `json:"total,omitempty"`
}

func round(v float64) json.Number {
	return json.Number(strconv.FormatFloat(math.Round(v*1e4)/1e4, 'f', -1, 64))
}

// timespanOf is a timespan query value as Azure Monitor reads it: one
// percent-encoded a second time (azure-cli's monitor metrics list sends it
// so) is decoded again (FACTS.md).
func timespanOf(v string) string {
	if strings.Contains(v, "%") {
		if u, err := url.QueryUnescape(v); err == nil {
			return u
		}
	}
	return v
}

// parseISOTime reads an ISO 8601 date-time: with its UTC offset, or
// without one, as UTC (FACTS.md).
func parseISOTime(v string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		if t2, err2 := time.Parse("2006-01-02T15:04:05.999999999", v); err2 == nil {
			return t2.UTC(), nil
		}
	}
	return t, err
}
