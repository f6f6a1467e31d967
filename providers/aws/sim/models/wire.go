package models

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/aws/smithy-go/encoding/cbor"
)

// Protocols as botocore names them.
const (
	EC2      = "ec2"                // form in, XML out (EC2)
	Query    = "query"              // form in, XML out (STS, CloudWatch)
	JSON     = "json"               // AWS JSON 1.0 and 1.1
	RESTJSON = "rest-json"          // Savings Plans
	CBOR     = "smithy-rpc-v2-cbor" // CloudWatch
)

// speaks reports whether the service's model lists the protocol.
func (m *Model) speaks(proto string) bool {
	return m.Metadata.Protocol == proto || slices.Contains(m.Metadata.Protocols, proto)
}

func (m *Model) operation(op, proto string) (*Operation, []Violation) {
	o, ok := m.Operations[op]
	if !ok {
		return nil, []Violation{{m.Service, fmt.Sprintf("operation %s is not in the model", op)}}
	}
	if !m.speaks(proto) {
		return nil, []Violation{{op, fmt.Sprintf("%s does not speak protocol %s (model: %v)", m.Service, proto, m.Metadata.Protocols)}}
	}
	return o, nil
}

// Request checks a request's parameters: the form of the ec2 and query
// protocols, else the JSON or CBOR body.
func (m *Model) Request(op, proto string, form url.Values, body []byte) []Violation {
	o, vs := m.operation(op, proto)
	if o == nil {
		return vs
	}
	var v any
	switch proto {
	case EC2, Query:
		if got := form.Get("Version"); got != m.Metadata.APIVersion {
			vs = append(vs, Violation{op + ".Version", fmt.Sprintf("%q is not the model's API version %s", got, m.Metadata.APIVersion)})
		}
		var unknown []string
		v, unknown = m.fromForm(form, o.Input, proto == EC2)
		for _, k := range unknown {
			vs = append(vs, Violation{op + "." + k, "unknown request parameter"})
		}
	case JSON, RESTJSON:
		var err error
		if v, err = m.fromJSONBytes(body, o.Input); err != nil {
			return append(vs, Violation{op, err.Error()})
		}
	case CBOR:
		var err error
		if v, err = m.fromCBORBytes(body, o.Input); err != nil {
			return append(vs, Violation{op, err.Error()})
		}
	}
	if o.Input == nil {
		if obj, _ := v.(map[string]any); len(obj) > 0 {
			vs = append(vs, Violation{op, "the operation takes no input"})
		}
		return vs
	}
	vs = append(vs, m.Validate(o.Input.Shape, v)...)
	return append(vs, m.documentedLimits(op, v)...)
}

// Answer checks a successful answer's body.
func (m *Model) Answer(op, proto string, body []byte) []Violation {
	o, vs := m.operation(op, proto)
	if o == nil {
		return vs
	}
	var v any
	var err error
	switch proto {
	case EC2, Query:
		v, vs = m.fromXMLAnswer(o, proto, body)
		if v == nil {
			return vs
		}
	case JSON, RESTJSON:
		v, err = m.fromJSONBytes(body, o.Output)
	case CBOR:
		v, err = m.fromCBORBytes(body, o.Output)
	}
	if err != nil {
		return append(vs, Violation{op, err.Error()})
	}
	if o.Output == nil {
		return vs
	}
	return append(vs, m.Validate(o.Output.Shape, v)...)
}

