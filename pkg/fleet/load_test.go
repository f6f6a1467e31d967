package fleet

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/testutil"
)

const fleetsDir = "../../testdata/fleets"

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// validFleets are the fleet files under testdata/fleets that must parse.
func validFleets(t *testing.T) []string {
	t.Helper()
	var paths []string
	for _, pat := range []string{"*.yaml", "*.json"} {
		m, err := filepath.Glob(filepath.Join(fleetsDir, pat))
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, m...)
	}
	if len(paths) < 3 {
		t.Fatalf("found only %d fleet files in %s", len(paths), fleetsDir)
	}
	return paths
}

func TestParseValidFiles(t *testing.T) {
	for _, path := range validFleets(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			f, err := Parse(filepath.Base(path), readFile(t, path))
			if err != nil {
				t.Fatal(err)
			}
			if len(f.Instances) == 0 {
				t.Error("no instances")
			}
		})
	}
}

func TestParseInvalidFiles(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{"wrong-api-version.yaml", `wrong-api-version.yaml: apiVersion: found "gpufinops/v2", want "gpufinops/v1"`},
		{"bad-yaml.yaml", `bad-yaml.yaml: line 5: did not find expected '-' indicator`},
		{"bad-json.json", `bad-json.json: line 5, column 92: invalid character '}' looking for beginning of object key string`},
		{"utilization-140.yaml", `utilization-140.yaml: instances[2] (id "nb-3"): utilization.gpu.p95: 140 is outside 0–100`},
		{"negative-hours.yaml", `negative-hours.yaml: instances[0] (id "ft-1"): usage.hoursPerWeek: -40 is negative`},
		{"unknown-provider.yaml", `unknown-provider.yaml: instances[0] (id "oci-1"): provider: "oracle" is not one of aws, azure, gcp`},
		{"duplicate-id.yaml", `duplicate-id.yaml: instances[1] (id "infer-1"): id: "infer-1" is already the id of instances[0]`},
		{"unknown-field.yaml", `unknown-field.yaml: instances[0] (id "infer-1"): unknown field "utilisation" (did you mean "utilization"?)`},
	} {
		t.Run(tc.file, func(t *testing.T) {
			_, err := Parse(tc.file, readFile(t, filepath.Join(fleetsDir, "invalid", tc.file)))
			if err == nil {
				t.Fatal("no error")
			}
			if err.Error() != tc.want {
				t.Errorf("got  %s\nwant %s", err, tc.want)
			}
			var fe *Error
			if !errors.As(err, &fe) || fe.File != tc.file {
				t.Errorf("error %T does not carry the file name", err)
			}
		})
	}
}

