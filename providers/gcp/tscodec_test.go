package gcp

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"cloud.google.com/go/monitoring/apiv3/v2/monitoringpb"
	"google.golang.org/genproto/googleapis/api/distribution"
	metricpb "google.golang.org/genproto/googleapis/api/metric"
	"google.golang.org/genproto/googleapis/api/monitoredres"
	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// randomPage is a ListTimeSeries answer with what the API sends (labels,
// kinds, aligned points with end and sometimes start times, double and
// int64 values, a page token, execution errors) and, now and then, what it
// might (bool, string and distribution values, empty messages).
func randomPage(rng *rand.Rand) *monitoringpb.ListTimeSeriesResponse {
	resp := &monitoringpb.ListTimeSeriesResponse{}
	if rng.IntN(2) == 0 {
		resp.NextPageToken = "tok" + strconv.Itoa(rng.IntN(1000))
	}
	if rng.IntN(5) == 0 {
		resp.ExecutionErrors = []*status.Status{{Code: 7, Message: "denied"}}
	}
	for s := rng.IntN(4); s > 0; s-- {
		ts := &monitoringpb.TimeSeries{
			Metric:     &metricpb.Metric{Type: "agent.googleapis.com/gpu/utilization", Labels: map[string]string{"gpu_number": strconv.Itoa(rng.IntN(8))}},
			Resource:   &monitoredres.MonitoredResource{Type: "gce_instance", Labels: map[string]string{"instance_id": strconv.Itoa(rng.IntN(1e6)), "zone": "us-central1-a"}},
			MetricKind: metricpb.MetricDescriptor_GAUGE,
			ValueType:  metricpb.MetricDescriptor_DOUBLE,
			Unit:       "%",
		}
		for p := rng.IntN(30); p > 0; p-- {
			end := timestamppb.New(timestamppb.Now().AsTime().Add(-timeDur(rng)))
			pt := &monitoringpb.Point{Interval: &monitoringpb.TimeInterval{EndTime: end}}
			if rng.IntN(2) == 0 {
				pt.Interval.StartTime = &timestamppb.Timestamp{Seconds: end.Seconds - 3600, Nanos: end.Nanos}
			}
			switch rng.IntN(12) {
			case 0:
				pt.Value = &monitoringpb.TypedValue{Value: &monitoringpb.TypedValue_Int64Value{Int64Value: rng.Int64N(1<<40) - 1<<39}}
			case 1:
				pt.Value = &monitoringpb.TypedValue{Value: &monitoringpb.TypedValue_BoolValue{BoolValue: true}}
			case 2:
				pt.Value = &monitoringpb.TypedValue{Value: &monitoringpb.TypedValue_DistributionValue{DistributionValue: &distribution.Distribution{Count: 3, Mean: 1.5}}}
			case 3:
				pt.Value = &monitoringpb.TypedValue{}
			case 4:
				pt.Interval = nil
				pt.Value = &monitoringpb.TypedValue{Value: &monitoringpb.TypedValue_StringValue{StringValue: "x"}}
			default:
				pt.Value = &monitoringpb.TypedValue{Value: &monitoringpb.TypedValue_DoubleValue{DoubleValue: rng.NormFloat64() * 50}}
			}
			ts.Points = append(ts.Points, pt)
		}
		resp.TimeSeries = append(resp.TimeSeries, ts)
	}
	return resp
}

func timeDur(rng *rand.Rand) time.Duration { return time.Duration(rng.Int64N(1 << 50)) }

// checkSameAsProto decodes b both ways and fails when they disagree.
func checkSameAsProto(t *testing.T, b []byte) {
	t.Helper()
	want := &monitoringpb.ListTimeSeriesResponse{}
	wantErr := proto.Unmarshal(b, want)
	got := &monitoringpb.ListTimeSeriesResponse{NextPageToken: "left over"}
	gotErr := decodeTimeSeriesPage(b, got, &pageSlabs{})
	if (gotErr == nil) != (wantErr == nil) {
		t.Fatalf("error %v, proto.Unmarshal's %v", gotErr, wantErr)
	}
	if wantErr == nil && !proto.Equal(got, want) {
		t.Fatalf("decoded\n%v\nproto.Unmarshal decoded\n%v", got, want)
	}
	checkCompactAsProto(t, b, want, wantErr)
}

