package fleet

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"unicode/utf8"
)

// A structural scanner that also checks JSON's syntax, as json.Valid does,
// in the same pass. It allocates nothing per value, where a walk with
// json.Decoder.Token allocates per token: on a fleet of 100,000 instances
// that walk was the largest part of decoding. It finds the top-level members
// of the document and the elements of its instances list, and whether any
// object repeats a key.

// member is a top-level key and where its value lies in the document.
type member struct {
	key        string
	start, end int
}

// structure is what scanStructure found.
type structure struct {
	members []member
	// elements are the [start, end) offsets of the top-level instances
	// list's elements, when that value is a list.
	elements [][2]int
	// dup is set when some object repeats a key, or has a key that can
	// be compared only once decoded: the exact walk decides and names it.
	dup bool
}

// maxNesting is encoding/json's limit on nested objects and lists: a
// document nested deeper is not valid to json.Valid.
const maxNesting = 10000

// scanStructure scans a document whose first non-space byte is '{'. ok is
// json.Valid's answer; the structure means something only when it is true.
func scanStructure(j []byte) (st structure, ok bool) {
	s := jscan{j: j}
	i := s.space(0)
	i = s.object(i, 0, &st)
	if s.bad || s.space(i) != len(j) {
		return structure{}, false
	}
	st.dup = st.dup || s.dup
	return st, true
}

type jscan struct {
	j   []byte
	dup bool
	// bad is set at the first syntax error; the scan then runs to the end.
	bad bool
	// keys are reused per nesting depth, so an object's key set costs
	// nothing once the first object of that depth has grown it.
	keys [][][]byte
}

// fail marks the document invalid and returns an offset past its end, which
// ends every loop of the scan.
func (s *jscan) fail() int {
	s.bad = true
	return len(s.j)
}

func (s *jscan) space(i int) int { return skipSpace(s.j, i) }

// spaces8 is eight spaces read as one little-endian word.
const spaces8 = 0x2020202020202020

// skipSpace returns the offset of the first byte at or after i that is not
// JSON whitespace. An indented file is a third spaces, in runs after each
// newline: it takes them eight at a time, and the run's end within the last
// eight from the first byte that differs from a space.
func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ':
			for i+8 <= len(b) {
				if x := binary.LittleEndian.Uint64(b[i:]) ^ spaces8; x != 0 {
					i += bits.TrailingZeros64(x) >> 3
					break
				}
				i += 8
			}
			for i < len(b) && b[i] == ' ' {
				i++
			}
		case '\t', '\r', '\n':
			i++
		default:
			return i
		}
	}
	return i
}

