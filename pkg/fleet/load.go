package fleet

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agnivade/levenshtein"
	"github.com/shopspring/decimal"
	"sigs.k8s.io/yaml"
)

// Error is one problem in a fleet document: where it is and what is wrong.
// Its text is a single line, e.g.
//
//	fleet.yaml: instances[2] (id "nb-3"): utilization.gpu.p95: 140 is outside 0–100
type Error struct {
	// File is the name the document was parsed under; empty for a fleet built in code.
	File string
	// Line and Column locate a syntax error (1-based); 0 when unknown.
	Line, Column int
	// Instance is the index into instances the problem is in, or -1.
	Instance int
	// ID is that instance's id, when it has one.
	ID string
	// Field is the path of the field, relative to the instance when there is one,
	// e.g. "utilization.gpu.p95".
	Field string
	// Msg says what is wrong.
	Msg string
}

func (e *Error) Error() string {
	parts := make([]string, 0, 5)
	if e.File != "" {
		parts = append(parts, e.File)
	}
	switch {
	case e.Line > 0 && e.Column > 0:
		parts = append(parts, fmt.Sprintf("line %d, column %d", e.Line, e.Column))
	case e.Line > 0:
		parts = append(parts, fmt.Sprintf("line %d", e.Line))
	}
	if e.Instance >= 0 {
		s := fmt.Sprintf("instances[%d]", e.Instance)
		if e.ID != "" {
			s += fmt.Sprintf(" (id %q)", e.ID)
		}
		parts = append(parts, s)
	}
	if e.Field != "" {
		parts = append(parts, e.Field)
	}
	parts = append(parts, e.Msg)
	return strings.Join(parts, ": ")
}

var instancePath = regexp.MustCompile(`^instances\[(\d+)\]\.?`)

// locate builds an Error for a path from the document root, splitting off the
// instance the path is in.
func locate(path string, ids func(int) string, msg string) *Error {
	e := &Error{Instance: -1, Field: path, Msg: msg}
	if m := instancePath.FindStringSubmatch(path); m != nil {
		e.Instance, _ = strconv.Atoi(m[1])
		e.Field = path[len(m[0]):]
		if ids != nil {
			e.ID = ids(e.Instance)
		}
	}
	return e
}

// Parse reads a fleet document, JSON or YAML, and validates it. name is used in
// error messages and picks the syntax: ".json" is JSON, ".yaml" and ".yml" are
// YAML, anything else is JSON when it starts with "{" and YAML otherwise.
//
// Unknown fields are errors. An omitted lifecycle is on-demand and an omitted
// state is running. Every error is an *Error.
func Parse(name string, data []byte) (*Fleet, error) {
	f, err := parse(data, isJSON(name, data))
	if err != nil {
		var e *Error
		if !errors.As(err, &e) {
			e = &Error{Instance: -1, Msg: err.Error()}
		}
		e.File = name
		return nil, e
	}
	return f, nil
}

func isJSON(name string, data []byte) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".json":
		return true
	case ".yaml", ".yml":
		return false
	}
	trimmed := bytes.TrimLeft(data, " \t\r\n\ufeff")
	return len(trimmed) > 0 && trimmed[0] == '{'
}

