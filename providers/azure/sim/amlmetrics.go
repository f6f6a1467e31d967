package sim

// Azure Monitor metrics of the Azure ML items (Microsoft Learn, supported
// metrics of Microsoft.MachineLearningServices; shared/data/managed-ai
// metrics.md §3): a managed online deployment's GpuUtilizationPercentage
// and GpuMemoryUtilizationPercentage (Percent, per instance: dimension
// instanceId) and DeploymentCapacity (Count); an endpoint's
// RequestsPerMinute (Count, dimension deployment); a workspace's
// GpuUtilizationPercentage (Count, values in percent, dimension
// ComputeName) and its clusters' "Active Nodes" and "Idle Nodes" (Count,
// dimension ClusterName). The GPU series are synthesized from the item's
// utilization as the VMs' are (one series per instance or node, each the
// item's figures); requests are the item's requests spread evenly over its
// utilization window; active nodes are the cluster's nodes when the file
// says it ran jobs, none when it ran none, and absent when it does not say.
// A metric the item has no figures for has no time series.

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers/simkit"
)

// The Azure ML metric namespaces.
const (
	AMLDeploymentNamespace = "Microsoft.MachineLearningServices/workspaces/onlineEndpoints/deployments"
	AMLEndpointNamespace   = "Microsoft.MachineLearningServices/workspaces/onlineEndpoints"
	AMLWorkspaceNamespace  = "Microsoft.MachineLearningServices/workspaces"
)

var reDimFilter = regexp.MustCompile(`(?i)^\s*([A-Za-z_]+)\s+eq\s+'([^']*)'\s*$`)

// dimFilter is the dimension and value of a filter "Dim eq 'value'" ('*':
// a series per value); "" when there is none.
func dimFilter(filter string) (dim, value string) {
	if m := reDimFilter.FindStringSubmatch(filter); m != nil {
		return m[1], m[2]
	}
	return "", ""
}

// amlSeries is one series an Azure ML resource has for a metric: its
// dimension value and its values (a pattern on a clock, or a constant
// within a span).
type amlSeries struct {
	dimValue string
	values   []float64
	clock    simkit.Clock
	view     simkit.View
	constant bool
	from, to time.Time // the constant's span
}

// amlOwner is the region and subscription of an Azure ML resource ID
// (workspace, endpoint, deployment, compute); false when it is none of the
// simulator's.
func (s *Server) amlOwner(id string) (sub, region string, ok bool) {
	for _, a := range s.aml {
		for _, x := range []string{a.workspaceID(), a.id(), a.endpointID()} {
			if strings.EqualFold(x, id) && (x != a.endpointID() || a.computeType == "") {
				return a.sub, a.in.Region, true
			}
		}
	}
	return "", "", false
}

func (s *Server) amlView(a *amlItem) (simkit.Pattern, simkit.View) {
	st := s.metrics()
	p := st.patterns[a.in.ID]
	view := st.timeline.Observe(a.in.ID, s.inv.StateOf(a.in.ID) == "running", s.opts.Now())
	return p, view
}

func constant(v float64, from, to time.Time, dim string) amlSeries {
	return amlSeries{dimValue: dim, values: []float64{v}, constant: true, from: from, to: to}
}

// amlMetric is the series and unit of one metric of an Azure ML resource.
func (s *Server) amlMetric(id, namespace, name string) (series []amlSeries, dim, unit string) {
	now := s.opts.Now()
	ever := time.Time{}
	switch {
	case strings.EqualFold(namespace, AMLDeploymentNamespace):
		a := s.amlByID(id)
		if a == nil || a.computeType != "" {
			return nil, "", ""
		}
		p, view := s.amlView(a)
		var vals []float64
		unit = "Percent"
		switch name {
		case "GpuUtilizationPercentage":
			if len(p.GPU) > 0 {
				vals = p.GPU[0]
			}
		case "GpuMemoryUtilizationPercentage":
			if len(p.GPUMemory) > 0 {
				vals = p.GPUMemory[0]
			}
		case "DeploymentCapacity":
			return []amlSeries{constant(float64(a.replicas), ever, now, "")}, "instanceId", "Count"
		default:
			return nil, "", ""
		}
		if vals == nil {
			return nil, "instanceId", unit
		}
		for i := 0; i < a.replicas; i++ {
			series = append(series, amlSeries{dimValue: a.name + "-" + strconv.Itoa(i), values: vals, clock: p.Clock, view: view})
		}
		return series, "instanceId", unit
	case strings.EqualFold(namespace, AMLEndpointNamespace) && name == "RequestsPerMinute":
		for _, a := range s.aml {
			if a.computeType != "" || !strings.EqualFold(a.endpointID(), id) || a.in.Managed.Requests == nil {
				continue
			}
			from, to := s.amlWindow(a)
			perMinute := *a.in.Managed.Requests / to.Sub(from).Minutes()
			series = append(series, constant(perMinute, from, to, a.name))
		}
		return series, "deployment", "Count"
	case strings.EqualFold(namespace, AMLWorkspaceNamespace):
		for _, a := range s.aml {
			if a.computeType == "" || !strings.EqualFold(a.workspaceID(), id) {
				continue
			}
			switch name {
			case "GpuUtilizationPercentage":
				p, view := s.amlView(a)
				if len(p.GPU) > 0 {
					series = append(series, amlSeries{dimValue: a.name, values: p.GPU[0], clock: p.Clock, view: view})
				}
				dim = "ComputeName"
			case "Active Nodes", "Idle Nodes":
				dim = "ClusterName"
				j := a.in.Managed.Jobs
				if a.computeType != "AmlCompute" || j == nil {
					continue
				}
				active := 0.0
				if *j > 0 {
					active = float64(a.replicas)
				}
				if name == "Idle Nodes" {
					active = float64(a.replicas) - active
				}
				from, to := s.amlWindow(a)
				series = append(series, constant(active, from, to, a.name))
			}
		}
		return series, dim, "Count"
	}
	return nil, "", ""
}

