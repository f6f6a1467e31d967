// Package providertest is the conformance suite every cloud adapter runs
// against its simulator: GPU facts always set, empty scopes empty, throttling
// retried, one failing region reported without losing the others,
// cancellation honoured, missing credentials mapped to one sentinel error.
package providertest

import (
	"context"
	"errors"
	"sort"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers"
)

// Faults are what the backend is told to do wrong.
type Faults struct {
	// ThrottleRate is the share of requests answered with a throttling error.
	ThrottleRate float64
	// FailRegions answer every request with a server error.
	FailRegions []string
	// Latency is added to every request.
	Latency time.Duration
	// NoCredentials builds the provider without any credentials.
	NoCredentials bool
}

// Harness connects the suite to one adapter.
type Harness struct {
	// Provider is the cloud under test; the suite uses the fleet's instances
	// of this provider only.
	Provider fleet.Provider
	// Fleet is what the backend serves. It must have instances in at least
	// two regions, and its regions list in Regions must include one region
	// with no instance.
	Fleet *fleet.Fleet
	// Regions are the regions to scan.
	Regions []string
	// New starts a backend serving fl with the faults and returns a provider
	// reading it, or the error its constructor returned.
	New func(t *testing.T, fl *fleet.Fleet, regions []string, faults Faults) (providers.Provider, error)
}

// Run runs the conformance suite.
func Run(t *testing.T, h Harness) {
	t.Helper()
	want := map[string]fleet.Instance{}
	byRegion := map[string]int{}
	for _, in := range h.Fleet.Instances {
		if in.Provider == h.Provider {
			want[in.ID] = in
			byRegion[in.Region]++
		}
	}
	var empty, busy []string
	for _, r := range h.Regions {
		if byRegion[r] == 0 {
			empty = append(empty, r)
		} else {
			busy = append(busy, r)
		}
	}
	if len(empty) == 0 || len(busy) < 2 {
		t.Fatalf("providertest: the harness needs a region without instances and two with (regions %v)", h.Regions)
	}

	t.Run("lists every instance with its GPU facts", func(t *testing.T) {
		p := mustNew(t, h, Faults{})
		res, err := providers.Collect(context.Background(), p, providers.CollectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Failures) > 0 {
			t.Fatalf("failures: %v", res.Failures)
		}
		got := ids(res.Fleet.Instances)
		if len(got) != len(want) {
			t.Fatalf("listed %d instances, the backend has %d", len(got), len(want))
		}
		for _, in := range res.Fleet.Instances {
			w, ok := want[in.ID]
			if !ok {
				t.Errorf("%s: not in the backend's fleet", in.ID)
				continue
			}
			if in.GPU.Model == "" || in.GPU.Count <= 0 {
				t.Errorf("%s: GPU model %q count %v: both must be set", in.ID, in.GPU.Model, in.GPU.Count)
			}
			if in.Provider != h.Provider || in.Region != w.Region || in.InstanceType != w.InstanceType {
				t.Errorf("%s: %s %s %s, want %s %s %s", in.ID, in.Provider, in.Region, in.InstanceType, h.Provider, w.Region, w.InstanceType)
			}
		}
	})

	t.Run("an empty scope is an empty result", func(t *testing.T) {
		p := mustNew(t, h, Faults{})
		scope := scopeFor(t, p, empty[0])
		got, err := p.ListGPUInstances(context.Background(), scope)
		if err != nil || len(got) != 0 {
			t.Fatalf("got %d instances, %v; want none and no error", len(got), err)
		}
	})

	t.Run("throttling is retried", func(t *testing.T) {
		p := mustNew(t, h, Faults{ThrottleRate: 0.3})
		res, err := providers.Collect(context.Background(), p, providers.CollectOptions{Concurrency: 2})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Failures) > 0 || len(res.Fleet.Instances) != len(want) {
			t.Fatalf("with 30 %% throttling: %d instances, failures %v", len(res.Fleet.Instances), res.Failures)
		}
	})

	t.Run("one failing region does not lose the others", func(t *testing.T) {
		p := mustNew(t, h, Faults{FailRegions: []string{busy[0]}})
		res, err := providers.Collect(context.Background(), p, providers.CollectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Failures) != 1 || res.Failures[0].Scope.Region != busy[0] {
			t.Fatalf("failures %v, want exactly %s", res.Failures, busy[0])
		}
		if n := len(res.Fleet.Instances); n != len(want)-byRegion[busy[0]] {
			t.Fatalf("%d instances from the other regions, want %d", n, len(want)-byRegion[busy[0]])
		}
	})

	t.Run("cancellation is honoured", func(t *testing.T) {
		p := mustNew(t, h, Faults{Latency: 2 * time.Second})
		scope := scopeFor(t, p, busy[0])
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := p.ListGPUInstances(ctx, scope)
			done <- err
		}()
		cancel()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("got %v, want context.Canceled", err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("ListGPUInstances ignored the cancelled context")
		}
	})

	t.Run("missing credentials are ErrCredentials", func(t *testing.T) {
		p, err := h.New(t, h.Fleet, h.Regions, Faults{NoCredentials: true})
		if err == nil {
			_, err = providers.Collect(context.Background(), p, providers.CollectOptions{})
		}
		if !errors.Is(err, providers.ErrCredentials) {
			t.Fatalf("got %v, want providers.ErrCredentials", err)
		}
	})
}

func mustNew(t *testing.T, h Harness, f Faults) providers.Provider {
	t.Helper()
	p, err := h.New(t, h.Fleet, h.Regions, f)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func scopeFor(t *testing.T, p providers.Provider, region string) providers.Scope {
	t.Helper()
	scopes, err := p.Scopes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range scopes {
		if s.Region == region {
			return s
		}
	}
	t.Fatalf("no scope for region %s in %v", region, scopes)
	return providers.Scope{}
}

func ids(instances []fleet.Instance) []string {
	out := make([]string, len(instances))
	for i, in := range instances {
		out[i] = in.ID
	}
	sort.Strings(out)
	return out
}
