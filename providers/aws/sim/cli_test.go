package sim_test

// The AWS CLI check: the unchanged `aws` command (Debian's awscli in CI, or
// whatever `aws` is on PATH; GPUFINOPS_AWS_CLI names another binary) calls
// every operation the adapter calls against the simulator serving the demo
// fleet, each line run in bash as docs/aws.md lists it. It skips when no
// CLI is found, and under -short (make test).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
	"github.com/gpufinops/gpufinops/providers/aws/sim"
	"github.com/gpufinops/gpufinops/providers/aws/simcat"
	"github.com/gpufinops/gpufinops/providers/file"
	"github.com/gpufinops/gpufinops/providers/simkit"
)

// awsCLI finds the CLI or skips the test.
func awsCLI(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("GPUFINOPS_AWS_CLI"); bin != "" {
		return bin
	}
	bin, err := exec.LookPath("aws")
	if err != nil {
		t.Skip("the AWS CLI is not on PATH (CI installs Debian's awscli)")
	}
	return bin
}

// cliEnv is the environment the CLI runs in: test keys, a region, an empty
// HOME (no config or credential files), no pager, no instance metadata, and
// no AWS_* variables from the caller's environment.
func cliEnv(home string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "AWS_") || strings.HasPrefix(kv, "HOME=") {
			continue
		}
		env = append(env, kv)
	}
	return append(env,
		"HOME="+home,
		"AWS_ACCESS_KEY_ID=test",
		"AWS_SECRET_ACCESS_KEY=test",
		"AWS_DEFAULT_REGION=us-east-1",
		"AWS_DEFAULT_OUTPUT=json",
		"AWS_PAGER=",
		"AWS_EC2_METADATA_DISABLED=true",
	)
}

// awsCommand is one command line as docs/aws.md shows it ($SIM is the
// simulator's URL), the operation it calls, the error it must end with
// (DryRunOperation: a dry run that would have succeeded) or check of its
// output (JSON).
type awsCommand struct {
	line, op, wantErr string
	check             func(t *testing.T, s *sim.Server, out []byte)
}

// The demo's p4d.24xlarge training instance and its GPU series' dimensions.
const (
	trainID   = "train-p4d-1"
	trainDims = `[{"Name":"InstanceId","Value":"train-p4d-1"},{"Name":"InstanceType","Value":"p4d.24xlarge"},{"Name":"index","Value":"0"},{"Name":"name","Value":"A100"}]`
)