func parse(data []byte, asJSON bool) (*Fleet, error) {
	data = bytes.TrimPrefix(data, []byte("\ufeff")) // a byte order mark some editors write
	j := data
	if !asJSON {
		if err := singleDocument(data); err != nil {
			return nil, err
		}
		if err := trailingJSON(data); err != nil {
			return nil, err
		}
		if piecewise { // a block mapping is read an instance at a time (yamlstream.go)
			if f, err, ok := streamYAML(data); ok {
				if err != nil {
					return nil, err
				}
				f.applyDefaults()
				if err := f.Validate(); err != nil {
					return nil, err
				}
				return f, nil
			}
		}
		var err error
		if j, err = yaml.YAMLToJSONStrict(data); err != nil {
			if isUnsupportedValue(err) {
				if e := nonFinite(data); e != nil {
					return nil, e
				}
			}
			return nil, yamlError(err, data)
		}
	}
	if t := bytes.TrimLeft(j, " \t\r\n"); piecewise && len(t) > 0 && t[0] == '{' {
		// A mapping, the only valid document: decoded piecewise (decode.go).
		f, err := decodeLarge(j, asJSON)
		if err != nil {
			return nil, err
		}
		f.applyDefaults()
		if err := f.Validate(); err != nil {
			return nil, err
		}
		return f, nil
	}
	doc, err := decodeJSON(j)
	if err != nil {
		return nil, err
	}
	if asJSON { // YAMLToJSONStrict has already refused duplicate keys
		if err := checkDuplicateKeys(j); err != nil {
			return nil, err
		}
	}
	root, ok := doc.(map[string]any)
	if !ok {
		if doc == nil {
			return nil, &Error{Instance: -1, Msg: "the document is empty; want apiVersion, kind and instances"}
		}
		return nil, &Error{Instance: -1, Msg: fmt.Sprintf("the document is %s; want a mapping with apiVersion, kind and instances", describe(doc))}
	}
	if err := checkHeader(root); err != nil {
		return nil, err
	}
	if root["instances"] == nil {
		return nil, &Error{Instance: -1, Field: "instances", Msg: "missing; give a list (it may be empty)"}
	}
	ids := func(i int) string {
		list, _ := root["instances"].([]any)
		if i < len(list) {
			if in, ok := list[i].(map[string]any); ok {
				id, _ := in["id"].(string)
				return id
			}
		}
		return ""
	}
	if path, msg := check(root, reflect.TypeFor[Fleet](), ""); msg != "" {
		return nil, locate(path, ids, msg)
	}
	// The shape is right, so decoding only fills in values.
	var f Fleet
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, err
	}
	f.applyDefaults()
	if err := f.Validate(); err != nil {
		return nil, err
	}
	return &f, nil
}

// checkHeader looks at apiVersion and kind first, so that a document of another
// kind is named as such rather than reported field by field.
func checkHeader(root map[string]any) error {
	for _, h := range []struct{ key, want string }{{"apiVersion", APIVersion}, {"kind", Kind}} {
		v, ok := root[h.key]
		switch {
		case !ok || v == nil:
			return &Error{Instance: -1, Field: h.key, Msg: fmt.Sprintf("missing; want %q", h.want)}
		case v != h.want:
			return &Error{Instance: -1, Field: h.key, Msg: fmt.Sprintf("found %s, want %q", describeValue(v), h.want)}
		}
	}
	return nil
}

// decodeJSON decodes one JSON value with numbers kept as json.Number, and
// rejects trailing data.
func decodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		if err == io.EOF {
			return nil, nil
		}
		return nil, jsonSyntaxError(err, data)
	}
	if rest := bytes.TrimLeft(data[dec.InputOffset():], " \t\r\n"); len(rest) > 0 {
		line, col := lineCol(data, int64(len(data)-len(rest)+1))
		return nil, &Error{Instance: -1, Line: line, Column: col, Msg: "unexpected data after the document"}
	}
	return doc, nil
}

func jsonSyntaxError(err error, data []byte) error {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		line, col := lineCol(data, se.Offset)
		return &Error{Instance: -1, Line: line, Column: col, Msg: err.Error()}
	case errors.Is(err, io.ErrUnexpectedEOF):
		line, col := lineCol(data, int64(len(data)+1))
		return &Error{Instance: -1, Line: line, Column: col, Msg: "unexpected end of the document"}
	}
	return &Error{Instance: -1, Msg: err.Error()}
}

// lineCol gives the 1-based line and column of the n-th byte (1-based) of
// data; n = len(data)+1 is the position just after the end.
func lineCol(data []byte, n int64) (line, col int) {
	n = min(max(n, 1), int64(len(data))+1)
	before := data[:n-1]
	line = bytes.Count(before, []byte("\n")) + 1
	col = len(before) - bytes.LastIndexByte(before, '\n')
	return line, col
}

// checkDuplicateKeys walks the token stream of valid JSON and reports the first
// key that appears twice in one object.
func checkDuplicateKeys(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	// The path is kept as segments and spelled out only for an error: a
	// large fleet has millions of keys.
	type segment struct {
		key     string
		index   int
		element bool // an array element: index, not key
	}
	var segs []segment
	path := func() string {
		var p string
		for _, sg := range segs {
			if sg.element {
				p = fmt.Sprintf("%s[%d]", p, sg.index)
			} else {
				p = joinPath(p, sg.key)
			}
		}
		return p
	}
	var walk func() error
	walk = func() error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return err
				}
				key := kt.(string)
				if seen[key] {
					return locate(path(), nil, fmt.Sprintf("key %q appears twice", key))
				}
				seen[key] = true
				segs = append(segs, segment{key: key})
				err = walk()
				segs = segs[:len(segs)-1]
				if err != nil {
					return err
				}
			}
			_, err = dec.Token()
			return err
		case json.Delim('['):
			for i := 0; dec.More(); i++ {
				segs = append(segs, segment{index: i, element: true})
				err := walk()
				segs = segs[:len(segs)-1]
				if err != nil {
					return err
				}
			}
			_, err = dec.Token()
			return err
		}
		return nil
	}
	return walk()
}

