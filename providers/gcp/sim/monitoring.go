package sim

// Cloud Monitoring's ListTimeSeries over gRPC, written with the protobuf
// wire format itself (google.golang.org/protobuf/encoding/protowire) and
// gRPC's length-prefixed framing, so the simulator shares no code with the
// generated client it checks.
//
// The series are the Ops Agent's: agent.googleapis.com/gpu/utilization
// (percent, labels gpu_number, model, uuid), gpu/memory/bytes_used (label
// memory_state used|free) and Compute Engine's instance/cpu/utilization
// (a ratio) and the agent's memory/percent_used (label state; the simulator
// serves the used state), on the gce_instance; Options.DCGM's instances
// publish the DCGM receiver's gpu.dcgm.utilization (a ratio) and
// gpu.dcgm.memory.bytes_used (label state) instead, resource (labels project_id, instance_id,
// zone). Every series has a datapoint per minute of the hours the fleet
// gives values for (simkit's synthesizer), none while the VM is stopped.
// The request's aggregation is applied: per-series alignment (ALIGN_MEAN,
// ALIGN_MAX, ALIGN_MIN, ALIGN_SUM, ALIGN_COUNT) over the alignment period,
// then the cross-series reducer (REDUCE_MEAN, REDUCE_MAX, REDUCE_MIN,
// REDUCE_SUM, REDUCE_COUNT) over the groups of groupByFields; counts are
// INT64, the rest DOUBLE (int64Output). Points are newest first, as
// Monitoring returns them.

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers/simkit"
)

// The metrics served.
const (
	metricGPUUtil = "agent.googleapis.com/gpu/utilization"
	metricGPUMem  = "agent.googleapis.com/gpu/memory/bytes_used"
	metricCPU     = "compute.googleapis.com/instance/cpu/utilization"
	metricMemory  = "agent.googleapis.com/memory/percent_used"
	metricDCGM    = "workload.googleapis.com/gpu.dcgm.utilization"       // ratio
	metricDCGMMem = "workload.googleapis.com/gpu.dcgm.memory.bytes_used" // label state used|free
)

const listTimeSeries = "/google.monitoring.v3.MetricService/ListTimeSeries"

// gRPC status codes.
const (
	grpcOK                = 0
	grpcInvalidArgument   = 3
	grpcNotFound          = 5
	grpcPermissionDenied  = 7
	grpcResourceExhausted = 8
	grpcUnimplemented     = 12
	grpcInternal          = 13
	grpcUnavailable       = 14
	grpcUnauthenticated   = 16
)

// grpcCode maps an HTTP status of an injected fault to a gRPC code.
func grpcCode(status int) int {
	switch status {
	case 400:
		return grpcInvalidArgument
	case 401:
		return grpcUnauthenticated
	case 403:
		return grpcPermissionDenied
	case 404:
		return grpcNotFound
	case 429:
		return grpcResourceExhausted
	case 503:
		return grpcUnavailable
	}
	return grpcInternal
}

// writeGRPC answers a unary call: the message framed, then the status in
// the trailers (a message of nil sends none: an error).
func writeGRPC(w http.ResponseWriter, msg []byte, code int, text string) {
	w.Header().Set("Content-Type", "application/grpc")
	w.Header().Set(http.TrailerPrefix+"Grpc-Status", strconv.Itoa(code))
	if text != "" {
		w.Header().Set(http.TrailerPrefix+"Grpc-Message", url.PathEscape(text))
	}
	w.WriteHeader(http.StatusOK)
	if msg != nil {
		frame := make([]byte, 5, 5+len(msg))
		binary.BigEndian.PutUint32(frame[1:], uint32(len(msg)))
		_, _ = w.Write(append(frame, msg...))
	}
}

func grpcError(w http.ResponseWriter, status int, _ string, msg string) {
	writeGRPC(w, nil, grpcCode(status), msg)
}

