package bench

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// BaselineResult is what the per-instance baseline did.
type BaselineResult struct {
	// Instances are the AWS instances listed; WithData those whose read
	// returned datapoints.
	Instances, WithData int
	// Sent is every HTTP request the SDK clients sent, retries included.
	Sent int
	// MetricRetries are the GetMetricData attempts the SDK repeated (a
	// connection reset under load, say): the simulator counts
	// Instances + MetricRetries calls.
	MetricRetries int
}

// countingTransport counts the requests sent through it.
type countingTransport struct {
	n    atomic.Int64
	next http.RoundTripper
}

func (t *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	t.n.Add(1)
	return t.next.RoundTrip(r)
}

// PerInstanceBaseline reads the AWS part of a fleet the way per-instance
// tools (gpuaudit and the like) do, with the real aws-sdk-go-v2 clients
// against the AWS simulator at url: per account (the base account's static
// keys, the others through AssumeRole) and region, DescribeInstances pages
// and a ListMetrics listing of the agent's GPU series, then one
// GetMetricData call per instance, one after another (its GPU series, or
// AWS/EC2 CPUUtilization for an instance without them), over the last 14
// days hourly.
func PerInstanceBaseline(ctx context.Context, url string, g Generated) (res BaselineResult, err error) {
	if g.AWSBase == "" {
		return res, errNoAWS
	}
	hc := &http.Client{Transport: &countingTransport{next: http.DefaultTransport}}
	defer func() { res.Sent = int(hc.Transport.(*countingTransport).n.Load()) }()
	static := aws.NewCredentialsCache(credentials.NewStaticCredentialsProvider("test", "test", ""))
	end := time.Now().UTC().Truncate(time.Hour)
	start := end.Add(-time.Duration(DefaultSteps) * time.Hour)
	accounts := append([]string{g.AWSBase}, g.AWSRoles...)
	for _, acct := range accounts {
		creds := aws.CredentialsProvider(static)
		if acct != g.AWSBase {
			stsc := sts.New(sts.Options{Region: "us-east-1", BaseEndpoint: aws.String(url), Credentials: static, HTTPClient: hc})
			creds = aws.NewCredentialsCache(stscreds.NewAssumeRoleProvider(stsc, "arn:aws:iam::"+acct+":role/gpufinops-bench"))
		}
		for _, region := range g.AWSRegions {
			ec2c := ec2.New(ec2.Options{Region: region, BaseEndpoint: aws.String(url), Credentials: creds, HTTPClient: hc})
			cw := cloudwatch.New(cloudwatch.Options{Region: region, BaseEndpoint: aws.String(url), Credentials: creds, HTTPClient: hc})
			var ids []string
			pg := ec2.NewDescribeInstancesPaginator(ec2c, &ec2.DescribeInstancesInput{MaxResults: aws.Int32(1000)})
			for pg.HasMorePages() {
				page, err := pg.NextPage(ctx)
				if err != nil {
					return res, fmt.Errorf("DescribeInstances %s %s: %w", acct, region, err)
				}
				for _, rv := range page.Reservations {
					for _, in := range rv.Instances {
						ids = append(ids, aws.ToString(in.InstanceId))
					}
				}
			}
			gpuSeries := map[string][]cwtypes.Metric{}
			lm := cloudwatch.NewListMetricsPaginator(cw, &cloudwatch.ListMetricsInput{
				Namespace: aws.String("CWAgent"), MetricName: aws.String("nvidia_smi_utilization_gpu"),
				Dimensions: []cwtypes.DimensionFilter{{Name: aws.String("InstanceId")}},
			})
			for lm.HasMorePages() {
				page, err := lm.NextPage(ctx)
				if err != nil {
					return res, fmt.Errorf("ListMetrics %s %s: %w", acct, region, err)
				}
				for _, m := range page.Metrics {
					for _, d := range m.Dimensions {
						if aws.ToString(d.Name) == "InstanceId" {
							gpuSeries[aws.ToString(d.Value)] = append(gpuSeries[aws.ToString(d.Value)], m)
						}
					}
				}
			}
			for _, id := range ids {
				res.Instances++
				metrics := gpuSeries[id]
				if len(metrics) == 0 {
					metrics = []cwtypes.Metric{{Namespace: aws.String("AWS/EC2"), MetricName: aws.String("CPUUtilization"),
						Dimensions: []cwtypes.Dimension{{Name: aws.String("InstanceId"), Value: aws.String(id)}}}}
				}
				queries := make([]cwtypes.MetricDataQuery, len(metrics))
				for i := range metrics {
					queries[i] = cwtypes.MetricDataQuery{Id: aws.String(fmt.Sprintf("q%d", i)), MetricStat: &cwtypes.MetricStat{
						Metric: &metrics[i], Period: aws.Int32(3600), Stat: aws.String("Average")}}
				}
				out, err := cw.GetMetricData(ctx, &cloudwatch.GetMetricDataInput{MetricDataQueries: queries, StartTime: aws.Time(start), EndTime: aws.Time(end)})
				if err != nil {
					return res, fmt.Errorf("GetMetricData %s: %w", id, err)
				}
				if a, ok := retry.GetAttemptResults(out.ResultMetadata); ok && len(a.Results) > 1 {
					res.MetricRetries += len(a.Results) - 1
				}
				for _, r := range out.MetricDataResults {
					if len(r.Values) > 0 {
						res.WithData++
						break
					}
				}
			}
		}
	}
	return res, nil
}

// baselineRow serves the fleet, runs the baseline in this process and
// counts the AWS simulator's requests.
func baselineRow(ctx context.Context, c Config, g Generated) (r Row) {
	r = Row{Name: "baseline", N: g.Instances, Latency: c.Latency, Live: true}
	sim, err := StartSim(ctx, c.Bin, g.Path, SimOptions{Latency: c.Latency})
	if err != nil {
		r.Err = err
		return r
	}
	defer func() { r.Sim = sim.Stop() }()
	began := time.Now()
	res, err := PerInstanceBaseline(ctx, sim.URL, g)
	r.Client.Wall = time.Since(began)
	if err != nil {
		r.Err = err
		return r
	}
	r.Outcome.Instances = res.Instances
	r.Sent = res.Sent
	r.MetricRetries = res.MetricRetries
	r.Note = fmt.Sprintf("AWS part only: %d instances, %d with datapoints; one GetMetricData each, sequential", res.Instances, res.WithData)
	if res.MetricRetries > 0 {
		r.Note += fmt.Sprintf(" (%d retried by the SDK)", res.MetricRetries)
	}
	r.Requests, r.Err = sim.Requests(ctx)
	for _, b := range Bounds(g.Shape, DefaultSteps) {
		if b.Cloud == fleet.AWS {
			r.Bounds = []Bound{b}
		}
	}
	return r
}
