package sim

// CloudWatch: ListMetrics and GetMetricData over the series of series.go, in
// the three protocols the service speaks: Smithy RPC v2 CBOR (the Go SDK's
// default since schema-based serde), AWS JSON 1.0 (botocore 1.3x+, so the
// AWS CLI v1) and the query protocol (older SDKs, the AWS CLI v2 of Debian
// 12). Requests and responses go through one protocol-neutral tree
// (map[string]any, []any, string, float64, bool, time.Time, and for
// GetMetricData's datapoints unixTimes and []float64) so that the
// operations are written once.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aws/smithy-go/encoding/cbor"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers/simkit"
)

// CloudWatch's limits.
const (
	listMetricsPage      = 500
	maxMetricDataQueries = 500
	defaultMaxDatapoints = 100800
	maxDimensionFilters  = 10
	// How long CloudWatch keeps data at each resolution: minute data for 15
	// days, then 5-minute aggregates up to 63 days, then hourly ones up to
	// 455 days.
	minuteRetention     = 15 * 24 * time.Hour
	fiveMinuteRetention = 63 * 24 * time.Hour
	hourlyRetention     = 455 * 24 * time.Hour
)

const cwXMLNamespace = "http://monitoring.amazonaws.com/doc/2010-08-01/"

// cwError is a CloudWatch error answer.
type cwError struct {
	status    int
	code, msg string
}

func (e *cwError) Error() string { return e.code + ": " + e.msg }

func badRequest(code, format string, args ...any) *cwError {
	return &cwError{http.StatusBadRequest, code, fmt.Sprintf(format, args...)}
}

// serveCloudWatch answers CloudWatch in CBOR, JSON 1.0 and query.
func (s *Server) serveCloudWatch(w http.ResponseWriter, req request) {
	in, err := decodeCW(req)
	if err != nil {
		s.cwFail(w, req, err)
		return
	}
	var out map[string]any
	switch req.op {
	case "ListMetrics":
		out, err = s.listMetrics(req.region, s.callerAccount(req), in)
	case "GetMetricData":
		out, err = s.getMetricData(req.region, in)
	default:
		err = badRequest("InvalidAction", "the simulator's CloudWatch does not implement %s (only ListMetrics and GetMetricData)", req.op)
	}
	if err != nil {
		s.cwFail(w, req, err)
		return
	}
	encodeCW(w, req, out)
}

func (s *Server) cwFail(w http.ResponseWriter, req request, err error) {
	e, ok := err.(*cwError)
	if !ok {
		e = &cwError{http.StatusInternalServerError, "InternalServiceError", err.Error()}
	}
	writeError(w, req, e.status, e.code, e.msg)
}

// cwErrorTypes are the modeled CloudWatch error shapes behind query error
// codes. In CBOR and JSON __type names the shape and X-Amzn-Query-Error
// the code, so that the SDK returns the shape's type with the query code.
var cwErrorTypes = map[string]string{
	"ValidationError":             "ValidationException",
	"InvalidParameterValue":       "InvalidParameterValueException",
	"InvalidParameterCombination": "InvalidParameterCombinationException",
	"MissingParameter":            "MissingRequiredParameterException",
	"InternalServiceError":        "InternalServiceFault",
	"LimitExceeded":               "LimitExceededFault",
}

// cwErrorShape returns an error code's __type and fault.
func cwErrorShape(status int, code string) (typ, fault string) {
	typ, fault = code, "Sender"
	if t, ok := cwErrorTypes[code]; ok {
		typ = t
	}
	if status >= 500 {
		fault = "Receiver"
	}
	return typ, fault
}

// writeCBORError writes a Smithy RPC v2 CBOR error: a map with __type and
// message, and (CloudWatch being query-compatible) the query error code in
// X-Amzn-Query-Error, from which the SDK takes the error code.
func writeCBORError(w http.ResponseWriter, status int, code, msg string) {
	typ, fault := cwErrorShape(status, code)
	w.Header().Set("Smithy-Protocol", "rpc-v2-cbor")
	w.Header().Set("Content-Type", "application/cbor")
	w.Header().Set("X-Amzn-Query-Error", code+";"+fault)
	w.WriteHeader(status)
	w.Write(cbor.Encode(cbor.Map{"__type": cbor.String(typ), "message": cbor.String(msg)}))
}