// grpcErrorOf writes an injected error of a call on project's behalf as a
// google.rpc.Status in grpc-status-details-bin: RESOURCE_EXHAUSTED carries
// an ErrorInfo (reason RATE_LIMIT_EXCEEDED, domain googleapis.com, the
// service and consumer in its metadata) and, when Options.RetryDelay is
// set, a RetryInfo with that delay (FACTS.md).
func (s *Server) grpcErrorOf(project string) func(http.ResponseWriter, int, string, string) {
	return func(w http.ResponseWriter, status int, _ string, msg string) {
		code := grpcCode(status)
		if code == grpcResourceExhausted {
			if msg == "" {
				msg = "Quota exceeded for service 'monitoring.googleapis.com' for consumer 'projects/" + project + "'."
			}
			info := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), "RATE_LIMIT_EXCEEDED")
			info = protowire.AppendString(protowire.AppendTag(info, 2, protowire.BytesType), "googleapis.com")
			info = appendLabels(info, 3, map[string]string{"service": "monitoring.googleapis.com", "consumer": "projects/" + project})
			details := [][2]any{{"type.googleapis.com/google.rpc.ErrorInfo", info}}
			if d := s.opts.RetryDelay; d > 0 {
				dur := protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), uint64(d/time.Second))
				if n := d % time.Second; n > 0 {
					dur = protowire.AppendVarint(protowire.AppendTag(dur, 2, protowire.VarintType), uint64(n))
				}
				details = append(details, [2]any{"type.googleapis.com/google.rpc.RetryInfo", appendMessage(nil, 1, dur)})
			}
			st := protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), uint64(code))
			st = protowire.AppendString(protowire.AppendTag(st, 2, protowire.BytesType), msg)
			for _, d := range details {
				anyMsg := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), d[0].(string))
				anyMsg = protowire.AppendBytes(protowire.AppendTag(anyMsg, 2, protowire.BytesType), d[1].([]byte))
				st = appendMessage(st, 3, anyMsg)
			}
			w.Header().Set(http.TrailerPrefix+"Grpc-Status-Details-Bin", base64.RawStdEncoding.EncodeToString(st))
		}
		writeGRPC(w, nil, code, msg)
	}
}

// request is a decoded ListTimeSeriesRequest.
type request struct {
	name, filter     string
	start, end       time.Time
	period           time.Duration
	aligner, reducer int
	groupBy          []string
	headers          bool
	pageSize         int
	pageToken        string
}

// The aligners and reducers served.
const (
	alignNone  = 0
	alignMin   = 10
	alignMax   = 11
	alignMean  = 12
	alignCount = 13
	alignSum   = 14
	reduceNone = 0
	reduceMean = 1
	reduceMin  = 2
	reduceMax  = 3
	reduceSum  = 4
	reduceCnt  = 6
)

// serveGRPC serves Monitoring's ListTimeSeries, through the kit.
func (s *Server) serveGRPC(w http.ResponseWriter, r *http.Request) {
	if r.ProtoMajor != 2 {
		http.Error(w, "gRPC needs HTTP/2", http.StatusHTTPVersionNotSupported)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 4<<20))
	if err != nil || len(body) < 5 || body[0] != 0 || int(binary.BigEndian.Uint32(body[1:5])) != len(body)-5 {
		writeGRPC(w, nil, grpcInternal, "the simulator reads one uncompressed message per call")
		return
	}
	if r.URL.Path != listTimeSeries {
		s.kit.Serve(w, r, simkit.Call{Service: "monitoring", Op: path(r.URL.Path), Dialect: dialect, WriteError: grpcError}, func(w http.ResponseWriter) {
			writeGRPC(w, nil, grpcUnimplemented, "the simulator serves only ListTimeSeries")
		})
		return
	}
	req, err := decodeRequest(body[5:])
	var f filter
	if err == nil {
		f, err = parseMonitoringFilter(req.filter)
	}
	scope := strings.TrimPrefix(req.name, "projects/")
	if f.zonePrefix != "" {
		scope = strings.TrimSuffix(f.zonePrefix, "-")
	}
	s.kit.Serve(w, r, simkit.Call{Service: "monitoring", Op: "ListTimeSeries", Scope: scope, Dialect: dialect, WriteError: s.grpcErrorOf(strings.TrimPrefix(req.name, "projects/"))}, func(w http.ResponseWriter) {
		if !authorized(firstOf(r.Header.Values("Authorization"))) {
			writeGRPC(w, nil, grpcUnauthenticated, "Request had invalid authentication credentials. Expected OAuth 2 access token.")
			return
		}
		if err != nil {
			writeGRPC(w, nil, grpcInvalidArgument, err.Error())
			return
		}
		msg, err := s.listTimeSeries(req, f)
		if err != nil {
			writeGRPC(w, nil, grpcInvalidArgument, err.Error())
			return
		}
		writeGRPC(w, msg, grpcOK, "")
	})
}

