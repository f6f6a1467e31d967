package fleet

import (
	"errors"
	"strings"
	"testing"
)

const oneYAML = `apiVersion: gpufinops/v1
kind: Fleet
instances:
  - id: a
    provider: aws
    region: us-east-1
    instanceType: g5.xlarge
`

func TestSeveralYAMLDocuments(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		line      int
	}{
		{"two documents", oneYAML + "---\n" + oneYAML, 8},
		{"leading marker", "---\n" + oneYAML + "---\n" + oneYAML, 9},
		{"marker with content", oneYAML + "--- {apiVersion: gpufinops/v1}\n", 8},
		{"marker with spaces", oneYAML + "---   \nkind: Fleet\n", 8},
		{"marker with a tab and comment then doc", oneYAML + "---\t# next\nkind: Fleet\n", 8},
		{"CRLF", strings.ReplaceAll(oneYAML+"---\n"+oneYAML, "\n", "\r\n"), 8},
		{"end marker then a document", oneYAML + "...\n---\n" + oneYAML, 9},
		{"end marker then bare content", oneYAML + "...\nkind: Fleet\n", 9},
		{"comments between", oneYAML + "# the rest\n\n---\n# more\n\nkind: Fleet\n", 10},
		{"three documents", oneYAML + "---\n" + oneYAML + "---\n" + oneYAML, 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("fleet.yaml", []byte(tc.doc))
			var e *Error
			if !errors.As(err, &e) || e.File != "fleet.yaml" || e.Line != tc.line {
				t.Fatalf("got %v, want an error at fleet.yaml line %d", err, tc.line)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("several lines: %q", err)
			}
		})
	}
	for _, tc := range []struct{ name, doc string }{
		{"one document", oneYAML},
		{"directive and leading marker", "%YAML 1.1\n---\n" + oneYAML},
		{"trailing empty document", oneYAML + "---\n"},
		{"trailing comment document", oneYAML + "---\n# nothing\n\n"},
		{"end marker", oneYAML + "...\n"},
		{"dashes inside a value", strings.Replace(oneYAML, "id: a", "id: a\n    name: \"--- not a marker\"", 1)},
		{"dashes in a block scalar", strings.Replace(oneYAML, "kind: Fleet", "kind: Fleet\nmetadata:\n  description: |\n    ---\n    text", 1)},
		{"four dashes", strings.Replace(oneYAML, "kind: Fleet", "kind: Fleet\nmetadata:\n  description: x\n  source: >-\n    ----", 1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Parse("fleet.yaml", []byte(tc.doc)); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestTrailingJSON(t *testing.T) {
	doc := `{"apiVersion": "gpufinops/v1", "kind": "Fleet", "instances": []}`
	for _, name := range []string{"fleet.json", "fleet.yaml", "fleet", "-"} {
		for _, extra := range []string{" {}", "\n{\"kind\": \"Fleet\"}", "\n[]", " x", "\n\n  1"} {
			_, err := Parse(name, []byte(doc+extra))
			var e *Error
			if !errors.As(err, &e) || e.Line == 0 || !strings.Contains(e.Msg, "after the document") {
				t.Errorf("%s with %q: got %v", name, extra, err)
			}
		}
		if _, err := Parse(name, []byte(doc+"\n \n")); err != nil {
			t.Errorf("%s with trailing space: %v", name, err)
		}
	}
}

func TestNonFiniteAndAbsurdNumbers(t *testing.T) {
	field := func(yamlField string) string {
		return strings.Replace(oneYAML, "    instanceType: g5.xlarge\n", "    instanceType: g5.xlarge\n"+yamlField, 1)
	}
	for _, tc := range []struct {
		name, doc, want string
		line            int
	}{
		{"count .nan", field("    gpu: {count: .nan}\n"), `instances[0]: gpu.count: ".nan" is not a finite number`, 8},
		{"count .NaN", field("    gpu: {count: .NaN}\n"), `gpu.count: ".NaN" is not a finite number`, 8},
		{"count .inf", field("    gpu: {count: .inf}\n"), `gpu.count: ".inf" is not a finite number`, 8},
		{"memory -.Inf", field("    gpu:\n      memoryGiB: -.Inf\n"), `gpu.memoryGiB: "-.Inf" is not a finite number`, 9},
		{"price +.inf", field("    hourlyPrice: +.inf\n"), `hourlyPrice: "+.inf" is not a finite number`, 8},
		{"sample NaN", field("    utilization:\n      samples:\n        - {time: \"2026-11-30T00:00:00Z\", gpu: [1, .nan]}\n"), `utilization.samples[0].gpu[1]: ".nan" is not a finite number`, 10},
		{"stat NaN", field("    utilization: {gpu: {avg: .nan, p95: 1, max: 2}}\n"), `utilization.gpu.avg: ".nan" is not a finite number`, 8},
		{"count 1e309", field("    gpu: {count: 1e309}\n"), `gpu.count`, 0},
		{"sample 1e309", field("    utilization:\n      samples:\n        - {time: \"2026-11-30T00:00:00Z\", gpu: [1e309]}\n"), `samples[0].gpu`, 0},
		{"huge count", field("    gpu: {count: 1e9}\n"), `gpu.count: 1000000000 is above the limit of 64`, 0},
		{"count 65", field("    gpu: {count: 65}\n"), `gpu.count: 65 is above the limit of 64`, 0},
		{"negative count", field("    gpu: {count: -1}\n"), `gpu.count: -1 is negative`, 0},
		{"memory in MiB", field("    gpu: {memoryGiB: 24576}\n"), `gpu.memoryGiB: 24576 is above the limit of 1024 GiB`, 0},
		{"vcpus", field("    vcpus: 1e6\n"), `vcpus: 1000000 is above the limit of 4096`, 0},
		{"host memory", field("    memoryGiB: 1e8\n"), `memoryGiB: 100000000 is above the limit of 65536 GiB`, 0},
		{"price", field("    hourlyPrice: 10000.01\n"), `hourlyPrice: 10000.01 is above 10000 USD an hour`, 0},
		{"price in cents", field("    hourlyPrice: 1e300\n"), `is above 10000 USD an hour`, 0},
		{"price negative", field("    hourlyPrice: -0.5\n"), `hourlyPrice: -0.5 is negative`, 0},
		{"price string NaN", field("    hourlyPrice: \"NaN\"\n"), `hourlyPrice: want a number`, 0},
		{"params", field("    workload: {type: inference, paramsBillions: 1e7}\n"), `workload.paramsBillions: 10000000 is above the limit`, 0},
		{"tokens", field("    workload: {type: inference, tokensPerSecond: 1e12}\n"), `workload.tokensPerSecond: 1000000000000 is above the limit`, 0},
		{"run hours", field("    workload: {type: training, trainingRun: r, trainingRunHours: 1e6}\n"), `trainingRunHours: 1000000 is above the limit`, 0},
		{"sample above 100", field("    utilization:\n      samples:\n        - {time: \"2026-11-30T00:00:00Z\", gpu: 100.5}\n"), `samples[0].gpu: 100.5 is outside 0–100`, 0},
		{"sample negative", field("    utilization:\n      samples:\n        - {time: \"2026-11-30T00:00:00Z\", gpu: [-1, 2]}\n"), `samples[0].gpu[0]: -1 is outside 0–100`, 0},
		{"more GPUs in samples than the count", field("    gpu: {count: 1}\n    utilization:\n      samples:\n        - {time: \"2026-11-30T00:00:00Z\", gpu: [1, 2]}\n"), `samples[0].gpu: 2 values, but the instance has 1 GPUs`, 0},
		{"65 GPUs in samples", field("    utilization:\n      samples:\n        - {time: \"2026-11-30T00:00:00Z\", gpu: [" + strings.Repeat("1, ", 64) + "1]}\n"), `samples[0].gpu: 65 values, but the instance has 64 GPUs`, 0},
		{"window of centuries", field("    utilization:\n      window: {start: \"1900-01-01T00:00:00Z\", end: \"2100-01-01T00:00:00Z\"}\n"), `utilization.window: 1900-01-01T00:00:00Z to 2100-01-01T00:00:00Z is longer than 10 years`, 0},
		{"hours NaN", field("    usage: {hoursPerMonth: .nan}\n"), `usage.hoursPerMonth: ".nan" is not a finite number`, 8},
		{"coverage inf", field("    utilization: {coverage: .inf}\n"), `utilization.coverage: ".inf" is not a finite number`, 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("fleet.yaml", []byte(tc.doc))
			var e *Error
			if !errors.As(err, &e) || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "fleet.yaml: ") {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
			if tc.line != 0 && e.Line != tc.line {
				t.Errorf("line %d, want %d (%v)", e.Line, tc.line, err)
			}
			if strings.Contains(err.Error(), "\n") || len(err.Error()) > 300 {
				t.Errorf("message too long or on several lines: %q", err)
			}
		})
	}
}

// Prices with exponents that would take gigabytes to expand are refused
// without expanding them.
func TestAbsurdPriceExponents(t *testing.T) {
	for _, tc := range []struct{ price, want string }{
		{"1e60000", "hourlyPrice: 1e60000 is not a number"},
		{"1e6000", "hourlyPrice: 1e6000 is above 10000 USD an hour"},
		{"-1e6000", "is negative"},
		{"1e-6000", "has more than 64 decimal places"},
		{"123456789", "is above 10000 USD an hour"},
		{"10000.000000001", "is above 10000 USD an hour"},
	} {
		doc := `{"apiVersion": "gpufinops/v1", "kind": "Fleet", "instances": [{"id": "a", "provider": "aws", "region": "r", "instanceType": "t", "hourlyPrice": ` + tc.price + `}]}`
		_, err := Parse("f.json", []byte(doc))
		if err == nil || !strings.Contains(err.Error(), tc.want) || len(err.Error()) > 200 {
			t.Errorf("%s: got %v, want %q", tc.price, err, tc.want)
		}
	}
	for _, ok := range []string{"0", "0.0000000001", "98.32", "10000"} {
		doc := `{"apiVersion": "gpufinops/v1", "kind": "Fleet", "instances": [{"id": "a", "provider": "aws", "region": "r", "instanceType": "t", "hourlyPrice": ` + ok + `}]}`
		if _, err := Parse("f.json", []byte(doc)); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}

// Fleets built in code go through the same checks.
func TestValidateInCode(t *testing.T) {
	nan, inf := zeroF/zeroF, 1/zeroF
	for _, set := range []func(*Instance){
		func(in *Instance) { in.GPU.Count = nan },
		func(in *Instance) { in.GPU.Count = inf },
		func(in *Instance) { in.GPU.MemoryGiB = -inf },
		func(in *Instance) { in.VCPUs = nan },
		func(in *Instance) { c := nan; in.Utilization = &Utilization{Coverage: &c} },
		func(in *Instance) { h := inf; in.Usage.HoursPerWeek = &h },
		func(in *Instance) { in.Workload = &Workload{Type: Inference, TokensPerSecond: inf} },
	} {
		f := &Fleet{APIVersion: APIVersion, Kind: Kind, Instances: []Instance{{ID: "a", Provider: "aws", Region: "r", InstanceType: "t", Lifecycle: OnDemand, State: Running}}}
		set(&f.Instances[0])
		if err := f.Validate(); err == nil {
			t.Errorf("accepted %+v", f.Instances[0])
		}
	}
}

var zeroF float64
