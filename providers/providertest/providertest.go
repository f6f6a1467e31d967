// Package providertest is the conformance suite every provider runs: the
// core methods (GPU facts always set, empty scopes empty, throttling retried,
// one failing region reported without losing the others, missing credentials
// mapped to one sentinel error, cancellation and timeouts honoured) and every
// optional capability the provider has: utilization (coverage, partial GPUs),
// live prices (live → cache → embedded fallback), stop (idempotent,
// not-stoppable, not-found, permission dry run), doctor checks and partial
// scopes.
//
// The suite builds the fleets it needs from the harness's fleet and asks the
// harness for a provider over each, with faults injected: a cloud adapter's
// harness starts its simulator serving the fleet; providers/file and
// providers/fake read it directly. A harness that cannot inject a fault
// returns ErrUnsupported and the case is skipped; Run returns the skipped
// cases so an adapter's test can insist on none.
package providertest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/providers"
)

// ErrUnsupported is what a harness's New returns (wrapped or not) for a
// setup it cannot build, e.g. throttling for a provider with no backend.
var ErrUnsupported = errors.New("providertest: the harness cannot inject this")

// Faults are what the backend is told to do wrong.
type Faults struct {
	// ThrottleRate is the share of requests answered with a throttling error.
	ThrottleRate float64
	// FailRegions answer every request of these regions with a server error.
	FailRegions []string
	// FailMetricsRegions fail the utilization reads (the metrics service)
	// of these regions with a server error; listing still works.
	FailMetricsRegions []string
	// FailPrices fails every live price call with a server error.
	FailPrices bool
	// DenyList denies the permission to list instances in every region.
	DenyList bool
	// DenyStop denies the permission to stop instances.
	DenyStop bool
	// FailAccount adds a second account whose scopes cannot be listed (its
	// region listing is denied); the fleet stays in the first one.
	FailAccount bool
	// Latency is added to every request.
	Latency time.Duration
	// NoCredentials builds the provider without any credentials.
	NoCredentials bool
}

// Setup is what one provider under test is built over.
type Setup struct {
	// Fleet is what the backend serves.
	Fleet *fleet.Fleet
	// Regions are the regions to scan (and the backend's enabled regions).
	Regions []string
	// Faults are injected into the backend.
	Faults Faults
	// CacheDir is the price cache directory; empty means no cache.
	CacheDir string
	// Now is the provider's clock (not the backend's); zero means the
	// harness's Now.
	Now time.Time
}

// Harness connects the suite to one provider.
type Harness struct {
	// Provider is the cloud under test; the suite uses the fleet's instances
	// of this provider only.
	Provider fleet.Provider
	// Fleet is the base fleet. It must have instances in at least two of
	// Regions and none in at least one; at least one running instance with
	// two or more GPUs, running instances both with utilization and
	// without (for the utilization and doctor cases), and, for a provider
	// with live prices, prices of its types in the first busy region.
	Fleet *fleet.Fleet
	// Regions are the regions to scan.
	Regions []string
	// Now is the backend's clock: utilization windows the suite reads end
	// at Now truncated to the hour.
	Now time.Time
	// New returns a provider over s (starting a backend that serves
	// s.Fleet with s.Faults), or the error its constructor returned, or
	// ErrUnsupported. It is called for each provider a case needs; clean
	// up with t.Cleanup. Providers of one case with the same CacheDir must
	// share their cache: a harness whose cache is keyed by the backend's
	// address serves one case from one address.
	New func(t *testing.T, s Setup) (providers.Provider, error)
	// NotStoppable reports the instances the cloud refuses to stop (AWS:
	// one-time spot); nil means every instance can be stopped.
	NotStoppable func(fleet.Instance) bool
	// UnknownID is an instance ID the backend does not have, in the cloud's
	// format; empty derives one from a fleet ID.
	UnknownID string
	// PriceCache says the provider caches live prices under Setup.CacheDir
	// for a day or less.
	PriceCache bool
}

// Summary is what Run did not check.
type Summary struct {
	// Skipped are the cases skipped, each with the reason.
	Skipped []string
}

type suite struct {
	h        Harness
	want     map[string]fleet.Instance
	byRegion map[string]int
	empty    []string
	busy     []string
	window   fleet.TimeRange

	mu      sync.Mutex
	skipped []string
}

