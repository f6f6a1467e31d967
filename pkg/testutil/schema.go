package testutil

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// SchemaBaseID is the $id prefix of the schemas under docs/schema.
const SchemaBaseID = "https://raw.githubusercontent.com/gpufinops/gpufinops/main/docs/schema/"

// CompileSchema compiles the committed schema at path (a file under
// docs/schema) under its published $id, with formats asserted.
func CompileSchema(t testing.TB, path string) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	id := SchemaBaseID + filepath.Base(path)
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(id, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(id)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return s
}

// ValidateJSON fails t when doc does not match the schema at path.
func ValidateJSON(t testing.TB, path, doc string) {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(doc))
	if err != nil {
		t.Fatalf("not JSON: %v\n%s", err, doc)
	}
	if err := CompileSchema(t, path).Validate(v); err != nil {
		t.Errorf("the output does not match %s: %v", filepath.Base(path), err)
	}
}
