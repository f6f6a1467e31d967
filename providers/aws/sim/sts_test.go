package sim

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/sts"
)

func TestGetCallerIdentity(t *testing.T) {
	_, srv := serveFixture(t, fixtureFleet(), Options{})
	for name, creds := range map[string]aws.CredentialsProvider{"anonymous": aws.AnonymousCredentials{}, "static": signedCreds} {
		out, err := stsClient(srv, creds).GetCallerIdentity(context.Background(), &sts.GetCallerIdentityInput{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if aws.ToString(out.Account) != fixtureAccount || aws.ToString(out.Arn) != "arn:aws:iam::"+fixtureAccount+":user/gpufinops-sim" ||
			!strings.HasPrefix(aws.ToString(out.UserId), "AIDA") {
			t.Errorf("%s: %s %s %s", name, aws.ToString(out.Account), aws.ToString(out.Arn), aws.ToString(out.UserId))
		}
	}
}

func TestAssumeRoleSeesTheOtherAccount(t *testing.T) {
	_, srv := serveFixture(t, fixtureFleet(), Options{})
	ctx := context.Background()
	roleARN := "arn:aws:iam::" + secondAccount + ":role/gpufinops-reader"

	out, err := stsClient(srv, signedCreds).AssumeRole(ctx, &sts.AssumeRoleInput{RoleArn: aws.String(roleARN), RoleSessionName: aws.String("scan")})
	if err != nil {
		t.Fatal(err)
	}
	c := out.Credentials
	if !strings.HasPrefix(aws.ToString(c.AccessKeyId), "ASIA") || aws.ToString(c.SecretAccessKey) == "" || aws.ToString(c.SessionToken) == "" {
		t.Errorf("credentials %+v", c)
	}
	if exp := aws.ToTime(c.Expiration); exp.Before(time.Now().Add(50*time.Minute)) || exp.After(time.Now().Add(70*time.Minute)) {
		t.Errorf("expiration %v, want in an hour", exp)
	}
	if arn := aws.ToString(out.AssumedRoleUser.Arn); arn != "arn:aws:sts::"+secondAccount+":assumed-role/gpufinops-reader/scan" {
		t.Errorf("assumed role ARN %s", arn)
	}

	// Through the SDK's assume-role provider, as the adapter does it.
	assumed := aws.NewCredentialsCache(stscreds.NewAssumeRoleProvider(stsClient(srv, signedCreds), roleARN))
	id, err := stsClient(srv, assumed).GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(id.Account) != secondAccount || !strings.Contains(aws.ToString(id.Arn), ":assumed-role/gpufinops-reader/") {
		t.Errorf("identity %s %s", aws.ToString(id.Account), aws.ToString(id.Arn))
	}
	ids, owners, _ := describeAll(t, ec2Client(srv, "us-east-1", assumed), &ec2.DescribeInstancesInput{MaxResults: aws.Int32(5)})
	if strings.Join(ids, ",") != "i-0b1" || owners["i-0b1"] != secondAccount {
		t.Errorf("other account sees %v %v", ids, owners)
	}
	// The main account does not see it.
	ids, _, _ = describeAll(t, ec2Client(srv, "us-east-1", signedCreds), &ec2.DescribeInstancesInput{MaxResults: aws.Int32(5)})
	if strings.Join(ids, ",") != "i-0a1,i-0a2,i-0a3" {
		t.Errorf("main account sees %v", ids)
	}
	// Nor can the other account stop the main account's instances.
	_, err = ec2Client(srv, "us-east-1", assumed).StopInstances(ctx, &ec2.StopInstancesInput{InstanceIds: []string{"i-0a1"}})
	if code := errorCode(t, err); code != "InvalidInstanceID.NotFound" {
		t.Errorf("cross-account stop: %v", err)
	}
}

func TestAssumeRoleValidation(t *testing.T) {
	_, srv := serveFixture(t, fixtureFleet(), Options{})
	c := stsClient(srv, signedCreds)
	for _, in := range []*sts.AssumeRoleInput{
		{RoleArn: aws.String("arn:aws:iam::123:role/x"), RoleSessionName: aws.String("ok")},
		{RoleArn: aws.String("not-an-arn-at-all-really"), RoleSessionName: aws.String("ok")},
		{RoleArn: aws.String("arn:aws:iam::123456789012:role/x"), RoleSessionName: aws.String("bad name")},
		{RoleArn: aws.String("arn:aws:iam::123456789012:role/x"), RoleSessionName: aws.String("ok"), DurationSeconds: aws.Int32(60000)},
	} {
		_, err := c.AssumeRole(context.Background(), in)
		if code := errorCode(t, err); code != "ValidationError" {
			t.Errorf("%s/%s: %v", aws.ToString(in.RoleArn), aws.ToString(in.RoleSessionName), err)
		}
	}
}

// TestListMetricsListsTheCallersAccount: CloudWatch lists the caller's
// account's metrics only, so an assumed role and the main account each see
// their own instances' series.
func TestListMetricsListsTheCallersAccount(t *testing.T) {
	_, srv := serveFixture(t, fixtureFleet(), Options{})
	ctx := context.Background()
	assumed := aws.NewCredentialsCache(stscreds.NewAssumeRoleProvider(stsClient(srv, signedCreds), "arn:aws:iam::"+secondAccount+":role/gpufinops-reader"))
	seen := func(creds aws.CredentialsProvider) map[string]bool {
		c := cloudwatch.New(cloudwatch.Options{BaseEndpoint: aws.String(srv.URL), Region: "us-east-1", Credentials: creds, RetryMaxAttempts: 1, HTTPClient: testHTTP})
		ids := map[string]bool{}
		p := cloudwatch.NewListMetricsPaginator(c, &cloudwatch.ListMetricsInput{})
		for p.HasMorePages() {
			out, err := p.NextPage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range out.Metrics {
				for _, d := range m.Dimensions {
					if aws.ToString(d.Name) == "InstanceId" {
						ids[aws.ToString(d.Value)] = true
					}
				}
			}
		}
		return ids
	}
	if other := seen(assumed); !other["i-0b1"] || other["i-0a1"] {
		t.Errorf("the other account lists %v; want i-0b1 and none of the main account's", other)
	}
	if main := seen(signedCreds); main["i-0b1"] || !main["i-0a1"] {
		t.Errorf("the main account lists %v; want i-0a1 and not i-0b1", main)
	}
}
