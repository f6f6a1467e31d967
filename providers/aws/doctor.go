package aws

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	awspricing "github.com/aws/aws-sdk-go-v2/service/pricing"
	"github.com/aws/aws-sdk-go-v2/service/savingsplans"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing/catalog"
	"github.com/gpufinops/gpufinops/providers"
)

var _ providers.Doctor = (*Provider)(nil)

// AgentConfig is the CloudWatch agent configuration that publishes every
// metric gpufinops reads (docs/aws.md), for the default namespace.
const AgentConfig = `{
  "metrics": {
    "namespace": "CWAgent",
    "append_dimensions": {
      "InstanceId": "${aws:InstanceId}",
      "InstanceType": "${aws:InstanceType}"
    },
    "metrics_collected": {
      "nvidia_gpu": {
        "measurement": ["utilization_gpu", "memory_used", "memory_total"],
        "metrics_collection_interval": 60
      },
      "mem": {
        "measurement": ["mem_used_percent"],
        "metrics_collection_interval": 60
      }
    }
  }
}`

// AgentLoad is the command that loads AgentConfig on an instance.
const AgentLoad = `sudo /opt/aws/amazon-cloudwatch-agent/bin/amazon-cloudwatch-agent-ctl \
  -a fetch-config -m ec2 -s -c file:/opt/aws/amazon-cloudwatch-agent/etc/gpufinops.json`

// probe is one permission check: the IAM action and the call that tests it.
type probe struct {
	action string
	method string
	call   func(ctx context.Context) error
}

