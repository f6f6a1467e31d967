// Package models holds trimmed copies of Google's discovery documents for
// the REST methods the GCP simulator serves (Compute Engine v1, Cloud
// Billing v1, Resource Manager v3, Monitoring v3's projects.timeSeries.list)
// and checks requests, answers and error
// bodies against them; Monitoring's gRPC ListTimeSeries is checked against
// Google's descriptors of it, embedded as monitoring.binpb (grpc.go).
//
// The documents are data from google.golang.org/api and the descriptors
// from the monitoringpb and genproto packages (see README.md and the
// licences beside it); go run ./providers/gcp/sim/models/trim and
// descriptors_gen.go write them again.
package models

import (
	"bytes"
	"embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

//go:embed *.json
var files embed.FS

// Violation is one way a request or answer breaks its model.
type Violation struct {
	Path, Problem string
}

func (v Violation) Error() string { return v.Path + ": " + v.Problem }

// Join is the violations as one error; nil when there are none.
func Join(vs []Violation) error {
	if len(vs) == 0 {
		return nil
	}
	errs := make([]error, len(vs))
	for i, v := range vs {
		errs[i] = v
	}
	return errors.Join(errs...)
}

// Doc is a trimmed discovery document.
type Doc struct {
	Name        string               `json:"name"`
	Version     string               `json:"version"`
	ServicePath string               `json:"servicePath"`
	Parameters  map[string]*Param    `json:"parameters"`
	Schemas     map[string]*Schema   `json:"schemas"`
	Resources   map[string]*Resource `json:"resources"`
	// Source names the module version and file the document was trimmed from.
	Source string `json:"x-source"`

	methods map[string]*Method
}

// Resource is a discovery resource: methods and sub-resources.
type Resource struct {
	Methods   map[string]*Method   `json:"methods"`
	Resources map[string]*Resource `json:"resources"`
}

// Method is one REST method.
type Method struct {
	ID         string            `json:"id"`
	Path       string            `json:"path"`
	HTTPMethod string            `json:"httpMethod"`
	Parameters map[string]*Param `json:"parameters"`
	Request    *Schema           `json:"request"`
	Response   *Schema           `json:"response"`

	pathRE *regexp.Regexp
	names  []string
}

// Param is a path or query parameter.
type Param struct {
	Type     string   `json:"type"`
	Format   string   `json:"format"`
	Location string   `json:"location"`
	Pattern  string   `json:"pattern"`
	Minimum  string   `json:"minimum"`
	Maximum  string   `json:"maximum"`
	Required bool     `json:"required"`
	Repeated bool     `json:"repeated"`
	Enum     []string `json:"enum"`
}

// Schema is a JSON schema of the discovery dialect.
type Schema struct {
	Ref                  string             `json:"$ref"`
	Type                 string             `json:"type"`
	Format               string             `json:"format"`
	Properties           map[string]*Schema `json:"properties"`
	Items                *Schema            `json:"items"`
	AdditionalProperties *Schema            `json:"additionalProperties"`
	Enum                 []string           `json:"enum"`
}

var (
	loadMu sync.Mutex
	loaded = map[string]*Doc{}
)

// Load returns an API's document ("compute", "cloudbilling",
// "cloudresourcemanager", "monitoring"), parsed once.
func Load(api string) (*Doc, error) {
	loadMu.Lock()
	defer loadMu.Unlock()
	if d, ok := loaded[api]; ok {
		return d, nil
	}
	b, err := files.ReadFile(api + ".json")
	if err != nil {
		return nil, fmt.Errorf("models: no discovery document for %q", api)
	}
	d := &Doc{}
	if err := json.Unmarshal(b, d); err != nil {
		return nil, fmt.Errorf("models: %s: %w", api, err)
	}
	d.methods = map[string]*Method{}
	var walk func(map[string]*Resource)
	walk = func(rs map[string]*Resource) {
		for _, r := range rs {
			for _, m := range r.Methods {
				m.compile(d.ServicePath)
				d.methods[m.ID] = m
			}
			walk(r.Resources)
		}
	}
	walk(d.Resources)
	loaded[api] = d
	return d, nil
}

// MustLoad is Load for the documents known to be vendored.
func MustLoad(api string) *Doc {
	d, err := Load(api)
	if err != nil {
		panic(err)
	}
	return d
}

// MethodIDs are the document's methods, sorted.
func (d *Doc) MethodIDs() []string {
	out := make([]string, 0, len(d.methods))
	for id := range d.methods {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// Method returns a method by ID ("compute.instances.get").
func (d *Doc) Method(id string) *Method { return d.methods[id] }

var pathParam = regexp.MustCompile(`\{(\+?)([^}]+)\}`)

// compile turns the path template into a regexp over the URL path.
func (m *Method) compile(servicePath string) {
	tmpl := "/" + servicePath + m.Path
	var b strings.Builder
	b.WriteString("^")
	last := 0
	for _, loc := range pathParam.FindAllStringSubmatchIndex(tmpl, -1) {
		b.WriteString(regexp.QuoteMeta(tmpl[last:loc[0]]))
		if loc[3] > loc[2] { // {+name}: may hold slashes
			b.WriteString("(.+)")
		} else {
			b.WriteString("([^/]+)")
		}
		m.names = append(m.names, tmpl[loc[4]:loc[5]])
		last = loc[1]
	}
	b.WriteString(regexp.QuoteMeta(tmpl[last:]) + "$")
	m.pathRE = regexp.MustCompile(b.String())
}

// Request checks a REST request: HTTP method, path and its parameters,
// query parameters (known, typed, within range, enum values, required)
// and the JSON body.
func (d *Doc) Request(id string, r *http.Request, body []byte) []Violation {
	m := d.methods[id]
	if m == nil {
		return []Violation{{id, "method is not in the discovery document"}}
	}
	var vs []Violation
	bad := func(path, format string, args ...any) {
		vs = append(vs, Violation{id + " " + path, fmt.Sprintf(format, args...)})
	}
	if r.Method != m.HTTPMethod {
		bad("method", "HTTP %s, the document says %s", r.Method, m.HTTPMethod)
	}
	match := m.pathRE.FindStringSubmatch(r.URL.Path)
	if match == nil {
		bad("path", "%s does not match %s", r.URL.Path, m.pathRE)
	} else {
		for i, name := range m.names {
			if p := m.Parameters[name]; p != nil {
				vs = append(vs, checkParam(id+" path "+name, p, match[i+1])...)
			}
		}
	}
	q := r.URL.Query()
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p := m.Parameters[k]
		if p == nil {
			p = d.Parameters[k]
		}
		if p == nil && strings.HasPrefix(k, "$") && k != "$.xgafv" {
			// System parameters may be given as $name; the GAPIC REST
			// clients (Cloud Billing) send $alt=json;enum-encoding=int (FACTS.md).
			if p = d.Parameters[k[1:]]; p != nil && k == "$alt" {
				if v, ok := strings.CutSuffix(q.Get(k), ";enum-encoding=int"); ok && slices.Contains(p.Enum, v) {
					continue
				}
			}
		}
		if p == nil || p.Location == "path" {
			bad("query "+k, "unknown query parameter")
			continue
		}
		if len(q[k]) > 1 && !p.Repeated {
			bad("query "+k, "given %d times; the parameter is not repeated", len(q[k]))
		}
		for _, v := range q[k] {
			vs = append(vs, checkParam(id+" query "+k, p, v)...)
		}
	}
	if strings.HasPrefix(id, "compute.") && q.Has("maxResults") {
		// The document gives maxResults a minimum only; its description
		// says "Acceptable values are 0 to 500, inclusive" (FACTS.md).
		if n, err := strconv.Atoi(q.Get("maxResults")); err == nil && n > 500 {
			bad("query maxResults", "%d is above the documented maximum 500", n)
		}
	}
	for name, p := range m.Parameters {
		if p.Required && p.Location == "query" && !q.Has(name) {
			bad("query "+name, "required parameter is missing")
		}
	}
	switch {
	case m.Request == nil && len(bytes.TrimSpace(body)) > 0:
		bad("body", "the method takes no body")
	case m.Request != nil:
		vs = append(vs, d.checkJSON(id+" body", m.Request, body)...)
	}
	return vs
}

// checkParam checks one parameter value.
func checkParam(path string, p *Param, v string) []Violation {
	var vs []Violation
	bad := func(format string, args ...any) { vs = append(vs, Violation{path, fmt.Sprintf(format, args...)}) }
	switch p.Type {
	case "integer":
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			bad("%q is not an integer", v)
			break
		}
		if p.Minimum != "" {
			if lo, _ := strconv.ParseInt(p.Minimum, 10, 64); n < lo {
				bad("%d is below the minimum %s", n, p.Minimum)
			}
		}
		if p.Maximum != "" {
			if hi, _ := strconv.ParseInt(p.Maximum, 10, 64); n > hi {
				bad("%d is above the maximum %s", n, p.Maximum)
			}
		}
		vs = append(vs, checkFormat(path, p.Format, n)...)
	case "boolean":
		if v != "true" && v != "false" {
			bad("%q is not a boolean", v)
		}
	case "string":
		if len(p.Enum) > 0 && !slices.Contains(p.Enum, v) {
			bad("%q is not one of %v", v, p.Enum)
		}
		if p.Pattern != "" {
			if re, err := regexp.Compile(anchored(p.Pattern)); err == nil && !re.MatchString(v) {
				bad("%q does not match %s", v, p.Pattern)
			}
		}
		vs = append(vs, checkStringFormat(path, p.Format, v)...)
	}
	return vs
}

func anchored(p string) string {
	if !strings.HasPrefix(p, "^") {
		p = "^(?:" + p + ")"
	}
	if !strings.HasSuffix(p, "$") {
		p += "$"
	}
	return p
}

func checkFormat(path, format string, n int64) []Violation {
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	switch format {
	case "int32":
		lo, hi = math.MinInt32, math.MaxInt32
	case "uint32":
		lo, hi = 0, math.MaxUint32
	}
	if n < lo || n > hi {
		return []Violation{{path, fmt.Sprintf("%d does not fit %s", n, format)}}
	}
	return nil
}

// checkStringFormat checks the formats discovery gives strings: 64-bit
// integers as decimal strings, RFC 3339 times, base64 bytes.
func checkStringFormat(path, format, v string) []Violation {
	var err error
	switch format {
	case "int64":
		_, err = strconv.ParseInt(v, 10, 64)
	case "uint64":
		_, err = strconv.ParseUint(v, 10, 64)
	case "date-time", "google-datetime":
		_, err = time.Parse(time.RFC3339Nano, v)
	case "google-duration":
		if !strings.HasSuffix(v, "s") {
			err = fmt.Errorf("no unit s")
		} else {
			_, err = strconv.ParseFloat(strings.TrimSuffix(v, "s"), 64)
		}
	case "byte":
		_, err = base64.StdEncoding.DecodeString(v)
		if err != nil {
			_, err = base64.URLEncoding.DecodeString(v)
		}
	}
	if err != nil {
		return []Violation{{path, fmt.Sprintf("%q is not a %s string: %v", v, format, err)}}
	}
	return nil
}

// Answer checks a successful answer's JSON body against the method's
// response schema.
func (d *Doc) Answer(id string, body []byte) []Violation {
	m := d.methods[id]
	if m == nil {
		return []Violation{{id, "method is not in the discovery document"}}
	}
	if m.Response == nil {
		if len(bytes.TrimSpace(body)) > 0 && string(bytes.TrimSpace(body)) != "{}" {
			return []Violation{{id, "the method answers no body"}}
		}
		return nil
	}
	return d.checkJSON(id+" answer", m.Response, body)
}

func (d *Doc) checkJSON(path string, s *Schema, body []byte) []Violation {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return []Violation{{path, "JSON: " + err.Error()}}
	}
	return d.Validate(path, s, v)
}

