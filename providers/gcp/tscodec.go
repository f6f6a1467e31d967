package gcp

// A faster decoding of ListTimeSeries answers. A page is up to 100,000
// points, and the generated code allocates six objects a point (the Point,
// its TimeInterval, two Timestamps, the TypedValue and its oneof wrapper):
// at 10,000 instances that was 4.4 GB and the scan's largest CPU cost. The
// codec below decodes the points of a page into a few arrays of those same
// messages, so the SDK's iterator and every caller see the very messages
// proto.Unmarshal gives; everything but the points (labels, metadata,
// tokens, errors) is still decoded by proto.Unmarshal, and so is any point
// with a field this path does not know (a distribution, say), or the whole
// answer when its bytes do not parse. FuzzTimeSeriesCodec checks that the
// result is proto.Equal to proto.Unmarshal's.
//
// A reader that needs only each point's end second and value (readMetric)
// sets pageSlabs.compact: a series' points then become 16-byte
// compactPoints beside the series instead of six messages (some 300 bytes)
// a point, and a page of 100,000 points holds 1.6 MB instead of 30 MB. A
// series with a point this path does not know keeps its messages.

import (
	"errors"
	"math"

	"cloud.google.com/go/monitoring/apiv3/v2/monitoringpb"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	// The standard proto codec, registered by its package's init.
	_ "google.golang.org/grpc/encoding/proto"
)

// listTimeSeriesMethod is the gRPC method the codec is used for.
const listTimeSeriesMethod = "/google.monitoring.v3.MetricService/ListTimeSeries"

// timeSeriesCodec is gRPC's proto codec but for ListTimeSeries answers.
// With reuse set (one codec per ListTimeSeries iterator) a page's points
// are decoded into the arrays of the page before, so the messages of a
// page are valid only until the next page is read: its reader must take
// what it needs from each series before asking for more.
type timeSeriesCodec struct{ reuse *pageSlabs }

// Name is the standard codec's, so the call's content type is unchanged.
func (timeSeriesCodec) Name() string { return "proto" }

// Marshal encodes requests as the standard codec does.
func (timeSeriesCodec) Marshal(v any) (mem.BufferSlice, error) {
	return encoding.GetCodecV2("proto").Marshal(v)
}

// Unmarshal decodes a ListTimeSeriesResponse with decodeTimeSeriesPage and
// anything else with the standard codec.
func (c timeSeriesCodec) Unmarshal(data mem.BufferSlice, v any) error {
	resp, ok := v.(*monitoringpb.ListTimeSeriesResponse)
	if !ok {
		return encoding.GetCodecV2("proto").Unmarshal(data, v)
	}
	buf := data.MaterializeToBuffer(mem.DefaultBufferPool())
	defer buf.Free()
	slabs := c.reuse
	if slabs == nil {
		slabs = &pageSlabs{}
	}
	slabs.reset()
	return decodeTimeSeriesPage(buf.ReadOnlyData(), resp, slabs)
}

// pointArrays are arrays of a point's messages, one element per point.
type pointArrays struct {
	points    []monitoringpb.Point
	intervals []monitoringpb.TimeInterval
	values    []monitoringpb.TypedValue
	doubles   []monitoringpb.TypedValue_DoubleValue
	ends      []timestamppb.Timestamp
	starts    []timestamppb.Timestamp
}

func makePointArrays(n int) pointArrays {
	return pointArrays{
		points:    make([]monitoringpb.Point, n),
		intervals: make([]monitoringpb.TimeInterval, n),
		values:    make([]monitoringpb.TypedValue, n),
		doubles:   make([]monitoringpb.TypedValue_DoubleValue, n),
		ends:      make([]timestamppb.Timestamp, n),
		starts:    make([]timestamppb.Timestamp, n),
	}
}

// slice is elements [a, z) of every array (capacity capped at z).
func (p pointArrays) slice(a, z int) pointArrays {
	return pointArrays{
		points: p.points[a:z:z], intervals: p.intervals[a:z:z], values: p.values[a:z:z],
		doubles: p.doubles[a:z:z], ends: p.ends[a:z:z], starts: p.starts[a:z:z],
	}
}

// clearTo zeroes the first n elements of every array.
func (p pointArrays) clearTo(n int) {
	clear(p.points[:n])
	clear(p.intervals[:n])
	clear(p.values[:n])
	clear(p.doubles[:n])
	clear(p.ends[:n])
	clear(p.starts[:n])
}