// str returns the offset just past the string starting at i.
func (s *jscan) str(i int) int {
	j := s.j
	if i >= len(j) || j[i] != '"' {
		return s.fail()
	}
	for i++; i < len(j); {
		c := j[i]
		switch {
		case c == '"':
			return i + 1
		case c == '\\':
			if i+1 >= len(j) {
				return s.fail()
			}
			switch j[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(j) || !isHex(j[i+2]) || !isHex(j[i+3]) || !isHex(j[i+4]) || !isHex(j[i+5]) {
					return s.fail()
				}
				i += 6
			default:
				return s.fail()
			}
		case c < 0x20:
			return s.fail()
		default:
			i++
		}
	}
	return s.fail()
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// digits returns the offset past the run of digits at i, which must not be
// empty.
func (s *jscan) digits(i int) int {
	if i >= len(s.j) || !isDigit(s.j[i]) {
		return s.fail()
	}
	for i++; i < len(s.j) && isDigit(s.j[i]); i++ {
	}
	return i
}

// number returns the offset just past the number starting at i.
func (s *jscan) number(i int) int {
	j := s.j
	if j[i] == '-' {
		i++
	}
	switch {
	case i < len(j) && j[i] == '0':
		i++
	default:
		i = s.digits(i)
	}
	if i < len(j) && j[i] == '.' {
		i = s.digits(i + 1)
	}
	if i < len(j) && (j[i] == 'e' || j[i] == 'E') {
		i++
		if i < len(j) && (j[i] == '+' || j[i] == '-') {
			i++
		}
		i = s.digits(i)
	}
	return i
}

// literal returns the offset past word at i.
func (s *jscan) literal(i int, word string) int {
	if end := i + len(word); end > len(s.j) || string(s.j[i:end]) != word {
		return s.fail()
	}
	return i + len(word)
}

// seen records key in *keys and reports whether it was there already. A key
// with an escape or invalid UTF-8 (which decodes to U+FFFD, so two such keys
// can be one) counts as a repeat, for the exact walk to decide.
func (s *jscan) seen(keys *[][]byte, key []byte) bool {
	if bytes.IndexByte(key, '\\') >= 0 || !utf8.Valid(key) {
		return true
	}
	for _, k := range *keys {
		if bytes.Equal(k, key) {
			return true
		}
	}
	*keys = append(*keys, key)
	return false
}

// value returns the offset just past the value starting at i, which depth
// open objects and lists enclose.
func (s *jscan) value(i, depth int) int {
	if i >= len(s.j) {
		return s.fail()
	}
	switch c := s.j[i]; {
	case c == '"':
		return s.str(i)
	case c == '{':
		return s.object(i, depth, nil)
	case c == '[':
		return s.list(i, depth, nil)
	case c == '-' || isDigit(c):
		return s.number(i)
	case c == 't':
		return s.literal(i, "true")
	case c == 'f':
		return s.literal(i, "false")
	case c == 'n':
		return s.literal(i, "null")
	}
	return s.fail()
}

// object returns the offset just past the object at i. With st, it is the
// document's top level: its members, and the elements of its instances
// list, go into st.
func (s *jscan) object(i, depth int, st *structure) int {
	if i >= len(s.j) || s.j[i] != '{' || depth+1 > maxNesting {
		return s.fail()
	}
	for depth >= len(s.keys) {
		s.keys = append(s.keys, nil)
	}
	keys := s.keys[depth][:0]
	defer func() { s.keys[depth] = keys }()
	i = s.space(i + 1)
	if i < len(s.j) && s.j[i] == '}' {
		return i + 1
	}
	for i < len(s.j) {
		ks := i
		i = s.str(i)
		if s.bad {
			return i
		}
		key := s.j[ks+1 : i-1]
		if s.seen(&keys, key) {
			s.dup = true
		}
		i = s.space(i)
		if i >= len(s.j) || s.j[i] != ':' {
			return s.fail()
		}
		i = s.space(i + 1)
		start := i
		var name string
		if st != nil {
			name = memberKey(s.j[ks : ks+len(key)+2])
		}
		switch {
		case st != nil && name == "instances" && i < len(s.j) && s.j[i] == '[':
			i = s.list(i, depth+1, &st.elements)
		default:
			i = s.value(i, depth+1)
		}
		if st != nil {
			st.members = append(st.members, member{key: name, start: start, end: i})
		}
		i = s.space(i)
		if i >= len(s.j) {
			break
		}
		switch s.j[i] {
		case '}':
			return i + 1
		case ',':
			i = s.space(i + 1)
		default:
			return s.fail()
		}
	}
	return s.fail()
}

// list returns the offset just past the list at i, recording its elements'
// offsets in *elements when that is not nil.
func (s *jscan) list(i, depth int, elements *[][2]int) int {
	if depth+1 > maxNesting {
		return s.fail()
	}
	i = s.space(i + 1)
	if i < len(s.j) && s.j[i] == ']' {
		return i + 1
	}
	for i < len(s.j) {
		start := i
		i = s.value(i, depth+1)
		if elements != nil {
			*elements = append(*elements, [2]int{start, i})
		}
		i = s.space(i)
		if i >= len(s.j) {
			break
		}
		switch s.j[i] {
		case ']':
			return i + 1
		case ',':
			i = s.space(i + 1)
		default:
			return s.fail()
		}
	}
	return s.fail()
}

// memberKey is a top-level key as encoding/json reads it: escapes decoded,
// each byte of invalid UTF-8 read as U+FFFD. quoted is the key with its
// quotes; the scanner has checked its syntax.
func memberKey(quoted []byte) string {
	raw := quoted[1 : len(quoted)-1]
	if bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw) {
		return string(raw)
	}
	var k string
	if err := json.Unmarshal(quoted, &k); err != nil {
		return string(raw)
	}
	return k
}
