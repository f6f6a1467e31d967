package sim

// Cloud Monitoring's projects.timeSeries.list over REST (GET
// /v3/projects/{project}/timeSeries), the same method as the gRPC
// ListTimeSeries the adapter calls, for clients that speak only JSON (curl
// with gcloud's access token: gcloud has no command that reads time
// series). The query parameters are the discovery document's (filter,
// interval.startTime, interval.endTime, aggregation.alignmentPeriod,
// aggregation.perSeriesAligner, aggregation.crossSeriesReducer,
// aggregation.groupByFields, view, pageSize, pageToken); the answer is the
// ListTimeSeriesResponse in proto3 JSON, as Monitoring's REST answers it
// (int64 values as strings).

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The Aggregation enums of google/monitoring/v3/common.proto served, by
// name, as REST spells them.
var (
	alignerByName = map[string]int{"ALIGN_NONE": alignNone, "ALIGN_MIN": alignMin, "ALIGN_MAX": alignMax, "ALIGN_MEAN": alignMean,
		"ALIGN_COUNT": alignCount, "ALIGN_SUM": alignSum}
	reducerByName = map[string]int{"REDUCE_NONE": reduceNone, "REDUCE_MEAN": reduceMean, "REDUCE_MIN": reduceMin, "REDUCE_MAX": reduceMax,
		"REDUCE_SUM": reduceSum, "REDUCE_COUNT": reduceCnt}
)

// notServed are the query parameters the discovery document gives
// projects.timeSeries.list (its own and the service-wide ones) that would
// change the answer in ways the simulator does not compute: it refuses
// them, saying so, rather than answering as if they were absent.
var notServed = map[string]bool{"orderBy": true, "secondaryAggregation.alignmentPeriod": true, "secondaryAggregation.perSeriesAligner": true,
	"secondaryAggregation.crossSeriesReducer": true, "secondaryAggregation.groupByFields": true, "fields": true, "callback": true}

// documentedAligners and documentedReducers are the enum values of the
// discovery document (and of common.proto), served or not.
var (
	documentedAligners = setOf("ALIGN_NONE", "ALIGN_DELTA", "ALIGN_RATE", "ALIGN_INTERPOLATE", "ALIGN_NEXT_OLDER", "ALIGN_MIN", "ALIGN_MAX",
		"ALIGN_MEAN", "ALIGN_COUNT", "ALIGN_SUM", "ALIGN_STDDEV", "ALIGN_COUNT_TRUE", "ALIGN_COUNT_FALSE", "ALIGN_FRACTION_TRUE",
		"ALIGN_PERCENTILE_99", "ALIGN_PERCENTILE_95", "ALIGN_PERCENTILE_50", "ALIGN_PERCENTILE_05", "ALIGN_PERCENT_CHANGE")
	documentedReducers = setOf("REDUCE_NONE", "REDUCE_MEAN", "REDUCE_MIN", "REDUCE_MAX", "REDUCE_SUM", "REDUCE_STDDEV", "REDUCE_COUNT",
		"REDUCE_COUNT_TRUE", "REDUCE_COUNT_FALSE", "REDUCE_FRACTION_TRUE", "REDUCE_PERCENTILE_99", "REDUCE_PERCENTILE_95",
		"REDUCE_PERCENTILE_50", "REDUCE_PERCENTILE_05")
)

func setOf(xs ...string) map[string]bool {
	m := map[string]bool{}
	for _, x := range xs {
		m[x] = true
	}
	return m
}

