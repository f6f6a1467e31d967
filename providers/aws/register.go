package aws

import (
	"embed"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/providers"
	"github.com/gpufinops/gpufinops/providers/ratelimit"
)

func init() { providers.Register(Registration()) }

// The adapter's own options: providers.aws.<name> in the configuration,
// GPUFINOPS_PROVIDERS_AWS_<NAME> in the environment.
const (
	OptProfiles         = "profiles"
	OptRoleARNs         = "role_arns"
	OptMetricsNamespace = "metrics_namespace"
	OptRateLimits       = "rate_limits"
	OptManagedAI        = "managed_ai"
)

// MaxLookbackDays is how long CloudWatch keeps hourly data.
const MaxLookbackDays = 455

// Registration is what the adapter registers: its options and flags, doctor
// hints, IAM policy, the owner tags of AWS services and how AWS sells
// commitments.
func Registration() *providers.RegInfo {
	return &providers.RegInfo{
		Name:        fleet.AWS,
		Description: "Amazon Web Services: EC2 GPU instances, CloudWatch agent GPU metrics, Price List, spot and Savings Plans prices",
		New:         New,
		Options: []providers.Option{
			{Name: OptProfiles, Flag: "profile", Default: []string{}, Help: "AWS profiles, one account each (default: the standard credential chain)"},
			{Name: OptRoleARNs, Flag: "role-arn", Default: []string{}, Help: "AWS roles to assume for more accounts"},
			{Name: OptMetricsNamespace, Default: DefaultNamespace, Help: "CloudWatch namespace of the agent's GPU metrics", Validate: func(v any) error {
				if v.(string) == "" {
					return fmt.Errorf("empty; want a CloudWatch namespace such as %s", DefaultNamespace)
				}
				return nil
			}},
			{Name: OptManagedAI, Default: true, Help: "read SageMaker endpoints, notebook instances, Studio apps and running jobs beside EC2 (read-only List/Describe calls; false skips them)"},
			{Name: OptRateLimits, Default: []string{}, Help: "request quotas per API (" + strings.Join(ratelimit.APIs(Quotas), ", ") + ") as API=N/PER[:BURST], or off (default: AWS's documented quotas, docs/performance.md)", Validate: func(v any) error {
				_, err := ratelimit.NewSet(Quotas, v.([]string))
				return err
			}},
		},
		Doctor: providers.DoctorInfo{
			Default:        true,
			CredentialsFix: "configure credentials (see docs/aws.md and 'gpufinops help environment')",
			Checks: `the credentials (sts:GetCallerIdentity), each permission the commands need
(EC2 calls with DryRun, which change nothing; one cheap read each for
CloudWatch, the Price List and Savings Plans; for idle-stop, a DryRun
StopInstances on one running GPU instance; with providers.aws.managed_ai, one
call of each SageMaker list), and how many running GPU
instances publish GPU metrics for every GPU (some GPUs only: partial), with
the CloudWatch agent configuration that adds them.`,
		},
		Policy:      Policy(),
		OwnerRules:  OwnerRules,
		Purchase:    &providers.Purchase{Plan: pricing.ComputeSavingsPlan, Payment: pricing.PayNoUpfront, Name: "Compute Savings Plan"},
		Lookback:    providers.Lookback{MaxDays: MaxLookbackDays, Why: "CloudWatch keeps hourly data 455 days"},
		Accelerated: Accelerated,
		Billing:     Billing(),

		Regions:        knownRegions,
		ManagedCommand: ManagedCommand,
	}
}

// options are the adapter's own option values.
type options struct {
	profiles         []string
	roleARNs         []string
	metricsNamespace string
	rateLimits       []string
	managedAI        bool
}

// optionsFrom reads the adapter's options, defaults filled in.
func optionsFrom(v providers.Values) options {
	o := options{
		profiles:         v.Strings(OptProfiles),
		roleARNs:         v.Strings(OptRoleARNs),
		metricsNamespace: v.String(OptMetricsNamespace),
		rateLimits:       v.Strings(OptRateLimits),
		managedAI:        true,
	}
	if b, ok := v[OptManagedAI].(bool); ok {
		o.managedAI = b
	}
	if o.metricsNamespace == "" {
		o.metricsNamespace = DefaultNamespace
	}
	return o
}

// iamDocs holds byte-identical copies of docs/iam/aws-*.json.
//
//go:embed iam/*.json
var iamDocs embed.FS

