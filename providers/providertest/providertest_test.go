package providertest_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers"
	"github.com/gpufinops/gpufinops/providers/fake"
	"github.com/gpufinops/gpufinops/providers/providertest"
)

var now = time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)

func testFleet() *fleet.Fleet {
	fl := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind}
	for i := range 8 {
		count := float64(1 + 3*(i%2))
		in := fleet.Instance{
			ID: fmt.Sprintf("i-%04d", i), Provider: fleet.AWS, Account: "111122223333", Region: []string{"us-east-1", "us-west-2"}[i%2],
			InstanceType: "g5.xlarge", GPU: fleet.GPU{Model: "A10G", Count: count}, Lifecycle: fleet.OnDemand, State: fleet.Running,
		}
		price := decimal.NewFromFloat(1.006)
		in.HourlyPrice = &price
		if i%4 != 3 {
			in.Utilization = &fleet.Utilization{GPU: &fleet.Stats{Avg: 40, P95: 60, Max: 80}}
		}
		fl.Instances = append(fl.Instances, in)
	}
	return fl
}

// broken are providers that each break one rule of the contract, with a
// part of the message the suite must fail with.
var broken = map[string]struct {
	wrap func(*fake.Provider) providers.Provider
	want string
}{
	"pads silent GPUs with zeros": {func(p *fake.Provider) providers.Provider { return padGPUs{p} }, "the silent ones were filled in"},
	"ignores cancellation":        {func(p *fake.Provider) providers.Provider { return deaf{p} }, "want context.Canceled"},
	"stops twice":                 {func(p *fake.Provider) providers.Provider { return restops{p} }, "want AlreadyStopped"},
	"has no GPU count":            {func(p *fake.Provider) providers.Provider { return noCount{p} }, "both must be set"},
}

type padGPUs struct{ *fake.Provider }

func (p padGPUs) ReadUtilization(ctx context.Context, s providers.Scope, in []fleet.Instance, w fleet.TimeRange) ([]string, error) {
	notes, err := p.Provider.ReadUtilization(ctx, s, in, w)
	for i := range in {
		if u := in[i].Utilization; u != nil {
			for j := range u.Samples {
				for len(u.Samples[j].GPU) < int(in[i].GPU.Count) {
					u.Samples[j].GPU = append(u.Samples[j].GPU, 0)
				}
			}
		}
	}
	return notes, err
}

type deaf struct{ *fake.Provider }

func (p deaf) ListGPUInstances(_ context.Context, s providers.Scope) ([]fleet.Instance, error) {
	return p.Provider.ListGPUInstances(context.Background(), s)
}

type restops struct{ *fake.Provider }

func (p restops) Stop(ctx context.Context, s providers.Scope, id string, dry bool) (providers.StopResult, error) {
	res, err := p.Provider.Stop(ctx, s, id, dry)
	res.AlreadyStopped = false
	return res, err
}

type noCount struct{ *fake.Provider }

func (p noCount) ListGPUInstances(ctx context.Context, s providers.Scope) ([]fleet.Instance, error) {
	out, err := p.Provider.ListGPUInstances(ctx, s)
	for i := range out {
		out[i].GPU.Count = 0
	}
	return out, err
}

func harness(wrap func(*fake.Provider) providers.Provider) providertest.Harness {
	return providertest.Harness{
		Provider: fleet.AWS, Fleet: testFleet(), Regions: []string{"eu-west-1", "us-east-1", "us-west-2"}, Now: now,
		New: func(t *testing.T, s providertest.Setup) (providers.Provider, error) {
			if s.Faults.Latency == 0 && (s.Faults.ThrottleRate > 0 || len(s.Faults.FailRegions) > 0 || len(s.Faults.FailMetricsRegions) > 0 ||
				s.Faults.FailPrices || s.Faults.DenyList || s.Faults.DenyStop || s.Faults.FailAccount || s.Faults.NoCredentials) {
				return nil, providertest.ErrUnsupported
			}
			opts := fake.Options{Regions: s.Regions}
			if s.Faults.Latency > 0 {
				opts.Faults = map[string]fake.Fault{"*": {Latency: s.Faults.Latency}}
			}
			return wrap(fake.New(s.Fleet, opts)), nil
		},
	}
}

// TestBrokenProvider runs the suite over one broken provider, named by
// PROVIDERTEST_BROKEN, for TestSuiteFailsBrokenProviders.
func TestBrokenProvider(t *testing.T) {
	name := os.Getenv("PROVIDERTEST_BROKEN")
	if name == "" {
		t.Skip("run by TestSuiteFailsBrokenProviders")
	}
	providertest.Run(t, harness(broken[name].wrap))
}

// TestSuiteFailsBrokenProviders: the suite passes the plain fake and fails
// each broken one with the message of the rule it breaks.
func TestSuiteFailsBrokenProviders(t *testing.T) {
	sum := providertest.Run(t, harness(func(p *fake.Provider) providers.Provider { return p }))
	if len(sum.Skipped) == 0 {
		t.Error("the harness injects no faults, yet nothing was skipped")
	}
	if testing.Short() {
		t.Skip("runs the test binary once per broken provider")
	}
	for name, b := range broken {
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestBrokenProvider$", "-test.v")
			cmd.Env = append(os.Environ(), "PROVIDERTEST_BROKEN="+name)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("the suite passed a provider that %s", name)
			}
			if !strings.Contains(string(out), b.want) {
				t.Errorf("the failure does not say %q:\n%s", b.want, lastLines(string(out), 30))
			}
		})
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