// checkCompactAsProto decodes b in compact form and fails when it does not
// agree with proto.Unmarshal's want on whether b parses, on each series
// but its points, and on each point's end second and value as readMetric
// reads them from the messages.
func checkCompactAsProto(t *testing.T, b []byte, want *monitoringpb.ListTimeSeriesResponse, wantErr error) {
	t.Helper()
	slabs := &pageSlabs{compact: true}
	got := &monitoringpb.ListTimeSeriesResponse{NextPageToken: "left over"}
	gotErr := decodeTimeSeriesPage(b, got, slabs)
	if (gotErr == nil) != (wantErr == nil) {
		t.Fatalf("compact: error %v, proto.Unmarshal's %v", gotErr, wantErr)
	}
	if wantErr != nil {
		return
	}
	if len(got.TimeSeries) != len(want.TimeSeries) {
		t.Fatalf("compact: %d series, proto.Unmarshal %d", len(got.TimeSeries), len(want.TimeSeries))
	}
	for i, ts := range got.TimeSeries {
		w := want.TimeSeries[i]
		var gotPts []compactPoint
		if pts, ok := slabs.pointsOf(ts); ok {
			if len(ts.Points) != 0 {
				t.Fatalf("compact: series %d has both compact points and %d messages", i, len(ts.Points))
			}
			gotPts = pts
		} else {
			gotPts = messagePoints(ts)
		}
		wantPts := messagePoints(w)
		if len(gotPts) != len(wantPts) {
			t.Fatalf("compact: series %d has %d points, proto.Unmarshal %d", i, len(gotPts), len(wantPts))
		}
		for j := range gotPts {
			g, x := gotPts[j], wantPts[j]
			if g.end != x.end || !(g.v == x.v || math.IsNaN(g.v) && math.IsNaN(x.v)) {
				t.Fatalf("compact: series %d point %d is %+v, proto.Unmarshal's %+v", i, j, g, x)
			}
		}
		a, z := proto.Clone(ts).(*monitoringpb.TimeSeries), proto.Clone(w).(*monitoringpb.TimeSeries)
		a.Points, z.Points = nil, nil
		if !proto.Equal(a, z) {
			t.Fatalf("compact: series %d is\n%v\nproto.Unmarshal's\n%v", i, a, z)
		}
	}
	g, w := proto.Clone(got).(*monitoringpb.ListTimeSeriesResponse), proto.Clone(want).(*monitoringpb.ListTimeSeriesResponse)
	g.TimeSeries, w.TimeSeries = nil, nil
	if !proto.Equal(g, w) {
		t.Fatalf("compact: page is\n%v\nproto.Unmarshal's\n%v", g, w)
	}
}

// messagePoints is what readMetric reads of a series' point messages.
func messagePoints(ts *monitoringpb.TimeSeries) []compactPoint {
	var out []compactPoint
	for _, pt := range ts.GetPoints() {
		out = append(out, compactPoint{end: pt.GetInterval().GetEndTime().GetSeconds(), v: pointValue(pt.GetValue())})
	}
	return out
}

// TestTimeSeriesCodecMatchesProto: on random pages, and on pages with
// fields repeated, unknown fields and truncations, the codec's message is
// proto.Unmarshal's.
func TestTimeSeriesCodecMatchesProto(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 3))
	for trial := 0; trial < 400; trial++ {
		b, err := proto.Marshal(randomPage(rng))
		if err != nil {
			t.Fatal(err)
		}
		checkSameAsProto(t, b)
		if len(b) > 0 {
			checkSameAsProto(t, b[:rng.IntN(len(b))])
		}
		// an unknown field at the end of the page
		checkSameAsProto(t, protowire.AppendVarint(protowire.AppendTag(append([]byte(nil), b...), 99, protowire.VarintType), 5))
		// the page twice: repeated fields append, singular ones merge
		checkSameAsProto(t, append(append([]byte(nil), b...), b...))
	}
}