func firstOf(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

func path(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

// decodeRequest reads the fields of a ListTimeSeriesRequest.
func decodeRequest(b []byte) (request, error) {
	var req request
	err := fields(b, func(num protowire.Number, typ protowire.Type, v []byte, n uint64) error {
		switch num {
		case 10:
			req.name = string(v)
		case 2:
			req.filter = string(v)
		case 4:
			return fields(v, func(num protowire.Number, _ protowire.Type, v []byte, _ uint64) error {
				t, err := timestamp(v)
				if num == 2 {
					req.end = t
				} else if num == 1 {
					req.start = t
				}
				return err
			})
		case 5:
			return fields(v, func(num protowire.Number, _ protowire.Type, v []byte, n uint64) error {
				switch num {
				case 1:
					t, err := timestamp(v)
					req.period = time.Duration(t.UnixNano())
					return err
				case 2:
					req.aligner = int(n)
				case 4:
					req.reducer = int(n)
				case 5:
					req.groupBy = append(req.groupBy, string(v))
				}
				return nil
			})
		case 7:
			req.headers = n == 1
		case 8:
			req.pageSize = int(n)
		case 9:
			req.pageToken = string(v)
		}
		return nil
	})
	return req, err
}

// timestamp reads a Timestamp or Duration (seconds, nanos).
func timestamp(b []byte) (time.Time, error) {
	var sec, nanos int64
	err := fields(b, func(num protowire.Number, _ protowire.Type, _ []byte, n uint64) error {
		if num == 1 {
			sec = int64(n)
		} else if num == 2 {
			nanos = int64(int32(n))
		}
		return nil
	})
	return time.Unix(sec, nanos).UTC(), err
}

// fields walks a message: fn gets each field's number, type and bytes (for
// length-delimited fields) or value (varints and fixed).
func fields(b []byte, fn func(num protowire.Number, typ protowire.Type, v []byte, n uint64) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fmt.Errorf("bad protobuf tag: %v", protowire.ParseError(n))
		}
		b = b[n:]
		var v []byte
		var x uint64
		switch typ {
		case protowire.VarintType:
			x, n = protowire.ConsumeVarint(b)
		case protowire.BytesType:
			v, n = protowire.ConsumeBytes(b)
		case protowire.Fixed64Type:
			x, n = protowire.ConsumeFixed64(b)
		case protowire.Fixed32Type:
			var y uint32
			y, n = protowire.ConsumeFixed32(b)
			x = uint64(y)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return fmt.Errorf("bad protobuf field %d: %v", num, protowire.ParseError(n))
		}
		b = b[n:]
		if err := fn(num, typ, v, x); err != nil {
			return err
		}
	}
	return nil
}

// filter is what the simulator reads of a Monitoring filter.
type filter struct {
	metric, resource string
	zonePrefix, zone string
}

var clause = regexp.MustCompile(`^\s*(metric\.type|resource\.type|resource\.labels?\.zone)\s*=\s*(?:"([^"]*)"|starts_with\(\s*"([^"]*)"\s*\))\s*$`)

// parseMonitoringFilter reads clauses joined by AND: metric.type = "…",
// resource.type = "…", resource.label.zone = "…" or starts_with("…").
func parseMonitoringFilter(f string) (filter, error) {
	var out filter
	for _, part := range regexp.MustCompile(`\s+AND\s+`).Split(strings.TrimSpace(f), -1) {
		m := clause.FindStringSubmatch(part)
		if m == nil {
			return filter{}, fmt.Errorf("the simulator cannot read the filter clause %q (it reads metric.type, resource.type and resource.label.zone)", part)
		}
		switch {
		case m[1] == "metric.type":
			out.metric = m[2]
		case m[1] == "resource.type":
			out.resource = m[2]
		case m[3] != "":
			out.zonePrefix = m[3]
		default:
			out.zone = m[2]
		}
	}
	if out.metric == "" {
		return filter{}, fmt.Errorf("the filter %q names no metric.type", f)
	}
	return out, nil
}

