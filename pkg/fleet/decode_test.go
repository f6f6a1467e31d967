package fleet

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unsafe"
)

// parseBoth parses data piecewise and as a whole tree.
func parseBoth(name string, data []byte) (piece *Fleet, perr error, tree *Fleet, terr error) {
	piece, perr = Parse(name, data)
	piecewise = false
	defer func() { piecewise = true }()
	tree, terr = Parse(name, data)
	return
}

func sameResult(t *testing.T, name string, data []byte) {
	t.Helper()
	piece, perr, tree, terr := parseBoth(name, data)
	if (perr == nil) != (terr == nil) || (perr != nil && perr.Error() != terr.Error()) {
		t.Fatalf("%s: piecewise error %v, whole-tree error %v\ninput: %q", name, perr, terr, data)
	}
	if !reflect.DeepEqual(piece, tree) {
		a, _ := json.Marshal(piece)
		b, _ := json.Marshal(tree)
		t.Fatalf("%s: piecewise fleet %s, whole-tree fleet %s", name, a, b)
	}
}

const validDoc = `{"apiVersion": "gpufinops/v1", "kind": "Fleet", "metadata": {"name": "x", "generatedAt": "2026-11-30T00:00:00Z"},
 "instances": [
  {"id": "a", "provider": "aws", "region": "us-east-1", "instanceType": "g5.xlarge", "tags": {"team": "ml"},
   "utilization": {"samples": [{"time": "2026-11-29T00:00:00Z", "gpu": [1, 2]}, {"time": "2026-11-29T01:00:00Z", "gpu": 3}]}},
  {"id": "b", "provider": "gcp", "region": "us-central1", "instanceType": "a2-highgpu-1g", "hourlyPrice": 3.10,
   "usage": {"schedule": {"timezone": "Asia/Kolkata", "windows": [{"days": ["sat"], "start": "23:29", "end": "24:00"}]}}}
 ]}`

// TestPiecewiseMatchesTree: the piecewise decoder gives the same fleet and
// the same error as decoding the whole tree, for valid documents and for
// errors at the top level, in the metadata and in any instance.
func TestPiecewiseMatchesTree(t *testing.T) {
	docs := []string{
		validDoc,
		`{"instances": [], "kind": "Fleet", "apiVersion": "gpufinops/v1"}`,
		`{"instances": [{"id": "x", "bogus": 1}], "apiVersion": "gpufinops/v1", "kind": "Fleet"}`,
		`{"instances": [{"id": "x", "bogus": 1}], "apiVersion": "gpufinops/v2", "kind": "Fleet"}`,
		`{"instances": [{"id": "x", "bogus": 1}], "apiVersion": "gpufinops/v1", "kind": "Fleet", "extra": true}`,
		`{"instances": [{"id": "x", "bogus": 1}], "apiVersion": "gpufinops/v1", "kind": "Fleet", "metadata": {"name": 3}}`,
		`{"apiVersion": "gpufinops/v1", "kind": "Fleet", "instances": null}`,
		`{"apiVersion": "gpufinops/v1", "kind": "Fleet"}`,
		`{"apiVersion": "gpufinops/v1", "kind": "Fleet", "instances": {"id": "a"}}`,
		`{"apiVersion": "gpufinops/v1", "kind": "Fleet", "instances": "all"}`,
		`{"apiVersion": "gpufinops/v1", "kind": "Fleet", "instances": [null]}`,
		`{"apiVersion": "gpufinops/v1", "kind": "Fleet", "instances": [1, {"id": "b"}]}`,
		`{"apiVersion": "gpufinops/v1", "kind": "Fleet", "instances": [{"id": "a", "provider": "aws", "region": "r", "instanceType": "t"}, {"id": "b", "gpu": {"count": "8"}}]}`,
		`{"apiVersion": "gpufinops/v1", "kind": "Fleet", "instances": [{"id": "a", "id": "b"}]}`,
		`{"apiVersion": "gpufinops/v1", "kind": "Fleet", "instances": [], "instances": []}`,
		`{"apiVersion": "gpufinops/v1", "kind": "Fleet", "instances": [{"id": "a", "launchTime": "yesterday"}]}`,
		`{"apiVersion": "gpufinops/v1", "kind": "Fleet", "instances": [{"id": "a", "hourlyPrice": "cheap"}]}`,
		`{"apiVersion": "gpufinops/v1", "kind": "Fleet", "instances": [{"id": "a", "vcpus": 1e999}]}`,
		`{"apiVersion": "gpufinops/v1", "kind": "Fleet", "instances": [{"id": "a"}]} trailing`,
		`{"apiVersion": "gpufinops/v1", "kind": "Fleet", "instances": [{"id": "a"}`,
		`{"apiVersion": "gpufinops/v1", "kind": "Fleet", "instances": [{"id": "a",}]}`,
		`  {"apiVersion": "gpufinops/v1", "kind": "Fleet", "metadata": null, "instances": []}`,
		`{}`,
		`{"apiVersion": null, "kind": "Fleet", "instances": []}`,
		// Top-level keys spelt with escapes or invalid UTF-8 read as
		// encoding/json reads them.
		`{"apiVersion": "gpufinops/v1", "kind": "Fleet", "instanc\u0065s": [{"id": "a", "provider": "aws", "region": "r", "instanceType": "t"}]}`,
		`{"api\u0056ersion": "gpufinops/v1", "\u006bind": "Fleet", "instances": []}`,
		`{"apiVersion": "gpufinops/v1", "kind": "Fleet", "instances": [], "\u0089": {}}`,
		"{\"instances\":[],\"kind\":\"Fleet\",\"apiVersion\":\"gpufinops/v1\",\"\x89\":{}}",
		"{\"instances\":[],\"kind\":\"Fleet\",\"apiVersion\":\"gpufinops/v1\",\"a\x89\xff\\n\":{}}",
		`{"apiVersion": "gpufinops/v1", "kind": "Fleet", "instances": [], "instanc\u0065s": [{"id": "a"}]}`,
	}
	for _, d := range docs {
		sameResult(t, "fleet.json", []byte(d))
		sameResult(t, "fleet", []byte(d))
	}
	yamlDocs := []string{
		"apiVersion: gpufinops/v1\nkind: Fleet\ninstances:\n- id: a\n  provider: aws\n  region: us-east-1\n  instanceType: g5.xlarge\n",
		"apiVersion: gpufinops/v1\nkind: Fleet\ninstances:\n- id: a\n  bogus: 1\n",
		"kind: Fleet\ninstances: []\n",
	}
	for _, d := range yamlDocs {
		sameResult(t, "fleet.yaml", []byte(d))
	}
	// Every truncation of a valid document.
	for n := range len(validDoc) {
		if n%3 == 0 || strings.ContainsRune("{}[],:", rune(validDoc[n])) {
			sameResult(t, "fleet.json", []byte(validDoc[:n]))
		}
	}
}

