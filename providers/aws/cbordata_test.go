package aws

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"reflect"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// cannedAnswer is an HTTP client that answers every request with one
// response.
type cannedAnswer struct {
	status int
	header http.Header
	body   []byte
	// unsized sends no Content-Length.
	unsized bool
}

func (c cannedAnswer) Do(*http.Request) (*http.Response, error) {
	n := int64(len(c.body))
	if c.unsized {
		n = -1
	}
	return &http.Response{StatusCode: c.status, Header: c.header.Clone(), Body: io.NopCloser(bytes.NewReader(c.body)), ContentLength: n, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}, nil
}

// getMetricData calls GetMetricData through a client sending with a, with
// the hand decoder (fast) or the SDK's own.
func getMetricData(a cloudwatch.HTTPClient, fast bool) (*cloudwatch.GetMetricDataOutput, error) {
	opts := []func(*cloudwatch.Options){}
	if fast {
		opts = append(opts, withMetricDataDecoder)
	}
	c := cloudwatch.New(cloudwatch.Options{
		Region:           "us-east-1",
		BaseEndpoint:     aws.String("http://cloudwatch.test"),
		Credentials:      credentials.NewStaticCredentialsProvider("test", "test", ""),
		HTTPClient:       a,
		RetryMaxAttempts: 1,
	}, opts...)
	return c.GetMetricData(context.Background(), oneQuery)
}

// oneQuery is a valid GetMetricData request.
var oneQuery = &cloudwatch.GetMetricDataInput{
	MetricDataQueries: []cwtypes.MetricDataQuery{{Id: aws.String("q"), Expression: aws.String("1")}},
	StartTime:         aws.Time(time.Unix(0, 0)),
	EndTime:           aws.Time(time.Unix(3600, 0)),
}

// canonMetricData is an answer in a form reflect.DeepEqual compares fully:
// values by their bits (NaN included), and the SDK metadata the adapter
// and the retryer look at.
type canonMetricData struct {
	Messages  []cwtypes.MessageData
	Results   []cwtypes.MetricDataResult
	Bits      [][]uint64
	NextToken *string
	RequestID string
	HasID     bool
}

func canonOf(o *cloudwatch.GetMetricDataOutput) canonMetricData {
	c := canonMetricData{Messages: o.Messages, NextToken: o.NextToken}
	c.RequestID, c.HasID = awsmiddleware.GetRequestIDMetadata(o.ResultMetadata)
	if o.MetricDataResults != nil {
		c.Results = make([]cwtypes.MetricDataResult, len(o.MetricDataResults))
		c.Bits = make([][]uint64, len(o.MetricDataResults))
	}
	for i, r := range o.MetricDataResults {
		if r.Values != nil {
			c.Bits[i] = make([]uint64, len(r.Values))
			for k, v := range r.Values {
				c.Bits[i][k] = math.Float64bits(v)
			}
		}
		r.Values = nil
		c.Results[i] = r
	}
	return c
}

// checkMetricData fails when the client with the hand decoder and the
// SDK's own answer a differently (output or error); it reports whether the
// hand decoder took the answer.
func checkMetricData(t *testing.T, a cannedAnswer) bool {
	t.Helper()
	want, wantErr := getMetricData(a, false)
	got, gotErr := getMetricData(a, true)
	if (wantErr == nil) != (gotErr == nil) || wantErr != nil && wantErr.Error() != gotErr.Error() {
		t.Fatalf("%x: error %v, the SDK's %v", a.body, gotErr, wantErr)
	}
	if wantErr == nil && !reflect.DeepEqual(canonOf(got), canonOf(want)) {
		t.Fatalf("%x:\n got %+v\nwant %+v", a.body, canonOf(got), canonOf(want))
	}
	var out cloudwatch.GetMetricDataOutput
	return decodeMetricData(a.body, &out)
}

