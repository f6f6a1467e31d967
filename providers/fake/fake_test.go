package fake_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers"
	"github.com/gpufinops/gpufinops/providers/fake"
	"github.com/gpufinops/gpufinops/providers/providertest"
)

var now = time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)

// testFleet has instances in two of three regions: running and stopped,
// spot and on-demand, one to eight GPUs, some without utilization.
func testFleet() *fleet.Fleet {
	fl := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind}
	types := []struct {
		name  string
		count float64
		model string
	}{{"g5.xlarge", 1, "A10G"}, {"g5.12xlarge", 4, "A10G"}, {"p4d.24xlarge", 8, "A100-40GB"}}
	for i := range 12 {
		ty := types[i%len(types)]
		price := decimal.NewFromFloat(1.5 * ty.count)
		in := fleet.Instance{
			ID: fmt.Sprintf("i-%017x", 0x100+i), Provider: fleet.AWS, Account: "111122223333",
			Region: []string{"us-east-1", "us-west-2"}[i%2], InstanceType: ty.name,
			GPU:       fleet.GPU{Model: ty.model, Count: ty.count, MemoryGiB: 24 * ty.count},
			Lifecycle: fleet.OnDemand, State: fleet.Running, HourlyPrice: &price,
		}
		if i%5 == 3 {
			in.Lifecycle = fleet.Spot
		}
		if i%6 == 5 {
			in.State = fleet.Stopped
		}
		if i%4 != 2 {
			a := float64(10 + 5*i)
			in.Utilization = &fleet.Utilization{
				Window: &fleet.TimeRange{Start: now.AddDate(0, 0, -7), End: now},
				GPU:    &fleet.Stats{Avg: a, P95: a + 10, Max: a + 20},
			}
		}
		fl.Instances = append(fl.Instances, in)
	}
	return fl
}

// harnessNew maps the suite's faults to the fake's knobs.
func harnessNew(t *testing.T, s providertest.Setup) (providers.Provider, error) {
	ft := s.Faults
	if ft.ThrottleRate > 0 {
		return nil, fmt.Errorf("throttling: %w", providertest.ErrUnsupported)
	}
	opts := fake.Options{Regions: s.Regions, Faults: map[string]fake.Fault{}, NoCredentials: ft.NoCredentials,
		NotStoppable: notStoppable, Now: func() time.Time { return now }}
	for _, r := range s.Regions {
		f := fake.Fault{Latency: ft.Latency}
		if slices.Contains(ft.FailRegions, r) {
			f.List = errors.New("500 internal error")
		}
		if slices.Contains(ft.FailMetricsRegions, r) {
			f.Metrics = errors.New("500 internal error")
		}
		if ft.FailPrices {
			f.Prices = errors.New("500 internal error")
		}
		if ft.DenyList {
			f.List = providers.ErrPermission
		}
		if ft.DenyStop {
			f.Stop = providers.ErrPermission
		}
		opts.Faults[r] = f
	}
	if ft.FailAccount {
		opts.AccountErrors = map[string]error{"444455556666": providers.ErrPermission}
	}
	return fake.New(s.Fleet, opts), nil
}

func notStoppable(in fleet.Instance) bool { return in.Lifecycle == fleet.Spot }

// TestConformance: the fake passes every case but throttling.
func TestConformance(t *testing.T) {
	sum := providertest.Run(t, providertest.Harness{
		Provider: fleet.AWS, Fleet: testFleet(), Regions: []string{"eu-west-1", "us-east-1", "us-west-2"},
		Now: now, New: harnessNew, NotStoppable: notStoppable,
	})
	var want []string
	for _, s := range sum.Skipped {
		if !slices.Contains([]string{"TestConformance/faults/throttling_is_retried", "TestConformance/prices/the_cache_serves_when_the_price_APIs_fail"}, firstWord(s)) {
			want = append(want, s)
		}
	}
	if len(want) > 0 {
		t.Errorf("skipped: %q", want)
	}
}

func firstWord(s string) string {
	for i, r := range s {
		if r == ':' {
			return s[:i]
		}
	}
	return s
}