// ---- ListMetrics ----

type dimFilter struct {
	name, value string
	hasValue    bool
}

// listMetrics lists the metrics of the caller's account (every account's
// when the simulator has none), as CloudWatch lists only the caller's.
func (s *Server) listMetrics(region, account string, in map[string]any) (map[string]any, error) {
	namespace, name := str(in["Namespace"]), str(in["MetricName"])
	var filters []dimFilter
	for _, d := range list(in["Dimensions"]) {
		m := obj(d)
		f := dimFilter{name: str(m["Name"])}
		if v, ok := m["Value"]; ok && v != nil {
			f.value, f.hasValue = str(v), true
		}
		if f.name == "" {
			return nil, badRequest("InvalidParameterValue", "a dimension filter has no Name")
		}
		filters = append(filters, f)
	}
	if len(filters) > maxDimensionFilters {
		return nil, badRequest("InvalidParameterValue", "%d dimension filters; at most %d are allowed", len(filters), maxDimensionFilters)
	}
	recent := str(in["RecentlyActive"])
	if recent != "" && recent != "PT3H" {
		return nil, badRequest("InvalidParameterValue", "RecentlyActive %q is not PT3H", recent)
	}
	fingerprint := jsonFingerprint([]any{"ListMetrics", region, account, namespace, name, fmt.Sprint(filters), recent})
	offset, ok := simkit.DecodeToken(str(in["NextToken"]), fingerprint)
	if !ok {
		// ListMetrics models no InvalidNextToken (GetMetricData does): its
		// modelled client error is InvalidParameterValue.
		return nil, badRequest("InvalidParameterValue", "the NextToken is not one this ListMetrics request issued")
	}

	st := s.cw()
	now := s.opts.Now().UTC()
	views := map[*instSeries]simkit.View{}
	var match []*series
	for _, se := range st.all {
		if se.inst.region != region || (account != "" && se.inst.account != account) || (namespace != "" && se.namespace != namespace) || (name != "" && se.name != name) || !matchDims(se.dims, filters) {
			continue
		}
		v, ok := views[se.inst]
		if !ok {
			v = st.observe(s, se.inst.id, now)
			views[se.inst] = v
		}
		// CloudWatch lists metrics with data in the last two weeks.
		if !v.RanAfter(now.Truncate(time.Hour).Add(-14 * 24 * time.Hour)) {
			continue
		}
		if recent != "" && !recentlyActive(se, now, v) {
			continue
		}
		match = append(match, se)
	}
	from, to, next := simkit.Page(len(match), offset, listMetricsPage)
	metrics := make([]any, 0, to-from)
	for _, se := range match[from:to] {
		metrics = append(metrics, metricNode(se))
	}
	out := map[string]any{"Metrics": metrics}
	if next >= 0 {
		out["NextToken"] = simkit.EncodeToken(next, fingerprint)
	}
	return out, nil
}