// CheckPermissions implements providers.Doctor. Account-wide (no region):
// sts:GetCallerIdentity, ec2:DescribeRegions (DryRun), pricing:GetProducts
// and savingsplans:DescribeSavingsPlansOfferingRates (one page of one
// result each; neither API has a dry run). Per region: EC2's
// DescribeInstances, DescribeInstanceTypes, DescribeSpotPriceHistory and
// DescribeSpotInstanceRequests with DryRun (and the commitment reads: commitmentProbes) (DryRunOperation means allowed, UnauthorizedOperation denied), and
// CloudWatch's ListMetrics and GetMetricData with one cheap call each.
// With providers.aws.managed_ai on, each SageMaker list the inventory reads
// is called once for one item (sageMakerProbes). Nothing is changed.
// ec2:StopInstances (idle-stop) needs an instance to dry-run on:
// CheckCoverage, which lists them, checks it.
func (p *Provider) CheckPermissions(ctx context.Context, scope providers.Scope) []providers.Check {
	a, err := p.account(scope)
	if err != nil {
		return []providers.Check{{Name: "credentials", Status: providers.CheckMissing, Detail: err.Error()}}
	}
	var probes []probe
	if scope.Region == "" {
		stsc := sts.NewFromConfig(a.cfg, p.stsOptions)
		ec2c := ec2.NewFromConfig(a.cfg)
		pc, _ := p.pricingClient(scope)
		spc, _ := p.savingsPlansClient(scope)
		probes = []probe{
			{"sts:GetCallerIdentity", "one call", func(ctx context.Context) error {
				_, err := stsc.GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
				return err
			}},
			{"ec2:DescribeRegions", "DryRun", func(ctx context.Context) error {
				_, err := ec2c.DescribeRegions(ctx, &ec2.DescribeRegionsInput{DryRun: aws.Bool(true)})
				return dryRun(err)
			}},
			{"pricing:GetProducts", "one call", func(ctx context.Context) error {
				_, err := pc.GetProducts(ctx, &awspricing.GetProductsInput{ServiceCode: aws.String("AmazonEC2"), FormatVersion: aws.String("aws_v1"), MaxResults: aws.Int32(1)})
				return err
			}},
			{"savingsplans:DescribeSavingsPlansOfferingRates", "one call", func(ctx context.Context) error {
				_, err := spc.DescribeSavingsPlansOfferingRates(ctx, &savingsplans.DescribeSavingsPlansOfferingRatesInput{MaxResults: 1})
				return err
			}},
		}
	} else {
		ec2c, err := p.ec2Client(scope)
		if err != nil {
			return []providers.Check{{Name: "credentials", Status: providers.CheckMissing, Detail: err.Error()}}
		}
		cwc, err := p.cloudWatchClient(scope)
		if err != nil {
			return []providers.Check{{Name: "credentials", Status: providers.CheckMissing, Detail: err.Error()}}
		}
		end := p.opts.Now().UTC().Truncate(time.Hour)
		probes = []probe{
			{"ec2:DescribeInstances", "DryRun", func(ctx context.Context) error {
				_, err := ec2c.DescribeInstances(ctx, &ec2.DescribeInstancesInput{DryRun: aws.Bool(true)})
				return dryRun(err)
			}},
			{"ec2:DescribeInstanceTypes", "DryRun", func(ctx context.Context) error {
				_, err := ec2c.DescribeInstanceTypes(ctx, &ec2.DescribeInstanceTypesInput{DryRun: aws.Bool(true)})
				return dryRun(err)
			}},
			{"ec2:DescribeSpotPriceHistory", "DryRun", func(ctx context.Context) error {
				_, err := ec2c.DescribeSpotPriceHistory(ctx, &ec2.DescribeSpotPriceHistoryInput{DryRun: aws.Bool(true)})
				return dryRun(err)
			}},
			{"ec2:DescribeSpotInstanceRequests", "DryRun", func(ctx context.Context) error {
				_, err := ec2c.DescribeSpotInstanceRequests(ctx, &ec2.DescribeSpotInstanceRequestsInput{DryRun: aws.Bool(true)})
				return dryRun(err)
			}},
			{"cloudwatch:ListMetrics", "one call", func(ctx context.Context) error {
				_, err := cwc.ListMetrics(ctx, &cloudwatch.ListMetricsInput{Namespace: aws.String(p.aws.metricsNamespace), MetricName: aws.String(MetricGPUUtilization)})
				return err
			}},
			{"cloudwatch:GetMetricData", "one call", func(ctx context.Context) error {
				_, err := cwc.GetMetricData(ctx, &cloudwatch.GetMetricDataInput{
					StartTime: aws.Time(end.Add(-time.Hour)), EndTime: aws.Time(end),
					MetricDataQueries: []cwtypes.MetricDataQuery{{
						Id: aws.String("doctor"),
						MetricStat: &cwtypes.MetricStat{
							Metric: &cwtypes.Metric{Namespace: aws.String(p.aws.metricsNamespace), MetricName: aws.String(MetricGPUUtilization),
								Dimensions: []cwtypes.Dimension{{Name: aws.String("InstanceId"), Value: aws.String("i-00000000000000000")}}},
							Period: aws.Int32(3600), Stat: aws.String("Average"),
						},
					}},
				})
				return err
			}},
		}
	}
	probes = append(probes, p.commitmentProbes(scope)...)
	probes = append(probes, p.sageMakerProbes(scope)...)
	// The probes run at once: a region that answers nothing but errors
	// costs one call's retries, not one per probe.
	out := make([]providers.Check, len(probes))
	var wg sync.WaitGroup
	for i, pr := range probes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = runProbe(ctx, a.label, pr)
		}()
	}
	wg.Wait()
	return out
}

// runProbe makes one probe's call and judges the answer.
func runProbe(ctx context.Context, label string, pr probe) providers.Check {
	c := providers.Check{Name: "permission", Action: pr.action, Method: pr.method, Status: providers.CheckOK}
	if pr.action == "sts:GetCallerIdentity" {
		c.Name = "credentials"
	}
	if err := pr.call(ctx); err != nil {
		err = classify(err)
		c.Detail = firstLine(err)
		switch {
		case errors.Is(err, providers.ErrCredentials):
			c.Status = providers.CheckMissing
			c.Fix = "check the credentials of " + label + " (aws sts get-caller-identity)"
		case errors.Is(err, providers.ErrPermission):
			c.Status = providers.CheckMissing
			c.Fix = "grant " + pr.action + " (gpufinops iam-policy aws)"
			if strings.HasPrefix(pr.action, "sagemaker:") {
				c.Fix += ", or set providers.aws." + OptManagedAI + "=false to skip SageMaker"
			}
		default:
			c.Status = providers.CheckError
		}
	}
	return c
}

