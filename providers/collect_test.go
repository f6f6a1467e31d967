package providers

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
)

// fakeCloud is a provider whose scopes fail as told: listing, utilization
// (after filling part of it, as a paged read that dies half-way does) or
// prices.
type fakeCloud struct {
	scopes    []Scope
	instances map[string][]fleet.Instance // by region
	listErr   map[string]error
	utilErr   map[string]error
	priceErr  map[string]error
}

func (f *fakeCloud) Name() fleet.Provider                    { return fleet.AWS }
func (f *fakeCloud) MetricsSource() string                   { return "fakewatch" }
func (f *fakeCloud) Scopes(context.Context) ([]Scope, error) { return f.scopes, nil }
func (f *fakeCloud) ListGPUInstances(_ context.Context, s Scope) ([]fleet.Instance, error) {
	if err := f.listErr[s.Region]; err != nil {
		return nil, err
	}
	return append([]fleet.Instance(nil), f.instances[s.Region]...), nil
}

func (f *fakeCloud) ReadUtilization(_ context.Context, s Scope, in []fleet.Instance, _ fleet.TimeRange) ([]string, error) {
	for i := range in {
		in[i].Utilization = &fleet.Utilization{GPU: &fleet.Stats{Avg: 1, P95: 1, Max: 1}}
		if err := f.utilErr[s.Region]; err != nil && i == len(in)/2 {
			return []string{"half-way"}, err
		}
	}
	return []string{s.Region + " read"}, nil
}

func (f *fakeCloud) ReadPrices(_ context.Context, s Scope, _ []string) ([]pricing.Price, error) {
	if err := f.priceErr[s.Region]; err != nil {
		return nil, err
	}
	return []pricing.Price{{Provider: fleet.AWS, Region: s.Region}}, nil
}

// randomCloud builds a cloud of n regions, each failing at random in one way
// or none.
func randomCloud(rng *rand.Rand, n int) *fakeCloud {
	f := &fakeCloud{instances: map[string][]fleet.Instance{}, listErr: map[string]error{}, utilErr: map[string]error{}, priceErr: map[string]error{}}
	for r := range n {
		region := fmt.Sprintf("region-%02d", r)
		f.scopes = append(f.scopes, Scope{Provider: fleet.AWS, Account: "111122223333", Region: region})
		for i := range rng.Intn(5) {
			f.instances[region] = append(f.instances[region], fleet.Instance{ID: fmt.Sprintf("i-%02d-%d", r, i), Provider: fleet.AWS, Region: region, InstanceType: "g5.xlarge"})
		}
		switch rng.Intn(5) {
		case 0:
			f.listErr[region] = fmt.Errorf("list %s: %w", region, ErrPermission)
		case 1:
			f.utilErr[region] = fmt.Errorf("GetMetricData: %w", ErrThrottled)
		case 2:
			f.priceErr[region] = errors.New("pricing down")
		}
	}
	return f
}

