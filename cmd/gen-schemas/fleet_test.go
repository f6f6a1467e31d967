package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"sigs.k8s.io/yaml"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

const (
	schemaFile = "../../docs/schema/fleet.schema.json"
	fleetsDir  = "../../testdata/fleets"
)

func TestEveryPropertyDescribed(t *testing.T) {
	for _, n := range notes {
		if n.desc == "" {
			t.Errorf("%s.%s has no description", n.def, n.prop)
		}
	}
	root, err := fleetSchemaObject()
	if err != nil {
		t.Fatal(err)
	}
	for name, def := range root.Definitions {
		if def.Description == "" {
			t.Errorf("%s has no description", name)
		}
		for p := def.Properties.Oldest(); p != nil; p = p.Next() {
			if p.Value.Description == "" {
				t.Errorf("%s.%s has no description", name, p.Key)
			}
		}
	}
}

func compileFleetSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(fleetID, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(fleetID)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func validateDoc(s *jsonschema.Schema, name string, data []byte) error {
	if !strings.HasSuffix(name, ".json") {
		var err error
		if data, err = yaml.YAMLToJSON(data); err != nil {
			return err
		}
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return err
	}
	return s.Validate(v)
}

// TestFleetFilesMatchSchema validates every fleet file in the repository, and
// what Marshal writes for each, against the committed schema.
func TestFleetFilesMatchSchema(t *testing.T) {
	s := compileFleetSchema(t)
	var paths []string
	for _, pat := range []string{"*.yaml", "*.json"} {
		m, _ := filepath.Glob(filepath.Join(fleetsDir, pat))
		paths = append(paths, m...)
	}
	paths = append(paths, "../../providers/file/demo.yaml")
	if len(paths) < 4 {
		t.Fatalf("found only %d fleet files", len(paths))
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := validateDoc(s, path, data); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			f, err := fleet.Parse(path, data)
			if err != nil {
				t.Fatal(err)
			}
			for _, format := range []string{fleet.FormatJSON, fleet.FormatYAML} {
				out, err := fleet.Marshal(f, format)
				if err != nil {
					t.Fatal(err)
				}
				if err := validateDoc(s, "out."+format, out); err != nil {
					t.Errorf("written as %s: %v", format, err)
				}
			}
		})
	}
}

// TestSchemaRejectsInvalidFleets checks the schema catches what it can express;
// unique ids, avg ≤ p95 ≤ max and valid schedules are left to fleet.Validate.
func TestSchemaRejectsInvalidFleets(t *testing.T) {
	s := compileFleetSchema(t)
	for _, name := range []string{"wrong-api-version.yaml", "utilization-140.yaml", "negative-hours.yaml", "unknown-provider.yaml", "unknown-field.yaml"} {
		data, err := os.ReadFile(filepath.Join(fleetsDir, "invalid", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := validateDoc(s, name, data); err == nil {
			t.Errorf("%s passes the schema", name)
		}
	}
	both := `{"apiVersion": "gpufinops/v1", "kind": "Fleet", "instances": [{"id": "a", "provider": "aws", "region": "r", "instanceType": "t",
		"utilization": {"gpu": {"avg": 1, "p95": 2, "max": 3}, "samples": [{"time": "2026-11-23T00:00:00Z", "gpu": 1}]}}]}`
	if err := validateDoc(s, "both.json", []byte(both)); err == nil {
		t.Error("statistics and samples together pass the schema")
	}
	twoUsages := `{"apiVersion": "gpufinops/v1", "kind": "Fleet", "instances": [{"id": "a", "provider": "aws", "region": "r", "instanceType": "t",
		"usage": {"hoursPerWeek": 1, "hoursPerMonth": 2}}]}`
	if err := validateDoc(s, "usage.json", []byte(twoUsages)); err == nil {
		t.Error("two usage forms pass the schema")
	}
}