// TestTimeSeriesCodecFastPath: a page as the API sends it is decoded
// without falling back to proto.Unmarshal, and its points share arrays.
func TestTimeSeriesCodecFastPath(t *testing.T) {
	page := &monitoringpb.ListTimeSeriesResponse{NextPageToken: "next"}
	for s := 0; s < 3; s++ {
		ts := &monitoringpb.TimeSeries{Resource: &monitoredres.MonitoredResource{Labels: map[string]string{"instance_id": strconv.Itoa(s)}}}
		for p := 0; p < 50; p++ {
			end := &timestamppb.Timestamp{Seconds: 1_800_000_000 + int64(p)*3600}
			ts.Points = append(ts.Points, &monitoringpb.Point{
				Interval: &monitoringpb.TimeInterval{EndTime: end, StartTime: &timestamppb.Timestamp{Seconds: end.Seconds - 3600}},
				Value:    &monitoringpb.TypedValue{Value: &monitoringpb.TypedValue_DoubleValue{DoubleValue: float64(p)}},
			})
		}
		page.TimeSeries = append(page.TimeSeries, ts)
	}
	b, err := proto.Marshal(page)
	if err != nil {
		t.Fatal(err)
	}
	got := &monitoringpb.ListTimeSeriesResponse{}
	if err := fastTimeSeriesPage(b, got, &pageSlabs{}); err != nil {
		t.Fatalf("the fast path refused an API page: %v", err)
	}
	if !proto.Equal(got, page) {
		t.Fatalf("decoded %v", got)
	}
	slabs := &pageSlabs{}
	if allocs := testing.AllocsPerRun(20, func() {
		slabs.reset()
		_ = decodeTimeSeriesPage(b, &monitoringpb.ListTimeSeriesResponse{}, slabs)
	}); allocs > 60 {
		t.Errorf("%v allocations for 150 points: the points are not sharing arrays", allocs)
	}
}

// FuzzTimeSeriesCodec: for any bytes, the codec agrees with proto.Unmarshal
// on whether they parse and on the message.
func FuzzTimeSeriesCodec(f *testing.F) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 8; i++ {
		b, _ := proto.Marshal(randomPage(rng))
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkSameAsProto(t, b) })
}

// TestTimeSeriesCodecReusesSlabs: pages decoded one after another into the
// same slabs (one iterator's pages) each come out as proto.Unmarshal's,
// with nothing left over from the page before.
func TestTimeSeriesCodecReusesSlabs(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 5))
	slabs := &pageSlabs{}
	for trial := 0; trial < 300; trial++ {
		b, err := proto.Marshal(randomPage(rng))
		if err != nil {
			t.Fatal(err)
		}
		want := &monitoringpb.ListTimeSeriesResponse{}
		if err := proto.Unmarshal(b, want); err != nil {
			t.Fatal(err)
		}
		got := &monitoringpb.ListTimeSeriesResponse{}
		slabs.reset()
		if err := decodeTimeSeriesPage(b, got, slabs); err != nil {
			t.Fatal(err)
		}
		if !proto.Equal(got, want) {
			t.Fatalf("page %d decoded into reused slabs:\n%v\nwant\n%v", trial, got, want)
		}
	}
}

