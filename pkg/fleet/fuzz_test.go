package fleet

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
)

// heldYAML is a fleet with a commitments section before its instances.
const heldYAML = `apiVersion: gpufinops/v1
kind: Fleet
commitments:
  - id: ri-1
    provider: aws
    kind: standard-reserved-instance
    term: 1y
    instanceType: g5.xlarge
    count: 2
    sizeFlexible: true
    hourlyRate: 0.62
  - id: cud-1
    provider: gcp
    kind: resource-cud
    term: 3y
    scope: {level: region, region: europe-west4}
    resources: [{type: gpu, gpuModel: L4, amount: 4}, {type: vcpu, amount: 48}]
instances:
  - id: a
    provider: aws
    region: us-east-1
    instanceType: g5.xlarge
    lifecycle: committed
    commitment: {id: ri-1}
`

// FuzzFleet: the reader never panics; every error is an *Error on one line
// naming the file; every fleet it accepts passes Validate and round-trips:
// written as JSON and as YAML it reads back, and writes the same bytes again;
// those bytes are the whole document's, though written an instance at a time.
func FuzzFleet(f *testing.F) {
	for _, p := range []string{"testdata/full.yaml.golden", "testdata/full.json.golden"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, strings.HasSuffix(p, ".yaml.golden"))
	}
	for _, s := range []string{
		oneYAML,
		oneYAML + "---\n" + oneYAML,
		oneYAML + "...\n",
		strings.Replace(oneYAML, "instanceType: g5.xlarge", "instanceType: g5.xlarge\n    gpu: {count: .nan}", 1),
		strings.Replace(oneYAML, "instanceType: g5.xlarge", "instanceType: g5.xlarge\n    hourlyPrice: 1e6000", 1),
		strings.Replace(oneYAML, "instanceType: g5.xlarge", "instanceType: g5.xlarge\n    usage: {schedule: {timezone: Europe/Berlin, windows: [{days: [sat], start: \"23:00\", end: \"23:59\"}]}}", 1),
		strings.Replace(oneYAML, "instanceType: g5.xlarge", "instanceType: g5.xlarge\n    utilization:\n      samples:\n        - {time: \"2026-11-30T00:00:00Z\", gpu: [1, 2]}", 1),
		"apiVersion: gpufinops/v1\nkind: Fleet\ninstances: []\n",
		heldYAML,
		strings.Replace(heldYAML, "count: 2", "count: .nan", 1),
		strings.Replace(heldYAML, "term: 1y", "term: 2y", 1),
		"instances: [{id: a}]\n",
		"\t- x\n",
		"a: &a [*a]\n",
		"[]", "null", "{}", "",
	} {
		f.Add([]byte(s), true)
	}
	for _, s := range []string{
		`{"apiVersion": "gpufinops/v1", "kind": "Fleet", "instances": []}`,
		`{"apiVersion": "gpufinops/v1", "kind": "Fleet", "instances": []} {}`,
		`{"apiVersion": "gpufinops/v1", "kind": "Fleet", "kind": "Fleet", "instances": []}`,
		`{"apiVersion": "gpufinops/v1", "kind": "Fleet", "instances": [{"id": "a", "provider": "aws", "region": "r", "instanceType": "t", "gpu": {"count": 1e309}}]}`,
		`{"apiVersion": "gpufinops/v1", "kind": "Fleet", "instances": [{"id": "a", "provider": "aws", "region": "r", "instanceType": "t", "hourlyPrice": -0}]}`,
		`{"apiVersion": "gpufinops/v1", "kind": "Fleet", "instances": [{"id": "a", "provider": "aws", "region": "r", "instanceType": "t", "utilization": {"samples": [{"time": "2026-11-30T00:00:00Z", "gpu": 1e-400}]}}]}`,
		`{"apiVersion": "gpufinops/v1", "kind": "Fleet", "instances": [{"id": "a\u2028", "provider": "aws", "region": "r\n", "instanceType": "t"}]}`,
	} {
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, data []byte, asYAML bool) {
		name := "f.json"
		if asYAML {
			name = "f.yaml"
		}
		fl, err := Parse(name, data)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.File != name {
				t.Fatalf("error %v is not an *Error naming %s", err, name)
			}
			if strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("error on several lines: %q", err)
			}
			return
		}
		if err := fl.Validate(); err != nil {
			t.Fatalf("accepted a fleet that does not validate: %v", err)
		}
		for _, format := range []string{FormatJSON, FormatYAML} {
			b, err := Marshal(fl, format)
			if err != nil {
				t.Fatalf("%s: %v", format, err)
			}
			if whole, err := marshalWhole(fl, format); err != nil || !bytes.Equal(b, whole) {
				t.Fatalf("%s: streamed encoding is not the whole document's (%v):\n%s\n---\n%s", format, err, b, whole)
			}
			again, err := Parse("again."+format, b)
			if err != nil {
				t.Fatalf("%s does not read back: %v\n%s", format, err, b)
			}
			b2, err := Marshal(again, format)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(b, b2) {
				t.Fatalf("%s round trip changed the fleet:\n%s\n---\n%s", format, b, b2)
			}
		}
	})
}