// dryRun turns EC2's DryRunOperation answer (the call would have succeeded)
// into success.
func dryRun(err error) error {
	if err != nil && errorCode(err) == "DryRunOperation" {
		return nil
	}
	return err
}

// firstLine shortens an SDK error to its message on one line.
func firstLine(err error) string {
	s := err.Error()
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			return s[:i]
		}
	}
	return s
}

// CheckCoverage implements providers.Doctor: it lists the scope's GPU
// instances and finds, with ListMetrics, which running ones publish GPU
// utilization in the metrics namespace, for every GPU (a GPU index
// dimension per GPU, or one series without the dimension for the whole
// instance): an instance with some GPUs missing is partial, not publishing.
// Instances without it, or partial, are a warning with the agent
// configuration that adds them. It then checks ec2:StopInstances, which
// idle-stop needs, with a DryRun stop of one of the listed instances.
func (p *Provider) CheckCoverage(ctx context.Context, scope providers.Scope) (checks []providers.Check) {
	c := providers.Check{Name: "metrics", Action: "GPU metrics in " + p.aws.metricsNamespace, Status: providers.CheckOK}
	listed, err := p.ListGPUInstances(ctx, scope)
	if err != nil {
		c.Status, c.Detail = providers.CheckError, firstLine(err)
		return []providers.Check{c}
	}
	defer func() {
		cat, _ := catalog.Embedded()
		checks = append(checks, providers.UnknownTypesCheck(listed, cat)...)
	}()
	// SageMaker's items publish no agent metrics and are stopped through
	// SageMaker: the agent and StopInstances checks are the EC2 instances'.
	var instances []fleet.Instance
	for _, in := range listed {
		if !in.IsManaged() {
			instances = append(instances, in)
		}
	}
	stop := providers.StopCheck(ctx, p, scope, instances, "ec2:StopInstances", "DryRun", "gpufinops iam-policy aws --idle-stop")
	return append([]providers.Check{p.gpuCoverage(ctx, scope, instances, c), stop}, p.sageMakerStopCheck()...)
}

// gpuCoverage fills c with how many of the running instances publish GPU
// metrics for every GPU.
func (p *Provider) gpuCoverage(ctx context.Context, scope providers.Scope, instances []fleet.Instance, c providers.Check) providers.Check {
	want := map[string]int{}
	for i, in := range instances {
		if in.State != fleet.Stopped {
			want[in.ID] = i
		}
	}
	if len(want) == 0 {
		c.Detail = "no running GPU instances"
		return c
	}
	cw, err := p.cloudWatchClient(scope)
	if err != nil {
		c.Status, c.Detail = providers.CheckError, firstLine(err)
		return c
	}
	all, err := p.discoverSeries(ctx, cw, want)
	if err != nil {
		c.Status, c.Detail = providers.CheckError, firstLine(err)
		return c
	}
	gpus := map[int]map[int]bool{}
	for _, s := range all {
		if s.kind == kindGPU {
			if gpus[s.inst] == nil {
				gpus[s.inst] = map[int]bool{}
			}
			gpus[s.inst][s.gpu] = true
		}
	}
	cov := providers.CoverageOf(instances, func(i int) int {
		idx := gpus[i]
		if idx[-1] && len(idx) == 1 {
			return providers.GPUsOf(&instances[i]) // one series for the whole instance
		}
		delete(idx, -1)
		return len(idx)
	})
	c.Detail = cov.Detail("GPU instances")
	if cov.OK() {
		return c
	}
	c.Status = providers.CheckWarn
	c.Detail += ": install the CloudWatch agent with the nvidia_gpu block"
	c.Fix = "save as /opt/aws/amazon-cloudwatch-agent/etc/gpufinops.json" + namespaceNote(p.aws.metricsNamespace) + ":\n" + AgentConfig + "\nand load it with:\n" + AgentLoad
	return c
}

// namespaceNote says to change the snippet's namespace when gpufinops reads
// another one.
func namespaceNote(ns string) string {
	if ns == DefaultNamespace {
		return ""
	}
	return fmt.Sprintf(" (with \"namespace\": %q)", ns)
}