// simSeries is one raw series: its labels and per-minute values.
type simSeries struct {
	inst           *monInstance
	metric         string
	resourceType   string // gce_instance, aiplatform.googleapis.com/Endpoint, cloudml_job
	project        string
	int64          bool // an INT64 metric (bytes, counts)
	delta          bool // a DELTA metric
	metricLabels   map[string]string
	resourceLabels map[string]string
	values         []float64 // per clock slot
	scale          float64   // value = percent × scale (+ offset)
	complement     bool      // value = (100 − percent) × scale: free memory
	gpuUtil        bool      // loads set with SetLoad apply
}

// monInstance is what Monitoring knows of one VM.
type monInstance struct {
	id string
	// managed is the Vertex AI item the series are of; nil for a VM.
	managed *fleet.Instance
	clock   simkit.Clock
	all     []*simSeries
}

// monState is Monitoring's series, built once, and the stops seen.
type monState struct {
	once     sync.Once
	insts    map[string]*monInstance
	order    []*monInstance
	timeline *simkit.Timeline
}

var seedKeys = simkit.Keys{GPU: metricGPUUtil, GPUMemory: metricGPUMem, CPU: metricCPU, Memory: metricMemory}

// defaultCPU is the host CPU of VMs the fleet gives no utilization.
var defaultCPU = fleet.Stats{Avg: 4, P95: 9, Max: 17}

func (s *Server) mon() *monState {
	st := &s.monSt
	st.once.Do(func() {
		st.insts = map[string]*monInstance{}
		st.timeline = simkit.NewTimeline()
		for _, in := range s.inv.Instances() {
			mi := s.buildSeries(in)
			st.insts[in.ID] = mi
			st.order = append(st.order, mi)
			st.timeline.Add(in.ID, in.State == fleet.Stopped)
		}
		for i := range s.vertex {
			in := &s.vertex[i]
			mi := s.buildManagedSeries(in)
			st.insts[in.ID] = mi
			st.order = append(st.order, mi)
			st.timeline.Add(in.ID, in.State == fleet.Stopped)
		}
	})
	return st
}

func (s *Server) buildSeries(in fleet.Instance) *monInstance {
	gpus := max(int(math.Ceil(in.GPU.Count)), 1)
	p := simkit.Synthesize(in, gpus, seedKeys, defaultCPU)
	mi := &monInstance{id: in.ID, clock: p.Clock}
	res := map[string]string{"project_id": in.Account, "instance_id": numericID(in.Account, in.ID), "zone": zoneOf(in)}
	memBytes := in.GPU.MemoryGiB * (1 << 30)
	model := in.GPU.Model
	utilName, utilScale, memName, stateKey := metricGPUUtil, 1.0, metricGPUMem, "memory_state"
	if contains(s.opts.DCGM, in.ID) {
		utilName, utilScale, memName, stateKey = metricDCGM, 0.01, metricDCGMMem, "state"
	}
	add := func(se *simSeries) {
		se.resourceType, se.project = "gce_instance", in.Account
		for _, v := range se.values {
			if !math.IsNaN(v) {
				mi.all = append(mi.all, se)
				return
			}
		}
	}
	for i := 0; i < len(p.GPU); i++ {
		labels := map[string]string{"gpu_number": strconv.Itoa(i), "model": "NVIDIA " + model, "uuid": "GPU-" + simkit.Fingerprint(in.ID, strconv.Itoa(i))}
		if p.GPU[i] != nil {
			add(&simSeries{inst: mi, metric: utilName, metricLabels: labels, resourceLabels: res, values: p.GPU[i], scale: utilScale, gpuUtil: true})
		}
		if i < len(p.GPUMemory) && p.GPUMemory[i] != nil && memBytes > 0 {
			used := withLabel(labels, stateKey, "used")
			free := withLabel(labels, stateKey, "free")
			add(&simSeries{inst: mi, metric: memName, metricLabels: used, resourceLabels: res, values: p.GPUMemory[i], scale: memBytes / 100})
			add(&simSeries{inst: mi, metric: memName, metricLabels: free, resourceLabels: res, values: p.GPUMemory[i], scale: memBytes / 100, complement: true})
		}
	}
	add(&simSeries{inst: mi, metric: metricMemory, metricLabels: map[string]string{"state": "used"}, resourceLabels: res, values: p.Memory, scale: 1})
	add(&simSeries{inst: mi, metric: metricCPU, metricLabels: map[string]string{"instance_name": vmName(in)}, resourceLabels: res, values: p.CPU, scale: 0.01})
	return mi
}

