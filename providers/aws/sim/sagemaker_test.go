package sim

import (
	"context"
	"fmt"
	"math"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/sagemaker"
	smtypes "github.com/aws/aws-sdk-go-v2/service/sagemaker/types"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// managedFixture is the shared fixture of managed AI items on three clouds.
const managedFixture = "../../../testdata/fleets/managed-ai.yaml"

func loadManagedFixture(t testing.TB) *fleet.Fleet {
	t.Helper()
	b, err := os.ReadFile(managedFixture)
	if err != nil {
		t.Fatal(err)
	}
	f, err := fleet.Parse(managedFixture, b)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// sageMakerFleet is the SageMaker items of the shared fixture in account,
// with n more endpoints and notebook instances (so that lists take several
// pages), a serverless and an async variant, a stopped notebook, a spot
// training job, a processing job and a notebook with more tags than one
// ListTags page.
func sageMakerFleet(account string, n int) *fleet.Fleet {
	b, err := os.ReadFile(managedFixture)
	if err != nil {
		panic(err)
	}
	src, err := fleet.Parse(managedFixture, b)
	if err != nil {
		panic(err)
	}
	f := &fleet.Fleet{}
	arn := func(res string) string { return "arn:aws:sagemaker:us-east-1:" + account + ":" + res }
	for _, in := range src.Instances {
		if in.Managed != nil && in.Managed.Service == fleet.SageMaker {
			in.Account = account
			in.ID = strings.Replace(in.ID, ":111122223333:", ":"+account+":", 1)
			f.Instances = append(f.Instances, in)
		}
	}
	launch := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	one, four := 1, 4
	add := func(id, typ string, m fleet.Managed, state fleet.State, tags map[string]string) {
		f.Instances = append(f.Instances, fleet.Instance{ID: id, Provider: fleet.AWS, Account: account, Region: "us-east-1", InstanceType: typ,
			Lifecycle: fleet.OnDemand, State: state, LaunchTime: &launch, Tags: tags, Managed: &m})
	}
	for i := range n {
		launch = launch.Add(time.Hour)
		add(arn(fmt.Sprintf("endpoint/gen-ep-%02d/variant/AllTraffic", i)), "ml.g5.xlarge",
			fleet.Managed{Service: fleet.SageMaker, Kind: fleet.KindEndpoint, Replicas: &fleet.Replicas{Current: 1}}, fleet.Running, map[string]string{"n": fmt.Sprint(i)})
		add(arn(fmt.Sprintf("notebook-instance/gen-nb-%02d", i)), "ml.g4dn.xlarge",
			fleet.Managed{Service: fleet.SageMaker, Kind: fleet.KindNotebook}, fleet.Running, map[string]string{"n": fmt.Sprint(i)})
	}
	many := map[string]string{}
	for i := range 50 {
		many[fmt.Sprintf("k%02d", i)] = "v"
	}
	add(arn("notebook-instance/nb-stopped"), "ml.g5.xlarge", fleet.Managed{Service: fleet.SageMaker, Kind: fleet.KindNotebook}, fleet.Stopped, many)
	add(arn("endpoint/multi/variant/serverless"), "ml.g5.xlarge", fleet.Managed{Service: fleet.SageMaker, Kind: fleet.KindEndpoint, Serverless: true}, fleet.Running, nil)
	add(arn("endpoint/multi/variant/big"), "ml.g5.12xlarge", fleet.Managed{Service: fleet.SageMaker, Kind: fleet.KindEndpoint, Async: true, ScaleToZero: true,
		Replicas: &fleet.Replicas{Current: 1, Min: new(0), Max: &four}}, fleet.Running, nil)
	add(arn("processing-job/prep-1"), "ml.g5.xlarge", fleet.Managed{Service: fleet.SageMaker, Kind: fleet.KindProcessingJob, Replicas: &fleet.Replicas{Current: one}}, fleet.Running, nil)
	add(arn("processing-job/prep-2"), "ml.g4dn.xlarge", fleet.Managed{Service: fleet.SageMaker, Kind: fleet.KindProcessingJob, Replicas: &fleet.Replicas{Current: 2}}, fleet.Running, nil)
	add(arn("app/d-abc123def456/shared-space/CodeEditor/default"), "ml.g5.xlarge", fleet.Managed{Service: fleet.SageMaker, Kind: fleet.KindStudioApp, Workspace: "d-abc123def456"}, fleet.Running, nil)
	f.Instances = append(f.Instances, fleet.Instance{ID: arn("training-job/spot-ft"), Provider: fleet.AWS, Account: account, Region: "us-east-1", InstanceType: "ml.g5.12xlarge",
		Lifecycle: fleet.Spot, State: fleet.Running, LaunchTime: &launch, Managed: &fleet.Managed{Service: fleet.SageMaker, Kind: fleet.KindTrainingJob, Replicas: &fleet.Replicas{Current: 1}}})
	return f
}

func sageMakerClient(srv *httptest.Server, region string) *sagemaker.Client {
	return sagemaker.New(sagemaker.Options{Region: region, BaseEndpoint: aws.String(srv.URL), Credentials: signedCreds, RetryMaxAttempts: 1, HTTPClient: testHTTP})
}

// driveSageMaker calls every SageMaker operation through the SDK: each
// answered, each failed, each list in small pages and whole.
func driveSageMaker(t *testing.T, srv *httptest.Server, throttled func(string, func() error), wantErr func(string, error)) {
	t.Helper()
	ctx := context.Background()
	sm := sageMakerClient(srv, "us-east-1")
	bad := aws.String("bm90LWEtdG9rZW4")
	pager := func(name string, call func(max int32, tok *string) (int, *string, error), small, whole int32) {
		checkPaging(t, name,
			func(tok *string) (int, *string, error) { return call(small, tok) },
			func(tok *string) (int, *string, error) { return call(whole, tok) })
		_, _, err := call(whole, bad)
		wantErr(name+" bad token", err)
		throttled(name, func() error { _, _, err := call(whole, nil); return err })
	}
	pager("ListEndpoints", func(max int32, tok *string) (int, *string, error) {
		out, err := sm.ListEndpoints(ctx, &sagemaker.ListEndpointsInput{MaxResults: aws.Int32(max), NextToken: tok, StatusEquals: smtypes.EndpointStatusInService})
		if err != nil {
			return 0, nil, err
		}
		return len(out.Endpoints), out.NextToken, nil
	}, 3, 100)
	pager("ListNotebookInstances", func(max int32, tok *string) (int, *string, error) {
		out, err := sm.ListNotebookInstances(ctx, &sagemaker.ListNotebookInstancesInput{MaxResults: aws.Int32(max), NextToken: tok})
		if err != nil {
			return 0, nil, err
		}
		return len(out.NotebookInstances), out.NextToken, nil
	}, 3, 100)
	pager("ListApps", func(max int32, tok *string) (int, *string, error) {
		out, err := sm.ListApps(ctx, &sagemaker.ListAppsInput{MaxResults: aws.Int32(max), NextToken: tok})
		if err != nil {
			return 0, nil, err
		}
		return len(out.Apps), out.NextToken, nil
	}, 1, 100)
	pager("ListTrainingJobs", func(max int32, tok *string) (int, *string, error) {
		out, err := sm.ListTrainingJobs(ctx, &sagemaker.ListTrainingJobsInput{MaxResults: aws.Int32(max), NextToken: tok, StatusEquals: smtypes.TrainingJobStatusInProgress})
		if err != nil {
			return 0, nil, err
		}
		return len(out.TrainingJobSummaries), out.NextToken, nil
	}, 1, 100)
	pager("ListProcessingJobs", func(max int32, tok *string) (int, *string, error) {
		out, err := sm.ListProcessingJobs(ctx, &sagemaker.ListProcessingJobsInput{MaxResults: aws.Int32(max), NextToken: tok})
		if err != nil {
			return 0, nil, err
		}
		return len(out.ProcessingJobSummaries), out.NextToken, nil
	}, 1, 100)
	stoppedARN := "arn:aws:sagemaker:us-east-1:" + fixtureAccount + ":notebook-instance/nb-stopped"
	// A resource has at most 50 tags (TagList), one ListTags page.
	tags, err := sm.ListTags(ctx, &sagemaker.ListTagsInput{ResourceArn: aws.String(stoppedARN), MaxResults: aws.Int32(50)})
	if err != nil || len(tags.Tags) != 50 || tags.NextToken != nil {
		t.Errorf("ListTags: %v, %v", tags, err)
	}
	_, err = sm.ListTags(ctx, &sagemaker.ListTagsInput{ResourceArn: aws.String(stoppedARN), NextToken: bad})
	wantErr("ListTags bad token", err)
	throttled("ListTags", func() error {
		_, err := sm.ListTags(ctx, &sagemaker.ListTagsInput{ResourceArn: aws.String(stoppedARN)})
		return err
	})

	for _, name := range []string{"chat-demo", "multi"} {
		if _, err := sm.DescribeEndpoint(ctx, &sagemaker.DescribeEndpointInput{EndpointName: aws.String(name)}); err != nil {
			t.Fatal(err)
		}
		if _, err := sm.DescribeEndpointConfig(ctx, &sagemaker.DescribeEndpointConfigInput{EndpointConfigName: aws.String(name + "-config")}); err != nil {
			t.Fatal(err)
		}
	}
	_, err = sm.DescribeEndpoint(ctx, &sagemaker.DescribeEndpointInput{EndpointName: aws.String("nope")})
	wantErr("DescribeEndpoint missing", err)
	_, err = sm.DescribeEndpointConfig(ctx, &sagemaker.DescribeEndpointConfigInput{EndpointConfigName: aws.String("nope")})
	wantErr("DescribeEndpointConfig missing", err)
	if _, err := sm.DescribeNotebookInstance(ctx, &sagemaker.DescribeNotebookInstanceInput{NotebookInstanceName: aws.String("nb-research-a")}); err != nil {
		t.Fatal(err)
	}
	_, err = sm.DescribeNotebookInstance(ctx, &sagemaker.DescribeNotebookInstanceInput{NotebookInstanceName: aws.String("nope")})
	wantErr("DescribeNotebookInstance missing", err)
	if _, err := sm.StopNotebookInstance(ctx, &sagemaker.StopNotebookInstanceInput{NotebookInstanceName: aws.String("gen-nb-00")}); err != nil {
		t.Fatal(err)
	}
	_, err = sm.StopNotebookInstance(ctx, &sagemaker.StopNotebookInstanceInput{NotebookInstanceName: aws.String("nb-stopped")})
	wantErr("StopNotebookInstance stopped", err)
	for _, name := range []string{"llama-ft-1128", "spot-ft"} {
		if _, err := sm.DescribeTrainingJob(ctx, &sagemaker.DescribeTrainingJobInput{TrainingJobName: aws.String(name)}); err != nil {
			t.Fatal(err)
		}
	}
	_, err = sm.DescribeTrainingJob(ctx, &sagemaker.DescribeTrainingJobInput{TrainingJobName: aws.String("nope")})
	wantErr("DescribeTrainingJob missing", err)
	if _, err := sm.DescribeProcessingJob(ctx, &sagemaker.DescribeProcessingJobInput{ProcessingJobName: aws.String("prep-1")}); err != nil {
		t.Fatal(err)
	}
	_, err = sm.DescribeProcessingJob(ctx, &sagemaker.DescribeProcessingJobInput{ProcessingJobName: aws.String("nope")})
	wantErr("DescribeProcessingJob missing", err)
}

func serveManaged(t *testing.T) (*Server, *httptest.Server) {
	t.Helper()
	f := loadManagedFixture(t)
	return serveFixture(t, f, Options{AccountID: "111122223333", Now: func() time.Time { return time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC) }})
}

// The shared fixture's SageMaker items come back as SageMaker shows them,
// and none of them as an EC2 instance.
func TestSageMakerServesFixture(t *testing.T) {
	_, srv := serveManaged(t)
	ctx := context.Background()
	sm := sageMakerClient(srv, "us-east-1")

	eps, err := sm.ListEndpoints(ctx, &sagemaker.ListEndpointsInput{SortBy: smtypes.EndpointSortKeyName, SortOrder: smtypes.OrderKeyAscending})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range eps.Endpoints {
		names = append(names, aws.ToString(e.EndpointName)+"="+string(e.EndpointStatus))
	}
	if got, want := strings.Join(names, " "), "chat-demo=InService rerank=InService"; got != want {
		t.Errorf("ListEndpoints: %s, want %s", got, want)
	}
	d, err := sm.DescribeEndpoint(ctx, &sagemaker.DescribeEndpointInput{EndpointName: aws.String("rerank")})
	if err != nil {
		t.Fatal(err)
	}
	v := d.ProductionVariants[0]
	if aws.ToString(v.VariantName) != "primary" || aws.ToInt32(v.CurrentInstanceCount) != 4 || v.ManagedInstanceScaling == nil ||
		aws.ToInt32(v.ManagedInstanceScaling.MinInstanceCount) != 4 || aws.ToInt32(v.ManagedInstanceScaling.MaxInstanceCount) != 8 {
		t.Errorf("DescribeEndpoint rerank: %+v", v)
	}
	c, err := sm.DescribeEndpointConfig(ctx, &sagemaker.DescribeEndpointConfigInput{EndpointConfigName: d.EndpointConfigName})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.ProductionVariants[0].InstanceType; got != "ml.g5.2xlarge" {
		t.Errorf("DescribeEndpointConfig rerank: instance type %q, want ml.g5.2xlarge", got)
	}

	nbs, err := sm.ListNotebookInstances(ctx, &sagemaker.ListNotebookInstancesInput{})
	if err != nil {
		t.Fatal(err)
	}
	names = nil
	for _, n := range nbs.NotebookInstances {
		names = append(names, aws.ToString(n.NotebookInstanceName)+"="+string(n.InstanceType)+"="+string(n.NotebookInstanceStatus))
	}
	if got, want := strings.Join(names, " "), "nb-eval-prod=ml.g4dn.xlarge=InService nb-nometrics=ml.g4dn.xlarge=InService nb-research-a=ml.g5.xlarge=InService"; got != want {
		t.Errorf("ListNotebookInstances: %s, want %s", got, want)
	}
	apps, err := sm.ListApps(ctx, &sagemaker.ListAppsInput{DomainIdEquals: aws.String("d-abc123def456")})
	if err != nil {
		t.Fatal(err)
	}
	if len(apps.Apps) != 1 || apps.Apps[0].ResourceSpec.InstanceType != "ml.g6.xlarge" || aws.ToString(apps.Apps[0].UserProfileName) != "bob" || apps.Apps[0].AppType != smtypes.AppTypeJupyterLab {
		t.Errorf("ListApps: %+v", apps.Apps)
	}
	job, err := sm.DescribeTrainingJob(ctx, &sagemaker.DescribeTrainingJobInput{TrainingJobName: aws.String("llama-ft-1128")})
	if err != nil {
		t.Fatal(err)
	}
	if job.ResourceConfig.InstanceType != "ml.p4d.24xlarge" || aws.ToInt32(job.ResourceConfig.InstanceCount) != 2 || aws.ToBool(job.EnableManagedSpotTraining) || job.TrainingJobStatus != smtypes.TrainingJobStatusInProgress {
		t.Errorf("DescribeTrainingJob: %+v", job.ResourceConfig)
	}
	tags, err := sm.ListTags(ctx, &sagemaker.ListTagsInput{ResourceArn: aws.String("arn:aws:sagemaker:us-east-1:111122223333:endpoint/chat-demo")})
	if err != nil {
		t.Fatal(err)
	}
	if len(tags.Tags) != 2 || aws.ToString(tags.Tags[0].Key) != "env" || aws.ToString(tags.Tags[0].Value) != "dev" {
		t.Errorf("ListTags chat-demo: %+v", tags.Tags)
	}

	out, err := ec2Client(srv, "us-east-1", signedCreds).DescribeInstances(ctx, &ec2.DescribeInstancesInput{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range out.Reservations {
		for _, in := range r.Instances {
			ids = append(ids, aws.ToString(in.InstanceId))
		}
	}
	if got := strings.Join(ids, " "); got != "i-0managed0000vm01" {
		t.Errorf("EC2 lists %s, want only the plain VM", got)
	}
}

// StopNotebookInstance is asynchronous: the next read says Stopping, the
// one after Stopped; /_sim/state says stopped at once; a second stop is
// refused; a missing notebook is RecordNotFound.
func TestSageMakerStopNotebook(t *testing.T) {
	s, srv := serveManaged(t)
	ctx := context.Background()
	sm := sageMakerClient(srv, "us-east-1")
	if _, err := sm.StopNotebookInstance(ctx, &sagemaker.StopNotebookInstanceInput{NotebookInstanceName: aws.String("nb-research-a")}); err != nil {
		t.Fatal(err)
	}
	id := "arn:aws:sagemaker:us-east-1:111122223333:notebook-instance/nb-research-a"
	if got := s.stateOf(id); got != "stopped" {
		t.Errorf("state after stop: %q", got)
	}
	for _, want := range []smtypes.NotebookInstanceStatus{smtypes.NotebookInstanceStatusStopping, smtypes.NotebookInstanceStatusStopped, smtypes.NotebookInstanceStatusStopped} {
		out, err := sm.ListNotebookInstances(ctx, &sagemaker.ListNotebookInstancesInput{NameContains: aws.String("research")})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.NotebookInstances) != 1 || out.NotebookInstances[0].NotebookInstanceStatus != want {
			t.Fatalf("after stop: %+v, want %s", out.NotebookInstances, want)
		}
	}
	d, err := sm.DescribeNotebookInstance(ctx, &sagemaker.DescribeNotebookInstanceInput{NotebookInstanceName: aws.String("nb-research-a")})
	if err != nil || d.NotebookInstanceStatus != smtypes.NotebookInstanceStatusStopped {
		t.Fatalf("describe after stop: %v %v", d, err)
	}
	_, err = sm.StopNotebookInstance(ctx, &sagemaker.StopNotebookInstanceInput{NotebookInstanceName: aws.String("nb-research-a")})
	if code := errorCode(t, err); code != "ValidationException" {
		t.Errorf("second stop: %s", code)
	}
	_, err = sm.DescribeNotebookInstance(ctx, &sagemaker.DescribeNotebookInstanceInput{NotebookInstanceName: aws.String("nb-gone")})
	if code := errorCode(t, err); code != "ValidationException" || !strings.Contains(err.Error(), "RecordNotFound") {
		t.Errorf("missing notebook: %v", err)
	}
	// Another account sees none of them.
	other := sageMakerClient(srv, "us-west-2")
	if out, err := other.ListNotebookInstances(ctx, &sagemaker.ListNotebookInstancesInput{}); err != nil || len(out.NotebookInstances) != 0 {
		t.Errorf("us-west-2: %v %v", out, err)
	}
}

// CloudWatch: endpoint GPU metrics are summed over GPUs (0–100 × count),
// Invocations sum to managed.requests over the window, training jobs
// publish per host, notebooks and Studio apps publish nothing.
func TestSageMakerMetrics(t *testing.T) {
	_, srv := serveManaged(t)
	ctx := context.Background()
	cw := cwClient(srv, "json")
	start, end := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	q := func(id, ns, name, stat string, dims ...string) cwtypes.MetricDataQuery {
		var ds []cwtypes.Dimension
		for i := 0; i < len(dims); i += 2 {
			ds = append(ds, cwtypes.Dimension{Name: aws.String(dims[i]), Value: aws.String(dims[i+1])})
		}
		return cwtypes.MetricDataQuery{Id: aws.String(id), MetricStat: &cwtypes.MetricStat{Metric: &cwtypes.Metric{Namespace: aws.String(ns), MetricName: aws.String(name), Dimensions: ds},
			Period: aws.Int32(7 * 24 * 3600), Stat: aws.String(stat)}}
	}
	out, err := cw.GetMetricData(ctx, &cloudwatch.GetMetricDataInput{StartTime: aws.Time(start), EndTime: aws.Time(end), MetricDataQueries: []cwtypes.MetricDataQuery{
		q("chatmem", "/aws/sagemaker/Endpoints", "GPUMemoryUtilization", "Average", "EndpointName", "chat-demo", "VariantName", "AllTraffic"),
		q("rerank", "/aws/sagemaker/Endpoints", "GPUUtilization", "Average", "EndpointName", "rerank", "VariantName", "primary"),
		q("calls", "AWS/SageMaker", "Invocations", "Sum", "EndpointName", "rerank", "VariantName", "primary"),
		q("idle", "AWS/SageMaker", "Invocations", "Sum", "EndpointName", "chat-demo", "VariantName", "AllTraffic"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, r := range out.MetricDataResults {
		if len(r.Values) != 1 {
			t.Fatalf("%s: %d values", aws.ToString(r.Id), len(r.Values))
		}
		got[aws.ToString(r.Id)] = r.Values[0]
	}
	near := func(name string, want, tol float64) {
		t.Helper()
		if math.Abs(got[name]-want) > tol {
			t.Errorf("%s = %v, want %v ± %v", name, got[name], want, tol)
		}
	}
	near("chatmem", 4*31, 4*31*0.05) // 4 GPUs at 31 %
	near("rerank", 6, 1)             // 1 GPU at 6 %
	near("calls", 1814400, 1)
	near("idle", 0, 0)

	list := func(ns string) int {
		out, err := cw.ListMetrics(ctx, &cloudwatch.ListMetricsInput{Namespace: aws.String(ns)})
		if err != nil {
			t.Fatal(err)
		}
		return len(out.Metrics)
	}
	if n := list("/aws/sagemaker/TrainingJobs"); n != 4 { // 2 hosts × GPU and memory
		t.Errorf("training job metrics: %d, want 4", n)
	}
	out2, err := cw.ListMetrics(ctx, &cloudwatch.ListMetricsInput{})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range out2.Metrics {
		for _, d := range m.Dimensions {
			if v := aws.ToString(d.Value); strings.Contains(v, "nb-") || strings.Contains(v, "notebook") || strings.Contains(v, "JupyterLab") || strings.Contains(v, "app/") {
				t.Errorf("a notebook or Studio app publishes %s %s", aws.ToString(m.MetricName), v)
			}
		}
	}
}
