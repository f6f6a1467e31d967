package sim

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/pricing"
)

func TestThrottlingSurfacesAndIsRetried(t *testing.T) {
	ctx := context.Background()

	// Every request throttled, no retries: the SDK surfaces RequestLimitExceeded.
	_, srv := serveFixture(t, fixtureFleet(), Options{ThrottleRate: 1})
	_, err := ec2Client(srv, "us-east-1", signedCreds).DescribeInstances(ctx, &ec2.DescribeInstancesInput{})
	if code := errorCode(t, err); code != "RequestLimitExceeded" {
		t.Fatalf("throttled: %v", err)
	}
	_, err = pricingClient(srv).GetProducts(ctx, &pricing.GetProductsInput{ServiceCode: aws.String("AmazonEC2")})
	if code := errorCode(t, err); code != "ThrottlingException" {
		t.Fatalf("pricing throttled: %v", err)
	}

	// Half throttled, standard retries on: every call succeeds, in more requests.
	s, srv := serveFixture(t, generatedFleet(100), Options{ThrottleRate: 0.5, Seed: 7})
	c := ec2.New(ec2.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(srv.URL), Credentials: signedCreds,
		Retryer: retry.NewStandard(func(o *retry.StandardOptions) {
			o.MaxAttempts = 12
			o.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return time.Millisecond, nil })
			o.RateLimiter = ratelimit.None
		}),
	})
	const calls = 20
	for i := range calls {
		out, err := c.DescribeInstances(ctx, &ec2.DescribeInstancesInput{MaxResults: aws.Int32(5)})
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if len(out.Reservations) != 5 {
			t.Fatalf("call %d: %d reservations", i, len(out.Reservations))
		}
	}
	n := s.Counts()["ec2"]["DescribeInstances"]
	if n <= calls {
		t.Errorf("%d requests for %d calls: nothing was retried", n, calls)
	}
	t.Logf("%d calls took %d requests", calls, n)
}

func TestRequestCounts(t *testing.T) {
	_, srv := serveFixture(t, fixtureFleet(), Options{})
	ctx := context.Background()
	c := ec2Client(srv, "us-east-1", signedCreds)
	for range 3 {
		if _, err := c.DescribeInstances(ctx, &ec2.DescribeInstancesInput{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.DescribeRegions(ctx, &ec2.DescribeRegionsInput{}); err != nil {
		t.Fatal(err)
	}
	if _, err := pricingClient(srv).GetProducts(ctx, &pricing.GetProductsInput{ServiceCode: aws.String("AmazonEC2")}); err != nil {
		t.Fatal(err)
	}
	var counts map[string]map[string]int
	getControl(t, srv.URL+"/_sim/requests", &counts)
	if counts["ec2"]["DescribeInstances"] != 3 || counts["ec2"]["DescribeRegions"] != 1 || counts["pricing"]["GetProducts"] != 1 {
		t.Errorf("counts %v", counts)
	}
}