func TestFaultKeysMostSpecificWins(t *testing.T) {
	boom := errors.New("boom")
	p := fake.New(testFleet(), fake.Options{Faults: map[string]fake.Fault{
		"*":                      {List: boom},
		"us-west-2":              {},
		"111122223333/us-east-1": {},
	}})
	ctx := context.Background()
	for _, tc := range []struct {
		scope providers.Scope
		fail  bool
	}{
		{providers.Scope{Provider: fleet.AWS, Account: "111122223333", Region: "us-east-1"}, false},
		{providers.Scope{Provider: fleet.AWS, Account: "111122223333", Region: "us-west-2"}, false},
		{providers.Scope{Provider: fleet.AWS, Account: "111122223333", Region: "eu-west-1"}, true},
	} {
		_, err := p.ListGPUInstances(ctx, tc.scope)
		if got := errors.Is(err, boom); got != tc.fail {
			t.Errorf("%s: err %v, want failure %v", tc.scope, err, tc.fail)
		}
	}
}

func TestCallsAndStates(t *testing.T) {
	p := fake.New(testFleet(), fake.Options{})
	res, err := providers.Collect(context.Background(), p, providers.CollectOptions{Window: fleet.TimeRange{Start: now.AddDate(0, 0, -7), End: now}})
	if err != nil || len(res.Failures) > 0 {
		t.Fatal(err, res.Failures)
	}
	if got := p.Calls("ListGPUInstances", ""); got != 2 {
		t.Errorf("ListGPUInstances called %d times, want once per region (2)", got)
	}
	if got := p.Calls("ReadUtilization", "us-east-1"); got != 1 {
		t.Errorf("ReadUtilization in us-east-1 called %d times, want 1", got)
	}
	if got := p.Calls("ReadPrices", ""); got != 2 {
		t.Errorf("ReadPrices called %d times, want 2", got)
	}
	scope := providers.Scope{Provider: fleet.AWS, Account: "111122223333", Region: "us-east-1"}
	id := "i-00000000000000100"
	if _, err := p.Stop(context.Background(), scope, id, false); err != nil {
		t.Fatal(err)
	}
	if p.State(id) != fleet.Stopped || p.Calls("stopped", "") != 1 {
		t.Errorf("state %s, %d stops", p.State(id), p.Calls("stopped", ""))
	}
	// The wrong scope does not find it.
	other := scope
	other.Region = "us-west-2"
	if _, err := p.Stop(context.Background(), other, id, true); !errors.Is(err, providers.ErrNotFound) {
		t.Errorf("stop in another region: %v, want ErrNotFound", err)
	}
}

func TestScopesFailsOnAFailedAccount(t *testing.T) {
	p := fake.New(testFleet(), fake.Options{AccountErrors: map[string]error{"444455556666": providers.ErrPermission}})
	if _, err := p.Scopes(context.Background()); !errors.Is(err, providers.ErrPermission) {
		t.Errorf("Scopes: %v, want ErrPermission", err)
	}
	scopes, failed, err := p.PartialScopes(context.Background())
	if err != nil || len(failed) != 1 || len(scopes) != 2 {
		t.Errorf("PartialScopes: %v, %v, %v", scopes, failed, err)
	}
}

// TestMetricsLatencyDelaysOnlyMetrics: a hanging metrics service holds up
// ReadUtilization, not the listing.
func TestMetricsLatencyDelaysOnlyMetrics(t *testing.T) {
	p := fake.New(testFleet(), fake.Options{Faults: map[string]fake.Fault{"us-east-1": {MetricsLatency: time.Minute}}})
	scope := providers.Scope{Provider: fleet.AWS, Account: "111122223333", Region: "us-east-1"}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	listed, err := p.ListGPUInstances(ctx, scope)
	if err != nil {
		t.Fatalf("listing: %v", err)
	}
	if _, err := p.ReadUtilization(ctx, scope, listed, fleet.TimeRange{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("ReadUtilization: %v, want context.DeadlineExceeded", err)
	}
}
