package iampolicy

import (
	"bytes"
	"encoding/json"
	"errors"
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
	"github.com/aws/aws-sdk-go-v2/service/savingsplans"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/spf13/cobra"

	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/iostreams"
)

const docsDir = "../../../docs/iam"

// The embedded policies are byte-identical copies of docs/iam/*.json.
func TestEmbeddedCopiesEqualDocs(t *testing.T) {
	docs, err := filepath.Glob(filepath.Join(docsDir, "*.json"))
	if err != nil || len(docs) == 0 {
		t.Fatalf("no policies in %s: %v", docsDir, err)
	}
	embedded, err := policies.ReadDir("policies")
	if err != nil {
		t.Fatal(err)
	}
	if len(embedded) != len(docs) {
		t.Errorf("%d embedded policies, %d in %s", len(embedded), len(docs), docsDir)
	}
	for _, path := range docs {
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		got, err := policies.ReadFile("policies/" + filepath.Base(path))
		if err != nil {
			t.Errorf("%s is not embedded: copy it to pkg/cmd/iampolicy/policies/", path)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("pkg/cmd/iampolicy/policies/%s differs from %s: copy it again", filepath.Base(path), path)
		}
	}
}

// document is an IAM policy document, strictly decoded.
type document struct {
	Version   string
	Statement []statement
}

type statement struct {
	Sid       string
	Effect    string
	Action    []string
	Resource  string
	Condition map[string]map[string]string `json:",omitempty"`
}

func readDoc(t *testing.T, name string) document {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(docsDir, name))
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var d document
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

func actions(perms []Permission) []string {
	var out []string
	for _, p := range perms {
		out = append(out, p.Action)
	}
	sort.Strings(out)
	return out
}

func TestAnalyzePolicy(t *testing.T) {
	d := readDoc(t, "aws-analyze.json")
	if len(d.Statement) != 1 {
		t.Fatalf("%d statements, want 1", len(d.Statement))
	}
	s := d.Statement[0]
	if s.Effect != "Allow" || s.Resource != "*" || s.Condition != nil {
		t.Errorf("statement %+v, want a plain Allow on *", s)
	}
	if !slices.Equal(s.Action, actions(AWSAnalyze)) {
		t.Errorf("actions %v\nwant AWSAnalyze %v", s.Action, actions(AWSAnalyze))
	}
	for _, a := range s.Action {
		verb := a[strings.Index(a, ":")+1:]
		if !strings.HasPrefix(verb, "Describe") && !strings.HasPrefix(verb, "List") && !strings.HasPrefix(verb, "Get") {
			t.Errorf("%s is not read-only", a)
		}
	}
}

