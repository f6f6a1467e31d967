package factory

import (
	"bytes"
	"context"
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