var yamlLine = regexp.MustCompile(`^line (\d+): (.*)$`)

// yamlError turns a YAML decoder error into one line, keeping its line number.
func yamlError(err error, data []byte) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	var lines []string
	for _, l := range strings.Split(msg, "\n") {
		if l = strings.TrimSpace(l); l != "" && l != "unmarshal errors:" {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return &Error{Instance: -1, Msg: msg}
	}
	e := &Error{Instance: -1, Msg: lines[0]}
	if m := yamlLine.FindStringSubmatch(lines[0]); m != nil {
		e.Line, _ = strconv.Atoi(m[1])
		e.Msg = m[2]
	}
	if e.Line == 0 && strings.Contains(e.Msg, "cannot start any token") {
		for i, l := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(strings.TrimLeft(l, " "), "\t") {
				e.Line, e.Msg = i+1, e.Msg+" (a tab; YAML indents with spaces)"
				break
			}
		}
	}
	if len(lines) > 1 {
		e.Msg += fmt.Sprintf(" (and %d more)", len(lines)-1)
	}
	return e
}

var (
	timeType    = reflect.TypeFor[time.Time]()
	decimalType = reflect.TypeFor[decimal.Decimal]()
	perGPUType  = reflect.TypeFor[PerGPU]()
)

// check compares a decoded JSON value with the Go type it will be decoded into
// and returns the path and description of the first mismatch: an unknown field,
// a value of the wrong type, a time that is not RFC 3339. Null is accepted
// anywhere and means "not given".
func check(v any, t reflect.Type, path string) (string, string) {
	return checkAt(v, t, &pathSeg{key: path, index: -1})
}

// checkElement is check for element i of the list at key: the path is
// spelt out only for a mismatch.
func checkElement(v any, t reflect.Type, key string, i int) (string, string) {
	return checkAt(v, t, &pathSeg{parent: &pathSeg{key: key, index: -1}, index: i})
}

// pathSeg is one step of a path being checked, spelt out only for an error:
// a large fleet has millions of values.
type pathSeg struct {
	parent *pathSeg
	key    string
	index  int // an element's index; -1 for a key
}

func (p *pathSeg) String() string {
	if p == nil {
		return ""
	}
	if p.index >= 0 {
		return fmt.Sprintf("%s[%d]", p.parent.String(), p.index)
	}
	return joinPath(p.parent.String(), p.key)
}