// ok200 is a successful answer with body b, as CloudWatch sends it.
func ok200(b []byte) cannedAnswer {
	return cannedAnswer{status: 200, body: b, header: http.Header{
		"Smithy-Protocol":  {"rpc-v2-cbor"},
		"Content-Type":     {"application/cbor"},
		"X-Amzn-Requestid": {"5f0c7c2e-0000-4000-8000-000000000001"},
	}}
}

// cborWriter writes CBOR for the tests, in the encodings a valid encoder
// may choose (arguments wider than needed; with odd set, indefinite
// lengths and other things the hand decoder leaves to the SDK).
type cborWriter struct {
	b   []byte
	rng *rand.Rand
	odd bool
}

func (w *cborWriter) head(major byte, n uint64) {
	width := 0
	switch {
	case n < 24:
	case n <= math.MaxUint8:
		width = 1
	case n <= math.MaxUint16:
		width = 2
	case n <= math.MaxUint32:
		width = 3
	default:
		width = 4
	}
	if w.rng.IntN(8) == 0 {
		width = max(width, 1+w.rng.IntN(4)) // not the shortest form
	}
	if width == 0 {
		w.b = append(w.b, major<<5|byte(n))
		return
	}
	w.b = append(w.b, major<<5|byte(23+width))
	switch width {
	case 1:
		w.b = append(w.b, byte(n))
	case 2:
		w.b = binary.BigEndian.AppendUint16(w.b, uint16(n))
	case 3:
		w.b = binary.BigEndian.AppendUint32(w.b, uint32(n))
	default:
		w.b = binary.BigEndian.AppendUint64(w.b, n)
	}
}

// container opens an array or map of n entries; indefinite says whether
// it must be closed with w.end.
func (w *cborWriter) container(major byte, n int) (indefinite bool) {
	if w.odd && w.rng.IntN(12) == 0 {
		w.b = append(w.b, major<<5|31)
		return true
	}
	w.head(major, uint64(n))
	return false
}

func (w *cborWriter) end(indefinite bool) {
	if indefinite {
		w.b = append(w.b, 0xff)
	}
}

func (w *cborWriter) text(s string) {
	if w.odd && w.rng.IntN(20) == 0 {
		w.b = append(w.b, 0x7f) // in chunks
		for len(s) > 0 {
			k := w.rng.IntN(len(s) + 1)
			w.head(cborText, uint64(k))
			w.b = append(w.b, s[:k]...)
			s = s[k:]
		}
		w.b = append(w.b, 0xff)
		return
	}
	w.head(cborText, uint64(len(s)))
	w.b = append(w.b, s...)
}

// number writes v as a float64, or where the value allows as a float32,
// float16 or integer.
func (w *cborWriter) number(v float64) {
	switch w.rng.IntN(6) {
	case 0:
		if f := float32(v); float64(f) == v || math.IsNaN(v) {
			w.b = append(w.b, cborFloat32)
			w.b = binary.BigEndian.AppendUint32(w.b, math.Float32bits(f))
			return
		}
	case 1:
		w.b = append(w.b, cborFloat16)
		w.b = binary.BigEndian.AppendUint16(w.b, uint16(w.rng.Uint32()))
		return
	case 2:
		if v >= 0 && v < 1<<53 && v == math.Trunc(v) {
			w.head(cborUint, uint64(v))
			return
		}
		if v < 0 && v > -1<<53 && v == math.Trunc(v) {
			w.head(cborNegInt, uint64(-1-v))
			return
		}
	}
	w.b = append(w.b, cborFloat64)
	w.b = binary.BigEndian.AppendUint64(w.b, math.Float64bits(v))
}

var oddFloats = []float64{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 1e300, -1e300, math.MaxFloat64, math.SmallestNonzeroFloat64, 9.3e18, -9.3e18, math.Float64frombits(0x7ff0000000000001)}