// base is a valid instance; cases append lines to it.
const base = `apiVersion: gpufinops/v1
kind: Fleet
instances:
  - id: x-1
    provider: aws
    region: us-east-1
    instanceType: g5.xlarge
`

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ name, doc, want string }{
		{"empty", "", "f.yaml: the document is empty; want apiVersion, kind and instances"},
		{"list", "- 1\n", "f.yaml: the document is a list; want a mapping with apiVersion, kind and instances"},
		{"no apiVersion", "kind: Fleet\n", `f.yaml: apiVersion: missing; want "gpufinops/v1"`},
		{"wrong kind", "apiVersion: gpufinops/v1\nkind: Deployment\n", `f.yaml: kind: found "Deployment", want "Fleet"`},
		{"kind not a string", "apiVersion: gpufinops/v1\nkind: 3\n", `f.yaml: kind: found 3, want "Fleet"`},
		{"no instances", "apiVersion: gpufinops/v1\nkind: Fleet\n", `f.yaml: instances: missing; give a list (it may be empty)`},
		{"top-level typo", base + "metdata: {}\n", `f.yaml: unknown field "metdata" (did you mean "metadata"?)`},
		{"nested unknown", base + "    utilization: {gpu: {avg: 1, p90: 2, max: 3}}\n", `f.yaml: instances[0] (id "x-1"): utilization.gpu: unknown field "p90" (did you mean "p95"?)`},
		{"unknown, no suggestion", base + "    owner: me\n", `f.yaml: instances[0] (id "x-1"): unknown field "owner"; known fields: id, name, provider, account, region, zone, instanceType, gpu, vcpus, memoryGiB, lifecycle, state, launchTime, usage, tags, utilization, workload, hourlyPrice, managedBy, instanceStoreGB, hibernation, stoppedAllocated, spotInterruption, placementGroups, resourcePolicies, commitment, managed`},
		{"duplicate key", base + "    region: eu-west-1\n", `f.yaml: line 8: key "region" already set in map`},
		{"tab", "apiVersion: gpufinops/v1\n\tkind: Fleet\n", `f.yaml: line 2: found a tab character that violates indentation`},
		{"leading tab", "\tapiVersion: gpufinops/v1\n", `f.yaml: line 1: found character that cannot start any token (a tab; YAML indents with spaces)`},
		{"number for string", strings.Replace(base, "region: us-east-1", "region: 42", 1), `f.yaml: instances[0] (id "x-1"): region: want a string, got the number 42; quote it`},
		{"yes for string", strings.Replace(base, "region: us-east-1", "region: no", 1), `f.yaml: instances[0] (id "x-1"): region: want a string, got false; quote it`},
		{"string for number", base + "    vcpus: many\n", `f.yaml: instances[0] (id "x-1"): vcpus: want a number, got the string "many"`},
		{"bad time", base + "    launchTime: 2026-11-09\n", `f.yaml: instances[0] (id "x-1"): launchTime: "2026-11-09" is not a date-time such as 2026-11-30T00:00:00Z`},
		{"price as string", base + "    hourlyPrice: \"1.0\"\n", `f.yaml: instances[0] (id "x-1"): hourlyPrice: want a number, got the string "1.0"`},
		{"negative price", base + "    hourlyPrice: -1.5\n", `f.yaml: instances[0] (id "x-1"): hourlyPrice: -1.5 is negative`},
		{"per-GPU not numbers", base + "    utilization: {samples: [{time: \"2026-11-23T00:00:00Z\", gpu: [1, x]}]}\n", `f.yaml: instances[0] (id "x-1"): utilization.samples[0].gpu[1]: want a number, got the string "x"`},
		{"per-GPU mapping", base + "    utilization: {samples: [{time: \"2026-11-23T00:00:00Z\", gpu: {a: 1}}]}\n", `f.yaml: instances[0] (id "x-1"): utilization.samples[0].gpu: want a number or a list of numbers (one per GPU), got a mapping`},
		{"instances not a list", "apiVersion: gpufinops/v1\nkind: Fleet\ninstances: {id: x}\n", `f.yaml: instances: want a list, got a mapping`},
		{"missing id", strings.Replace(base, "id: x-1", "name: x-1", 1), `f.yaml: instances[0]: id: missing`},
		{"missing provider", strings.Replace(base, "    provider: aws\n", "", 1), `f.yaml: instances[0] (id "x-1"): provider: missing; want one of aws, azure, gcp`},
		{"missing region", strings.Replace(base, "    region: us-east-1\n", "", 1), `f.yaml: instances[0] (id "x-1"): region: missing`},
		{"missing type", strings.Replace(base, "    instanceType: g5.xlarge\n", "", 1), `f.yaml: instances[0] (id "x-1"): instanceType: missing`},
		{"lifecycle", base + "    lifecycle: reserved\n", `f.yaml: instances[0] (id "x-1"): lifecycle: "reserved" is not one of on-demand, spot, committed`},
		{"stopped yet allocated", base + "    state: stopped\n    stoppedAllocated: true\n", `f.yaml: instances[0] (id "x-1"): stoppedAllocated: true with state stopped; a machine still allocated is billed: its state is running`},
		{"managed service", base + "    managed: {service: bedrock, kind: endpoint}\n", `f.yaml: instances[0] (id "x-1"): managed.service: "bedrock" is not one of sagemaker, vertex-ai, azure-ml`},
		{"managed kind missing", base + "    managed: {service: sagemaker}\n", `f.yaml: instances[0] (id "x-1"): managed.kind: missing; want one of endpoint, notebook, studio-app, training-job, processing-job, compute-cluster`},
		{"managed replicas", base + "    managed: {service: sagemaker, kind: endpoint, replicas: {current: -1}}\n", `f.yaml: instances[0] (id "x-1"): managed.replicas.current: -1 is not a count from 0 to 10000`},
		{"managed replicas fraction", base + "    managed: {service: sagemaker, kind: endpoint, replicas: {current: 1.5}}\n", `f.yaml: instances[0] (id "x-1"): managed.replicas.current: want a whole number, got 1.5`},
		{"managed min above max", base + "    managed: {service: azure-ml, kind: compute-cluster, replicas: {current: 1, min: 3, max: 2}}\n", `f.yaml: instances[0] (id "x-1"): managed.replicas.min: 3 is above replicas.max 2`},
		{"managed requests", base + "    managed: {service: vertex-ai, kind: endpoint, requests: -3}\n", `f.yaml: instances[0] (id "x-1"): managed.requests: -3 is not a number of requests from 0 to 1000000000000000`},
		{"managed idle shutdown", base + "    managed: {service: azure-ml, kind: notebook, idleShutdownMinutes: 1e7}\n", `f.yaml: instances[0] (id "x-1"): managed.idleShutdownMinutes: 10000000 is not a number of minutes from 0 to 1000000`},
		{"state", base + "    state: terminated\n", `f.yaml: instances[0] (id "x-1"): state: "terminated" is not one of running, stopped`},
		{"gpu count", base + "    gpu: {count: -1}\n", `f.yaml: instances[0] (id "x-1"): gpu.count: -1 is negative`},
		{"gpu memory", base + "    gpu: {memoryGiB: -24}\n", `f.yaml: instances[0] (id "x-1"): gpu.memoryGiB: -24 is negative`},
		{"absurd gpu memory", base + "    gpu: {memoryGiB: 1e300}\n", `f.yaml: instances[0] (id "x-1"): gpu.memoryGiB: 1e+300 is above the limit of 1024 GiB`},
		{"model params NaN tag", base + "    tags: {WorkloadType: Inference, ModelParams: NaN}\n", `f.yaml: instances[0] (id "x-1"): tags: "ModelParams" "NaN" is not a parameter count such as 8B or 350M (above 0, at most 100000 billion)`},
		{"model params, two bad spellings", base + "    tags: {WorkloadType: Inference, model_params: x, ModelParams: NaN, Model-Params: \"\"}\n", `f.yaml: instances[0] (id "x-1"): tags: "ModelParams" "NaN" is not a parameter count such as 8B or 350M (above 0, at most 100000 billion)`},
		{"model params absurd tag", base + "    tags: {workload_type: training, model-params: 1e300B}\n", `f.yaml: instances[0] (id "x-1"): tags: "model-params" "1e300B" is not a parameter count such as 8B or 350M (above 0, at most 100000 billion)`},
		{"hours per month", base + "    usage: {hoursPerMonth: 745}\n", `f.yaml: instances[0] (id "x-1"): usage.hoursPerMonth: 745 is more than the 744 hours of the longest month`},
		{"hours per week", base + "    usage: {hoursPerWeek: 169}\n", `f.yaml: instances[0] (id "x-1"): usage.hoursPerWeek: 169 is more than the 168 hours of a week`},
		{"two usage forms", base + "    usage: {hoursPerMonth: 100, hoursPerWeek: 10}\n", `f.yaml: instances[0] (id "x-1"): usage: give at most one of hoursPerMonth, hoursPerWeek and schedule; found hoursPerMonth and hoursPerWeek`},
		{"schedule no windows", base + "    usage: {schedule: {windows: []}}\n", `f.yaml: instances[0] (id "x-1"): usage.schedule.windows: empty; give at least one window (an instance that never runs is state: stopped)`},
		{"schedule bad clock", base + "    usage: {schedule: {windows: [{days: [mon], start: \"8:00\", end: \"20:00\"}]}}\n", `f.yaml: instances[0] (id "x-1"): usage.schedule.windows[0].start: "8:00" is not a time of day in HH:MM form`},
		{"schedule bad day", base + "    usage: {schedule: {windows: [{days: [monday], start: \"08:00\", end: \"20:00\"}]}}\n", `f.yaml: instances[0] (id "x-1"): usage.schedule.windows[0].days[0]: "monday" is not one of mon, tue, wed, thu, fri, sat, sun`},
		{"schedule end before start", base + "    usage: {schedule: {windows: [{days: [mon], start: \"20:00\", end: \"08:00\"}]}}\n", `f.yaml: instances[0] (id "x-1"): usage.schedule.windows[0]: end 08:00 is not after start 20:00`},
		{"schedule time zone", base + "    usage: {schedule: {timezone: Europe/Berln, windows: [{days: [mon], start: \"08:00\", end: \"20:00\"}]}}\n", `f.yaml: instances[0] (id "x-1"): usage.schedule.timezone: "Europe/Berln" is not a known time zone such as Europe/Berlin or UTC`},
		{"window backwards", base + "    utilization: {window: {start: \"2026-11-30T00:00:00Z\", end: \"2026-11-23T00:00:00Z\"}, gpu: {avg: 1, p95: 2, max: 3}}\n", `f.yaml: instances[0] (id "x-1"): utilization.window: end 2026-11-23T00:00:00Z is not after start 2026-11-30T00:00:00Z`},
		{"window without end", base + "    utilization: {window: {start: \"2026-11-30T00:00:00Z\"}}\n", `f.yaml: instances[0] (id "x-1"): utilization.window.end: missing`},
		{"avg above p95", base + "    utilization: {cpu: {avg: 50, p95: 40, max: 60}}\n", `f.yaml: instances[0] (id "x-1"): utilization.cpu: avg 50 is above p95 40`},
		{"p95 above max", base + "    utilization: {memory: {avg: 30, p95: 40, max: 35}}\n", `f.yaml: instances[0] (id "x-1"): utilization.memory: p95 40 is above max 35`},
		{"negative percent", base + "    utilization: {gpuMemory: {avg: -1, p95: 40, max: 45}}\n", `f.yaml: instances[0] (id "x-1"): utilization.gpuMemory.avg: -1 is outside 0–100`},
		{"stats and samples", base + "    utilization: {gpu: {avg: 1, p95: 2, max: 3}, samples: [{time: \"2026-11-23T00:00:00Z\", gpu: 1}]}\n", `f.yaml: instances[0] (id "x-1"): utilization: give either statistics (gpu, gpuMemory, cpu, memory) or samples, not both`},
		{"sample without time", base + "    utilization: {samples: [{gpu: 1}]}\n", `f.yaml: instances[0] (id "x-1"): utilization.samples[0].time: missing`},
		{"sample outside window", base + "    utilization: {window: {start: \"2026-11-23T00:00:00Z\", end: \"2026-11-24T00:00:00Z\"}, samples: [{time: \"2026-11-24T00:00:00Z\", gpu: 1}]}\n", `f.yaml: instances[0] (id "x-1"): utilization.samples[0].time: 2026-11-24T00:00:00Z is outside the window 2026-11-23T00:00:00Z to 2026-11-24T00:00:00Z`},
		{"sample gpu", base + "    utilization: {samples: [{time: \"2026-11-23T00:00:00Z\", gpu: 101}]}\n", `f.yaml: instances[0] (id "x-1"): utilization.samples[0].gpu: 101 is outside 0–100`},
		{"sample second gpu", base + "    utilization: {samples: [{time: \"2026-11-23T00:00:00Z\", gpu: [1, 101]}]}\n", `f.yaml: instances[0] (id "x-1"): utilization.samples[0].gpu[1]: 101 is outside 0–100`},
		{"sample cpu", base + "    utilization: {samples: [{time: \"2026-11-23T00:00:00Z\", gpu: 1, cpu: 200}]}\n", `f.yaml: instances[0] (id "x-1"): utilization.samples[0].cpu: 200 is outside 0–100`},
		{"workload type", base + "    workload: {type: serving}\n", `f.yaml: instances[0] (id "x-1"): workload.type: "serving" is not one of training, fine-tuning, hpo, inference, development, batch`},
		{"coverage above 1", base + "    utilization: {source: prometheus, coverage: 1.5, gpu: {avg: 1, p95: 2, max: 3}}\n", `f.yaml: instances[0] (id "x-1"): utilization.coverage: 1.5 is outside 0–1`},
		{"blank source", base + "    utilization: {source: \" \", gpu: {avg: 1, p95: 2, max: 3}}\n", `f.yaml: instances[0] (id "x-1"): utilization.source: blank; name where the figures came from or leave the field out`},
		{"workload without type", base + "    workload: {model: llama}\n", `f.yaml: instances[0] (id "x-1"): workload.type: missing; want one of training, fine-tuning, hpo, inference, development, batch`},
		{"precision", base + "    workload: {type: inference, precision: fp8}\n", `f.yaml: instances[0] (id "x-1"): workload.precision: "fp8" is not one of fp32, fp16, bf16, int8, int4`},
		{"checkpoints", base + "    workload: {type: training, checkpoints: sometimes}\n", `f.yaml: instances[0] (id "x-1"): workload.checkpoints: want true or false, got the string "sometimes"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("f.yaml", []byte(tc.doc))
			if err == nil {
				t.Fatal("no error")
			}
			if err.Error() != tc.want {
				t.Errorf("got  %s\nwant %s", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Error("error is more than one line")
			}
		})
	}
}

func TestParseJSONErrors(t *testing.T) {
	for _, tc := range []struct{ name, doc, want string }{
		{"truncated", `{"apiVersion": "gpufinops/v1",`, "f.json: line 1, column 31: unexpected end of the document"},
		{"trailing data", `{"apiVersion": "gpufinops/v1", "kind": "Fleet", "instances": []} {}`, "f.json: line 1, column 66: unexpected data after the document"},
		{"duplicate key", `{"apiVersion": "gpufinops/v1", "kind": "Fleet", "instances": [{"id": "a", "id": "b"}]}`, `f.json: instances[0]: key "id" appears twice`},
		{"second line", "{\n  \"kind\": Fleet\n}", "f.json: line 2, column 11: invalid character 'F' looking for beginning of value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("f.json", []byte(tc.doc))
			if err == nil || err.Error() != tc.want {
				t.Errorf("got  %v\nwant %s", err, tc.want)
			}
		})
	}
}

func TestParseSyntaxChoice(t *testing.T) {
	doc := []byte(`{"apiVersion": "gpufinops/v1", "kind": "Fleet", "instances": []}`)
	for _, name := range []string{"f.json", "f.yaml", "<stdin>", "fleet"} {
		if _, err := Parse(name, doc); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	// A byte order mark is skipped.
	if _, err := Parse("f.json", append([]byte("\ufeff"), doc...)); err != nil {
		t.Error(err)
	}
	// YAML read from a pipe is recognised by not starting with "{".
	if _, err := Parse("<stdin>", []byte("apiVersion: gpufinops/v1\nkind: Fleet\ninstances: []\n")); err != nil {
		t.Error(err)
	}
}

func TestParseDefaults(t *testing.T) {
	f, err := Parse("f.yaml", []byte(base))
	if err != nil {
		t.Fatal(err)
	}
	in := f.Instances[0]
	if in.Lifecycle != OnDemand || in.State != Running {
		t.Errorf("lifecycle %q state %q, want on-demand running", in.Lifecycle, in.State)
	}
	if h := in.MonthlyHours(); h != HoursPerMonth {
		t.Errorf("monthly hours %v, want %v", h, HoursPerMonth)
	}
}

func TestParseNullIsAbsent(t *testing.T) {
	f, err := Parse("f.yaml", []byte(base+"    tags:\n    utilization:\n    name: ~\n"))
	if err != nil {
		t.Fatal(err)
	}
	if in := f.Instances[0]; in.Tags != nil || in.Utilization != nil || in.Name != "" {
		t.Errorf("nulls decoded as %+v", in)
	}
}

func TestValidateBuiltFleet(t *testing.T) {
	f := &Fleet{APIVersion: APIVersion, Kind: Kind, Instances: []Instance{{ID: "a", Provider: AWS, Region: "r", InstanceType: "t"}}}
	err := f.Validate()
	if err == nil || err.Error() != `instances[0] (id "a"): lifecycle: missing; want one of on-demand, spot, committed` {
		t.Errorf("got %v", err)
	}
	f.Instances[0].Lifecycle, f.Instances[0].State = Spot, Stopped
	if err := f.Validate(); err != nil {
		t.Error(err)
	}
	if err := (&Fleet{}).Validate(); err == nil || err.Error() != `apiVersion: found "", want "gpufinops/v1"` {
		t.Errorf("got %v", err)
	}
}

// TestRoundTrip writes every valid fleet as JSON and as YAML and parses it back.
func TestRoundTrip(t *testing.T) {
	for _, path := range validFleets(t) {
		f, err := Parse(filepath.Base(path), readFile(t, path))
		if err != nil {
			t.Fatal(err)
		}
		for _, format := range []string{FormatJSON, FormatYAML} {
			t.Run(filepath.Base(path)+"/"+format, func(t *testing.T) {
				b, err := Marshal(f, format)
				if err != nil {
					t.Fatal(err)
				}
				g, err := Parse("out."+format, b)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(f, g); diff != "" {
					t.Errorf("round trip differs (-in +out):\n%s", diff)
				}
				again, err := Marshal(g, format)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(b, again) {
					t.Error("writing the parsed output again gives different bytes")
				}
			})
		}
	}
}

func TestMarshalGolden(t *testing.T) {
	f, err := Parse("full.json", readFile(t, filepath.Join(fleetsDir, "full.json")))
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{FormatJSON, FormatYAML} {
		var b bytes.Buffer
		if err := Write(&b, f, format); err != nil {
			t.Fatal(err)
		}
		testutil.AssertGolden(t, "testdata/full."+format+".golden", b.Bytes())
	}
	if _, err := Marshal(f, "toml"); err == nil || err.Error() != `unknown fleet format "toml"; want json or yaml` {
		t.Errorf("got %v", err)
	}
}

func TestMarshalEmpty(t *testing.T) {
	b, err := Marshal(&Fleet{APIVersion: APIVersion, Kind: Kind}, FormatJSON)
	if err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"apiVersion\": \"gpufinops/v1\",\n  \"kind\": \"Fleet\",\n  \"instances\": []\n}\n"
	if string(b) != want {
		t.Errorf("got %q want %q", b, want)
	}
}

// TestYAMLQuoting checks that strings YAML would read as something else are
// quoted, so they come back as the same strings.
func TestYAMLQuoting(t *testing.T) {
	tricky := []string{"no", "Yes", "on", "OFF", "y", "null", "~", "", "123", "0x1F", "1e3", "08:00", "1:20",
		"2026-11-30", "2026-11-30T00:00:00Z", "a: b", "a #b", "-lead", "[x]", "{x}", "*x", "&x", "!x", "%x", "@x", "`x",
		"x ", " x", "trailing,comma", "multi\nline", "tab\there", "quote\"d", "café", ".inf", "=", "<<", "x y", "p4d.24xlarge"}
	tags := map[string]string{}
	for i, s := range tricky {
		tags[string(rune('a'+i%26))+strings.Repeat("k", i/26)] = s
		tags[s+"-key"] = s
	}
	f := &Fleet{APIVersion: APIVersion, Kind: Kind, Instances: []Instance{{
		ID: "no", Name: "123", Provider: AWS, Region: "on", InstanceType: "1:20", Lifecycle: OnDemand, State: Running, Tags: tags,
	}}}
	b, err := Marshal(f, FormatYAML)
	if err != nil {
		t.Fatal(err)
	}
	g, err := Parse("f.yaml", b)
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if diff := cmp.Diff(f, g); diff != "" {
		t.Errorf("round trip differs (-in +out):\n%s\n%s", diff, b)
	}
}

func TestInstanceMarshalJSON(t *testing.T) {
	price := decimal.RequireFromString("1.006")
	in := Instance{ID: "a&b", Provider: AWS, Region: "r", InstanceType: "t", Lifecycle: Spot, State: Running, HourlyPrice: &price}
	b, err := in.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"a&b","provider":"aws","region":"r","instanceType":"t","lifecycle":"spot","state":"running","hourlyPrice":1.006}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
}