func checkAt(v any, t reflect.Type, path *pathSeg) (string, string) {
	if v == nil {
		return "", ""
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t {
	case timeType:
		s, ok := v.(string)
		if !ok {
			return path.String(), "want a date-time such as 2026-11-30T00:00:00Z, got " + describe(v)
		}
		if _, err := time.Parse(time.RFC3339, s); err != nil {
			return path.String(), fmt.Sprintf("%q is not a date-time such as 2026-11-30T00:00:00Z", s)
		}
		return "", ""
	case decimalType:
		n, ok := v.(json.Number)
		if !ok {
			return path.String(), "want a number, got " + describe(v)
		}
		if _, err := decimal.NewFromString(n.String()); err != nil {
			return path.String(), fmt.Sprintf("%s is not a number", n)
		}
		return "", ""
	case perGPUType:
		if list, ok := v.([]any); ok {
			for i, e := range list {
				n, ok := e.(json.Number)
				if !ok {
					return (&pathSeg{parent: path, index: i}).String(), "want a number, got " + describe(e)
				}
				if _, err := n.Float64(); err != nil {
					return (&pathSeg{parent: path, index: i}).String(), fmt.Sprintf("%s is not a number in range", n)
				}
			}
			return "", ""
		}
		n, ok := v.(json.Number)
		if !ok {
			return path.String(), "want a number or a list of numbers (one per GPU), got " + describe(v)
		}
		if _, err := n.Float64(); err != nil {
			return path.String(), fmt.Sprintf("%s is not a number in range", n)
		}
		return "", ""
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			return path.String(), "want a mapping, got " + describe(v)
		}
		return checkStruct(obj, t, path)
	case reflect.Map:
		obj, ok := v.(map[string]any)
		if !ok {
			return path.String(), "want a mapping, got " + describe(v)
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if p, msg := checkAt(obj[k], t.Elem(), &pathSeg{parent: path, key: k, index: -1}); msg != "" {
				return p, msg
			}
		}
	case reflect.Slice:
		list, ok := v.([]any)
		if !ok {
			return path.String(), "want a list, got " + describe(v)
		}
		for i, e := range list {
			if p, msg := checkAt(e, t.Elem(), &pathSeg{parent: path, index: i}); msg != "" {
				return p, msg
			}
		}
	case reflect.String:
		switch v.(type) {
		case string:
		case json.Number, bool:
			return path.String(), fmt.Sprintf("want a string, got %s; quote it", describe(v))
		default:
			return path.String(), "want a string, got " + describe(v)
		}
	case reflect.Float64:
		n, ok := v.(json.Number)
		if !ok {
			return path.String(), "want a number, got " + describe(v)
		}
		if _, err := n.Float64(); err != nil {
			return path.String(), fmt.Sprintf("%s is not a number in range", n)
		}
	case reflect.Int:
		n, ok := v.(json.Number)
		if !ok {
			return path.String(), "want a whole number, got " + describe(v)
		}
		if _, err := strconv.ParseInt(n.String(), 10, 64); err != nil {
			return path.String(), fmt.Sprintf("want a whole number, got %s", n)
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			return path.String(), "want true or false, got " + describe(v)
		}
	}
	return "", ""
}

// checkStruct reports unknown keys first (in sorted order), then checks the
// known ones in the struct's field order.
func checkStruct(obj map[string]any, t reflect.Type, path *pathSeg) (string, string) {
	sf := structFieldsOf(t)
	fields, names := sf.fields, sf.names
	var unknown []string
	for k := range obj {
		if _, ok := sf.index[k]; !ok {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		msg := fmt.Sprintf("unknown field %q", unknown[0])
		if s := suggest(unknown[0], names); s != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		} else {
			msg += "; known fields: " + strings.Join(names, ", ")
		}
		return path.String(), msg
	}
	for _, f := range fields {
		if p, msg := checkAt(obj[f.name], f.typ, &pathSeg{parent: path, key: f.name, index: -1}); msg != "" {
			return p, msg
		}
	}
	return "", ""
}

// structFields are a struct type's JSON fields, in field order.
type structFields struct {
	fields []structField
	names  []string
	index  map[string]int
}

type structField struct {
	name string
	typ  reflect.Type
}

// fieldCache holds structFields by type: checkStruct runs for every object
// of every instance.
var fieldCache sync.Map // reflect.Type → *structFields

func structFieldsOf(t reflect.Type) *structFields {
	if sf, ok := fieldCache.Load(t); ok {
		return sf.(*structFields)
	}
	sf := &structFields{index: map[string]int{}}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		sf.index[name] = len(sf.fields)
		sf.fields = append(sf.fields, structField{name, f.Type})
		sf.names = append(sf.names, name)
	}
	fieldCache.Store(t, sf)
	return sf
}

// suggest returns the known name closest to an unknown one, if it is close.
func suggest(unknown string, known []string) string {
	best, bestDist := "", 3
	for _, k := range known {
		if strings.EqualFold(k, unknown) {
			return k
		}
		if d := levenshtein.ComputeDistance(strings.ToLower(unknown), strings.ToLower(k)); d < bestDist {
			best, bestDist = k, d
		}
	}
	return best
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// describe names a decoded JSON value's type and, for scalars, its value.
func describe(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return fmt.Sprintf("the string %q", v)
	case json.Number:
		return "the number " + v.String()
	case bool:
		return fmt.Sprintf("%t", v)
	case []any:
		return "a list"
	case map[string]any:
		return "a mapping"
	}
	return fmt.Sprintf("%v", v)
}

// describeValue shows a scalar as written, strings quoted.
func describeValue(v any) string {
	switch v := v.(type) {
	case string:
		return strconv.Quote(v)
	case json.Number:
		return v.String()
	}
	return describe(v)
}
