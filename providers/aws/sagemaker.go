package aws

// SageMaker's GPU machines: endpoint production variants, notebook
// instances, Studio apps, training and processing jobs. They run in
// SageMaker's own account, never as the scanned account's EC2 instances, so
// they are read from SageMaker's API beside EC2's, one scope (account and
// region) at a time. What each call gives is in
// shared/data/managed-ai/metrics.md §1.2 and docs/managed-ai.md#sagemaker-aws.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sagemaker"
	smtypes "github.com/aws/aws-sdk-go-v2/service/sagemaker/types"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
	"github.com/gpufinops/gpufinops/providers"
)

// sageMakerPage is the most items a SageMaker list call returns (its
// MaxResults bound).
const sageMakerPage = 100

// sageMakerAPI is the part of the SageMaker client the inventory uses.
type sageMakerAPI interface {
	sagemaker.ListEndpointsAPIClient
	sagemaker.ListNotebookInstancesAPIClient
	sagemaker.ListAppsAPIClient
	sagemaker.ListTrainingJobsAPIClient
	sagemaker.ListProcessingJobsAPIClient
	DescribeEndpoint(context.Context, *sagemaker.DescribeEndpointInput, ...func(*sagemaker.Options)) (*sagemaker.DescribeEndpointOutput, error)
	DescribeEndpointConfig(context.Context, *sagemaker.DescribeEndpointConfigInput, ...func(*sagemaker.Options)) (*sagemaker.DescribeEndpointConfigOutput, error)
	DescribeTrainingJob(context.Context, *sagemaker.DescribeTrainingJobInput, ...func(*sagemaker.Options)) (*sagemaker.DescribeTrainingJobOutput, error)
	DescribeProcessingJob(context.Context, *sagemaker.DescribeProcessingJobInput, ...func(*sagemaker.Options)) (*sagemaker.DescribeProcessingJobOutput, error)
	ListTags(context.Context, *sagemaker.ListTagsInput, ...func(*sagemaker.Options)) (*sagemaker.ListTagsOutput, error)
}

// sageMakerClient returns the scope's SageMaker client, built once.
func (p *Provider) sageMakerClient(scope providers.Scope) (*sagemaker.Client, error) {
	return cachedClient(p, p.sms, scope, func(cfg aws.Config) *sagemaker.Client {
		return sagemaker.NewFromConfig(cfg, func(o *sagemaker.Options) { o.Region = scope.Region })
	})
}

// sageMakerItems reads the scope's SageMaker items when
// providers.aws.managed_ai is on. A SageMaker read that fails (a missing
// permission, say) is a note naming it, and the scan keeps its EC2
// instances; only a cancelled scan is an error.
func (p *Provider) sageMakerItems(ctx context.Context, scope providers.Scope) ([]fleet.Instance, error) {
	if !p.aws.managedAI {
		return nil, nil
	}
	c, err := p.sageMakerClient(scope)
	if err != nil {
		return nil, err
	}
	items, err := p.listSageMaker(ctx, c, scope)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, ctxErr
		}
		p.note(fmt.Sprintf("aws %s %s: SageMaker not read, its endpoints, notebooks and jobs are missing from the scan: %v%s", scope.Account, scope.Region, err, sageMakerFix(err)))
		return nil, nil
	}
	return items, nil
}

// sageMakerFix says what to do about a failed SageMaker read.
func sageMakerFix(err error) string {
	if errors.Is(err, providers.ErrPermission) {
		return " (grant the SageMaker read actions of 'gpufinops iam-policy aws', or set providers.aws." + OptManagedAI + "=false)"
	}
	return ""
}

