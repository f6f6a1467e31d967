package factory

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/config"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/providers"
	"github.com/gpufinops/gpufinops/providers/fake"
	"github.com/gpufinops/gpufinops/providers/file"
)

var simNow = time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)

// demoRegions are the regions of the demo fleet's AWS part in the tests.
var demoRegions = []string{"eu-west-1", "us-east-1", "us-west-2"}

// demoFleet is the demo fleet with its AWS instances spread over the three
// regions, so that a failing region leaves others with instances.
func demoFleet(t *testing.T) *fleet.Fleet {
	t.Helper()
	f, err := file.Demo()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for i := range f.Instances {
		if in := &f.Instances[i]; in.Provider == fleet.AWS {
			in.Region = demoRegions[n%len(demoRegions)]
			n++
		}
	}
	return f
}

// fakeScanner is a scanner whose live scans read p.
func fakeScanner(ios *iostreams.IOStreams, p providers.Provider) *scanner {
	return &scanner{io: ios, now: func() time.Time { return simNow }, build: func(context.Context, cmdutil.FleetFlags, *config.Config) ([]providers.Provider, error) {
		return []providers.Provider{p}, nil
	}}
}

// scanDemo scans the demo fleet's AWS part with streams whose stdout and
// stderr are terminals or not; it returns stderr.
func scanDemo(t *testing.T, tty bool) string {
	t.Helper()
	p := fake.New(demoFleet(t), fake.Options{Regions: demoRegions})
	ios, _, out, errOut := iostreams.Test()
	ios.SetStdoutTTY(tty)
	ios.SetStderrTTY(tty)
	res, err := fakeScanner(ios, p).scan(context.Background(), cmdutil.FleetFlags{Providers: []string{"aws"}, LookbackDays: 7}, &config.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Fleet.Instances) != 20 {
		t.Fatalf("%d instances scanned, want the demo's 20", len(res.Fleet.Instances))
	}
	if out.Len() != 0 {
		t.Errorf("the scan wrote to stdout: %q", out.String())
	}
	// The display learns the scopes from the scan itself: they are
	// listed once, on a terminal too.
	if p.Calls("Scopes", "") != 1 {
		t.Errorf("Scopes called %d times, want 1", p.Calls("Scopes", ""))
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
}

func TestScanProgressNotInPipes(t *testing.T) {
	if got := scanDemo(t, false); got != "" {
		t.Errorf("progress written when not on a terminal: %q", got)
	}
}

// TestFileIsReadThroughTheProvider: a fleet file comes through
// providers/file whole, in its order, with its metadata.
func TestFileIsReadThroughTheProvider(t *testing.T) {
	ios, _, _, errOut := iostreams.Test()
	ios.SetStdoutTTY(true)
	ios.SetStderrTTY(true)
	demo, err := file.Demo()
	if err != nil {
		t.Fatal(err)
	}
	demo.Metadata.Warnings = []fleet.ScanWarning{{Code: fleet.ScanScopeFailed, Provider: "aws", Account: "1", Region: "us-east-1", Reason: "x"}}
	got, err := (&scanner{io: ios}).readFile(demo)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Instances) != len(demo.Instances) || got.Metadata.Name != demo.Metadata.Name || len(got.Metadata.Warnings) != 1 {
		t.Fatalf("read %d of %d instances, metadata %+v", len(got.Instances), len(demo.Instances), got.Metadata)
	}
	for i := range got.Instances {
		if got.Instances[i].ID != demo.Instances[i].ID || (got.Instances[i].Utilization == nil) != (demo.Instances[i].Utilization == nil) {
			t.Fatalf("instance %d: %s, the file has %s", i, got.Instances[i].ID, demo.Instances[i].ID)
		}
	}
	if errOut.Len() != 0 {
		t.Errorf("reading a file showed progress: %q", errOut.String())
	}
}
