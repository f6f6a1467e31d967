// Package iampolicy implements `gpufinops iam-policy`: the least-privilege
// IAM policy gpufinops needs in a cloud, read-only for analysis or with the
// tag-scoped stop permission for idle-stop. The documents are embedded copies
// of docs/iam/*.json; the actions they grant are listed once, in AWSAnalyze,
// AWSIdleStop and AWSAssumeRole, and tests hold the documents and the AWS
// adapter's calls to those lists.
package iampolicy

import (
	"embed"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/pkg/tableprinter"
)

// policies holds byte-identical copies of docs/iam/*.json.
//
//go:embed policies/*.json
var policies embed.FS

// Permission is one IAM action gpufinops calls, and why.
type Permission struct {
	Action  string
	Purpose string
}

// AWSAnalyze is what the AWS adapter calls to inventory, measure and price a
// fleet: read-only, on every resource (none of these actions can be scoped to
// resources). docs/iam/aws-analyze.json grants exactly these.
var AWSAnalyze = []Permission{
	{"cloudwatch:GetMetricData", "read the CloudWatch agent's GPU, GPU memory and host metrics"},
	{"cloudwatch:ListMetrics", "find which instances publish GPU metrics, and their dimensions"},
	{"ec2:DescribeInstanceTypes", "GPU model, count and memory of each instance type"},
	{"ec2:DescribeInstances", "list GPU instances, their state, lifecycle and tags"},
	{"ec2:DescribeRegions", "find the account's enabled regions"},
	{"ec2:DescribeSpotPriceHistory", "live spot prices per zone"},
	{"pricing:GetProducts", "live on-demand prices from the Price List"},
	{"savingsplans:DescribeSavingsPlansOfferingRates", "live Savings Plans rates"},
	{"sts:GetCallerIdentity", "check the credentials and name the account"},
}

// AWSIdleStop is what idle-stop adds: stopping instances tagged
// AutoShutdown=true, never those tagged auto-shutdown-exempt=true.
// docs/iam/aws-idle-stop.json grants AWSAnalyze and these.
var AWSIdleStop = []Permission{
	{"ec2:StopInstances", "stop idle instances tagged AutoShutdown=true (a dry run first checks the permission); never those tagged auto-shutdown-exempt=true"},
}

// AWSAssumeRole is what the base credentials need to scan more accounts with
// --role-arn; it belongs on the caller, scoped to the role ARNs (see
// docs/iam/README.md), not in the policies above.
var AWSAssumeRole = []Permission{
	{"sts:AssumeRole", "scan other accounts through the roles given with --role-arn"},
}

// Clouds are the clouds with a policy.
var Clouds = []string{"aws"}

// Policy returns the policy document for a cloud: read-only, or with the
// idle-stop permission.
func Policy(cloud string, idleStop bool) ([]byte, error) {
	if cloud != "aws" {
		return nil, fmt.Errorf("no IAM policy for %q: clouds with a policy: %s (azure and gcp come later)", cloud, strings.Join(Clouds, ", "))
	}
	name := "policies/aws-analyze.json"
	if idleStop {
		name = "policies/aws-idle-stop.json"
	}
	return policies.ReadFile(name)
}

// IAMPolicyOptions are the inputs of `gpufinops iam-policy`.
type IAMPolicyOptions struct {
	IO *iostreams.IOStreams
	// Cloud is the cloud whose policy to print.
	Cloud string
	// IdleStop adds the permission to stop idle instances.
	IdleStop bool
	// Output is json (the policy document) or table (the actions and why).
	Output string
}

// NewCmdIAMPolicy builds the command; runF replaces the run function in tests.
func NewCmdIAMPolicy(f *cmdutil.Factory, runF func(*IAMPolicyOptions) error) *cobra.Command {
	opts := &IAMPolicyOptions{IO: f.IOStreams}
	var output *cmdutil.OutputFlag
	cmd := &cobra.Command{
		Use:   "iam-policy <cloud> [--idle-stop]",
		Short: "Print the least-privilege IAM policy gpufinops needs",
		Long: `Print the least-privilege IAM policy for scanning a cloud: read-only by
default, or with --idle-stop the permission to stop idle instances, limited to
instances tagged AutoShutdown=true and denied on instances tagged
auto-shutdown-exempt=true. The same documents are in docs/iam/, with how to
attach them and the extra sts:AssumeRole permission for scanning more
accounts with --role-arn. Clouds: aws (azure and gcp come later).`,
		Example: `  $ gpufinops iam-policy aws > gpufinops-analyze.json
  $ aws iam create-policy --policy-name gpufinops-analyze --policy-document file://gpufinops-analyze.json
  $ gpufinops iam-policy aws --idle-stop
  $ gpufinops iam-policy aws -o table`,
		ValidArgs: Clouds,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return cmdutil.FlagErrorf("give one cloud: %s", strings.Join(Clouds, ", "))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Cloud = strings.ToLower(args[0])
			opts.Output = output.Value
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
	output = cmdutil.AddOutputFlag(cmd, "json", "table")
	return cmd
}

func iamPolicyRun(opts *IAMPolicyOptions) error {
	doc, err := Policy(opts.Cloud, opts.IdleStop)
	if err != nil {
		return err
	}
	if opts.Output == "json" {
		_, err := opts.IO.Out.Write(doc)
		return err
	}
	perms := AWSAnalyze
	if opts.IdleStop {
		perms = append(append([]Permission{}, AWSAnalyze...), AWSIdleStop...)
	}
	t := tableprinter.New(opts.IO.Out, opts.IO.IsStdoutTTY(), "action", "why")
	t.SetWidth(opts.IO.TerminalWidth())
	t.Key(0, 1)
	t.Truncate(1, 20)
	for _, p := range perms {
		t.AddRow(p.Action, p.Purpose)
	}
	return t.Render()
}