func withLabel(m map[string]string, k, v string) map[string]string {
	out := make(map[string]string, len(m)+1)
	for a, b := range m {
		out[a] = b
	}
	out[k] = v
	return out
}

// observe records an instance's live state for Monitoring.
func (s *Server) observe(id string) simkit.View {
	return s.mon().timeline.Observe(id, s.inv.StateOf(id) == "RUNNING", s.opts.Now())
}

// SetLoad implements simkit.Backend: every GPU of the VM reports
// gpuPercent from Now on.
func (s *Server) SetLoad(id string, gpuPercent float64) error {
	st := s.mon()
	mi, ok := st.insts[id]
	if !ok {
		return fmt.Errorf("%w: %s", simkit.ErrNoInstance, id)
	}
	has := false
	for _, se := range mi.all {
		has = has || se.gpuUtil
	}
	if !has {
		return fmt.Errorf("%s has no GPU metrics (the fleet gives it no GPU utilization)", id)
	}
	return st.timeline.SetLoad(id, gpuPercent, s.opts.Now())
}

// point is one output point: the end of its period and its value.
type point struct {
	end time.Time
	v   float64
}

// outSeries is one series of the answer.
type outSeries struct {
	metric         string
	resourceType   string
	delta          bool
	metricLabels   map[string]string
	resourceLabels map[string]string
	points         []point
}

// listTimeSeries answers a request.
func (s *Server) listTimeSeries(req request, f filter) ([]byte, error) {
	page, err := s.timeSeriesPage(req, f)
	if err != nil {
		return nil, err
	}
	return encodeResponse(page.series, page.next, req.headers, page.int64Values), nil
}

// seriesPage is one page of a ListTimeSeries answer.
type seriesPage struct {
	series      []outSeries
	next        string
	int64Values bool
}

// timeSeriesPage computes a request's page, for gRPC and REST alike.
func (s *Server) timeSeriesPage(req request, f filter) (seriesPage, error) {
	project := strings.TrimPrefix(req.name, "projects/")
	if !s.hasProject(project) {
		return seriesPage{}, fmt.Errorf("project %s not found", project)
	}
	if !req.end.After(req.start) {
		if req.start.IsZero() {
			req.start = req.end
		}
	}
	aligned := req.aligner != alignNone
	if aligned && (req.period < time.Minute || req.period%time.Minute != 0) {
		return seriesPage{}, fmt.Errorf("the alignment period must be a whole number of minutes, at least 60 s")
	}
	now := s.opts.Now().UTC().Truncate(time.Minute)
	end := req.end.UTC().Truncate(time.Minute)
	if end.After(now) {
		end = now
	}
	query := simkit.Fingerprint(req.name, req.filter, req.start.String(), req.end.String(), strconv.Itoa(req.aligner), strconv.Itoa(req.reducer), strings.Join(req.groupBy, ","))
	offset, ok := simkit.DecodeToken(req.pageToken, query)
	if !ok {
		return seriesPage{}, fmt.Errorf("invalid page token")
	}
	snapshot := query + "\x00" + req.period.String() + "\x00" + strconv.FormatBool(req.headers)
	series, ok := s.pages.get(snapshot, req.pageToken)
	if !ok {
		series = s.computeSeries(req, f, project, req.start.UTC().Truncate(time.Minute), end)
	}
	size := req.pageSize
	if size <= 0 || size > 100000 {
		size = 100000
	}
	// FULL view: the page size counts points; HEADERS: series.
	to, count := offset, 0
	for to < len(series) {
		n := 1
		if !req.headers {
			n = len(series[to].points)
		}
		if count > 0 && count+n > size {
			break
		}
		count += n
		to++
	}
	next := ""
	if to < len(series) {
		next = simkit.EncodeToken(to, query)
		s.pages.put(snapshot, series)
	}
	return seriesPage{series[min(offset, len(series)):to], next, int64Output(req.aligner, req.reducer) || int64Kept(f.metric, req.aligner, req.reducer)}, nil
}