// awsCommands call every operation the adapter calls (providers/aws), in
// order: identity, inventory, metrics, prices, then the stop.
var awsCommands = []awsCommand{
	{line: "aws sts get-caller-identity --endpoint-url $SIM", op: "sts:GetCallerIdentity",
		check: func(t *testing.T, _ *sim.Server, out []byte) {
			var id struct{ Account, Arn string }
			decodeOut(t, out, &id)
			if id.Account != "111122223333" || !strings.HasPrefix(id.Arn, "arn:aws:iam::111122223333:") {
				t.Errorf("identity %+v, want account 111122223333", id)
			}
		}},
	{line: "aws sts assume-role --role-arn arn:aws:iam::444455556666:role/gpufinops-read --role-session-name gpufinops --endpoint-url $SIM", op: "sts:AssumeRole",
		check: func(t *testing.T, _ *sim.Server, out []byte) {
			var res struct {
				Credentials     struct{ AccessKeyId, SessionToken string }
				AssumedRoleUser struct{ Arn string }
			}
			decodeOut(t, out, &res)
			if res.AssumedRoleUser.Arn != "arn:aws:sts::444455556666:assumed-role/gpufinops-read/gpufinops" || res.Credentials.AccessKeyId == "" || res.Credentials.SessionToken == "" {
				t.Errorf("assumed %+v", res)
			}
		}},
	{line: "aws ec2 describe-regions --endpoint-url $SIM", op: "ec2:DescribeRegions",
		check: func(t *testing.T, _ *sim.Server, out []byte) {
			var res struct {
				Regions []struct{ RegionName, OptInStatus string }
			}
			decodeOut(t, out, &res)
			if len(res.Regions) == 0 || res.Regions[0].RegionName != "us-east-1" {
				t.Errorf("regions %+v, want us-east-1 (the demo's AWS region)", res.Regions)
			}
		}},
	{line: "aws ec2 describe-regions --dry-run --endpoint-url $SIM", op: "ec2:DescribeRegions (DryRun)", wantErr: "(DryRunOperation)"},
	{line: "aws ec2 describe-instances --endpoint-url $SIM", op: "ec2:DescribeInstances",
		check: func(t *testing.T, s *sim.Server, out []byte) {
			var res struct {
				Reservations []struct {
					Instances []struct {
						InstanceId   string
						InstanceType string
						State        struct{ Name string }
					}
				}
			}
			decodeOut(t, out, &res)
			var got, want []string
			for _, r := range res.Reservations {
				for _, in := range r.Instances {
					got = append(got, in.InstanceId)
					if in.InstanceId == trainID && (in.InstanceType != "p4d.24xlarge" || in.State.Name != "running") {
						t.Errorf("%s: type %q, state %q", trainID, in.InstanceType, in.State.Name)
					}
				}
			}
			for _, st := range s.State() {
				if !strings.HasPrefix(st.ID, "arn:aws:sagemaker:") { // SageMaker's, not EC2's
					want = append(want, st.ID)
				}
			}
			sort.Strings(got)
			sort.Strings(want)
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("instances %v\nwant the demo's AWS instances %v", got, want)
			}
		}},
	{line: "aws ec2 describe-instances --dry-run --endpoint-url $SIM", op: "ec2:DescribeInstances (DryRun)", wantErr: "(DryRunOperation)"},
	{line: "aws ec2 describe-instance-types --instance-types p4d.24xlarge --endpoint-url $SIM", op: "ec2:DescribeInstanceTypes",
		check: func(t *testing.T, _ *sim.Server, out []byte) {
			var res struct {
				InstanceTypes []struct {
					InstanceType string
					VCpuInfo     struct{ DefaultVCpus int }
					GpuInfo      struct {
						Gpus []struct {
							Name  string
							Count int
						}
					}
				}
			}
			decodeOut(t, out, &res)
			if len(res.InstanceTypes) != 1 || res.InstanceTypes[0].VCpuInfo.DefaultVCpus != 96 || len(res.InstanceTypes[0].GpuInfo.Gpus) != 1 ||
				res.InstanceTypes[0].GpuInfo.Gpus[0].Count != 8 || res.InstanceTypes[0].GpuInfo.Gpus[0].Name != "A100" {
				t.Errorf("types %+v, want p4d.24xlarge: 96 vCPUs, 8 A100", res.InstanceTypes)
			}
		}},
	{line: "aws ec2 describe-spot-price-history --instance-types p4d.24xlarge --product-descriptions Linux/UNIX --endpoint-url $SIM", op: "ec2:DescribeSpotPriceHistory",
		check: func(t *testing.T, _ *sim.Server, out []byte) {
			var res struct {
				SpotPriceHistory []struct{ InstanceType, ProductDescription, SpotPrice, AvailabilityZone string }
			}
			decodeOut(t, out, &res)
			if len(res.SpotPriceHistory) == 0 {
				t.Fatal("no spot prices")
			}
			for _, p := range res.SpotPriceHistory {
				v, err := strconv.ParseFloat(p.SpotPrice, 64)
				if p.InstanceType != "p4d.24xlarge" || p.ProductDescription != "Linux/UNIX" || err != nil || v <= 0 || !strings.HasPrefix(p.AvailabilityZone, "us-east-1") {
					t.Errorf("spot price %+v", p)
				}
			}
		}},
	{line: "aws cloudwatch list-metrics --namespace CWAgent --metric-name nvidia_smi_utilization_gpu --dimensions Name=InstanceId,Value=" + trainID + " --endpoint-url $SIM", op: "monitoring:ListMetrics",
		check: func(t *testing.T, _ *sim.Server, out []byte) {
			var res struct {
				Metrics []struct {
					Dimensions []struct{ Name, Value string }
				}
			}
			decodeOut(t, out, &res)
			indexes := map[string]bool{}
			for _, m := range res.Metrics {
				d := map[string]string{}
				for _, kv := range m.Dimensions {
					d[kv.Name] = kv.Value
				}
				if len(d) != 4 || d["InstanceId"] != trainID || d["InstanceType"] != "p4d.24xlarge" || d["name"] != "A100" {
					t.Errorf("series dimensions %v, want InstanceId, InstanceType, index and name", m.Dimensions)
				}
				indexes[d["index"]] = true
			}
			if len(indexes) != 8 {
				t.Errorf("%d GPU series of %s (indexes %v), want 8", len(indexes), trainID, indexes)
			}
		}},
	{line: `aws cloudwatch get-metric-data --metric-data-queries '[{"Id":"gpu0","MetricStat":{"Metric":{"Namespace":"CWAgent","MetricName":"nvidia_smi_utilization_gpu","Dimensions":` + trainDims +
		`},"Period":3600,"Stat":"Average"},"ReturnData":true}]' --start-time 2026-11-23T00:00:00Z --end-time 2026-11-30T00:00:00Z --endpoint-url $SIM`, op: "monitoring:GetMetricData",
		check: checkMetricData},
	{line: "aws pricing get-products --service-code AmazonEC2 --filters Type=TERM_MATCH,Field=instanceType,Value=p4d.24xlarge Type=TERM_MATCH,Field=regionCode,Value=us-east-1 --endpoint-url $SIM", op: "pricing:GetProducts",
		check: func(t *testing.T, _ *sim.Server, out []byte) {
			var res struct{ PriceList []string }
			decodeOut(t, out, &res)
			if len(res.PriceList) == 0 {
				t.Fatal("no products")
			}
			for _, item := range res.PriceList {
				var p struct {
					Product struct {
						Attributes map[string]string
					}
				}
				if err := json.Unmarshal([]byte(item), &p); err != nil {
					t.Fatalf("a PriceList item is not a JSON document: %v", err)
				}
				if a := p.Product.Attributes; a["instanceType"] != "p4d.24xlarge" || a["regionCode"] != "us-east-1" {
					t.Errorf("product %v, want p4d.24xlarge in us-east-1", a)
				}
			}
		}},
	{line: "aws savingsplans describe-savings-plans-offering-rates --max-results 2 --endpoint-url $SIM", op: "savingsplans:DescribeSavingsPlansOfferingRates",
		check: func(t *testing.T, _ *sim.Server, out []byte) {
			var res struct {
				SearchResults []struct{ Rate, Unit string }
				NextToken     string
			}
			decodeOut(t, out, &res)
			if len(res.SearchResults) != 2 || res.NextToken == "" || res.SearchResults[0].Unit != "Hrs" {
				t.Errorf("rates %+v (next %q), want a page of 2 hourly rates and a next token", res.SearchResults, res.NextToken)
			}
		}},
	{line: "aws ec2 stop-instances --instance-ids " + trainID + " --dry-run --endpoint-url $SIM", op: "ec2:StopInstances (DryRun)", wantErr: "(DryRunOperation)",
		check: func(t *testing.T, s *sim.Server, _ []byte) {
			if st := stateOf(s, trainID); st != "running" {
				t.Errorf("a dry run left %s %s", trainID, st)
			}
		}},
	{line: "aws ec2 stop-instances --instance-ids " + trainID + " --endpoint-url $SIM", op: "ec2:StopInstances",
		check: func(t *testing.T, s *sim.Server, out []byte) {
			var res struct {
				StoppingInstances []struct {
					InstanceId                  string
					CurrentState, PreviousState struct{ Name string }
				}
			}
			decodeOut(t, out, &res)
			if len(res.StoppingInstances) != 1 || res.StoppingInstances[0].InstanceId != trainID || res.StoppingInstances[0].PreviousState.Name != "running" {
				t.Errorf("stopping %+v", res.StoppingInstances)
			}
			if st := stateOf(s, trainID); st != "stopped" && st != "stopping" {
				t.Errorf("%s is %s after the stop", trainID, st)
			}
		}},
}

