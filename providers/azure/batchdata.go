package azure

import (
	"bytes"
	"encoding/json"
	"time"
)

// batchPoint is one interval of a getBatch time series.
type batchPoint struct {
	TimeStamp time.Time `json:"timeStamp"`
	Average   optFloat  `json:"average"`
	Maximum   optFloat  `json:"maximum"`
}

// batchData is a time series' intervals. Its decoder reads the array by
// hand, since an answer has hundreds of thousands of them and
// encoding/json's reflection over each object was the Azure scan's largest
// CPU cost; it keeps encoding/json's semantics (field names matched
// without regard to ASCII case, the last of a repeated key winning, other
// keys ignored, time.Time's and optFloat's own decoders for the values)
// and hands anything unusual (escapes or non-ASCII in a key) to
// encoding/json. FuzzBatchData compares the two.
type batchData []batchPoint

// UnmarshalJSON decodes the array b, which encoding/json has validated.
func (d *batchData) UnmarshalJSON(b []byte) error {
	out, ok, err := parseBatchData(b)
	if !ok {
		var plain []batchPoint
		if err := json.Unmarshal(b, &plain); err != nil {
			return err
		}
		*d = plain
		return nil
	}
	if err != nil {
		return err
	}
	*d = out
	return nil
}

// parseBatchData reads a valid JSON value: null, or an array of objects.
// ok is false when b has what the hand decoder leaves to encoding/json.
func parseBatchData(b []byte) (out batchData, ok bool, err error) {
	s := jsonCursor{b: b}
	s.space()
	if s.lit("null") {
		return nil, true, nil
	}
	if !s.next('[') {
		return nil, false, nil
	}
	out = make(batchData, 0, countElements(b))
	s.space()
	if s.next(']') {
		return out, true, nil
	}
	for {
		s.space()
		if !s.next('{') {
			return nil, false, nil // an element that is not an object
		}
		var pt batchPoint
		s.space()
		if !s.next('}') {
			for {
				s.space()
				key, plain := s.key()
				if !plain {
					return nil, false, nil
				}
				s.space()
				s.next(':')
				s.space()
				v := s.value()
				var err error
				switch {
				case foldEq(key, "timeStamp"):
					err = pt.TimeStamp.UnmarshalJSON(v)
				case foldEq(key, "average"):
					err = pt.Average.UnmarshalJSON(v)
				case foldEq(key, "maximum"):
					err = pt.Maximum.UnmarshalJSON(v)
				}
				if err != nil {
					return nil, true, err
				}
				s.space()
				if s.next('}') {
					break
				}
				s.next(',')
			}
		}
		out = append(out, pt)
		s.space()
		if s.next(']') {
			return out, true, nil
		}
		s.next(',')
	}
}

// countElements is about the number of elements of a valid JSON array
// (the commas at its top level, plus one): the capacity to decode into.
func countElements(b []byte) int {
	n, depth := 1, 0
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			i = stringEnd(b, i) - 1
		case c == '[' || c == '{':
			depth++
		case c == ']' || c == '}':
			depth--
		case c == ',' && depth == 1:
			n++
		}
	}
	return n
}

// stringEnd is the index just past the string that starts at b[i] (a
// quote), or len(b) for one left open.
func stringEnd(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// jsonCursor walks a JSON text already known to be valid.
type jsonCursor struct {
	b []byte
	i int
}

func (s *jsonCursor) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *jsonCursor) next(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

func (s *jsonCursor) lit(l string) bool {
	if bytes.HasPrefix(s.b[s.i:], []byte(l)) {
		s.i += len(l)
		return true
	}
	return false
}

// key reads an object key; plain is false for one with an escape or a
// non-ASCII byte, whose matching encoding/json does with Unicode folding.
func (s *jsonCursor) key() (key []byte, plain bool) {
	if !s.next('"') {
		return nil, false
	}
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		if c == '"' {
			key = s.b[start:s.i]
			s.i++
			return key, true
		}
		if c == '\\' || c >= 0x80 {
			return nil, false
		}
		s.i++
	}
	return nil, false
}

// foldEq reports whether the ASCII key is name, ignoring case.
func foldEq(key []byte, name string) bool {
	if len(key) != len(name) {
		return false
	}
	for i := range key {
		a, b := key[i], name[i]
		if 'A' <= a && a <= 'Z' {
			a += 'a' - 'A'
		}
		if 'A' <= b && b <= 'Z' {
			b += 'a' - 'A'
		}
		if a != b {
			return false
		}
	}
	return true
}

// value returns the bytes of the value at the cursor and steps over it.
func (s *jsonCursor) value() []byte {
	start, depth := s.i, 0
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case '"':
			s.i = stringEnd(s.b, s.i)
			if depth == 0 {
				return s.b[start:s.i]
			}
			continue
		case '[', '{':
			depth++
		case ']', '}':
			if depth == 0 {
				return s.b[start:s.i]
			}
			depth--
			if depth == 0 {
				s.i++
				return s.b[start:s.i]
			}
		case ',', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return s.b[start:s.i]
			}
		}
		s.i++
	}
	return s.b[start:s.i]
}