// int64Output is true when the aggregation's values are INT64, as the
// Aggregation enums of google/monitoring/v3/common.proto say: ALIGN_COUNT
// gives INT64, REDUCE_COUNT gives INT64, REDUCE_MEAN gives DOUBLE, and
// REDUCE_MIN, REDUCE_MAX and REDUCE_SUM keep the aligned value type. The
// served metrics are DOUBLE unaligned (FACTS.md).
func int64Output(aligner, reducer int) bool {
	switch reducer {
	case reduceCnt:
		return true
	case reduceMean:
		return false
	}
	return aligner == alignCount
}

// computeSeries is the answer's series over [start, end): aligned and
// reduced as the request asks, points newest first.
func (s *Server) computeSeries(req request, f filter, project string, start, end time.Time) []outSeries {
	st := s.mon()
	var raw []outSeries
	for _, mi := range st.order {
		running := s.inv.StateOf(mi.id) == "RUNNING"
		if mi.managed != nil {
			running = mi.managed.State != fleet.Stopped
		}
		view := st.timeline.Observe(mi.id, running, s.opts.Now())
		for _, se := range mi.all {
			if se.metric != f.metric || se.project != project || (f.resource != "" && se.resourceType != f.resource) {
				continue
			}
			zone := se.resourceLabels["zone"]
			if (f.zone != "" && zone != f.zone) || (f.zonePrefix != "" && !strings.HasPrefix(zone, f.zonePrefix)) {
				continue
			}
			var loads []simkit.Load
			if se.gpuUtil {
				loads = view.Loads
			}
			out := outSeries{metric: se.metric, resourceType: se.resourceType, delta: se.delta && (req.aligner == alignNone || req.aligner == alignSum), metricLabels: se.metricLabels, resourceLabels: se.resourceLabels}
			if req.aligner != alignNone {
				out.points = alignSeries(se, start, end, req.period, req.aligner, view.Down, loads)
			} else {
				simkit.Each(se.values, mi.clock, start, end, view.Down, loads, func(a, z time.Time, v float64) {
					for t := a; t.Before(z); t = t.Add(time.Minute) {
						out.points = append(out.points, point{t.Add(time.Minute), se.value(v)})
					}
				})
			}
			if len(out.points) > 0 {
				raw = append(raw, out)
			}
		}
	}
	series := raw
	if req.reducer != reduceNone {
		series = reduce(raw, req.reducer, req.groupBy)
	}
	for i := range series {
		// Aligned and reduced points mostly come oldest first: reversing
		// them is the sort, at a fraction of its cost.
		pts := series[i].points
		if slices.IsSortedFunc(pts, func(a, b point) int { return a.end.Compare(b.end) }) {
			slices.Reverse(pts)
		} else {
			slices.SortFunc(pts, func(a, b point) int { return b.end.Compare(a.end) })
		}
	}
	return series
}

// pageCache keeps the series of a paged answer for its next pages, as
// Monitoring reads a paged query from one snapshot: the pages after the
// first slice it instead of computing the whole answer again.
type pageCache struct {
	mu    sync.Mutex
	m     map[string][]outSeries
	order []string
}

// pageCacheSize bounds the paged answers kept.
const pageCacheSize = 32

func (c *pageCache) get(query, token string) ([]outSeries, bool) {
	if token == "" {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	series, ok := c.m[query]
	return series, ok
}

func (c *pageCache) put(query string, series []outSeries) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string][]outSeries{}
	}
	if _, ok := c.m[query]; !ok {
		c.order = append(c.order, query)
		if len(c.order) > pageCacheSize {
			delete(c.m, c.order[0])
			c.order = c.order[1:]
		}
	}
	c.m[query] = series
}

// value is a series' value for a minute whose pattern percent is v.
func (se *simSeries) value(v float64) float64 {
	if se.complement {
		return (100 - v) * se.scale
	}
	return v * se.scale
}

