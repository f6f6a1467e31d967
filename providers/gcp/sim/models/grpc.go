package models

import (
	_ "embed"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/anypb"
)

// The gRPC checks read monitoring.binpb, Google's descriptors of
// google.monitoring.v3.MetricService and of google.rpc.Status and its
// details with every file they import (written by descriptors_gen.go from
// the generated packages in the module graph): the method's input and
// output messages, their field_behavior REQUIRED fields and enum values,
// and the detail types in grpc-status-details-bin.

// ListTimeSeries is the gRPC method the simulator serves.
const ListTimeSeries = "/google.monitoring.v3.MetricService/ListTimeSeries"

//go:embed monitoring.binpb
var descriptorSet []byte

// registry is the embedded descriptors: files and their message types.
var registry = sync.OnceValues(func() (*protoregistry.Files, *dynamicpb.Types) {
	var set descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(descriptorSet, &set); err != nil {
		panic("models: monitoring.binpb: " + err.Error())
	}
	files, err := protodesc.NewFiles(&set)
	if err != nil {
		panic("models: monitoring.binpb: " + err.Error())
	}
	return files, dynamicpb.NewTypes(files)
})

// fieldBehaviorNumber is google.api.field_behavior, an extension of
// FieldOptions (google/api/field_behavior.proto); REQUIRED is 2.
const (
	fieldBehaviorNumber = 1052
	behaviorRequired    = 2
)

// grpcMethod finds a method by its gRPC path.
func grpcMethod(path string) (protoreflect.MethodDescriptor, error) {
	svc, method, ok := strings.Cut(strings.TrimPrefix(path, "/"), "/")
	if !ok {
		return nil, fmt.Errorf("%q is not a gRPC method path", path)
	}
	files, _ := registry()
	d, err := files.FindDescriptorByName(protoreflect.FullName(svc))
	if err != nil {
		return nil, fmt.Errorf("no service %s: %w", svc, err)
	}
	sd, ok := d.(protoreflect.ServiceDescriptor)
	if !ok {
		return nil, fmt.Errorf("%s is not a service", svc)
	}
	md := sd.Methods().ByName(protoreflect.Name(method))
	if md == nil {
		return nil, fmt.Errorf("service %s has no method %s", svc, method)
	}
	return md, nil
}

// frames splits a gRPC body into its uncompressed messages.
func frames(body []byte) ([][]byte, error) {
	var out [][]byte
	for len(body) > 0 {
		if len(body) < 5 {
			return nil, fmt.Errorf("truncated gRPC frame header")
		}
		if body[0] != 0 {
			return nil, fmt.Errorf("compressed gRPC frame")
		}
		n := int(binary.BigEndian.Uint32(body[1:5]))
		if len(body) < 5+n {
			return nil, fmt.Errorf("gRPC frame of %d bytes holds %d", n, len(body)-5)
		}
		out = append(out, body[5:5+n])
		body = body[5+n:]
	}
	return out, nil
}

// GRPCRequest checks a unary gRPC request body against the method's input
// message.
func GRPCRequest(path string, body []byte) []Violation {
	md, err := grpcMethod(path)
	if err != nil {
		return []Violation{{path, err.Error()}}
	}
	msgs, err := frames(body)
	if err != nil {
		return []Violation{{path, err.Error()}}
	}
	if len(msgs) != 1 {
		return []Violation{{path, fmt.Sprintf("%d request messages in a unary call", len(msgs))}}
	}
	return checkMessage(string(md.Input().FullName()), md.Input(), msgs[0])
}

