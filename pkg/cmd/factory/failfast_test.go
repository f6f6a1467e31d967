package factory

import (
	"bytes"
	"context"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/cmd/analyze"
	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/config"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/pkg/recommend"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
	"github.com/gpufinops/gpufinops/providers"
	"github.com/gpufinops/gpufinops/providers/aws/sim"
)

// runAnalyze runs analyze in-process with the production scanner (the
// registered adapters) and cfg, and returns stdout, stderr and the exit
// code as root.Run would give them.
func runAnalyze(t *testing.T, cfg *config.Config, args ...string) (string, string, cmdutil.ExitCode) {
	t.Helper()
	ios, _, out, errOut := iostreams.Test()
	sc := &scanner{streams: func() *iostreams.IOStreams { return ios }, now: func() time.Time { return simNow }}
	f := &cmdutil.Factory{
		IOStreams: ios,
		Config:    func() (*config.Config, error) { return cfg, nil },
		Catalog:   catalog.Embedded,
		Fleet:     FileFleet(ios),
		Scan:      sc.scan,
		Providers: sc.providers,
		Now:       func() time.Time { return simNow },
	}
	c := analyze.NewCmdAnalyze(f, nil)
	c.SetArgs(args)
	c.SetOut(&bytes.Buffer{})
	c.SetErr(&bytes.Buffer{})
	c.SilenceUsage, c.SilenceErrors = true, true
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := c.ExecuteContext(ctx)
	if err != nil {
		// as root.printError prints it
		errOut.WriteString("gpufinops: " + cmdutil.ErrorText(err) + "\n")
	}
	return out.String(), errOut.String(), cmdutil.ExitCodeFor(err)
}

// awsTestEnv gives the AWS SDK static test credentials and keeps it from
// the machine's configuration and instance metadata.
func awsTestEnv(t *testing.T) {
	for k, v := range map[string]string{
		"AWS_EC2_METADATA_DISABLED": "true", "AWS_CONFIG_FILE": os.DevNull, "AWS_SHARED_CREDENTIALS_FILE": os.DevNull,
		"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test", "AWS_REGION": "us-east-1", "AWS_PROFILE": "",
	} {
		t.Setenv(k, v)
	}
}