// Run runs the conformance suite and returns the cases it skipped.
func Run(t *testing.T, h Harness) Summary {
	t.Helper()
	s := &suite{h: h, want: map[string]fleet.Instance{}, byRegion: map[string]int{}}
	for _, in := range h.Fleet.Instances {
		if in.Provider == h.Provider {
			s.want[in.ID] = in
			s.byRegion[in.Region]++
		}
	}
	for _, r := range h.Regions {
		if s.byRegion[r] == 0 {
			s.empty = append(s.empty, r)
		} else {
			s.busy = append(s.busy, r)
		}
	}
	if len(s.empty) == 0 || len(s.busy) < 2 {
		t.Fatalf("providertest: the harness needs a region without instances and two with (regions %v)", h.Regions)
	}
	if h.Now.IsZero() {
		t.Fatal("providertest: the harness has no Now")
	}
	end := h.Now.UTC().Truncate(time.Hour)
	s.window = fleet.TimeRange{Start: end.Add(-7 * 24 * time.Hour), End: end}

	t.Run("inventory", s.inventory)
	t.Run("faults", s.faults)
	t.Run("credentials", s.credentials)
	t.Run("cancellation", s.cancellation)
	t.Run("partial scopes", s.partialScopes)
	t.Run("utilization", s.utilization)
	t.Run("prices", s.prices)
	t.Run("stop", s.stop)
	t.Run("doctor", s.doctor)
	return Summary{Skipped: s.skipped}
}

// skip records and skips the case.
func (s *suite) skip(t *testing.T, format string, args ...any) {
	t.Helper()
	msg := t.Name() + ": " + fmt.Sprintf(format, args...)
	s.mu.Lock()
	s.skipped = append(s.skipped, msg)
	s.mu.Unlock()
	t.Skip(msg)
}

