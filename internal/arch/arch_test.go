// Package arch checks the import rules of docs/architecture.md (from
// ARCHITECTURE.md's "Layout and import rules") against `go list`.
package arch

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

const mod = "github.com/gpufinops/gpufinops/"

type pkg struct {
	ImportPath string
	Imports    []string
}

func listPackages(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json=ImportPath,Imports", mod+"...")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

func rel(path string) string { return strings.TrimPrefix(path, mod) }

func under(path string, prefixes ...string) bool {
	for _, p := range prefixes {
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
}

var adapters = []string{"providers/aws", "providers/azure", "providers/gcp", "providers/file"}

// adapterRoot is the adapter a package belongs to (providers/aws for
// providers/aws/sim): an adapter's own packages may import each other.
func adapterRoot(path string) string {
	for _, a := range adapters {
		if under(path, a) {
			return a
		}
	}
	return path
}

// TestImportRules fails on any import that crosses the layering.
func TestImportRules(t *testing.T) {
	for _, p := range listPackages(t) {
		me := rel(p.ImportPath)
		for _, imp := range p.Imports {
			ours := strings.HasPrefix(imp, mod)
			dep := rel(imp)
			fail := func(rule string) { t.Errorf("%s imports %s: %s", me, imp, rule) }
			switch {
			case me == "pkg/fleet" && ours:
				fail("pkg/fleet is the bottom of the graph and imports nothing of gpufinops")
			case imp == "github.com/spf13/viper" && me != "pkg/config":
				fail("only pkg/config imports viper")
			case imp == "github.com/spf13/cobra" && !under(me, "pkg/cmd", "pkg/cmdutil", "cmd"):
				fail("only command packages import cobra")
			case ours && under(dep, "cmd"):
				fail("nothing imports cmd/")
			case ours && under(dep, "pkg/cmd") && !under(me, "pkg/cmd", "cmd"):
				fail("only commands import command packages")
			case ours && under(dep, adapters...) && !under(me, "pkg/cmd/factory", "providers/all", "cmd/cloudsim") && !under(me, adapterRoot(dep)):
				fail("adapters are reached through providers/all and the factory only")
			case me == "pkg/money" && ours:
				fail("pkg/money is a leaf: it formats amounts and imports nothing of gpufinops")
			case me == "pkg/recommend" && ours && !under(dep, "pkg/fleet", "pricing", "pkg/llm", "pkg/sharing", "pkg/commitplan", "pkg/governance", "pkg/money"):
				fail("the engine sees only the snapshot, the catalog, the pure strategy packages and the money formatter")
			case under(me, "pkg/metrics") && ours && !under(dep, "pkg/fleet", "pkg/metrics"):
				fail("metrics sources import only the snapshot and each other")
			case under(me, "pkg/llm", "pkg/sharing", "pkg/commitplan", "pkg/governance") && ours && !under(dep, "pkg/fleet", "pricing", "pkg/llm", "pkg/money"):
				fail("strategy packages are pure: they import only the snapshot, the catalog, pkg/llm and the money formatter")
			case me == "pkg/suggest" && ours:
				fail("pkg/suggest is a leaf: it finds near names and imports nothing of gpufinops")
			case under(me, "pricing") && ours && !under(dep, "pkg/fleet", "pricing", "pkg/suggest"):
				fail("pricing imports only pkg/fleet, itself and the leaf pkg/suggest")
			case under(me, adapters...) && ours && under(dep, "pkg/cmd", "pkg/report", "pkg/recommend"):
				fail("adapters never import commands, the report or the engine")
			}
		}
	}
}
