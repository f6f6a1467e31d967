package fit

import (
	"bytes"
	"os"
	"testing"

	sjs "github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/pkg/llm"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
)

const fitSchemaPath = "../../../docs/schema/fit.schema.json"

// TestFitSchema validates real output against docs/schema/fit.schema.json
// (written by make docs).
func TestFitSchema(t *testing.T) {
	want, err := os.ReadFile(fitSchemaPath)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := sjs.UnmarshalJSON(bytes.NewReader(want))
	if err != nil {
		t.Fatal(err)
	}
	c := sjs.NewCompiler()
	if err := c.AddResource("fit.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	schema, err := c.Compile("fit.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range []struct {
		model, params, prec string
	}{
		{"llama-3.1-8b", "", "fp16"},
		{"llama-3.1-405b", "", "fp32"},
		{"", "13B", "int8"},
	} {
		ios, _, out, _ := iostreams.Test()
		opts := &FitOptions{IO: ios, Catalog: func() (pricing.Catalog, error) { return catalog.Embedded() }, Output: "json", Context: 4096, Batch: 1}
		opts.Model, opts.Params, opts.Precision = args.model, args.params, llm.Precision(args.prec)
		if args.params != "" {
			n, err := llm.ParseParams(args.params)
			if err != nil {
				t.Fatal(err)
			}
			opts.ParamCount = n
		}
		if err := fitRun(opts); err != nil {
			t.Fatalf("%+v: %v", args, err)
		}
		v, err := sjs.UnmarshalJSON(bytes.NewReader(out.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		if err := schema.Validate(v); err != nil {
			t.Errorf("%+v: output does not match the schema: %v", args, err)
		}
	}
}