// TestTimeSeriesCodecCompact: a page as the API sends it comes out in
// compact form, every series' points beside it at a few allocations for
// the page; a series with a point the fast path does not take keeps its
// messages, and the series beside it stay compact.
func TestTimeSeriesCodecCompact(t *testing.T) {
	page := &monitoringpb.ListTimeSeriesResponse{}
	for s := 0; s < 3; s++ {
		ts := &monitoringpb.TimeSeries{Resource: &monitoredres.MonitoredResource{Labels: map[string]string{"instance_id": strconv.Itoa(s)}}}
		for p := 0; p < 50; p++ {
			end := &timestamppb.Timestamp{Seconds: 1_800_000_000 + int64(p)*3600}
			v := &monitoringpb.TypedValue{Value: &monitoringpb.TypedValue_DoubleValue{DoubleValue: float64(p) / 3}}
			if s == 1 && p == 7 {
				v = &monitoringpb.TypedValue{Value: &monitoringpb.TypedValue_DistributionValue{DistributionValue: &distribution.Distribution{Count: 2, Mean: 4}}}
			}
			ts.Points = append(ts.Points, &monitoringpb.Point{Interval: &monitoringpb.TimeInterval{EndTime: end}, Value: v})
		}
		page.TimeSeries = append(page.TimeSeries, ts)
	}
	b, err := proto.Marshal(page)
	if err != nil {
		t.Fatal(err)
	}
	slabs := &pageSlabs{compact: true}
	got := &monitoringpb.ListTimeSeriesResponse{}
	if err := decodeTimeSeriesPage(b, got, slabs); err != nil {
		t.Fatal(err)
	}
	for s, ts := range got.TimeSeries {
		pts, ok := slabs.pointsOf(ts)
		if ok != (s != 1) {
			t.Fatalf("series %d: compact %v", s, ok)
		}
		if !ok {
			if !proto.Equal(ts, page.TimeSeries[s]) {
				t.Fatalf("series %d kept as messages differs: %v", s, ts)
			}
			continue
		}
		for p, pt := range pts {
			if pt.end != 1_800_000_000+int64(p)*3600 || pt.v != float64(p)/3 {
				t.Fatalf("series %d point %d: %+v", s, p, pt)
			}
		}
	}
	checkSameAsProto(t, b)

	// The allocations are the series' (labels, resource), not the points'.
	allocs := func(points int) float64 {
		page := &monitoringpb.ListTimeSeriesResponse{}
		for s := 0; s < 3; s++ {
			ts := &monitoringpb.TimeSeries{Resource: &monitoredres.MonitoredResource{Labels: map[string]string{"instance_id": strconv.Itoa(s)}}}
			for p := 0; p < points; p++ {
				ts.Points = append(ts.Points, &monitoringpb.Point{
					Interval: &monitoringpb.TimeInterval{EndTime: &timestamppb.Timestamp{Seconds: int64(p) * 60}},
					Value:    &monitoringpb.TypedValue{Value: &monitoringpb.TypedValue_DoubleValue{DoubleValue: 1}},
				})
			}
			page.TimeSeries = append(page.TimeSeries, ts)
		}
		b, err := proto.Marshal(page)
		if err != nil {
			t.Fatal(err)
		}
		slabs := &pageSlabs{compact: true}
		return testing.AllocsPerRun(20, func() {
			slabs.reset()
			_ = decodeTimeSeriesPage(b, &monitoringpb.ListTimeSeriesResponse{}, slabs)
		})
	}
	if few, many := allocs(50), allocs(5000); many > few {
		t.Errorf("%v allocations for 3 series of 5,000 compact points, %v for 50: the points are not compact", many, few)
	}
}

// TestTimeSeriesCodecCompactReuse: pages decoded one after another in
// compact form into the same slabs each read as proto.Unmarshal's, nothing
// left over from the page before.
func TestTimeSeriesCodecCompactReuse(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 7))
	slabs := &pageSlabs{compact: true}
	for trial := 0; trial < 300; trial++ {
		b, err := proto.Marshal(randomPage(rng))
		if err != nil {
			t.Fatal(err)
		}
		want := &monitoringpb.ListTimeSeriesResponse{}
		if err := proto.Unmarshal(b, want); err != nil {
			t.Fatal(err)
		}
		got := &monitoringpb.ListTimeSeriesResponse{}
		slabs.reset()
		if err := decodeTimeSeriesPage(b, got, slabs); err != nil {
			t.Fatal(err)
		}
		for i, ts := range got.TimeSeries {
			pts, ok := slabs.pointsOf(ts)
			if !ok {
				pts = messagePoints(ts)
			}
			wp := messagePoints(want.TimeSeries[i])
			if len(pts) != len(wp) {
				t.Fatalf("page %d series %d: %d points, want %d", trial, i, len(pts), len(wp))
			}
			for j := range pts {
				if pts[j].end != wp[j].end || !(pts[j].v == wp[j].v || math.IsNaN(pts[j].v) && math.IsNaN(wp[j].v)) {
					t.Fatalf("page %d series %d point %d: %+v, want %+v", trial, i, j, pts[j], wp[j])
				}
			}
		}
	}
}
