package sim

// GetMetricData, aggregate and the protocol writers as they were before the
// answer tree got typed datapoint slices, aggregate integer seconds and
// CBOR its own appender (kept verbatim, renamed): the reference the
// property tests compare with.

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aws/smithy-go/encoding/cbor"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers/simkit"
)

// refPoint is one aggregated datapoint.
type refPoint struct {
	t time.Time
	v float64
}

func refGetMetricData(s *Server, region string, in map[string]any) (map[string]any, error) {
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
		points []refPoint
		offset int // of its first refPoint in the flattened answer
	}
	var results []result
	total := 0
	for _, q := range queries {
		if !q.returnData {
			continue
		}
		var pts []refPoint
		if se := st.byRegion[region][seriesKey(q.namespace, q.name, q.dims)]; se != nil {
			v, ok := views[se.inst]
			if !ok {
				v = st.observe(s, se.inst.id, now)
				views[se.inst] = v
			}
			pts = refAggregate(se, q, start, end, now, v)
		}
		if scanBy == "TimestampDescending" {
			for i, j := 0, len(pts)-1; i < j; i, j = i+1, j-1 {
				pts[i], pts[j] = pts[j], pts[i]
			}
		}
		results = append(results, result{q, pts, total})
		total += len(pts)
	}

	// One page is the flattened points [offset, offset+maxPoints); a query
	// appears in the pages its points fall in (an empty one in the page its
	// position falls in).
	pageEnd := offset + maxPoints
	last := pageEnd >= total
	out := []any{}
	for _, r := range results {
		n := len(r.points)
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
		ts, vs := make([]any, 0, max(to-from, 0)), make([]any, 0, max(to-from, 0))
		for _, p := range r.points[from:max(to, from)] {
			ts = append(ts, p.t)
			vs = append(vs, p.v)
		}
		label := r.q.label
		if label == "" {
			label = r.q.name
		}
		out = append(out, map[string]any{"Id": r.q.id, "Label": label, "StatusCode": status, "Timestamps": ts, "Values": vs})
	}
	resp := map[string]any{"MetricDataResults": out, "Messages": []any{}}
	if !last {
		resp["NextToken"] = simkit.EncodeToken(pageEnd, fingerprint)
	}
	return resp, nil
}

func refAggregate(se *series, q metricQuery, start, end, now time.Time, view simkit.View) []refPoint {
	period := q.period
	nowMin := now.Truncate(time.Minute)
	minuteCut := nowMin.Add(-minuteRetention)
	fiveCut := now.Truncate(5 * time.Minute).Add(-fiveMinuteRetention)
	from := simkit.CeilTo(start, time.Minute)
	if oldest := now.Truncate(time.Hour).Add(-hourlyRetention); from.Before(oldest) {
		from = oldest
	}
	to := simkit.CeilTo(end, time.Minute)
	if to.After(nowMin) {
		to = nowMin
	}
	if !from.Before(to) {
		return nil
	}
	startSec := start.Unix()
	var out []refPoint
	acc := refBucket{stat: q.stat}
	cur := int64(math.MinInt64)
	se.each(from, to, view, func(a, z time.Time, v float64) {
		for a.Before(z) {
			// The resolution the minutes from a are kept at, and until when.
			res, classEnd := time.Minute, farFuture
			switch {
			case a.Before(fiveCut):
				res, classEnd = time.Hour, fiveCut
			case a.Before(minuteCut):
				res, classEnd = 5*time.Minute, minuteCut
			}
			e := z
			if classEnd.Before(e) {
				e = classEnd
			}
			r := int64(res / time.Second)
			if period%r == 0 || (res == time.Minute && period < 60) {
				for t := a; t.Before(e); {
					k := floorDiv(t.Truncate(res).Unix()-startSec, period)
					next := simkit.CeilTo(time.Unix(startSec+(k+1)*period, 0), res)
					if next.After(e) {
						next = e
					}
					if k >= 0 {
						if k != cur {
							if acc.n > 0 {
								out = append(out, refPoint{time.Unix(startSec+cur*period, 0).UTC(), acc.value()})
							}
							acc, cur = refBucket{stat: q.stat}, k
						}
						acc.add(v, int(next.Sub(t)/time.Minute))
					}
					t = next
				}
			}
			a = e
		}
	})
	if acc.n > 0 {
		out = append(out, refPoint{time.Unix(startSec+cur*period, 0).UTC(), acc.value()})
	}
	return out
}

type refBucket struct {
	stat          string
	n             int
	sum, min, max float64
	runs          []refValueCount // for percentiles only
}

type refValueCount struct {
	v float64
	n int
}

func (b *refBucket) add(v float64, n int) {
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
	if strings.HasPrefix(b.stat, "p") {
		b.runs = append(b.runs, refValueCount{v, n})
	}
}

// value computes the refBucket's statistic. A period whose minutes all have
// one value averages to that value exactly.
func (b *refBucket) value() float64 {
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
	p, _ := strconv.ParseFloat(strings.TrimPrefix(b.stat, "p"), 64)
	sorted := make([]float64, 0, b.n)
	for _, r := range b.runs {
		for range r.n {
			sorted = append(sorted, r.v)
		}
	}
	sort.Float64s(sorted)
	return fleet.Percentile(sorted, p)
}

func refToCBOR(v any) cbor.Value {
	switch x := v.(type) {
	case map[string]any:
		m := make(cbor.Map, len(x))
		for k, e := range x {
			m[k] = refToCBOR(e)
		}
		return m
	case []any:
		l := make(cbor.List, len(x))
		for i, e := range x {
			l[i] = refToCBOR(e)
		}
		return l
	case string:
		return cbor.String(x)
	case float64:
		return cbor.Float64(x)
	case bool:
		return cbor.Bool(x)
	case time.Time:
		return &cbor.Tag{ID: 1, Value: cbor.Float64(epochSeconds(x))}
	}
	return &cbor.Nil{}
}

// toJSON replaces times by epoch seconds, as AWS JSON writes them.
func refToJSON(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = refToJSON(e)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = refToJSON(e)
		}
		return l
	case time.Time:
		return epochSeconds(x)
	}
	return v
}

// writeXMLFields writes a map's fields as elements, in name order; lists are
// <member> elements, times ISO 8601.
func refWriteXMLFields(b *strings.Builder, m map[string]any) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		b.WriteString("<" + k + ">")
		refWriteXMLValue(b, m[k])
		b.WriteString("</" + k + ">")
	}
}

func refWriteXMLValue(b *strings.Builder, v any) {
	switch x := v.(type) {
	case map[string]any:
		refWriteXMLFields(b, x)
	case []any:
		for _, e := range x {
			b.WriteString("<member>")
			refWriteXMLValue(b, e)
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
