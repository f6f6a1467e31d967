package aws

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	"github.com/aws/smithy-go/encoding/cbor"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// cborCloudWatch is a small CloudWatch speaking the SDK's default wire
// format (Smithy RPC v2 CBOR): ListMetrics in pages of three metrics,
// GetMetricData in pages of one result, and one Throttling error first.
type cborCloudWatch struct {
	t         *testing.T
	mu        sync.Mutex
	calls     map[string]int
	queries   []string // GetMetricData query Ids seen
	throttled bool
}

func cborString(v cbor.Value) string {
	s, _ := v.(cbor.String)
	return string(s)
}

func (c *cborCloudWatch) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	op, ok := strings.CutPrefix(r.URL.Path, "/service/GraniteServiceVersion20100801/operation/")
	if !ok || r.Header.Get("Smithy-Protocol") != "rpc-v2-cbor" {
		c.t.Errorf("not an RPC v2 CBOR request: %s %v", r.URL.Path, r.Header)
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	body, _ := io.ReadAll(r.Body)
	v, err := cbor.Decode(body)
	if err != nil {
		c.t.Errorf("%s: %v", op, err)
		return
	}
	in, _ := v.(cbor.Map)
	c.mu.Lock()
	c.calls[op]++
	throttle := !c.throttled
	c.throttled = true
	c.mu.Unlock()
	w.Header().Set("Smithy-Protocol", "rpc-v2-cbor")
	w.Header().Set("Content-Type", "application/cbor")
	if throttle {
		w.WriteHeader(http.StatusBadRequest)
		w.Write(cbor.Encode(cbor.Map{"__type": cbor.String("Throttling"), "message": cbor.String("Rate exceeded")}))
		return
	}
	dimsOf := func(id, index string) cbor.List {
		d := cbor.List{cbor.Map{"Name": cbor.String("InstanceId"), "Value": cbor.String(id)}}
		if index != "" {
			d = append(d, cbor.Map{"Name": cbor.String("index"), "Value": cbor.String(index)}, cbor.Map{"Name": cbor.String("name"), "Value": cbor.String("A10G")})
		}
		return d
	}
	switch op {
	case "ListMetrics":
		ns := cborString(in["Namespace"])
		if f, _ := in["Dimensions"].(cbor.List); len(f) != 1 || cborString(f[0].(cbor.Map)["Name"]) != "InstanceId" {
			c.t.Errorf("ListMetrics: dimension filter %v, want InstanceId", in["Dimensions"])
		}
		if _, named := in["MetricName"]; named || ns != DefaultNamespace {
			c.t.Errorf("ListMetrics of %q named %v, want the agent's namespace, every name", ns, in["MetricName"])
		}
		// The agent's metrics of both instances, and one gpufinops does
		// not read, in pages of three.
		var metrics cbor.List
		for _, name := range []string{MetricGPUUtilization, "nvidia_smi_temperature_gpu", MetricGPUMemoryUsed, MetricGPUMemoryTotal, MetricMemoryUsed} {
			for _, id := range []string{"i-a", "i-b"} {
				index := ""
				if strings.HasPrefix(name, "nvidia_smi") {
					index = "0"
				}
				metrics = append(metrics, cbor.Map{"Namespace": cbor.String(ns), "MetricName": cbor.String(name), "Dimensions": dimsOf(id, index)})
			}
		}
		page := 0
		if tok := cborString(in["NextToken"]); tok != "" {
			page = int(tok[0] - '0')
		}
		out := cbor.Map{"Metrics": metrics[3*page : min(3*page+3, len(metrics))]}
		if 3*page+3 < len(metrics) {
			out["NextToken"] = cbor.String(string(rune('0' + page + 1)))
		}
		w.Write(cbor.Encode(out))
	case "GetMetricData":
		start, _ := cbor.AsTime(in["StartTime"])
		end, _ := cbor.AsTime(in["EndTime"])
		queries, _ := in["MetricDataQueries"].(cbor.List)
		var results cbor.List
		for _, q := range queries {
			qm := q.(cbor.Map)
			id := cborString(qm["Id"])
			c.mu.Lock()
			c.queries = append(c.queries, id)
			c.mu.Unlock()
			stat := qm["MetricStat"].(cbor.Map)
			metric := stat["Metric"].(cbor.Map)
			if p, _ := cbor.AsInt32(stat["Period"]); p != 3600 || cborString(stat["Stat"]) != "Average" {
				c.t.Errorf("query %s: period %v stat %v", id, stat["Period"], stat["Stat"])
			}
			value := map[string]float64{MetricGPUUtilization: 42, MetricGPUMemoryUsed: 11444, MetricGPUMemoryTotal: 22888, MetricMemoryUsed: 30, MetricCPU: 12.5}[cborString(metric["MetricName"])]
			var ts, vs cbor.List
			for t := end.Add(-time.Hour); !t.Before(start); t = t.Add(-time.Hour) {
				ts = append(ts, &cbor.Tag{ID: 1, Value: cbor.Float64(float64(t.Unix()))})
				vs = append(vs, cbor.Float64(value))
			}
			results = append(results, cbor.Map{"Id": cbor.String(id), "Label": cbor.String(id), "StatusCode": cbor.String("Complete"), "Timestamps": ts, "Values": vs})
		}
		// One result a page, to exercise NextToken.
		page := 0
		if tok := cborString(in["NextToken"]); tok != "" {
			page = int(tok[0] - '0')
		}
		out := cbor.Map{"MetricDataResults": results[page : page+1], "Messages": cbor.List{}}
		if page+1 < len(results) {
			out["NextToken"] = cbor.String(string(rune('0' + page + 1)))
		}
		w.Write(cbor.Encode(out))
	default:
		c.t.Errorf("unexpected operation %s", op)
	}
}

