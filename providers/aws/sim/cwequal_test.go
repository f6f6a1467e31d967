package sim

// Property tests: GetMetricData, aggregate and the CBOR writer give what
// the reference implementation of cwref_test.go gives, over random series,
// views, windows, periods, statistics, ScanBy and MaxDatapoints pages.

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/smithy-go/encoding/cbor"

	"github.com/gpufinops/gpufinops/providers/file"
	"github.com/gpufinops/gpufinops/providers/simkit"
)

var (
	eqPeriods = []int64{1, 5, 10, 20, 30, 60, 120, 180, 300, 420, 600, 780, 900, 1500, 3600, 3660, 5400, 7200, 10800, 21600, 86400, 604800}
	eqStats   = []string{"Average", "Maximum", "Minimum", "Sum", "SampleCount", "p50", "p95", "p99.9", "p0", "p100", "p10"}
)

// randMinute is a whole minute up to span before or after base.
func randMinute(r *rand.Rand, base time.Time, span time.Duration) time.Time {
	mins := int64(span / time.Minute)
	return base.Truncate(time.Minute).Add(time.Duration(r.Int64N(2*mins+1)-mins) * time.Minute)
}

// randView makes a view as Timeline.Observe makes them: minute-aligned
// down spans in time order, the last maybe open, and loads in time order.
func randView(r *rand.Rand, now time.Time) simkit.View {
	var v simkit.View
	t := now.Add(-time.Duration(r.IntN(80*24*60)) * time.Minute).Truncate(time.Minute)
	for range r.IntN(4) {
		a := t.Add(time.Duration(r.IntN(20*24*60)) * time.Minute)
		z := a.Add(time.Duration(1+r.IntN(3*24*60)) * time.Minute)
		v.Down = append(v.Down, simkit.Span{From: a, To: z})
		t = z
	}
	if r.IntN(4) == 0 {
		a := t.Add(time.Duration(r.IntN(5*24*60)) * time.Minute)
		v.Down = append(v.Down, simkit.Span{From: a, To: time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)})
	}
	t = now.Add(-time.Duration(r.IntN(30*24*60)) * time.Minute).Truncate(time.Minute)
	for range r.IntN(3) {
		t = t.Add(time.Duration(1+r.IntN(5*24*60)) * time.Minute)
		v.Loads = append(v.Loads, simkit.Load{From: t, GPU: float64(r.IntN(101))})
	}
	return v
}

func TestAggregateMatchesReference(t *testing.T) {
	s, _ := cwServe(t, cwDemo(t), Options{})
	st := s.cw()
	r := rand.New(rand.NewPCG(1, 2))
	n := 3000
	if testing.Short() {
		n = 500
	}
	points := 0
	for i := range n {
		se := st.all[r.IntN(len(st.all))]
		now := cwNow.Add(time.Duration(r.Int64N(int64(60*24*time.Hour))) - 30*24*time.Hour)
		if r.IntN(2) == 0 {
			now = now.Truncate(time.Minute)
		}
		var start time.Time
		switch r.IntN(4) {
		case 0: // far back: hourly and 5-minute data, the 455-day cut
			start = now.Add(-time.Duration(r.Int64N(int64(600 * 24 * time.Hour))))
		case 1: // across the 15-day cut
			start = now.Add(-time.Duration(r.Int64N(int64(20*24*time.Hour))) - 10*24*time.Hour)
		default:
			start = now.Add(-time.Duration(r.Int64N(int64(16 * 24 * time.Hour))))
		}
		if r.IntN(3) > 0 {
			start = roundStart(start, now)
		}
		end := start.Add(time.Duration(1 + r.Int64N(int64(30*24*time.Hour))))
		if r.IntN(8) == 0 {
			end = now.Add(time.Duration(r.Int64N(int64(2 * time.Hour))))
		}
		q := metricQuery{id: "q", namespace: se.namespace, name: se.name, dims: se.dims, returnData: true,
			period: eqPeriods[r.IntN(len(eqPeriods))], stat: eqStats[r.IntN(len(eqStats))]}
		if r.IntN(5) == 0 {
			q.period = 60 * (1 + r.Int64N(200))
		}
		view := simkit.View{}
		if r.IntN(3) > 0 {
			view = randView(r, now)
		}
		want := refAggregate(se, q, start, end, now, view)
		ts, vs := aggregate(se, q, start, end, now, view)
		where := fmt.Sprintf("case %d: %s %v period %d %s [%v, %v) now %v view %+v", i, se.key(), q.stat, q.period, q.stat, start, end, now, view)
		if len(ts) != len(want) || len(vs) != len(want) {
			t.Fatalf("%s: %d timestamps and %d values, want %d", where, len(ts), len(vs), len(want))
		}
		for j, p := range want {
			if p.t.Nanosecond() != 0 || p.t.Unix() != ts[j] || math.Float64bits(p.v) != math.Float64bits(vs[j]) {
				t.Fatalf("%s: point %d is %d %v, want %v %v", where, j, ts[j], vs[j], p.t, p.v)
			}
		}
		points += len(want)
	}
	if points < 100000 {
		t.Fatalf("the cases gave only %d datapoints in all", points)
	}
}