// GRPCAnswer checks a unary gRPC answer: HTTP 200, application/grpc, a
// grpc-status trailer, and either one output message (status 0) or a
// grpc-message and, when present, a google.rpc.Status in
// grpc-status-details-bin with the same code and registered detail types.
// h holds the trailers too, as the http.TrailerPrefix keys a handler sets
// or as plain keys.
func GRPCAnswer(path string, status int, h http.Header, body []byte) []Violation {
	md, err := grpcMethod(path)
	if err != nil {
		return []Violation{{path, err.Error()}}
	}
	var vs []Violation
	bad := func(where, format string, args ...any) {
		vs = append(vs, Violation{where, fmt.Sprintf(format, args...)})
	}
	trailer := func(k string) string {
		if v := h.Get(http.TrailerPrefix + k); v != "" {
			return v
		}
		return h.Get(k)
	}
	if status != http.StatusOK {
		bad("HTTP status", "%d; gRPC answers 200 and puts the outcome in grpc-status", status)
	}
	if ct := h.Get("Content-Type"); !strings.HasPrefix(ct, "application/grpc") {
		bad("Content-Type", "%q, want application/grpc", ct)
	}
	code, err := strconv.Atoi(trailer("Grpc-Status"))
	if err != nil || code < 0 || code > 16 {
		bad("grpc-status", "%q is not a gRPC code", trailer("Grpc-Status"))
		return vs
	}
	msgs, err := frames(body)
	if err != nil {
		return append(vs, Violation{path, err.Error()})
	}
	if code == 0 {
		if len(msgs) != 1 {
			return append(vs, Violation{path, fmt.Sprintf("%d answer messages with status OK, want 1", len(msgs))})
		}
		return append(vs, checkMessage(string(md.Output().FullName()), md.Output(), msgs[0])...)
	}
	if len(msgs) > 0 {
		bad(path, "an error with %d answer messages", len(msgs))
	}
	if msg := trailer("Grpc-Message"); msg == "" {
		bad("grpc-message", "missing")
	} else if _, err := url.PathUnescape(msg); err != nil {
		bad("grpc-message", "not percent-encoded: %v", err)
	}
	if bin := trailer("Grpc-Status-Details-Bin"); bin != "" {
		raw, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(bin, "="))
		if err != nil {
			return append(vs, Violation{"grpc-status-details-bin", "not base64: " + err.Error()})
		}
		_, types := registry()
		mt, err := types.FindMessageByName("google.rpc.Status")
		if err != nil {
			return append(vs, Violation{"grpc-status-details-bin", err.Error()})
		}
		st := mt.New()
		if err := proto.Unmarshal(raw, st.Interface()); err != nil {
			return append(vs, Violation{"grpc-status-details-bin", "not a google.rpc.Status: " + err.Error()})
		}
		vs = append(vs, checkMessage("google.rpc.Status", mt.Descriptor(), raw)...)
		fields := mt.Descriptor().Fields()
		if got := st.Get(fields.ByName("code")).Int(); int(got) != code {
			bad("grpc-status-details-bin", "code %d, grpc-status %d", got, code)
		}
		details := st.Get(fields.ByName("details")).List()
		for i := 0; i < details.Len(); i++ {
			d := details.Get(i).Message()
			df := d.Descriptor().Fields()
			a := &anypb.Any{TypeUrl: d.Get(df.ByName("type_url")).String(), Value: d.Get(df.ByName("value")).Bytes()}
			vs = append(vs, checkAny(fmt.Sprintf("grpc-status-details-bin.details[%d]", i), a)...)
		}
	}
	return vs
}

// checkAny checks a packed detail: a registered type whose bytes hold
// only its fields.
func checkAny(where string, a *anypb.Any) []Violation {
	_, types := registry()
	mt, err := types.FindMessageByURL(a.GetTypeUrl())
	if err != nil {
		return []Violation{{where, fmt.Sprintf("type %q is not a known detail type", a.GetTypeUrl())}}
	}
	if !strings.HasPrefix(a.GetTypeUrl(), "type.googleapis.com/google.rpc.") {
		return []Violation{{where, fmt.Sprintf("type %q is not a google.rpc detail", a.GetTypeUrl())}}
	}
	return checkMessage(where, mt.Descriptor(), a.GetValue())
}

// checkDetail checks one JSON detail of a REST error: an @type naming a
// google.rpc detail type and that type's fields only.
func checkDetail(where string, raw json.RawMessage) []Violation {
	var head struct {
		Type string `json:"@type"`
	}
	if err := json.Unmarshal(raw, &head); err != nil || head.Type == "" {
		return []Violation{{where, "detail without @type"}}
	}
	if !strings.HasPrefix(head.Type, "type.googleapis.com/google.rpc.") {
		return []Violation{{where, fmt.Sprintf("@type %q is not a google.rpc detail", head.Type)}}
	}
	_, types := registry()
	var a anypb.Any
	if err := (protojson.UnmarshalOptions{Resolver: types}).Unmarshal(raw, &a); err != nil {
		return []Violation{{where, err.Error()}}
	}
	return nil
}

// checkMessage decodes b as desc and walks it: no unknown fields, every
// REQUIRED field set, every enum value defined, and each TimeSeries'
// points of its value_type.
func checkMessage(where string, desc protoreflect.MessageDescriptor, b []byte) []Violation {
	m := dynamicpb.NewMessage(desc)
	if err := proto.Unmarshal(b, m); err != nil {
		return []Violation{{where, err.Error()}}
	}
	var vs []Violation
	walk(&vs, where, m)
	return vs
}