// alignSeries applies the per-series aligner over periods [start+kP,
// start+(k+1)P) that end by end; a period without a datapoint has no point.
// Points come oldest first.
func alignSeries(se *simSeries, start, end time.Time, period time.Duration, aligner int, down []simkit.Span, loads []simkit.Load) []point {
	type acc struct {
		sum, mins, lo, hi float64
	}
	s0, p := start.Unix(), int64(period/time.Second)
	n := int(end.Sub(start) / period) // periods that end by end
	if n <= 0 || p <= 0 {
		return nil
	}
	buckets := make([]acc, n)
	simkit.Each(se.values, se.inst.clock, start, end, down, loads, func(a, z time.Time, v float64) {
		v = se.value(v)
		for t, zs := a.Unix(), z.Unix(); t < zs; {
			k := (t - s0) / p
			if k >= int64(n) {
				return
			}
			stop := min(zs, s0+(k+1)*p)
			b := &buckets[k]
			if b.mins == 0 {
				b.lo, b.hi = v, v
			}
			b.sum += v * float64(stop-t) / 60
			b.mins += float64(stop-t) / 60
			b.lo, b.hi = math.Min(b.lo, v), math.Max(b.hi, v)
			t = stop
		}
	})
	var out []point
	for k := range buckets {
		b := &buckets[k]
		if b.mins == 0 {
			continue
		}
		var v float64
		switch aligner {
		case alignMax:
			v = b.hi
		case alignMin:
			v = b.lo
		case alignSum:
			v = b.sum
		case alignCount:
			v = b.mins
		default:
			v = b.sum / b.mins
		}
		out = append(out, point{time.Unix(s0+int64(k+1)*p, 0).UTC(), v})
	}
	return out
}

// reduce combines the series of each group (the labels named in groupBy)
// point by point.
func reduce(series []outSeries, reducer int, groupBy []string) []outSeries {
	type acc struct {
		sum, lo, hi float64
		n           int
	}
	type group struct {
		out  outSeries
		vals map[int64]*acc
	}
	groups := map[string]*group{}
	var order []string
	var key strings.Builder
	// A group of one series with its points in strictly ascending time (an
	// aligned series grouped by its own labels, the usual query) reduces to
	// its own points, in order: no map of its points and no sort after.
	var members []int
	memberOf := map[string]int{}
	keys := make([]string, len(series))
	for i, se := range series {
		key.Reset()
		for _, g := range groupBy {
			switch {
			case strings.HasPrefix(g, "metric.label.") || strings.HasPrefix(g, "metric.labels."):
				k := g[strings.IndexByte(g[7:], '.')+8:]
				key.WriteString("m:" + k + "=" + se.metricLabels[k] + "\x00")
			case strings.HasPrefix(g, "resource.label.") || strings.HasPrefix(g, "resource.labels."):
				k := g[strings.IndexByte(g[9:], '.')+10:]
				key.WriteString("r:" + k + "=" + se.resourceLabels[k] + "\x00")
			}
		}
		keys[i] = key.String()
		j, ok := memberOf[keys[i]]
		if !ok {
			j = len(members)
			memberOf[keys[i]] = j
			members = append(members, 0)
		}
		members[j]++
	}
	single := func(i int) bool {
		if members[memberOf[keys[i]]] != 1 {
			return false
		}
		pts := series[i].points
		for j := 1; j < len(pts); j++ {
			if pts[j].end.Unix() <= pts[j-1].end.Unix() {
				return false
			}
		}
		return true
	}
	for i, se := range series {
		pl := projectLabel(se.resourceType)
		ml, rl := map[string]string{}, map[string]string{pl: se.resourceLabels[pl]}
		key.Reset()
		for _, g := range groupBy {
			switch {
			case strings.HasPrefix(g, "metric.label.") || strings.HasPrefix(g, "metric.labels."):
				k := g[strings.IndexByte(g[7:], '.')+8:]
				ml[k] = se.metricLabels[k]
				key.WriteString("m:" + k + "=" + ml[k] + "\x00")
			case strings.HasPrefix(g, "resource.label.") || strings.HasPrefix(g, "resource.labels."):
				k := g[strings.IndexByte(g[9:], '.')+10:]
				rl[k] = se.resourceLabels[k]
				key.WriteString("r:" + k + "=" + rl[k] + "\x00")
			}
		}
		k := key.String()
		if single(i) {
			gr := &group{out: outSeries{metric: se.metric, resourceType: se.resourceType, delta: se.delta, metricLabels: ml, resourceLabels: rl, points: make([]point, len(se.points))}}
			for j, p := range se.points {
				v := p.v // a max or min
				switch reducer {
				case reduceCnt:
					v = 1
				case reduceMax, reduceMin:
				default:
					v = 0 + p.v // a sum or mean, -0 made 0 as the sum is
				}
				gr.out.points[j] = point{time.Unix(p.end.Unix(), 0).UTC(), v}
			}
			groups[k] = gr
			order = append(order, k)
			continue
		}
		gr := groups[k]
		if gr == nil {
			gr = &group{out: outSeries{metric: se.metric, resourceType: se.resourceType, delta: se.delta, metricLabels: ml, resourceLabels: rl}, vals: make(map[int64]*acc, len(se.points))}
			groups[k] = gr
			order = append(order, k)
		}
		for _, p := range se.points {
			t := p.end.Unix()
			a := gr.vals[t]
			if a == nil {
				a = &acc{lo: p.v, hi: p.v}
				gr.vals[t] = a
			}
			a.sum += p.v
			a.lo, a.hi = math.Min(a.lo, p.v), math.Max(a.hi, p.v)
			a.n++
		}
	}
	out := make([]outSeries, 0, len(order))
	for _, k := range order {
		gr := groups[k]
		if gr.vals == nil {
			out = append(out, gr.out)
			continue
		}
		gr.out.points = make([]point, 0, len(gr.vals))
		for t, a := range gr.vals {
			var v float64
			switch reducer {
			case reduceSum:
				v = a.sum
			case reduceMax:
				v = a.hi
			case reduceMin:
				v = a.lo
			case reduceCnt:
				v = float64(a.n)
			default:
				v = a.sum / float64(a.n)
			}
			gr.out.points = append(gr.out.points, point{time.Unix(t, 0).UTC(), v})
		}
		out = append(out, gr.out)
	}
	return out
}