// ErrorAnswer checks an error answer: the protocol's envelope, a code the
// operation may return, and the HTTP status for it.
func (m *Model) ErrorAnswer(op, proto string, status int, h http.Header, body []byte) []Violation {
	o, vs := m.operation(op, proto)
	if o == nil {
		return vs
	}
	bad := func(format string, args ...any) {
		vs = append(vs, Violation{op + " error", fmt.Sprintf(format, args...)})
	}
	if status < 400 || status > 599 {
		bad("HTTP status %d is not an error", status)
	}
	var code, message string
	switch proto {
	case EC2:
		var e struct {
			XMLName xml.Name `xml:"Response"`
			Errors  []struct {
				Code, Message string
			} `xml:"Errors>Error"`
			RequestID string `xml:"RequestID"`
		}
		if err := strictXML(body, &e, "Response", "Errors", "Error", "Code", "Message", "RequestID"); err != nil {
			bad("EC2 error body: %v", err)
			return vs
		}
		if len(e.Errors) != 1 {
			bad("EC2 error body has %d <Error> elements, want 1", len(e.Errors))
			return vs
		}
		if e.RequestID == "" {
			bad("EC2 error body has no <RequestID>")
		}
		code, message = e.Errors[0].Code, e.Errors[0].Message
	case Query:
		var e struct {
			XMLName xml.Name `xml:"ErrorResponse"`
			Error   struct {
				Type, Code, Message string
			}
			RequestID string `xml:"RequestId"`
		}
		if err := strictXML(body, &e, "ErrorResponse", "Error", "Type", "Code", "Message", "RequestId"); err != nil {
			bad("query error body: %v", err)
			return vs
		}
		if want := faultOf(status); e.Error.Type != want {
			bad("<Type> %q for HTTP %d, want %q", e.Error.Type, status, want)
		}
		if e.RequestID == "" {
			bad("query error body has no <RequestId>")
		}
		code, message = e.Error.Code, e.Error.Message
	case JSON, RESTJSON, CBOR:
		var fields map[string]any
		if proto == CBOR {
			if got := h.Get("Smithy-Protocol"); got != "rpc-v2-cbor" {
				bad("Smithy-Protocol header %q, want rpc-v2-cbor", got)
			}
			cv, err := cbor.Decode(body)
			if err != nil {
				bad("CBOR error body: %v", err)
				return vs
			}
			mp, ok := cv.(cbor.Map)
			if !ok {
				bad("CBOR error body is %T, want a map", cv)
				return vs
			}
			fields = map[string]any{}
			for k, x := range mp {
				if s, ok := x.(cbor.String); ok {
					fields[k] = string(s)
				} else {
					fields[k] = x
				}
			}
		} else {
			wantCT := "application/json"
			if proto == JSON {
				wantCT = "application/x-amz-json-" + m.Metadata.JSONVersion
			}
			if got := h.Get("Content-Type"); !strings.HasPrefix(got, wantCT) {
				bad("Content-Type %q, want %s", got, wantCT)
			}
			if err := json.Unmarshal(body, &fields); err != nil {
				bad("JSON error body: %v", err)
				return vs
			}
		}
		for k := range fields {
			if k != "__type" && k != "message" && k != "Message" && k != "code" {
				bad("unknown error body member %q", k)
			}
		}
		code, _ = fields["__type"].(string)
		if proto == RESTJSON && code == "" {
			code = h.Get("X-Amzn-ErrorType")
		}
		if i := strings.LastIndexByte(code, '#'); i >= 0 {
			code = code[i+1:]
		}
		code, _, _ = strings.Cut(code, ":")
		message, _ = fields["message"].(string)
		if message == "" {
			message, _ = fields["Message"].(string)
		}
		if m.Metadata.AWSQueryCompatible != nil {
			q := h.Get("X-Amzn-Query-Error")
			qcode, fault, ok := strings.Cut(q, ";")
			switch {
			case !ok:
				bad("x-amzn-query-error %q is not Code;Sender|Receiver", q)
			case fault != faultOf(status):
				bad("x-amzn-query-error fault %q for HTTP %d, want %s", fault, status, faultOf(status))
			default:
				if sh := m.Shapes[code]; sh != nil && sh.Exception && sh.Error != nil && sh.Error.Code != "" && sh.Error.Code != qcode {
					bad("__type %s is the error %s, x-amzn-query-error says %s", code, sh.Error.Code, qcode)
				}
				code = qcode
			}
		}
	default:
		bad("protocol %s has no error envelope here", proto)
		return vs
	}
	if code == "" {
		bad("no error code")
	} else if !slices.Contains(m.ErrorCodes(op), code) {
		bad("error code %q is neither one of %s's modelled errors nor a common AWS error", code, op)
	}
	if message == "" {
		bad("no error message")
	}
	if sh := m.Shapes[code]; sh != nil && sh.Error != nil && sh.Error.HTTPStatusCode != 0 && sh.Error.HTTPStatusCode != status {
		bad("HTTP %d for %s, the model says %d", status, code, sh.Error.HTTPStatusCode)
	}
	return vs
}

