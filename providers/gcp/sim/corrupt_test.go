package sim_test

import (
	"encoding/base64"
	"encoding/binary"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"cloud.google.com/go/monitoring/apiv3/v2/monitoringpb"
	"google.golang.org/genproto/googleapis/api/metric"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/gpufinops/gpufinops/providers/gcp/sim"
	"github.com/gpufinops/gpufinops/providers/gcp/sim/models"
)

// The contract checks must be able to fail: each test here takes a real
// answer of the simulator, breaks it in one way and wants a violation.

func corruptText(t *testing.T, s, re, repl string) []byte {
	t.Helper()
	rx := regexp.MustCompile(re)
	loc := rx.FindStringSubmatchIndex(s)
	if loc == nil {
		t.Fatalf("nothing matches %s in the answer", re)
	}
	out := rx.ExpandString(nil, repl, s, loc)
	return []byte(s[:loc[0]] + string(out) + s[loc[1]:])
}

// grpcFrame frames a message as a gRPC body.
func grpcFrame(msg []byte) []byte {
	return append(binary.BigEndian.AppendUint32([]byte{0}, uint32(len(msg))), msg...)
}

func TestContractCatchesCorruptAnswers(t *testing.T) {
	rec, _ := driveEveryOperation(t)
	last := func(key string) recorded {
		t.Helper()
		x, ok := rec.last[key]
		if !ok {
			t.Fatalf("no %s recorded", key)
		}
		if err := sim.CheckAnswer(x.r, x.status, x.header, x.body); err != nil {
			t.Fatalf("%s: the uncorrupted answer fails: %v", key, err)
		}
		return x
	}
	list := last("compute:instances.aggregatedList answer")
	mt := last("compute:machineTypes.get answer")
	skus := last("cloudbilling:services.skus.list answer")
	computeErr := last("compute:instances.stop error")
	billingErr := last("cloudbilling:services.skus.list error")
	series := last("monitoring:ListTimeSeries answer")
	grpcErr := last("monitoring:ListTimeSeries error")
	cuds := last("compute:regionCommitments.aggregatedList answer")
	reservations := last("compute:reservations.aggregatedList answer")
	restSeries := last("monitoring:projects.timeSeries.list answer")
	restErr := last("monitoring:projects.timeSeries.list error")
	endpoints := last("aiplatform:projects.locations.endpoints.list answer")
	jobs := last("aiplatform:projects.locations.customJobs.list answer")
	workbench := last("notebooks:projects.locations.instances.list answer")
	wbOp := last("notebooks:projects.locations.instances.stop answer")

	cases := []struct {
		name   string
		x      recorded
		status int
		header http.Header
		body   []byte
	}{
		{"unknown property", list, 0, nil, corruptText(t, string(list.body), `"cpuPlatform":`, `"bogusField":1,"cpuPlatform":`)},
		{"vertex bad accelerator enum", endpoints, 0, nil, corruptText(t, string(endpoints.body), `"acceleratorType":"[A-Z_0-9]+"`, `"acceleratorType":"NVIDIA_TESLA_Z9"`)},
		{"vertex replicas as a string", endpoints, 0, nil, corruptText(t, string(endpoints.body), `"minReplicaCount":(\d+)`, `"minReplicaCount":"$1"`)},
		{"vertex int64 replicaCount as a number", jobs, 0, nil, corruptText(t, string(jobs.body), `"replicaCount":"(\d+)"`, `"replicaCount":$1`)},
		{"vertex bad job state", jobs, 0, nil, corruptText(t, string(jobs.body), `"state":"JOB_STATE_[A-Z]+"`, `"state":"JOB_STATE_NAPPING"`)},
		{"workbench bad state", workbench, 0, nil, corruptText(t, string(workbench.body), `"state":"[A-Z]+"`, `"state":"DOZING"`)},
		{"workbench unknown gceSetup property", workbench, 0, nil, corruptText(t, string(workbench.body), `"machineType":`, `"gpuKind":"x","machineType":`)},
		{"workbench operation done as a string", wbOp, 0, nil, corruptText(t, string(wbOp.body), `"done":(true|false)`, `"done":"$1"`)},
		{"wrong type", list, 0, nil, corruptText(t, string(list.body), `"automaticRestart":(true|false)`, `"automaticRestart":"no"`)},
		{"bad enum", list, 0, nil, corruptText(t, string(list.body), `"status":"(RUNNING|TERMINATED)"`, `"status":"SPRINTING"`)},
		{"uint64 as a number", list, 0, nil, corruptText(t, string(list.body), `"id":"(\d+)"`, `"id":$1`)},
		{"uint64 not decimal", list, 0, nil, corruptText(t, string(list.body), `"id":"(\d+)"`, `"id":"0x$1"`)},
		{"integer not integral", mt, 0, nil, corruptText(t, string(mt.body), `"guestCpus":(\d+)`, `"guestCpus":$1.5`)},
		{"array as object", skus, 0, nil, corruptText(t, string(skus.body), `"serviceRegions":\[([^\]]*)\]`, `"serviceRegions":{"a":[$1]}`)},
		{"bad time", skus, 0, nil, corruptText(t, string(skus.body), `"effectiveTime":"[^"]*"`, `"effectiveTime":"yesterday"`)},
		{"error code not the status", computeErr, 0, nil, corruptText(t, string(computeErr.body), `"code":\d+`, `"code":500`)},
		{"error status of another code", billingErr, 0, nil, corruptText(t, string(billingErr.body), `"status":"RESOURCE_EXHAUSTED"`, `"status":"NOT_FOUND"`)},
		{"error status not a code", billingErr, 0, nil, corruptText(t, string(billingErr.body), `"status":"RESOURCE_EXHAUSTED"`, `"status":"SLOW_DOWN"`)},
		{"error without message", computeErr, 0, nil, corruptText(t, string(computeErr.body), `\],"message":"[^"]*",`, `],`)},
		{"error outside its envelope", computeErr, 0, nil, []byte(`{"code":403,"message":"slow down"}`)},
		{"error detail of an unknown type", billingErr, 0, nil, corruptText(t, string(billingErr.body), `google.rpc.ErrorInfo`, `google.rpc.SlowDown`)},
		{"error detail with a foreign field", billingErr, 0, nil, corruptText(t, string(billingErr.body), `"reason":"RATE_LIMIT_EXCEEDED"`, `"reason":"RATE_LIMIT_EXCEEDED","retryDelay":"1s"`)},
		{"commitment bad enum", cuds, 0, nil, corruptText(t, string(cuds.body), `"plan":"[A-Z_]+"`, `"plan":"FOREVER"`)},
		{"commitment int64 as a number", cuds, 0, nil, corruptText(t, string(cuds.body), `"amount":"(\d+)"`, `"amount":$1`)},
		{"commitment bad time", cuds, 0, nil, corruptText(t, string(cuds.body), `"endTimestamp":"[^"]*"`, `"endTimestamp":17`)},
		{"reservation wrong type", reservations, 0, nil, corruptText(t, string(reservations.body), `"specificReservationRequired":false`, `"specificReservationRequired":"no"`)},
		{"reservation unknown property", reservations, 0, nil, corruptText(t, string(reservations.body), `"specificReservation":\{`, `"specificReservation":{"machineType":"a2-highgpu-1g",`)},
		{"reservation bad enum", reservations, 0, nil, corruptText(t, string(reservations.body), `"shareType":"[A-Z_]+"`, `"shareType":"EVERYONE"`)},
		{"rest series int64 as a number", restSeries, 0, nil, corruptText(t, string(restSeries.body), `"int64Value":"(\d+)"`, `"int64Value":$1`)},
		{"rest series bad enum", restSeries, 0, nil, corruptText(t, string(restSeries.body), `"metricKind":"GAUGE"`, `"metricKind":"METER"`)},
		{"rest series error status of another code", restErr, 0, nil, corruptText(t, string(restErr.body), `"status":"[A-Z_]+"`, `"status":"NOT_FOUND"`)},
		{"error as HTML", computeErr, 0, http.Header{"Content-Type": {"text/html"}}, computeErr.body},
		{"error with HTTP 200", computeErr, 200, nil, computeErr.body},
	}

	// gRPC answers, re-encoded.
	var ok monitoringpb.ListTimeSeriesResponse
	if err := proto.Unmarshal(series.body[5:], &ok); err != nil || len(ok.TimeSeries) == 0 {
		t.Fatalf("ListTimeSeries answer: %v, %d series", err, len(ok.TimeSeries))
	}
	reencode := func(edit func(*monitoringpb.ListTimeSeriesResponse)) []byte {
		m := proto.Clone(&ok).(*monitoringpb.ListTimeSeriesResponse)
		edit(m)
		b, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return grpcFrame(b)
	}
	cases = append(cases,
		struct {
			name   string
			x      recorded
			status int
			header http.Header
			body   []byte
		}{"grpc point of another type", series, 0, nil, reencode(func(m *monitoringpb.ListTimeSeriesResponse) {
			for _, ts := range m.TimeSeries {
				if len(ts.Points) > 0 {
					ts.ValueType = metric.MetricDescriptor_BOOL
					return
				}
			}
			t.Fatal("no series with points")
		})},
		struct {
			name   string
			x      recorded
			status int
			header http.Header
			body   []byte
		}{"grpc bad enum", series, 0, nil, reencode(func(m *monitoringpb.ListTimeSeriesResponse) {
			m.TimeSeries[0].MetricKind = metric.MetricDescriptor_MetricKind(42)
		})},
		struct {
			name   string
			x      recorded
			status int
			header http.Header
			body   []byte
		}{"grpc unknown field", series, 0, nil, func() []byte {
			b, _ := proto.Marshal(&ok)
			return grpcFrame(protowire.AppendString(protowire.AppendTag(b, 99, protowire.BytesType), "x"))
		}()},
		struct {
			name   string
			x      recorded
			status int
			header http.Header
			body   []byte
		}{"grpc two messages", series, 0, nil, append(append([]byte{}, series.body...), series.body...)},
	)
	for _, c := range cases {
		status, h := c.x.status, c.x.header
		if c.status != 0 {
			status = c.status
		}
		if c.header != nil {
			h = c.header
		}
		err := sim.CheckAnswer(c.x.r, status, h, c.body)
		if err == nil {
			t.Errorf("%s: the corrupted answer passes", c.name)
			continue
		}
		t.Logf("%s: %v", c.name, strings.ReplaceAll(err.Error(), "\n", "; "))
	}

	// gRPC errors broken in their trailers.
	for name, edit := range map[string]func(http.Header){
		"grpc status not a code":  func(h http.Header) { h.Set(http.TrailerPrefix+"Grpc-Status", "42") },
		"grpc error without text": func(h http.Header) { h.Del(http.TrailerPrefix + "Grpc-Message") },
		"grpc details of another code": func(h http.Header) {
			h.Set(http.TrailerPrefix+"Grpc-Status", "14")
		},
		"grpc details not a Status": func(h http.Header) {
			h.Set(http.TrailerPrefix+"Grpc-Status-Details-Bin", base64.RawStdEncoding.EncodeToString([]byte{0xff, 0xff}))
		},
	} {
		h := grpcErr.header.Clone()
		edit(h)
		if err := sim.CheckAnswer(grpcErr.r, grpcErr.status, h, grpcErr.body); err == nil {
			t.Errorf("%s: passes", name)
		} else {
			t.Logf("%s: %v", name, strings.ReplaceAll(err.Error(), "\n", "; "))
		}
	}
}

