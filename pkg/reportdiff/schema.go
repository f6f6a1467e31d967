package reportdiff

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"

	"github.com/invopop/jsonschema"

	"github.com/gpufinops/gpufinops/pkg/report"
)

// SchemaID is the $id of the diff's JSON Schema.
const SchemaID = "https://raw.githubusercontent.com/gpufinops/gpufinops/main/docs/schema/diff.schema.json"

// JSONSchema returns the JSON Schema (draft 2020-12) of Diff, indented, with a
// final newline. Objects allow properties the schema does not name, so that a
// 1.x schema also accepts later 1.y diffs.
func JSONSchema() ([]byte, error) {
	rf := &jsonschema.Reflector{
		AllowAdditionalProperties: true,
		ExpandedStruct:            true,
		Mapper: func(t reflect.Type) *jsonschema.Schema {
			if t == reflect.TypeFor[report.Money]() || t == reflect.TypeFor[report.Number]() {
				return &jsonschema.Schema{Type: "number"}
			}
			return nil
		},
	}
	s := rf.Reflect(&Diff{})
	major, _, _ := strings.Cut(Version, ".")
	for _, name := range []string{"schemaVersion", "diffVersion"} {
		if v, ok := s.Properties.Get(name); ok {
			v.Pattern = "^" + major + `\.[0-9]+$`
		}
	}
	if k, ok := s.Properties.Get("kind"); ok {
		k.Const = Kind
	}
	s.ID = SchemaID
	s.Title = "gpufinops report diff"
	s.Description = "The diff written by `gpufinops diff OLD.json NEW.json -o json`, diff version " + Version +
		". Money is in the reports' currency, rounded to cents. See docs/report.md."
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