// listSageMaker reads the scope's SageMaker GPU items: endpoint variants,
// notebook instances, Studio apps, running training and processing jobs,
// each with its tags.
func (p *Provider) listSageMaker(ctx context.Context, c sageMakerAPI, scope providers.Scope) ([]fleet.Instance, error) {
	cat, _ := catalog.Embedded()
	r := smReader{p: p, c: c, scope: scope, cat: cat}
	var (
		mu  sync.Mutex
		out []fleet.Instance
	)
	readers := []func(context.Context) ([]fleet.Instance, error){r.endpoints, r.notebooks, r.apps, r.trainingJobs, r.processingJobs}
	err := parallel(ctx, len(readers), len(readers), func(ctx context.Context, i int) error {
		items, err := readers[i](ctx)
		if err != nil {
			return err
		}
		mu.Lock()
		out = append(out, items...)
		mu.Unlock()
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := r.tags(ctx, out); err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// smReader reads one scope's SageMaker items.
type smReader struct {
	p     *Provider
	c     sageMakerAPI
	scope providers.Scope
	cat   pricing.Catalog
}

// hardwareOf is an ml.* type's hardware from the catalog (the type as
// SageMaker names it, else the EC2 type it runs on); ok is false for a
// type without accelerators. A type the catalog lacks is kept with its
// hardware unknown when its family is an accelerator family (pricing warns
// of it, as of an EC2 type it lacks; Accelerated), and dropped otherwise.
func (r smReader) hardwareOf(mlType string) (pricing.InstanceType, bool) {
	ec2Type := strings.TrimPrefix(mlType, "ml.")
	if r.cat != nil {
		for _, name := range []string{mlType, ec2Type} {
			if t, ok := r.cat.InstanceType(fleet.AWS, name); ok {
				return t, t.GPUCount > 0
			}
		}
	}
	return pricing.InstanceType{}, Accelerated(ec2Type)
}

// item is a SageMaker item with the fields every kind shares.
func (r smReader) item(id, name, mlType string, created *time.Time, m fleet.Managed) (fleet.Instance, bool) {
	hw, ok := r.hardwareOf(mlType)
	if !ok {
		return fleet.Instance{}, false
	}
	in := fleet.Instance{
		ID: id, Name: name, Provider: fleet.AWS, Account: r.scope.Account, Region: r.scope.Region, InstanceType: mlType,
		GPU:       fleet.GPU{Model: hw.GPUModel, Count: hw.GPUCount, MemoryGiB: hw.GPUMemoryGiB},
		VCPUs:     hw.VCPUs,
		MemoryGiB: hw.MemoryGiB,
		Lifecycle: fleet.OnDemand, State: fleet.Running, Managed: &m,
	}
	if created != nil {
		t := created.UTC()
		in.LaunchTime = &t
	}
	return in, true
}

// billedEndpoint reports whether an endpoint's status is one whose
// instances bill: in service, or being updated or rolled back in place.
func billedEndpoint(s smtypes.EndpointStatus) bool {
	switch s {
	case smtypes.EndpointStatusInService, smtypes.EndpointStatusUpdating, smtypes.EndpointStatusSystemUpdating,
		smtypes.EndpointStatusRollingBack, smtypes.EndpointStatusUpdateRollbackFailed:
		return true
	}
	return false
}

// endpoints lists the endpoints, then describes each and its
// configuration: one item per production variant on instances (a
// serverless variant has no machine and no GPU).
func (r smReader) endpoints(ctx context.Context) ([]fleet.Instance, error) {
	var names []smtypes.EndpointSummary
	pg := sagemaker.NewListEndpointsPaginator(r.c, &sagemaker.ListEndpointsInput{MaxResults: aws.Int32(sageMakerPage)})
	for pg.HasMorePages() {
		page, err := pg.NextPage(ctx)
		if err != nil {
			return nil, callError(ctx, "sagemaker:ListEndpoints", err)
		}
		for _, e := range page.Endpoints {
			if billedEndpoint(e.EndpointStatus) {
				names = append(names, e)
			}
		}
	}
	per := make([][]fleet.Instance, len(names))
	err := parallel(ctx, len(names), r.p.opts.Concurrency, func(ctx context.Context, i int) error {
		items, err := r.endpoint(ctx, names[i])
		per[i] = items
		return err
	})
	if err != nil {
		return nil, err
	}
	return slices.Concat(per...), nil
}

func (r smReader) endpoint(ctx context.Context, e smtypes.EndpointSummary) ([]fleet.Instance, error) {
	d, err := r.c.DescribeEndpoint(ctx, &sagemaker.DescribeEndpointInput{EndpointName: e.EndpointName})
	if err != nil {
		return nil, callError(ctx, "sagemaker:DescribeEndpoint", err)
	}
	cfg, err := r.c.DescribeEndpointConfig(ctx, &sagemaker.DescribeEndpointConfigInput{EndpointConfigName: d.EndpointConfigName})
	if err != nil {
		return nil, callError(ctx, "sagemaker:DescribeEndpointConfig", err)
	}
	config := map[string]smtypes.ProductionVariant{}
	for _, v := range cfg.ProductionVariants {
		config[aws.ToString(v.VariantName)] = v
	}
	async := d.AsyncInferenceConfig != nil || cfg.AsyncInferenceConfig != nil
	name, arn := aws.ToString(d.EndpointName), aws.ToString(d.EndpointArn)
	var out []fleet.Instance
	for _, v := range d.ProductionVariants {
		variant := aws.ToString(v.VariantName)
		c := config[variant]
		if c.ServerlessConfig != nil || v.CurrentServerlessConfig != nil || c.InstanceType == "" {
			continue
		}
		m := fleet.Managed{Service: fleet.SageMaker, Kind: fleet.KindEndpoint, Endpoint: name, Deployment: variant, Async: async, ScaleToZero: async,
			Replicas: &fleet.Replicas{Current: int(aws.ToInt32(v.CurrentInstanceCount))}}
		scaling := v.ManagedInstanceScaling
		if scaling == nil {
			scaling = c.ManagedInstanceScaling
		}
		if scaling != nil && scaling.Status != smtypes.ManagedInstanceScalingStatusDisabled {
			if scaling.MinInstanceCount != nil {
				m.Replicas.Min = aws.Int(int(*scaling.MinInstanceCount))
				m.ScaleToZero = m.ScaleToZero || *scaling.MinInstanceCount == 0
			}
			if scaling.MaxInstanceCount != nil {
				m.Replicas.Max = aws.Int(int(*scaling.MaxInstanceCount))
			}
		}
		in, ok := r.item(arn+"/variant/"+variant, name+"/"+variant, string(c.InstanceType), d.CreationTime, m)
		if !ok {
			continue
		}
		if m.CurrentReplicas() == 0 {
			in.State = fleet.Stopped // scaled to zero: nothing bills
		}
		out = append(out, in)
	}
	return out, nil
}

// notebooks lists the notebook instances. A notebook runs (and bills)
// unless it is Stopping or Stopped; Failed and Deleting ones are gone.
// SageMaker has no idle shutdown setting: an auto-stop script runs from a
// lifecycle configuration, so a notebook without one has idle shutdown off
// (0) and one with one unknown (nil).
func (r smReader) notebooks(ctx context.Context) ([]fleet.Instance, error) {
	var out []fleet.Instance
	pg := sagemaker.NewListNotebookInstancesPaginator(r.c, &sagemaker.ListNotebookInstancesInput{MaxResults: aws.Int32(sageMakerPage)})
	for pg.HasMorePages() {
		page, err := pg.NextPage(ctx)
		if err != nil {
			return nil, callError(ctx, "sagemaker:ListNotebookInstances", err)
		}
		for _, nb := range page.NotebookInstances {
			state := fleet.Running
			switch nb.NotebookInstanceStatus {
			case smtypes.NotebookInstanceStatusFailed, smtypes.NotebookInstanceStatusDeleting:
				continue
			case smtypes.NotebookInstanceStatusStopping, smtypes.NotebookInstanceStatusStopped:
				state = fleet.Stopped
			}
			m := fleet.Managed{Service: fleet.SageMaker, Kind: fleet.KindNotebook}
			if aws.ToString(nb.NotebookInstanceLifecycleConfigName) == "" {
				m.IdleShutdownMinutes = new(0.0)
			}
			in, ok := r.item(aws.ToString(nb.NotebookInstanceArn), aws.ToString(nb.NotebookInstanceName), string(nb.InstanceType), nb.CreationTime, m)
			if ok {
				in.State = state
				out = append(out, in)
			}
		}
	}
	return out, nil
}

// apps lists the Studio apps in service or starting, with an instance
// (system apps have none). ListApps gives no ARN: it is built as
// DescribeApp returns it.
func (r smReader) apps(ctx context.Context) ([]fleet.Instance, error) {
	var out []fleet.Instance
	pg := sagemaker.NewListAppsPaginator(r.c, &sagemaker.ListAppsInput{MaxResults: aws.Int32(sageMakerPage)})
	for pg.HasMorePages() {
		page, err := pg.NextPage(ctx)
		if err != nil {
			return nil, callError(ctx, "sagemaker:ListApps", err)
		}
		for _, a := range page.Apps {
			if a.Status != smtypes.AppStatusInService && a.Status != smtypes.AppStatusPending {
				continue
			}
			if a.ResourceSpec == nil || a.ResourceSpec.InstanceType == "" || a.ResourceSpec.InstanceType == smtypes.AppInstanceTypeSystem {
				continue
			}
			owner := aws.ToString(a.UserProfileName)
			if owner == "" {
				owner = aws.ToString(a.SpaceName)
			}
			name := strings.Join([]string{aws.ToString(a.DomainId), owner, string(a.AppType), aws.ToString(a.AppName)}, "/")
			arn := fmt.Sprintf("arn:aws:sagemaker:%s:%s:app/%s", r.scope.Region, r.scope.Account, name)
			m := fleet.Managed{Service: fleet.SageMaker, Kind: fleet.KindStudioApp, Workspace: aws.ToString(a.DomainId)}
			if in, ok := r.item(arn, name, string(a.ResourceSpec.InstanceType), a.CreationTime, m); ok {
				out = append(out, in)
			}
		}
	}
	return out, nil
}

// trainingJobs lists the training jobs in progress and describes each:
// its instance type and count, managed spot (spot lifecycle) and start.
func (r smReader) trainingJobs(ctx context.Context) ([]fleet.Instance, error) {
	var names []string
	pg := sagemaker.NewListTrainingJobsPaginator(r.c, &sagemaker.ListTrainingJobsInput{MaxResults: aws.Int32(sageMakerPage), StatusEquals: smtypes.TrainingJobStatusInProgress})
	for pg.HasMorePages() {
		page, err := pg.NextPage(ctx)
		if err != nil {
			return nil, callError(ctx, "sagemaker:ListTrainingJobs", err)
		}
		for _, j := range page.TrainingJobSummaries {
			names = append(names, aws.ToString(j.TrainingJobName))
		}
	}
	per := make([]*fleet.Instance, len(names))
	err := parallel(ctx, len(names), r.p.opts.Concurrency, func(ctx context.Context, i int) error {
		d, err := r.c.DescribeTrainingJob(ctx, &sagemaker.DescribeTrainingJobInput{TrainingJobName: aws.String(names[i])})
		if err != nil {
			return callError(ctx, "sagemaker:DescribeTrainingJob", err)
		}
		rc := d.ResourceConfig
		if rc == nil || rc.InstanceType == "" {
			return nil // heterogeneous clusters (InstanceGroups) are not read
		}
		start := d.TrainingStartTime
		if start == nil {
			start = d.CreationTime
		}
		m := fleet.Managed{Service: fleet.SageMaker, Kind: fleet.KindTrainingJob, Replicas: &fleet.Replicas{Current: int(aws.ToInt32(rc.InstanceCount))}}
		in, ok := r.item(aws.ToString(d.TrainingJobArn), aws.ToString(d.TrainingJobName), string(rc.InstanceType), start, m)
		if !ok {
			return nil
		}
		if aws.ToBool(d.EnableManagedSpotTraining) {
			in.Lifecycle = fleet.Spot
		}
		per[i] = &in
		return nil
	})
	if err != nil {
		return nil, err
	}
	return nonNil(per), nil
}

// processingJobs lists the processing jobs in progress and describes each.
func (r smReader) processingJobs(ctx context.Context) ([]fleet.Instance, error) {
	var names []string
	pg := sagemaker.NewListProcessingJobsPaginator(r.c, &sagemaker.ListProcessingJobsInput{MaxResults: aws.Int32(sageMakerPage), StatusEquals: smtypes.ProcessingJobStatusInProgress})
	for pg.HasMorePages() {
		page, err := pg.NextPage(ctx)
		if err != nil {
			return nil, callError(ctx, "sagemaker:ListProcessingJobs", err)
		}
		for _, j := range page.ProcessingJobSummaries {
			names = append(names, aws.ToString(j.ProcessingJobName))
		}
	}
	per := make([]*fleet.Instance, len(names))
	err := parallel(ctx, len(names), r.p.opts.Concurrency, func(ctx context.Context, i int) error {
		d, err := r.c.DescribeProcessingJob(ctx, &sagemaker.DescribeProcessingJobInput{ProcessingJobName: aws.String(names[i])})
		if err != nil {
			return callError(ctx, "sagemaker:DescribeProcessingJob", err)
		}
		if d.ProcessingResources == nil || d.ProcessingResources.ClusterConfig == nil {
			return nil
		}
		cc := d.ProcessingResources.ClusterConfig
		start := d.ProcessingStartTime
		if start == nil {
			start = d.CreationTime
		}
		m := fleet.Managed{Service: fleet.SageMaker, Kind: fleet.KindProcessingJob, Replicas: &fleet.Replicas{Current: int(aws.ToInt32(cc.InstanceCount))}}
		if in, ok := r.item(aws.ToString(d.ProcessingJobArn), aws.ToString(d.ProcessingJobName), string(cc.InstanceType), start, m); ok {
			per[i] = &in
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return nonNil(per), nil
}

func nonNil(items []*fleet.Instance) []fleet.Instance {
	var out []fleet.Instance
	for _, in := range items {
		if in != nil {
			out = append(out, *in)
		}
	}
	return out
}

// tagARN is the ARN SageMaker keeps an item's tags on: an endpoint's for
// its variants.
func tagARN(in *fleet.Instance) string {
	if i := strings.Index(in.ID, "/variant/"); i > 0 && in.Managed.Kind == fleet.KindEndpoint {
		return in.ID[:i]
	}
	return in.ID
}

// tags reads each item's tags with ListTags (one call per resource: an
// endpoint's variants share theirs), and the workload and owner they name.
func (r smReader) tags(ctx context.Context, items []fleet.Instance) error {
	var arns []string
	seen := map[string]bool{}
	for i := range items {
		if a := tagARN(&items[i]); !seen[a] {
			seen[a] = true
			arns = append(arns, a)
		}
	}
	got := make([]map[string]string, len(arns))
	err := parallel(ctx, len(arns), r.p.opts.Concurrency, func(ctx context.Context, i int) error {
		pg := sagemaker.NewListTagsPaginator(r.c, &sagemaker.ListTagsInput{ResourceArn: aws.String(arns[i]), MaxResults: aws.Int32(50)})
		for pg.HasMorePages() {
			page, err := pg.NextPage(ctx)
			if err != nil {
				return callError(ctx, "sagemaker:ListTags", err)
			}
			for _, t := range page.Tags {
				if got[i] == nil {
					got[i] = map[string]string{}
				}
				got[i][aws.ToString(t.Key)] = aws.ToString(t.Value)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	byARN := make(map[string]map[string]string, len(arns))
	for i, a := range arns {
		byARN[a] = got[i]
	}
	for i := range items {
		in := &items[i]
		if tags := byARN[tagARN(in)]; len(tags) > 0 {
			in.Tags = make(map[string]string, len(tags))
			for k, v := range tags {
				in.Tags[k] = v
			}
		}
		in.Workload = fleet.WorkloadFromTags(in.Tags)
		in.ManagedBy = fleet.DetectOwner(in.ID, in.Tags)
	}
	return nil
}

// sageMakerProbes are doctor's SageMaker permission checks of a region
// when providers.aws.managed_ai is on: one page of one item of each list
// the inventory reads, and each Describe and ListTags on a name that does
// not exist (SageMaker answers an allowed call for a missing resource
// with ValidationException or ResourceNotFound, a denied one with
// AccessDeniedException).
func (p *Provider) sageMakerProbes(scope providers.Scope) []probe {
	if scope.Region == "" || !p.aws.managedAI {
		return nil
	}
	c, err := p.sageMakerClient(scope)
	if err != nil {
		return nil
	}
	one := aws.Int32(1)
	const missing = "gpufinops-doctor-probe"
	arn := fmt.Sprintf("arn:aws:sagemaker:%s:%s:notebook-instance/%s", scope.Region, scope.Account, missing)
	absent := func(err error) error {
		if c := errorCode(err); c == "ValidationException" || c == "ResourceNotFound" {
			return nil
		}
		return err
	}
	return []probe{
		{"sagemaker:DescribeEndpoint", "a missing endpoint", func(ctx context.Context) error {
			_, err := c.DescribeEndpoint(ctx, &sagemaker.DescribeEndpointInput{EndpointName: aws.String(missing)})
			return absent(err)
		}},
		{"sagemaker:DescribeEndpointConfig", "a missing endpoint configuration", func(ctx context.Context) error {
			_, err := c.DescribeEndpointConfig(ctx, &sagemaker.DescribeEndpointConfigInput{EndpointConfigName: aws.String(missing)})
			return absent(err)
		}},
		{"sagemaker:DescribeNotebookInstance", "a missing notebook instance", func(ctx context.Context) error {
			_, err := c.DescribeNotebookInstance(ctx, &sagemaker.DescribeNotebookInstanceInput{NotebookInstanceName: aws.String(missing)})
			return absent(err)
		}},
		{"sagemaker:DescribeTrainingJob", "a missing training job", func(ctx context.Context) error {
			_, err := c.DescribeTrainingJob(ctx, &sagemaker.DescribeTrainingJobInput{TrainingJobName: aws.String(missing)})
			return absent(err)
		}},
		{"sagemaker:DescribeProcessingJob", "a missing processing job", func(ctx context.Context) error {
			_, err := c.DescribeProcessingJob(ctx, &sagemaker.DescribeProcessingJobInput{ProcessingJobName: aws.String(missing)})
			return absent(err)
		}},
		{"sagemaker:ListTags", "a missing notebook instance", func(ctx context.Context) error {
			_, err := c.ListTags(ctx, &sagemaker.ListTagsInput{ResourceArn: aws.String(arn)})
			return absent(err)
		}},
		{"sagemaker:ListEndpoints", "one call", func(ctx context.Context) error {
			_, err := c.ListEndpoints(ctx, &sagemaker.ListEndpointsInput{MaxResults: one})
			return err
		}},
		{"sagemaker:ListNotebookInstances", "one call", func(ctx context.Context) error {
			_, err := c.ListNotebookInstances(ctx, &sagemaker.ListNotebookInstancesInput{MaxResults: one})
			return err
		}},
		{"sagemaker:ListApps", "one call", func(ctx context.Context) error {
			_, err := c.ListApps(ctx, &sagemaker.ListAppsInput{MaxResults: one})
			return err
		}},
		{"sagemaker:ListTrainingJobs", "one call", func(ctx context.Context) error {
			_, err := c.ListTrainingJobs(ctx, &sagemaker.ListTrainingJobsInput{MaxResults: one, StatusEquals: smtypes.TrainingJobStatusInProgress})
			return err
		}},
		{"sagemaker:ListProcessingJobs", "one call", func(ctx context.Context) error {
			_, err := c.ListProcessingJobs(ctx, &sagemaker.ListProcessingJobsInput{MaxResults: one, StatusEquals: smtypes.ProcessingJobStatusInProgress})
			return err
		}},
	}
}

// sageMakerStopCheck is doctor's word on sagemaker:StopNotebookInstance:
// SageMaker has no dry run, so it cannot be checked without stopping.
func (p *Provider) sageMakerStopCheck() []providers.Check {
	if !p.aws.managedAI {
		return nil
	}
	return []providers.Check{{Name: "permission", Action: "sagemaker:StopNotebookInstance", Method: "none", Status: providers.CheckOK,
		Detail: "not checked: SageMaker has no dry run; idle-stop reads each notebook's status first and reports a denied stop per notebook"}}
}