func TestContractCatchesBadRequests(t *testing.T) {
	compute := models.MustLoad("compute")
	billing := models.MustLoad("cloudbilling")
	req := func(method, u, body string) *http.Request {
		r, err := http.NewRequest(method, u, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	const p = "http://sim/compute/v1/projects/proj"
	for _, g := range []struct {
		d          *models.Doc
		id, method string
		u, body    string
	}{
		{compute, "compute.instances.aggregatedList", "GET", p + "/aggregated/instances?maxResults=500&includeAllScopes=true&%24alt=json%3Benum-encoding%3Dint", ""},
		{compute, "compute.instances.stop", "POST", p + "/zones/us-central1-a/instances/vm-1/stop?discardLocalSsd=true", ""},
		{compute, "compute.instances.testIamPermissions", "POST", p + "/zones/us-central1-a/instances/vm-1/testIamPermissions", `{"permissions":["compute.instances.stop"]}`},
		{billing, "cloudbilling.services.skus.list", "GET", "http://sim/v1/services/6F81-5844-456A/skus?pageSize=100&currencyCode=USD", ""},
	} {
		if vs := g.d.Request(g.id, req(g.method, g.u, g.body), []byte(g.body)); len(vs) > 0 {
			t.Fatalf("%s: a valid request fails: %v", g.id, vs)
		}
	}
	for _, b := range []struct {
		name       string
		d          *models.Doc
		id, method string
		u, body    string
	}{
		{"unknown query parameter", compute, "compute.instances.aggregatedList", "GET", p + "/aggregated/instances?pageLimit=5", ""},
		{"below minimum", compute, "compute.instances.aggregatedList", "GET", p + "/aggregated/instances?maxResults=-1", ""},
		{"above documented maximum", compute, "compute.instances.aggregatedList", "GET", p + "/aggregated/instances?maxResults=501", ""},
		{"not an integer", compute, "compute.instances.aggregatedList", "GET", p + "/aggregated/instances?maxResults=ten", ""},
		{"not a boolean", compute, "compute.instances.aggregatedList", "GET", p + "/aggregated/instances?includeAllScopes=yes", ""},
		{"bad system parameter", compute, "compute.instances.aggregatedList", "GET", p + "/aggregated/instances?alt=xml", ""},
		{"repeated parameter", compute, "compute.instances.aggregatedList", "GET", p + "/aggregated/instances?filter=a&filter=b", ""},
		{"wrong HTTP method", compute, "compute.instances.stop", "GET", p + "/zones/us-central1-a/instances/vm-1/stop", ""},
		{"wrong path", compute, "compute.instances.stop", "POST", p + "/zones/us-central1-a/instance/vm-1/stop", ""},
		{"bad project", compute, "compute.instances.get", "GET", "http://sim/compute/v1/projects/Bad_Project/zones/us-central1-a/instances/vm-1", ""},
		{"unknown body property", compute, "compute.instances.testIamPermissions", "POST", p + "/zones/us-central1-a/instances/vm-1/testIamPermissions", `{"permission":["compute.instances.stop"]}`},
		{"body of a bodiless method", compute, "compute.instances.get", "GET", p + "/zones/us-central1-a/instances/vm-1", `{}`},
		{"path parameter pattern", billing, "cloudbilling.services.skus.list", "GET", "http://sim/v1/services/a/b/skus", ""},
		{"int32 overflow", billing, "cloudbilling.services.skus.list", "GET", "http://sim/v1/services/6F81-5844-456A/skus?pageSize=3000000000", ""},
		{"bad time parameter", billing, "cloudbilling.services.skus.list", "GET", "http://sim/v1/services/6F81-5844-456A/skus?startTime=today", ""},
	} {
		vs := b.d.Request(b.id, req(b.method, b.u, b.body), []byte(b.body))
		if len(vs) == 0 {
			t.Errorf("%s: the bad request passes", b.name)
			continue
		}
		t.Logf("%s: %v", b.name, models.Join(vs))
	}

	// gRPC requests.
	good := &monitoringpb.ListTimeSeriesRequest{Name: "projects/p", Filter: `metric.type = "x"`, Interval: &monitoringpb.TimeInterval{}}
	frame := func(m proto.Message) []byte {
		b, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return grpcFrame(b)
	}
	if vs := models.GRPCRequest(models.ListTimeSeries, frame(good)); len(vs) > 0 {
		t.Fatalf("a valid ListTimeSeries request fails: %v", vs)
	}
	noName := proto.Clone(good).(*monitoringpb.ListTimeSeriesRequest)
	noName.Name = ""
	noInterval := proto.Clone(good).(*monitoringpb.ListTimeSeriesRequest)
	noInterval.Interval = nil
	badView := proto.Clone(good).(*monitoringpb.ListTimeSeriesRequest)
	badView.View = monitoringpb.ListTimeSeriesRequest_TimeSeriesView(7)
	for name, body := range map[string][]byte{
		"missing REQUIRED name":     frame(noName),
		"missing REQUIRED interval": frame(noInterval),
		"bad enum":                  frame(badView),
		"unknown field":             grpcFrame(protowire.AppendVarint(protowire.AppendTag(frame(good)[5:], 77, protowire.VarintType), 1)),
		"compressed frame":          append([]byte{1}, frame(good)[1:]...),
		"truncated frame":           frame(good)[:8],
	} {
		vs := models.GRPCRequest(models.ListTimeSeries, body)
		if len(vs) == 0 {
			t.Errorf("%s: the bad request passes", name)
			continue
		}
		t.Logf("%s: %v", name, models.Join(vs))
	}
	if vs := models.GRPCRequest("/google.monitoring.v3.MetricService/NoSuchMethod", frame(good)); len(vs) == 0 {
		t.Error("an unknown method passes")
	}
}