func walk(vs *[]Violation, where string, m protoreflect.Message) {
	bad := func(path, format string, args ...any) {
		*vs = append(*vs, Violation{path, fmt.Sprintf(format, args...)})
	}
	desc := m.Descriptor()
	if u := m.GetUnknown(); len(u) > 0 {
		bad(where, "%d bytes of fields %s does not define", len(u), desc.FullName())
	}
	fields := desc.Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		if required(fd) && !m.Has(fd) && !zeroIsAValue(fd) {
			bad(where+"."+string(fd.Name()), "REQUIRED field is not set")
		}
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		path := where + "." + string(fd.Name())
		switch {
		case fd.IsList():
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				walkValue(vs, fmt.Sprintf("%s[%d]", path, i), fd, l.Get(i))
			}
		case fd.IsMap():
			v.Map().Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
				walkValue(vs, path+"["+k.String()+"]", fd.MapValue(), mv)
				return true
			})
		default:
			walkValue(vs, path, fd, v)
		}
		return true
	})
	if desc.FullName() == "google.monitoring.v3.TimeSeries" {
		checkPointTypes(vs, where, m)
	}
}

func walkValue(vs *[]Violation, path string, fd protoreflect.FieldDescriptor, v protoreflect.Value) {
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		walk(vs, path, v.Message())
	case protoreflect.EnumKind:
		if fd.Enum().Values().ByNumber(v.Enum()) == nil {
			*vs = append(*vs, Violation{path, fmt.Sprintf("%d is not a value of %s", v.Enum(), fd.Enum().FullName())})
		}
	}
}

// zeroIsAValue: a proto3 scalar without presence is "unset" at its zero,
// which for an enum whose zero is a real value (ListTimeSeriesRequest.view
// FULL) or a number is indistinguishable from sending it.
func zeroIsAValue(fd protoreflect.FieldDescriptor) bool {
	if fd.HasPresence() || fd.IsList() || fd.IsMap() {
		return false
	}
	switch fd.Kind() {
	case protoreflect.StringKind, protoreflect.BytesKind:
		return false
	case protoreflect.EnumKind:
		zero := fd.Enum().Values().ByNumber(0)
		return zero != nil && !strings.HasSuffix(string(zero.Name()), "_UNSPECIFIED")
	}
	return true
}

// required reads google.api.field_behavior REQUIRED from a field's
// options: an extension field where the extension is linked into the
// binary, else its unknown bytes.
func required(fd protoreflect.FieldDescriptor) bool {
	opts := fd.Options()
	if opts == nil {
		return false
	}
	m := opts.ProtoReflect()
	found := false
	m.Range(func(f protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if f.Number() == fieldBehaviorNumber && f.IsList() {
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				found = found || l.Get(i).Enum() == behaviorRequired
			}
		}
		return !found
	})
	for b := m.GetUnknown(); len(b) > 0 && !found; {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			break
		}
		b = b[n:]
		var val []byte
		switch typ {
		case protowire.VarintType:
			v, k := protowire.ConsumeVarint(b)
			if k < 0 {
				return found
			}
			if num == fieldBehaviorNumber && v == behaviorRequired {
				found = true
			}
			b = b[k:]
			continue
		case protowire.BytesType:
			v, k := protowire.ConsumeBytes(b)
			if k < 0 {
				return found
			}
			val, b = v, b[k:]
		default:
			k := protowire.ConsumeFieldValue(num, typ, b)
			if k < 0 {
				return found
			}
			b = b[k:]
			continue
		}
		for num == fieldBehaviorNumber && len(val) > 0 { // packed
			v, k := protowire.ConsumeVarint(val)
			if k < 0 {
				break
			}
			found = found || v == behaviorRequired
			val = val[k:]
		}
	}
	return found
}

// checkPointTypes: a TimeSeries' points carry the value of its value_type
// (metric.proto: "the value type of the time series", the points'
// TypedValue must be of it).
func checkPointTypes(vs *[]Violation, where string, ts protoreflect.Message) {
	fields := ts.Descriptor().Fields()
	vt := fields.ByName("value_type")
	if !ts.Has(vt) {
		return
	}
	want := strings.ToLower(string(vt.Enum().Values().ByNumber(ts.Get(vt).Enum()).Name())) + "_value"
	points := ts.Get(fields.ByName("points")).List()
	for i := 0; i < points.Len(); i++ {
		p := points.Get(i).Message()
		val := p.Get(p.Descriptor().Fields().ByName("value")).Message()
		oneof := val.Descriptor().Oneofs().ByName("value")
		if got := val.WhichOneof(oneof); got != nil && string(got.Name()) != want {
			*vs = append(*vs, Violation{fmt.Sprintf("%s.points[%d].value", where, i), fmt.Sprintf("%s in a series of value_type %s", got.Name(), strings.ToUpper(strings.TrimSuffix(want, "_value")))})
		}
	}
}
