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
	"unicode/utf8"

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

// checkMessage walks the wire bytes of a desc message: no field desc does
// not define, each field's wire type its kind's, every REQUIRED field set,
// every enum value defined, strings UTF-8, and each TimeSeries' points of
// its value_type. It reads the bytes in place (no message is built), so
// that strict mode keeps pace with large ListTimeSeries answers.
func checkMessage(where string, desc protoreflect.MessageDescriptor, b []byte) []Violation {
	var vs []Violation
	walk(&vs, where, desc, b)
	return vs
}

// requiredCache maps a message's full name to its REQUIRED fields.
var requiredCache sync.Map

func requiredFields(desc protoreflect.MessageDescriptor) []protoreflect.FieldDescriptor {
	if v, ok := requiredCache.Load(desc.FullName()); ok {
		return v.([]protoreflect.FieldDescriptor)
	}
	var out []protoreflect.FieldDescriptor
	fields := desc.Fields()
	for i := 0; i < fields.Len(); i++ {
		if fd := fields.Get(i); required(fd) && !zeroIsAValue(fd) {
			out = append(out, fd)
		}
	}
	requiredCache.Store(desc.FullName(), out)
	return out
}

func walk(vs *[]Violation, where string, desc protoreflect.MessageDescriptor, b []byte) {
	bad := func(path, format string, args ...any) {
		*vs = append(*vs, Violation{path, fmt.Sprintf(format, args...)})
	}
	fields := desc.Fields()
	req := requiredFields(desc)
	seen := make([]bool, len(req))
	series := desc.FullName() == "google.monitoring.v3.TimeSeries"
	valueType := protoreflect.EnumNumber(-1)
	var pointValues []protoreflect.Name
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			bad(where, "malformed field tag")
			return
		}
		b = b[n:]
		fd := fields.ByNumber(num)
		if fd == nil {
			bad(where, "field %d is not one %s defines", num, desc.FullName())
			if m := protowire.ConsumeFieldValue(num, typ, b); m >= 0 {
				b = b[m:]
				continue
			}
			return
		}
		for i, r := range req {
			if r == fd {
				seen[i] = true
			}
		}
		kind := fd.Kind()
		switch typ {
		case protowire.VarintType:
			v, m := protowire.ConsumeVarint(b)
			if m < 0 {
				bad(where+"."+string(fd.Name()), "malformed varint")
				return
			}
			b = b[m:]
			if !varintKind(kind) {
				bad(where+"."+string(fd.Name()), "varint where %s is %s", fd.FullName(), kind)
			}
			if kind == protoreflect.EnumKind {
				checkEnum(vs, where, fd, v)
				if series && fd.Name() == "value_type" {
					valueType = protoreflect.EnumNumber(v)
				}
			}
		case protowire.Fixed32Type, protowire.Fixed64Type:
			m := protowire.ConsumeFieldValue(num, typ, b)
			if m < 0 {
				bad(where+"."+string(fd.Name()), "malformed fixed-size value")
				return
			}
			b = b[m:]
			if want := fixedType(kind); want != typ {
				bad(where+"."+string(fd.Name()), "fixed-size value where %s is %s", fd.FullName(), kind)
			}
		case protowire.BytesType:
			v, m := protowire.ConsumeBytes(b)
			if m < 0 {
				bad(where+"."+string(fd.Name()), "malformed length-delimited value")
				return
			}
			b = b[m:]
			switch {
			case kind == protoreflect.MessageKind:
				walk(vs, where+"."+string(fd.Name()), fd.Message(), v)
				if series && fd.Name() == "points" {
					pointValues = append(pointValues, pointValue(fd.Message(), v))
				}
			case kind == protoreflect.StringKind:
				if !utf8.Valid(v) {
					bad(where+"."+string(fd.Name()), "string is not UTF-8")
				}
			case kind == protoreflect.BytesKind:
			case fd.IsList() && varintKind(kind): // packed
				for len(v) > 0 {
					x, k := protowire.ConsumeVarint(v)
					if k < 0 {
						bad(where+"."+string(fd.Name()), "malformed packed varint")
						break
					}
					v = v[k:]
					if kind == protoreflect.EnumKind {
						checkEnum(vs, where, fd, x)
					}
				}
			case fd.IsList() && fixedType(kind) == protowire.Fixed32Type && len(v)%4 == 0:
			case fd.IsList() && fixedType(kind) == protowire.Fixed64Type && len(v)%8 == 0:
			default:
				bad(where+"."+string(fd.Name()), "length-delimited value where %s is %s", fd.FullName(), kind)
			}
		default:
			bad(where+"."+string(fd.Name()), "wire type %d is not used by proto3", typ)
			m := protowire.ConsumeFieldValue(num, typ, b)
			if m < 0 {
				return
			}
			b = b[m:]
		}
	}
	for i, r := range req {
		if !seen[i] {
			bad(where+"."+string(r.Name()), "REQUIRED field is not set")
		}
	}
	if series && valueType >= 0 {
		vt := fields.ByName("value_type").Enum().Values().ByNumber(valueType)
		if vt == nil {
			return
		}
		want := protoreflect.Name(strings.ToLower(string(vt.Name())) + "_value")
		for i, got := range pointValues {
			if got != "" && got != want {
				bad(fmt.Sprintf("%s.points[%d].value", where, i), "%s in a series of value_type %s", got, vt.Name())
			}
		}
	}
}

// pointValue names the TypedValue field a Point's value sets ("" when none).
func pointValue(point protoreflect.MessageDescriptor, b []byte) protoreflect.Name {
	valueField := point.Fields().ByName("value")
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return ""
		}
		b = b[n:]
		m := protowire.ConsumeFieldValue(num, typ, b)
		if m < 0 {
			return ""
		}
		if num == valueField.Number() && typ == protowire.BytesType {
			v, _ := protowire.ConsumeBytes(b)
			if tnum, _, k := protowire.ConsumeTag(v); k > 0 {
				if f := valueField.Message().Fields().ByNumber(tnum); f != nil {
					return f.Name()
				}
			}
		}
		b = b[m:]
	}
	return ""
}

func checkEnum(vs *[]Violation, where string, fd protoreflect.FieldDescriptor, v uint64) {
	if fd.Enum().Values().ByNumber(protoreflect.EnumNumber(int32(v))) == nil {
		*vs = append(*vs, Violation{where + "." + string(fd.Name()), fmt.Sprintf("%d is not a value of %s", int32(v), fd.Enum().FullName())})
	}
}

func varintKind(k protoreflect.Kind) bool {
	switch k {
	case protoreflect.BoolKind, protoreflect.EnumKind, protoreflect.Int32Kind, protoreflect.Int64Kind, protoreflect.Uint32Kind,
		protoreflect.Uint64Kind, protoreflect.Sint32Kind, protoreflect.Sint64Kind:
		return true
	}
	return false
}

func fixedType(k protoreflect.Kind) protowire.Type {
	switch k {
	case protoreflect.Fixed32Kind, protoreflect.Sfixed32Kind, protoreflect.FloatKind:
		return protowire.Fixed32Type
	case protoreflect.Fixed64Kind, protoreflect.Sfixed64Kind, protoreflect.DoubleKind:
		return protowire.Fixed64Type
	}
	return -1
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