func stateOf(s *sim.Server, id string) string {
	for _, st := range s.State() {
		if st.ID == id {
			return st.State
		}
	}
	return ""
}

func decodeOut(t *testing.T, out []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(out, v); err != nil {
		t.Fatalf("CLI output is not the operation's JSON: %v\n%s", err, out)
	}
}

// checkMetricData: weekdays 08:00–20:00 UTC, 60 running hours, one
// datapoint each, averaging the file's 86 %.
func checkMetricData(t *testing.T, _ *sim.Server, out []byte) {
	var res struct {
		MetricDataResults []struct {
			Id         string
			StatusCode string
			// ISO 8601 strings, or epoch seconds where AWS CLI v1
			// prints a JSON protocol's timestamps unconverted.
			Timestamps []any
			Values     []float64
		}
	}
	decodeOut(t, out, &res)
	if len(res.MetricDataResults) != 1 || res.MetricDataResults[0].Id != "gpu0" {
		t.Fatalf("results %+v, want one for gpu0", res.MetricDataResults)
	}
	r := res.MetricDataResults[0]
	if len(r.Values) == 0 || len(r.Values) != len(r.Timestamps) {
		t.Fatalf("%d values for %d timestamps (status %s), want datapoints", len(r.Values), len(r.Timestamps), r.StatusCode)
	}
	sum := 0.0
	for i, ts := range r.Timestamps {
		at, err := cliTime(ts)
		if err != nil {
			t.Fatal(err)
		}
		if wd := at.Weekday(); wd == time.Saturday || wd == time.Sunday || at.Hour() < 8 || at.Hour() >= 20 || at.Minute() != 0 {
			t.Errorf("datapoint at %s, outside the schedule", at)
		}
		if v := r.Values[i]; v < 0 || v > 100 {
			t.Errorf("value %v at %s is not a percentage", v, at)
		}
		sum += r.Values[i]
	}
	if len(r.Values) != 60 {
		t.Errorf("%d datapoints, want 60 (weekdays 08:00–20:00)", len(r.Values))
	}
	if avg := sum / float64(len(r.Values)); math.Abs(avg-86) > 0.01 {
		t.Errorf("average %.3f, want the file's 86", avg)
	}
}

