package sim

// A CBOR writer for CloudWatch's answer tree that appends straight to a
// byte slice. It writes what smithy's encoder writes for the cbor.Value tree
// of the same answer (definite lengths, the shortest argument, floats as
// float64, times as tag 1 over float64 epoch seconds, anything else as
// null), with map keys in sorted order where smithy's follow Go's map order.

import (
	"encoding/binary"
	"math"
	"net/http"
	"slices"
	"sync"
	"time"
)

// CBOR major types and simple values (RFC 8949).
const (
	cborString = 3 << 5
	cborList   = 4 << 5
	cborMap    = 5 << 5
	cborFalse  = 0xf4
	cborTrue   = 0xf5
	cborNull   = 0xf6
	cborFloat  = 0xfb
	cborTime   = 0xc1 // tag 1: epoch seconds
)

// appendCBORHead appends a major type with its argument in the shortest
// form.
func appendCBORHead(b []byte, major byte, n uint64) []byte {
	switch {
	case n < 24:
		return append(b, major|byte(n))
	case n < 1<<8:
		return append(b, major|24, byte(n))
	case n < 1<<16:
		return binary.BigEndian.AppendUint16(append(b, major|25), uint16(n))
	case n < 1<<32:
		return binary.BigEndian.AppendUint32(append(b, major|26), uint32(n))
	}
	return binary.BigEndian.AppendUint64(append(b, major|27), n)
}

func appendCBORFloat(b []byte, f float64) []byte {
	return binary.BigEndian.AppendUint64(append(b, cborFloat), math.Float64bits(f))
}

func appendCBORString(b []byte, s string) []byte {
	return append(appendCBORHead(b, cborString, uint64(len(s))), s...)
}

// cborHeadSize is the size of a head with argument n.
func cborHeadSize(n int) int {
	switch {
	case n < 24:
		return 1
	case n < 1<<8:
		return 2
	case n < 1<<16:
		return 3
	case n < 1<<32:
		return 5
	}
	return 9
}

// cborSize is the size of appendCBOR's encoding of v.
func cborSize(v any) int {
	switch x := v.(type) {
	case map[string]any:
		n := cborHeadSize(len(x))
		for k, e := range x {
			n += cborHeadSize(len(k)) + len(k) + cborSize(e)
		}
		return n
	case []any:
		n := cborHeadSize(len(x))
		for _, e := range x {
			n += cborSize(e)
		}
		return n
	case unixTimes:
		return cborHeadSize(len(x)) + 10*len(x)
	case []float64:
		return cborHeadSize(len(x)) + 9*len(x)
	case string:
		return cborHeadSize(len(x)) + len(x)
	case float64:
		return 9
	case time.Time:
		return 10
	}
	return 1
}

// appendCBOR appends a node of the answer tree.
func appendCBOR(b []byte, v any) []byte {
	switch x := v.(type) {
	case map[string]any:
		b = appendCBORHead(b, cborMap, uint64(len(x)))
		var buf [8]string
		keys := buf[:0]
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			b = appendCBOR(appendCBORString(b, k), x[k])
		}
	case []any:
		b = appendCBORHead(b, cborList, uint64(len(x)))
		for _, e := range x {
			b = appendCBOR(b, e)
		}
	case unixTimes:
		b = appendCBORHead(b, cborList, uint64(len(x)))
		for _, s := range x {
			b = appendCBORFloat(append(b, cborTime), unixSecondsFloat(s))
		}
	case []float64:
		b = appendCBORHead(b, cborList, uint64(len(x)))
		for _, f := range x {
			b = appendCBORFloat(b, f)
		}
	case string:
		b = appendCBORString(b, x)
	case float64:
		b = appendCBORFloat(b, x)
	case bool:
		if x {
			return append(b, cborTrue)
		}
		return append(b, cborFalse)
	case time.Time:
		b = appendCBORFloat(append(b, cborTime), epochSeconds(x))
	default:
		b = append(b, cborNull)
	}
	return b
}

// cborBuffers keeps answer buffers between requests; one grown past
// maxPooledCBOR is left to the collector.
var cborBuffers = sync.Pool{New: func() any { return new([]byte) }}

const maxPooledCBOR = 64 << 20

// writeCBOR writes the tree as the body of a CBOR answer.
func writeCBOR(w http.ResponseWriter, out map[string]any) {
	bp := cborBuffers.Get().(*[]byte)
	b := appendCBOR(slices.Grow((*bp)[:0], cborSize(out)), out)
	w.Write(b)
	if cap(b) <= maxPooledCBOR {
		*bp = b
		cborBuffers.Put(bp)
	}
}