func matchDims(dims []dimension, filters []dimFilter) bool {
	for _, f := range filters {
		found := false
		for _, d := range dims {
			if d.Name == f.name && (!f.hasValue || d.Value == f.value) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// recentlyActive: a datapoint in the last three hours.
func recentlyActive(se *series, now time.Time, v simkit.View) bool {
	nowMin := now.Truncate(time.Minute)
	found := false
	se.each(nowMin.Add(-3*time.Hour), nowMin, v, func(a, z time.Time, _ float64) { found = true })
	return found
}

func metricNode(se *series) map[string]any {
	dims := make([]any, len(se.dims))
	for i, d := range se.dims {
		dims[i] = map[string]any{"Name": d.Name, "Value": d.Value}
	}
	return map[string]any{"Namespace": se.namespace, "MetricName": se.name, "Dimensions": dims}
}

// ---- GetMetricData ----

// metricQuery is one MetricDataQuery.
type metricQuery struct {
	id, label  string
	namespace  string
	name       string
	dims       []dimension
	period     int64 // seconds
	stat       string
	returnData bool
}

var queryID = regexp.MustCompile(`^[a-z][a-zA-Z0-9_]*$`)

var percentileStat = regexp.MustCompile(`^p(\d{1,2}(\.\d+)?|100)$`)

func parseQueries(raw []any) ([]metricQuery, error) {
	if len(raw) == 0 {
		return nil, badRequest("MissingParameter", "the request must contain the parameter MetricDataQueries")
	}
	if len(raw) > maxMetricDataQueries {
		return nil, badRequest("ValidationError", "%d MetricDataQueries; a call takes at most %d", len(raw), maxMetricDataQueries)
	}
	seen := map[string]bool{}
	out := make([]metricQuery, 0, len(raw))
	for i, r := range raw {
		m := obj(r)
		q := metricQuery{id: str(m["Id"]), label: str(m["Label"]), returnData: true}
		where := fmt.Sprintf("MetricDataQueries.member.%d", i+1)
		if !queryID.MatchString(q.id) {
			return nil, badRequest("InvalidParameterValue", "%s.Id %q must start with a lower-case letter and hold only letters, digits and underscores", where, q.id)
		}
		if seen[q.id] {
			return nil, badRequest("InvalidParameterValue", "the Id %q is used by more than one query", q.id)
		}
		seen[q.id] = true
		if b, ok := boolOf(m["ReturnData"]); ok {
			q.returnData = b
		}
		if str(m["Expression"]) != "" {
			return nil, badRequest("InvalidParameterValue", "%s: metric math and Metrics Insights expressions are not supported by the simulator; use MetricStat", where)
		}
		ms := obj(m["MetricStat"])
		if ms == nil {
			return nil, badRequest("InvalidParameterValue", "%s has neither MetricStat nor Expression", where)
		}
		metric := obj(ms["Metric"])
		q.namespace, q.name = str(metric["Namespace"]), str(metric["MetricName"])
		for _, d := range list(metric["Dimensions"]) {
			dm := obj(d)
			q.dims = append(q.dims, dimension{str(dm["Name"]), str(dm["Value"])})
		}
		if q.namespace == "" || q.name == "" {
			return nil, badRequest("InvalidParameterValue", "%s.MetricStat.Metric needs Namespace and MetricName", where)
		}
		p, ok := numOf(ms["Period"])
		// MetricStat.Period: 1, 5, 10, 20, 30 (high resolution) or a multiple
		// of 60 (botocore's CloudWatch model, MetricStat.Period; FACTS.md).
		if !ok || p <= 0 || p != math.Trunc(p) || (int64(p)%60 != 0 && p != 1 && p != 5 && p != 10 && p != 20 && p != 30) {
			return nil, badRequest("InvalidParameterValue", "%s.MetricStat.Period %v must be 1, 5, 10, 20, 30 or a multiple of 60", where, ms["Period"])
		}
		q.period = int64(p)
		q.stat = str(ms["Stat"])
		switch {
		case q.stat == "Average", q.stat == "Sum", q.stat == "Minimum", q.stat == "Maximum", q.stat == "SampleCount":
		case percentileStat.MatchString(q.stat):
		default:
			return nil, badRequest("InvalidParameterValue", "%s.MetricStat.Stat %q: the simulator knows Average, Sum, Minimum, Maximum, SampleCount and pNN", where, q.stat)
		}
		out = append(out, q)
	}
	return out, nil
}

func (s *Server) getMetricData(region string, in map[string]any) (map[string]any, error) {
	queries, err := parseQueries(list(in["MetricDataQueries"]))
	if err != nil {
		return nil, err
	}
	start, ok1 := timeOf(in["StartTime"])
	end, ok2 := timeOf(in["EndTime"])
	if !ok1 || !ok2 {
		return nil, badRequest("MissingParameter", "the request must contain StartTime and EndTime")
	}
	if !start.Before(end) {
		return nil, badRequest("InvalidParameterValue", "the parameter StartTime must be less than the parameter EndTime")
	}
	scanBy := str(in["ScanBy"])
	switch scanBy {
	case "":
		scanBy = "TimestampDescending"
	case "TimestampDescending", "TimestampAscending":
	default:
		return nil, badRequest("ValidationError", "ScanBy %q is not TimestampDescending or TimestampAscending", scanBy)
	}
	maxPoints := defaultMaxDatapoints
	if v, ok := numOf(in["MaxDatapoints"]); ok {
		if v <= 0 {
			return nil, badRequest("InvalidParameterValue", "MaxDatapoints must be positive")
		}
		maxPoints = int(v)
	}
	fingerprint := jsonFingerprint([]any{"GetMetricData", region, fmt.Sprint(queries), start.Unix(), end.Unix(), scanBy})
	offset, ok := simkit.DecodeToken(str(in["NextToken"]), fingerprint)
	if !ok {
		return nil, badRequest("InvalidNextToken", "the NextToken is not one this GetMetricData request issued")
	}

	now := s.opts.Now().UTC()
	start = roundStart(start, now)
	st := s.cw()
	views := map[*instSeries]simkit.View{}
	type result struct {
		q      metricQuery
		ts     []int64 // Unix seconds
		vs     []float64
		offset int // of its first point in the flattened answer
	}
	results := make([]result, 0, len(queries))
	total := 0
	for _, q := range queries {
		if !q.returnData {
			continue
		}
		var ts []int64
		var vs []float64
		if se := st.byRegion[region][seriesKey(q.namespace, q.name, q.dims)]; se != nil {
			v, ok := views[se.inst]
			if !ok {
				v = st.observe(s, se.inst.id, now)
				views[se.inst] = v
			}
			ts, vs = aggregate(se, q, start, end, now, v)
		}
		if scanBy == "TimestampDescending" {
			slices.Reverse(ts)
			slices.Reverse(vs)
		}
		results = append(results, result{q, ts, vs, total})
		total += len(ts)
	}

	// One page is the flattened points [offset, offset+maxPoints); a query
	// appears in the pages its points fall in (an empty one in the page its
	// position falls in).
	pageEnd := offset + maxPoints
	last := pageEnd >= total
	out := []any{}
	for _, r := range results {
		n := len(r.ts)
		var onPage bool
		if n == 0 {
			onPage = r.offset >= offset && (r.offset < pageEnd || last)
		} else {
			onPage = r.offset < pageEnd && r.offset+n > offset
		}
		if !onPage {
			continue
		}
		from := max(offset-r.offset, 0)
		to := min(pageEnd-r.offset, n)
		status := "Complete"
		if to < n {
			status = "PartialData"
		}
		to = max(to, from)
		label := r.q.label
		if label == "" {
			label = r.q.name
		}
		out = append(out, map[string]any{"Id": r.q.id, "Label": label, "StatusCode": status,
			"Timestamps": unixTimes(r.ts[from:to:to]), "Values": r.vs[from:to:to]})
	}
	resp := map[string]any{"MetricDataResults": out, "Messages": []any{}}
	if !last {
		resp["NextToken"] = simkit.EncodeToken(pageEnd, fingerprint)
	}
	return resp, nil
}

// roundStart rounds StartTime down as CloudWatch does: to the minute when
// it is less than 15 days back, to 5 minutes up to 63 days, else to the
// hour.
func roundStart(start, now time.Time) time.Time {
	switch age := now.Sub(start); {
	case age > fiveMinuteRetention:
		return start.Truncate(time.Hour)
	case age > minuteRetention:
		return start.Truncate(5 * time.Minute)
	}
	return start.Truncate(time.Minute)
}

// farFuture ends a class of kept data that has no end.
var farFuture = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// aggregate reads a series' datapoints in [start, end) and combines them
// into periods starting at start, in ascending time, with the query's
// statistic.
//
// The agent publishes a datapoint a minute (see series.each); datapoints
// exist up to the last complete minute before now. CloudWatch keeps them
// as they are for 15 days, then as 5-minute aggregates up to 63 days, then
// as hourly ones up to 455 days; older data does not exist. An aggregate
// counts in the period its own timestamp falls in, and keeps the count, sum,
// minimum and maximum of the minutes behind it (so SampleCount counts
// minutes, and Average, Minimum and Maximum do not depend on the
// resolution). A period that is not a multiple of the resolution of some
// part of the range gets no datapoints for that part (GetMetricStatistics
// documents "no data points in that time range"): Period 60 reads the last
// 15 days only, Period 300 the last 63. Periods under 60 (high resolution)
// give each minute's datapoint on its own.
func aggregate(se *series, q metricQuery, start, end, now time.Time, view simkit.View) (ts []int64, vs []float64) {
	period := q.period
	nowMin := now.Truncate(time.Minute)
	// Every time below is whole Unix seconds: the series' minute runs, the
	// retention cuts and the rounded StartTime all lie on minutes.
	minuteCut := nowMin.Add(-minuteRetention).Unix()
	fiveCut := now.Truncate(5 * time.Minute).Add(-fiveMinuteRetention).Unix()
	from := simkit.CeilTo(start, time.Minute)
	if oldest := now.Truncate(time.Hour).Add(-hourlyRetention); from.Before(oldest) {
		from = oldest
	}
	to := simkit.CeilTo(end, time.Minute)
	if to.After(nowMin) {
		to = nowMin
	}
	if !from.Before(to) {
		return nil, nil
	}
	startSec := start.Unix()
	if n := periodsIn(from.Unix(), to.Unix(), period, minuteCut, fiveCut); n > 0 {
		ts, vs = make([]int64, 0, n), make([]float64, 0, n)
	}
	acc := newBucket(q.stat)
	cur := int64(math.MinInt64)
	se.eachUnix(from.Unix(), to.Unix(), view, func(a, z int64, v float64) {
		for a < z {
			// The resolution the minutes from a are kept at, and until when.
			res, classEnd := int64(60), int64(math.MaxInt64)
			switch {
			case a < fiveCut:
				res, classEnd = 3600, fiveCut
			case a < minuteCut:
				res, classEnd = 300, minuteCut
			}
			e := min(z, classEnd)
			if period%res == 0 || (res == 60 && period < 60) {
				for t := a; t < e; {
					k := floorDiv(floorDiv(t, res)*res-startSec, period)
					next := min(-floorDiv(-(startSec+(k+1)*period), res)*res, e)
					if k >= 0 {
						if k != cur {
							if acc.n > 0 {
								ts, vs = append(ts, startSec+cur*period), append(vs, acc.value())
							}
							acc.reset()
							cur = k
						}
						acc.add(v, int((next-t)/60))
					}
					t = next
				}
			}
			a = e
		}
	})
	if acc.n > 0 {
		ts, vs = append(ts, startSec+cur*period), append(vs, acc.value())
	}
	return ts, vs
}

// periodsIn bounds the number of datapoints aggregate gives for the minutes
// [from, to) (Unix seconds): the periods and the minutes of the part kept
// at a resolution the period reads.
func periodsIn(from, to, period, minuteCut, fiveCut int64) int {
	switch {
	case period%3600 == 0:
	case period%300 == 0:
		from = max(from, fiveCut)
	default:
		from = max(from, minuteCut)
	}
	if from >= to {
		return 0
	}
	return int(min((to-from)/period+2, (to-from)/60+1))
}

// bucket gathers one period's minute datapoints: n minutes of value v at a
// time.
type bucket struct {
	stat          string
	n             int
	sum, min, max float64
	// For percentiles only: the percentile, the runs and a scratch slice
	// for sorting them, both kept over resets.
	pct    bool
	p      float64
	runs   []valueCount
	sorted []float64
}

type valueCount struct {
	v float64
	n int
}

func newBucket(stat string) bucket {
	b := bucket{stat: stat, pct: strings.HasPrefix(stat, "p")}
	if b.pct {
		b.p, _ = strconv.ParseFloat(strings.TrimPrefix(stat, "p"), 64)
	}
	return b
}

// reset empties the bucket for the next period.
func (b *bucket) reset() {
	b.n, b.sum, b.min, b.max = 0, 0, 0, 0
	b.runs = b.runs[:0]
}

func (b *bucket) add(v float64, n int) {
	if n <= 0 {
		return
	}
	if b.n == 0 || v < b.min {
		b.min = v
	}
	if b.n == 0 || v > b.max {
		b.max = v
	}
	b.n += n
	b.sum += v * float64(n)
	if b.pct {
		b.runs = append(b.runs, valueCount{v, n})
	}
}

// value computes the bucket's statistic. A period whose minutes all have
// one value averages to that value exactly.
func (b *bucket) value() float64 {
	switch b.stat {
	case "Average":
		if b.min == b.max {
			return b.min
		}
		return b.sum / float64(b.n)
	case "Sum":
		return b.sum
	case "Minimum":
		return b.min
	case "Maximum":
		return b.max
	case "SampleCount":
		return float64(b.n)
	}
	sorted := b.sorted[:0]
	for _, r := range b.runs {
		for range r.n {
			sorted = append(sorted, r.v)
		}
	}
	sort.Float64s(sorted)
	b.sorted = sorted
	return fleet.Percentile(sorted, b.p)
}

// ---- the protocol-neutral tree ----

func str(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return ""
}

func list(v any) []any {
	l, _ := v.([]any)
	return l
}

func obj(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func numOf(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case string:
		f, err := strconv.ParseFloat(x, 64)
		return f, err == nil
	}
	return 0, false
}

func boolOf(v any) (bool, bool) {
	switch x := v.(type) {
	case bool:
		return x, true
	case string:
		b, err := strconv.ParseBool(x)
		return b, err == nil
	}
	return false, false
}

// timeOf reads a timestamp: a time (CBOR tag 1), epoch seconds (JSON) or
// ISO 8601 (query).
func timeOf(v any) (time.Time, bool) {
	switch x := v.(type) {
	case time.Time:
		return x.UTC(), true
	case float64:
		return epoch(x), true
	case string:
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05Z0700", "2006-01-02T15:04:05", "2006-01-02"} {
			if t, err := time.Parse(layout, x); err == nil {
				return t.UTC(), true
			}
		}
		if f, err := strconv.ParseFloat(x, 64); err == nil {
			return epoch(f), true
		}
	}
	return time.Time{}, false
}

func epoch(secs float64) time.Time {
	whole := math.Floor(secs)
	return time.Unix(int64(whole), int64(math.Round((secs-whole)*1e9))).UTC()
}

// decodeCW turns a request's body into the tree.
func decodeCW(req request) (map[string]any, error) {
	switch req.proto {
	case protoCBOR:
		if len(req.body) == 0 {
			return map[string]any{}, nil
		}
		v, err := cbor.Decode(req.body)
		if err != nil {
			return nil, badRequest("SerializationException", "the request body is not CBOR: %v", err)
		}
		m, ok := fromCBOR(v).(map[string]any)
		if !ok {
			return nil, badRequest("SerializationException", "the request body is not a CBOR map")
		}
		return m, nil
	case protoJSON10:
		if len(bytes.TrimSpace(req.body)) == 0 {
			return map[string]any{}, nil
		}
		var m map[string]any
		if err := json.Unmarshal(req.body, &m); err != nil {
			return nil, badRequest("SerializationException", "the request body is not a JSON object: %v", err)
		}
		return m, nil
	}
	return fromForm(req.form), nil
}

func fromCBOR(v cbor.Value) any {
	switch x := v.(type) {
	case cbor.Map:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = fromCBOR(e)
		}
		return m
	case cbor.List:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = fromCBOR(e)
		}
		return l
	case cbor.String:
		return string(x)
	case cbor.Uint:
		return float64(x)
	case cbor.NegInt:
		return -float64(x) - 1
	case cbor.Float32:
		return float64(x)
	case cbor.Float64:
		return float64(x)
	case cbor.Bool:
		return bool(x)
	case *cbor.Tag:
		if x.ID == 1 {
			if secs, ok := fromCBOR(x.Value).(float64); ok {
				return epoch(secs)
			}
		}
	}
	return nil
}

