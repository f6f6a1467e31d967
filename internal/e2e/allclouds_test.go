package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/cmd/factory"
	"github.com/gpufinops/gpufinops/pkg/cmd/root"
	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/providers/file"
	"github.com/gpufinops/gpufinops/providers/simkit"
)

// allClouds serves the demo fleet the way `cloudsim --demo` does: every
// registered simulator on one port (HTTP/1.1 and cleartext HTTP/2), and
// points each cloud's adapter at it through the environment a user sets.
// It returns the simulators' request counts by cloud.
func allClouds(t *testing.T) (requests func() map[string]int) {
	t.Helper()
	demo, err := file.Demo()
	if err != nil {
		t.Fatal(err)
	}
	return allCloudsServing(t, demo)
}

// allCloudsServing is allClouds serving f.
func allCloudsServing(t *testing.T, f *fleet.Fleet) (requests func() map[string]int) {
	t.Helper()
	served, _ := gcpServed(t, cloudFleet(t, f, fleet.AWS, fleet.Azure, fleet.GCP))
	ops := simkit.RegisteredOps()
	kit, err := simkit.New(simkit.Options{Seed: 1, Ops: ops})
	if err != nil {
		t.Fatal(err)
	}
	// Every operation the commands called is one a Simulator.Ops names, so
	// cloudsim's --delay and --hang take it.
	t.Cleanup(func() {
		for svc, counts := range kit.Counts() {
			for op := range counts {
				if !slices.Contains(ops, svc+":"+op) {
					t.Errorf("the simulators answered %s:%s, which no Simulator.Ops lists", svc, op)
				}
			}
		}
	})
	var sims []simkit.Sim
	clouds := map[fleet.Provider]bool{}
	for _, reg := range simkit.Registered() {
		s, err := reg.Build(served, simkit.Env{Kit: kit, Now: func() time.Time { return demoEnd }})
		if err != nil {
			t.Fatal(err)
		}
		sims = append(sims, s)
		clouds[reg.Provider] = true
	}
	for _, c := range []fleet.Provider{fleet.AWS, fleet.Azure, fleet.GCP} {
		if !clouds[c] {
			t.Fatalf("no %s simulator registered", c)
		}
	}
	url := h2cServer(t, simkit.Mux(kit, sims...))
	allCloudsEnv(t, url, nil)
	return func() map[string]int {
		out := map[string]int{}
		for svc, ops := range kit.Counts() {
			for _, n := range ops {
				out[svc] += n
			}
		}
		return out
	}
}

// gpufinops runs the command line in-process with the production factory and
// returns its exit code, stdout and stderr.
func gpufinops(t *testing.T, args ...string) (cmdutil.ExitCode, string, string) {
	t.Helper()
	return gpufinopsAt(t, demoEnd, args...)
}

// gpufinopsAt is gpufinops with the command's clock at now.
func gpufinopsAt(t *testing.T, now time.Time, args ...string) (cmdutil.ExitCode, string, string) {
	t.Helper()
	ios, _, out, errOut := iostreams.Test()
	f := factory.New()
	f.IOStreams = ios
	f.Fleet = factory.FileFleet(ios)
	f.Now = func() time.Time { return now }
	code := root.Run(context.Background(), f, args)
	return code, out.String(), errOut.String()
}

// reportOutcome is what must agree between two reports of the same fleet:
// the totals, every recommendation and every instance's cost.
func reportOutcome(t *testing.T, doc string) outcome {
	t.Helper()
	var r struct {
		Summary struct {
			Current float64 `json:"currentMonthlyCost"`
			Savings float64 `json:"monthlySavings"`
		} `json:"summary"`
		Recommendations []struct {
			Kind, ResourceID, Target string
			Current                  float64 `json:"currentMonthlyCost"`
			Projected                float64 `json:"projectedMonthlyCost"`
		} `json:"recommendations"`
		Instances []struct {
			ResourceID string  `json:"resourceId"`
			Monthly    float64 `json:"currentMonthlyCost"`
			Optimized  float64 `json:"optimizedMonthlyCost"`
		} `json:"instances"`
	}
	if err := json.Unmarshal([]byte(doc), &r); err != nil {
		t.Fatalf("report does not parse: %v", err)
	}
	o := outcome{current: fmt.Sprintf("%.2f", r.Summary.Current), savings: fmt.Sprintf("%.2f", r.Summary.Savings), instances: map[string]string{}}
	for _, rec := range r.Recommendations {
		// The action's text names the window the utilization covers, which
		// for a scan is --lookback-days and for a file each instance's own.
		o.recs = append(o.recs, fmt.Sprintf("%s %s → %s: %.2f → %.2f", rec.Kind, rec.ResourceID, rec.Target, rec.Current, rec.Projected))
	}
	sort.Strings(o.recs)
	for _, in := range r.Instances {
		o.instances[in.ResourceID] = fmt.Sprintf("%.2f → %.2f", in.Monthly, in.Optimized)
	}
	return o
}

