package gcp

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// listMethods are the SDK's paginated REST methods, whose requests carry no
// context unless withCall binds one (see withCall).
var listMethods = map[string]bool{"AggregatedList": true, "List": true, "ListSkus": true, "SearchProjects": true}

// TestListCallsUseWithCall: every call of a paginated REST method in the
// adapter is in a function that calls withCall, so a new list call cannot
// silently ignore its deadline.
func TestListCallsUseWithCall(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		// innermost function bodies: a func literal is checked on its own
		var check func(body *ast.BlockStmt)
		check = func(body *ast.BlockStmt) {
			var lists []*ast.CallExpr
			bound := false
			ast.Inspect(body, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.FuncLit:
					check(n.Body)
					return false
				case *ast.CallExpr:
					if sel, ok := n.Fun.(*ast.SelectorExpr); ok {
						switch {
						case sel.Sel.Name == "withCall":
							bound = true
						case listMethods[sel.Sel.Name]:
							lists = append(lists, n)
						}
					}
				}
				return true
			})
			for _, c := range lists {
				checked++
				if !bound {
					t.Errorf("%s: %s is called without withCall in its function: its requests would ignore the context", fset.Position(c.Pos()), c.Fun.(*ast.SelectorExpr).Sel.Name)
				}
			}
		}
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
				check(fd.Body)
			}
		}
	}
	if checked < 5 {
		t.Errorf("found %d list calls; the adapter has at least 5", checked)
	}
}