// encodeResponse writes a ListTimeSeriesResponse.
func encodeResponse(series []outSeries, next string, headers, int64Values bool) []byte {
	valueType := uint64(3) // DOUBLE
	if int64Values {
		valueType = 2 // INT64
	}
	var b, ts, tm, ti, pt []byte // scratch buffers, reused for every point
	for _, se := range series {
		ts = ts[:0]
		ts = appendMessage(ts, 1, appendLabels(protowire.AppendString(protowire.AppendTag(nil, 3, protowire.BytesType), se.metric), 2, se.metricLabels))
		ts = appendMessage(ts, 2, appendLabels(protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), se.resourceType), 2, se.resourceLabels))
		ts = protowire.AppendVarint(protowire.AppendTag(ts, 3, protowire.VarintType), se.kind()) // GAUGE or DELTA
		ts = protowire.AppendVarint(protowire.AppendTag(ts, 4, protowire.VarintType), valueType)
		if !headers {
			for _, p := range se.points {
				tm = appendTime(tm[:0], p.end)
				ti = appendMessage(appendMessage(ti[:0], 2, tm), 1, tm)
				pt = appendMessage(pt[:0], 1, ti)
				if int64Values {
					v := protowire.AppendVarint(protowire.AppendTag(nil, 2, protowire.VarintType), uint64(int64(math.Round(p.v))))
					pt = appendMessage(pt, 2, v) // TypedValue: int64_value
				} else {
					pt = protowire.AppendVarint(protowire.AppendTag(pt, 2, protowire.BytesType), 9) // TypedValue: one double
					pt = protowire.AppendFixed64(protowire.AppendTag(pt, 3, protowire.Fixed64Type), math.Float64bits(p.v))
				}
				ts = appendMessage(ts, 5, pt)
			}
		}
		b = appendMessage(b, 1, ts)
	}
	if next != "" {
		b = protowire.AppendString(protowire.AppendTag(b, 2, protowire.BytesType), next)
	}
	if b == nil {
		b = []byte{}
	}
	return b
}

func appendMessage(b []byte, num protowire.Number, msg []byte) []byte {
	return protowire.AppendBytes(protowire.AppendTag(b, num, protowire.BytesType), msg)
}

func appendTime(b []byte, t time.Time) []byte {
	b = protowire.AppendVarint(protowire.AppendTag(b, 1, protowire.VarintType), uint64(t.Unix()))
	if n := t.Nanosecond(); n != 0 {
		b = protowire.AppendVarint(protowire.AppendTag(b, 2, protowire.VarintType), uint64(n))
	}
	return b
}

// appendLabels writes a map<string,string> field in key order.
func appendLabels(b []byte, num protowire.Number, labels map[string]string) []byte {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		e := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), k)
		e = protowire.AppendString(protowire.AppendTag(e, 2, protowire.BytesType), labels[k])
		b = appendMessage(b, num, e)
	}
	return b
}