func faultOf(status int) string {
	if status >= 500 {
		return "Receiver"
	}
	return "Sender"
}

// strictXML decodes body into v after checking that it holds no element
// but those named.
func strictXML(body []byte, v any, allowed ...string) error {
	root, err := parseXML(body)
	if err != nil {
		return err
	}
	var walk func(n *xnode) error
	walk = func(n *xnode) error {
		if !slices.Contains(allowed, n.name) {
			return fmt.Errorf("unexpected element <%s>", n.name)
		}
		for _, k := range n.kids {
			if err := walk(k); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(root); err != nil {
		return err
	}
	return xml.Unmarshal(body, v)
}

// ---- forms (ec2 and query protocols) ----

// fromForm decodes a query-protocol form into the input's member tree and
// returns the form keys no member names.
func (m *Model) fromForm(form url.Values, in *Ref, ec2 bool) (any, []string) {
	used := map[string]bool{"Action": true, "Version": true}
	var v any = map[string]any{}
	if in != nil {
		v, _ = m.formValue(form, used, "", in.Shape, ec2)
	}
	var unknown []string
	for k := range form {
		if !used[k] {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	return v, unknown
}

func (m *Model) formValue(form url.Values, used map[string]bool, prefix, name string, ec2 bool) (any, bool) {
	sh := m.Shapes[name]
	if sh == nil {
		return nil, false
	}
	switch sh.Type {
	case "structure":
		obj := map[string]any{}
		for mn, ref := range sh.Members {
			key := mn
			switch {
			case ec2 && ref.QueryName != "":
				key = ref.QueryName
			case ec2 && ref.LocationName != "":
				key = upperFirst(ref.LocationName)
			case !ec2 && ref.LocationName != "":
				key = ref.LocationName
			}
			if x, ok := m.formValue(form, used, joinPath(prefix, key), ref.Shape, ec2); ok {
				obj[mn] = x
			}
		}
		return obj, prefix == "" || len(obj) > 0
	case "list":
		itemPrefix := prefix
		if !ec2 && !sh.Flattened {
			if vs, ok := form[prefix]; ok && len(vs) == 1 && vs[0] == "" {
				used[prefix] = true
				return []any{}, true
			}
			item := "member"
			if sh.Member.LocationName != "" {
				item = sh.Member.LocationName
			}
			itemPrefix = prefix + "." + item
		}
		var l []any
		for i := 1; ; i++ {
			x, ok := m.formValue(form, used, itemPrefix+"."+strconv.Itoa(i), sh.Member.Shape, ec2)
			if !ok {
				break
			}
			l = append(l, x)
		}
		return l, l != nil
	case "map":
		obj := map[string]any{}
		for i := 1; ; i++ {
			p := prefix + ".entry." + strconv.Itoa(i)
			k, ok := form[p+".key"]
			if !ok {
				break
			}
			used[p+".key"] = true
			x, _ := m.formValue(form, used, p+".value", sh.Value.Shape, ec2)
			obj[k[0]] = x
		}
		return obj, len(obj) > 0
	}
	vs, ok := form[prefix]
	if !ok {
		return nil, false
	}
	used[prefix] = true
	if len(vs) != 1 {
		return vs, true
	}
	return scalarText(sh, vs[0]), true
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	r := []rune(s)
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}

// scalarText reads a scalar written as text (forms, XML); text that does
// not parse as the shape's type stays a string, which Validate refuses.
func scalarText(sh *Shape, s string) any {
	switch sh.Type {
	case "integer", "long":
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n
		}
	case "double", "float":
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return f
		}
	case "boolean":
		switch s {
		case "true":
			return true
		case "false":
			return false
		}
	case "timestamp":
		if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
			return t
		}
	}
	return s
}

// ---- XML answers ----

type xnode struct {
	name, space string
	kids        []*xnode
	text        string
}

func parseXML(body []byte) (*xnode, error) {
	d := xml.NewDecoder(bytes.NewReader(body))
	var stack []*xnode
	var root *xnode
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			n := &xnode{name: t.Name.Local, space: t.Name.Space}
			if len(stack) > 0 {
				p := stack[len(stack)-1]
				p.kids = append(p.kids, n)
			} else if root != nil {
				return nil, fmt.Errorf("second root element <%s>", n.name)
			} else {
				root = n
			}
			stack = append(stack, n)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				stack[len(stack)-1].text += string(t)
			}
		}
	}
	if root == nil {
		return nil, fmt.Errorf("no XML element")
	}
	return root, nil
}

