package e2e

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/internal/purchasetest"
	idlestopcmd "github.com/gpufinops/gpufinops/pkg/cmd/idlestop"
	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/config"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/idlestop"
	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/pkg/recommend"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
	"github.com/gpufinops/gpufinops/providers"
	"github.com/gpufinops/gpufinops/providers/file"
	_ "github.com/gpufinops/gpufinops/providers/gcp"
	gcpsim "github.com/gpufinops/gpufinops/providers/gcp/sim"
	gcpsimcat "github.com/gpufinops/gpufinops/providers/gcp/simcat"
	"github.com/gpufinops/gpufinops/providers/simkit"
)

// gcpEnv gives the GCP adapter a test token and no real credentials.
func gcpEnv(t testing.TB) {
	t.Setenv("CLOUDSDK_AUTH_ACCESS_TOKEN", "test")
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", "/nonexistent/gpufinops-e2e-adc.json")
	t.Setenv("CLOUDSDK_CORE_PROJECT", "")
	t.Setenv("GOOGLE_CLOUD_PROJECT", "")
}

// cloudFleet is the part of f on the clouds, as a scan reads it (asScanned), as a file.
func cloudFleet(t testing.TB, f *fleet.Fleet, clouds ...fleet.Provider) []byte {
	t.Helper()
	out := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind, Metadata: f.Metadata}
	for _, in := range asScanned(f).Instances {
		for _, c := range clouds {
			if in.Provider == c {
				out.Instances = append(out.Instances, in)
			}
		}
	}
	var b bytes.Buffer
	if err := fleet.Write(&b, out, fleet.FormatYAML); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// gcpListable is doc as a GCP listing can show it: a committed VM is an
// ordinary STANDARD VM there (its commitment is billing's, read from the
// Commitments API in issue 33), so the file says on-demand too.
func gcpListable(t testing.TB, doc []byte) []byte {
	t.Helper()
	f, err := fleet.Parse("fleet.yaml", doc)
	if err != nil {
		t.Fatal(err)
	}
	for i := range f.Instances {
		if f.Instances[i].Provider == fleet.GCP && f.Instances[i].Lifecycle == fleet.Committed {
			f.Instances[i].Lifecycle = fleet.OnDemand
		}
	}
	b, err := fleet.Marshal(f, fleet.FormatYAML)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// h2cServer serves h over HTTP/1.1 and cleartext HTTP/2, as cmd/cloudsim.
func h2cServer(t testing.TB, h http.Handler) string {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetHTTP1(true)
	srv.Config.Protocols.SetUnencryptedHTTP2(true)
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL
}

// scanCloud is one cloud of a multi-cloud scan: the registered adapter and
// its options.
type scanCloud struct {
	cloud fleet.Provider
	opts  providers.Options
}

// scanAll scans the clouds concurrently, as `--provider a,b` does, and
// merges what they found.
func scanAll(t testing.TB, window fleet.TimeRange, clouds ...scanCloud) (*fleet.Fleet, []pricing.Price) {
	t.Helper()
	merged := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind}
	var prices []pricing.Price
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make([]error, len(clouds))
	for i, c := range clouds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ri, ok := providers.Find(c.cloud)
			if !ok || !ri.CanScan() {
				errs[i] = os.ErrNotExist
				return
			}
			ctx := context.Background()
			p, err := ri.New(ctx, c.opts)
			if err != nil {
				errs[i] = err
				return
			}
			res, err := providers.Collect(ctx, p, providers.CollectOptions{Window: window})
			if err == nil && len(res.Failures) > 0 {
				err = res.Failures[0]
			}
			if err != nil {
				errs[i] = err
				return
			}
			mu.Lock()
			merged.Instances = append(merged.Instances, res.Fleet.Instances...)
			prices = append(prices, res.Prices...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("%s: %v", clouds[i].cloud, err)
		}
	}
	return merged, prices
}

