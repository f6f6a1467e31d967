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
	ImportPath   string
	Imports      []string
	TestImports  []string
	XTestImports []string
}

func listPackages(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json=ImportPath,Imports,TestImports,XTestImports", mod+"...")
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

// isSim reports whether a package is a cloud's simulator (providers/<cloud>/sim
// and packages under it).
func isSim(path string) bool {
	parts := strings.Split(path, "/")
	return len(parts) >= 3 && parts[0] == "providers" && parts[2] == "sim"
}

// stdlib reports whether an import path is the standard library's (no
// domain in its first element).
func stdlib(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
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
			case ours && isSim(dep) && !under(me, adapterRoot(dep)) && !under(me, "cmd/cloudsim", "internal"):
				fail("simulators are mounted by cmd/cloudsim and the test helpers under internal/ only")
			case ours && under(dep, adapters...) && !isSim(dep) && !under(me, "pkg/cmd/factory", "providers/all", "cmd/cloudsim") && !under(me, adapterRoot(dep)):
				fail("adapters are reached through providers/all and the factory only")
			case me == "pkg/config" && ours && dep != "providers" && !under(dep, "pkg/fleet", "pkg/recommend", "pkg/idlestop", "pkg/suggest"):
				fail("pkg/config reads the policies it fills, the provider registry's option declarations and the leaf pkg/suggest, nothing else of gpufinops")
			case me == "providers" && ours && !under(dep, "pkg/fleet", "pricing"):
				fail("the provider contract imports only the snapshot and pricing")
			case me == "pkg/money" && ours:
				fail("pkg/money is a leaf: it formats amounts and imports nothing of gpufinops")
			case me == "pkg/envelope" && ours:
				fail("pkg/envelope is a leaf: it heads JSON documents and imports nothing of gpufinops")
			case me == "pkg/recommend" && ours && !under(dep, "pkg/fleet", "pricing", "pkg/llm", "pkg/sharing", "pkg/commitplan", "pkg/governance", "pkg/money", "pkg/coverage", "pkg/protect"):
				fail("the engine sees only the snapshot, the catalog, the pure strategy packages, the coverage allocation, the protection decision and the money formatter")
			case under(me, "pkg/coverage") && ours && !under(dep, "pkg/fleet", "pricing"):
				fail("pkg/coverage is pure: it allocates the fleet's commitments with the catalog's rates, and imports nothing else of gpufinops")
			case me == "pkg/protect" && ours && !under(dep, "pkg/fleet"):
				fail("pkg/protect, the protection decision idle-stop and analyze share, imports only the snapshot")
			case under(me, "pkg/metrics") && ours && !under(dep, "pkg/fleet", "pkg/metrics"):
				fail("metrics sources import only the snapshot and each other")
			case under(me, "pkg/llm", "pkg/sharing", "pkg/commitplan", "pkg/governance") && ours && !under(dep, "pkg/fleet", "pricing", "pkg/llm", "pkg/money", "pkg/envelope"):
				fail("strategy packages are pure: they import only the snapshot, the catalog, pkg/llm, the money formatter and the document header")
			case me == "pkg/suggest" && ours:
				fail("pkg/suggest is a leaf: it finds near names and imports nothing of gpufinops")
			case under(me, "pricing") && ours && !under(dep, "pkg/fleet", "pricing", "pkg/suggest"):
				fail("pricing imports only pkg/fleet, itself and the leaf pkg/suggest")
			case under(me, adapters...) && ours && under(dep, "pkg/cmd", "pkg/report", "pkg/recommend"):
				fail("adapters never import commands, the report or the engine")
			case under(me, "providers/ratelimit") && ours:
				fail("providers/ratelimit knows no cloud and imports nothing of gpufinops")
			case under(me, "providers/ratelimit") && !ours && !stdlib(imp) && imp != "golang.org/x/time/rate":
				fail("providers/ratelimit imports only the standard library and golang.org/x/time/rate")
			case under(me, "providers/simkit") && ours && !under(dep, "pkg/fleet", "providers/simkit", "pkg/suggest"):
				fail("providers/simkit imports only pkg/fleet and the leaf pkg/suggest of gpufinops")
			case under(me, "providers/simkit") && !ours && !stdlib(imp):
				fail("providers/simkit imports only the standard library outside gpufinops")
			case isSim(me) && ours && !under(dep, "pkg/fleet", "providers/simkit", me):
				fail("a simulator imports only pkg/fleet and providers/simkit of gpufinops: it shares no code with the client it checks")
			case isSim(me) && strings.HasPrefix(imp, "github.com/aws/aws-sdk-go-v2"), isSim(me) && strings.HasPrefix(imp, "github.com/Azure/azure-sdk-for-go"), isSim(me) && strings.HasPrefix(imp, "cloud.google.com/go"):
				fail("a simulator never imports the SDK it is checked with (wire codecs only)")
			case ours && under(dep, "providers/fake", "providers/providertest"):
				fail("only tests import the fake provider and the conformance suite")
			case under(me, "providers/fake", "providers/providertest") && ours && dep != "providers" && !under(dep, "pkg/fleet", "pricing"):
				fail("the fake and the conformance suite see only the provider contract, the snapshot and prices")
			}
		}
	}
}

func TestSimAndStdlibHelpers(t *testing.T) {
	for path, want := range map[string]bool{
		"providers/aws/sim": true, "providers/azure/sim": true, "providers/aws/sim/x": true,
		"providers/aws": false, "providers/aws/simcat": false, "providers/simkit": false, "cmd/cloudsim": false,
	} {
		if isSim(path) != want {
			t.Errorf("isSim(%q) = %v", path, !want)
		}
	}
	for path, want := range map[string]bool{
		"net/http": true, "encoding/json": true, "math/rand/v2": true,
		"github.com/shopspring/decimal": false, "gopkg.in/yaml.v3": false, "golang.org/x/sync/errgroup": false,
	} {
		if stdlib(path) != want {
			t.Errorf("stdlib(%q) = %v", path, !want)
		}
	}
}

// TestCommandTestsUseNoCloud: the tests of the command packages (and of
// pkg/cmdutil) get their providers from providers/fake or providers/file,
// never from a cloud adapter or its simulator; end-to-end tests against the
// simulators live in internal/e2e.
func TestCommandTestsUseNoCloud(t *testing.T) {
	clouds := []string{"providers/aws", "providers/azure", "providers/gcp", "providers/all", "providers/simkit"}
	checked := 0
	for _, p := range listPackages(t) {
		me := rel(p.ImportPath)
		if !under(me, "pkg/cmd", "pkg/cmdutil") {
			continue
		}
		checked++
		for _, imp := range append(p.TestImports, p.XTestImports...) {
			if dep := rel(imp); strings.HasPrefix(imp, mod) && under(dep, clouds...) {
				t.Errorf("a test of %s imports %s: command tests use providers/fake (or providers/file); simulator runs belong in internal/e2e", me, dep)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no command packages listed")
	}
}
