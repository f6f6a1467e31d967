package contract

import (
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// validator collects the ways a value departs from a schema.
type validator struct {
	s *Spec
	// request: the value is sent by a client, so readOnly properties are
	// refused.
	request bool
	errs    []string
}

func (v *validator) errorf(at, format string, args ...any) {
	v.errs = append(v.errs, at+": "+fmt.Sprintf(format, args...))
}

// check validates val against sc.
func (v *validator) check(sc schema, val any, at string) {
	sc, err := v.s.deref(sc)
	if err != nil {
		v.errorf(at, "%v", err)
		return
	}
	if why, ok := sc.node["x-gpufinops-cut"]; ok {
		v.errorf(at, "%v", why)
		return
	}
	if val == nil {
		if sc.node["x-nullable"] != true {
			v.errorf(at, "null, which the model does not allow (no x-nullable)")
		}
		return
	}
	sc, ok := v.subtype(sc, val, at)
	if !ok {
		return
	}
	v.enum(sc, val, at)
	switch kind(sc.node) {
	case "object":
		v.object(sc, val, at)
	case "array":
		arr, ok := val.([]any)
		if !ok {
			v.errorf(at, "want an array, got %s", jsonKind(val))
			return
		}
		if n, ok := num(sc.node["minItems"]); ok && float64(len(arr)) < n {
			v.errorf(at, "%d items, the model's minimum is %v", len(arr), n)
		}
		if n, ok := num(sc.node["maxItems"]); ok && float64(len(arr)) > n {
			v.errorf(at, "%d items, the model's maximum is %v", len(arr), n)
		}
		items, _ := sc.node["items"].(map[string]any)
		for i, x := range arr {
			if items != nil {
				v.check(schema{doc: sc.doc, node: items}, x, fmt.Sprintf("%s[%d]", at, i))
			}
		}
	case "string":
		s, ok := val.(string)
		if !ok {
			v.errorf(at, "want a string, got %s", jsonKind(val))
			return
		}
		v.str(sc.node, s, at)
	case "integer":
		n, ok := val.(json.Number)
		if !ok {
			v.errorf(at, "want an integer, got %s", jsonKind(val))
			return
		}
		i, err := strconv.ParseInt(n.String(), 10, 64)
		if err != nil {
			v.errorf(at, "want an integer, got %s", n)
			return
		}
		if sc.node["format"] == "int32" && (i < math.MinInt32 || i > math.MaxInt32) {
			v.errorf(at, "%d is out of int32", i)
		}
		v.bounds(sc.node, float64(i), at)
	case "number":
		n, ok := val.(json.Number)
		if !ok {
			v.errorf(at, "want a number, got %s", jsonKind(val))
			return
		}
		f, err := n.Float64()
		if err != nil {
			v.errorf(at, "want a number, got %s", n)
			return
		}
		v.bounds(sc.node, f, at)
	case "boolean":
		if _, ok := val.(bool); !ok {
			v.errorf(at, "want a boolean, got %s", jsonKind(val))
		}
	}
}

// kind is a schema's JSON type: its type, else object when it declares
// properties, allOf or additionalProperties, else "" (any value).
func kind(n map[string]any) string {
	if t, ok := n["type"].(string); ok {
		return t
	}
	for _, k := range []string{"properties", "allOf", "additionalProperties"} {
		if _, ok := n[k]; ok {
			return "object"
		}
	}
	return ""
}

func jsonKind(v any) string {
	switch v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	}
	return fmt.Sprintf("%T", v)
}

// enum refuses a value outside a closed enum; an x-ms-enum with
// modelAsString is extensible: any value of the type is accepted.
func (v *validator) enum(sc schema, val any, at string) {
	list, ok := sc.node["enum"].([]any)
	if !ok {
		return
	}
	if x, _ := sc.node["x-ms-enum"].(map[string]any); x != nil && x["modelAsString"] == true {
		return
	}
	for _, e := range list {
		if fmt.Sprint(e) == fmt.Sprint(val) {
			return
		}
	}
	v.errorf(at, "%v is not one of the model's values %v", val, list)
}

// shape is an object schema with its allOf parts folded in.
type shape struct {
	props    map[string]schema
	required []string
	extra    *schema // additionalProperties schema
	open     bool    // additionalProperties true, or a free-form object
	named    string
}

func (v *validator) fold(sc schema, sh *shape, at string) {
	sc, err := v.s.deref(sc)
	if err != nil {
		v.errorf(at, "%v", err)
		return
	}
	if sh.named == "" {
		sh.named = sc.key
	}
	if props, ok := sc.node["properties"].(map[string]any); ok {
		for name, p := range props {
			m, _ := p.(map[string]any)
			sh.props[name] = schema{doc: sc.doc, node: m}
		}
	}
	if req, ok := sc.node["required"].([]any); ok {
		for _, r := range req {
			sh.required = append(sh.required, str(r))
		}
	}
	switch a := sc.node["additionalProperties"].(type) {
	case bool:
		sh.open = sh.open || a
	case map[string]any:
		sh.extra = &schema{doc: sc.doc, node: a}
	}
	parts, _ := sc.node["allOf"].([]any)
	for _, p := range parts {
		m, _ := p.(map[string]any)
		v.fold(schema{doc: sc.doc, node: m}, sh, at)
	}
}