// TestAWSCLI runs awsCommands in bash against the simulator serving the
// demo fleet (its AWS instances are in account 111122223333; the
// simulator shows each account only its own instances) on the demo's
// utilization week, the one before 2026-11-30.
func TestAWSCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: each aws command takes a second or more (make test-all runs it)")
	}
	bin := awsCLI(t)
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not on PATH")
	}
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	f, err := file.Demo()
	if err != nil {
		t.Fatal(err)
	}
	if err := pricing.Complete(f, cat); err != nil {
		t.Fatal(err)
	}
	for _, in := range f.Instances {
		if in.ID == trainID && (in.Utilization == nil || in.Utilization.GPU == nil || in.Utilization.GPU.Avg != 86) {
			t.Fatalf("the demo's %s no longer averages 86 %% GPU: update checkMetricData", trainID)
		}
	}
	now := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	opts := simcat.Options(f, cat)
	opts.AccountID, opts.Now = "111122223333", func() time.Time { return now }
	s := sim.New(f, opts)
	rec := &simkit.Recorder{H: s, Headers: []string{"Content-Type", "X-Amz-Target", "Smithy-Protocol", "X-Amzn-Query-Mode", "Authorization"}}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	// The CLI named by GPUFINOPS_AWS_CLI comes first on PATH as "aws".
	binDir := t.TempDir()
	if err := os.Symlink(bin, filepath.Join(binDir, "aws")); err != nil {
		t.Fatal(err)
	}
	env := append(cliEnv(t.TempDir()), "SIM="+srv.URL)
	for i, kv := range env {
		if strings.HasPrefix(kv, "PATH=") {
			env[i] = "PATH=" + binDir + ":" + strings.TrimPrefix(kv, "PATH=")
		}
	}
	version, _ := exec.Command(bin, "--version").CombinedOutput()
	t.Logf("%s: %s", bin, strings.TrimSpace(string(version)))
	for _, c := range awsCommands {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		cmd := exec.CommandContext(ctx, bash, "-c", c.line)
		cmd.Env = env
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		before := rec.Len()
		start := time.Now()
		err := cmd.Run()
		cancel()
		switch {
		case c.wantErr == "" && err != nil:
			t.Fatalf("%s: %v\n%s\nwire:\n%s", c.line, err, stderr.String(), rec.Since(before))
		case c.wantErr != "" && (err == nil || !strings.Contains(stderr.String(), c.wantErr)):
			t.Fatalf("%s: %v, want the error %s\n%s\nwire:\n%s", c.line, err, c.wantErr, stderr.String(), rec.Since(before))
		}
		t.Logf("%s (%s): %d request(s), %.1f s", c.line, c.op, rec.Len()-before, time.Since(start).Seconds())
		if c.check != nil && !t.Run(c.op, func(t *testing.T) { c.check(t, s, stdout.Bytes()) }) {
			t.Logf("wire:\n%s", rec.Since(before))
		}
	}
}

// TestAWSCLICommandsDocumented: docs/aws.md lists every command the CLI
// test runs, as it runs them.
func TestAWSCLICommandsDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "aws.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range awsCommands {
		if !strings.Contains(string(doc), "\n"+c.line+"\n") {
			t.Errorf("docs/aws.md does not list the line\n%s", c.line)
		}
	}
}

// cliTime reads a timestamp as the CLI prints it.
func cliTime(v any) (time.Time, error) {
	switch ts := v.(type) {
	case string:
		at, err := time.Parse(time.RFC3339, ts)
		return at.UTC(), err
	case float64:
		sec, frac := math.Modf(ts)
		return time.Unix(int64(sec), int64(frac*1e9)).UTC(), nil
	}
	return time.Time{}, fmt.Errorf("timestamp %v (%T) is neither a date string nor epoch seconds", v, v)
}
