package fleet

import (
	"bytes"
	"unicode/utf8"
)

// A structural scanner for JSON already known to be valid (json.Valid). It
// allocates nothing per value, where a walk with json.Decoder.Token allocates
// per token: on a fleet of 100,000 instances that walk was the largest part
// of decoding. It finds the top-level members of the document and the
// elements of its instances list, and whether any object repeats a key.

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

// scanStructure scans valid JSON whose first non-space byte is '{'.
func scanStructure(j []byte) structure {
	s := jscan{j: j}
	var st structure
	i := s.space(0)
	i++ // '{'
	var keys [][]byte
	for {
		i = s.space(i)
		if j[i] == '}' {
			break
		}
		if j[i] == ',' {
			i = s.space(i + 1)
		}
		ks := i
		i = s.str(i)
		key := j[ks+1 : i-1]
		if s.seen(&keys, key) {
			st.dup = true
		}
		i = s.space(i)
		i = s.space(i + 1) // ':'
		start := i
		if string(key) == "instances" && j[i] == '[' {
			i = s.elements(i, &st.elements)
		} else {
			i = s.value(i)
		}
		st.members = append(st.members, member{key: string(key), start: start, end: i})
	}
	st.dup = st.dup || s.dup
	return st
}

type jscan struct {
	j   []byte
	dup bool
	// keys are reused per nesting depth, so an object's key set costs
	// nothing once the first object of that depth has grown it.
	keys [][][]byte
}

func (s *jscan) space(i int) int {
	for i < len(s.j) {
		switch s.j[i] {
		case ' ', '\t', '\r', '\n':
			i++
		default:
			return i
		}
	}
	return i
}

// str returns the offset just past the string starting at i.
func (s *jscan) str(i int) int {
	i++
	for {
		k := bytes.IndexAny(s.j[i:], `"\`)
		i += k
		if s.j[i] == '"' {
			return i + 1
		}
		i += 2 // an escape: the next byte cannot end the string
	}
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

// elements scans the list at i, recording each element's offsets.
func (s *jscan) elements(i int, out *[][2]int) int {
	i = s.space(i + 1)
	if s.j[i] == ']' {
		return i + 1
	}
	for {
		i = s.space(i)
		start := i
		i = s.value(i)
		*out = append(*out, [2]int{start, i})
		i = s.space(i)
		if s.j[i] == ']' {
			return i + 1
		}
		i++ // ','
	}
}

// value returns the offset just past the value starting at i.
func (s *jscan) value(i int) int {
	return s.valueAt(i, 0)
}

func (s *jscan) valueAt(i, depth int) int {
	switch s.j[i] {
	case '"':
		return s.str(i)
	case '{':
		for depth >= len(s.keys) {
			s.keys = append(s.keys, nil)
		}
		keys := s.keys[depth][:0]
		i = s.space(i + 1)
		if s.j[i] == '}' {
			return i + 1
		}
		for {
			i = s.space(i)
			ks := i
			i = s.str(i)
			if s.seen(&keys, s.j[ks+1:i-1]) {
				s.dup = true
			}
			i = s.space(i)
			i = s.space(i + 1) // ':'
			i = s.valueAt(i, depth+1)
			i = s.space(i)
			if s.j[i] == '}' {
				s.keys[depth] = keys
				return i + 1
			}
			i++ // ','
		}
	case '[':
		i = s.space(i + 1)
		if s.j[i] == ']' {
			return i + 1
		}
		for {
			i = s.space(i)
			i = s.valueAt(i, depth+1)
			i = s.space(i)
			if s.j[i] == ']' {
				return i + 1
			}
			i++ // ','
		}
	}
	// A number, true, false or null.
	for i < len(s.j) {
		switch s.j[i] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return i
		}
		i++
	}
	return i
}
