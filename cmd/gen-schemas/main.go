// Command gen-schemas writes the JSON Schema of every JSON document gpufinops
// writes into docs/schema/, generated from the Go types that are written:
//
//	go run ./cmd/gen-schemas            # from the module root; make docs runs it
//
// CI runs `make docs && git diff --exit-code docs/schema`, and this
// package's tests fail while a committed schema is stale and validate each
// command's real output against its schema.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/invopop/jsonschema"
	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/billing"
	catalogcmd "github.com/gpufinops/gpufinops/pkg/cmd/catalog"
	"github.com/gpufinops/gpufinops/pkg/cmd/doctor"
	"github.com/gpufinops/gpufinops/pkg/cmd/fit"
	"github.com/gpufinops/gpufinops/pkg/cmd/prices"
	"github.com/gpufinops/gpufinops/pkg/commitplan"
	"github.com/gpufinops/gpufinops/pkg/envelope"
	"github.com/gpufinops/gpufinops/pkg/governance"
	"github.com/gpufinops/gpufinops/pkg/idlestop"
	"github.com/gpufinops/gpufinops/pkg/llm"
	"github.com/gpufinops/gpufinops/pkg/report"
	"github.com/gpufinops/gpufinops/pkg/reportdiff"
	"github.com/gpufinops/gpufinops/pkg/sharing"
)

// BaseID is where the schemas are published.
const BaseID = "https://raw.githubusercontent.com/gpufinops/gpufinops/main/docs/schema/"

// A Schema is one document's schema file and how it is generated.
type Schema struct {
	// File is the schema's name in docs/schema/.
	File string
	// Generate returns the schema, indented, with a final newline; root is
	// the module's root directory (for doc comments read from the source).
	Generate func(root string) ([]byte, error)
}

// Schemas are every JSON document's schema, by file name.
var Schemas = []Schema{
	{"fleet.schema.json", fleetSchema},
	{"report.schema.json", func(root string) ([]byte, error) { return report.JSONSchema(filepath.Join(root, "pkg/report")) }},
	{"diff.schema.json", func(string) ([]byte, error) { return reportdiff.JSONSchema() }},
	document("prices.schema.json", "gpufinops prices -o json", &envelope.List[prices.Offer]{}, prices.Kind, prices.SchemaVersion),
	document("sharing-plan.schema.json", "gpufinops sharing plan -o json", &sharing.Document{}, sharing.Kind, sharing.SchemaVersion),
	document("commit-plan.schema.json", "gpufinops commit-plan -o json", &commitplan.Document{}, commitplan.Kind, commitplan.SchemaVersion),
	document("tags-audit.schema.json", "gpufinops tags audit -o json", &governance.Document{}, governance.Kind, governance.SchemaVersion),
	document("idle-stop.schema.json", "gpufinops idle-stop -o json", &idlestop.Document{}, idlestop.Kind, idlestop.SchemaVersion),
	document("doctor.schema.json", "gpufinops doctor -o json", &doctor.Report{}, doctor.Kind, doctor.SchemaVersion),
	document("fit.schema.json", "gpufinops fit -o json", &fit.Document{}, fit.Kind, fit.SchemaVersion),
	document("billing-summary.schema.json", "gpufinops billing summary -o json", &billing.Document{}, billing.Kind, billing.SchemaVersion),
	document("catalog-status.schema.json", "gpufinops catalog status -o json", &catalogcmd.Document{}, catalogcmd.Kind, catalogcmd.SchemaVersion),
	document("catalog-diff.schema.json", "gpufinops catalog diff -o json", &catalogcmd.DiffDocument{}, catalogcmd.DiffKind, catalogcmd.DiffSchemaVersion),
	document("models.schema.json", "gpufinops fit --list-models -o json", &envelope.List[llm.Model]{}, fit.ModelListKind, fit.SchemaVersion),
}

func main() {
	dir := flag.String("dir", "docs/schema", "directory to write the schemas to")
	root := flag.String("root", ".", "the module's root directory")
	flag.Parse()
	if err := write(*root, *dir); err != nil {
		fmt.Fprintln(os.Stderr, "gen-schemas:", err)
		os.Exit(1)
	}
}

// write generates every schema into dir.
func write(root, dir string) error {
	for _, s := range Schemas {
		b, err := s.Generate(root)
		if err != nil {
			return fmt.Errorf("%s: %w", s.File, err)
		}
		if err := os.WriteFile(filepath.Join(dir, s.File), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// document is the schema of an enveloped document reflected from v, a
// pointer to its Go type: the header's kind is fixed and its version is of
// the major it was generated at.
func document(file, command string, v any, kind, version string) Schema {
	return Schema{File: file, Generate: func(string) ([]byte, error) {
		r := &jsonschema.Reflector{ExpandedStruct: true, Mapper: mapType}
		s := r.Reflect(v)
		s.ID = jsonschema.ID(BaseID + file)
		s.Title = command
		s.Description = "The document `" + command + "` writes, schema version " + version +
			". Generated from the Go types by `go run ./cmd/gen-schemas`; see docs/output.md."
		k, ok := s.Properties.Get("kind")
		if !ok {
			return nil, fmt.Errorf("%T has no kind", v)
		}
		k.Const = kind
		sv, ok := s.Properties.Get("schemaVersion")
		if !ok {
			return nil, fmt.Errorf("%T has no schemaVersion", v)
		}
		major, _, _ := strings.Cut(version, ".")
		sv.Pattern = "^" + major + `\.[0-9]+$`
		return encode(s)
	}}
}

// mapType gives the schema of types whose JSON form is not their Go shape:
// decimals and the money types are numbers.
func mapType(t reflect.Type) *jsonschema.Schema {
	switch t {
	case reflect.TypeFor[decimal.Decimal](), reflect.TypeFor[json.Number](), reflect.TypeFor[governance.Money](),
		reflect.TypeFor[governance.UnitCost](), reflect.TypeFor[idlestop.Amount]():
		return &jsonschema.Schema{Type: "number"}
	}
	return nil
}

// encode writes a schema indented by two spaces, with a final newline.
func encode(s *jsonschema.Schema) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