func (w *cborWriter) value() {
	switch w.rng.IntN(30) {
	case 0:
		w.head(cborUint, w.rng.Uint64())
		return
	case 1:
		w.head(cborNegInt, w.rng.Uint64())
		return
	}
	v := math.Round(w.rng.Float64()*1e4) / 100
	if w.rng.IntN(10) == 0 {
		v = oddFloats[w.rng.IntN(len(oddFloats))]
	}
	w.number(v)
}

func (w *cborWriter) timestamp() {
	tag := uint64(1)
	if w.odd && w.rng.IntN(30) == 0 {
		tag = uint64(w.rng.IntN(3))
	}
	w.head(cborTag, tag)
	secs := 1795000000 + int64(w.rng.IntN(1000))*3600
	switch w.rng.IntN(8) {
	case 0:
		w.head(cborUint, uint64(secs))
	case 1:
		w.head(cborNegInt, uint64(w.rng.IntN(1e9)))
	case 2:
		w.number(float64(secs) + float64(w.rng.IntN(1000))/1000)
	case 3:
		w.number(oddFloats[w.rng.IntN(len(oddFloats))])
	case 4:
		if w.odd {
			w.head(cborUint+byte(w.rng.IntN(2)), w.rng.Uint64()) // past int64 half the time
			return
		}
		fallthrough
	default:
		w.number(float64(secs))
	}
}

// maybeNull writes a null or undefined now and then, in place of an item.
func (w *cborWriter) maybeNull() bool {
	if w.rng.IntN(25) == 0 {
		w.b = append(w.b, []byte{cborNull, cborUndefined}[w.rng.IntN(2)])
		return true
	}
	return false
}

// odds writes, with odd set, an item the hand decoder does not take.
func (w *cborWriter) odds() bool {
	if !w.odd || w.rng.IntN(40) != 0 {
		return false
	}
	switch w.rng.IntN(5) {
	case 0:
		w.b = append(w.b, 0xf5) // true
	case 1:
		w.b = append(w.b, 0x42, 'h', 'i') // a byte string
	case 2:
		w.b = append(w.b, 0xa0) // an empty map
	case 3:
		w.b = append(w.b, 0x1c) // a reserved argument size
	default:
		w.b = append(w.b, 0x80) // an empty array
	}
	return true
}

// members writes a map of the named members in random order, some
// repeated or left out, and with odd set an unknown one.
func (w *cborWriter) members(names []string, member func(string)) {
	var keys []string
	for _, k := range names {
		if w.rng.IntN(6) > 0 {
			keys = append(keys, k)
		}
		if w.rng.IntN(20) == 0 {
			keys = append(keys, k)
		}
	}
	if w.odd && w.rng.IntN(10) == 0 {
		keys = append(keys, "Unknown")
	}
	w.rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	ind := w.container(cborMap, len(keys))
	for _, k := range keys {
		w.text(k)
		if w.maybeNull() || w.odds() {
			continue
		}
		if k == "Unknown" {
			w.value()
			continue
		}
		member(k)
	}
	w.end(ind)
}

func (w *cborWriter) list(n int, item func()) {
	ind := w.container(cborArray, n)
	for range n {
		if w.maybeNull() || w.odds() {
			continue
		}
		item()
	}
	w.end(ind)
}

var statusCodes = []string{"Complete", "PartialData", "InternalError", "Forbidden", "", "caf\xe9"}

func (w *cborWriter) messages() {
	w.list(w.rng.IntN(3), func() {
		w.members([]string{"Code", "Value"}, func(string) { w.text(statusCodes[w.rng.IntN(len(statusCodes))]) })
	})
}

