package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sort"
	"strings"
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
	"github.com/gpufinops/gpufinops/providers/azure"
	azsim "github.com/gpufinops/gpufinops/providers/azure/sim"
	azsimcat "github.com/gpufinops/gpufinops/providers/azure/simcat"
	"github.com/gpufinops/gpufinops/providers/file"
)

// azureFleet is testdata/fleets/azure.yaml.
func azureFleet(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile("../../testdata/fleets/azure.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// azureDemo is the demo fleet's Azure part as a file.
func azureDemo(t *testing.T) []byte {
	t.Helper()
	demo, err := file.Demo()
	if err != nil {
		t.Fatal(err)
	}
	out := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind, Metadata: demo.Metadata}
	for _, in := range demo.Instances {
		if in.Provider == fleet.Azure {
			out.Instances = append(out.Instances, in)
		}
	}
	var b bytes.Buffer
	if err := fleet.Write(&b, out, fleet.FormatYAML); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// azureSubscriptions are the subscriptions a fleet's Azure instances name.
func azureSubscriptions(f *fleet.Fleet) []string {
	seen := map[string]bool{}
	var out []string
	for _, in := range f.Instances {
		if in.Provider == fleet.Azure && !seen[in.Account] {
			seen[in.Account] = true
			out = append(out, in.Account)
		}
	}
	sort.Strings(out)
	return out
}

// azureProvider is the registered adapter pointed at a simulator with the
// test credential, as `gpufinops --provider azure` builds it.
func azureProvider(t testing.TB, ctx context.Context, url string, subs []string, now func() time.Time) providers.Provider {
	t.Helper()
	ri, ok := providers.Find(fleet.Azure)
	if !ok || !ri.CanScan() {
		t.Fatal("no azure adapter registered")
	}
	p, err := ri.New(ctx, providers.Options{Endpoint: url, Now: now, RetryMaxBackoff: time.Millisecond,
		Adapter: providers.Values{azure.OptSubscriptions: subs, azure.OptTestCredential: true}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestAzureSimulatorMatchesFile: the same fleet analysed from its file and
// through the real Azure SDK against the simulator gives the same
// recommendations and totals (the regions are found through Resource Graph).
func TestAzureSimulatorMatchesFile(t *testing.T) {
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	for name, doc := range map[string][]byte{"testdata/fleets/azure.yaml": azureFleet(t), "the demo's Azure part": azureDemo(t)} {
		t.Run(name, func(t *testing.T) {
			policy := recommend.DefaultPolicy().WithPurchases(purchasetest.Purchases())
			fromFile, err := fleet.Parse("azure.yaml", doc)
			if err != nil {
				t.Fatal(err)
			}
			if err := pricing.Complete(fromFile, cat); err != nil {
				t.Fatal(err)
			}
			want := summarize(recommend.Run(fromFile, cat, policy))

			served, err := fleet.Parse("azure.yaml", doc)
			if err != nil {
				t.Fatal(err)
			}
			if err := pricing.Complete(served, cat); err != nil {
				t.Fatal(err)
			}
			opts := azsimcat.Options(served, cat)
			opts.Now = func() time.Time { return demoEnd }
			srv := httptest.NewServer(azsim.New(served, opts))
			defer srv.Close()
			ctx := context.Background()
			p := azureProvider(t, ctx, srv.URL, azureSubscriptions(served), opts.Now)
			res, err := providers.Collect(ctx, p, providers.CollectOptions{Window: fleet.TimeRange{Start: demoEnd.Add(-14 * 24 * time.Hour), End: demoEnd}})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Failures) > 0 {
				t.Fatalf("scan failures: %v", res.Failures)
			}
			if len(res.Prices) == 0 {
				t.Error("no live prices were read")
			}
			live := pricing.Overlay(cat, res.Prices)
			if err := pricing.Complete(res.Fleet, live); err != nil {
				t.Fatal(err)
			}
			got := summarize(recommend.Run(res.Fleet, live, policy))
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
			if len(want.recs) == 0 {
				t.Error("no recommendations: the comparison is empty")
			}
			t.Logf("%d recommendations; current %s, savings %s a month, both ways", len(want.recs), want.current, want.savings)
		})
	}
}

// TestAzureIdleStopExecute: idle-stop --provider azure --execute
// deallocates exactly the idle VMs it may (tagged AutoShutdown=true, not a
// scale-set member), an idle Spot VM with eviction policy Deallocate (not
// one with Delete) and the VM powered off but still allocated (no metrics:
// its power state is the evidence), confirmed through /_sim/state, and a
// second run stops nothing.
func TestAzureIdleStopExecute(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	f, err := fleet.Parse("azure.yaml", azureFleet(t))
	if err != nil {
		t.Fatal(err)
	}
	// Two idle Spot copies of nc-a100-idle: one deallocated on eviction
	// (stopped like a regular VM), one deleted on eviction (protected).
	for _, in := range slices.Clone(f.Instances) {
		if in.ID != "nc-a100-idle" {
			continue
		}
		for id, si := range map[string]fleet.SpotInterruption{"nc-a100-spot-dealloc": fleet.SpotDeallocate, "nc-a100-spot-delete": fleet.SpotDelete} {
			c := in
			c.ID, c.Name, c.Lifecycle, c.SpotInterruption, c.HourlyPrice = id, id, fleet.Spot, si, nil
			f.Instances = append(f.Instances, c)
		}
	}
	if err := pricing.Complete(f, cat); err != nil {
		t.Fatal(err)
	}
	clk := &clock{t: stopNow}
	opts := azsimcat.Options(f, cat)
	opts.Now = clk.Now
	opts.ThrottleRate, opts.Seed = 0.1, 5
	s := azsim.New(f, opts)
	srv := httptest.NewServer(s)
	defer srv.Close()
	run := func(execute bool) runOutput {
		ios, _, _, _ := iostreams.Test()
		out, errOut := &strings.Builder{}, &strings.Builder{}
		ios.Out, ios.ErrOut = out, errOut
		cfg := &config.Config{Policy: recommend.DefaultPolicy(), IdleStop: idlestop.DefaultPolicy(), Providers: map[string]providers.Values{"azure": {providers.OptConcurrency: 4}}}
		o := &idlestopcmd.IdleStopOptions{
			IO:      ios,
			Config:  func() (*config.Config, error) { return cfg, nil },
			Catalog: func() (pricing.Catalog, error) { return cat, nil },
			Providers: func(ctx context.Context, _ cmdutil.FleetFlags, _ *config.Config) ([]providers.Provider, error) {
				return []providers.Provider{azureProvider(t, ctx, srv.URL, azureSubscriptions(f), clk.Now)}, nil
			},
			Now: clk.Now,
		}
		fac := &cmdutil.Factory{IOStreams: ios, Config: o.Config, Catalog: o.Catalog, Providers: o.Providers, Now: o.Now}
		var got *idlestopcmd.IdleStopOptions
		cmd := idlestopcmd.NewCmdIdleStop(fac, func(x *idlestopcmd.IdleStopOptions) error { got = x; return nil })
		args := []string{"--provider", "azure", "-o", "json"}
		if execute {
			args = append(args, "--execute")
		}
		cmd.SetArgs(args)
		cmd.SetOut(ios.Out)
		cmd.SetErr(ios.ErrOut)
		if err := cmd.Execute(); err != nil {
			t.Fatal(err)
		}
		got.Providers = o.Providers
		if err := idlestopcmd.Run(got); err != nil {
			t.Fatalf("%v\n%s", err, errOut.String())
		}
		return decode(t, out.String())
	}
	before := azureStates(t, srv.URL)
	dry := run(false)
	if fmt.Sprint(azureStates(t, srv.URL)) != fmt.Sprint(before) {
		t.Fatalf("a dry run changed states: %v", azureStates(t, srv.URL))
	}
	r := run(true)
	var stopped []string
	for id, st := range azureStates(t, srv.URL) {
		if st == "stopped" && before[id] != "stopped" {
			stopped = append(stopped, id)
		}
	}
	sort.Strings(stopped)
	if strings.Join(stopped, ",") != "nc-a100-idle,nc-a100-spot-dealloc,nc-t4-poweredoff,nd-a100-idle-2" {
		t.Errorf("deallocated %v, want nc-a100-idle, nc-a100-spot-dealloc (Spot, eviction policy Deallocate), nc-t4-poweredoff (powered off, still billed) and nd-a100-idle-2; decisions %v", stopped, reasons(r))
	}
	if d := reasons(r)["nc-a100-spot-delete"]; d != "skip/spot-not-stoppable" {
		t.Errorf("the Spot VM deleted on eviction was %s, want skip/spot-not-stoppable", d)
	}
	if d := reasons(r)["nc-t4-poweredoff"]; d != "stop/stopped-allocated" {
		t.Errorf("the powered-off VM (no metrics, billed as running) was %s, want stop/stopped-allocated", d)
	}
	if d := reasons(r)["aks-gpupool-0"]; strings.HasPrefix(d, "stop") {
		t.Errorf("the AKS node pool member was %s", d)
	}
	if n := s.Counts()["compute"]["PowerOff"]; n != 0 {
		t.Errorf("%d power-off calls: power-off keeps billing", n)
	}
	if r.Summary.Stopped != 4 || r.Summary.Failed != 0 || dry.Summary.Stop != 4 {
		t.Errorf("summary %+v (dry run %+v)", r.Summary, dry.Summary)
	}
	again := run(true)
	if again.Summary.Stopped != 0 || reasons(again)["nc-a100-idle"] != "skip/already-stopped" {
		t.Errorf("second run: %+v %v", again.Summary, reasons(again))
	}
}

// azureStates reads /_sim/state: VM → state.
func azureStates(t *testing.T, url string) map[string]string {
	t.Helper()
	resp, err := http.Get(url + "/_sim/state")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Instances []azsim.InstanceState `json:"instances"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, s := range body.Instances {
		out[s.ID] = s.State
	}
	return out
}
