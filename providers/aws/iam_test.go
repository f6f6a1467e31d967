package aws

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/pricing"
	"github.com/aws/aws-sdk-go-v2/service/sagemaker"
	"github.com/aws/aws-sdk-go-v2/service/savingsplans"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/gpufinops/gpufinops/providers"
)

const iamDocsDir = "../../docs/iam"

// The embedded policies are byte-identical copies of docs/iam/aws-*.json.
func TestEmbeddedIAMCopiesEqualDocs(t *testing.T) {
	docs, err := filepath.Glob(filepath.Join(iamDocsDir, "aws-*.json"))
	if err != nil || len(docs) == 0 {
		t.Fatalf("no policies in %s: %v", iamDocsDir, err)
	}
	embedded, err := iamDocs.ReadDir("iam")
	if err != nil {
		t.Fatal(err)
	}
	if len(embedded) != len(docs) {
		t.Errorf("%d embedded policies, %d in %s", len(embedded), len(docs), iamDocsDir)
	}
	for _, path := range docs {
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(filepath.Base(path), "aws-")
		got, err := iamDocs.ReadFile("iam/" + name)
		if err != nil {
			t.Errorf("%s is not embedded: copy it to providers/aws/iam/%s", path, name)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("providers/aws/iam/%s differs from %s: copy it again", name, path)
		}
	}
	for idle, name := range map[bool]string{false: "aws-analyze.json", true: "aws-idle-stop.json"} {
		got, err := Policy().Document(idle)
		want, _ := os.ReadFile(filepath.Join(iamDocsDir, name))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("Policy().Document(%v) is not docs/iam/%s (%v)", idle, name, err)
		}
	}
}

// iamDocument is an IAM policy document, strictly decoded.
type iamDocument struct {
	Version   string
	Statement []iamStatement
}

type iamStatement struct {
	Sid       string
	Effect    string
	Action    []string
	Resource  string
	Condition map[string]map[string]string `json:",omitempty"`
}

func readIAMDoc(t *testing.T, name string) iamDocument {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(iamDocsDir, name))
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var d iamDocument
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if dec.More() {
		t.Fatalf("%s: more than one JSON value", name)
	}
	if d.Version != "2012-10-17" {
		t.Errorf("%s: Version %q, want 2012-10-17", name, d.Version)
	}
	sids := map[string]bool{}
	for i, s := range d.Statement {
		if s.Sid == "" || sids[s.Sid] {
			t.Errorf("%s: statement %d: Sid %q is empty or repeated", name, i, s.Sid)
		}
		sids[s.Sid] = true
		if s.Effect != "Allow" && s.Effect != "Deny" {
			t.Errorf("%s: %s: Effect %q", name, s.Sid, s.Effect)
		}
		if len(s.Action) == 0 || s.Resource == "" {
			t.Errorf("%s: %s: no Action or Resource", name, s.Sid)
		}
		if !slices.IsSorted(s.Action) || len(slices.Compact(slices.Clone(s.Action))) != len(s.Action) {
			t.Errorf("%s: %s: actions not sorted or repeated: %v", name, s.Sid, s.Action)
		}
		for _, a := range s.Action {
			if strings.Contains(a, "*") || strings.Count(a, ":") != 1 {
				t.Errorf("%s: %s: action %q is not one service:Action", name, s.Sid, a)
			}
		}
	}
	return d
}

func actions(perms []providers.Permission) []string {
	var out []string
	for _, p := range perms {
		out = append(out, p.Action)
	}
	sort.Strings(out)
	return out
}

func TestIAMAnalyzePolicy(t *testing.T) {
	d := readIAMDoc(t, "aws-analyze.json")
	if len(d.Statement) != 1 {
		t.Fatalf("%d statements, want 1", len(d.Statement))
	}
	s := d.Statement[0]
	if s.Effect != "Allow" || s.Resource != "*" || s.Condition != nil {
		t.Errorf("statement %+v, want a plain Allow on *", s)
	}
	if !slices.Equal(s.Action, actions(IAMAnalyze)) {
		t.Errorf("actions %v\nwant IAMAnalyze %v", s.Action, actions(IAMAnalyze))
	}
	for _, a := range s.Action {
		verb := a[strings.Index(a, ":")+1:]
		if !strings.HasPrefix(verb, "Describe") && !strings.HasPrefix(verb, "List") && !strings.HasPrefix(verb, "Get") {
			t.Errorf("%s is not read-only", a)
		}
	}
}

