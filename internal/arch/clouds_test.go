package arch

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/gpufinops/gpufinops/providers"
	// The clouds whose names pkg/ must not spell are the registered ones.
	_ "github.com/gpufinops/gpufinops/providers/all"
)

// cloudSDKs are the import path prefixes of the clouds' SDKs and API
// clients: only the adapters under providers/ import them.
var cloudSDKs = []string{
	"github.com/aws/aws-sdk-go-v2",
	"github.com/aws/smithy-go",
	"github.com/Azure/azure-sdk-for-go",
	"cloud.google.com/go",
	"google.golang.org/api",
}

// sdkExceptions are packages under pkg/ allowed a cloud SDK import for now,
// with why; the test prints them, so the list stays honest. Empty: none.
var sdkExceptions = map[string]string{}

// cloudSDK is the SDK prefix an import path belongs to, or "".
func cloudSDK(imp string) string {
	for _, s := range cloudSDKs {
		if imp == s || strings.HasPrefix(imp, s+"/") {
			return s
		}
	}
	return ""
}

// TestNoCloudSDKUnderPkg: no package under pkg/ imports a cloud SDK, in its
// code or its tests; cloud clients are the adapters' (providers/<cloud>).
func TestNoCloudSDKUnderPkg(t *testing.T) {
	checked := 0
	for _, p := range listPackages(t) {
		me := rel(p.ImportPath)
		if !under(me, "pkg") {
			continue
		}
		checked++
		for _, imp := range append(append(append([]string(nil), p.Imports...), p.TestImports...), p.XTestImports...) {
			if sdk := cloudSDK(imp); sdk != "" {
				if why, ok := sdkExceptions[me]; ok {
					t.Logf("known exception: %s imports %s: %s", me, imp, why)
					continue
				}
				t.Errorf("%s imports %s (%s): cloud clients belong to the adapters under providers/", me, imp, sdk)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no package under pkg/ listed")
	}
	for me, why := range sdkExceptions {
		t.Logf("known exception: %s: %s", me, why)
	}
}

func TestCloudSDK(t *testing.T) {
	for imp, want := range map[string]string{
		"github.com/aws/aws-sdk-go-v2/service/athena":                "github.com/aws/aws-sdk-go-v2",
		"github.com/Azure/azure-sdk-for-go/sdk/azcore":               "github.com/Azure/azure-sdk-for-go",
		"cloud.google.com/go/bigquery":                               "cloud.google.com/go",
		"google.golang.org/api/option":                               "google.golang.org/api",
		"google.golang.org/protobuf/proto":                           "",
		"github.com/aws/aws-sdk-go-v2-fork/x":                        "",
		"github.com/gpufinops/gpufinops/providers/aws/sim/athenasim": "",
	} {
		if got := cloudSDK(imp); got != want {
			t.Errorf("cloudSDK(%q) = %q, want %q", imp, got, want)
		}
	}
}

// literalExceptions are the packages under pkg/ allowed to name a cloud,
// with why; the test prints them.
var literalExceptions = map[string]string{
	"pkg/fleet": "the fleet file format's provider enum (fleet.AWS, fleet.Azure, fleet.GCP, fleet.Providers), which the fleet JSON Schema enumerates",
}

// cloudWords are what names a registered cloud in code: its name and the
// FOCUS ProviderName its adapter registers, lower case.
func cloudWords() map[string]bool {
	words := map[string]bool{}
	for _, p := range providers.Names() {
		words[strings.ToLower(string(p))] = true
		if b := providers.BillingOf(p); b != nil {
			words[strings.ToLower(b.FOCUSName)] = true
			for _, n := range b.FOCUSNames {
				words[strings.ToLower(n)] = true
			}
		}
	}
	return words
}

// cloudMentions lists what in a file names a cloud: a string literal that
// is a cloud word (any case), or fleet.AWS, fleet.Azure, fleet.GCP.
func cloudMentions(fset *token.FileSet, f *ast.File, words map[string]bool) []string {
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.BasicLit:
			if x.Kind != token.STRING {
				return true
			}
			if v, err := strconv.Unquote(x.Value); err == nil && words[strings.ToLower(strings.TrimSpace(v))] {
				out = append(out, fset.Position(x.Pos()).String()+": "+x.Value)
			}
		case *ast.SelectorExpr:
			if id, ok := x.X.(*ast.Ident); ok && id.Name == "fleet" && (x.Sel.Name == "AWS" || x.Sel.Name == "Azure" || x.Sel.Name == "GCP") {
				out = append(out, fset.Position(x.Pos()).String()+": fleet."+x.Sel.Name)
			}
		}
		return true
	})
	return out
}

// TestNoCloudNamedUnderPkg: no code under pkg/ (tests aside) names a cloud:
// what a cloud's bills call it, how its ids read and which warehouse holds
// them come from its adapter's registration, so adding a cloud needs no
// edit there. The data model's provider enum is the one exception.
func TestNoCloudNamedUnderPkg(t *testing.T) {
	words := cloudWords()
	if !words["aws"] || !words["microsoft"] || !words["google cloud"] {
		t.Fatalf("the registered clouds' words %v lack aws, microsoft or google cloud", words)
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var found, excused []string
	files := 0
	err = filepath.WalkDir(filepath.Join(root, "pkg"), func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files++
		dir, _ := filepath.Rel(root, filepath.Dir(path))
		for _, m := range cloudMentions(fset, f, words) {
			m = strings.TrimPrefix(m, root+string(filepath.Separator))
			if _, ok := literalExceptions[filepath.ToSlash(dir)]; ok {
				excused = append(excused, m)
				continue
			}
			found = append(found, m)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files == 0 {
		t.Fatal("no Go file under pkg/")
	}
	sort.Strings(found)
	for _, m := range found {
		t.Errorf("%s names a cloud under pkg/: take it from the adapter's registration (providers.RegInfo, providers.Billing)", m)
	}
	for dir, why := range literalExceptions {
		t.Logf("known exception: %s: %s", dir, why)
	}
	for _, m := range excused {
		t.Logf("  excused: %s", m)
	}
}

// TestCloudMentions: the scan finds a literal and a constant, in any case,
// and passes a mere substring.
func TestCloudMentions(t *testing.T) {
	src := `package x
import "github.com/gpufinops/gpufinops/pkg/fleet"
func a(p string) string {
	if p == "aws" || p == string(fleet.GCP) { return "Google Cloud" }
	return "awsome " + "MICROSOFT"
}`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "x.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := cloudMentions(fset, f, map[string]bool{"aws": true, "gcp": true, "google cloud": true, "microsoft": true})
	want := []string{`x.go:4:10: "aws"`, `x.go:4:31: fleet.GCP`, `x.go:4:51: "Google Cloud"`, `x.go:5:21: "MICROSOFT"`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("mentions:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