// fromForm turns query parameters (Dimensions.member.1.Name=…) into the
// tree: "member" levels become lists.
func fromForm(form url.Values) map[string]any {
	root := map[string]any{}
	for key, values := range form {
		if key == "Action" || key == "Version" || len(values) == 0 {
			continue
		}
		parts := strings.Split(key, ".")
		node := root
		for i, p := range parts {
			if i == len(parts)-1 {
				if _, exists := node[p]; !exists {
					node[p] = values[0]
				}
				break
			}
			child, ok := node[p].(map[string]any)
			if !ok {
				child = map[string]any{}
				node[p] = child
			}
			node = child
		}
	}
	return listify(root).(map[string]any)
}

// listify turns {"member": {"1": a, "2": b}} into [a, b].
func listify(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	if members, ok := m["member"].(map[string]any); ok && len(m) == 1 {
		idx := make([]int, 0, len(members))
		byIdx := map[int]any{}
		for k, e := range members {
			if n, err := strconv.Atoi(k); err == nil {
				idx = append(idx, n)
				byIdx[n] = e
			}
		}
		sort.Ints(idx)
		l := make([]any, len(idx))
		for i, n := range idx {
			l[i] = listify(byIdx[n])
		}
		return l
	}
	for k, e := range m {
		m[k] = listify(e)
	}
	return m
}