// answers encodes a GetMetricData answer in the three protocols.
type answers struct{ cbor, json, xml string }

func newAnswers(t *testing.T, out map[string]any) answers {
	t.Helper()
	rec := httptest.NewRecorder()
	writeCBOR(rec, out)
	j, err := json.Marshal(toJSON(out))
	if err != nil {
		t.Fatal(err)
	}
	var x strings.Builder
	writeXMLFields(&x, out)
	return answers{rec.Body.String(), string(j), x.String()}
}

func refAnswers(t *testing.T, out map[string]any) answers {
	t.Helper()
	j, err := json.Marshal(refToJSON(out))
	if err != nil {
		t.Fatal(err)
	}
	var x strings.Builder
	refWriteXMLFields(&x, out)
	return answers{string(cbor.Encode(refToCBOR(out))), string(j), x.String()}
}

// sameAnswers compares CBOR decoded (map order differs) and JSON and XML
// byte for byte.
func sameAnswers(t *testing.T, where string, got, want answers) {
	t.Helper()
	g, err := cbor.Decode([]byte(got.cbor))
	if err != nil {
		t.Fatalf("%s: the CBOR answer does not decode: %v", where, err)
	}
	w, err := cbor.Decode([]byte(want.cbor))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(g, w) || len(got.cbor) != len(want.cbor) {
		t.Fatalf("%s: CBOR answers differ (%d and %d bytes)", where, len(got.cbor), len(want.cbor))
	}
	if got.json != want.json {
		t.Fatalf("%s: JSON answers differ:\n%.2000s\nwant\n%.2000s", where, got.json, want.json)
	}
	if got.xml != want.xml {
		t.Fatalf("%s: XML answers differ:\n%.2000s\nwant\n%.2000s", where, got.xml, want.xml)
	}
}

func TestGetMetricDataMatchesReference(t *testing.T) {
	f := cwDemo(t)
	now := cwNow
	s, _ := cwServe(t, f, Options{Now: func() time.Time { return now }})
	st := s.cw()
	r := rand.New(rand.NewPCG(3, 4))
	n := 120
	if testing.Short() {
		n = 30
	}
	pages := 0
	for i := range n {
		now = cwNow.Add(time.Duration(i) * 7 * time.Minute).Add(time.Duration(r.IntN(60)) * time.Second)
		// Stops, starts and loads, seen by both implementations alike.
		if r.IntN(4) == 0 {
			in := f.Instances[r.IntN(len(f.Instances))]
			state := "stopped"
			if r.IntN(2) == 0 {
				state = "running"
			}
			s.inv.SetState(in.ID, state)
		}
		if r.IntN(6) == 0 {
			_ = s.SetLoad(f.Instances[r.IntN(len(f.Instances))].ID, float64(r.IntN(101)))
		}
		var queries []any
		for k := range 1 + r.IntN(12) {
			se := st.all[r.IntN(len(st.all))]
			dims := []any{}
			for _, d := range se.dims {
				dims = append(dims, map[string]any{"Name": d.Name, "Value": d.Value})
			}
			if r.IntN(10) == 0 { // no such series
				dims = append(dims, map[string]any{"Name": "extra", "Value": "x"})
			}
			period := eqPeriods[r.IntN(len(eqPeriods))]
			q := map[string]any{"Id": "q" + strconv.Itoa(k), "MetricStat": map[string]any{
				"Metric": map[string]any{"Namespace": se.namespace, "MetricName": se.name, "Dimensions": dims},
				"Period": float64(period), "Stat": eqStats[r.IntN(len(eqStats))]}}
			if r.IntN(5) == 0 {
				q["Label"] = "label " + strconv.Itoa(k)
			}
			if r.IntN(8) == 0 {
				q["ReturnData"] = false
			}
			queries = append(queries, q)
		}
		start := now.Add(-time.Duration(r.Int64N(int64(70 * 24 * time.Hour))))
		if r.IntN(6) == 0 {
			start = now.Add(-time.Duration(r.Int64N(int64(500 * 24 * time.Hour))))
		}
		end := start.Add(time.Duration(1 + r.Int64N(int64(20*24*time.Hour))))
		in := map[string]any{"MetricDataQueries": queries, "StartTime": start, "EndTime": end}
		switch r.IntN(3) {
		case 0:
			in["ScanBy"] = "TimestampAscending"
		case 1:
			in["ScanBy"] = "TimestampDescending"
		}
		if r.IntN(2) == 0 {
			in["MaxDatapoints"] = float64(1 + r.IntN(3000))
		}
		for page := 0; ; page++ {
			where := fmt.Sprintf("case %d page %d (now %v, %v)", i, page, now, in)
			got, err := s.getMetricData("us-east-1", in)
			want, wantErr := refGetMetricData(s, "us-east-1", in)
			if fmt.Sprint(err) != fmt.Sprint(wantErr) {
				t.Fatalf("%s: error %v, want %v", where, err, wantErr)
			}
			if err != nil {
				break
			}
			sameAnswers(t, where, newAnswers(t, got), refAnswers(t, want))
			pages++
			next, ok := got["NextToken"]
			if !ok {
				break
			}
			in["NextToken"] = next
		}
	}
	if pages < n+n/10 {
		t.Fatalf("%d pages for %d requests: the cases hardly page", pages, n)
	}
}

