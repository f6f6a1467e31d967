package prices

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/pkg/testutil"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
)

func TestNewCmdPrices(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		want      PricesOptions
		wantErr   string
		flagError bool
	}{
		{name: "defaults", args: nil, want: PricesOptions{Output: "table"}},
		{
			name: "all filters",
			args: []string{"--provider", "GCP", "--region", "us-central1", "--gpu", "h100", "--instance-type", "a3-highgpu-8g",
				"--min-gpu-memory", "80", "--spot-only", "-o", "json"},
			want: PricesOptions{Provider: "gcp", Region: "us-central1", GPU: "h100", InstanceType: "a3-highgpu-8g",
				MinGPUMemory: 80, SpotOnly: true, Output: "json"},
		},
		{name: "csv", args: []string{"--output", "csv"}, want: PricesOptions{Output: "csv"}},
		{name: "service", args: []string{"--service", "SageMaker"}, want: PricesOptions{Service: "sagemaker", Output: "table"}},
		{name: "vertex", args: []string{"--service=vertex-ai"}, want: PricesOptions{Service: "vertex-ai", Output: "table"}},
		{name: "bad service", args: []string{"--service", "bedrock"}, wantErr: `invalid --service "bedrock": want sagemaker or vertex-ai`, flagError: true},
		{name: "azure ml service", args: []string{"--service", "azure-ml"}, wantErr: "Azure ML bills the VM price of its size; list the VM sizes without --service", flagError: true},
		{name: "fractional memory", args: []string{"--min-gpu-memory=22.5"}, want: PricesOptions{MinGPUMemory: 22.5, Output: "table"}},
		{name: "bad provider", args: []string{"--provider", "oracle"}, wantErr: `invalid --provider "oracle": want aws, azure or gcp`, flagError: true},
		{name: "negative memory", args: []string{"--min-gpu-memory", "-1"}, wantErr: "--min-gpu-memory: -1 is outside 0–4096 GiB", flagError: true},
		{name: "NaN memory", args: []string{"--min-gpu-memory", "NaN"}, wantErr: "--min-gpu-memory: NaN is not a finite number", flagError: true},
		{name: "nan memory", args: []string{"--min-gpu-memory=nan"}, wantErr: "--min-gpu-memory: NaN is not a finite number", flagError: true},
		{name: "Inf memory", args: []string{"--min-gpu-memory", "+Inf"}, wantErr: "--min-gpu-memory: +Inf is not a finite number", flagError: true},
		{name: "-Infinity memory", args: []string{"--min-gpu-memory=-Infinity"}, wantErr: "--min-gpu-memory: -Inf is not a finite number", flagError: true},
		{name: "absurd memory", args: []string{"--min-gpu-memory", "1e300"}, wantErr: "--min-gpu-memory: 1e+300 is outside 0–4096 GiB", flagError: true},
		{name: "overflowing memory", args: []string{"--min-gpu-memory", "1e309"}, wantErr: `invalid argument "1e309"`},
		{name: "memory not a number", args: []string{"--min-gpu-memory", "lots"}, wantErr: `invalid argument "lots"`},
		{name: "bad output", args: []string{"-o", "yaml"}, wantErr: `"yaml" is not one of table, json, csv`},
		{name: "argument", args: []string{"H100"}, wantErr: `unknown command "H100"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ios, _, _, _ := iostreams.Test()
			f := &cmdutil.Factory{IOStreams: ios}
			var got *PricesOptions
			cmd := NewCmdPrices(f, func(o *PricesOptions) error {
				got = o
				return nil
			})
			cmd.SetArgs(tc.args)
			cmd.SetOut(io.Discard)
			cmd.SetErr(io.Discard)
			err := cmd.Execute()
			if tc.wantErr != "" {
				if err == nil || !bytes.Contains([]byte(err.Error()), []byte(tc.wantErr)) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				var fe *cmdutil.FlagError
				if tc.flagError && !errors.As(err, &fe) {
					t.Errorf("err is %T, want a *cmdutil.FlagError", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, *got, cmpopts.IgnoreFields(PricesOptions{}, "IO", "Catalog", "Now", "Ctx")); d != "" {
				t.Errorf("options (-want +got):\n%s", d)
			}
		})
	}
}

func runPrices(t *testing.T, tty bool, opts PricesOptions) (stdout, stderr string) {
	t.Helper()
	ios, _, out, errOut := iostreams.Test()
	ios.SetStdoutTTY(tty)
	opts.IO = ios
	opts.Catalog = catalog.Embedded
	opts.Now = func() time.Time { return time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC) }
	if opts.Output == "" {
		opts.Output = "table"
	}
	if err := pricesRun(&opts); err != nil {
		t.Fatalf("pricesRun: %v", err)
	}
	return out.String(), errOut.String()
}

func TestPricesRun(t *testing.T) {
	azureH100 := PricesOptions{Provider: "azure", GPU: "H100"}
	tests := []struct {
		name   string
		tty    bool
		opts   PricesOptions
		format string
	}{
		{"azure-h100-tty", true, azureH100, "table"},
		{"azure-h100-pipe", false, azureH100, "table"},
		{"azure-h100-json", false, azureH100, "json"},
		{"azure-h100-csv", false, azureH100, "csv"},
		{"aws-us-east-1-l4-tty", true, PricesOptions{Region: "us-east-1", GPU: "l4"}, "table"},
		{"aws-us-east-1-l4-spot-only-pipe", false, PricesOptions{Region: "us-east-1", GPU: "l4", SpotOnly: true}, "table"},
		{"gcp-us-central1-h100-json", false, PricesOptions{Provider: "gcp", Region: "us-central1", GPU: "H100"}, "json"},
		{"aws-p5-us-east-1-json", false, PricesOptions{InstanceType: "p5.48xlarge", Region: "us-east-1"}, "json"},
		{"gcp-min-memory-tty", true, PricesOptions{Provider: "gcp", Region: "us-central1", MinGPUMemory: 100}, "table"},
		{"sagemaker-us-east-1-tty", true, PricesOptions{Service: "sagemaker", Region: "us-east-1"}, "table"},
		{"sagemaker-g5-xlarge-csv", false, PricesOptions{Service: "sagemaker", InstanceType: "ML.G5.XLARGE"}, "csv"},
		{"vertex-ai-json", false, PricesOptions{Service: "vertex-ai"}, "json"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Output = tc.format
			out, errOut := runPrices(t, tc.tty, tc.opts)
			testutil.AssertGolden(t, "testdata/"+tc.name+".golden", []byte(out))
			if tc.tty && errOut == "" {
				t.Error("no note on stderr for a terminal")
			}
			if !tc.tty && errOut != "" {
				t.Errorf("unexpected stderr in a pipe: %q", errOut)
			}
		})
	}
}

func TestPricesRunNoRows(t *testing.T) {
	for _, format := range []string{"table", "csv", "json"} {
		out, errOut := runPrices(t, false, PricesOptions{Provider: "gcp", GPU: "K80", Output: format})
		if want := "no offers match --provider gcp --gpu K80\n"; errOut != want {
			t.Errorf("%s: stderr = %q, want %q", format, errOut, want)
		}
		want := ""
		if format == "json" {
			want = "{\n  \"schemaVersion\": \"1.0\",\n  \"kind\": \"PriceList\",\n  \"items\": []\n}\n"
		}
		if out != want {
			t.Errorf("%s: stdout = %q, want %q", format, out, want)
		}
	}
}

func TestPricesRunCatalogError(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	boom := errors.New("catalog broken")
	err := pricesRun(&PricesOptions{IO: ios, Output: "table", Catalog: func() (pricing.Catalog, error) { return nil, boom }})
	if !errors.Is(err, boom) {
		t.Errorf("err = %v, want the catalog's error", err)
	}
}

// TestJSONMoneyIsNumbers checks money is written as JSON numbers, and unknown
// prices as null.
func TestJSONMoneyIsNumbers(t *testing.T) {
	// ND H200 v5: Azure publishes its spot meter at the on-demand price, so
	// the catalog has no spot price for it.
	out, _ := runPrices(t, false, PricesOptions{Provider: "azure", InstanceType: "Standard_ND96isr_H200_v5", Region: "eastus2", Output: "json"})
	var doc struct{ Items []map[string]any }
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	rows := doc.Items
	if len(rows) != 1 {
		t.Fatalf("%d rows", len(rows))
	}
	r := rows[0]
	if v, ok := r["onDemandHourly"].(float64); !ok || v != 84.8 {
		t.Errorf("onDemandHourly = %#v, want the number 84.8", r["onDemandHourly"])
	}
	if v, ok := r["perGpuHourly"].(float64); !ok || v != 10.6 {
		t.Errorf("perGpuHourly = %#v, want the number 10.6", r["perGpuHourly"])
	}
	if v, present := r["spotHourly"]; !present || v != nil {
		t.Errorf("spotHourly = %#v, want null", v)
	}
	if r["gpuCount"] != 8.0 {
		t.Errorf("gpuCount = %v, want 8", r["gpuCount"])
	}
}

// TestPricesAges checks each price's age follows the clock, in every format.
func TestPricesAges(t *testing.T) {
	for _, tc := range []struct {
		now              time.Time
		list, spot, advc float64
	}{
		{time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC), 1, 1, 521},
		{time.Date(2026, 11, 30, 23, 59, 0, 0, time.UTC), 0, 0, 520},
		{time.Date(2027, 12, 1, 0, 0, 0, 0, time.UTC), 366, 366, 886},
	} {
		ios, _, out, errOut := iostreams.Test()
		opts := PricesOptions{IO: ios, Catalog: catalog.Embedded, Now: func() time.Time { return tc.now }, InstanceType: "p5.48xlarge", Region: "us-east-1", Output: "json"}
		if err := pricesRun(&opts); err != nil {
			t.Fatal(err)
		}
		var doc struct{ Items []map[string]any }
		err := json.Unmarshal(out.Bytes(), &doc)
		rows := doc.Items
		if err != nil || len(rows) != 1 {
			t.Fatalf("%v %d", err, len(rows))
		}
		r := rows[0]
		if r["onDemandAgeDays"] != tc.list || r["spotAgeDays"] != tc.spot || r["spotAdviceAgeDays"] != tc.advc {
			t.Errorf("%s: ages %v %v %v, want %v %v %v", tc.now, r["onDemandAgeDays"], r["spotAgeDays"], r["spotAdviceAgeDays"], tc.list, tc.spot, tc.advc)
		}
		out.Reset()
		opts.Output = "table"
		ios.SetStdoutTTY(true)
		if err := pricesRun(&opts); err != nil {
			t.Fatal(err)
		}
		if note := errOut.String(); !strings.Contains(note, fmt.Sprintf("2025-06-28, %v days old", tc.advc)) {
			t.Errorf("%s: the table's note does not age the advice: %q", tc.now, note)
		}
	}
}

// TestPricesRunSuggests: a --gpu, --instance-type or --region the catalog
// knows for no cloud, whatever its spelling, is exit 2 with the nearest
// names (of --provider's offers) and no output, in every format; a real
// name that matches no offer is an empty result, exit 0.
func TestPricesRunSuggests(t *testing.T) {
	for _, tc := range []struct {
		opts PricesOptions
		want string
	}{
		{PricesOptions{InstanceType: "p5.48xlarg"}, `--instance-type: "p5.48xlarg" is not an instance type of the catalog; did you mean --instance-type p5.48xlarge?`},
		{PricesOptions{Provider: "aws", GPU: "H10"}, `--gpu: "H10" is not a GPU model of the catalog; did you mean --gpu H100?`},
		{PricesOptions{GPU: "h10"}, `did you mean --gpu A10 or --gpu H100?`},
		{PricesOptions{GPU: "zzzzzz"}, `--gpu: "zzzzzz" is not a GPU model of the catalog; 'gpufinops prices -o csv' lists them`},
		{PricesOptions{Region: "us-est-1"}, `--region: "us-est-1" is not a region of the catalog; did you mean --region us-east-1`},
		{PricesOptions{Provider: "gcp", Region: "us-centrl1"}, `did you mean --region us-central1?`},
		{PricesOptions{Provider: "azure", Region: "eastuss", GPU: "H100"}, `did you mean --region eastus`},
		{PricesOptions{InstanceType: "ml.g5.xlarge"}, `--instance-type: "ml.g5.xlarge" is a sagemaker type; add --service sagemaker`},
		{PricesOptions{Provider: "gcp", InstanceType: "vertex-ai/prediction/a3-highgpu-1g"}, `is a vertex-ai type; add --service vertex-ai`},
		{PricesOptions{Service: "sagemaker", InstanceType: "g5.xlarge"}, `--instance-type: "g5.xlarge" is a virtual machine type of aws, not a sagemaker type; drop --service`},
		{PricesOptions{Service: "vertex-ai", InstanceType: "ml.g5.xlarge"}, `is a sagemaker type; add --service sagemaker`},
		{PricesOptions{Service: "sagemaker", InstanceType: "ml.g5.48xlarge"}, `"ml.g5.48xlarge" is a sagemaker type the catalog has no offline price for (live prices cover it)`},
		{PricesOptions{Service: "sagemaker", InstanceType: "ml.g5.xlarg"}, `did you mean --instance-type ml.g5.xlarge?`},
	} {
		for _, format := range []string{"table", "json", "csv"} {
			ios, _, out, _ := iostreams.Test()
			opts := tc.opts
			opts.IO, opts.Catalog, opts.Output = ios, catalog.Embedded, format
			opts.Now = func() time.Time { return time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC) }
			err := pricesRun(&opts)
			if cmdutil.ExitCodeFor(err) != cmdutil.ExitUsage || err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%+v -o %s: %v (exit %d), want exit 2 with %q", tc.opts, format, err, cmdutil.ExitCodeFor(err), tc.want)
			}
			if out.Len() != 0 {
				t.Errorf("%+v -o %s: output %q", tc.opts, format, out)
			}
		}
	}
	for _, tc := range []struct {
		opts PricesOptions
		want string
	}{
		{PricesOptions{Provider: "gcp", GPU: "K80"}, "no offers match --provider gcp --gpu K80\n"},
		{PricesOptions{Provider: "azure", GPU: "L4"}, "no offers match --provider azure --gpu L4\n"},
		{PricesOptions{Provider: "gcp", InstanceType: "P5.48XLARGE"}, "no offers match --provider gcp --instance-type P5.48XLARGE\n"},
	} {
		if _, errOut := runPrices(t, false, tc.opts); errOut != tc.want {
			t.Errorf("%+v: stderr = %q, want %q", tc.opts, errOut, tc.want)
		}
	}
	for _, o := range []PricesOptions{{GPU: "h100"}, {InstanceType: "P5.48XLARGE"}, {Region: "US-EAST-1"}, {GPU: "a100-80gb"},
		{Service: "sagemaker", GPU: "a10g"}, {Service: "vertex-ai", Region: "US-CENTRAL1"}} {
		if out, _ := runPrices(t, false, o); out == "" {
			t.Errorf("%+v: nothing listed", o)
		}
	}
}
