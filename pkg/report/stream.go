package report

import (
	"bufio"
	"bytes"
	"encoding"
	"encoding/json"
	"io"
	"reflect"
	"strings"
)

// streamDepth is how deep writeJSON walks the report itself: the envelope,
// its sections and their lists. Below it each value is encoded whole, and so
// is a struct one level above it (an item of a section's list: one
// recommendation, one instance), by the appender where it knows the type and
// by encoding/json otherwise. The output is byte for byte what
// json.Encoder with SetIndent("", "  ") and SetEscapeHTML(false) writes, but
// the whole document is never in memory: for a large fleet that is several
// times the report's size.
const streamDepth = 3

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

// streamer writes indented JSON in pieces.
type streamer struct {
	w   *bufio.Writer
	buf bytes.Buffer
	enc *json.Encoder // writes into buf
	// indented is buf's value indented (appendIndent), or the appender's
	// bytes, reused.
	indented []byte
	a        appender
	err      error
	// lists stand in for the top-level fields they name (by JSON name): the
	// list's items are made as they are written.
	lists map[string]lazyList
	// names are field names quoted, by name.
	names map[string]string
	// walked remembers streamable by type.
	walked map[reflect.Type]bool
}

// lazyList is a list whose items are made one at a time as they are written.
type lazyList struct {
	n int
	// write makes item i and writes it at prefix (leaf, fast).
	write func(s *streamer, i int, prefix string)
	// done, when not nil, runs after the last item is written.
	done func()
}

// writeJSONStream writes v as writeJSON's encoder would, with a final newline.
func writeJSONStream(w io.Writer, v any) error {
	return writeJSONLists(w, v, nil)
}

// writeJSONLists is writeJSONStream with some of v's top-level fields (nil
// slices in v) written from lists instead, as if each held its list's items.
func writeJSONLists(w io.Writer, v any, lists map[string]lazyList) error {
	s := &streamer{w: bufio.NewWriterSize(w, 64<<10), lists: lists}
	s.value(reflect.ValueOf(v), "", 0)
	s.write("\n")
	if s.err != nil {
		return s.err
	}
	return s.w.Flush()
}

func (s *streamer) write(str string) {
	if s.err == nil {
		_, s.err = s.w.WriteString(str)
	}
}

// name writes a field's JSON name, quoted as the encoder quotes it.
func (s *streamer) name(n string) {
	q, ok := s.names[n]
	if !ok {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(n); err != nil {
			s.err = err
			return
		}
		q = strings.TrimSuffix(b.String(), "\n")
		if s.names == nil {
			s.names = map[string]string{}
		}
		s.names[n] = q
	}
	s.write(q)
}

// leaf encodes v whole, indented as if it started at prefix.
func (s *streamer) leaf(v reflect.Value, prefix string) {
	if s.err != nil {
		return
	}
	if v.CanAddr() && s.fast(v.Addr().Interface(), prefix) {
		return
	}
	s.encode(v, prefix)
}

// fast writes v, a pointer, with the appender; false when the appender does
// not know v's type or left the value to encoding/json. After an error it
// writes nothing and reports true.
func (s *streamer) fast(v any, prefix string) bool {
	if s.err != nil {
		return true
	}
	b, ok := s.a.item(s.indented[:0], v, prefix)
	s.indented = b[:0]
	if ok {
		_, s.err = s.w.Write(b)
	}
	return ok
}

// encode is leaf by reflection.
func (s *streamer) encode(v reflect.Value, prefix string) {
	if s.err != nil {
		return
	}
	s.buf.Reset()
	if s.enc == nil {
		s.enc = json.NewEncoder(&s.buf)
		s.enc.SetEscapeHTML(false)
	}
	if err := s.enc.Encode(v.Interface()); err != nil {
		s.err = err
		return
	}
	s.indented = appendIndent(s.indented[:0], bytes.TrimSuffix(s.buf.Bytes(), []byte("\n")), prefix, "  ")
	_, s.err = s.w.Write(s.indented)
}