// IAMAnalyze is what the adapter calls to inventory, measure and price a
// fleet: read-only, on every resource (none of these actions can be scoped
// to resources). docs/iam/aws-analyze.json grants exactly these.
var IAMAnalyze = []providers.Permission{
	{Action: "cloudwatch:GetMetricData", Purpose: "read the CloudWatch agent's GPU, GPU memory and host metrics"},
	{Action: "cloudwatch:ListMetrics", Purpose: "find which instances publish GPU metrics, and their dimensions"},
	{Action: "ec2:DescribeCapacityReservations", Purpose: "the Capacity Reservations and Capacity Blocks the account holds (paid whether used or not)"},
	{Action: "ec2:DescribeInstanceTypes", Purpose: "GPU model, count and memory of each instance type"},
	{Action: "ec2:DescribeInstances", Purpose: "list GPU instances, their state, lifecycle and tags"},
	{Action: "ec2:DescribeRegions", Purpose: "find the account's enabled regions"},
	{Action: "ec2:DescribeReservedInstances", Purpose: "the Reserved Instances the account holds, so no advice saves what they already pay for"},
	{Action: "ec2:DescribeSpotInstanceRequests", Purpose: "whether a spot instance's request is persistent (it can be stopped) or one-time (it can only be terminated)"},
	{Action: "ec2:DescribeSpotPriceHistory", Purpose: "live spot prices per zone"},
	{Action: "pricing:GetProducts", Purpose: "live on-demand prices from the Price List"},
	{Action: "sagemaker:DescribeEndpoint", Purpose: "a SageMaker endpoint's production variants and their current instance counts and scaling bounds"},
	{Action: "sagemaker:DescribeEndpointConfig", Purpose: "the instance type of each SageMaker endpoint variant, and whether it is serverless or asynchronous"},
	{Action: "sagemaker:DescribeNotebookInstance", Purpose: "a SageMaker notebook instance's status before idle-stop stops it (SageMaker has no DryRun)"},
	{Action: "sagemaker:DescribeProcessingJob", Purpose: "a running SageMaker processing job's instance type and count"},
	{Action: "sagemaker:DescribeTrainingJob", Purpose: "a running SageMaker training job's instance type and count, and whether it uses managed spot"},
	{Action: "sagemaker:ListApps", Purpose: "SageMaker Studio apps and their instance types"},
	{Action: "sagemaker:ListEndpoints", Purpose: "list SageMaker real-time endpoints"},
	{Action: "sagemaker:ListNotebookInstances", Purpose: "list SageMaker notebook instances, their types and status"},
	{Action: "sagemaker:ListProcessingJobs", Purpose: "list running SageMaker processing jobs"},
	{Action: "sagemaker:ListTags", Purpose: "the tags of each SageMaker endpoint, notebook, app and job (owners, protection)"},
	{Action: "sagemaker:ListTrainingJobs", Purpose: "list running SageMaker training jobs"},
	{Action: "savingsplans:DescribeSavingsPlans", Purpose: "the Savings Plans the account holds and their hourly commitments"},
	{Action: "savingsplans:DescribeSavingsPlansOfferingRates", Purpose: "live Savings Plans rates"},
	{Action: "sts:GetCallerIdentity", Purpose: "check the credentials and name the account"},
}

// IAMIdleStop is what idle-stop adds: stopping instances and SageMaker
// notebook instances tagged AutoShutdown=true, never those tagged
// auto-shutdown-exempt=true.
// docs/iam/aws-idle-stop.json grants IAMAnalyze and these.
var IAMIdleStop = []providers.Permission{
	{Action: "ec2:StopInstances", Purpose: "stop idle instances tagged AutoShutdown=true (a dry run first checks the permission); never those tagged auto-shutdown-exempt=true"},
	{Action: "sagemaker:StopNotebookInstance", Purpose: "stop idle SageMaker notebook instances tagged AutoShutdown=true; never those tagged auto-shutdown-exempt=true"},
}

// IAMAssumeRole is what the base credentials need to scan more accounts
// with --role-arn; it belongs on the caller, scoped to the role ARNs (see
// docs/iam/README.md), not in the policies above.
var IAMAssumeRole = []providers.Permission{
	{Action: "sts:AssumeRole", Purpose: "scan other accounts through the roles given with --role-arn"},
}

// Policy is the adapter's least-privilege IAM policy.
func Policy() *providers.Policy {
	return &providers.Policy{
		Kind:     "IAM policy",
		Analyze:  IAMAnalyze,
		IdleStop: IAMIdleStop,
		Extra:    IAMAssumeRole,
		Document: func(idleStop bool) ([]byte, error) {
			if idleStop {
				return iamDocs.ReadFile("iam/idle-stop.json")
			}
			return iamDocs.ReadFile("iam/analyze.json")
		},
		Notes: `The same documents are in docs/iam/ (aws-analyze.json, aws-idle-stop.json), with
how to attach them and the extra sts:AssumeRole permission for scanning more
accounts with --role-arn:
  $ gpufinops iam-policy aws > gpufinops-analyze.json
  $ aws iam create-policy --policy-name gpufinops-analyze --policy-document file://gpufinops-analyze.json`,
	}
}