// answer writes a GetMetricData answer of up to n results.
func (w *cborWriter) answer(n int) []byte {
	w.members([]string{"MetricDataResults", "NextToken", "Messages"}, func(k string) {
		switch k {
		case "MetricDataResults":
			w.list(w.rng.IntN(n+1), func() {
				points := w.rng.IntN(30)
				w.members([]string{"Id", "Label", "StatusCode", "Timestamps", "Values", "Messages"}, func(k string) {
					switch k {
					case "Id", "Label":
						w.text(fmt.Sprintf("g%d_%d", w.rng.IntN(500), w.rng.IntN(9)))
					case "StatusCode":
						w.text(statusCodes[w.rng.IntN(len(statusCodes))])
					case "Timestamps":
						w.list(points, w.timestamp)
					case "Values":
						w.list(points, w.value)
					case "Messages":
						w.messages()
					}
				})
			})
		case "NextToken":
			w.text(fmt.Sprint(w.rng.Uint64()))
		case "Messages":
			w.messages()
		}
	})
	return w.b
}

func randomMetricData(rng *rand.Rand, odd bool) []byte {
	w := &cborWriter{rng: rng, odd: odd}
	b := w.answer(6)
	if odd && rng.IntN(8) == 0 {
		b = b[:rng.IntN(len(b)+1)] // cut short
	}
	if rng.IntN(30) == 0 {
		b = append(b, 0x00, 0xff) // after the answer, which the SDK ignores
	}
	return b
}

// TestMetricDataMatchesSDK: on random answers the client with the hand
// decoder answers exactly as the SDK's decoder does, and answers in the
// encodings CloudWatch may choose (any argument width, nulls, repeated
// members, every float size, integer timestamps) take the hand path.
func TestMetricDataMatchesSDK(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for i := 0; i < 2000; i++ {
		b := randomMetricData(rng, false)
		if !checkMetricData(t, ok200(b)) {
			t.Fatalf("%x: a plain answer left to the SDK", b)
		}
	}
	fast := 0
	for i := 0; i < 2000; i++ {
		if checkMetricData(t, ok200(randomMetricData(rng, true))) {
			fast++
		}
	}
	if fast < 200 || fast > 1900 {
		t.Errorf("%d of 2000 answers with odd items took the hand path", fast)
	}
}

// TestMetricDataHalfFloats: every float16 value (NaNs too) is widened as
// the SDK widens it.
func TestMetricDataHalfFloats(t *testing.T) {
	w := &cborWriter{rng: rand.New(rand.NewPCG(1, 2))}
	w.b = append(w.b, 0xa1)
	w.text("MetricDataResults")
	w.b = append(w.b, 0x81, 0xa1)
	w.text("Values")
	w.b = append(w.b, 0x9a, 0, 1, 0, 0) // an array of 65,536
	for h := range 1 << 16 {
		w.b = append(w.b, cborFloat16)
		w.b = binary.BigEndian.AppendUint16(w.b, uint16(h))
	}
	if !checkMetricData(t, ok200(w.b)) {
		t.Fatal("float16 values left to the SDK")
	}
}

// TestMetricDataFallback: what the hand decoder does not take (errors,
// other protocols, unsized or failing bodies) reaches the SDK's decoder
// unchanged.
func TestMetricDataFallback(t *testing.T) {
	plain := randomMetricData(rand.New(rand.NewPCG(3, 3)), false)
	for name, a := range map[string]cannedAnswer{
		"throttled":   {status: 400, header: http.Header{"Smithy-Protocol": {"rpc-v2-cbor"}}, body: []byte("\xa2f__typejThrottlinggmessagemRate exceeded")},
		"json":        {status: 200, header: http.Header{"Smithy-Protocol": {"rpc-v2-json"}}, body: plain},
		"no protocol": {status: 200, header: http.Header{}, body: plain},
		"unsized":     {status: 200, header: http.Header{}, body: plain, unsized: true},
		"empty":       ok200(nil),
		"null":        ok200([]byte{cborNull}),
		"indefinite":  ok200([]byte("\xbfiNextTokenat\xff")),
		"202":         {status: 202, header: http.Header{}, body: plain},
	} {
		t.Run(name, func(t *testing.T) { checkMetricData(t, a) })
	}
	if _, err := getMetricData(ok200([]byte{cborNull}), true); err == nil {
		t.Error("a null answer decoded")
	}
}