// FuzzParsePiecewise: on any input Parse does not panic, and the piecewise
// decoder agrees with decoding the whole tree.
func FuzzParsePiecewise(f *testing.F) {
	f.Add([]byte(validDoc))
	f.Add([]byte(`{"apiVersion": "gpufinops/v1", "kind": "Fleet", "instances": [null, 1, {"id": "a", "x": 2}]}`))
	f.Add([]byte(`{"instances": [], "kind": "Fleet", "apiVersion": "gpufinops/v1", "metadata": {"name": "n"}}`))
	f.Add([]byte(`{"apiVersion": "gpufinops/v1", "kind": "Fleet", "commitments": [{"id": "c", "provider": "gcp", "kind": "resource-cud", "term": "1y",
	 "scope": {"region": "r"}, "resources": [{"type": "gpu", "gpuModel": "L4", "amount": 4}], "hourlyCommitment": 1e400}], "instances": []}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		sameResult(t, "fleet.json", data)
	})
}

func TestDecodeLargeInterns(t *testing.T) {
	doc := `{"apiVersion": "gpufinops/v1", "kind": "Fleet", "instances": [
	  {"id": "i-1", "provider": "aws", "region": "us-east-1", "instanceType": "g5.xlarge", "tags": {"Team": "ml"}},
	  {"id": "i-2", "provider": "aws", "region": "us-east-1", "instanceType": "g5.xlarge", "tags": {"Team": "ml"}}]}`
	f, err := Parse("f.json", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	a, b := f.Instances[0], f.Instances[1]
	same := func(what, x, y string) {
		t.Helper()
		if x != y || unsafe.StringData(x) != unsafe.StringData(y) {
			t.Errorf("%s: %q and %q are two strings", what, x, y)
		}
	}
	same("region", a.Region, b.Region)
	same("instance type", a.InstanceType, b.InstanceType)
	same("tag value", a.Tags["Team"], b.Tags["Team"])
	for ka := range a.Tags {
		for kb := range b.Tags {
			same("tag key", ka, kb)
		}
	}
	if a.ID == b.ID {
		t.Error("IDs merged")
	}
}

// TestPiecewiseSharedTimes: instances that share their windows' date-times
// (in UTC and at offsets, spelled alike or not) among samples of their own
// decode piecewise, where the date-times read before are kept for the
// whole document, as the whole tree decodes them.
func TestPiecewiseSharedTimes(t *testing.T) {
	starts := []string{"2026-11-16T00:00:00Z", "2026-11-16T02:00:00+02:00", "2026-11-16T00:00:00.000Z", "2026-11-15T19:00:00-05:00"}
	var b strings.Builder
	b.WriteString(`{"apiVersion": "gpufinops/v1", "kind": "Fleet", "instances": [`)
	for i := range 60 {
		if i > 0 {
			b.WriteString(",")
		}
		start := starts[i%len(starts)]
		if i%7 == 6 {
			start = fmt.Sprintf("2026-11-%02dT00:00:00Z", 1+i%28) // a window of its own
		}
		fmt.Fprintf(&b, `{"id": "i-%d", "provider": "aws", "region": "us-east-1", "instanceType": "g5.xlarge",
 "utilization": {"window": {"start": %q, "end": "2026-11-30T00:00:00Z"}, "samples": [`, i, start)
		for k := range 1 + i%5 {
			if k > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `{"time": "2026-11-29T%02d:%02d:00Z", "gpu": %d}`, k, i%60, 10+k)
		}
		b.WriteString(`]}}`)
	}
	b.WriteString(`]}`)
	sameResult(t, "shared-times.json", []byte(b.String()))
}
