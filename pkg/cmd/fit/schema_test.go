package fit

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"reflect"
	"testing"

	"github.com/invopop/jsonschema"
	sjs "github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/pkg/llm"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
)

var updateSchema = flag.Bool("update-schema", false, "rewrite docs/schema/fit.schema.json")

const fitSchemaPath = "../../../docs/schema/fit.schema.json"

// fitSchema generates the schema of `fit -o json` from the type it writes.
func fitSchema(t *testing.T) []byte {
	t.Helper()
	r := &jsonschema.Reflector{
		Mapper: func(rt reflect.Type) *jsonschema.Schema {
			if rt == reflect.TypeFor[json.Number]() {
				return &jsonschema.Schema{Type: "number"}
			}
			return nil
		},
		RequiredFromJSONSchemaTags: false,
	}
	s := r.Reflect(&jsonFit{})
	s.ID = "https://raw.githubusercontent.com/gpufinops/gpufinops/main/docs/schema/fit.schema.json"
	s.Title = "gpufinops fit -o json"
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// TestFitSchema keeps docs/schema/fit.schema.json in step with the output
// type, and validates real output against it.
func TestFitSchema(t *testing.T) {
	got := fitSchema(t)
	if *updateSchema {
		if err := os.WriteFile(fitSchemaPath, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(fitSchemaPath)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("docs/schema/fit.schema.json is stale or missing (%v): run go test ./pkg/cmd/fit -run TestFitSchema -update-schema", err)
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