// oldShape turns the typed datapoint slices into the []any the reference
// writers know.
func oldShape(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = oldShape(e)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = oldShape(e)
		}
		return l
	case unixTimes:
		l := make([]any, len(x))
		for i, s := range x {
			l[i] = time.Unix(s, 0).UTC()
		}
		return l
	case []float64:
		l := make([]any, len(x))
		for i, f := range x {
			l[i] = f
		}
		return l
	}
	return v
}

// treeReader builds an answer tree from fuzz input.
type treeReader struct{ b []byte }

func (r *treeReader) byte() byte {
	if len(r.b) == 0 {
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *treeReader) u64() uint64 {
	var p [8]byte
	n := copy(p[:], r.b)
	r.b = r.b[n:]
	return binary.BigEndian.Uint64(p[:])
}

func (r *treeReader) str() string {
	n := int(r.byte())
	if n >= 200 { // long strings, zero-padded: two- and four-byte lengths
		n = (n - 199) * 1500
	}
	out := make([]byte, n)
	copy(out, r.b)
	r.b = r.b[min(n, len(r.b)):]
	return string(out)
}

func (r *treeReader) node(depth int) any {
	kind := r.byte() % 11
	if depth > 4 && kind < 4 {
		kind += 4
	}
	count := func() int {
		c := int(r.byte())
		if c >= 250 {
			c = (c - 249) * 150
		}
		return c
	}
	switch kind {
	case 0:
		m := map[string]any{}
		for range count() % 6 {
			m[r.str()] = r.node(depth + 1)
		}
		return m
	case 1:
		l := make([]any, count()%40)
		for i := range l {
			l[i] = r.node(depth + 1)
		}
		return l
	case 2:
		var ts unixTimes
		if r.byte()%2 == 0 {
			ts = unixTimes{}
		}
		for range count() {
			ts = append(ts, int64(r.u64()>>(r.byte()%64)))
		}
		return ts
	case 3:
		var vs []float64
		if r.byte()%2 == 0 {
			vs = []float64{}
		}
		for range count() {
			vs = append(vs, math.Float64frombits(r.u64()))
		}
		return vs
	case 4:
		return r.str()
	case 5:
		return math.Float64frombits(r.u64())
	case 6:
		return r.byte()%2 == 1
	case 7:
		return time.Unix(int64(r.u64()>>(r.byte()%64)), int64(r.u64()%1e9))
	case 8:
		return nil
	case 9:
		return int(r.byte()) // not a node: null, as in the reference
	}
	return float64(int64(r.u64()) >> 30)
}

// sameValue compares decoded CBOR with the tree smithy would encode,
// floats bit for bit.
func sameValue(got, want cbor.Value) bool {
	switch w := want.(type) {
	case cbor.Map:
		g, ok := got.(cbor.Map)
		if !ok || len(g) != len(w) {
			return false
		}
		for k, e := range w {
			if ge, ok := g[k]; !ok || !sameValue(ge, e) {
				return false
			}
		}
		return true
	case cbor.List:
		g, ok := got.(cbor.List)
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range w {
			if !sameValue(g[i], w[i]) {
				return false
			}
		}
		return true
	case cbor.Float64:
		g, ok := got.(cbor.Float64)
		return ok && math.Float64bits(float64(g)) == math.Float64bits(float64(w))
	case *cbor.Tag:
		g, ok := got.(*cbor.Tag)
		return ok && g.ID == w.ID && sameValue(g.Value, w.Value)
	}
	return reflect.DeepEqual(got, want)
}

func FuzzAppendCBOR(f *testing.F) {
	// The map of a result: Id, Timestamps, Values. More seeds are in
	// testdata/fuzz/FuzzAppendCBOR.
	f.Add([]byte{0, 3, 2, 'I', 'd', 4, 2, 'q', '0', 10, 'T', 'i', 'm', 'e', 's', 't', 'a', 'm', 'p', 's', 2, 0, 2,
		0, 0, 0, 0, 0x65, 0x5c, 0x2a, 0x00, 0, 0, 0, 0, 0, 0x65, 0x5c, 0x38, 0x10, 0,
		6, 'V', 'a', 'l', 'u', 'e', 's', 3, 0, 2, 0x40, 0x59, 0, 0, 0, 0, 0, 0, 0x7f, 0xf8, 0, 0, 0, 0, 0, 1})
	// Lengths at the edges of CBOR's argument sizes; true; the largest
	// timestamp; a time with nanoseconds.
	for _, seed := range [][]byte{{4, 23}, {4, 24}, {4, 201}, {4, 255}, {1, 23}, {6, 1},
		{2, 0, 1, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0},
		{7, 0, 0, 0, 0, 0x65, 0x5c, 0x2a, 0, 0, 0, 0, 0, 0, 0x1d, 0xcd, 0x65, 0}} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tree := (&treeReader{data}).node(0)
		got := appendCBOR([]byte("prefix"), tree)
		if !bytes.HasPrefix(got, []byte("prefix")) {
			t.Fatal("the appender lost what it appended to")
		}
		got = got[len("prefix"):]
		want := refToCBOR(oldShape(tree))
		dec, err := cbor.Decode(got)
		if err != nil {
			t.Fatalf("the output does not decode: %v\n%x", err, got)
		}
		if !sameValue(dec, want) {
			t.Fatalf("decodes to %#v, want %#v", dec, want)
		}
		if n := len(cbor.Encode(want)); n != len(got) {
			t.Fatalf("%d bytes, smithy's encoder writes %d", len(got), n)
		}
		if n := cborSize(tree); n != len(got) {
			t.Fatalf("%d bytes, cborSize says %d", len(got), n)
		}
	})
}

