package gcp

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestIAMDocuments: the embedded roles are byte-identical to docs/iam's
// copies and grant exactly the permissions the adapter declares.
func TestIAMDocuments(t *testing.T) {
	pol := Policy()
	for _, tc := range []struct {
		idleStop bool
		doc      string
	}{{false, "gcp-analyze.yaml"}, {true, "gcp-idle-stop.yaml"}} {
		got, err := pol.Document(tc.idleStop)
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join("..", "..", "docs", "iam", tc.doc))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("the embedded role differs from docs/iam/%s", tc.doc)
		}
		var role struct {
			Title               string   `yaml:"title"`
			Stage               string   `yaml:"stage"`
			IncludedPermissions []string `yaml:"includedPermissions"`
		}
		if err := yaml.Unmarshal(got, &role); err != nil {
			t.Fatalf("%s: %v", tc.doc, err)
		}
		var declared []string
		for _, p := range pol.Permissions(tc.idleStop) {
			declared = append(declared, p.Action)
		}
		slices.Sort(declared)
		if role.Title == "" || role.Stage != "GA" || !slices.Equal(role.IncludedPermissions, declared) {
			t.Errorf("%s: %+v, want the permissions %v", tc.doc, role, declared)
		}
		for _, p := range role.IncludedPermissions {
			if strings.Count(p, ".") != 2 {
				t.Errorf("%s: %q is not service.resource.verb", tc.doc, p)
			}
		}
	}
}