// Validate checks a decoded JSON value (numbers as json.Number) against
// a schema.
func (d *Doc) Validate(path string, s *Schema, v any) []Violation {
	var vs []Violation
	d.check(&vs, path, s, v)
	return vs
}

func (d *Doc) check(vs *[]Violation, path string, s *Schema, v any) {
	bad := func(format string, args ...any) { *vs = append(*vs, Violation{path, fmt.Sprintf(format, args...)}) }
	if s.Ref != "" {
		ref := d.Schemas[s.Ref]
		if ref == nil {
			bad("schema %s is not in the document", s.Ref)
			return
		}
		s = ref
	}
	if v == nil {
		return // JSON null: a field left unset
	}
	switch s.Type {
	case "object":
		obj, ok := v.(map[string]any)
		if !ok {
			bad("%T where the schema has an object", v)
			return
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if p, ok := s.Properties[k]; ok {
				d.check(vs, path+"."+k, p, obj[k])
			} else if s.AdditionalProperties != nil {
				d.check(vs, path+"["+k+"]", s.AdditionalProperties, obj[k])
			} else {
				*vs = append(*vs, Violation{path + "." + k, "unknown property"})
			}
		}
	case "array":
		l, ok := v.([]any)
		if !ok {
			bad("%T where the schema has an array", v)
			return
		}
		for i, e := range l {
			d.check(vs, fmt.Sprintf("%s[%d]", path, i), s.Items, e)
		}
	case "string":
		str, ok := v.(string)
		if !ok {
			bad("%T where the schema has a string", v)
			return
		}
		if len(s.Enum) > 0 && !slices.Contains(s.Enum, str) {
			bad("%q is not a value of the enum", str)
		}
		*vs = append(*vs, checkStringFormat(path, s.Format, str)...)
	case "integer":
		num, ok := v.(json.Number)
		if !ok {
			bad("%T where the schema has an integer", v)
			return
		}
		n, err := num.Int64()
		if err != nil {
			bad("%s is not an integer", num)
			return
		}
		*vs = append(*vs, checkFormat(path, s.Format, n)...)
	case "number":
		if _, ok := v.(json.Number); !ok {
			bad("%T where the schema has a number", v)
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			bad("%T where the schema has a boolean", v)
		}
	case "any", "":
	default:
		bad("schema type %s is not supported", s.Type)
	}
}

