package aws

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/providers"
	"github.com/gpufinops/gpufinops/providers/aws/sim"
)

// doctorScopes are the account-wide scope and one per region of p.
func doctorScopes(t *testing.T, p *Provider) []providers.Scope {
	t.Helper()
	scopes, err := p.Scopes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	acct := scopes[0]
	acct.Region = ""
	return append([]providers.Scope{acct}, scopes...)
}

// checksBy indexes checks by action.
func checksBy(cs []providers.Check) map[string]providers.Check {
	out := map[string]providers.Check{}
	for _, c := range cs {
		out[c.Action] = c
	}
	return out
}

func TestDoctorAllGood(t *testing.T) {
	f := scanFleet(t, 40)
	srv, s := scanSim(t, f, sim.Options{})
	p := scanProvider(t, srv.URL, "us-east-1", "us-west-2")
	ctx := context.Background()
	seen := map[string]bool{}
	for _, sc := range doctorScopes(t, p) {
		for _, c := range p.CheckPermissions(ctx, sc) {
			seen[c.Action] = true
			if c.Status != providers.CheckOK {
				t.Errorf("%s %s: %s %s", sc, c.Action, c.Status, c.Detail)
			}
		}
	}
	for _, a := range []string{"sts:GetCallerIdentity", "ec2:DescribeRegions", "ec2:DescribeInstances", "ec2:DescribeInstanceTypes",
		"ec2:DescribeSpotPriceHistory", "cloudwatch:ListMetrics", "cloudwatch:GetMetricData", "pricing:GetProducts",
		"savingsplans:DescribeSavingsPlansOfferingRates"} {
		if !seen[a] {
			t.Errorf("%s not checked", a)
		}
	}
	// Dry runs change nothing: no instance was stopped.
	if n := s.Counts()["ec2"]["StopInstances"]; n != 0 {
		t.Errorf("%d StopInstances calls", n)
	}
}

func TestDoctorCoverage(t *testing.T) {
	f := scanFleet(t, 40) // every seventh instance has no GPU metrics
	srv, _ := scanSim(t, f, sim.Options{})
	p := scanProvider(t, srv.URL, "us-east-1")
	scope := scopeOf(t, p, "us-east-1")
	running, without := 0, 0
	for i, in := range f.Instances {
		if in.Region != "us-east-1" || in.State == "stopped" {
			continue
		}
		running++
		if i%7 == 4 {
			without++
		}
	}
	cs := p.CheckCoverage(context.Background(), scope)
	if len(cs) != 3 || cs[1].Action != "ec2:StopInstances" || cs[2].Action != "sagemaker:StopNotebookInstance" {
		t.Fatalf("%d checks: %+v", len(cs), cs)
	}
	c := cs[0]
	if c.Status != providers.CheckWarn {
		t.Fatalf("status %s: %s", c.Status, c.Detail)
	}
	want := fmt.Sprintf("%d of %d running GPU instances publish GPU metrics for every GPU; without: ", running-without, running)
	if !strings.HasPrefix(c.Detail, want) || !strings.HasSuffix(c.Detail, ": install the CloudWatch agent with the nvidia_gpu block") || strings.Count(c.Detail, ", ")+1 != without {
		t.Errorf("detail %q\nwant %q", c.Detail, want)
	}
	if !strings.Contains(c.Fix, `"nvidia_gpu"`) || !strings.Contains(c.Fix, "amazon-cloudwatch-agent-ctl") {
		t.Errorf("fix lacks the agent snippet:\n%s", c.Fix)
	}
}

func TestDoctorAgentConfigMatchesDocs(t *testing.T) {
	b, err := os.ReadFile("../../docs/aws.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	if !strings.Contains(doc, AgentConfig) || !strings.Contains(doc, AgentLoad) {
		t.Error("AgentConfig or AgentLoad differ from docs/aws.md")
	}
}

func TestDoctorRegionFailing(t *testing.T) {
	f := scanFleet(t, 40)
	srv, _ := scanSim(t, f, sim.Options{FailRegions: []string{"us-west-2"}})
	p := scanProvider(t, srv.URL, "us-east-1", "us-west-2")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	east := checksBy(p.CheckPermissions(ctx, scopeOf(t, p, "us-east-1")))
	if c := east["ec2:DescribeInstances"]; c.Status != providers.CheckOK {
		t.Errorf("us-east-1: %s %s", c.Status, c.Detail)
	}
	west := checksBy(p.CheckPermissions(ctx, scopeOf(t, p, "us-west-2")))
	if c := west["ec2:DescribeInstances"]; c.Status != providers.CheckError || c.Detail == "" {
		t.Errorf("us-west-2: %+v, want an error", c)
	}
	if cs := p.CheckCoverage(ctx, scopeOf(t, p, "us-west-2")); cs[0].Status != providers.CheckError {
		t.Errorf("coverage of the failing region: %+v", cs[0])
	}
}

// denyHandler answers the EC2 query actions in deny with UnauthorizedOperation,
// as IAM does, and passes everything else to the simulator.
func denyHandler(next http.Handler, deny ...string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if form, err := url.ParseQuery(string(body)); err == nil {
			for _, d := range deny {
				if form.Get("Action") == d {
					w.Header().Set("Content-Type", "text/xml")
					w.WriteHeader(http.StatusForbidden)
					io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Response><Errors><Error><Code>UnauthorizedOperation</Code><Message>You are not authorized to perform this operation.</Message></Error></Errors><RequestID>doctor-test</RequestID></Response>`)
					return
				}
			}
		}
		next.ServeHTTP(w, r)
	})
}

func TestDoctorPermissionMissing(t *testing.T) {
	f := scanFleet(t, 10)
	opts := sim.Options{Types: scanTypes(t, f), Now: func() time.Time { return simNow }, AccountID: "111122223333"}
	srv := httptest.NewServer(denyHandler(sim.New(f, strict(t, opts)), "DescribeSpotPriceHistory"))
	t.Cleanup(srv.Close)
	p := scanProvider(t, srv.URL, "us-east-1")
	cs := checksBy(p.CheckPermissions(context.Background(), scopeOf(t, p, "us-east-1")))
	c := cs["ec2:DescribeSpotPriceHistory"]
	if c.Status != providers.CheckMissing || !strings.Contains(c.Fix, "ec2:DescribeSpotPriceHistory") {
		t.Errorf("denied permission: %+v", c)
	}
	if c := cs["ec2:DescribeInstances"]; c.Status != providers.CheckOK {
		t.Errorf("allowed permission: %+v", c)
	}
}
