package fleet

import (
	"bytes"
	"encoding"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/shopspring/decimal"
)

// The fast path of decodeInstances. The schema checks (checkAt) read a
// generic tree of each instance and json.Unmarshal then reads its bytes
// again; on a 100,000-instance file that was two thirds of the decoding and
// most of its allocations. fastDecoder does both in one pass over the bytes,
// without a tree, for what a fleet file is made of: structs with exactly
// spelt keys, pointers, slices, strings, numbers, booleans, times, decimals,
// PerGPU values and string-to-string maps. It gives up (ok false) on
// anything the checks would refuse and on anything it does not handle the way
// json.Unmarshal does (escaped keys, a null where a type's own UnmarshalJSON
// would be called, a number out of range); the caller then takes the exact
// path, which reports the error or decodes the rare case. The fuzz and
// property tests hold it to that: whenever it succeeds, the checks pass and
// json.Unmarshal gives the same value.

type planKind uint8

const (
	planString planKind = iota + 1
	planFloat
	planInt
	planBool
	planPointer
	planSlice
	planStringMap // map[string]string (tags), the one map a fleet has
	planStruct
	planTime
	planDecimal
	planPerGPU
)

// plan is how fastDecoder decodes one Go type.
type plan struct {
	kind   planKind
	typ    reflect.Type
	elem   *plan           // a pointer's or slice's element
	fields map[string]slot // a struct's fields by JSON name
	// order is a struct's fields in the order they are declared, which is
	// the order fleet files give them in: object tries the few after the
	// last key's before it hashes a key for fields.
	order []namedSlot
}

// namedSlot is a struct field with its JSON name.
type namedSlot struct {
	name string
	slot
}

// slot is a struct field: its index and plan.
type slot struct {
	index int
	plan  *plan
	at    int // its place in the plan's order
}

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	stringMapType       = reflect.TypeFor[map[string]string]()
	float64Type         = reflect.TypeFor[float64]()
)

// instancePlan is the plan for Instance, built once; nil when some field's
// type is one fastDecoder does not handle (every instance then takes the
// exact path).
var instancePlan = sync.OnceValue(func() *plan {
	p, _ := planFor(instanceType, map[reflect.Type]bool{})
	return p
})

// planFor builds the plan of t. building holds the struct types being built:
// a recursive type is not handled.
func planFor(t reflect.Type, building map[reflect.Type]bool) (*plan, bool) {
	switch t {
	case timeType:
		return &plan{kind: planTime, typ: t}, true
	case decimalType:
		return &plan{kind: planDecimal, typ: t}, true
	case perGPUType:
		return &plan{kind: planPerGPU, typ: t}, true
	case stringMapType:
		return &plan{kind: planStringMap, typ: t}, true
	}
	if t.Kind() != reflect.Pointer {
		// json.Unmarshal would call the type's own methods.
		pt := reflect.PointerTo(t)
		if pt.Implements(unmarshalerType) || pt.Implements(textUnmarshalerType) {
			return nil, false
		}
	}
	switch t.Kind() {
	case reflect.String:
		return &plan{kind: planString, typ: t}, true
	case reflect.Float64:
		return &plan{kind: planFloat, typ: t}, true
	case reflect.Int:
		return &plan{kind: planInt, typ: t}, true
	case reflect.Bool:
		return &plan{kind: planBool, typ: t}, true
	case reflect.Pointer, reflect.Slice:
		e, ok := planFor(t.Elem(), building)
		if !ok {
			return nil, false
		}
		k := planPointer
		if t.Kind() == reflect.Slice {
			k = planSlice
		}
		return &plan{kind: k, typ: t, elem: e}, true
	case reflect.Struct:
		if building[t] {
			return nil, false
		}
		building[t] = true
		defer delete(building, t)
		if t.NumField() > 64 {
			return nil, false // the fields decoded are kept in a uint64
		}
		p := &plan{kind: planStruct, typ: t, fields: map[string]slot{}}
		for i := range t.NumField() {
			f := t.Field(i)
			if f.Anonymous {
				return nil, false // json promotes an embedded struct's fields
			}
			tag := f.Tag.Get("json")
			if !f.IsExported() || tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			if strings.Contains(","+opts+",", ",string,") {
				return nil, false
			}
			if name == "" {
				name = f.Name
			}
			if !plainName(name) {
				return nil, false
			}
			if _, dup := p.fields[name]; dup {
				return nil, false
			}
			fp, ok := planFor(f.Type, building)
			if !ok {
				return nil, false
			}
			sl := slot{index: i, plan: fp, at: len(p.order)}
			p.fields[name] = sl
			p.order = append(p.order, namedSlot{name, sl})
		}
		return p, true
	}
	return nil, false
}