func (m *Model) fromXMLAnswer(o *Operation, proto string, body []byte) (any, []Violation) {
	root, err := parseXML(body)
	if err != nil {
		return nil, []Violation{{o.Name, "XML: " + err.Error()}}
	}
	var vs []Violation
	if want := o.Name + "Response"; root.name != want {
		return nil, []Violation{{o.Name, fmt.Sprintf("root element <%s>, want <%s>", root.name, want)}}
	}
	// The model's namespace; EC2 writes it with a trailing slash.
	if ns := m.Metadata.XMLNamespace; strings.TrimSuffix(root.space, "/") != strings.TrimSuffix(ns, "/") {
		vs = append(vs, Violation{o.Name, fmt.Sprintf("namespace %q, the model's is %q", root.space, ns)})
	}
	out := &xnode{name: "result"}
	for _, k := range root.kids {
		switch {
		case proto == EC2 && k.name == "requestId":
		case proto == Query && k.name == "ResponseMetadata":
			if len(k.kids) != 1 || k.kids[0].name != "RequestId" {
				vs = append(vs, Violation{o.Name + ".ResponseMetadata", "want exactly one <RequestId>"})
			}
		case proto == Query && o.Output != nil && k.name == o.Output.ResultWrapper:
			out = k
		case proto == EC2:
			out.kids = append(out.kids, k)
		default:
			vs = append(vs, Violation{o.Name, fmt.Sprintf("unexpected element <%s> in <%s>", k.name, root.name)})
		}
	}
	if o.Output == nil {
		if len(out.kids) > 0 {
			vs = append(vs, Violation{o.Name, "the operation has no output"})
		}
		return map[string]any{}, vs
	}
	var c checker
	c.m = m
	path := o.Output.ResultWrapper
	if path == "" {
		path = o.Output.Shape
	}
	v := m.xmlValue(&c, path, out, o.Output.Shape)
	return v, append(vs, c.out...)
}

func (m *Model) xmlValue(c *checker, path string, n *xnode, name string) any {
	sh := m.Shapes[name]
	if sh == nil {
		return nil
	}
	switch sh.Type {
	case "structure":
		obj := map[string]any{}
		for _, k := range n.kids {
			mn, ref := memberByWire(sh, k.name)
			if ref == nil {
				obj[k.name] = k.text // Validate names it unknown
				continue
			}
			if _, dup := obj[mn]; dup {
				c.bad(joinPath(path, mn), "element appears twice")
			}
			obj[mn] = m.xmlValue(c, joinPath(path, mn), k, ref.Shape)
		}
		return obj
	case "list":
		item := "member"
		if sh.Member.LocationName != "" {
			item = sh.Member.LocationName
		}
		l := []any{}
		for i, k := range n.kids {
			if k.name != item {
				c.bad(fmt.Sprintf("%s[%d]", path, i), "list item <%s>, the model says <%s>", k.name, item)
				continue
			}
			l = append(l, m.xmlValue(c, fmt.Sprintf("%s[%d]", path, i), k, sh.Member.Shape))
		}
		return l
	case "map":
		obj := map[string]any{}
		for _, e := range n.kids {
			var key string
			var val *xnode
			for _, kv := range e.kids {
				switch kv.name {
				case "key":
					key = kv.text
				case "value":
					val = kv
				}
			}
			if val != nil {
				obj[key] = m.xmlValue(c, path+"["+key+"]", val, sh.Value.Shape)
			}
		}
		return obj
	}
	if len(n.kids) > 0 {
		c.bad(path, "element <%s> has child elements where the model has %s", n.name, sh.Type)
	}
	return scalarText(sh, n.text)
}