// TestReadBodyError: a body that fails part way gives the SDK's error.
func TestReadBodyError(t *testing.T) {
	a := ok200(randomMetricData(rand.New(rand.NewPCG(5, 5)), false))
	want, wantErr := getMetricData(failingBody{a}, false)
	got, gotErr := getMetricData(failingBody{a}, true)
	if wantErr == nil || gotErr == nil || wantErr.Error() != gotErr.Error() || want != nil || got != nil {
		t.Errorf("error %v, the SDK's %v", gotErr, wantErr)
	}
}

// failingBody sends half the answer, then fails.
type failingBody struct{ cannedAnswer }

func (f failingBody) Do(r *http.Request) (*http.Response, error) {
	resp, _ := f.cannedAnswer.Do(r)
	resp.Body = io.NopCloser(io.MultiReader(bytes.NewReader(f.body[:len(f.body)/2]), errReader{io.ErrUnexpectedEOF}))
	return resp, nil
}

// schemaCatcher is a protocol that remembers the operation schema it is
// given.
type schemaCatcher struct {
	smithyhttp.ClientProtocol
	schema **smithy.OperationSchema
}

func (c schemaCatcher) DeserializeResponse(ctx context.Context, schema *smithy.OperationSchema, types *smithy.TypeRegistry, resp *smithyhttp.Response, out smithy.Deserializable) error {
	*c.schema = schema
	return c.ClientProtocol.DeserializeResponse(ctx, schema, types, resp, out)
}

// sdkProtocol is the SDK's CloudWatch protocol and GetMetricData's
// operation schema, taken from a client.
var sdkProtocol = sync.OnceValues(func() (smithyhttp.ClientProtocol, *smithy.OperationSchema) {
	var proto smithyhttp.ClientProtocol
	var schema *smithy.OperationSchema
	c := cloudwatch.New(cloudwatch.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String("http://cloudwatch.test"),
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
		HTTPClient:   ok200([]byte{0xa0}),
	}, func(o *cloudwatch.Options) {
		proto = o.Protocol
		o.Protocol = schemaCatcher{o.Protocol, &schema}
	})
	c.GetMetricData(context.Background(), oneQuery)
	return proto, schema
})

// checkProtocols is checkMetricData without the client around the
// protocols, for speed: metricDataProtocol and the SDK's protocol decode b
// into equal outputs or fail with the same error.
func checkProtocols(t *testing.T, b []byte) {
	t.Helper()
	proto, schema := sdkProtocol()
	if schema == nil {
		t.Fatal("no GetMetricData schema")
	}
	decode := func(p smithyhttp.ClientProtocol) (*cloudwatch.GetMetricDataOutput, error) {
		resp, _ := ok200(b).Do(nil)
		var out cloudwatch.GetMetricDataOutput
		err := p.DeserializeResponse(context.Background(), schema, cloudwatch.TypeRegistry, &smithyhttp.Response{Response: resp}, &out)
		return &out, err
	}
	want, wantErr := decode(proto)
	got, gotErr := decode(metricDataProtocol{proto})
	if (wantErr == nil) != (gotErr == nil) || wantErr != nil && wantErr.Error() != gotErr.Error() {
		t.Fatalf("%x: error %v, the SDK's %v", b, gotErr, wantErr)
	}
	if !reflect.DeepEqual(canonOf(got), canonOf(want)) {
		t.Fatalf("%x:\n got %+v\nwant %+v", b, canonOf(got), canonOf(want))
	}
}

// FuzzMetricData: for any answer, the hand decoder's protocol answers
// exactly as the SDK's protocol does; now and then the whole client is
// compared too.
func FuzzMetricData(f *testing.F) {
	rng := rand.New(rand.NewPCG(2, 9))
	for i := 0; i < 8; i++ {
		f.Add(randomMetricData(rng, i%2 == 1))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkProtocols(t, b)
		if len(b)%16 == 0 {
			checkMetricData(t, ok200(b))
		}
	})
}

