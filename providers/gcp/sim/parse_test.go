package sim

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
)

func TestParseMonitoringFilter(t *testing.T) {
	f, err := parseMonitoringFilter(`metric.type = "agent.googleapis.com/gpu/utilization" AND resource.type = "gce_instance" AND resource.label.zone = starts_with("us-central1-")`)
	if err != nil || f.metric != "agent.googleapis.com/gpu/utilization" || f.resource != "gce_instance" || f.zonePrefix != "us-central1-" {
		t.Fatalf("%+v, %v", f, err)
	}
	for _, bad := range []string{"", `resource.type = "gce_instance"`, `metric.type = "x" OR resource.type = "y"`, `metric.labels.gpu = "0"`} {
		if _, err := parseMonitoringFilter(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// FuzzMonitoringFilter: any filter is read or refused, never a panic; what
// is read names a metric.
func FuzzMonitoringFilter(f *testing.F) {
	f.Add(`metric.type = "agent.googleapis.com/gpu/utilization" AND resource.type = "gce_instance"`)
	f.Add(`metric.type = "x" AND resource.labels.zone = "us-east1-b"`)
	f.Fuzz(func(t *testing.T, s string) {
		if got, err := parseMonitoringFilter(s); err == nil && got.metric == "" {
			t.Fatalf("%q read without a metric: %+v", s, got)
		}
	})
}

// FuzzDecodeRequest: any bytes decode or fail, never a panic; a request
// encoded field by field decodes to its fields.
func FuzzDecodeRequest(f *testing.F) {
	f.Add("projects/p", `metric.type = "m"`, int64(1700000000), int64(3600), uint64(12), uint64(1), "resource.label.instance_id", []byte{0x52, 0x02, 0x08, 0x01})
	f.Fuzz(func(t *testing.T, name, filter string, end, period int64, aligner, reducer uint64, group string, junk []byte) {
		_, _ = decodeRequest(junk)
		if end < 0 || period < 0 || end > 1<<40 || period > 1<<30 {
			return
		}
		var b []byte
		b = protowire.AppendString(protowire.AppendTag(b, 10, protowire.BytesType), name)
		b = protowire.AppendString(protowire.AppendTag(b, 2, protowire.BytesType), filter)
		ts := protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), uint64(end))
		b = appendMessage(b, 4, appendMessage(nil, 2, ts))
		agg := appendMessage(nil, 1, protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), uint64(period)))
		agg = protowire.AppendVarint(protowire.AppendTag(agg, 2, protowire.VarintType), aligner)
		agg = protowire.AppendVarint(protowire.AppendTag(agg, 4, protowire.VarintType), reducer)
		agg = protowire.AppendString(protowire.AppendTag(agg, 5, protowire.BytesType), group)
		b = appendMessage(b, 5, agg)
		req, err := decodeRequest(b)
		if err != nil {
			t.Fatal(err)
		}
		if req.name != name || req.filter != filter || req.end.Unix() != end || req.period != time.Duration(period)*time.Second ||
			uint64(req.aligner) != aligner&0xffffffffffffffff && aligner < 1<<31 || len(req.groupBy) != 1 || req.groupBy[0] != group {
			t.Fatalf("decoded %+v", req)
		}
	})
}

// FuzzMoneyParts: a decimal price splits into units and nanos that spell
// it again (to the ninth decimal).
func FuzzMoneyParts(f *testing.F) {
	for _, s := range []string{"0.35", "2.933908", "12", ".5", "0.0000000015"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		whole, frac, _ := strings.Cut(strings.TrimSpace(s), ".")
		if _, err := strconv.ParseUint(whole, 10, 40); whole != "" && err != nil {
			return
		}
		if _, err := strconv.ParseUint("1"+frac, 10, 64); frac != "" && err != nil {
			return
		}
		units, nanos := moneyParts(s)
		if nanos < 0 || nanos >= 1e9 {
			t.Fatalf("%q: nanos %d", s, nanos)
		}
		want := (frac + "000000000")[:9]
		if got := strconv.Itoa(1e9 + nanos)[1:]; got != want || (whole != "" && units != whole) {
			t.Fatalf("%q → %s + %d nanos", s, units, nanos)
		}
	})
}