// provider builds a provider over setup, skipping the case on ErrUnsupported.
func (s *suite) provider(t *testing.T, setup Setup) providers.Provider {
	t.Helper()
	if setup.Fleet == nil {
		setup.Fleet = s.h.Fleet
	}
	if setup.Regions == nil {
		setup.Regions = s.h.Regions
	}
	p, err := s.h.New(t, setup)
	if errors.Is(err, ErrUnsupported) {
		s.skip(t, "%v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func (s *suite) withFaults(t *testing.T, f Faults) providers.Provider {
	t.Helper()
	return s.provider(t, Setup{Faults: f})
}

func (s *suite) inventory(t *testing.T) {
	t.Run("lists every instance with its GPU facts", func(t *testing.T) {
		p := s.withFaults(t, Faults{})
		if p.Name() != s.h.Provider {
			t.Errorf("Name() = %q, want %q", p.Name(), s.h.Provider)
		}
		res, err := providers.Collect(context.Background(), p, providers.CollectOptions{SkipPrices: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Failures) > 0 {
			t.Fatalf("failures: %v", res.Failures)
		}
		got := ids(res.Fleet.Instances)
		if len(got) != len(s.want) {
			t.Fatalf("listed %d instances, the backend has %d", len(got), len(s.want))
		}
		for _, in := range res.Fleet.Instances {
			w, ok := s.want[in.ID]
			if !ok {
				t.Errorf("%s: not in the backend's fleet", in.ID)
				continue
			}
			if in.GPU.Model == "" || in.GPU.Count <= 0 {
				t.Errorf("%s: GPU model %q count %v: both must be set", in.ID, in.GPU.Model, in.GPU.Count)
			}
			if in.Provider != s.h.Provider || in.Region != w.Region || in.InstanceType != w.InstanceType || in.State != w.State || in.Lifecycle != w.Lifecycle {
				t.Errorf("%s: %s %s %s %s %s, want %s %s %s %s %s", in.ID, in.Provider, in.Region, in.InstanceType, in.State, in.Lifecycle,
					s.h.Provider, w.Region, w.InstanceType, w.State, w.Lifecycle)
			}
		}
	})

	t.Run("every scope is of the provider and a listed region", func(t *testing.T) {
		p := s.withFaults(t, Faults{})
		scopes, err := p.Scopes(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, sc := range scopes {
			if sc.Provider != s.h.Provider || sc.Account == "" {
				t.Errorf("scope %+v: provider and account must be set", sc)
			}
			if sc.Region != "" && !slices.Contains(s.h.Regions, sc.Region) {
				t.Errorf("scope %s: region not asked for (%v)", sc, s.h.Regions)
			}
			if seen[sc.String()] {
				t.Errorf("scope %s listed twice", sc)
			}
			seen[sc.String()] = true
		}
	})

	t.Run("an empty scope is an empty result", func(t *testing.T) {
		p := s.withFaults(t, Faults{})
		scope := scopeFor(t, p, s.empty[0])
		got, err := p.ListGPUInstances(context.Background(), scope)
		if err != nil || len(got) != 0 {
			t.Fatalf("got %d instances, %v; want none and no error", len(got), err)
		}
	})
}

func (s *suite) faults(t *testing.T) {
	t.Run("throttling is retried", func(t *testing.T) {
		p := s.withFaults(t, Faults{ThrottleRate: 0.3})
		res, err := providers.Collect(context.Background(), p, providers.CollectOptions{Concurrency: 2, SkipPrices: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Failures) > 0 || len(res.Fleet.Instances) != len(s.want) {
			t.Fatalf("with 30 %% throttling: %d instances, failures %v", len(res.Fleet.Instances), res.Failures)
		}
	})

	t.Run("one failing region does not lose the others", func(t *testing.T) {
		p := s.withFaults(t, Faults{FailRegions: []string{s.busy[0]}})
		res, err := providers.Collect(context.Background(), p, providers.CollectOptions{SkipPrices: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Failures) != 1 || res.Failures[0].Scope.Region != s.busy[0] || res.Failures[0].Metrics {
			t.Fatalf("failures %v, want exactly a listing failure of %s", res.Failures, s.busy[0])
		}
		if n := len(res.Fleet.Instances); n != len(s.want)-s.byRegion[s.busy[0]] {
			t.Fatalf("%d instances from the other regions, want %d", n, len(s.want)-s.byRegion[s.busy[0]])
		}
	})
}

func (s *suite) credentials(t *testing.T) {
	t.Run("missing credentials are ErrCredentials", func(t *testing.T) {
		p, err := s.h.New(t, Setup{Fleet: s.h.Fleet, Regions: s.h.Regions, Faults: Faults{NoCredentials: true}})
		if errors.Is(err, ErrUnsupported) {
			s.skip(t, "%v", err)
		}
		if err == nil {
			_, err = providers.Collect(context.Background(), p, providers.CollectOptions{SkipPrices: true})
		}
		if !errors.Is(err, providers.ErrCredentials) {
			t.Fatalf("got %v, want providers.ErrCredentials", err)
		}
	})

	t.Run("a denied listing is ErrPermission", func(t *testing.T) {
		p := s.withFaults(t, Faults{DenyList: true})
		res, err := providers.Collect(context.Background(), p, providers.CollectOptions{SkipPrices: true})
		if err != nil {
			if !errors.Is(err, providers.ErrPermission) {
				t.Fatalf("got %v, want providers.ErrPermission", err)
			}
			return
		}
		if len(res.Failures) == 0 {
			t.Fatal("the denied listing reported no failure")
		}
		for _, f := range res.Failures {
			if !errors.Is(f, providers.ErrPermission) {
				t.Errorf("%v: want providers.ErrPermission", f)
			}
		}
	})
}

// slowCall runs call with ctx and returns its error, failing the test when
// it takes more than 30 s.
func slowCall(t *testing.T, ctx context.Context, call func(ctx context.Context) error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- call(ctx) }()
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("the call ignored its context")
		return nil
	}
}

func (s *suite) cancellation(t *testing.T) {
	slow := Faults{Latency: 2 * time.Second}
	t.Run("a cancelled listing returns context.Canceled", func(t *testing.T) {
		p := s.withFaults(t, slow)
		scope := scopeFor(t, p, s.busy[0])
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		err := slowCall(t, ctx, func(ctx context.Context) error { _, err := p.ListGPUInstances(ctx, scope); return err })
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v, want context.Canceled", err)
		}
	})

	t.Run("a listing past its deadline returns context.DeadlineExceeded", func(t *testing.T) {
		// The scope comes from another provider, so that nothing the
		// slow one learnt while finding it (a listing it keeps for its
		// region scopes, a machine type) can answer the listing.
		scope := scopeFor(t, s.withFaults(t, Faults{}), s.busy[0])
		p := s.withFaults(t, slow)
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		start := time.Now()
		err := slowCall(t, ctx, func(ctx context.Context) error { _, err := p.ListGPUInstances(ctx, scope); return err })
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("got %v, want context.DeadlineExceeded", err)
		}
		// Well before the slow server's answer: the deadline, not the
		// answer, ended the call.
		if d := time.Since(start); d >= slow.Latency/2 {
			t.Errorf("the deadline of 100 ms ended the call after %s (the server answers after %s)", d, slow.Latency)
		}
	})

	t.Run("a cancelled utilization read returns context.Canceled", func(t *testing.T) {
		p := s.withFaults(t, slow)
		ur, ok := p.(providers.UtilizationReader)
		if !ok {
			s.skip(t, "no utilization reader")
		}
		scope := scopeFor(t, p, s.busy[0])
		instances := s.regionInstances(scope.Region)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		err := slowCall(t, ctx, func(ctx context.Context) error {
			_, err := ur.ReadUtilization(ctx, scope, instances, s.window)
			return err
		})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v, want context.Canceled", err)
		}
	})

	t.Run("a cancelled scan returns context.Canceled", func(t *testing.T) {
		p := s.withFaults(t, slow)
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(50*time.Millisecond, cancel)
		err := slowCall(t, ctx, func(ctx context.Context) error {
			_, err := providers.Collect(ctx, p, providers.CollectOptions{Window: s.window})
			return err
		})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v, want context.Canceled", err)
		}
	})
}

