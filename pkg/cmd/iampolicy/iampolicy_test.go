package iampolicy

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/providers"
)

// acme is a cloud registered for the tests, with a policy.
var acme = &providers.Policy{
	Kind:     "IAM policy",
	Analyze:  []providers.Permission{{Action: "acme:List", Purpose: "list"}, {Action: "acme:Read", Purpose: "read"}},
	IdleStop: []providers.Permission{{Action: "acme:Stop", Purpose: "stop tagged instances"}},
	Extra:    []providers.Permission{{Action: "acme:ReadBilling", Purpose: "a billing role at the tenant"}},
	Document: func(idleStop bool) ([]byte, error) {
		if idleStop {
			return []byte(`{"stop":true}` + "\n"), nil
		}
		return []byte(`{"stop":false}` + "\n"), nil
	},
	Notes: "attach it to the role",
}

func init() {
	providers.Register(&providers.RegInfo{Name: "acme", Policy: acme})
	// A cloud without a policy is not offered.
	providers.Register(&providers.RegInfo{Name: "nopolicy"})
}

func TestNewCmdIAMPolicy(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		want    IAMPolicyOptions
		wantErr string
	}{
		{name: "acme", args: []string{"acme"}, want: IAMPolicyOptions{Cloud: "acme", Output: "json"}},
		{name: "idle stop", args: []string{"ACME", "--idle-stop", "-o", "table"}, want: IAMPolicyOptions{Cloud: "acme", IdleStop: true, Output: "table"}},
		{name: "no cloud", args: nil, wantErr: "give one cloud: acme"},
		{name: "two clouds", args: []string{"acme", "gcp"}, wantErr: "give one cloud: acme"},
		{name: "registered without a policy", args: []string{"nopolicy"}, wantErr: `no IAM policy for "nopolicy": clouds with a policy: acme`},
		{name: "unknown", args: []string{"oracle"}, wantErr: `no IAM policy for "oracle": clouds with a policy: acme`},
		{name: "bad output", args: []string{"acme", "-o", "xml"}, wantErr: `"xml" is not one of json, yaml, table`},
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
	for _, idle := range []bool{false, true} {
		ios, _, stdout, _ := iostreams.Test()
		if err := iamPolicyRun(&IAMPolicyOptions{IO: ios, Cloud: "acme", Output: "json", IdleStop: idle}); err != nil {
			t.Fatal(err)
		}
		want, _ := acme.Document(idle)
		if stdout.String() != string(want) {
			t.Errorf("idle-stop %v printed %q, want the registered document %q", idle, stdout, want)
		}
	}
	for _, idle := range []bool{false, true} {
		ios, _, stdout, _ := iostreams.Test()
		if err := iamPolicyRun(&IAMPolicyOptions{IO: ios, Cloud: "acme", Output: "table", IdleStop: idle}); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
		perms := acme.Permissions(idle)
		if len(lines) != 1+len(perms)+len(acme.Extra) || !strings.HasPrefix(lines[0], "action") {
			t.Fatalf("table:\n%s", stdout)
		}
		// What the document cannot grant is listed after it, marked so.
		if last := lines[len(lines)-1]; !strings.Contains(last, "acme:ReadBilling") || !strings.Contains(last, "outside the document") {
			t.Errorf("last row %q, want the permission granted outside the document", last)
		}
		for _, p := range perms {
			if !strings.Contains(stdout.String(), p.Action) {
				t.Errorf("table lacks %s", p.Action)
			}
		}
		if strings.Contains(stdout.String(), "acme:Stop") != idle {
			t.Errorf("idle-stop %v: table\n%s", idle, stdout)
		}
	}
}

func TestHelpNamesRegisteredClouds(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	cmd := NewCmdIAMPolicy(&cmdutil.Factory{IOStreams: ios}, nil)
	if !strings.Contains(cmd.Long, "Clouds: acme, wide.") || !strings.Contains(cmd.Long, "acme: attach it to the role") {
		t.Errorf("help:\n%s", cmd.Long)
	}
	got, _ := cmd.ValidArgsFunction(cmd, nil, "")
	if !slices.Equal(got, []string{"acme", "wide"}) {
		t.Errorf("completion %v", got)
	}
}
