package aws

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// rpcv2CBOR is the protocol the SDK's CloudWatch client speaks by default.
var rpcv2CBOR = smithy.ShapeID{Namespace: "smithy.protocols", Name: "rpcv2Cbor"}

// withMetricDataDecoder gives a CloudWatch client metricDataProtocol in
// place of its rpcv2Cbor protocol; a client speaking another protocol is
// left as it is.
func withMetricDataDecoder(o *cloudwatch.Options) {
	if o.Protocol != nil && o.Protocol.ID() == rpcv2CBOR {
		o.Protocol = metricDataProtocol{o.Protocol}
	}
}

// metricDataProtocol is the SDK's rpcv2Cbor protocol with GetMetricData's
// successful answers decoded by hand: an answer holds up to 100,800
// datapoints, and the SDK's generic decoder (a growing read buffer, one
// schema lookup and append per datapoint) was most of the AWS scan's own
// CPU. decodeMetricData reads the CBOR the service sends (definite lengths,
// the members it knows, timestamps as tag 1) into exactly what the SDK's
// decoder gives, and leaves anything else, errors included, to the SDK's
// protocol. FuzzMetricData compares the two.
type metricDataProtocol struct {
	smithyhttp.ClientProtocol
}

// DeserializeResponse implements smithyhttp.ClientProtocol.
func (p metricDataProtocol) DeserializeResponse(ctx context.Context, schema *smithy.OperationSchema, types *smithy.TypeRegistry, resp *smithyhttp.Response, out smithy.Deserializable) error {
	o, ok := out.(*cloudwatch.GetMetricDataOutput)
	if !ok || resp.StatusCode != http.StatusOK || schema.IsOutputEventStream() || !cborAnswer(resp.Header) {
		return p.ClientProtocol.DeserializeResponse(ctx, schema, types, resp, out)
	}
	buf := getBodyBuffer(resp.ContentLength)
	defer putBodyBuffer(buf)
	b, err := readBody(resp.Body, *buf)
	*buf = b
	var body io.Reader = bytes.NewReader(b)
	if err == nil {
		if decodeMetricData(b, o) {
			return nil
		}
	} else {
		// The SDK sees the same bytes and then the same error.
		body = io.MultiReader(body, errReader{err})
	}
	r := *resp.Response
	r.Body = io.NopCloser(body)
	return p.ClientProtocol.DeserializeResponse(ctx, schema, types, &smithyhttp.Response{Response: &r}, out)
}