func TestIAMIdleStopPolicy(t *testing.T) {
	d := readIAMDoc(t, "aws-idle-stop.json")
	analyze := readIAMDoc(t, "aws-analyze.json")
	if len(d.Statement) != 5 {
		t.Fatalf("%d statements, want 5", len(d.Statement))
	}
	if !reflect.DeepEqual(d.Statement[0], analyze.Statement[0]) {
		t.Errorf("first statement %+v\nwant the analyze policy's %+v", d.Statement[0], analyze.Statement[0])
	}
	// One Allow and one Deny per stop action, on its resource type.
	var stops []string
	for i, c := range []struct{ action, resource string }{
		{"ec2:StopInstances", "arn:aws:ec2:*:*:instance/*"},
		{"sagemaker:StopNotebookInstance", "arn:aws:sagemaker:*:*:notebook-instance/*"},
	} {
		stops = append(stops, c.action)
		allow, deny := d.Statement[1+2*i], d.Statement[2+2*i]
		want := iamStatement{Sid: allow.Sid, Effect: "Allow", Action: []string{c.action}, Resource: c.resource,
			Condition: map[string]map[string]string{"StringEquals": {"aws:ResourceTag/AutoShutdown": "true"}}}
		if !reflect.DeepEqual(allow, want) {
			t.Errorf("stop statement %+v\nwant %+v", allow, want)
		}
		want = iamStatement{Sid: deny.Sid, Effect: "Deny", Action: []string{c.action}, Resource: c.resource,
			Condition: map[string]map[string]string{"StringEquals": {"aws:ResourceTag/auto-shutdown-exempt": "true"}}}
		if !reflect.DeepEqual(deny, want) {
			t.Errorf("exempt statement %+v\nwant %+v", deny, want)
		}
	}
	if !slices.Equal(stops, actions(IAMIdleStop)) {
		t.Errorf("stop statements for %v, IAMIdleStop has %v", stops, actions(IAMIdleStop))
	}
}

// sdkOperations maps each operation of the SDK clients the adapter uses to
// its IAM action; a name two services share maps to both.
func sdkOperations() map[string][]string {
	ops := map[string][]string{}
	for prefix, client := range map[string]any{
		"cloudwatch":   &cloudwatch.Client{},
		"ec2":          &ec2.Client{},
		"pricing":      &pricing.Client{},
		"sagemaker":    &sagemaker.Client{},
		"savingsplans": &savingsplans.Client{},
		"sts":          &sts.Client{},
	} {
		typ := reflect.TypeOf(client)
		for i := 0; i < typ.NumMethod(); i++ {
			if name := typ.Method(i).Name; name != "Options" {
				ops[name] = append(ops[name], prefix+":"+name)
			}
		}
	}
	return ops
}

// adapterActions reads the AWS adapter's source and returns the IAM actions
// of the SDK operations it calls, directly or through a paginator, and of the
// role it assumes through stscreds.
func adapterActions(t *testing.T) map[string][]string {
	t.Helper()
	ops := sdkOperations()
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no adapter source: %v", err)
	}
	used := map[string][]string{} // action → where
	fset := token.NewFileSet()
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			name := sel.Sel.Name
			var found []string
			switch {
			case name == "NewAssumeRoleProvider":
				found = []string{"sts:AssumeRole"}
			case strings.HasPrefix(name, "New") && strings.HasSuffix(name, "Paginator"):
				found = ops[strings.TrimSuffix(strings.TrimPrefix(name, "New"), "Paginator")]
			default:
				found = ops[name]
			}
			for _, a := range found {
				used[a] = append(used[a], fset.Position(call.Pos()).String())
			}
			return true
		})
	}
	return used
}

// The policies grant what the AWS adapter calls, and nothing it does not.
func TestIAMPoliciesMatchAdapterCalls(t *testing.T) {
	used := adapterActions(t)
	declared := map[string]bool{}
	for _, p := range slices.Concat(IAMAnalyze, IAMIdleStop, IAMAssumeRole) {
		declared[p.Action] = true
	}
	for a, where := range used {
		if !declared[a] {
			t.Errorf("the adapter calls %s (%s) but no policy grants it: add it to IAMAnalyze or IAMIdleStop, docs/iam and providers/aws/iam", a, strings.Join(where, ", "))
		}
	}
	for a := range declared {
		if len(used[a]) == 0 {
			t.Errorf("the policies grant %s but the adapter never calls it", a)
		}
	}
}

// docs/iam/README.md explains every action.
func TestIAMReadmeNamesEveryAction(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(iamDocsDir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range slices.Concat(IAMAnalyze, IAMIdleStop, IAMAssumeRole) {
		if !bytes.Contains(data, []byte("`"+p.Action+"`")) {
			t.Errorf("docs/iam/README.md does not name `%s`", p.Action)
		}
	}
}