// TestCollectKeepsWhatWorked: over random clouds, a scope whose listing
// fails is a failure with its instances missing; one whose utilization fails
// keeps every instance with no utilization at all (not the half read) and is
// a metrics failure naming them; a price failure is a note; the rest is whole.
func TestCollectKeepsWhatWorked(t *testing.T) {
	rng := rand.New(rand.NewSource(10))
	end := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	window := fleet.TimeRange{Start: end.Add(-24 * time.Hour), End: end}
	for iter := range 200 {
		cloud := randomCloud(rng, 1+rng.Intn(8))
		var mu sync.Mutex
		progress := map[string]error{}
		res, err := Collect(context.Background(), cloud, CollectOptions{Window: window, Concurrency: 1 + rng.Intn(4), Progress: func(s Scope, _ int, err error) {
			mu.Lock()
			progress[s.Region] = err
			mu.Unlock()
		}})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]fleet.Instance{}
		for _, in := range res.Fleet.Instances {
			got[in.ID] = in
		}
		failures := map[string]*ScopeError{}
		for _, f := range res.Failures {
			failures[f.Scope.Region] = f
		}
		for _, sc := range cloud.scopes {
			r := sc.Region
			insts := cloud.instances[r]
			f := failures[r]
			switch {
			case cloud.listErr[r] != nil:
				if f == nil || f.Metrics || !errors.Is(f, ErrPermission) {
					t.Fatalf("iter %d %s: listing failed, failure %+v", iter, r, f)
				}
				for _, in := range insts {
					if _, ok := got[in.ID]; ok {
						t.Fatalf("iter %d: %s of an unlisted scope is in the fleet", iter, in.ID)
					}
				}
			case cloud.utilErr[r] != nil && len(insts) > 0:
				if f == nil || !f.Metrics || f.Source != "fakewatch" || !errors.Is(f, ErrThrottled) || len(f.Instances) != len(insts) {
					t.Fatalf("iter %d %s: utilization failed, failure %+v", iter, r, f)
				}
				if !sort.StringsAreSorted(f.Instances) {
					t.Errorf("instances not sorted: %v", f.Instances)
				}
				for _, in := range insts {
					g, ok := got[in.ID]
					if !ok {
						t.Fatalf("iter %d: %s was thrown away with its metrics", iter, in.ID)
					}
					if g.Utilization != nil {
						t.Fatalf("iter %d: %s keeps a half-read utilization", iter, in.ID)
					}
				}
				if progress[r] == nil {
					t.Errorf("iter %d %s: progress not told of the metrics failure", iter, r)
				}
			default:
				if f != nil {
					t.Fatalf("iter %d %s: unexpected failure %v", iter, r, f)
				}
				for _, in := range insts {
					if g, ok := got[in.ID]; !ok || g.Utilization == nil {
						t.Fatalf("iter %d: %s of a healthy scope: %+v", iter, in.ID, g)
					}
				}
			}
		}
		if len(res.Failures) != len(failures) {
			t.Fatalf("two failures for one scope: %v", res.Failures)
		}
	}
}

func TestScopeErrorText(t *testing.T) {
	sc := Scope{Provider: fleet.AWS, Account: "1", Region: "us-east-1"}
	for _, tc := range []struct {
		err  *ScopeError
		want string
	}{
		{&ScopeError{Scope: sc, Err: errors.New("boom")}, "aws:1/us-east-1: boom"},
		{&ScopeError{Scope: sc, Metrics: true, Source: "cloudwatch", Err: ErrPermission}, "aws:1/us-east-1: cloudwatch: permission denied"},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("%q, want %q", got, tc.want)
		}
	}
	if got := MetricsSourceName(&fakeCloud{}); got != "fakewatch" {
		t.Errorf("source name %q", got)
	}
}

// partialCloud lists one account and fails the other.
type partialCloud struct{ *fakeCloud }

func (p partialCloud) PartialScopes(ctx context.Context) ([]Scope, []*ScopeError, error) {
	s, _ := p.Scopes(ctx)
	return s, []*ScopeError{{Scope: Scope{Provider: fleet.AWS, Account: "999"}, Err: ErrPermission}}, nil
}

func TestCollectKeepsAccountsThatListed(t *testing.T) {
	cloud := &fakeCloud{scopes: []Scope{{Provider: fleet.AWS, Account: "1", Region: "r"}},
		instances: map[string][]fleet.Instance{"r": {{ID: "i-1", Provider: fleet.AWS, Region: "r", InstanceType: "g5.xlarge"}}}}
	res, err := Collect(context.Background(), partialCloud{cloud}, CollectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Fleet.Instances) != 1 || len(res.Failures) != 1 || res.Failures[0].Scope.Account != "999" || !errors.Is(res.Failures[0], ErrPermission) {
		t.Errorf("instances %d, failures %v", len(res.Fleet.Instances), res.Failures)
	}
}