// BenchmarkMetricDataDecode decodes a full answer (300 results of 336
// hourly datapoints, as the simulator sends them, without a
// Content-Length) with the SDK's protocol and with metricDataProtocol.
func BenchmarkMetricDataDecode(b *testing.B) {
	w := &cborWriter{rng: rand.New(rand.NewPCG(1, 1))}
	w.b = append(w.b, 0xa2)
	w.text("Messages")
	w.b = append(w.b, 0x80)
	w.text("MetricDataResults")
	w.head(cborArray, 300)
	for i := range 300 {
		w.b = append(w.b, 0xa5)
		for _, k := range []string{"Id", "Label", "StatusCode"} {
			w.text(k)
			w.text(fmt.Sprintf("g%d_0", i))
		}
		w.text("Timestamps")
		w.head(cborArray, 336)
		for k := range 336 {
			w.b = append(w.b, 0xc1, cborFloat64)
			w.b = binary.BigEndian.AppendUint64(w.b, math.Float64bits(float64(1795000000+3600*k)))
		}
		w.text("Values")
		w.head(cborArray, 336)
		for range 336 {
			w.b = append(w.b, cborFloat64)
			w.b = binary.BigEndian.AppendUint64(w.b, math.Float64bits(w.rng.Float64()*100))
		}
	}
	body := w.b
	proto, schema := sdkProtocol()
	for _, bc := range []struct {
		name  string
		proto smithyhttp.ClientProtocol
	}{{"sdk", proto}, {"hand", metricDataProtocol{proto}}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				a := ok200(body)
				a.unsized = true
				resp, _ := a.Do(nil)
				var out cloudwatch.GetMetricDataOutput
				if err := bc.proto.DeserializeResponse(context.Background(), schema, cloudwatch.TypeRegistry, &smithyhttp.Response{Response: resp}, &out); err != nil || len(out.MetricDataResults) != 300 {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestMetricDataShortLists: lists longer than half what follows them (a
// null is one byte, a timestamp at least two) and lists cut from a shared
// array decode as the SDK's.
func TestMetricDataShortLists(t *testing.T) {
	for _, n := range []int{1, 2, 3, 30, 300} {
		w := &cborWriter{rng: rand.New(rand.NewPCG(uint64(n), 0))}
		nulls := func(key string, n int) {
			w.text(key)
			w.head(cborArray, uint64(n))
			for range n {
				w.b = append(w.b, cborNull)
			}
		}
		w.b = append(w.b, 0xa1)
		w.text("MetricDataResults")
		w.b = append(w.b, 0x82, 0xa2)
		w.text("Timestamps")
		w.list(1, w.timestamp)
		nulls("Values", 1)
		w.b = append(w.b, 0xa1)
		nulls("Timestamps", n) // the answer's last bytes
		if !checkMetricData(t, ok200(w.b)) {
			t.Errorf("%d nulls: left to the SDK", n)
		}
	}
}

// TestReadBody: any body, read in pieces of any size into a buffer of any
// capacity, comes out whole.
func TestReadBody(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	for range 200 {
		body := make([]byte, rng.IntN(200000))
		for i := range body {
			body[i] = byte(rng.Uint32())
		}
		var r io.Reader = bytes.NewReader(body)
		switch rng.IntN(3) {
		case 0:
			r = iotest.OneByteReader(r)
		case 1:
			r = iotest.HalfReader(r)
		}
		k := rng.IntN(3)
		got, err := readBody(r, make([]byte, k, k+rng.IntN(1000)))
		if want := append(make([]byte, k), body...); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%d bytes after %d: read %d, %v", len(body), k, len(got), err)
		}
	}
}