// streamable is streamable(t), remembered.
func (s *streamer) streamable(t reflect.Type) bool {
	ok, known := s.walked[t]
	if !known {
		ok = streamable(t)
		if s.walked == nil {
			s.walked = map[reflect.Type]bool{}
		}
		s.walked[t] = ok
	}
	return ok
}

// streamable reports whether t is walked rather than encoded whole: a plain
// struct (no custom marshaling, no embedded or ",string" fields) or a slice.
func streamable(t reflect.Type) bool {
	if t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType) ||
		t.Implements(textMarshalerType) || reflect.PointerTo(t).Implements(textMarshalerType) {
		return false
	}
	switch t.Kind() {
	case reflect.Slice:
		return t.Elem().Kind() != reflect.Uint8 // []byte is base64
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if f.Anonymous || strings.Contains(f.Tag.Get("json"), ",string") {
				return false
			}
		}
		return true
	}
	return false
}

func (s *streamer) value(v reflect.Value, prefix string, depth int) {
	if v.Kind() == reflect.Pointer {
		if v.IsNil() || !s.streamable(v.Type().Elem()) {
			s.leaf(v, prefix)
			return
		}
		v = v.Elem()
	}
	// Walking a list item's fields one by one would cost an encoder call
	// each, and the item is small.
	if depth >= streamDepth || (depth >= streamDepth-1 && v.Kind() == reflect.Struct) || !s.streamable(v.Type()) {
		s.leaf(v, prefix)
		return
	}
	inner := prefix + "  "
	if v.Kind() == reflect.Slice {
		if v.IsNil() || v.Len() == 0 {
			s.leaf(v, prefix)
			return
		}
		s.write("[\n")
		for i := range v.Len() {
			if i > 0 {
				s.write(",\n")
			}
			s.write(inner)
			s.value(v.Index(i), inner, depth+1)
		}
		s.write("\n" + prefix + "]")
		return
	}
	t := v.Type()
	first := true
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		fv := v.Field(i)
		list, lazy := s.lists[name]
		lazy = lazy && depth == 0
		if !lazy && omitted(fv, ","+opts+",") {
			continue
		}
		if first {
			s.write("{\n")
			first = false
		} else {
			s.write(",\n")
		}
		s.write(inner)
		s.name(name)
		s.write(": ")
		if lazy {
			s.list(list, fv, inner, depth+1)
		} else {
			s.value(fv, inner, depth+1)
		}
	}
	if first {
		s.write("{}")
		return
	}
	s.write("\n" + prefix + "}")
}

// list writes l as the slice field empty (its type) would be written holding
// l's items.
func (s *streamer) list(l lazyList, empty reflect.Value, prefix string, depth int) {
	if l.n == 0 {
		s.leaf(reflect.MakeSlice(empty.Type(), 0, 0), prefix)
	} else {
		inner := prefix + "  "
		s.write("[\n")
		for i := range l.n {
			if i > 0 {
				s.write(",\n")
			}
			s.write(inner)
			l.write(s, i, inner)
		}
		s.write("\n" + prefix + "]")
	}
	if l.done != nil {
		l.done()
	}
}

// omitted applies encoding/json's omitempty and omitzero.
func omitted(v reflect.Value, opts string) bool {
	if strings.Contains(opts, ",omitempty,") {
		switch v.Kind() {
		case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
			if v.Len() == 0 {
				return true
			}
		case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
			reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
			if v.IsZero() {
				return true
			}
		}
	}
	if strings.Contains(opts, ",omitzero,") {
		if z, ok := v.Interface().(interface{ IsZero() bool }); ok {
			if v.Kind() != reflect.Pointer || !v.IsNil() {
				return z.IsZero()
			}
			return true
		}
		return v.IsZero()
	}
	return false
}