// pageSlabs are the arrays a page's points are decoded into, handed out a
// series at a time and, between pages, cleared and handed out again.
type pageSlabs struct {
	pointArrays
	used int

	// compact decodes points into pts, each series' run named in spans,
	// leaving the series' Points empty; a series with a point decodePoint
	// would not take keeps its messages and has no span.
	compact bool
	pts     []compactPoint
	spans   map[*monitoringpb.TimeSeries][2]int
}

// compactPoint is what readMetric reads of a point: its interval's end
// second and its value as pointValue gives it.
type compactPoint struct {
	end int64
	v   float64
}

// reset clears what the last page used, for the next.
func (s *pageSlabs) reset() {
	s.clearTo(s.used)
	s.used = 0
	s.pts = s.pts[:0]
	clear(s.spans)
}

// pointsOf is the series' points in compact form, or false when the page
// was not decoded so (the series' Points hold them).
func (s *pageSlabs) pointsOf(ts *monitoringpb.TimeSeries) ([]compactPoint, bool) {
	sp, ok := s.spans[ts]
	if !ok {
		return nil, false
	}
	return s.pts[sp[0]:sp[1]:sp[1]], true
}

// take hands out the arrays for a series of n points: the slabs' next n,
// or new slabs (the page's earlier series keep the old ones) when they are
// full.
func (s *pageSlabs) take(n int) *pointArena {
	if s.used+n > len(s.points) {
		s.pointArrays, s.used = makePointArrays(max(2*len(s.points), n, 1024)), 0
	}
	a, z := s.used, s.used+n
	s.used = z
	return &pointArena{pointArrays: s.slice(a, z)}
}

// errSlowPath says the fast path does not handle some bytes.
var errSlowPath = errors.New("not on the fast path")

// decodeTimeSeriesPage decodes b into resp as proto.Unmarshal would (resp is
// reset first), its points into slabs; strings and bytes are copied, never
// aliased to b.
func decodeTimeSeriesPage(b []byte, resp *monitoringpb.ListTimeSeriesResponse, slabs *pageSlabs) error {
	resp.Reset()
	if fastTimeSeriesPage(b, resp, slabs) == nil {
		return nil
	}
	resp.Reset()
	return proto.Unmarshal(b, resp)
}

func fastTimeSeriesPage(b []byte, resp *monitoringpb.ListTimeSeriesResponse, slabs *pageSlabs) error {
	var rest []byte
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return errSlowPath
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return errSlowPath
		}
		if num == 1 && typ == protowire.BytesType { // time_series
			v, _ := protowire.ConsumeBytes(b[n:])
			ts, err := decodeTimeSeries(v, slabs)
			if err != nil {
				return err
			}
			resp.TimeSeries = append(resp.TimeSeries, ts)
		} else {
			rest = append(rest, b[:n+m]...)
		}
		b = b[n+m:]
	}
	if len(rest) == 0 {
		return nil
	}
	return proto.UnmarshalOptions{Merge: true}.Unmarshal(rest, resp)
}

// decodeTimeSeries decodes one TimeSeries: its points (field 5) here, into
// arrays from slabs, the rest with proto.Unmarshal.
func decodeTimeSeries(b []byte, slabs *pageSlabs) (*monitoringpb.TimeSeries, error) {
	var rest []byte
	n := 0
	for p := b; len(p) > 0; {
		num, typ, k := protowire.ConsumeTag(p)
		if k < 0 {
			return nil, errSlowPath
		}
		m := protowire.ConsumeFieldValue(num, typ, p[k:])
		if m < 0 {
			return nil, errSlowPath
		}
		if num == 5 && typ == protowire.BytesType {
			n++
		} else {
			rest = append(rest, p[:k+m]...)
		}
		p = p[k+m:]
	}
	ts := new(monitoringpb.TimeSeries)
	if len(rest) > 0 {
		if err := proto.Unmarshal(rest, ts); err != nil {
			return nil, errSlowPath
		}
	}
	if n == 0 {
		return ts, nil
	}
	if slabs.compact && slabs.decodeCompact(b, ts) {
		return ts, nil
	}
	a := slabs.take(n)
	ts.Points = make([]*monitoringpb.Point, 0, n)
	for p := b; len(p) > 0; {
		num, typ, k := protowire.ConsumeTag(p)
		m := protowire.ConsumeFieldValue(num, typ, p[k:])
		if num == 5 && typ == protowire.BytesType {
			v, _ := protowire.ConsumeBytes(p[k:])
			pt := a.point()
			if a.decodePoint(v, pt) != nil {
				a.undo()
				pt = new(monitoringpb.Point)
				if err := proto.Unmarshal(v, pt); err != nil {
					return nil, errSlowPath
				}
			}
			ts.Points = append(ts.Points, pt)
		}
		p = p[k+m:]
	}
	return ts, nil
}