func TestReadUtilizationWire(t *testing.T) {
	cw := &cborCloudWatch{t: t, calls: map[string]int{}}
	srv := httptest.NewServer(cw)
	defer srv.Close()
	client := cloudwatch.New(cloudwatch.Options{
		Region:           "eu-west-1",
		BaseEndpoint:     aws.String(srv.URL),
		Credentials:      credentials.NewStaticCredentialsProvider("test", "test", ""),
		RetryMaxAttempts: 3,
	})
	instances := []fleet.Instance{{ID: "i-a", State: fleet.Running}, {ID: "i-b", State: fleet.Running}}
	day := fleet.TimeRange{Start: demoWeek.Start, End: demoWeek.Start.Add(24 * time.Hour)}
	notes, err := unitProvider().readUtilization(context.Background(), client, instances, day)
	if err != nil {
		t.Fatal(err)
	}
	if len(notes) != 0 {
		t.Errorf("notes %q", notes)
	}
	// Ten metrics listed in four pages (plus the throttled first call), one
	// GetMetricData batch of ten queries (the temperature left out, CPU
	// added without a listing) read in ten pages.
	if cw.calls["ListMetrics"] != 5 || cw.calls["GetMetricData"] != 10 {
		t.Errorf("calls = %v", cw.calls)
	}
	if len(cw.queries) != 100 || !slices.Contains(cw.queries, "g0_0") || !slices.Contains(cw.queries, "c1_4") {
		t.Errorf("query Ids %v", cw.queries[:min(10, len(cw.queries))])
	}
	for _, in := range instances {
		u := in.Utilization
		if u == nil || len(u.Samples) != 24 {
			t.Fatalf("%s: %+v", in.ID, u)
		}
		s := u.Samples[23]
		if !s.Time.Equal(day.End.Add(-time.Hour)) || !slices.Equal(s.GPU, fleet.PerGPU{42}) || !slices.Equal(s.GPUMemory, fleet.PerGPU{50}) || *s.CPU != 12.5 || *s.Memory != 30 {
			t.Errorf("%s last sample = %+v %v %v", in.ID, s, s.GPU, s.GPUMemory)
		}
		if h := in.Usage.HoursPerMonth; h == nil || *h != 730 {
			t.Errorf("%s hours %v", in.ID, in.Usage)
		}
	}
}