// plainName reports whether a JSON field name is letters, digits and
// underscores, which json and the checks both take as it is.
func plainName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if !(c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// fastDecoder reads one JSON value that scanStructure has found valid.
type fastDecoder struct {
	b    []byte
	strs interner
	// floats is the chunk that the instance's float pointers and PerGPU
	// values are carved from, one allocation for many; scratch collects a
	// PerGPU list before it is carved.
	floats, scratch []float64
	// times, when set, are the document's date-times read before.
	times *timeCache
}

// timeCache keeps the date-times a document's instances read most often (the
// windows they share) for all its instances. A new one takes an empty slot,
// else the one found least often and, of those, the one kept last: the
// samples' own times, each read once, take one slot in turn, and the first
// times kept (an instance's window comes before its samples) wait there to
// be found again.
type timeCache struct {
	slots [4]struct {
		raw       string
		t         time.Time
		hits, seq int
	}
	seq int
}

// find returns the time read before as raw, and else the slot to keep it in.
func (c *timeCache) find(raw []byte) (t time.Time, found bool, slot int) {
	for k := range c.slots {
		e := &c.slots[k]
		if e.raw == "" {
			return time.Time{}, false, k
		}
		if e.raw == string(raw) {
			e.hits++
			return e.t, true, k
		}
		if b := &c.slots[slot]; e.hits < b.hits || e.hits == b.hits && e.seq > b.seq {
			slot = k
		}
	}
	return time.Time{}, false, slot
}

// keep puts t, read as raw, in slot.
func (c *timeCache) keep(slot int, raw []byte, t time.Time) {
	c.seq++
	c.slots[slot].raw, c.slots[slot].t, c.slots[slot].hits, c.slots[slot].seq = string(raw), t, 0, c.seq
}

// Chunks of floats start small, for the instance with one pointer, and
// double up to maxFloatChunk, for one with thousands of samples.
const (
	minFloatChunk = 16
	maxFloatChunk = 1024
)

// takeFloats carves n floats from the current chunk, with no room to grow
// into the next values.
func (d *fastDecoder) takeFloats(n int) []float64 {
	if len(d.floats)+n > cap(d.floats) {
		d.floats = make([]float64, 0, max(n, min(2*cap(d.floats), maxFloatChunk), minFloatChunk))
	}
	at := len(d.floats)
	d.floats = d.floats[:at+n]
	return d.floats[at : at+n : at+n]
}

// decodeInstance decodes b into in; false means the exact path must.
func (d *fastDecoder) decodeInstance(p *plan, in *Instance) bool {
	j, ok := d.value(p, 0, reflect.ValueOf(in).Elem())
	return ok && d.ws(j) == len(d.b)
}

func (d *fastDecoder) ws(i int) int { return skipSpace(d.b, i) }

// value decodes the value at i into v and returns the index after it.
func (d *fastDecoder) value(p *plan, i int, v reflect.Value) (int, bool) {
	i = d.ws(i)
	if i >= len(d.b) {
		return 0, false
	}
	c := d.b[i]
	if c == 'n' {
		// Null has no effect on a zero value, but json.Unmarshal gives
		// it to the UnmarshalJSON of a value that has one.
		switch p.kind {
		case planTime, planDecimal, planPerGPU:
			return 0, false
		}
		return d.literal(i, "null")
	}
	switch p.kind {
	case planString:
		s, j, ok := d.str(i)
		if !ok {
			return 0, false
		}
		v.SetString(s)
		return j, true
	case planFloat:
		f, j, ok := d.float(i)
		if !ok {
			return 0, false
		}
		v.SetFloat(f)
		return j, true
	case planInt:
		// Whole numbers only, within what every float64 holds exactly; the
		// exact path reports anything else.
		f, j, ok := d.float(i)
		if !ok || f != float64(int64(f)) || f > 1<<53 || f < -(1<<53) {
			return 0, false
		}
		v.SetInt(int64(f))
		return j, true
	case planBool:
		switch c {
		case 't':
			v.SetBool(true)
			return d.literal(i, "true")
		case 'f':
			v.SetBool(false)
			return d.literal(i, "false")
		}
		return 0, false
	case planPointer:
		if p.elem.kind == planFloat && p.elem.typ == float64Type {
			f, j, ok := d.float(i)
			if !ok {
				return 0, false
			}
			cell := d.takeFloats(1)
			cell[0] = f
			v.Set(reflect.ValueOf(&cell[0]))
			return j, true
		}
		n := reflect.New(p.elem.typ)
		j, ok := d.value(p.elem, i, n.Elem())
		if !ok {
			return 0, false
		}
		v.Set(n)
		return j, true
	case planSlice:
		return d.slice(p, i, v)
	case planStringMap:
		return d.stringMap(i, v)
	case planStruct:
		return d.object(p, i, v)
	case planTime:
		return d.time(i, v)
	case planDecimal:
		return d.decimal(i, v)
	case planPerGPU:
		return d.perGPU(i, v)
	}
	return 0, false
}

func (d *fastDecoder) literal(i int, lit string) (int, bool) {
	if len(d.b)-i < len(lit) || string(d.b[i:i+len(lit)]) != lit {
		return 0, false
	}
	return i + len(lit), true
}

// float reads a number as json.Unmarshal does into a float64; a number out
// of range is refused, as the checks refuse it.
func (d *fastDecoder) float(i int) (float64, int, bool) {
	if c := d.b[i]; c != '-' && (c < '0' || c > '9') {
		return 0, 0, false
	}
	j := i + 1
	for j < len(d.b) {
		c := d.b[j]
		if c >= '0' && c <= '9' || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-' {
			j++
			continue
		}
		break
	}
	f, err := strconv.ParseFloat(unsafe.String(&d.b[i], j-i), 64)
	if err != nil {
		return 0, 0, false
	}
	return f, j, true
}