// amlWindow is the span an item's constant series cover: its utilization
// window, else the week to now.
func (s *Server) amlWindow(a *amlItem) (time.Time, time.Time) {
	if u := a.in.Utilization; u != nil && u.Window != nil && u.Window.End.After(u.Window.Start) {
		return u.Window.Start, u.Window.End
	}
	now := s.opts.Now()
	return now.Add(-7 * 24 * time.Hour), now
}

// amlResourceMetrics is one Azure ML resource's answer, as resourceMetrics
// is a VM's.
func (s *Server) amlResourceMetrics(id, region string, mq metricQuery, filter string) map[string]any {
	wantDim, wantValue := dimFilter(filter)
	var metrics []map[string]any
	for _, name := range mq.names {
		all, dim, unit := s.amlMetric(id, mq.namespace, name)
		if unit == "" {
			unit = "Count"
		}
		split := wantDim != "" && strings.EqualFold(wantDim, dim)
		var out []map[string]any
		if split {
			for _, sr := range all {
				if wantValue != "*" && !strings.EqualFold(wantValue, sr.dimValue) {
					continue
				}
				if ts, ok := s.amlTimeseries([]amlSeries{sr}, mq); ok {
					ts["metadatavalues"] = []map[string]any{{"name": map[string]string{"value": dim, "localizedValue": dim}, "value": sr.dimValue}}
					out = append(out, ts)
				}
			}
		} else if ts, ok := s.amlTimeseries(all, mq); ok {
			ts["metadatavalues"] = []any{}
			out = append(out, ts)
		}
		if out == nil {
			out = []map[string]any{}
		}
		metrics = append(metrics, map[string]any{"id": id + "/providers/Microsoft.Insights/metrics/" + name, "type": "Microsoft.Insights/metrics",
			"name": map[string]string{"value": name, "localizedValue": name}, "displayDescription": "", "unit": unit,
			"timeseries": out, "errorCode": "Success"})
	}
	return map[string]any{"starttime": mq.from.Format(time.RFC3339), "endtime": mq.to.Format(time.RFC3339), "interval": mq.intervalS,
		"namespace": mq.namespace, "resourceregion": region, "resourceid": id, "value": metrics}
}

// amlTimeseries aggregates series into one: patterns as the VMs' are,
// constants over their span (a minute outside it has no datapoint).
// Several series of one metric are averaged, their totals summed.
func (s *Server) amlTimeseries(all []amlSeries, mq metricQuery) (map[string]any, bool) {
	var pats [][]float64
	var consts []amlSeries
	for _, sr := range all {
		if sr.constant {
			consts = append(consts, sr)
		} else {
			pats = append(pats, sr.values)
		}
	}
	if len(consts) == 0 {
		if len(pats) == 0 {
			return nil, false
		}
		first := all[0]
		return s.timeseries(pats, first.view.Loads, first.clock, first.view, mq)
	}
	from := mq.from.Truncate(time.Minute)
	to := mq.to.Truncate(time.Minute)
	if now := s.opts.Now().Truncate(time.Minute); to.After(now) {
		to = now
	}
	n := int(math.Ceil(float64(mq.to.Sub(from)) / float64(mq.interval)))
	data := make([]metricPoint, 0, n)
	seen := false
	for b := 0; b < n; b++ {
		a := from.Add(time.Duration(b) * mq.interval)
		z := a.Add(mq.interval)
		pt := metricPoint{TimeStamp: a.Format(time.RFC3339)}
		var sum, mins, mx, mn float64
		mx, mn = math.Inf(-1), math.Inf(1)
		for _, c := range consts {
			lo, hi := a, z
			if c.from.After(lo) {
				lo = c.from
			}
			if hi.After(to) {
				hi = to
			}
			if c.to.Before(hi) {
				hi = c.to
			}
			if !hi.After(lo) {
				continue
			}
			m := hi.Sub(lo).Minutes()
			v := c.values[0]
			sum += v * m
			mins += m
			mx, mn = math.Max(mx, v), math.Min(mn, v)
		}
		if mins > 0 {
			seen = true
			for _, agg := range mq.aggs {
				switch agg {
				case "average":
					pt.Average = round(sum / mins)
				case "maximum":
					pt.Maximum = round(mx)
				case "minimum":
					pt.Minimum = round(mn)
				case "total":
					pt.Total = round(sum)
				case "count":
					pt.Count = mins
				}
			}
		}
		data = append(data, pt)
	}
	if !seen {
		return nil, false
	}
	return map[string]any{"data": data}, true
}

// amlPatterns adds the Azure ML items' patterns to st: one GPU series
// each (the figures are per instance or node).
func (s *Server) amlPatterns(st *seriesState) {
	for _, a := range s.aml {
		st.patterns[a.in.ID] = simkit.Synthesize(*a.in, 1, simkit.Keys{GPU: "GpuUtilizationPercentage", GPUMemory: "GpuMemoryUtilizationPercentage", CPU: "CpuUtilizationPercentage", Memory: "mem"}, idleCPU)
		st.timeline.Add(a.in.ID, a.in.State == fleet.Stopped)
	}
}