// BenchmarkGetMetricData reads 500 series over 14 days at 3600 s, as
// gpufinops does, into a CBOR answer: ref is the reference implementation.
func BenchmarkGetMetricData(b *testing.B) {
	f, err := file.Demo()
	if err != nil {
		b.Fatal(err)
	}
	s := New(f, Options{Now: func() time.Time { return cwNow.Add(17 * time.Minute) }})
	st := s.cw()
	var queries []any
	for i := range 500 {
		se := st.all[i%len(st.all)]
		dims := []any{}
		for _, d := range se.dims {
			dims = append(dims, map[string]any{"Name": d.Name, "Value": d.Value})
		}
		queries = append(queries, map[string]any{"Id": "q" + strconv.Itoa(i), "MetricStat": map[string]any{
			"Metric": map[string]any{"Namespace": se.namespace, "MetricName": se.name, "Dimensions": dims},
			"Period": float64(3600), "Stat": "Average"}})
	}
	in := map[string]any{"MetricDataQueries": queries, "StartTime": cwNow.Add(-14 * 24 * time.Hour), "EndTime": cwNow.Add(17 * time.Minute)}
	b.Run("ref", func(b *testing.B) {
		for b.Loop() {
			out, err := refGetMetricData(s, "us-east-1", in)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(cbor.Encode(refToCBOR(out)))))
		}
	})
	b.Run("new", func(b *testing.B) {
		for b.Loop() {
			out, err := s.getMetricData("us-east-1", in)
			if err != nil {
				b.Fatal(err)
			}
			var w countingWriter
			writeCBOR(&w, out)
			b.SetBytes(int64(w.n))
		}
	})
}

// countingWriter is an http.ResponseWriter that counts the body's bytes.
type countingWriter struct {
	h http.Header
	n int
}

func (w *countingWriter) Header() http.Header {
	if w.h == nil {
		w.h = http.Header{}
	}
	return w.h
}

func (w *countingWriter) Write(b []byte) (int, error) { w.n += len(b); return len(b), nil }

func (w *countingWriter) WriteHeader(int) {}