// TestThreeCloudsInOneScan: `analyze --provider aws,azure,gcp` against one
// port serving the demo fleet scans all three clouds through their real
// SDKs and gives the same recommendations, instance costs and totals as
// `analyze --demo`; `inventory` lists the same instances; every cloud's
// simulator was asked.
func TestThreeCloudsInOneScan(t *testing.T) {
	requests := allClouds(t)
	code, live, stderr := gpufinops(t, "analyze", "--provider", "aws,azure,gcp", "-o", "json")
	if code != cmdutil.ExitOK {
		t.Fatalf("analyze --provider aws,azure,gcp exited %d: %s", code, stderr)
	}
	code, fromFile, stderr := gpufinops(t, "analyze", "--fleet", scannedDemoFile(t), "-o", "json")
	if code != cmdutil.ExitOK {
		t.Fatalf("analyze --fleet (the demo as a scan reads it) exited %d: %s", code, stderr)
	}
	got, want := reportOutcome(t, live), reportOutcome(t, fromFile)
	if got.current != want.current || got.savings != want.savings {
		t.Errorf("totals: scanned current %s saving %s, file current %s saving %s", got.current, got.savings, want.current, want.savings)
	}
	if strings.Join(got.recs, "\n") != strings.Join(want.recs, "\n") {
		t.Errorf("recommendations differ:\nscanned:\n%s\nfile:\n%s", strings.Join(got.recs, "\n"), strings.Join(want.recs, "\n"))
	}
	if fmt.Sprint(got.instances) != fmt.Sprint(want.instances) {
		t.Errorf("instance costs differ:\nscanned %v\nfile    %v", got.instances, want.instances)
	}
	// 27: the 23 VMs and the four managed AI items.
	if len(want.recs) < 20 || len(want.instances) != 27 {
		t.Fatalf("the demo gave %d recommendations on %d instances: not the fleet this test is about", len(want.recs), len(want.instances))
	}

	code, inv, stderr := gpufinops(t, "inventory", "--provider", "aws,azure,gcp", "-o", "json")
	if code != cmdutil.ExitOK {
		t.Fatalf("inventory exited %d: %s", code, stderr)
	}
	scanned, err := fleet.Parse("inventory.json", []byte(inv))
	if err != nil {
		t.Fatalf("inventory output is not a fleet: %v", err)
	}
	demo, err := file.Demo()
	if err != nil {
		t.Fatal(err)
	}
	ids := func(f *fleet.Fleet) string {
		var out []string
		for _, in := range f.Instances {
			out = append(out, string(in.Provider)+"/"+in.ID)
		}
		sort.Strings(out)
		return strings.Join(out, " ")
	}
	if ids(scanned) != ids(demo) {
		t.Errorf("inventory lists\n%s\nthe demo has\n%s", ids(scanned), ids(demo))
	}
	var asked []string
	for svc, n := range requests() {
		if n > 0 {
			asked = append(asked, svc)
		}
	}
	sort.Strings(asked)
	t.Logf("%d recommendations, current %s, saving %s a month, both ways; services asked: %s", len(want.recs), want.current, want.savings, strings.Join(asked, ", "))
	for _, svc := range []string{"ec2", "resourcegraph", "compute", "monitoring"} {
		if !slices.Contains(asked, svc) {
			t.Errorf("the %s simulator was never asked (asked: %v)", svc, asked)
		}
	}
}

// allCloudsEnv points the three clouds' SDKs at the simulators on url, with test
// credentials and empty config, cache and state folders; extra sets more
// variables.
func allCloudsEnv(t *testing.T, url string, extra map[string]string) {
	t.Helper()
	gcpEnv(t)
	dir := t.TempDir()
	env := map[string]string{
		"AWS_ENDPOINT_URL": url, "AWS_EC2_METADATA_DISABLED": "true", "AWS_CONFIG_FILE": os.DevNull, "AWS_SHARED_CREDENTIALS_FILE": os.DevNull,
		"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test", "AWS_REGION": "us-east-1", "AWS_PROFILE": "",
		"GPUFINOPS_PROVIDERS_AZURE_ENDPOINT": url, "GPUFINOPS_PROVIDERS_AZURE_TEST_CREDENTIAL": "true",
		"GPUFINOPS_PROVIDERS_GCP_ENDPOINT": url,
		"XDG_CONFIG_HOME":                  dir, "XDG_CACHE_HOME": dir, "XDG_STATE_HOME": dir, "HOME": dir,
	}
	maps.Copy(env, extra)
	for k, v := range env {
		t.Setenv(k, v)
	}
}