// canonical maps google.rpc.Code names to the HTTP status Google's REST
// APIs answer them with (google/rpc/code.proto).
var canonical = map[string]int{
	"INVALID_ARGUMENT": 400, "FAILED_PRECONDITION": 400, "OUT_OF_RANGE": 400, "UNAUTHENTICATED": 401,
	"PERMISSION_DENIED": 403, "NOT_FOUND": 404, "ABORTED": 409, "ALREADY_EXISTS": 409, "RESOURCE_EXHAUSTED": 429,
	"CANCELLED": 499, "UNKNOWN": 500, "INTERNAL": 500, "DATA_LOSS": 500, "UNIMPLEMENTED": 501, "UNAVAILABLE": 503,
	"DEADLINE_EXCEEDED": 504,
}

// ErrorAnswer checks a REST error answer: the JSON form of
// google.rpc.Status, {"error": {"code", "message", "status", "details",
// "errors"}}, with code the HTTP status, status a canonical code that maps
// to it (Compute Engine also answers 403 for rate limits), and each detail
// a known google.rpc type with only its own fields.
func ErrorAnswer(status int, h http.Header, body []byte) []Violation {
	var vs []Violation
	bad := func(path, format string, args ...any) {
		vs = append(vs, Violation{path, fmt.Sprintf(format, args...)})
	}
	if status < 400 || status > 599 {
		bad("status", "HTTP %d is not an error", status)
	}
	if ct := h.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		bad("Content-Type", "%q, want application/json", ct)
	}
	var env map[string]json.RawMessage
	if err := json.Unmarshal(body, &env); err != nil {
		return append(vs, Violation{"error", "JSON: " + err.Error()})
	}
	for k := range env {
		if k != "error" {
			bad(k, "unknown top-level member (want only \"error\")")
		}
	}
	var e struct {
		Code    *int              `json:"code"`
		Message *string           `json:"message"`
		Status  string            `json:"status"`
		Details []json.RawMessage `json:"details"`
		Errors  []json.RawMessage `json:"errors"`
	}
	raw, ok := env["error"]
	if !ok {
		return append(vs, Violation{"error", "no \"error\" member"})
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		return append(vs, Violation{"error", err.Error()})
	}
	switch {
	case e.Code == nil:
		bad("error.code", "missing")
	case *e.Code != status:
		bad("error.code", "%d, want the HTTP status %d", *e.Code, status)
	}
	if e.Message == nil || *e.Message == "" {
		bad("error.message", "missing")
	}
	if e.Status != "" {
		want, known := canonical[e.Status]
		switch {
		case !known:
			bad("error.status", "%q is not a google.rpc.Code", e.Status)
		case want != status && !(status == 403 && e.Status == "RESOURCE_EXHAUSTED"):
			bad("error.status", "%s maps to HTTP %d, not %d", e.Status, want, status)
		}
	}
	for i, x := range e.Errors {
		var item map[string]any
		if err := json.Unmarshal(x, &item); err != nil {
			bad(fmt.Sprintf("error.errors[%d]", i), "%v", err)
			continue
		}
		for k, v := range item {
			if !slices.Contains([]string{"message", "domain", "reason", "location", "locationType", "extendedHelp", "sendReport", "debugInfo"}, k) {
				bad(fmt.Sprintf("error.errors[%d].%s", i, k), "unknown member")
			} else if _, isStr := v.(string); !isStr {
				bad(fmt.Sprintf("error.errors[%d].%s", i, k), "%T, want a string", v)
			}
		}
	}
	for i, x := range e.Details {
		vs = append(vs, checkDetail(fmt.Sprintf("error.details[%d]", i), x)...)
	}
	return vs
}
