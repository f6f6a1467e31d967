package fleet

import (
	"bytes"
	"encoding/json"
	"io"
	"reflect"
)

// The decoding of large fleet documents. A fleet file of 150,000 instances is
// some 50–100 MB of JSON; decoded into a generic tree (map[string]any per
// object) it is ten times that. decodeLarge reads the document one level deep
// and the instances one at a time, each checked against the schema and
// decoded before the next is read, so no generic tree of the whole document
// exists. Errors are the ones parse reports for a tree: same messages, same
// order (header, unknown and top-level fields, then the first bad instance).

var instanceType = reflect.TypeFor[Instance]()

// piecewise selects decodeLarge for mappings; tests turn it off to compare
// with decoding the whole tree.
var piecewise = true

// placeholderInstances stands for a list of instances in the top-level
// mapping while they are checked one by one.
var placeholderInstances = []any{}

// decodeLarge decodes a JSON document whose first character is "{". It
// returns the fleet, not yet defaulted or validated.
func decodeLarge(j []byte, asJSON bool) (*Fleet, error) {
	st, valid := scanStructure(j)
	if !valid {
		// The syntax error, or the data after the document, as decodeJSON
		// reports it: the decoder says where.
		dec := json.NewDecoder(bytes.NewReader(j))
		var skip struct{}
		if err := dec.Decode(&skip); err != nil {
			return nil, jsonSyntaxError(err, j)
		}
		rest := bytes.TrimLeft(j[dec.InputOffset():], " \t\r\n")
		line, col := lineCol(j, int64(len(j)-len(rest)+1))
		return nil, &Error{Instance: -1, Line: line, Column: col, Msg: "unexpected data after the document"}
	}
	if st.dup && asJSON { // YAMLToJSONStrict has already refused duplicate keys
		if err := checkDuplicateKeys(j); err != nil {
			return nil, err
		}
	}
	root := make(map[string]any, len(st.members))
	var instances []byte
	for _, m := range st.members {
		raw := j[m.start:m.end]
		if m.key == "instances" && raw[0] == '[' {
			root[m.key], instances = placeholderInstances, raw
			continue
		}
		v, err := decodeJSON(raw)
		if err != nil {
			return nil, err
		}
		root[m.key] = v
		if m.key == "instances" { // not a list: the checks name it
			instances = nil
		}
	}
	f, err := headerOf(root)
	if err != nil {
		return nil, err
	}
	if f.Instances, err = decodeInstances(j, instances, st.elements); err != nil {
		return nil, err
	}
	return f, nil
}