// restRequest reads a timeSeries.list query into the gRPC request.
func restRequest(project string, r *http.Request) (request, error) {
	q := r.URL.Query()
	for k := range q {
		switch {
		case notServed[k]:
			return request{}, fmt.Errorf("the simulator does not serve the query parameter %q of projects.timeSeries.list", k)
		case slices.Contains([]string{"filter", "interval.startTime", "interval.endTime", "aggregation.alignmentPeriod", "aggregation.perSeriesAligner",
			"aggregation.crossSeriesReducer", "aggregation.groupByFields", "view", "pageSize", "pageToken"}, k):
		case slices.Contains([]string{"alt", "$.xgafv", "prettyPrint", "access_token", "key", "oauth_token", "quotaUser", "uploadType", "upload_protocol"}, k):
			// Service-wide parameters that leave a JSON answer as it is.
		default:
			return request{}, fmt.Errorf("Invalid JSON payload received. Unknown name %q: Cannot bind query parameter. Field %q could not be found in request message.", k, k)
		}
	}
	if v := q.Get("alt"); v != "" && v != "json" {
		return request{}, fmt.Errorf("the simulator answers only alt=json, not %q", v)
	}
	req := request{name: "projects/" + project, filter: q.Get("filter"), groupBy: q["aggregation.groupByFields"], pageToken: q.Get("pageToken")}
	var err error
	if v := q.Get("interval.endTime"); v != "" {
		if req.end, err = time.Parse(time.RFC3339Nano, v); err != nil {
			return req, fmt.Errorf("Invalid value at 'interval.end_time' (type.googleapis.com/google.protobuf.Timestamp), Field 'endTime', Invalid time format: %v", err)
		}
	}
	if v := q.Get("interval.startTime"); v != "" {
		if req.start, err = time.Parse(time.RFC3339Nano, v); err != nil {
			return req, fmt.Errorf("Invalid value at 'interval.start_time' (type.googleapis.com/google.protobuf.Timestamp), Field 'startTime', Invalid time format: %v", err)
		}
	}
	if v := q.Get("aggregation.alignmentPeriod"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || !strings.HasSuffix(v, "s") {
			return req, fmt.Errorf("Invalid value at 'aggregation.alignment_period' (type.googleapis.com/google.protobuf.Duration), Field 'alignmentPeriod', Illegal duration format; duration must end with 's'")
		}
		req.period = d
	}
	if v := q.Get("aggregation.perSeriesAligner"); v != "" {
		n, ok := alignerByName[v]
		if !ok && documentedAligners[v] {
			return req, fmt.Errorf("the simulator does not compute the aligner %s (it serves ALIGN_NONE, ALIGN_MIN, ALIGN_MAX, ALIGN_MEAN, ALIGN_COUNT and ALIGN_SUM)", v)
		}
		if !ok {
			return req, fmt.Errorf("Invalid value at 'aggregation.per_series_aligner' (type.googleapis.com/google.monitoring.v3.Aggregation.Aligner), %q", v)
		}
		req.aligner = int(n)
	}
	if v := q.Get("aggregation.crossSeriesReducer"); v != "" {
		n, ok := reducerByName[v]
		if !ok && documentedReducers[v] {
			return req, fmt.Errorf("the simulator does not compute the reducer %s (it serves REDUCE_NONE, REDUCE_MEAN, REDUCE_MIN, REDUCE_MAX, REDUCE_SUM and REDUCE_COUNT)", v)
		}
		if !ok {
			return req, fmt.Errorf("Invalid value at 'aggregation.cross_series_reducer' (type.googleapis.com/google.monitoring.v3.Aggregation.Reducer), %q", v)
		}
		req.reducer = int(n)
	}
	switch v := q.Get("view"); v {
	case "", "FULL":
	case "HEADERS":
		req.headers = true
	default:
		return req, fmt.Errorf("Invalid value at 'view' (type.googleapis.com/google.monitoring.v3.ListTimeSeriesRequest.TimeSeriesView), %q", v)
	}
	if v := q.Get("pageSize"); v != "" {
		if req.pageSize, err = strconv.Atoi(v); err != nil {
			return req, fmt.Errorf("Invalid value at 'page_size' (TYPE_INT32), %q", v)
		}
	}
	return req, nil
}

// listTimeSeriesREST serves projects.timeSeries.list.
func (s *Server) listTimeSeriesREST(w http.ResponseWriter, r *http.Request, m []string) {
	req, err := restRequest(m[1], r)
	var f filter
	if err == nil {
		f, err = parseMonitoringFilter(req.filter)
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, "badRequest", err.Error())
		return
	}
	page, err := s.timeSeriesPage(req, f)
	if err != nil {
		writeError(w, http.StatusBadRequest, "badRequest", err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	_ = json.NewEncoder(w).Encode(timeSeriesJSON(page, req.headers))
}

// timeSeriesJSON is a page as proto3 JSON writes a ListTimeSeriesResponse:
// lowerCamel names, enums by name, timestamps in RFC 3339, int64 values as
// strings, empty fields left out.
func timeSeriesJSON(page seriesPage, headers bool) map[string]any {
	valueType := "DOUBLE"
	if page.int64Values {
		valueType = "INT64"
	}
	all := make([]map[string]any, 0, len(page.series))
	for _, se := range page.series {
		metric := map[string]any{"type": se.metric}
		if len(se.metricLabels) > 0 {
			metric["labels"] = se.metricLabels
		}
		resource := map[string]any{"type": se.resourceType}
		if len(se.resourceLabels) > 0 {
			resource["labels"] = se.resourceLabels
		}
		ts := map[string]any{"metric": metric, "resource": resource, "metricKind": map[uint64]string{1: "GAUGE", 2: "DELTA"}[se.kind()], "valueType": valueType}
		if !headers {
			points := make([]map[string]any, 0, len(se.points))
			for _, p := range se.points {
				at := p.end.UTC().Format(time.RFC3339Nano)
				value := map[string]any{"doubleValue": p.v}
				if page.int64Values {
					value = map[string]any{"int64Value": strconv.FormatInt(int64(math.Round(p.v)), 10)}
				}
				points = append(points, map[string]any{"interval": map[string]any{"startTime": at, "endTime": at}, "value": value})
			}
			if len(points) > 0 {
				ts["points"] = points
			}
		}
		all = append(all, ts)
	}
	out := map[string]any{}
	if len(all) > 0 {
		out["timeSeries"] = all
	}
	if page.next != "" {
		out["nextPageToken"] = page.next
	}
	return out
}