// strEnd finds the end of the string at i (the index after its closing
// quote) and whether it holds an escape.
func (d *fastDecoder) strEnd(i int) (int, bool, bool) {
	if d.b[i] != '"' {
		return 0, false, false
	}
	escaped := false
	for j := i + 1; j < len(d.b); j++ {
		switch d.b[j] {
		case '"':
			return j + 1, escaped, true
		case '\\':
			escaped = true
			j++
		}
	}
	return 0, false, false
}

// str reads a string. One without escapes and in valid UTF-8 is its bytes
// (interned); any other is unquoted by json itself.
func (d *fastDecoder) str(i int) (string, int, bool) {
	j, escaped, ok := d.strEnd(i)
	if !ok {
		return "", 0, false
	}
	raw := d.b[i+1 : j-1]
	if !escaped && utf8.Valid(raw) {
		return d.strs.bytes(raw), j, true
	}
	var s string
	if err := json.Unmarshal(d.b[i:j], &s); err != nil {
		return "", 0, false
	}
	return d.strs.str(s), j, true
}

// key reads an object key followed by its colon; only a key without escapes
// is taken (the checks compare exact spellings).
func (d *fastDecoder) key(i int) ([]byte, int, bool) {
	i = d.ws(i)
	if i >= len(d.b) {
		return nil, 0, false
	}
	j, escaped, ok := d.strEnd(i)
	if !ok || escaped {
		return nil, 0, false
	}
	k := d.b[i+1 : j-1]
	if !utf8.Valid(k) {
		return nil, 0, false
	}
	j = d.ws(j)
	if j >= len(d.b) || d.b[j] != ':' {
		return nil, 0, false
	}
	return k, j + 1, true
}