func (v *validator) object(sc schema, val any, at string) {
	obj, ok := val.(map[string]any)
	if !ok {
		v.errorf(at, "want an object, got %s", jsonKind(val))
		return
	}
	sh := &shape{props: map[string]schema{}}
	v.fold(sc, sh, at)
	_, declared := sc.node["properties"]
	_, composed := sc.node["allOf"]
	closed := (declared || composed) && !sh.open && sh.extra == nil
	if !declared && !composed && sh.extra == nil {
		sh.open = true // a free-form object ("type": "object" alone)
	}
	for _, r := range sh.required {
		if _, ok := obj[r]; !ok {
			v.errorf(at, "required property %q is missing (%s)", r, name(sh.named))
		}
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		sub := at + "." + k
		if p, ok := sh.props[k]; ok {
			if v.request && v.readOnly(p) {
				v.errorf(sub, "read-only in the model: a client may not send it")
			}
			v.check(p, obj[k], sub)
			continue
		}
		switch {
		case sh.extra != nil:
			v.check(*sh.extra, obj[k], sub)
		case closed:
			v.errorf(sub, "not a property of %s in the model", name(sh.named))
		}
	}
}

func (v *validator) readOnly(p schema) bool {
	if p.node["readOnly"] == true {
		return true
	}
	d, err := v.s.deref(p)
	return err == nil && d.node["readOnly"] == true
}

func name(key string) string {
	if key == "" {
		return "this object"
	}
	return key[strings.LastIndex(key, "/")+1:]
}

// subtype resolves a discriminator: the definition of the same document
// whose allOf names sc and whose x-ms-discriminator-value (or name) is the
// value's discriminator property; sc itself without a discriminator. False
// when the value names no subtype.
func (v *validator) subtype(sc schema, val any, at string) (schema, bool) {
	prop, ok := sc.node["discriminator"].(string)
	obj, isObj := val.(map[string]any)
	if !ok || !isObj || sc.key == "" {
		return sc, true
	}
	want, _ := obj[prop].(string)
	self := name(sc.key)
	if want == self || want == str(sc.node["x-ms-discriminator-value"]) {
		return sc, true
	}
	defs, _ := v.s.docs[sc.doc]["definitions"].(map[string]any)
	names := make([]string, 0, len(defs))
	for n := range defs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		def, _ := defs[n].(map[string]any)
		parts, _ := def["allOf"].([]any)
		for _, p := range parts {
			m, _ := p.(map[string]any)
			if r, ok := m["$ref"].(string); ok && resolveKey(sc.doc, r) == sc.key {
				if dv := str(def["x-ms-discriminator-value"]); dv == want || (dv == "" && n == want) {
					sub := schema{doc: sc.doc, key: sc.doc + "#/definitions/" + n, node: def}
					return sub, true
				}
			}
		}
	}
	v.errorf(at, "discriminator %s=%q names no subtype of %s", prop, want, self)
	return sc, false
}

var (
	reUUID     = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	reDuration = regexp.MustCompile(`^P(\d+Y)?(\d+M)?(\d+W)?(\d+D)?(T(\d+H)?(\d+M)?(\d+(\.\d+)?S)?)?$`)
)

func (v *validator) str(n map[string]any, s, at string) {
	switch n["format"] {
	case "date-time":
		if _, err := time.Parse(time.RFC3339Nano, s); err != nil {
			v.errorf(at, "%q is not an RFC 3339 date-time", s)
		}
	case "duration":
		if !reDuration.MatchString(s) || s == "P" || strings.HasSuffix(s, "T") {
			v.errorf(at, "%q is not an ISO 8601 duration", s)
		}
	case "uuid":
		if !reUUID.MatchString(s) {
			v.errorf(at, "%q is not a UUID", s)
		}
	case "uri":
		if u, err := url.Parse(s); err != nil || !u.IsAbs() {
			v.errorf(at, "%q is not an absolute URI", s)
		}
	case "arm-id":
		if !strings.HasPrefix(s, "/") {
			v.errorf(at, "%q is not an ARM resource ID", s)
		}
	}
	if m, ok := num(n["minLength"]); ok && float64(len([]rune(s))) < m {
		v.errorf(at, "%q is shorter than the model's minLength %v", s, m)
	}
	if m, ok := num(n["maxLength"]); ok && float64(len([]rune(s))) > m {
		v.errorf(at, "%q is longer than the model's maxLength %v", s, m)
	}
	if p, ok := n["pattern"].(string); ok {
		if re, err := regexp.Compile(p); err == nil && !re.MatchString(s) {
			v.errorf(at, "%q does not match the model's pattern %s", s, p)
		}
	}
}

func (v *validator) bounds(n map[string]any, f float64, at string) {
	if m, ok := num(n["minimum"]); ok && f < m {
		v.errorf(at, "%v is below the model's minimum %v", f, m)
	}
	if m, ok := num(n["maximum"]); ok && f > m {
		v.errorf(at, "%v is above the model's maximum %v", f, m)
	}
}

func num(v any) (float64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := n.Float64()
	return f, err == nil
}