// headerOf checks the top-level members of a document whose instances are
// decoded one at a time (root["instances"] is placeholderInstances when
// they are a list) and returns the fleet without its instances.
func headerOf(root map[string]any) (*Fleet, error) {
	if err := checkHeader(root); err != nil {
		return nil, err
	}
	if root["instances"] == nil {
		return nil, &Error{Instance: -1, Field: "instances", Msg: "missing; give a list (it may be empty)"}
	}
	if path, msg := check(root, reflect.TypeFor[Fleet](), ""); msg != "" {
		return nil, locate(path, nil, msg)
	}
	f := &Fleet{APIVersion: root["apiVersion"].(string), Kind: root["kind"].(string)}
	if md := root["metadata"]; md != nil {
		if err := redecode(md, &f.Metadata); err != nil {
			return nil, err
		}
	}
	if cs := root["commitments"]; cs != nil {
		if err := redecode(cs, &f.Commitments); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// decodeInstances checks and decodes a JSON list of instances one at a time.
// elements are the offsets of the list's elements in j.
func decodeInstances(j, list []byte, elements [][2]int) ([]Instance, error) {
	if list == nil {
		return nil, nil
	}
	out := make([]Instance, 0, len(elements))
	d := newInstanceDecoder()
	for i, e := range elements {
		in, err := d.decode(j[e[0]:e[1]], i)
		if err != nil {
			return nil, err
		}
		out = append(out, in)
	}
	return out, nil
}

// instanceDecoder decodes the instances of one document, one at a time,
// the fast way where it can and else the exact way. Its strings and
// date-times are shared by all the document's instances.
type instanceDecoder struct {
	strs  interner
	times *timeCache
	fast  *plan
}

func newInstanceDecoder() *instanceDecoder {
	return &instanceDecoder{strs: interner{}, times: &timeCache{}, fast: instancePlan()}
}

// decode decodes raw, the JSON of element i of the instances.
func (d *instanceDecoder) decode(raw []byte, i int) (Instance, error) {
	if d.fast != nil {
		var in Instance
		fd := fastDecoder{b: raw, strs: d.strs, times: d.times}
		if fd.decodeInstance(d.fast, &in) {
			return in, nil
		}
	}
	return exactInstance(raw, i, d.strs)
}

// exactInstance decodes element i of the instances the exact way: its
// generic form for the checks (whose messages name the path), then the
// typed decoding of its bytes.
func exactInstance(raw []byte, i int, strs interner) (Instance, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return Instance{}, err
	}
	if path, msg := checkElement(v, instanceType, "instances", i); msg != "" {
		return Instance{}, locate(path, func(int) string {
			in, _ := v.(map[string]any)
			id, _ := in["id"].(string)
			return id
		}, msg)
	}
	var in Instance
	if v != nil { // null is an instance with nothing given, as in a list decoded whole
		// The checks have refused every key the type does not spell
		// exactly, so this decoding needs no DisallowUnknownFields.
		if err := json.Unmarshal(raw, &in); err != nil {
			return Instance{}, err
		}
	}
	strs.instance(&in)
	return in, nil
}

// maxInterned bounds the strings an interner holds: a fleet's repeated
// strings are far fewer, and unique ones (names, IDs) gain nothing.
const maxInterned = 1 << 16

// interner makes the strings that repeat across a large fleet's instances
// (providers, regions, types, tag keys and values) one copy each, instead of
// one per instance as the decoder allocates them.
type interner map[string]string

func (t interner) str(s string) string {
	if v, ok := t[s]; ok {
		return v
	}
	if len(t) < maxInterned {
		t[s] = s
	}
	return s
}

// bytes is str for a string's bytes, which it copies only when the string
// is new.
func (t interner) bytes(b []byte) string {
	if v, ok := t[string(b)]; ok {
		return v
	}
	s := string(b)
	if len(t) < maxInterned && len(s) <= maxInternedLen {
		t[s] = s
	}
	return s
}

// maxInternedLen is the longest string bytes interns: longer ones (names,
// IDs, owners) rarely repeat.
const maxInternedLen = 40

func (t interner) instance(in *Instance) {
	in.Provider = Provider(t.str(string(in.Provider)))
	in.Account = t.str(in.Account)
	in.Region = t.str(in.Region)
	in.Zone = t.str(in.Zone)
	in.InstanceType = t.str(in.InstanceType)
	in.GPU.Model = t.str(in.GPU.Model)
	in.Lifecycle = Lifecycle(t.str(string(in.Lifecycle)))
	in.State = State(t.str(string(in.State)))
	in.SpotInterruption = SpotInterruption(t.str(string(in.SpotInterruption)))
	if len(in.Tags) > 0 {
		tags := make(map[string]string, len(in.Tags))
		for k, v := range in.Tags {
			tags[t.str(k)] = t.str(v)
		}
		in.Tags = tags
	}
	if w := in.Workload; w != nil {
		w.Type = WorkloadType(t.str(string(w.Type)))
		w.Model = t.str(w.Model)
		w.Precision = t.str(w.Precision)
	}
	if u := in.Utilization; u != nil {
		u.Source = t.str(u.Source)
	}
}

// redecode decodes a checked generic value into its typed form.
func redecode(v any, dst any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(dst); err != nil && err != io.EOF {
		return err
	}
	return nil
}