// OwnerRules are the tags AWS services put on the instances they manage,
// most specific first (an EKS managed node is also an Auto Scaling group
// member; it is named as the node group). The tags that name the pool or
// group come before the prefixes that also match markers and cluster tags
// (karpenter.sh/discovery, alpha.eksctl.io/cluster-name): the owner is the
// pool, in its cluster.
var OwnerRules = []fleet.OwnerRule{
	{Provider: fleet.AWS, Key: "karpenter.sh/nodepool", Kind: fleet.OwnerKarpenter, ClusterKeys: eksClusterKeys},
	{Provider: fleet.AWS, Key: "karpenter.sh/provisioner-name", Kind: fleet.OwnerKarpenter, ClusterKeys: eksClusterKeys},
	{Provider: fleet.AWS, Key: "eks:nodegroup-name", Kind: fleet.OwnerEKSNodeGroup, ClusterKeys: eksClusterKeys},
	{Provider: fleet.AWS, Key: "alpha.eksctl.io/nodegroup-name", Kind: fleet.OwnerEKSNodeGroup, ClusterKeys: eksClusterKeys},
	{Provider: fleet.AWS, Key: "aws:elasticmapreduce:job-flow-id", Kind: fleet.OwnerEMR},
	{Provider: fleet.AWS, Key: "parallelcluster:cluster-name", Kind: fleet.OwnerParallelCluster},
	{Provider: fleet.AWS, Key: "karpenter.sh/", Prefix: true, Kind: fleet.OwnerKarpenter},
	{Provider: fleet.AWS, Key: "karpenter.k8s.aws/", Prefix: true, Kind: fleet.OwnerKarpenter},
	{Provider: fleet.AWS, Key: "eks:cluster-name", Kind: fleet.OwnerEKSNodeGroup},
	{Provider: fleet.AWS, Key: "eks:eks-cluster-name", Kind: fleet.OwnerEKSNodeGroup},
	{Provider: fleet.AWS, Key: "alpha.eksctl.io/", Prefix: true, Kind: fleet.OwnerEKSNodeGroup},
	{Provider: fleet.AWS, Key: "k8s.io/cluster-autoscaler/", Prefix: true, Kind: fleet.OwnerClusterAutoscaler, NameFromKey: true},
	{Provider: fleet.AWS, Key: "sagemaker:", Prefix: true, Kind: fleet.OwnerSageMaker},
	{Provider: fleet.AWS, Key: "aws:sagemaker:", Prefix: true, Kind: fleet.OwnerSageMaker},
	{Provider: fleet.AWS, Key: "AWSBatchServiceTag", Kind: fleet.OwnerBatch},
	{Provider: fleet.AWS, Key: "aws:batch:", Prefix: true, Kind: fleet.OwnerBatch},
	{Provider: fleet.AWS, Key: "aws:elasticmapreduce:", Prefix: true, Kind: fleet.OwnerEMR},
	{Provider: fleet.AWS, Key: "parallelcluster:", Prefix: true, Kind: fleet.OwnerParallelCluster},
	{Provider: fleet.AWS, Key: "aws-parallelcluster", Prefix: true, Kind: fleet.OwnerParallelCluster},
	{Provider: fleet.AWS, Key: "aws:ec2spot:fleet-request-id", Kind: fleet.OwnerSpotFleet},
	{Provider: fleet.AWS, Key: "aws:ec2:fleet-id", Kind: fleet.OwnerEC2Fleet},
	{Provider: fleet.AWS, Key: "AmazonECSManaged", Kind: fleet.OwnerECS},
	{Provider: fleet.AWS, Key: "aws:ecs:", Prefix: true, Kind: fleet.OwnerECS},
	{Provider: fleet.AWS, Key: "elasticbeanstalk:", Prefix: true, Kind: fleet.OwnerElasticBeanstalk},
	{Provider: fleet.AWS, Key: "kubernetes.io/cluster/", Prefix: true, Kind: fleet.OwnerKubernetes, NameFromKey: true},
	{Provider: fleet.AWS, Key: "aws:autoscaling:groupName", Kind: fleet.OwnerAutoScalingGroup},
}

// Accelerated reports whether an instance type is of an accelerator family:
// one of AcceleratorFamilies, or a family named like them (p, g, gr, inf,
// trn or dl and a generation digit): "g3.4xlarge" and "g9z.4xlarge" are,
// "c5.large" is not.
func Accelerated(instanceType string) bool {
	family, _, ok := strings.Cut(strings.ToLower(instanceType), ".")
	return ok && (slices.Contains(AcceleratorFamilies, family) || acceleratorFamily.MatchString(family))
}

var acceleratorFamily = regexp.MustCompile(`^(p|g|gr|inf|trn|dl)\d[a-z0-9-]*$`)

// eksClusterKeys are the tags that name an EKS node's cluster.
var eksClusterKeys = []string{"eks:cluster-name", "eks:eks-cluster-name", "alpha.eksctl.io/cluster-name", "karpenter.sh/managed-by"}
