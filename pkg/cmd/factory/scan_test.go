package factory

import (
	"context"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/config"
	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
	"github.com/gpufinops/gpufinops/providers/aws/sim"
	"github.com/gpufinops/gpufinops/providers/aws/simcat"
	"github.com/gpufinops/gpufinops/providers/file"
)

var simNow = time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)

// scanDemo scans the demo fleet's AWS part from the simulator with streams
// whose stdout and stderr are terminals or not; it returns stderr.
func scanDemo(t *testing.T, tty bool) string {
	t.Helper()
	for k, v := range map[string]string{
		"AWS_EC2_METADATA_DISABLED": "true", "AWS_CONFIG_FILE": os.DevNull, "AWS_SHARED_CREDENTIALS_FILE": os.DevNull,
		"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test", "AWS_REGION": "us-east-1", "AWS_PROFILE": "",
	} {
		t.Setenv(k, v)
	}
	f, err := file.Demo()
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	if err := pricing.Complete(f, cat); err != nil {
		t.Fatal(err)
	}
	opts := simcat.Options(f, cat)
	opts.Now = func() time.Time { return simNow }
	opts.Regions = []string{"eu-west-1", "us-east-1", "us-west-2"}
	srv := httptest.NewServer(sim.New(f, opts))
	t.Cleanup(srv.Close)

	ios, _, out, errOut := iostreams.Test()
	ios.SetStdoutTTY(tty)
	ios.SetStderrTTY(tty)
	sc := &scanner{io: ios, now: func() time.Time { return simNow }}
	cfg := &config.Config{AWS: config.AWSConfig{Endpoint: srv.URL}, Cache: config.CacheConfig{Dir: t.TempDir(), TTLHours: 24}}
	res, err := sc.scan(context.Background(), cmdutil.FleetFlags{Providers: []string{"aws"}, LookbackDays: 7}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Fleet.Instances) == 0 {
		t.Fatal("no instances scanned")
	}
	if out.Len() != 0 {
		t.Errorf("the scan wrote to stdout: %q", out.String())
	}
	return errOut.String()
}

func TestScanProgressOnTTY(t *testing.T) {
	got := scanDemo(t, true)
	for _, want := range []string{"\r\x1b[Kaws: listing scopes…", "\r\x1b[Kaws: 0/3 scopes, 0 GPU instances, ", "\r\x1b[Kaws: 3/3 scopes, 20 GPU instances, "} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q on a terminal:\n%q", want, got)
		}
	}
	last := got[strings.LastIndex(got, "\r\x1b[K")+len("\r\x1b[K"):]
	m := regexp.MustCompile(`^aws: 3 scopes scanned, 20 GPU instances, ([0-9,]+) requests in [0-9.]+s\n$`).FindStringSubmatch(last)
	if m == nil {
		t.Fatalf("summary line %q", last)
	}
	t.Logf("summary: %s", strings.TrimSpace(last))
	// Listing the regions and, in each, the instances, their types, metrics
	// and prices takes more than two requests a region.
	if n, _ := strconv.Atoi(strings.ReplaceAll(m[1], ",", "")); n < 6 {
		t.Errorf("%d requests counted for 3 regions", n)
	}
}

func TestScanProgressNotInPipes(t *testing.T) {
	if got := scanDemo(t, false); got != "" {
		t.Errorf("progress written when not on a terminal: %q", got)
	}
}
