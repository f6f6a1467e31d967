package sim

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/pricing"
	"github.com/aws/aws-sdk-go-v2/service/savingsplans"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// Test fixtures, built by hand.

const (
	fixtureAccount = "111111111111"
	secondAccount  = "222222222222"
)

var fixtureNow = time.Date(2026, 3, 15, 10, 30, 0, 0, time.UTC)

var fixtureTypes = []TypeInfo{
	{Name: "g5.xlarge", GPUName: "A10G", GPUManufacturer: "NVIDIA", GPUCount: 1, GPUMemoryMiB: 24576, VCPUs: 4, MemoryMiB: 16384},
	{Name: "g5.12xlarge", GPUName: "A10G", GPUManufacturer: "NVIDIA", GPUCount: 4, GPUMemoryMiB: 24576, VCPUs: 48, MemoryMiB: 196608},
	{Name: "p4d.24xlarge", GPUName: "A100", GPUManufacturer: "NVIDIA", GPUCount: 8, GPUMemoryMiB: 40960, VCPUs: 96, MemoryMiB: 1179648},
	{Name: "p5.48xlarge", GPUName: "H100", GPUManufacturer: "NVIDIA", GPUCount: 8, GPUMemoryMiB: 81920, VCPUs: 192, MemoryMiB: 2097152},
	{Name: "g6f.large", GPUName: "L4", GPUManufacturer: "NVIDIA", GPUCount: 0.125, GPUMemoryMiB: 2861, VCPUs: 2, MemoryMiB: 8192},
	{Name: "inf2.xlarge", GPUName: "Inferentia2", GPUManufacturer: "AWS", GPUCount: 1, GPUMemoryMiB: 32768, Neuron: true, VCPUs: 4, MemoryMiB: 16384},
	{Name: "m5.large", VCPUs: 2, MemoryMiB: 8192},
}

var fixturePrices = []PriceRow{
	{Region: "us-east-1", InstanceType: "g5.xlarge", OnDemand: "1.006", Spot: map[string]string{"us-east-1a": "0.4123", "us-east-1b": "0.3907"}, SavingsPlan1y: "0.7240", SavingsPlan3y: "0.4970"},
	{Region: "us-east-1", InstanceType: "p4d.24xlarge", OnDemand: "32.7726", Spot: map[string]string{"us-east-1a": "11.5"}, SavingsPlan1y: "23.0", SavingsPlan3y: "14.79"},
	{Region: "us-east-1", InstanceType: "g6f.large", OnDemand: "0.2", SavingsPlan1y: "0.15"},
	{Region: "us-west-2", InstanceType: "g5.xlarge", OnDemand: "1.006", Spot: map[string]string{"us-west-2a": "0.45"}, SavingsPlan1y: "0.7240", SavingsPlan3y: "0.4970"},
	{Region: "us-west-2", InstanceType: "inf2.xlarge", OnDemand: "0.7582"},
	{Region: "eu-west-1", InstanceType: "g5.xlarge", OnDemand: "1.123", SavingsPlan1y: "0.81"},
}

// fixtureFleet is a handful of instances with every case StopInstances and
// the filters care about.
func fixtureFleet() *fleet.Fleet {
	launch := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return &fleet.Fleet{Instances: []fleet.Instance{
		{ID: "i-0a1", Name: "train-1", Provider: fleet.AWS, Region: "us-east-1", Zone: "us-east-1b", InstanceType: "p4d.24xlarge", Lifecycle: fleet.OnDemand, State: fleet.Running, LaunchTime: &launch, Tags: map[string]string{"team": "research"}},
		{ID: "i-0a2", Provider: fleet.AWS, Region: "us-east-1", InstanceType: "g5.xlarge", Lifecycle: fleet.Spot, State: fleet.Running},
		{ID: "i-0a3", Provider: fleet.AWS, Region: "us-east-1", InstanceType: "g5.xlarge", Lifecycle: fleet.OnDemand, State: fleet.Stopped},
		{ID: "i-0a4", Provider: fleet.AWS, Region: "us-west-2", InstanceType: "inf2.xlarge", Lifecycle: fleet.Committed, State: fleet.Running},
		{ID: "i-0b1", Provider: fleet.AWS, Account: secondAccount, Region: "us-east-1", InstanceType: "g5.12xlarge", Lifecycle: fleet.OnDemand, State: fleet.Running, Tags: map[string]string{"team": "vision"}},
		{ID: "vm-azure", Provider: fleet.Azure, Region: "eastus", InstanceType: "Standard_NC4as_T4_v3", State: fleet.Running},
	}}
}