// next steps over the comma between members or elements; end reports the
// closing bracket.
func (d *fastDecoder) next(i int, close byte) (j int, end, ok bool) {
	i = d.ws(i)
	if i >= len(d.b) {
		return 0, false, false
	}
	switch d.b[i] {
	case ',':
		return i + 1, false, true
	case close:
		return i + 1, true, true
	}
	return 0, false, false
}

// open steps into an object or list at i; empty reports "{}" or "[]".
func (d *fastDecoder) open(i int, open, close byte) (j int, empty, ok bool) {
	if d.b[i] != open {
		return 0, false, false
	}
	j = d.ws(i + 1)
	if j < len(d.b) && d.b[j] == close {
		return j + 1, true, true
	}
	return i + 1, false, true
}

// predictedKeys is how many of the fields after the last key's object
// compares a key with before it looks the key up by hash: the fields a
// file leaves out (zero values) come between the ones it gives.
const predictedKeys = 4

func (d *fastDecoder) object(p *plan, i int, v reflect.Value) (int, bool) {
	j, empty, ok := d.open(i, '{', '}')
	if !ok || empty {
		return j, ok
	}
	var seen uint64
	next := 0 // where in p.order the key after the last one is looked for first
	for {
		k, at, ok := d.key(j)
		if !ok {
			return 0, false
		}
		var f slot
		known := false
		for q := next; q < len(p.order) && q < next+predictedKeys; q++ {
			if p.order[q].name == string(k) {
				f, known, next = p.order[q].slot, true, q+1
				break
			}
		}
		if !known {
			f, known = p.fields[string(k)]
			if known {
				next = f.at + 1
			}
		}
		if !known || seen&(1<<f.index) != 0 {
			// The checks name an unknown key; json.Unmarshal decodes a
			// repeated one into what the first gave.
			return 0, false
		}
		seen |= 1 << f.index
		if j, ok = d.value(f.plan, at, v.Field(f.index)); !ok {
			return 0, false
		}
		var end bool
		if j, end, ok = d.next(j, '}'); !ok || end {
			return j, ok
		}
	}
}

func (d *fastDecoder) slice(p *plan, i int, v reflect.Value) (int, bool) {
	j, empty, ok := d.open(i, '[', ']')
	if !ok {
		return 0, false
	}
	if empty {
		v.Set(reflect.MakeSlice(p.typ, 0, 0)) // [] is an empty list, not a nil one
		return j, true
	}
	s := reflect.New(p.typ).Elem() // addressable, so it can grow in place
	s.Set(reflect.MakeSlice(p.typ, 0, countElements(d.b, i)))
	for n := 0; ; n++ {
		s.Grow(1)
		s.SetLen(n + 1)
		if j, ok = d.value(p.elem, j, s.Index(n)); !ok {
			return 0, false
		}
		var end bool
		if j, end, ok = d.next(j, ']'); !ok {
			return 0, false
		}
		if end {
			v.Set(s)
			return j, true
		}
	}
}

// stringMap decodes a map[string]string (tags), without reflection.
func (d *fastDecoder) stringMap(i int, v reflect.Value) (int, bool) {
	j, empty, ok := d.open(i, '{', '}')
	if !ok {
		return 0, false
	}
	m := map[string]string{}
	v.Set(reflect.ValueOf(m))
	if empty {
		return j, true
	}
	for {
		if j = d.ws(j); j >= len(d.b) {
			return 0, false
		}
		k, at, ok := d.str(j)
		if !ok {
			return 0, false
		}
		if at = d.ws(at); at >= len(d.b) || d.b[at] != ':' {
			return 0, false
		}
		at = d.ws(at + 1)
		if at >= len(d.b) {
			return 0, false
		}
		var s string
		switch d.b[at] {
		case '"':
			if s, j, ok = d.str(at); !ok {
				return 0, false
			}
		case 'n': // a null value is the empty string, as json gives it
			if j, ok = d.literal(at, "null"); !ok {
				return 0, false
			}
		default:
			return 0, false
		}
		m[k] = s
		var end bool
		if j, end, ok = d.next(j, '}'); !ok || end {
			return j, ok
		}
	}
}