// pointArena hands out the messages of a series' points from its part of
// the page's slabs.
type pointArena struct {
	pointArrays
	n int
	// the fields the point being decoded has set
	usedInterval, usedValue, usedEnd, usedStart bool
}

// point returns the next point's message; undo gives it back when the
// point is decoded by proto.Unmarshal instead.
func (a *pointArena) point() *monitoringpb.Point {
	a.usedInterval, a.usedValue, a.usedEnd, a.usedStart = false, false, false, false
	return &a.points[a.n]
}

func (a *pointArena) undo() {
	// The arrays' slots for this point are overwritten by the next one:
	// clear what the failed attempt set.
	i := a.n
	a.points[i].Reset()
	a.intervals[i].Reset()
	a.values[i].Reset()
	a.doubles[i] = monitoringpb.TypedValue_DoubleValue{}
	a.ends[i].Reset()
	a.starts[i].Reset()
}

// nextMessageField splits off b's first field, which must be
// length-delimited (an embedded message): its number and bytes, and what
// follows it; anything else is errSlowPath.
func nextMessageField(b []byte) (num protowire.Number, v, rest []byte, err error) {
	num, typ, k := protowire.ConsumeTag(b)
	if k < 0 || typ != protowire.BytesType {
		return 0, nil, nil, errSlowPath
	}
	v, m := protowire.ConsumeBytes(b[k:])
	if m < 0 {
		return 0, nil, nil, errSlowPath
	}
	return num, v, b[k+m:], nil
}

// decodePoint decodes a Point of an interval (end and start Timestamps)
// and a double or int64 value; anything else is errSlowPath.
func (a *pointArena) decodePoint(b []byte, pt *monitoringpb.Point) error {
	i := a.n
	for len(b) > 0 {
		num, v, rest, err := nextMessageField(b)
		if err != nil {
			return err
		}
		switch {
		case num == 1 && !a.usedInterval: // interval
			a.usedInterval = true
			pt.Interval = &a.intervals[i]
			if err := a.decodeInterval(v, pt.Interval); err != nil {
				return err
			}
		case num == 2 && !a.usedValue: // value
			a.usedValue = true
			pt.Value = &a.values[i]
			if err := a.decodeValue(v, pt.Value); err != nil {
				return err
			}
		default:
			return errSlowPath
		}
		b = rest
	}
	a.n++
	return nil
}

// decodeInterval reads end_time (2) and start_time (1).
func (a *pointArena) decodeInterval(b []byte, iv *monitoringpb.TimeInterval) error {
	i := a.n
	for len(b) > 0 {
		num, v, rest, err := nextMessageField(b)
		if err != nil {
			return err
		}
		var ts *timestamppb.Timestamp
		switch {
		case num == 2 && !a.usedEnd:
			a.usedEnd = true
			ts = &a.ends[i]
			iv.EndTime = ts
		case num == 1 && !a.usedStart:
			a.usedStart = true
			ts = &a.starts[i]
			iv.StartTime = ts
		default:
			return errSlowPath
		}
		if err := decodeTimestamp(v, ts); err != nil {
			return err
		}
		b = rest
	}
	return nil
}

// decodeTimestamp reads seconds (1) and nanos (2), each at most once.
func decodeTimestamp(b []byte, ts *timestamppb.Timestamp) error {
	var seen [3]bool
	for len(b) > 0 {
		num, typ, k := protowire.ConsumeTag(b)
		if k < 0 || typ != protowire.VarintType || num < 1 || num > 2 || seen[num] {
			return errSlowPath
		}
		seen[num] = true
		v, m := protowire.ConsumeVarint(b[k:])
		if m < 0 {
			return errSlowPath
		}
		if num == 1 {
			ts.Seconds = int64(v)
		} else {
			ts.Nanos = int32(v)
		}
		b = b[k+m:]
	}
	return nil
}