// cborAnswer reports whether the headers name no protocol but Smithy RPC
// v2 CBOR.
func cborAnswer(h http.Header) bool {
	v := h.Values("Smithy-Protocol")
	return len(v) == 0 || len(v) == 1 && v[0] == "rpc-v2-cbor"
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// Answer buffers are kept for the next answers in a free list that, unlike
// a sync.Pool, outlives garbage collections (frequent while a scan decodes
// megabytes a second), and a new one is made as large as the largest
// answer yet: most answers come without a Content-Length, and a buffer
// grown anew for each was a third of the decoding's CPU. At most
// keptBodies buffers of up to maxKeptBody bytes are kept.
const (
	keptBodies  = 16
	maxKeptBody = 16 << 20
)

var (
	bodyBuffers = make(chan *[]byte, keptBodies)
	// largestBody is the size of the largest answer read, up to maxKeptBody.
	largestBody atomic.Int64
)

// getBodyBuffer returns an empty buffer with room for a body of n bytes
// and the read that finds its end; for a body of unknown size (n < 0),
// room for the largest yet, and at least 64 KiB.
func getBodyBuffer(n int64) *[]byte {
	if n < 0 || n >= maxKeptBody {
		n = largestBody.Load()
	}
	want := int(n) + 1
	select {
	case b := <-bodyBuffers:
		if cap(*b) >= want {
			*b = (*b)[:0]
			return b
		}
		putBodyBuffer(b)
	default:
	}
	b := make([]byte, 0, max(want, 64<<10))
	return &b
}

// putBodyBuffer keeps b for a later answer, unless it is too large or
// enough are kept.
func putBodyBuffer(b *[]byte) {
	n := int64(len(*b))
	if cap(*b) > maxKeptBody {
		return
	}
	for old := largestBody.Load(); n > old && !largestBody.CompareAndSwap(old, n); old = largestBody.Load() {
	}
	select {
	case bodyBuffers <- b:
	default:
	}
}

// readBody appends r up to its end (io.EOF, which lets the transport reuse
// the connection) to b.
func readBody(r io.Reader, b []byte) ([]byte, error) {
	for {
		if len(b) == cap(b) {
			// Doubling, where append grows a large slice by a quarter:
			// a buffer grown from scratch is copied about once, not four
			// times.
			nb := make([]byte, len(b), max(2*cap(b), 512))
			copy(nb, b)
			b = nb
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}

// errNotPlain ends a decode that leaves the answer to the SDK.
var errNotPlain = errors.New("not a plain GetMetricData answer")

// cborCursor reads CBOR items from p at off.
type cborCursor struct {
	p   []byte
	off int
	// times and floats are what is left of the backing arrays the lists
	// of timestamps and values are cut from.
	times  []time.Time
	floats []float64
}

// listChunk is the most elements a backing array is made for beyond the
// list at hand: one array serves many results, and at 24 bytes a
// time.Time it is a large object, spared the pointer bitmap a small one
// is given.
const listChunk = 8192

// cut returns n zero elements from the backing array *free, made anew
// (for up to room elements more) when too short. The list's capacity is
// its length, so an append to it cannot reach its neighbour's.
func cut[T any](free *[]T, n, room int) []T {
	if n == 0 {
		return []T{}
	}
	if n > len(*free) {
		*free = make([]T, n+min(listChunk, max(room, 0)))
	}
	out := (*free)[:n:n]
	*free = (*free)[n:]
	return out
}

// CBOR major types.
const (
	cborUint   = 0
	cborNegInt = 1
	cborText   = 3
	cborArray  = 4
	cborMap    = 5
	cborTag    = 6
	cborSimple = 7
)

// CBOR simple values and float sizes (major type 7).
const (
	cborNull      = 0xf6
	cborUndefined = 0xf7
	cborFloat16   = 0xf9
	cborFloat32   = 0xfa
	cborFloat64   = 0xfb
)

// head reads an item's initial byte and argument. An indefinite length or
// a reserved additional information fails.
func (c *cborCursor) head() (major byte, arg uint64, err error) {
	if c.off >= len(c.p) {
		return 0, 0, errNotPlain
	}
	ib := c.p[c.off]
	major, info := ib>>5, ib&0x1f
	if info < 24 {
		c.off++
		return major, uint64(info), nil
	}
	if info > 27 {
		return 0, 0, errNotPlain
	}
	size := 1 << (info - 24)
	if len(c.p)-c.off-1 < size {
		return 0, 0, errNotPlain
	}
	b := c.p[c.off+1 : c.off+1+size]
	c.off += 1 + size
	switch size {
	case 1:
		arg = uint64(b[0])
	case 2:
		arg = uint64(binary.BigEndian.Uint16(b))
	case 4:
		arg = uint64(binary.BigEndian.Uint32(b))
	default:
		arg = binary.BigEndian.Uint64(b)
	}
	return major, arg, nil
}

// null steps over a null or undefined, the values the SDK reads as absent.
func (c *cborCursor) null() bool {
	if c.off < len(c.p) && (c.p[c.off] == cborNull || c.p[c.off] == cborUndefined) {
		c.off++
		return true
	}
	return false
}

// count reads the head of an array or map of the major type. Each entry
// takes at least one byte (two for a map), so a count beyond what is left
// is not plain.
func (c *cborCursor) count(major byte) (int, error) {
	m, n, err := c.head()
	if err != nil || m != major {
		return 0, errNotPlain
	}
	per := uint64(1)
	if major == cborMap {
		per = 2
	}
	if n > uint64(len(c.p)-c.off)/per {
		return 0, errNotPlain
	}
	return int(n), nil
}

// text reads a definite-length text string's bytes (aliasing p).
func (c *cborCursor) text() ([]byte, error) {
	m, n, err := c.head()
	if err != nil || m != cborText || n > uint64(len(c.p)-c.off) {
		return nil, errNotPlain
	}
	b := c.p[c.off : c.off+int(n)]
	c.off += int(n)
	return b, nil
}

func (c *cborCursor) str() (*string, error) {
	b, err := c.text()
	if err != nil {
		return nil, err
	}
	s := string(b)
	return &s, nil
}

// float reads a number as the SDK's ReadFloat64 does: a float of any size,
// or an integer.
func (c *cborCursor) float() (float64, error) {
	if c.off >= len(c.p) {
		return 0, errNotPlain
	}
	switch ib := c.p[c.off]; ib {
	case cborFloat16:
		if len(c.p)-c.off < 3 {
			return 0, errNotPlain
		}
		v := halfFloat(binary.BigEndian.Uint16(c.p[c.off+1:]))
		c.off += 3
		return v, nil
	case cborFloat32:
		if len(c.p)-c.off < 5 {
			return 0, errNotPlain
		}
		v := float64(math.Float32frombits(binary.BigEndian.Uint32(c.p[c.off+1:])))
		c.off += 5
		return v, nil
	case cborFloat64:
		if len(c.p)-c.off < 9 {
			return 0, errNotPlain
		}
		v := math.Float64frombits(binary.BigEndian.Uint64(c.p[c.off+1:]))
		c.off += 9
		return v, nil
	}
	m, n, err := c.head()
	switch {
	case err != nil:
		return 0, err
	case m == cborUint:
		return float64(n), nil
	case m == cborNegInt:
		return -1 - float64(n), nil
	}
	return 0, errNotPlain
}

// halfFloat widens an IEEE 754 half-precision float, through float32 as
// the SDK does (so NaN payloads come out the same).
func halfFloat(h uint16) float64 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h & 0x3ff)
	var f float32
	switch exp {
	case 0x1f: // infinities and NaNs
		f = math.Float32frombits(sign | 0x7f800000 | frac<<13)
	case 0: // zero and subnormals: frac × 2⁻²⁴, exact in float32
		f = math.Float32frombits(sign | math.Float32bits(float32(frac)/(1<<24)))
	default:
		f = math.Float32frombits(sign | (exp+127-15)<<23 | frac<<13)
	}
	return float64(f)
}

// timestamp reads a tag-1 epoch time as the SDK's ReadTime does: whole
// seconds from an integer, milliseconds from a float.
func (c *cborCursor) timestamp() (time.Time, error) {
	m, tag, err := c.head()
	if err != nil || m != cborTag || tag != 1 || c.off >= len(c.p) {
		return time.Time{}, errNotPlain
	}
	if c.p[c.off]>>5 == cborSimple {
		f, err := c.float()
		if err != nil {
			return time.Time{}, err
		}
		return time.UnixMilli(int64(f * 1e3)), nil
	}
	m, n, err := c.head()
	switch {
	case err != nil || n > math.MaxInt64:
		return time.Time{}, errNotPlain
	case m == cborUint:
		return time.Unix(int64(n), 0), nil
	case m == cborNegInt:
		return time.Unix(-1-int64(n), 0), nil
	}
	return time.Time{}, errNotPlain
}

// decodeMetricData decodes a GetMetricData answer into out, setting the
// members the answer has, as the SDK's decoder does, and reports whether
// it could; when it could not, out is unchanged.
func decodeMetricData(p []byte, out *cloudwatch.GetMetricDataOutput) bool {
	c := cborCursor{p: p}
	var v cloudwatch.GetMetricDataOutput
	var hasMessages, hasResults, hasToken bool
	n, err := c.count(cborMap)
	for ; n > 0 && err == nil; n-- {
		var key []byte
		if key, err = c.text(); err != nil || c.null() {
			continue
		}
		switch string(key) {
		case "MetricDataResults":
			v.MetricDataResults, err = c.results()
			hasResults = true
		case "NextToken":
			v.NextToken, err = c.str()
			hasToken = true
		case "Messages":
			v.Messages, err = c.messages()
			hasMessages = true
		default:
			err = errNotPlain
		}
	}
	if err != nil {
		return false
	}
	if hasResults {
		out.MetricDataResults = v.MetricDataResults
	}
	if hasToken {
		out.NextToken = v.NextToken
	}
	if hasMessages {
		out.Messages = v.Messages
	}
	return true
}

func (c *cborCursor) results() ([]cwtypes.MetricDataResult, error) {
	n, err := c.count(cborArray)
	if err != nil {
		return nil, err
	}
	out := make([]cwtypes.MetricDataResult, n)
	for i := range out {
		if c.null() {
			continue
		}
		if err := c.result(&out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (c *cborCursor) result(r *cwtypes.MetricDataResult) error {
	n, err := c.count(cborMap)
	for ; n > 0 && err == nil; n-- {
		var key []byte
		if key, err = c.text(); err != nil || c.null() {
			continue
		}
		switch string(key) {
		case "Id":
			r.Id, err = c.str()
		case "Label":
			r.Label, err = c.str()
		case "StatusCode":
			var b []byte
			if b, err = c.text(); err == nil {
				r.StatusCode = cwtypes.StatusCode(b)
			}
		case "Timestamps":
			r.Timestamps, err = c.timestamps()
		case "Values":
			r.Values, err = c.values()
		case "Messages":
			r.Messages, err = c.messages()
		default:
			err = errNotPlain
		}
	}
	return err
}

func (c *cborCursor) timestamps() ([]time.Time, error) {
	n, err := c.count(cborArray)
	if err != nil {
		return nil, err
	}
	// A timestamp takes at least two bytes, a tag and a value.
	out := cut(&c.times, n, (len(c.p)-c.off)/2-n)
	for i := range out {
		if c.null() {
			continue
		}
		if out[i], err = c.timestamp(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (c *cborCursor) values() ([]float64, error) {
	n, err := c.count(cborArray)
	if err != nil {
		return nil, err
	}
	out := cut(&c.floats, n, len(c.p)-c.off-n)
	for i := range out {
		if c.null() {
			continue
		}
		if out[i], err = c.float(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (c *cborCursor) messages() ([]cwtypes.MessageData, error) {
	n, err := c.count(cborArray)
	if err != nil {
		return nil, err
	}
	out := make([]cwtypes.MessageData, n)
	for i := range out {
		if c.null() {
			continue
		}
		m, err := c.count(cborMap)
		for ; m > 0 && err == nil; m-- {
			var key []byte
			if key, err = c.text(); err != nil || c.null() {
				continue
			}
			switch string(key) {
			case "Code":
				out[i].Code, err = c.str()
			case "Value":
				out[i].Value, err = c.str()
			default:
				err = errNotPlain
			}
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