// encodeCW writes a successful answer in the request's protocol.
func encodeCW(w http.ResponseWriter, req request, out map[string]any) {
	switch req.proto {
	case protoCBOR:
		w.Header().Set("Smithy-Protocol", "rpc-v2-cbor")
		w.Header().Set("Content-Type", "application/cbor")
		writeCBOR(w, out)
	case protoJSON10:
		writeJSONResponse(w, "application/x-amz-json-1.0", toJSON(out))
	default:
		var b strings.Builder
		b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
		fmt.Fprintf(&b, `<%sResponse xmlns="%s"><%sResult>`, req.op, cwXMLNamespace, req.op)
		writeXMLFields(&b, out)
		fmt.Fprintf(&b, `</%sResult><ResponseMetadata><RequestId>%s</RequestId></ResponseMetadata></%sResponse>`, req.op, newRequestID(), req.op)
		w.Header().Set("Content-Type", "text/xml")
		w.Write([]byte(b.String()))
	}
}

func epochSeconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

// unixTimes are the timestamps of a GetMetricData result, as whole Unix
// seconds; the protocols write them as times.
type unixTimes []int64

// unixSecondsFloat is epochSeconds of time.Unix(s, 0), UnixNano's
// wrap-around included.
func unixSecondsFloat(s int64) float64 { return float64(s*1e9) / 1e9 }

