package fit

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/pkg/llm"
	"github.com/gpufinops/gpufinops/pkg/testutil"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
)

func TestNewCmdFit(t *testing.T) {
	def := func(o FitOptions) FitOptions {
		if o.Precision == "" {
			o.Precision = llm.FP16
		}
		if o.Context == 0 {
			o.Context = 4096
		}
		if o.Batch == 0 {
			o.Batch = 1
		}
		if o.Output == "" {
			o.Output = "table"
		}
		return o
	}
	tests := []struct {
		name      string
		args      []string
		want      FitOptions
		wantErr   string
		flagError bool
	}{
		{name: "model defaults", args: []string{"--model", "llama-3.1-8b"}, want: def(FitOptions{Model: "llama-3.1-8b"})},
		{
			name: "every flag",
			args: []string{"--model", "meta-llama/Llama-3.1-70B-Instruct", "--precision", "INT4", "--kv-precision", "int8",
				"--context", "8192", "--batch", "16", "--provider", "AWS", "--region", "us-east-1", "-o", "json"},
			want: FitOptions{Model: "meta-llama/Llama-3.1-70B-Instruct", Precision: llm.INT4, KVPrecision: llm.INT8,
				Context: 8192, Batch: 16, Provider: "aws", Region: "us-east-1", Output: "json"},
		},
		{name: "params", args: []string{"--params", "13B", "--precision", "int8"}, want: def(FitOptions{Params: "13B", ParamCount: 13e9, Precision: llm.INT8})},
		{name: "params scientific", args: []string{"--params=70e9"}, want: def(FitOptions{Params: "70e9", ParamCount: 70e9})},
		{name: "all regions", args: []string{"--model", "mistral-7b", "--all-regions"}, want: def(FitOptions{Model: "mistral-7b", AllRegions: true})},
		{name: "list models", args: []string{"--list-models"}, want: FitOptions{ListModels: true, Output: "table", Context: 4096, Batch: 1}},
		{name: "neither", args: []string{}, wantErr: "give a model: --model NAME or --params COUNT", flagError: true},
		{name: "both", args: []string{"--model", "mistral-7b", "--params", "7B"}, wantErr: "give --model or --params, not both", flagError: true},
		{
			name: "unknown model", args: []string{"--model", "llama-3.1-80b"}, flagError: true,
			wantErr: `unknown model "llama-3.1-80b" (did you mean Llama-3.1-8B, Llama-3.1-70B, Llama-3.3-70B?): see 'gpufinops fit --list-models', or give its size with --params`,
		},
		{name: "unknown model, nothing close", args: []string{"--model", "gpt-4"}, flagError: true,
			wantErr: `unknown model "gpt-4": see 'gpufinops fit --list-models'`},
		{name: "negative params", args: []string{"--params", "-3"}, wantErr: `invalid --params "-3": parameter count -3 is not positive`, flagError: true},
		{name: "zero params", args: []string{"--params", "0B"}, wantErr: `invalid --params "0B": parameter count 0B is not positive`, flagError: true},
		{name: "params without unit", args: []string{"--params", "13"}, wantErr: "is under a million: add a unit, e.g. 13B", flagError: true},
		{name: "params not a number", args: []string{"--params", "big"}, wantErr: `invalid --params "big": "big" is not a parameter count`, flagError: true},
		{name: "unknown precision", args: []string{"--model", "mistral-7b", "--precision", "fp64"},
			wantErr: `invalid --precision "fp64": want fp32, fp16, bf16, fp8, int8 or int4`, flagError: true},
		{name: "unknown kv precision", args: []string{"--model", "mistral-7b", "--kv-precision", "int2"},
			wantErr: `invalid --kv-precision "int2"`, flagError: true},
		{name: "zero context", args: []string{"--model", "mistral-7b", "--context", "0"}, wantErr: "invalid --context 0: want 1 to 10000000 tokens", flagError: true},
		{name: "huge context", args: []string{"--model", "mistral-7b", "--context", "100000000000"}, wantErr: "invalid --context 100000000000: want 1 to 10000000 tokens", flagError: true},
		{name: "huge batch", args: []string{"--model", "mistral-7b", "--batch", "9999999999"}, wantErr: "invalid --batch 9999999999: want 1 to 1000000 sequences", flagError: true},
		{name: "negative batch", args: []string{"--model", "mistral-7b", "--batch", "-1"}, wantErr: "invalid --batch -1: want 1 to 1000000 sequences", flagError: true},
		{name: "bad provider", args: []string{"--model", "mistral-7b", "--provider", "oracle"}, wantErr: `invalid --provider "oracle": want aws, azure or gcp`, flagError: true},
		{name: "region and all regions", args: []string{"--model", "mistral-7b", "--region", "eastus", "--all-regions"},
			wantErr: "--region and --all-regions cannot be used together", flagError: true},
		{name: "list models with a model", args: []string{"--list-models", "--model", "mistral-7b"}, wantErr: "--list-models takes no --model or --params", flagError: true},
		{name: "context not a number", args: []string{"--model", "mistral-7b", "--context", "long"}, wantErr: `invalid argument "long"`},
		{name: "bad output", args: []string{"--model", "mistral-7b", "-o", "csv"}, wantErr: `"csv" is not one of table, json`},
		{name: "argument", args: []string{"llama"}, wantErr: `unknown command "llama"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ios, _, _, _ := iostreams.Test()
			f := &cmdutil.Factory{IOStreams: ios}
			var got *FitOptions
			cmd := NewCmdFit(f, func(o *FitOptions) error {
				got = o
				return nil
			})
			cmd.SetArgs(tc.args)
			cmd.SetOut(io.Discard)
			cmd.SetErr(io.Discard)
			err := cmd.Execute()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				var fe *cmdutil.FlagError
				if tc.flagError && !errors.As(err, &fe) {
					t.Errorf("err is %T, want a *cmdutil.FlagError", err)
				}
				if strings.Contains(err.Error(), "\n") {
					t.Errorf("error spans lines: %q", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, *got, cmpopts.IgnoreFields(FitOptions{}, "IO", "Catalog")); d != "" {
				t.Errorf("options (-want +got):\n%s", d)
			}
		})
	}
}

func runFit(t *testing.T, tty bool, opts FitOptions) (stdout, stderr string) {
	t.Helper()
	ios, _, out, errOut := iostreams.Test()
	ios.SetStdoutTTY(tty)
	opts.IO = ios
	opts.Catalog = catalog.Embedded
	if opts.Output == "" {
		opts.Output = "table"
	}
	if opts.Precision == "" {
		opts.Precision = llm.FP16
	}
	if opts.Context == 0 {
		opts.Context = 4096
	}
	if opts.Batch == 0 {
		opts.Batch = 1
	}
	if err := fitRun(&opts); err != nil {
		t.Fatalf("fitRun: %v", err)
	}
	return out.String(), errOut.String()
}

func TestFitRun(t *testing.T) {
	llama8 := FitOptions{Model: "llama-3.1-8b"}
	tests := []struct {
		name   string
		tty    bool
		opts   FitOptions
		format string
	}{
		{"llama-3.1-8b-tty", true, llama8, "table"},
		{"llama-3.1-8b-pipe", false, llama8, "table"},
		{"llama-3.1-8b-json", false, llama8, "json"},
		{"llama-3.1-70b-int4-aws-all-regions-tty", true, FitOptions{Model: "llama-3.1-70b", Precision: llm.INT4, Provider: "aws", AllRegions: true}, "table"},
		{"llama-3.1-405b-fp16-tty", true, FitOptions{Model: "llama-3.1-405b"}, "table"},
		{"deepseek-v3-fp16-tty", true, FitOptions{Model: "deepseek-v3"}, "table"},
		{"deepseek-v3-fp16-json", false, FitOptions{Model: "deepseek-v3"}, "json"},
		{"params-13b-int8-batch16-tty", true, FitOptions{Params: "13B", ParamCount: 13e9, Precision: llm.INT8, Context: 8192, Batch: 16}, "table"},
		{"mixtral-8x7b-gcp-us-central1-json", false, FitOptions{Model: "mixtral-8x7b", Provider: "gcp", Region: "us-central1", Batch: 32, Context: 2048}, "json"},
		{"list-models-tty", true, FitOptions{ListModels: true}, "table"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Output = tc.format
			out, errOut := runFit(t, tc.tty, tc.opts)
			testutil.AssertGolden(t, "testdata/"+tc.name+".golden", []byte(out))
			if errOut != "" && !tc.opts.ListModels {
				t.Errorf("unexpected stderr: %q", errOut)
			}
		})
	}
}

// TestFitRunJSON checks the JSON field names and that money is numbers.
func TestFitRunJSON(t *testing.T) {
	out, _ := runFit(t, false, FitOptions{Model: "llama-3.1-8b", Provider: "aws", Region: "us-east-1", Output: "json"})
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"model", "precision", "context", "batch", "weightsGiB", "kvCacheGiB", "overheadGiB", "requiredGiB", "options"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("no %q", k)
		}
	}
	if _, ok := doc["multiInstance"]; ok {
		t.Error("multiInstance present although a single instance fits")
	}
	if doc["weightsGiB"] != 14.96 || doc["kvCacheGiB"] != 0.5 || doc["requiredGiB"] != 16.95 {
		t.Errorf("memory: %v %v %v", doc["weightsGiB"], doc["kvCacheGiB"], doc["requiredGiB"])
	}
	opts := doc["options"].([]any)
	if len(opts) != 1 {
		t.Fatalf("%d options", len(opts))
	}
	o := opts[0].(map[string]any)
	for _, k := range []string{"provider", "region", "instanceType", "gpuModel", "gpuCount", "gpuMemoryGiB", "hourly", "tokensPerSecond", "costPer1MTokens"} {
		if _, ok := o[k]; !ok {
			t.Errorf("option has no %q", k)
		}
	}
	if _, ok := o["hourly"].(float64); !ok {
		t.Errorf("hourly = %#v, want a number", o["hourly"])
	}
	if _, ok := o["costPer1MTokens"].(float64); !ok {
		t.Errorf("costPer1MTokens = %#v, want a number", o["costPer1MTokens"])
	}
}

func TestFitRunMultiInstanceJSON(t *testing.T) {
	out, _ := runFit(t, false, FitOptions{Model: "deepseek-v3", Precision: llm.FP32, Output: "json"})
	var doc struct {
		Options []any `json:"options"`
		Multi   []struct {
			Instances   int     `json:"instances"`
			TotalHourly float64 `json:"totalHourly"`
			Message     string  `json:"message"`
		} `json:"multiInstance"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Options == nil || len(doc.Options) != 0 {
		t.Errorf("options = %#v, want []", doc.Options)
	}
	if len(doc.Multi) != 3 {
		t.Fatalf("multiInstance: %+v", doc.Multi)
	}
	for _, m := range doc.Multi {
		if m.Instances < 2 || m.TotalHourly <= 0 || !strings.HasPrefix(m.Message, "needs more than one instance: at least ") {
			t.Errorf("%+v", m)
		}
	}
}

func TestFitRunWarningsAndNoOffers(t *testing.T) {
	out, errOut := runFit(t, false, FitOptions{Model: "gemma-2-9b", Context: 16384})
	if want := "warning: context 16384 is more than Gemma-2-9B's maximum of 8192 tokens\n"; errOut != want {
		t.Errorf("stderr = %q, want %q", errOut, want)
	}
	if !strings.Contains(out, "Gemma-2-9B") {
		t.Errorf("stdout: %s", out)
	}
	out, errOut = runFit(t, false, FitOptions{Model: "mistral-7b", Provider: "gcp", Region: "mars-1", Output: "json"})
	if errOut != "no GPU offers match --provider gcp --region mars-1\n" {
		t.Errorf("stderr = %q", errOut)
	}
	if !strings.Contains(out, `"options": []`) {
		t.Errorf("stdout: %s", out)
	}
}

func TestFitRunCatalogError(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	boom := errors.New("catalog broken")
	err := fitRun(&FitOptions{IO: ios, Model: "mistral-7b", Precision: llm.FP16, Context: 1, Batch: 1, Output: "table",
		Catalog: func() (pricing.Catalog, error) { return nil, boom }})
	if !errors.Is(err, boom) {
		t.Errorf("err = %v, want the catalog's error", err)
	}
}

// TestTableMatchesJSON checks the table and JSON tell the same figures.
func TestTableMatchesJSON(t *testing.T) {
	opts := FitOptions{Model: "qwen2.5-32b", Precision: llm.INT8, Provider: "azure"}
	table, _ := runFit(t, false, opts)
	opts.Output = "json"
	js, _ := runFit(t, false, opts)
	var doc struct {
		Options []struct {
			InstanceType string  `json:"instanceType"`
			Cost         float64 `json:"costPer1MTokens"`
		} `json:"options"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Options) != 1 || !bytes.Contains([]byte(table), []byte(doc.Options[0].InstanceType)) {
		t.Errorf("table:\n%s\njson: %+v", table, doc.Options)
	}
}