func (s *suite) partialScopes(t *testing.T) {
	t.Run("an account that cannot be listed keeps the others", func(t *testing.T) {
		p := s.withFaults(t, Faults{FailAccount: true})
		if _, ok := p.(providers.PartialScoper); !ok {
			t.Fatal("the harness adds a failing account but the provider is no PartialScoper")
		}
		res, err := providers.Collect(context.Background(), p, providers.CollectOptions{SkipPrices: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Failures) != 1 || res.Failures[0].Scope.Region != "" || res.Failures[0].Scope.Account == "" {
			t.Fatalf("failures %v, want one account (no region)", res.Failures)
		}
		for _, in := range res.Fleet.Instances {
			if in.Account == res.Failures[0].Scope.Account {
				t.Errorf("%s is of the failed account", in.ID)
			}
		}
		if len(res.Fleet.Instances) != len(s.want) {
			t.Errorf("%d instances, want the working account's %d", len(res.Fleet.Instances), len(s.want))
		}
	})
}

// regionInstances are the base fleet's instances of the provider in region,
// as listed (without utilization).
func (s *suite) regionInstances(region string) []fleet.Instance {
	var out []fleet.Instance
	for _, in := range s.h.Fleet.Instances {
		if in.Provider == s.h.Provider && in.Region == region {
			in.Utilization = nil
			out = append(out, in)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// capability builds a provider over setup and returns it with its optional
// capability C; a provider without C skips the case, saying what it lacks.
func capability[C any](s *suite, t *testing.T, setup Setup, lacks string) (providers.Provider, C) {
	t.Helper()
	p := s.provider(t, setup)
	c, ok := p.(C)
	if !ok {
		s.skip(t, "%s", lacks)
	}
	return p, c
}

// utilReader builds a provider over setup and returns it as a utilization reader.
func (s *suite) utilReader(t *testing.T, setup Setup) (providers.Provider, providers.UtilizationReader) {
	t.Helper()
	return capability[providers.UtilizationReader](s, t, setup, "no utilization reader")
}

// readOne lists scope and reads the utilization of instance id over window.
func readOne(t *testing.T, p providers.Provider, ur providers.UtilizationReader, region, id string, window fleet.TimeRange) (*fleet.Utilization, []string) {
	t.Helper()
	scope := scopeFor(t, p, region)
	listed, err := p.ListGPUInstances(context.Background(), scope)
	if err != nil {
		t.Fatal(err)
	}
	notes, err := ur.ReadUtilization(context.Background(), scope, listed, window)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range listed {
		if in.ID == id {
			return in.Utilization, notes
		}
	}
	t.Fatalf("%s not listed in %s", id, scope)
	return nil, nil
}

func (s *suite) utilization(t *testing.T) {
	t.Run("instances with metrics are read, the others stay unknown and are named", func(t *testing.T) {
		p, _ := s.utilReader(t, Setup{})
		res, err := providers.Collect(context.Background(), p, providers.CollectOptions{Window: s.window, SkipPrices: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Failures) > 0 {
			t.Fatalf("failures: %v", res.Failures)
		}
		notes := strings.Join(res.Notes, "\n")
		var read, unknown int
		for _, in := range res.Fleet.Instances {
			w := s.want[in.ID]
			switch {
			case w.State == fleet.Stopped:
			case w.Utilization == nil:
				unknown++
				if in.Utilization != nil {
					t.Errorf("%s has no metrics in the backend but utilization %+v", in.ID, in.Utilization)
				}
				if !strings.Contains(notes, in.ID) {
					t.Errorf("%s has no metrics and no note names it", in.ID)
				}
			default:
				read++
				if in.Utilization == nil {
					t.Errorf("%s: utilization not read", in.ID)
					continue
				}
				if wa, ga, ok := avgGPU(w.Utilization), avgGPU(in.Utilization), w.Utilization.GPU != nil; ok && math.Abs(wa-ga) > math.Max(3, wa/10) {
					t.Errorf("%s: mean GPU utilization %.1f, the backend has %.1f", in.ID, ga, wa)
				}
			}
		}
		if read == 0 || unknown == 0 {
			t.Fatalf("the harness fleet needs running instances with and without utilization (%d, %d)", read, unknown)
		}
	})

	t.Run("hours without data stay absent", func(t *testing.T) {
		in := s.multiGPU(t)
		window := fleet.TimeRange{Start: s.window.End.Add(-48 * time.Hour), End: s.window.End}
		fl := s.withSamples(t, in.ID, window, func(h int) fleet.PerGPU {
			if h < 24 {
				return nil // the first day has no data
			}
			return constGPUs(int(in.GPU.Count), 60)
		})
		// It ran the whole window (its host CPU reports every hour); the
		// GPU agent was silent the first day.
		for i := range fl.Instances {
			if fl.Instances[i].ID != in.ID {
				continue
			}
			u := fl.Instances[i].Utilization
			var all []fleet.Sample
			for h := 0; h < 48; h++ {
				cpu := 20.0
				smp := fleet.Sample{Time: window.Start.Add(time.Duration(h) * time.Hour), CPU: &cpu}
				if h >= 24 {
					smp.GPU = constGPUs(int(in.GPU.Count), 60)
				}
				all = append(all, smp)
			}
			u.Samples = all
		}
		p, ur := s.utilReader(t, Setup{Fleet: fl})
		u, _ := readOne(t, p, ur, in.Region, in.ID, window)
		if u == nil {
			t.Fatal("utilization not read")
		}
		if cov := coverage(u, window); cov < 0.4 || cov > 0.6 {
			t.Errorf("coverage %.2f of a window with data in its second half only, want about 0.5", cov)
		}
		if a := avgGPU(u); math.Abs(a-60) > 6 {
			t.Errorf("mean GPU utilization %.1f, want about 60: hours without data count as values", a)
		}
	})

	t.Run("fewer GPUs reporting than the type has do not look idle", func(t *testing.T) {
		in := s.multiGPU(t)
		n := int(in.GPU.Count)
		window := fleet.TimeRange{Start: s.window.End.Add(-48 * time.Hour), End: s.window.End}
		fl := s.withSamples(t, in.ID, window, func(int) fleet.PerGPU { return constGPUs(n/2, 70) })
		p, ur := s.utilReader(t, Setup{Fleet: fl})
		u, _ := readOne(t, p, ur, in.Region, in.ID, window)
		if u == nil {
			return // unknown is never idle
		}
		if len(u.Samples) == 0 && u.GPU != nil && u.GPU.Avg < 35 {
			t.Errorf("GPU avg %.1f of %d GPUs of which %d report 70 %%: the silent ones count as idle", u.GPU.Avg, n, n/2)
		}
		for _, smp := range u.Samples {
			if len(smp.GPU) > n/2 {
				t.Errorf("sample at %s has %d GPU values, %d GPUs report: the silent ones were filled in", smp.Time, len(smp.GPU), n/2)
				break
			}
			if slices.ContainsFunc(smp.GPU, func(v float64) bool { return v < 35 }) {
				t.Errorf("sample at %s: %v: a GPU reporting 70 %% reads as idle", smp.Time, smp.GPU)
				break
			}
		}
		// The coverage says how much of the machine reported: half its GPUs
		// (the cloud adapters set it; otherwise the engine reads it from the
		// samples, each value one GPU).
		cov := u.Coverage
		if cov == nil {
			cov = fleet.SampleCoverage(u.Samples, in.GPU.Count)
		}
		if want := float64(n/2) / float64(n); cov == nil || math.Abs(*cov-want) > 0.1 {
			t.Errorf("utilization coverage %v with %d of %d GPUs reporting, want about %.2f", cov, n/2, n, want)
		}
	})

	t.Run("a failing metrics source keeps the instances, utilization unknown", func(t *testing.T) {
		region := s.busy[0]
		p, _ := s.utilReader(t, Setup{Faults: Faults{FailMetricsRegions: []string{region}}})
		res, err := providers.Collect(context.Background(), p, providers.CollectOptions{Window: s.window, SkipPrices: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Failures) != 1 || !res.Failures[0].Metrics || res.Failures[0].Scope.Region != region || res.Failures[0].Source == "" {
			t.Fatalf("failures %v, want one metrics failure of %s", res.Failures, region)
		}
		if got := len(res.Failures[0].Instances); got != s.byRegion[region] {
			t.Errorf("the failure names %d instances, %s has %d", got, region, s.byRegion[region])
		}
		if len(res.Fleet.Instances) != len(s.want) {
			t.Fatalf("%d instances, want all %d", len(res.Fleet.Instances), len(s.want))
		}
		for _, in := range res.Fleet.Instances {
			if in.Region == region && in.Utilization != nil {
				t.Errorf("%s of the failed region has utilization", in.ID)
			}
			if in.Region != region && in.Utilization == nil && s.want[in.ID].Utilization != nil && in.State != fleet.Stopped {
				t.Errorf("%s of a healthy region lost its utilization", in.ID)
			}
		}
	})
}

// multiGPU is a running instance of the base fleet with two or more GPUs.
func (s *suite) multiGPU(t *testing.T) fleet.Instance {
	t.Helper()
	ids := make([]string, 0, len(s.want))
	for id := range s.want {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if in := s.want[id]; in.State == fleet.Running && in.GPU.Count >= 2 {
			return in
		}
	}
	t.Fatal("providertest: the harness fleet has no running instance with two or more GPUs")
	return fleet.Instance{}
}

// withSamples is a copy of the base fleet where instance id has hourly
// samples over window from gpus(hour index); nil means no sample that hour.
func (s *suite) withSamples(t *testing.T, id string, window fleet.TimeRange, gpus func(h int) fleet.PerGPU) *fleet.Fleet {
	t.Helper()
	fl := Copy(t, s.h.Fleet)
	for i := range fl.Instances {
		in := &fl.Instances[i]
		if in.ID != id || in.Provider != s.h.Provider {
			continue
		}
		w := window
		u := &fleet.Utilization{Window: &w}
		for h := 0; window.Start.Add(time.Duration(h) * time.Hour).Before(window.End); h++ {
			if g := gpus(h); g != nil {
				u.Samples = append(u.Samples, fleet.Sample{Time: window.Start.Add(time.Duration(h) * time.Hour), GPU: g})
			}
		}
		in.Utilization = u
	}
	return fl
}

func constGPUs(n int, v float64) fleet.PerGPU {
	out := make(fleet.PerGPU, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// avgGPU is the mean GPU utilization: the stats' average, else the mean of
// the samples' per-GPU means.
func avgGPU(u *fleet.Utilization) float64 {
	if u == nil {
		return 0
	}
	if u.GPU != nil && len(u.Samples) == 0 {
		return u.GPU.Avg
	}
	var sum float64
	var n int
	for _, smp := range u.Samples {
		if len(smp.GPU) == 0 {
			continue
		}
		var m float64
		for _, v := range smp.GPU {
			m += v
		}
		sum += m / float64(len(smp.GPU))
		n++
	}
	if n == 0 {
		if u.GPU != nil {
			return u.GPU.Avg
		}
		return 0
	}
	return sum / float64(n)
}

// coverage is the utilization's coverage, else the share of the window's
// hours that have a sample.
func coverage(u *fleet.Utilization, window fleet.TimeRange) float64 {
	if u.Coverage != nil {
		return *u.Coverage
	}
	hours := map[int64]bool{}
	for _, smp := range u.Samples {
		if len(smp.GPU) > 0 && !smp.Time.Before(window.Start) && smp.Time.Before(window.End) {
			hours[smp.Time.Unix()/3600] = true
		}
	}
	return float64(len(hours)) / window.Hours()
}

func (s *suite) priceReader(t *testing.T, setup Setup) (providers.Provider, providers.PriceReader) {
	t.Helper()
	return capability[providers.PriceReader](s, t, setup, "no live prices")
}

// regionTypes are the instance types of the base fleet in region.
func (s *suite) regionTypes(region string) []string {
	var out []string
	for _, in := range s.regionInstances(region) {
		if !slices.Contains(out, in.InstanceType) {
			out = append(out, in.InstanceType)
		}
	}
	sort.Strings(out)
	return out
}

func (s *suite) prices(t *testing.T) {
	region := s.busy[0]
	types := s.regionTypes(region)
	checkPrices := func(t *testing.T, prices []pricing.Price) {
		t.Helper()
		if len(prices) == 0 {
			t.Fatalf("no prices for %v in %s", types, region)
		}
		for _, pr := range prices {
			switch {
			case pr.Provider != s.h.Provider || !strings.EqualFold(pr.Region, region):
				t.Errorf("price %+v: not of %s %s", pr, s.h.Provider, region)
			case pr.Resource != "" && !slices.Contains([]string{pricing.ResourceVCPU, pricing.ResourceMemory, pricing.ResourceGPU}, pr.Resource):
				t.Errorf("price of %s %s: not a resource a commitment buys", pr.InstanceType, pr.Resource)
			case pr.Resource == "" && !slices.ContainsFunc(types, func(ty string) bool { return strings.EqualFold(ty, pr.InstanceType) }):
				t.Errorf("price of %s, which was not asked for", pr.InstanceType)
			case !pr.Hourly.IsPositive() || pr.Currency == "" || pr.Source == "" || pr.AsOf == "" || pr.Option == "":
				t.Errorf("price %+v: hourly > 0, currency, option, source and as-of date must be set", pr)
			}
		}
	}

	t.Run("live prices for the scope's types", func(t *testing.T) {
		p, pr := s.priceReader(t, Setup{})
		got, err := pr.ReadPrices(context.Background(), scopeFor(t, p, region), types)
		if err != nil {
			t.Fatal(err)
		}
		checkPrices(t, got)
	})

	t.Run("failing price APIs leave the embedded catalog", func(t *testing.T) {
		p, pr := s.priceReader(t, Setup{Faults: Faults{FailPrices: true}})
		if got, err := pr.ReadPrices(context.Background(), scopeFor(t, p, region), types); err == nil && len(got) > 0 {
			t.Fatalf("with failing price APIs and no cache: %d prices", len(got))
		}
		res, err := providers.Collect(context.Background(), p, providers.CollectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Failures) > 0 || len(res.Fleet.Instances) != len(s.want) || len(res.Prices) > 0 {
			t.Fatalf("a price failure lost a scope: %d instances, %d prices, failures %v", len(res.Fleet.Instances), len(res.Prices), res.Failures)
		}
		if !strings.Contains(strings.Join(res.Notes, "\n"), "live prices unavailable") {
			t.Errorf("no note says the live prices are unavailable: %q", res.Notes)
		}
	})

	t.Run("the cache serves when the price APIs fail", func(t *testing.T) {
		if !s.h.PriceCache {
			s.skip(t, "the provider has no price cache")
		}
		dir := t.TempDir()
		p, pr := s.priceReader(t, Setup{CacheDir: dir})
		live, err := pr.ReadPrices(context.Background(), scopeFor(t, p, region), types)
		if err != nil {
			t.Fatal(err)
		}
		p, pr = s.priceReader(t, Setup{CacheDir: dir, Faults: Faults{FailPrices: true}})
		cached, err := pr.ReadPrices(context.Background(), scopeFor(t, p, region), types)
		if err != nil {
			t.Fatalf("a fresh cache and failing APIs: %v", err)
		}
		checkPrices(t, cached)
		if len(cached) != len(live) {
			t.Errorf("%d prices from the cache, %d live", len(cached), len(live))
		}
		// Past its TTL the cache still beats nothing, and says so.
		p, pr = s.priceReader(t, Setup{CacheDir: dir, Faults: Faults{FailPrices: true}, Now: s.h.Now.Add(30 * 24 * time.Hour)})
		stale, err := pr.ReadPrices(context.Background(), scopeFor(t, p, region), types)
		if err != nil {
			t.Fatalf("an expired cache and failing APIs: %v", err)
		}
		checkPrices(t, stale)
		for _, x := range stale {
			if !strings.Contains(x.Source, "(cached ") {
				t.Errorf("expired cached price %s %s: source %q does not say it is cached", x.InstanceType, x.Option, x.Source)
				break
			}
		}
	})
}

func (s *suite) stopper(t *testing.T, setup Setup) (providers.Provider, providers.Stopper) {
	t.Helper()
	return capability[providers.Stopper](s, t, setup, "no stopper")
}

// ListedState is the state instance id is listed with in scope; the test
// fails when p does not list it.
func ListedState(t *testing.T, p providers.Provider, scope providers.Scope, id string) fleet.State {
	t.Helper()
	listed, err := p.ListGPUInstances(context.Background(), scope)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range listed {
		if in.ID == id {
			return in.State
		}
	}
	t.Fatalf("%s not listed in %s", id, scope)
	return ""
}

// running picks a running instance of the base fleet for which pick is true.
func (s *suite) running(pick func(fleet.Instance) bool) (fleet.Instance, bool) {
	ids := make([]string, 0, len(s.want))
	for id := range s.want {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if in := s.want[id]; in.State == fleet.Running && pick(in) {
			return in, true
		}
	}
	return fleet.Instance{}, false
}

func (s *suite) stop(t *testing.T) {
	stoppable := func(in fleet.Instance) bool { return s.h.NotStoppable == nil || !s.h.NotStoppable(in) }

	t.Run("a dry run changes nothing, a stop stops, a second stop is a no-op", func(t *testing.T) {
		p, st := s.stopper(t, Setup{})
		in, ok := s.running(stoppable)
		if !ok {
			t.Fatal("providertest: the harness fleet has no running stoppable instance")
		}
		scope := scopeFor(t, p, in.Region)
		ctx := context.Background()
		res, err := st.Stop(ctx, scope, in.ID, true)
		if err != nil || res.AlreadyStopped {
			t.Fatalf("dry run = %+v, %v", res, err)
		}
		if got := ListedState(t, p, scope, in.ID); got != fleet.Running {
			t.Fatalf("listed %s after the dry run", got)
		}
		res, err = st.Stop(ctx, scope, in.ID, false)
		if err != nil || res.AlreadyStopped || res.PreviousState == "" || res.CurrentState == "" {
			t.Fatalf("stop = %+v, %v", res, err)
		}
		if got := ListedState(t, p, scope, in.ID); got != fleet.Stopped {
			t.Fatalf("listed %s after the stop", got)
		}
		res, err = st.Stop(ctx, scope, in.ID, false)
		if err != nil || !res.AlreadyStopped {
			t.Fatalf("second stop = %+v, %v; want AlreadyStopped", res, err)
		}
	})

	t.Run("an instance the cloud cannot stop is ErrNotStoppable and keeps running", func(t *testing.T) {
		if s.h.NotStoppable == nil {
			s.skip(t, "every instance can be stopped")
		}
		p, st := s.stopper(t, Setup{})
		in, ok := s.running(s.h.NotStoppable)
		if !ok {
			t.Fatal("providertest: the harness fleet has no running instance that cannot be stopped")
		}
		scope := scopeFor(t, p, in.Region)
		if _, err := st.Stop(context.Background(), scope, in.ID, false); !errors.Is(err, providers.ErrNotStoppable) {
			t.Errorf("got %v, want providers.ErrNotStoppable", err)
		}
		if got := ListedState(t, p, scope, in.ID); got != fleet.Running {
			t.Errorf("listed %s after the refused stop", got)
		}
	})

	t.Run("an unknown instance is ErrNotFound", func(t *testing.T) {
		p, st := s.stopper(t, Setup{})
		id := s.unknownID()
		for _, dry := range []bool{true, false} {
			if _, err := st.Stop(context.Background(), scopeFor(t, p, s.busy[0]), id, dry); !errors.Is(err, providers.ErrNotFound) {
				t.Errorf("%s (dry run %v): got %v, want providers.ErrNotFound", id, dry, err)
			}
		}
	})

	t.Run("a dry run without the permission is ErrPermission", func(t *testing.T) {
		p, st := s.stopper(t, Setup{Faults: Faults{DenyStop: true}})
		in, _ := s.running(stoppable)
		scope := scopeFor(t, p, in.Region)
		for _, dry := range []bool{true, false} {
			if _, err := st.Stop(context.Background(), scope, in.ID, dry); !errors.Is(err, providers.ErrPermission) {
				t.Errorf("dry run %v: got %v, want providers.ErrPermission", dry, err)
			}
		}
		if got := ListedState(t, p, scope, in.ID); got != fleet.Running {
			t.Errorf("listed %s after the denied stop", got)
		}
	})
}

// unknownID is the harness's, else a fleet ID with its end changed.
func (s *suite) unknownID() string {
	if s.h.UnknownID != "" {
		return s.h.UnknownID
	}
	for id := range s.want {
		for _, end := range []string{"dead", "beef", "0000"} {
			if len(id) > len(end) {
				c := id[:len(id)-len(end)] + end
				if _, taken := s.want[c]; !taken {
					return c
				}
			}
		}
	}
	return "does-not-exist"
}

func (s *suite) doctorOf(t *testing.T, setup Setup) (providers.Provider, providers.Doctor) {
	t.Helper()
	return capability[providers.Doctor](s, t, setup, "no doctor")
}

var statuses = []providers.CheckStatus{providers.CheckOK, providers.CheckMissing, providers.CheckWarn, providers.CheckError}

func checkShape(t *testing.T, scope providers.Scope, cs []providers.Check) {
	t.Helper()
	if len(cs) == 0 {
		t.Errorf("%s: no checks", scope)
	}
	for _, c := range cs {
		if c.Name == "" || !slices.Contains(statuses, c.Status) || (c.Status != providers.CheckOK && c.Detail == "") {
			t.Errorf("%s: check %+v: a name, a known status and, unless ok, a detail", scope, c)
		}
	}
}

func (s *suite) doctor(t *testing.T) {
	t.Run("every permission is ok with full access", func(t *testing.T) {
		p, d := s.doctorOf(t, Setup{})
		regional := scopeFor(t, p, s.busy[0])
		account := regional
		account.Region = ""
		for _, sc := range []providers.Scope{account, regional} {
			cs := d.CheckPermissions(context.Background(), sc)
			checkShape(t, sc, cs)
			for _, c := range cs {
				if c.Status != providers.CheckOK {
					t.Errorf("%s: %s %s: %s %s", sc, c.Name, c.Action, c.Status, c.Detail)
				}
			}
		}
	})

	t.Run("a denied listing is a missing permission", func(t *testing.T) {
		p, d := s.doctorOf(t, Setup{Faults: Faults{DenyList: true}})
		sc := scopeFor(t, p, s.busy[0])
		cs := d.CheckPermissions(context.Background(), sc)
		checkShape(t, sc, cs)
		if !slices.ContainsFunc(cs, func(c providers.Check) bool { return c.Status == providers.CheckMissing }) {
			t.Errorf("%s: no missing permission among %+v", sc, cs)
		}
	})

	t.Run("coverage warns about running instances without metrics", func(t *testing.T) {
		p, d := s.doctorOf(t, Setup{})
		for _, region := range s.busy {
			sc := scopeFor(t, p, region)
			without := 0
			for _, in := range s.want {
				if in.Region == region && in.State != fleet.Stopped && in.Utilization == nil {
					without++
				}
			}
			cs := d.CheckCoverage(context.Background(), sc)
			checkShape(t, sc, cs)
			warned := slices.ContainsFunc(cs, func(c providers.Check) bool { return c.Status == providers.CheckWarn })
			if warned != (without > 0) {
				t.Errorf("%s: %d running instances without metrics, checks %+v", sc, without, cs)
			}
		}
	})
}

// Copy is a deep copy of fl, for harnesses and cases that change a fleet.
func Copy(t testing.TB, fl *fleet.Fleet) *fleet.Fleet {
	t.Helper()
	data, err := json.Marshal(fl)
	if err != nil {
		t.Fatal(err)
	}
	var out fleet.Fleet
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return &out
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