// generatedFleet generates n instances: 80% in us-east-1, a tenth in the other
// account, every 7th spot, every 5th stopped, three teams, env on every 4th.
func generatedFleet(n int) *fleet.Fleet {
	types := []string{"g5.xlarge", "g5.12xlarge", "p4d.24xlarge", "p5.48xlarge", "g6f.large"}
	f := &fleet.Fleet{}
	for i := range n {
		in := fleet.Instance{
			ID:           fmt.Sprintf("i-%017x", 0x1000+i),
			Provider:     fleet.AWS,
			Region:       "us-east-1",
			Zone:         []string{"us-east-1a", "us-east-1b", "us-east-1c"}[i%3],
			InstanceType: types[i%len(types)],
			Lifecycle:    fleet.OnDemand,
			State:        fleet.Running,
			Tags:         map[string]string{"team": fmt.Sprintf("ml-%d", i%3)},
		}
		if i%5 == 4 {
			in.Region, in.Zone = "us-west-2", "us-west-2a"
		}
		if i%10 == 9 {
			in.Account = secondAccount
		}
		if i%7 == 0 {
			in.Lifecycle = fleet.Spot
		}
		if i%5 == 1 {
			in.State = fleet.Stopped
		}
		if i%4 == 0 {
			in.Tags["env"] = "prod"
		}
		f.Instances = append(f.Instances, in)
	}
	return f
}

// start serves a simulator on a test HTTP server.
func serveFixture(t *testing.T, f *fleet.Fleet, opts Options) (*Server, *httptest.Server) {
	t.Helper()
	if opts.AccountID == "" {
		opts.AccountID = fixtureAccount
	}
	if opts.Types == nil {
		opts.Types = fixtureTypes
	}
	if opts.Prices == nil {
		opts.Prices = fixturePrices
	}
	if opts.Now == nil {
		opts.Now = func() time.Time { return fixtureNow }
	}
	s := New(f, opts)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return s, srv
}

// signedCreds sign requests (so the simulator sees the region) as the main
// account.
var signedCreds = credentials.NewStaticCredentialsProvider("AKIDSIMTEST000000000", "secret", "")

// singleAttemptHTTP is the SDK's default HTTP client with one client-side
// race taken out, so that single-attempt test clients do not flake. The SDK
// closes a request's body as soon as the response headers arrive; when
// net/http then probes the body for extra bytes through WriteTo, the closed
// body answers io.EOF as an error and the transport closes the connection
// under the response being read ("use of closed network connection", about
// one request in a thousand against a local server; aws/aws-sdk-go-v2#2737).
// With retries on, the SDK retries it. Hiding WriteTo makes the probe a plain
// Read, which ends cleanly.
type singleAttemptHTTP struct{ c aws.HTTPClient }

type readOnlyBody struct{ io.ReadCloser }

func (h singleAttemptHTTP) Do(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		r.Body = readOnlyBody{r.Body}
	}
	return h.c.Do(r)
}

var testHTTP = singleAttemptHTTP{awshttp.NewBuildableClient()}

func ec2Client(srv *httptest.Server, region string, creds aws.CredentialsProvider) *ec2.Client {
	return ec2.New(ec2.Options{Region: region, BaseEndpoint: aws.String(srv.URL), Credentials: creds, RetryMaxAttempts: 1, HTTPClient: testHTTP})
}

func stsClient(srv *httptest.Server, creds aws.CredentialsProvider) *sts.Client {
	return sts.New(sts.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL), Credentials: creds, RetryMaxAttempts: 1, HTTPClient: testHTTP})
}

func pricingClient(srv *httptest.Server) *pricing.Client {
	return pricing.New(pricing.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL), Credentials: aws.AnonymousCredentials{}, RetryMaxAttempts: 1, HTTPClient: testHTTP})
}

func savingsPlansClient(srv *httptest.Server) *savingsplans.Client {
	return savingsplans.New(savingsplans.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL), Credentials: aws.AnonymousCredentials{}, RetryMaxAttempts: 1, HTTPClient: testHTTP})
}

// errorCode returns the AWS error code of err, or fails the test.
func errorCode(t *testing.T, err error) string {
	t.Helper()
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) {
		t.Fatalf("want an AWS API error, got %v", err)
	}
	return apiErr.ErrorCode()
}

// getControl reads a control endpoint.
func getControl(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}