// TestHungCallIsOneWarningOnce: a DescribeInstances that never answers,
// through the real AWS adapter and the analyze command, ends after one
// request timeout (timeouts.request, shortened here) with exit 3; its
// failure is one line naming the scope, the operation and the timeout,
// said once on stderr and once in the report, without the SDK's retry
// text; the closing error line counts it rather than repeating it.
func TestHungCallIsOneWarningOnce(t *testing.T) {
	awsTestEnv(t)
	f := demoFleet(t)
	s := sim.New(f, sim.Options{AccountID: "111122223333", Now: func() time.Time { return simNow }, Hang: []string{"DescribeInstances"}})
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	cfg := &config.Config{
		Policy:    recommend.DefaultPolicy(),
		Providers: map[string]providers.Values{"aws": {providers.OptEndpoint: srv.URL}},
		Cache:     config.CacheConfig{Dir: t.TempDir(), TTLHours: 24},
		Timeouts:  config.TimeoutsConfig{Request: 300 * time.Millisecond, Run: time.Minute},
	}
	start := time.Now()
	out, errOut, code := runAnalyze(t, cfg, "--provider", "aws", "--region", "us-east-1")
	el := time.Since(start)
	if code != cmdutil.ExitPartial {
		t.Fatalf("exit %d, want %d\nstderr: %s", code, cmdutil.ExitPartial, errOut)
	}
	if el > 10*time.Second {
		t.Errorf("took %s: a hung call must end after its request timeout", el)
	}
	const reason = "DescribeInstances: no answer from"
	if n := strings.Count(errOut, reason); n != 1 {
		t.Errorf("stderr says the failure %d times, want once:\n%s", n, errOut)
	}
	if n := strings.Count(out, reason); n != 1 {
		t.Errorf("the report says the failure %d times, want once:\n%s", n, out)
	}
	for _, line := range strings.Split(errOut+out, "\n") {
		if strings.Contains(line, reason) && !strings.Contains(line, "aws:111122223333/us-east-1") {
			t.Errorf("the failure does not name its scope: %q", line)
		}
		if strings.Contains(line, reason) && !strings.Contains(line, "request timeout of 300ms") {
			t.Errorf("the failure does not name the timeout: %q", line)
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

// TestMistypedRegion: a region no cloud of --provider knows is exit 2
// naming the nearest; a region of another cloud is exit 2 naming it; in a
// run over several clouds a cloud given no region is exit 2. Nothing is
// scanned: no configuration points anywhere.
func TestMistypedRegion(t *testing.T) {
	cfg := &config.Config{Policy: recommend.DefaultPolicy(), Timeouts: config.TimeoutsConfig{Request: time.Second, Run: time.Minute}}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--provider", "aws", "--region", "us-est-1"}, []string{`--region: "us-est-1" is not a region of aws`, `did you mean "us-east-1"`}},
		{[]string{"--provider", "gcp", "--region", "us-centrl1"}, []string{`"us-centrl1" is not a region of gcp`, `"us-central1"`}},
		{[]string{"--provider", "azure", "--region", "estus"}, []string{`"estus" is not a region of azure`, `"eastus"`}},
		{[]string{"--provider", "aws,gcp", "--region", "us-east-1,us-cental1"}, []string{`"us-cental1" is not a region of aws or gcp`, `"us-central1"`}},
		{[]string{"--provider", "aws", "--region", "us-central1"}, []string{`"us-central1" is a region of gcp, which --provider does not name`}},
		{[]string{"--provider", "aws,gcp", "--region", "us-east-1"}, []string{"--region names no gcp region"}},
	} {
		_, errOut, code := runAnalyze(t, cfg, tc.args...)
		if code != cmdutil.ExitUsage {
			t.Errorf("%v: exit %d, want 2\n%s", tc.args, code, errOut)
		}
		for _, w := range tc.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("%v: stderr lacks %q:\n%s", tc.args, w, errOut)
			}
		}
	}
}

// TestRegionsGoToTheirCloud: with --provider aws,gcp --region
// us-east-1,us-central1 each adapter is given only its own region, in its
// spelling.
func TestRegionsGoToTheirCloud(t *testing.T) {
	in := cmdutil.FleetFlags{Providers: []string{"aws", "gcp"}, Regions: []string{"us-east-1", "US-CENTRAL1"}, LookbackDays: 7}
	sc := &scanner{now: func() time.Time { return simNow }}
	for cloud, want := range map[fleet.Provider][]string{fleet.AWS: {"us-east-1"}, fleet.GCP: {"us-central1"}} {
		ri, ok := providers.Find(cloud)
		if !ok {
			t.Fatalf("%s is not registered", cloud)
		}
		if got := sc.options(ri, in, &config.Config{}).Regions; !reflect.DeepEqual(got, want) {
			t.Errorf("%s scans %v, want %v", cloud, got, want)
		}
	}
}

// TestCatalogRegionsAreKnown: every region the embedded catalog prices is
// one its cloud's adapter knows, so --region never refuses a region
// gpufinops has prices for.
func TestCatalogRegionsAreKnown(t *testing.T) {
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	for _, cloud := range []fleet.Provider{fleet.AWS, fleet.Azure, fleet.GCP} {
		missing := map[string]bool{}
		in := cmdutil.FleetFlags{Providers: []string{string(cloud)}}
		for _, o := range cat.Offers(pricing.Query{Provider: cloud}) {
			in.Regions = []string{o.Region}
			if len(in.RegionsFor(string(cloud))) == 0 && !missing[o.Region] {
				missing[o.Region] = true
				t.Errorf("%s: the catalog prices %s in %s, which the adapter's region list lacks", cloud, o.Type.Name, o.Region)
			}
		}
	}
}
