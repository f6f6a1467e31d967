// Package iampolicy implements `gpufinops iam-policy`: the least-privilege
// policy gpufinops needs in a cloud, read-only for analysis or with the
// tag-scoped stop permission for idle-stop. Each adapter registers its policy
// (providers.RegInfo.Policy) and its tests hold the document to the calls the
// adapter makes; this command only asks the registry.
package iampolicy

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/pkg/tableprinter"
	"github.com/gpufinops/gpufinops/providers"
)

// Clouds are the registered clouds with a least-privilege policy, sorted.
func Clouds() []string {
	var out []string
	for _, ri := range providers.Registered() {
		if ri.Policy != nil {
			out = append(out, string(ri.Name))
		}
	}
	return out
}

// policyOf is the registered policy of a cloud.
func policyOf(cloud string) (*providers.Policy, error) {
	if ri, ok := providers.Find(fleet.Provider(cloud)); ok && ri.Policy != nil {
		return ri.Policy, nil
	}
	return nil, fmt.Errorf("no IAM policy for %q: clouds with a policy: %s", cloud, strings.Join(Clouds(), ", "))
}

// Policy returns the policy document for a cloud: read-only, or with the
// idle-stop permission.
func Policy(cloud string, idleStop bool) ([]byte, error) {
	p, err := policyOf(cloud)
	if err != nil {
		return nil, err
	}
	return p.Document(idleStop)
}

// IAMPolicyOptions are the inputs of `gpufinops iam-policy`.
type IAMPolicyOptions struct {
	IO *iostreams.IOStreams
	// Cloud is the cloud whose policy to print.
	Cloud string
	// IdleStop adds the permission to stop idle instances.
	IdleStop bool
	// Output is json (the policy document as JSON), yaml (as YAML) or table
	// (the actions and why).
	Output string
	// Filter is the --jq or --template filter of the JSON output; nil prints it whole.
	Filter cmdutil.Filter
}

// NewCmdIAMPolicy builds the command; runF replaces the run function in tests.
func NewCmdIAMPolicy(f *cmdutil.Factory, runF func(*IAMPolicyOptions) error) *cobra.Command {
	opts := &IAMPolicyOptions{IO: f.IOStreams}
	var output *cmdutil.Output
	cmd := &cobra.Command{
		Use:   "iam-policy <cloud> [--idle-stop]",
		Short: "Print the least-privilege IAM policy gpufinops needs",
		Long: `Print the least-privilege policy for scanning a cloud: read-only by
default, or with --idle-stop the permission to stop idle instances, limited to
instances tagged AutoShutdown=true and denied on instances tagged
auto-shutdown-exempt=true. Clouds: ` + strings.Join(Clouds(), ", ") + "." + policyNotes(),
		Example: `  $ gpufinops iam-policy aws > gpufinops-analyze.json
  $ gpufinops iam-policy aws --idle-stop
  $ gpufinops iam-policy gcp -o yaml > gpufinops-analyze.yaml
  $ gpufinops iam-policy aws -o table`,
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return Clouds(), cobra.ShellCompDirectiveNoFileComp
		},
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return cmdutil.FlagErrorf("give one cloud: %s", strings.Join(Clouds(), ", "))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Cloud = strings.ToLower(args[0])
			opts.Output, opts.Filter = output.Format(), output.Filter
			if _, err := Policy(opts.Cloud, false); err != nil {
				return &cmdutil.FlagError{Err: err}
			}
			if runF != nil {
				return runF(opts)
			}
			return iamPolicyRun(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.IdleStop, "idle-stop", false, "add the permission to stop idle instances tagged AutoShutdown=true")
	output = cmdutil.AddOutputFlags(cmd, cmdutil.FormatJSON, cmdutil.FormatYAML, cmdutil.FormatTable)
	return cmd
}

func iamPolicyRun(opts *IAMPolicyOptions) error {
	doc, err := Policy(opts.Cloud, opts.IdleStop)
	if err != nil {
		return err
	}
	// The document is the cloud's own policy, to hand to the cloud as it is:
	// it has no gpufinops envelope. A cloud writes it in JSON (AWS, Azure)
	// or YAML (GCP's custom role); -o json and -o yaml each print it in the
	// format they name, which the cloud's CLI reads either way.
	return cmdutil.Print(context.Background(), opts.IO.Out, opts.Output, opts.Filter, nil, cmdutil.Printers{
		cmdutil.FormatJSON: func(w io.Writer) error {
			if json.Valid(doc) {
				_, err := w.Write(doc)
				return err
			}
			j, err := yaml.YAMLToJSON(doc)
			if err != nil {
				return fmt.Errorf("the %s policy is neither JSON nor YAML: %w", opts.Cloud, err)
			}
			var v any
			if err := json.Unmarshal(j, &v); err != nil {
				return err
			}
			return cmdutil.WriteJSON(w, v)
		},
		cmdutil.FormatYAML: func(w io.Writer) error {
			if !json.Valid(doc) {
				_, err := w.Write(doc)
				return err
			}
			y, err := yaml.JSONToYAML(doc)
			if err != nil {
				return err
			}
			_, err = w.Write(y)
			return err
		},
		cmdutil.FormatTable: func(w io.Writer) error { return writeTable(w, opts) },
	})
}

// writeTable lists the policy's permissions and why each is needed, then
// those granted outside the document (Policy.Extra: a role on the caller,
// a built-in role at the tenant's billing scopes), marked so.
func writeTable(w io.Writer, opts *IAMPolicyOptions) error {
	p, err := policyOf(opts.Cloud)
	if err != nil {
		return err
	}
	perms := p.Permissions(opts.IdleStop)
	t := tableprinter.New(w, opts.IO.IsStdoutTTY(), "action", "why")
	t.SetWidth(opts.IO.TerminalWidth())
	t.Key(0, 1)
	t.WrapColumn(1, 20)
	for _, p := range perms {
		t.AddRow(p.Action, p.Purpose)
	}
	for _, e := range p.Extra {
		t.AddRow(e.Action, "outside the document: "+e.Purpose)
	}
	return t.Render()
}

// policyNotes are each cloud's notes on its policy, for the help.
func policyNotes() string {
	var b strings.Builder
	for _, ri := range providers.Registered() {
		if ri.Policy != nil && ri.Policy.Notes != "" {
			fmt.Fprintf(&b, "\n\n%s: %s", ri.Name, ri.Policy.Notes)
		}
	}
	return b.String()
}
