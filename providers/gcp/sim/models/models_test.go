package models

import (
	"encoding/binary"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoregistry"
)

func TestDocumentsLoad(t *testing.T) {
	for api, n := range map[string]int{"compute": 12, "cloudbilling": 1, "cloudresourcemanager": 1, "monitoring": 1} {
		d := MustLoad(api)
		if got := len(d.MethodIDs()); got != n || !strings.Contains(d.Source, "google.golang.org/api@") {
			t.Errorf("%s: %d methods (want %d), source %q", api, got, n, d.Source)
		}
	}
}

// TestRequiredWithoutTheExtensionLinked: this test binary links no
// google.api.field_behavior (nothing here imports genproto), so REQUIRED is
// read from the options' unknown bytes.
func TestRequiredWithoutTheExtensionLinked(t *testing.T) {
	if _, err := protoregistry.GlobalTypes.FindExtensionByName("google.api.field_behavior"); err == nil {
		t.Skip("google.api.field_behavior is linked into this binary")
	}
	// ListTimeSeriesRequest{filter: "x"}: name, interval missing.
	msg := protowire.AppendString(protowire.AppendTag(nil, 2, protowire.BytesType), "x")
	body := append(binary.BigEndian.AppendUint32([]byte{0}, uint32(len(msg))), msg...)
	vs := GRPCRequest(ListTimeSeries, body)
	var missing []string
	for _, v := range vs {
		if strings.Contains(v.Problem, "REQUIRED") {
			missing = append(missing, v.Path)
		}
	}
	if len(missing) != 2 {
		t.Errorf("REQUIRED fields missing: %v, want name and interval (all: %v)", missing, vs)
	}
}