func TestErrorText(t *testing.T) {
	for _, tc := range []struct {
		err  Error
		want string
	}{
		{Error{File: "f.yaml", Instance: -1, Msg: "m"}, "f.yaml: m"},
		{Error{File: "f.json", Line: 3, Column: 4, Instance: -1, Msg: "m"}, "f.json: line 3, column 4: m"},
		{Error{Instance: 0, Field: "id", Msg: "missing"}, "instances[0]: id: missing"},
		{Error{File: "f", Instance: 2, ID: "nb-3", Field: "utilization.gpu.p95", Msg: "140 is outside 0–100"}, `f: instances[2] (id "nb-3"): utilization.gpu.p95: 140 is outside 0–100`},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("got %q want %q", got, tc.want)
		}
	}
}

// The commitment block: read exactly, and each bad value named.
func TestCommitmentField(t *testing.T) {
	ok := base + "    lifecycle: committed\n    state: running\n    commitment: {kind: standard-reserved-instance, term: 3y, payment: no-upfront, hourlyRate: 0.78125}\n"
	f, err := Parse("f.yaml", []byte(ok))
	if err != nil {
		t.Fatal(err)
	}
	cm := f.Instances[0].Commitment
	if cm == nil || cm.Term != "3y" || cm.HourlyRate == nil || cm.HourlyRate.String() != "0.78125" {
		t.Fatalf("commitment %+v", cm)
	}
	out, err := json.Marshal(f.Instances[0])
	if err != nil || !strings.Contains(string(out), `"hourlyRate":0.78125`) {
		t.Errorf("written as %s (%v)", out, err)
	}
	for _, tc := range []struct{ name, doc, want string }{
		{"not committed", base + "    lifecycle: on-demand\n    state: running\n    commitment: {term: 1y}\n", "commitment: is set but lifecycle is \"on-demand\""},
		{"term", base + "    lifecycle: committed\n    state: running\n    commitment: {term: 2y}\n", `commitment.term: "2y" is not one of 1y, 3y, 5y`},
		{"negative rate", base + "    lifecycle: committed\n    state: running\n    commitment: {hourlyRate: -1}\n", "commitment.hourlyRate: -1 is not a USD hourly rate"},
		{"absurd rate", base + "    lifecycle: committed\n    state: running\n    commitment: {hourlyRate: 1e12}\n", "commitment.hourlyRate: "},
		{"typo", base + "    lifecycle: committed\n    state: running\n    commitment: {hourlyrate: 1}\n", `unknown field "hourlyrate"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("f.yaml", []byte(tc.doc))
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %v, want one line with %q", err, tc.want)
			}
		})
	}
}