// memberByWire finds the member serialized as wire.
func memberByWire(sh *Shape, wire string) (string, *Ref) {
	for mn, ref := range sh.Members {
		if ref.LocationName == wire || (ref.LocationName == "" && mn == wire) {
			return mn, ref
		}
	}
	return "", nil
}

// ---- JSON and CBOR ----

func (m *Model) fromJSONBytes(body []byte, ref *Ref) (any, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return map[string]any{}, nil
	}
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	var raw any
	if err := d.Decode(&raw); err != nil {
		return nil, fmt.Errorf("JSON: %w", err)
	}
	if ref == nil {
		return raw, nil
	}
	return m.jsonValue(raw, ref.Shape), nil
}

func (m *Model) jsonValue(v any, name string) any {
	sh := m.Shapes[name]
	if sh == nil {
		return v
	}
	if v == nil {
		return null{}
	}
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			switch sh.Type {
			case "structure":
				if mn, ref := memberByWire(sh, k); ref != nil {
					out[mn] = m.jsonValue(e, ref.Shape)
				} else {
					out[k] = e
				}
			case "map":
				out[k] = m.jsonValue(e, sh.Value.Shape)
			default:
				out[k] = e
			}
		}
		return out
	case []any:
		if sh.Type != "list" {
			return x
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = m.jsonValue(e, sh.Member.Shape)
		}
		return out
	case json.Number:
		switch sh.Type {
		case "integer", "long":
			if n, err := x.Int64(); err == nil {
				return n
			}
		case "double", "float":
			if f, err := x.Float64(); err == nil {
				return f
			}
		case "timestamp":
			if f, err := x.Float64(); err == nil {
				return epoch(f)
			}
		}
		return x
	case string:
		if sh.Type == "double" || sh.Type == "float" {
			switch x { // JSON protocols write non-finite doubles as strings
			case "NaN":
				return math.NaN()
			case "Infinity":
				return math.Inf(1)
			case "-Infinity":
				return math.Inf(-1)
			}
		}
	}
	return v
}

func epoch(f float64) time.Time {
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(math.Round(frac*1e9))).UTC()
}

func (m *Model) fromCBORBytes(body []byte, ref *Ref) (any, error) {
	if len(body) == 0 {
		return map[string]any{}, nil
	}
	cv, err := cbor.Decode(body)
	if err != nil {
		return nil, fmt.Errorf("CBOR: %w", err)
	}
	name := ""
	if ref != nil {
		name = ref.Shape
	}
	return m.cborValue(cv, name), nil
}

func (m *Model) cborValue(v cbor.Value, name string) any {
	sh := m.Shapes[name]
	switch x := v.(type) {
	case cbor.Map:
		out := map[string]any{}
		for k, e := range x {
			sub := ""
			if sh != nil && sh.Type == "structure" {
				if ref := sh.Members[k]; ref != nil {
					sub = ref.Shape
				}
			} else if sh != nil && sh.Type == "map" {
				sub = sh.Value.Shape
			}
			out[k] = m.cborValue(e, sub)
		}
		return out
	case cbor.List:
		sub := ""
		if sh != nil && sh.Type == "list" {
			sub = sh.Member.Shape
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = m.cborValue(e, sub)
		}
		return out
	case cbor.String:
		return string(x)
	case cbor.Slice:
		return []byte(x)
	case cbor.Uint:
		if sh != nil && (sh.Type == "double" || sh.Type == "float") {
			return float64(x)
		}
		return int64(x)
	case cbor.NegInt:
		if sh != nil && (sh.Type == "double" || sh.Type == "float") {
			return -float64(x)
		}
		return -int64(x)
	case cbor.Float32:
		return float64(x)
	case cbor.Float64:
		return float64(x)
	case cbor.Bool:
		return bool(x)
	case *cbor.Nil:
		return null{}
	case *cbor.Tag:
		if x.ID == 1 {
			if t, err := cbor.AsTime(x); err == nil {
				return t
			}
		}
		return x
	case cbor.Tag:
		if x.ID == 1 {
			if t, err := cbor.AsTime(&x); err == nil {
				return t
			}
		}
		return x
	}
	return v
}
