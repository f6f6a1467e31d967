package report

import (
	"bytes"
	"encoding/json"
	"path"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/invopop/jsonschema"

	"github.com/gpufinops/gpufinops/pkg/recommend"
)

// SchemaID is the $id of the report's JSON Schema.
const SchemaID = "https://raw.githubusercontent.com/gpufinops/gpufinops/main/docs/schema/report.schema.json"

// JSONSchema returns the JSON Schema (draft 2020-12) of Report, indented, with
// a final newline. Descriptions come from the doc comments of the Go source
// in srcDir, this package's directory; "" leaves them out.
//
// Objects allow properties the schema does not name, so that a 1.x schema
// also accepts later 1.y reports; fields added after 1.0 are optional, so that
// it also accepts earlier ones.
func JSONSchema(srcDir string) ([]byte, error) {
	rf := &jsonschema.Reflector{
		AllowAdditionalProperties: true,
		ExpandedStruct:            true,
		Mapper:                    mapNumbers,
	}
	if srcDir != "" {
		if err := addComments(rf, srcDir); err != nil {
			return nil, err
		}
	}
	s := rf.Reflect(&Report{})
	// The schema describes every report Load accepts: this major, any minor.
	if v, ok := s.Properties.Get("schemaVersion"); ok {
		major, _, _ := strings.Cut(SchemaVersion, ".")
		v.Pattern = "^" + major + `\.[0-9]+$`
	}
	// The kinds are the engine's, in planner order, so the list cannot drift.
	if rec := s.Definitions["Recommendation"]; rec != nil {
		if kind, ok := rec.Properties.Get("kind"); ok {
			kind.Enum = nil
			for _, k := range recommend.Kinds {
				kind.Enum = append(kind.Enum, string(k))
			}
		}
	}
	// A priced instance has its costs; an unpriced one has none.
	if in := s.Definitions["Instance"]; in != nil {
		in.If = &jsonschema.Schema{Properties: jsonschema.NewProperties(), Required: []string{"priced"}}
		in.If.Properties.Set("priced", &jsonschema.Schema{Const: true})
		in.Then = &jsonschema.Schema{Required: []string{"currentMonthlyCost", "optimizedMonthlyCost", "monthlySavings"}}
	}
	s.ID = SchemaID
	s.Title = "gpufinops report"
	s.Description = "The report written by `gpufinops analyze -o json`, schema version " + SchemaVersion +
		". Monthly amounts are in the report's currency (USD unless converted with --currency, at the exchangeRate it states), rounded to cents; hourly prices stay USD. See docs/report.md."
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// addComments reads the doc comments in srcDir. The reflector keys them by
// the import path joined with srcDir's path, so they are re-keyed to the
// package's import path, whatever directory the generator runs in.
func addComments(rf *jsonschema.Reflector, srcDir string) error {
	pkg := reflect.TypeFor[Report]().PkgPath()
	if err := rf.AddGoComments(pkg, srcDir); err != nil {
		return err
	}
	prefix := path.Join(pkg, filepath.ToSlash(filepath.Clean(srcDir)))
	for k, v := range rf.CommentMap {
		if rest, ok := strings.CutPrefix(k, prefix+"."); ok && prefix != pkg {
			delete(rf.CommentMap, k)
			rf.CommentMap[pkg+"."+rest] = v
		}
	}
	return nil
}

// mapNumbers describes Money and Number as the JSON numbers they marshal to.
func mapNumbers(t reflect.Type) *jsonschema.Schema {
	switch t {
	case reflect.TypeFor[Money]():
		return &jsonschema.Schema{Type: "number"}
	case reflect.TypeFor[Number]():
		return &jsonschema.Schema{Type: "number"}
	}
	return nil
}