// compareWithFile analyses doc from the file and the scanned fleet with the
// live prices, and reports any difference in totals or recommendations.
func compareWithFile(t *testing.T, doc []byte, scanned *fleet.Fleet, live []pricing.Price) outcome {
	t.Helper()
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	policy := recommend.DefaultPolicy().WithPurchases(purchasetest.Purchases())
	fromFile, err := fleet.Parse("fleet.yaml", doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := pricing.Complete(fromFile, cat); err != nil {
		t.Fatal(err)
	}
	want := summarize(recommend.Run(fromFile, cat, policy))
	overlaid := pricing.Overlay(cat, live)
	if err := pricing.Complete(scanned, overlaid); err != nil {
		t.Fatal(err)
	}
	got := summarize(recommend.Run(scanned, overlaid, policy))
	if got.current != want.current || got.savings != want.savings {
		t.Errorf("totals through the simulator: current %s, savings %s; from the file: %s, %s", got.current, got.savings, want.current, want.savings)
	}
	if strings.Join(got.recs, "\n") != strings.Join(want.recs, "\n") {
		t.Errorf("recommendations differ:\nthrough the simulator:\n  %s\nfrom the file:\n  %s", strings.Join(got.recs, "\n  "), strings.Join(want.recs, "\n  "))
	}
	for id, w := range want.instances {
		if g := got.instances[id]; g != w {
			t.Errorf("%s: %s through the simulator, %s from the file", id, g, w)
		}
	}
	return want
}

// gcpServed is doc parsed and completed, as the simulator serves it.
func gcpServed(t testing.TB, doc []byte) (*fleet.Fleet, pricing.Catalog) {
	t.Helper()
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	served, err := fleet.Parse("fleet.yaml", doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := pricing.Complete(served, cat); err != nil {
		t.Fatal(err)
	}
	return served, cat
}

// TestGCPSimulatorMatchesFile: the demo fleet's GCP part and the GCP test
// fleet, analysed from their files and through the real GCP clients
// against the simulator, give the same recommendations and totals.
func TestGCPSimulatorMatchesFile(t *testing.T) {
	gcpEnv(t)
	demo, err := file.Demo()
	if err != nil {
		t.Fatal(err)
	}
	conformance, err := os.ReadFile(filepath.Join("..", "..", "testdata", "fleets", "gcp.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		doc      []byte
		regions  []string
		projects []string
		minRecs  int
	}{
		{"demo", cloudFleet(t, demo, fleet.GCP), []string{"us-central1"}, []string{"ml-platform-prod"}, 1},
		{"gcp.yaml", gcpListable(t, conformance), nil, []string{"ml-research-eu"}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			served, cat := gcpServed(t, tc.doc)
			opts := gcpsimcat.Options(served, cat)
			opts.Now = func() time.Time { return demoEnd }
			url := h2cServer(t, gcpsim.New(served, opts))
			scanned, live := scanAll(t, fleet.TimeRange{Start: demoEnd.Add(-14 * 24 * time.Hour), End: demoEnd}, scanCloud{fleet.GCP, providers.Options{
				Endpoint: url, Regions: tc.regions, Now: func() time.Time { return demoEnd },
				Adapter: providers.Values{"projects": tc.projects},
			}})
			if len(scanned.Instances) != len(served.Instances) {
				t.Fatalf("scanned %d VMs, the simulator serves %d", len(scanned.Instances), len(served.Instances))
			}
			if len(live) == 0 {
				t.Error("no live prices: the comparison would not cover the Billing Catalog")
			}
			want := compareWithFile(t, tc.doc, scanned, live)
			t.Logf("%d recommendations; current %s, savings %s a month, both ways", len(want.recs), want.current, want.savings)
			if len(want.recs) < tc.minRecs {
				t.Errorf("only %d recommendations: the comparison is too thin", len(want.recs))
			}
		})
	}
}

// TestAWSAndGCPOnOnePort: the demo fleet's AWS and GCP parts served by both
// simulators on one port (as cmd/cloudsim does) and scanned concurrently
// give the same report as the file of both parts. Azure joins when its
// adapter does.
func TestAWSAndGCPOnOnePort(t *testing.T) {
	gcpEnv(t)
	for k, v := range map[string]string{
		"AWS_EC2_METADATA_DISABLED": "true", "AWS_CONFIG_FILE": os.DevNull, "AWS_SHARED_CREDENTIALS_FILE": os.DevNull,
		"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test", "AWS_REGION": "us-east-1", "AWS_PROFILE": "",
	} {
		t.Setenv(k, v)
	}
	demo, err := file.Demo()
	if err != nil {
		t.Fatal(err)
	}
	doc := cloudFleet(t, demo, fleet.AWS, fleet.GCP)
	served, _ := gcpServed(t, doc)
	kit, err := simkit.New(simkit.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var sims []simkit.Sim
	for _, reg := range simkit.Registered() {
		if reg.Provider != fleet.AWS && reg.Provider != fleet.GCP {
			continue
		}
		s, err := reg.Build(served, simkit.Env{Kit: kit, Now: func() time.Time { return demoEnd }})
		if err != nil {
			t.Fatal(err)
		}
		sims = append(sims, s)
	}
	if len(sims) != 2 {
		t.Fatalf("%d simulators registered for AWS and GCP, want 2", len(sims))
	}
	url := h2cServer(t, simkit.Mux(kit, sims...))
	now := func() time.Time { return demoEnd }
	scanned, live := scanAll(t, fleet.TimeRange{Start: demoEnd.Add(-14 * 24 * time.Hour), End: demoEnd},
		scanCloud{fleet.AWS, providers.Options{Endpoint: url, Regions: []string{"us-east-1"}, Now: now}},
		scanCloud{fleet.GCP, providers.Options{Endpoint: url, Regions: []string{"us-central1"}, Now: now, Adapter: providers.Values{"projects": []string{"ml-platform-prod"}}}},
	)
	if len(scanned.Instances) != len(served.Instances) {
		t.Fatalf("scanned %d instances, the simulators serve %d", len(scanned.Instances), len(served.Instances))
	}
	want := compareWithFile(t, doc, scanned, live)
	t.Logf("%d recommendations; current %s, savings %s a month, both ways", len(want.recs), want.current, want.savings)
}

// TestGCPIdleStopStopsExactlyTheAllowedIdleVMs: idle-stop --provider gcp
// --execute against the simulator serving testdata/fleets/gcp.yaml stops
// the one idle, opted-in, unmanaged on-demand VM and the idle Spot VM with
// instanceTerminationAction STOP, and nothing else (not the
// managed-instance-group member, not the GKE node, not the Spot VM deleted
// when reclaimed, not the busy one or the one without metrics), as the
// simulator's state shows.
func TestGCPIdleStopStopsExactlyTheAllowedIdleVMs(t *testing.T) {
	gcpEnv(t)
	doc, err := os.ReadFile(filepath.Join("..", "..", "testdata", "fleets", "gcp.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	served, cat := gcpServed(t, doc)
	// Two idle Spot copies of eu-l4-idle: one stopped when reclaimed
	// (instanceTerminationAction STOP: stopped like a standard VM), one
	// deleted (protected).
	for _, in := range slices.Clone(served.Instances) {
		if in.ID != "eu-l4-idle" {
			continue
		}
		for id, si := range map[string]fleet.SpotInterruption{"eu-l4-spot-stop": fleet.SpotStop, "eu-l4-spot-delete": fleet.SpotDelete} {
			c := in
			c.ID, c.Name, c.Lifecycle, c.SpotInterruption = id, id, fleet.Spot, si
			served.Instances = append(served.Instances, c)
		}
	}
	clk := &clock{t: stopNow}
	opts := gcpsimcat.Options(served, cat)
	opts.Now = clk.Now
	s := gcpsim.New(served, opts)
	url := h2cServer(t, s)
	states := func() map[string]string {
		out := map[string]string{}
		for _, st := range s.State() {
			out[st.ID] = st.State
		}
		return out
	}
	before := states()
	ios, _, _, _ := iostreams.Test()
	out, errOut := &strings.Builder{}, &strings.Builder{}
	ios.Out, ios.ErrOut = out, errOut
	cfg := &config.Config{Policy: recommend.DefaultPolicy(), IdleStop: idlestop.DefaultPolicy()}
	f := &cmdutil.Factory{IOStreams: ios, Now: clk.Now,
		Config:  func() (*config.Config, error) { return cfg, nil },
		Catalog: func() (pricing.Catalog, error) { return cat, nil },
		Providers: func(ctx context.Context, in cmdutil.FleetFlags, _ *config.Config) ([]providers.Provider, error) {
			ri, _ := providers.Find(fleet.GCP)
			p, err := ri.New(ctx, providers.Options{Endpoint: url, Now: clk.Now, Adapter: providers.Values{"projects": []string{"ml-research-eu"}}})
			return []providers.Provider{p}, err
		},
	}
	var got *idlestopcmd.IdleStopOptions
	cmd := idlestopcmd.NewCmdIdleStop(f, func(o *idlestopcmd.IdleStopOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"--provider", "gcp", "-o", "json", "--execute", "--audit-log", filepath.Join(t.TempDir(), "audit.jsonl"), "--lock-dir", t.TempDir()})
	cmd.SetOut(ios.Out)
	cmd.SetErr(ios.ErrOut)
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if err := idlestopcmd.Run(got); err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	r := decode(t, out.String())
	after := states()
	for id, st := range after {
		want := before[id]
		if id == "eu-l4-idle" || id == "eu-l4-spot-stop" {
			want = "TERMINATED"
		}
		if st != want {
			t.Errorf("%s: %s after idle-stop, want %s (decisions %v)", id, st, want, reasons(r))
		}
	}
	if r.Summary.Stopped != 2 {
		t.Errorf("summary %+v, want two stops; decisions %v", r.Summary, reasons(r))
	}
	for id, want := range map[string]string{"us-a2-mig-1": "skip/managed", "gke-pool-l4-7f3a": "skip/managed", "eu-l4-nometrics": "skip/no-metrics",
		"eu-l4-spot-stop": "stop/idle", "eu-l4-spot-delete": "skip/spot-not-stoppable", "eu-a2-train": "skip/busy"} {
		if got := reasons(r)[id]; got != want {
			t.Errorf("%s: %s, want %s", id, got, want)
		}
	}
}