// time reads a date-time: a string the checks' time.Parse(RFC3339) and
// time.Time's own UnmarshalJSON both accept.
func (d *fastDecoder) time(i int, v reflect.Value) (int, bool) {
	j, escaped, ok := d.strEnd(i)
	if !ok || escaped {
		return 0, false
	}
	raw := d.b[i:j]
	slot := -1
	if d.times != nil {
		t, found, k := d.times.find(raw)
		if found {
			*v.Addr().Interface().(*time.Time) = t
			return j, true
		}
		slot = k
	}
	if _, err := time.Parse(time.RFC3339, unsafe.String(&d.b[i+1], j-i-2)); err != nil {
		return 0, false
	}
	t := v.Addr().Interface().(*time.Time)
	if err := t.UnmarshalJSON(raw); err != nil {
		return 0, false
	}
	if slot >= 0 {
		d.times.keep(slot, raw, *t)
	}
	return j, true
}

// decimal reads a number the checks' decimal.NewFromString accepts, with
// the Decimal's own UnmarshalJSON.
func (d *fastDecoder) decimal(i int, v reflect.Value) (int, bool) {
	// A number float64 cannot hold may still be a decimal: the exact path
	// decides.
	_, j, ok := d.float(i)
	if !ok {
		return 0, false
	}
	raw := d.b[i:j]
	if _, err := decimal.NewFromString(string(raw)); err != nil {
		return 0, false
	}
	if err := v.Addr().Interface().(*decimal.Decimal).UnmarshalJSON(raw); err != nil {
		return 0, false
	}
	return j, true
}

// perGPU reads a number or a list of numbers, as PerGPU.UnmarshalJSON does
// once the checks have refused anything else.
func (d *fastDecoder) perGPU(i int, v reflect.Value) (int, bool) {
	if d.b[i] != '[' {
		f, j, ok := d.float(i)
		if !ok {
			return 0, false
		}
		one := d.takeFloats(1)
		one[0] = f
		setPerGPU(v, one)
		return j, true
	}
	j, empty, ok := d.open(i, '[', ']')
	if !ok {
		return 0, false
	}
	if empty {
		v.Set(reflect.ValueOf(PerGPU{}))
		return j, true
	}
	d.scratch = d.scratch[:0]
	for {
		if j = d.ws(j); j >= len(d.b) {
			return 0, false
		}
		f, at, ok := d.float(j)
		if !ok {
			return 0, false
		}
		d.scratch = append(d.scratch, f)
		var end bool
		if j, end, ok = d.next(at, ']'); !ok {
			return 0, false
		}
		if end {
			p := d.takeFloats(len(d.scratch))
			copy(p, d.scratch)
			setPerGPU(v, p)
			return j, true
		}
	}
}

// setPerGPU stores p in v without boxing it when v can be addressed.
func setPerGPU(v reflect.Value, p PerGPU) {
	if v.CanAddr() {
		*v.Addr().Interface().(*PerGPU) = p
		return
	}
	v.Set(reflect.ValueOf(p))
}

// countElements is about how many elements the list at i has: its commas
// outside nested values and strings, plus one. It reads no further than the
// list's end.
func countElements(b []byte, i int) int {
	n, depth := 1, 0
	for i++; i < len(b); i++ {
		c := b[i]
		if !structural[c] {
			continue
		}
		switch c {
		case '"':
			for {
				k := bytes.IndexByte(b[i+1:], '"')
				if k < 0 {
					return n
				}
				i += 1 + k
				if !escapedQuote(b, i) {
					break
				}
			}
		case '[', '{':
			depth++
		case ']', '}':
			if depth == 0 {
				return n
			}
			depth--
		case ',':
			if depth == 0 {
				n++
			}
		}
	}
	return n
}

// structural marks the bytes countElements stops at.
var structural = [256]bool{'"': true, '[': true, '{': true, ']': true, '}': true, ',': true}

// escapedQuote reports whether the quote at i is escaped: an odd number of
// backslashes before it.
func escapedQuote(b []byte, i int) bool {
	n := 0
	for j := i - 1; j >= 0 && b[j] == '\\'; j-- {
		n++
	}
	return n%2 == 1
}
