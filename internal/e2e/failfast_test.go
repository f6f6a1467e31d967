package e2e

import (
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/cmdutil"
)

// simCounts reads the simulators' request counts, by service and operation.
func simCounts(t *testing.T, url string) map[string]map[string]int {
	t.Helper()
	resp, err := http.Get(url + "/_sim/requests")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[string]map[string]int{}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestHungCallIsOneWarningOnce: a DescribeInstances that never answers,
// through the command line, ends after one request timeout
// (GPUFINOPS_TIMEOUTS_REQUEST, shortened here) with exit 3; the failure is
// one line naming the scope, the operation and the timeout, said once on
// stderr and once in the report, without the SDK's retry text; the closing
// error line counts it rather than repeating it.
func TestHungCallIsOneWarningOnce(t *testing.T) {
	allClouds(t)
	url := os.Getenv("AWS_ENDPOINT_URL")
	t.Setenv("GPUFINOPS_TIMEOUTS_REQUEST", "300ms")
	resp, err := http.Post(url+"/_sim/faults", "application/json", strings.NewReader(`{"hang":["ec2:DescribeInstances"]}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("setting the fault: %s", resp.Status)
	}
	start := time.Now()
	code, out, errOut := gpufinops(t, "analyze", "--provider", "aws", "--region", "us-east-1")
	el := time.Since(start)
	if code != cmdutil.ExitPartial {
		t.Fatalf("exit %d, want %d\nstderr: %s", code, cmdutil.ExitPartial, errOut)
	}
	if el > 10*time.Second {
		t.Errorf("took %s: a hung call must end after its request timeout", el)
	}
	if n := simCounts(t, url)["ec2"]["DescribeInstances"]; n != 1 {
		t.Errorf("%d DescribeInstances requests, want 1: a timed-out call is not retried", n)
	}
	const reason = "DescribeInstances: no answer from"
	if n := strings.Count(errOut, reason); n != 1 {
		t.Errorf("stderr says the failure %d times, want once:\n%s", n, errOut)
	}
	if n := strings.Count(out, reason); n != 1 {
		t.Errorf("the report says the failure %d times, want once:\n%s", n, out)
	}
	for _, line := range strings.Split(errOut+out, "\n") {
		if strings.Contains(line, reason) && (!strings.Contains(line, "/us-east-1") || !strings.Contains(line, "request timeout of 300ms")) {
			t.Errorf("the failure does not name its scope and the timeout: %q", line)
		}
	}
	for _, noise := range []string{"exceeded maximum number of attempts", "StatusCode", "RequestID", "operation error"} {
		if strings.Contains(errOut+out, noise) {
			t.Errorf("the SDK's text %q is printed:\nstderr: %s\nstdout: %s", noise, errOut, out)
		}
	}
	if !strings.Contains(errOut, "gpufinops: partial result: 1 scope(s) could not be read (see the warnings)") {
		t.Errorf("closing error line:\n%s", errOut)
	}
}

// TestRegionsGoToTheirCloudLive: --provider aws,gcp --region
// us-east-1,us-central1 asks AWS for us-east-1 alone (it asked for
// us-central1 too) and GCP for us-central1 alone, and reads both clouds'
// instances there.
func TestRegionsGoToTheirCloudLive(t *testing.T) {
	allClouds(t)
	url := os.Getenv("AWS_ENDPOINT_URL")
	code, out, errOut := gpufinops(t, "inventory", "--provider", "aws,gcp", "--region", "us-east-1,us-central1", "-o", "json")
	if code != cmdutil.ExitOK {
		t.Fatalf("exit %d\nstderr: %s", code, errOut)
	}
	if n := simCounts(t, url)["ec2"]["DescribeInstances"]; n != 1 {
		t.Errorf("%d DescribeInstances requests, want 1 (us-east-1 alone)", n)
	}
	var snap struct {
		Instances []struct{ Provider, Region string }
	}
	if err := json.Unmarshal([]byte(out), &snap); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, in := range snap.Instances {
		seen[in.Provider+"/"+in.Region] = true
	}
	for k := range seen {
		if k != "aws/us-east-1" && k != "gcp/us-central1" {
			t.Errorf("an instance of %s", k)
		}
	}
	if !seen["aws/us-east-1"] || !seen["gcp/us-central1"] {
		t.Errorf("instances of %v, want aws/us-east-1 and gcp/us-central1", seen)
	}
}