// toJSON replaces times by epoch seconds, as AWS JSON writes them.
func toJSON(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = toJSON(e)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = toJSON(e)
		}
		return l
	case time.Time:
		return epochSeconds(x)
	case unixTimes:
		l := make([]float64, len(x))
		for i, s := range x {
			l[i] = unixSecondsFloat(s)
		}
		return l
	case []float64:
		if x == nil {
			return []float64{}
		}
	}
	return v
}

// writeXMLFields writes a map's fields as elements, in name order; lists are
// <member> elements, times ISO 8601.
func writeXMLFields(b *strings.Builder, m map[string]any) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		b.WriteString("<" + k + ">")
		writeXMLValue(b, m[k])
		b.WriteString("</" + k + ">")
	}
}

func writeXMLValue(b *strings.Builder, v any) {
	switch x := v.(type) {
	case map[string]any:
		writeXMLFields(b, x)
	case []any:
		for _, e := range x {
			b.WriteString("<member>")
			writeXMLValue(b, e)
			b.WriteString("</member>")
		}
	case unixTimes:
		for _, s := range x {
			b.WriteString("<member>")
			b.WriteString(time.Unix(s, 0).UTC().Format(awsTime))
			b.WriteString("</member>")
		}
	case []float64:
		for _, f := range x {
			b.WriteString("<member>")
			b.WriteString(strconv.FormatFloat(f, 'f', -1, 64))
			b.WriteString("</member>")
		}
	case string:
		b.WriteString(xmlEscape(x))
	case float64:
		b.WriteString(strconv.FormatFloat(x, 'f', -1, 64))
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case time.Time:
		b.WriteString(x.UTC().Format(awsTime))
	}
}