// decodeValue reads a TypedValue holding double_value (3) or int64_value
// (2), once.
func (a *pointArena) decodeValue(b []byte, tv *monitoringpb.TypedValue) error {
	num, typ, k := protowire.ConsumeTag(b)
	if k < 0 {
		return errSlowPath
	}
	switch {
	case num == 3 && typ == protowire.Fixed64Type:
		v, m := protowire.ConsumeFixed64(b[k:])
		if m < 0 || k+m != len(b) {
			return errSlowPath
		}
		d := &a.doubles[a.n]
		d.DoubleValue = math.Float64frombits(v)
		tv.Value = d
	case num == 2 && typ == protowire.VarintType:
		v, m := protowire.ConsumeVarint(b[k:])
		if m < 0 || k+m != len(b) {
			return errSlowPath
		}
		tv.Value = &monitoringpb.TypedValue_Int64Value{Int64Value: int64(v)}
	default:
		return errSlowPath
	}
	return nil
}

// decodeCompact appends the points of the series in b to s.pts and names
// their run in s.spans; false, with nothing kept, when a point has what
// decodePoint would refuse.
func (s *pageSlabs) decodeCompact(b []byte, ts *monitoringpb.TimeSeries) bool {
	start := len(s.pts)
	for p := b; len(p) > 0; {
		num, typ, k := protowire.ConsumeTag(p)
		m := protowire.ConsumeFieldValue(num, typ, p[k:])
		if num == 5 && typ == protowire.BytesType {
			v, _ := protowire.ConsumeBytes(p[k:])
			pt, err := decodeCompactPoint(v)
			if err != nil {
				s.pts = s.pts[:start]
				return false
			}
			s.pts = append(s.pts, pt)
		}
		p = p[k+m:]
	}
	if s.spans == nil {
		s.spans = map[*monitoringpb.TimeSeries][2]int{}
	}
	s.spans[ts] = [2]int{start, len(s.pts)}
	return true
}

// decodeCompactPoint reads what decodePoint reads, keeping the end second
// and the value: 0 without an end time, NaN without a value, as
// GetSeconds and pointValue read the messages.
func decodeCompactPoint(b []byte) (compactPoint, error) {
	pt := compactPoint{v: math.NaN()}
	var interval, value bool
	for len(b) > 0 {
		num, v, rest, err := nextMessageField(b)
		if err != nil {
			return pt, err
		}
		switch {
		case num == 1 && !interval:
			interval = true
			if pt.end, err = compactInterval(v); err != nil {
				return pt, err
			}
		case num == 2 && !value:
			value = true
			if pt.v, err = compactValue(v); err != nil {
				return pt, err
			}
		default:
			return pt, errSlowPath
		}
		b = rest
	}
	return pt, nil
}

// compactInterval is decodeInterval's end second.
func compactInterval(b []byte) (int64, error) {
	var end, start timestamppb.Timestamp
	var seenEnd, seenStart bool
	for len(b) > 0 {
		num, v, rest, err := nextMessageField(b)
		if err != nil {
			return 0, err
		}
		var ts *timestamppb.Timestamp
		switch {
		case num == 2 && !seenEnd:
			seenEnd, ts = true, &end
		case num == 1 && !seenStart:
			seenStart, ts = true, &start
		default:
			return 0, errSlowPath
		}
		if err := decodeTimestamp(v, ts); err != nil {
			return 0, err
		}
		b = rest
	}
	return end.Seconds, nil
}

// compactValue is decodeValue's value as pointValue reads it: NaN for an
// empty TypedValue.
func compactValue(b []byte) (float64, error) {
	if len(b) == 0 {
		return math.NaN(), nil
	}
	num, typ, k := protowire.ConsumeTag(b)
	if k < 0 {
		return 0, errSlowPath
	}
	switch {
	case num == 3 && typ == protowire.Fixed64Type:
		v, m := protowire.ConsumeFixed64(b[k:])
		if m < 0 || k+m != len(b) {
			return 0, errSlowPath
		}
		return math.Float64frombits(v), nil
	case num == 2 && typ == protowire.VarintType:
		v, m := protowire.ConsumeVarint(b[k:])
		if m < 0 || k+m != len(b) {
			return 0, errSlowPath
		}
		return float64(int64(v)), nil
	}
	return 0, errSlowPath
}
