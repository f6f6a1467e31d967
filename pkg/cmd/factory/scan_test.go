package factory

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
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
	return &scanner{streams: func() *iostreams.IOStreams { return ios }, now: func() time.Time { return simNow }, build: func(context.Context, cmdutil.FleetFlags, *config.Config) ([]providers.Provider, error) {
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
	if len(res.Fleet.Instances) != 22 {
		t.Fatalf("%d instances scanned, want the demo's 22 on AWS (20 EC2, 2 SageMaker)", len(res.Fleet.Instances))
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
	for _, want := range []string{"\r\x1b[Kaws: listing scopes…", "\r\x1b[Kaws: 0/3 scopes, 0 GPU instances, ", "\r\x1b[Kaws: 3/3 scopes, 22 GPU instances, "} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q on a terminal:\n%q", want, got)
		}
	}
	last := got[strings.LastIndex(got, "\r\x1b[K")+len("\r\x1b[K"):]
	m := regexp.MustCompile(`^aws: 3 scopes scanned, 22 GPU instances, ([0-9,]+) requests in [0-9.]+s\n$`).FindStringSubmatch(last)
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
	demo.Commitments = []fleet.Held{{ID: "ri-1", Provider: fleet.AWS, Kind: fleet.HeldStandardRI, Term: "1y", InstanceType: "p5.48xlarge", Count: 1}}
	got, err := (&scanner{streams: func() *iostreams.IOStreams { return ios }}).readFile(demo)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Commitments) != 1 || got.Commitments[0].ID != "ri-1" {
		t.Errorf("the file's commitments are lost: %+v", got.Commitments)
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

// barrierProvider lists one instance per scope once every provider of the
// scan has started listing: a scan that reads providers one after another
// never gets past the first.
type barrierProvider struct {
	name    fleet.Provider
	started *sync.WaitGroup
	fail    error
}

func (b *barrierProvider) Name() fleet.Provider { return b.name }

func (b *barrierProvider) Scopes(ctx context.Context) ([]providers.Scope, error) {
	b.started.Done()
	if b.fail != nil {
		return nil, b.fail
	}
	done := make(chan struct{})
	go func() { b.started.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	case <-time.After(20 * time.Second):
		return nil, errors.New("the other providers never started: the scan is sequential")
	}
	return []providers.Scope{{Provider: b.name, Account: "a", Region: "r"}}, nil
}

func (b *barrierProvider) ListGPUInstances(_ context.Context, s providers.Scope) ([]fleet.Instance, error) {
	return []fleet.Instance{{ID: string(b.name) + "-1", Provider: b.name, Account: s.Account, Region: s.Region, InstanceType: "x", State: fleet.Running}}, nil
}

// Several providers are read at once and merged in the order given; one
// that cannot be read at all ends the scan with its own error, and the
// others are cancelled rather than left running.
func TestCollectReadsProvidersAtOnce(t *testing.T) {
	names := []fleet.Provider{"c1", "c2", "c3"}
	var started sync.WaitGroup
	started.Add(len(names))
	var provs []providers.Provider
	for _, n := range names {
		provs = append(provs, &barrierProvider{name: n, started: &started})
	}
	ios, _, _, _ := iostreams.Test()
	sc := &scanner{streams: func() *iostreams.IOStreams { return ios }}
	got, err := sc.collect(context.Background(), provs, collectOptions{skipPrices: true})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, in := range got.Fleet.Instances {
		ids = append(ids, in.ID)
	}
	if strings.Join(ids, " ") != "c1-1 c2-1 c3-1" {
		t.Errorf("instances %v, want each provider's in the order given", ids)
	}

	started.Add(len(names))
	denied := fmt.Errorf("c2: %w", providers.ErrCredentials)
	provs = []providers.Provider{&barrierProvider{name: "c1", started: &started}, &barrierProvider{name: "c2", started: &started, fail: denied}, &barrierProvider{name: "c3", started: &started}}
	_, err = sc.collect(context.Background(), provs, collectOptions{skipPrices: true})
	if !errors.Is(err, providers.ErrCredentials) {
		t.Errorf("error %v, want the failing provider's", err)
	}
}