func TestIdleStopPolicy(t *testing.T) {
	d := readDoc(t, "aws-idle-stop.json")
	analyze := readDoc(t, "aws-analyze.json")
	if len(d.Statement) != 3 {
		t.Fatalf("%d statements, want 3", len(d.Statement))
	}
	if !reflect.DeepEqual(d.Statement[0], analyze.Statement[0]) {
		t.Errorf("first statement %+v\nwant the analyze policy's %+v", d.Statement[0], analyze.Statement[0])
	}
	const instances = "arn:aws:ec2:*:*:instance/*"
	allow, deny := d.Statement[1], d.Statement[2]
	want := statement{Sid: allow.Sid, Effect: "Allow", Action: actions(AWSIdleStop), Resource: instances,
		Condition: map[string]map[string]string{"StringEquals": {"aws:ResourceTag/AutoShutdown": "true"}}}
	if !reflect.DeepEqual(allow, want) {
		t.Errorf("stop statement %+v\nwant %+v", allow, want)
	}
	want = statement{Sid: deny.Sid, Effect: "Deny", Action: actions(AWSIdleStop), Resource: instances,
		Condition: map[string]map[string]string{"StringEquals": {"aws:ResourceTag/auto-shutdown-exempt": "true"}}}
	if !reflect.DeepEqual(deny, want) {
		t.Errorf("exempt statement %+v\nwant %+v", deny, want)
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
	files, err := filepath.Glob("../../../providers/aws/*.go")
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
func TestPoliciesMatchAdapterCalls(t *testing.T) {
	used := adapterActions(t)
	declared := map[string]bool{}
	for _, p := range slices.Concat(AWSAnalyze, AWSIdleStop, AWSAssumeRole) {
		declared[p.Action] = true
	}
	for a, where := range used {
		if !declared[a] {
			t.Errorf("the adapter calls %s (%s) but no policy grants it: add it to AWSAnalyze or AWSIdleStop and docs/iam", a, strings.Join(where, ", "))
		}
	}
	for a := range declared {
		if len(used[a]) == 0 {
			t.Errorf("the policies grant %s but the adapter never calls it", a)
		}
	}
}

// docs/iam/README.md explains every action.
func TestReadmeNamesEveryAction(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(docsDir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range slices.Concat(AWSAnalyze, AWSIdleStop, AWSAssumeRole) {
		if !bytes.Contains(data, []byte("`"+p.Action+"`")) {
			t.Errorf("docs/iam/README.md does not name `%s`", p.Action)
		}
	}
}

func TestNewCmdIAMPolicy(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		want    IAMPolicyOptions
		wantErr string
	}{
		{name: "aws", args: []string{"aws"}, want: IAMPolicyOptions{Cloud: "aws", Output: "json"}},
		{name: "idle stop", args: []string{"AWS", "--idle-stop", "-o", "table"}, want: IAMPolicyOptions{Cloud: "aws", IdleStop: true, Output: "table"}},
		{name: "no cloud", args: nil, wantErr: "give one cloud: aws"},
		{name: "two clouds", args: []string{"aws", "gcp"}, wantErr: "give one cloud: aws"},
		{name: "azure", args: []string{"azure"}, wantErr: `no IAM policy for "azure": clouds with a policy: aws (azure and gcp come later)`},
		{name: "unknown", args: []string{"oracle"}, wantErr: `no IAM policy for "oracle": clouds with a policy: aws`},
		{name: "bad output", args: []string{"aws", "-o", "yaml"}, wantErr: `"yaml" is not one of json, table`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ios, _, _, _ := iostreams.Test()
			var got *IAMPolicyOptions
			cmd := NewCmdIAMPolicy(&cmdutil.Factory{IOStreams: ios}, func(o *IAMPolicyOptions) error { got = o; return nil })
			cmd.SetArgs(tc.args)
			cmd.SetOut(&bytes.Buffer{})
			cmd.SetErr(&bytes.Buffer{})
			cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &cmdutil.FlagError{Err: err} })
			err := cmd.Execute()
			if tc.wantErr != "" {
				var flagErr *cmdutil.FlagError
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.As(err, &flagErr) {
					t.Fatalf("error %v, want a usage error with %q", err, tc.wantErr)
				}
				if cmdutil.ExitCodeFor(err) != cmdutil.ExitUsage {
					t.Errorf("exit code %d", cmdutil.ExitCodeFor(err))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got.IO = nil
			if *got != tc.want {
				t.Errorf("options %+v, want %+v", *got, tc.want)
			}
		})
	}
}

func TestIAMPolicyRun(t *testing.T) {
	for _, tc := range []struct {
		opts IAMPolicyOptions
		doc  string
	}{
		{IAMPolicyOptions{Cloud: "aws", Output: "json"}, "aws-analyze.json"},
		{IAMPolicyOptions{Cloud: "aws", Output: "json", IdleStop: true}, "aws-idle-stop.json"},
	} {
		ios, _, stdout, _ := iostreams.Test()
		tc.opts.IO = ios
		if err := iamPolicyRun(&tc.opts); err != nil {
			t.Fatal(err)
		}
		want, _ := os.ReadFile(filepath.Join(docsDir, tc.doc))
		if stdout.String() != string(want) {
			t.Errorf("%+v printed\n%s\nwant docs/iam/%s", tc.opts, stdout, tc.doc)
		}
	}

	ios, _, stdout, _ := iostreams.Test()
	if err := iamPolicyRun(&IAMPolicyOptions{IO: ios, Cloud: "aws", Output: "table", IdleStop: true}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if len(lines) != 1+len(AWSAnalyze)+len(AWSIdleStop) || !strings.HasPrefix(lines[0], "action") {
		t.Fatalf("table:\n%s", stdout)
	}
	for _, p := range slices.Concat(AWSAnalyze, AWSIdleStop) {
		if !strings.Contains(stdout.String(), p.Action) {
			t.Errorf("table lacks %s", p.Action)
		}
	}
}
