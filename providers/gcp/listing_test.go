package gcp

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers"
	"github.com/gpufinops/gpufinops/providers/gcp/sim"
)

// TestListingServesEachRegionOnce: one project's aggregated listing serves
// each of its regions once, however far apart (under listingMaxAge) the
// region scopes start; a region asked for again gets a new listing that
// sees what changed, and the other regions then share that one.
func TestListingServesEachRegionOnce(t *testing.T) {
	regions := []string{"us-central1", "europe-west4", "asia-southeast1"}
	f := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind}
	for i := range 30 {
		r := regions[i%len(regions)]
		f.Instances = append(f.Instances, fleet.Instance{
			ID: fmt.Sprintf("vm-%02d", i), Provider: fleet.GCP, Account: testProject, Region: r, Zone: r + "-a",
			InstanceType: "a2-highgpu-1g", GPU: fleet.GPU{Model: "A100", Count: 1, MemoryGiB: 40}, Lifecycle: fleet.OnDemand, State: fleet.Running,
		})
	}
	s := sim.New(f, simOptions(t, f))
	p := newProvider(t, startSim(t, s), regions)
	var mu sync.Mutex
	now := simNow
	p.opts.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	pages := func() int { return s.Counts()["compute"]["instances.aggregatedList"] }
	list := func(region string) []fleet.Instance {
		t.Helper()
		got, err := p.ListGPUInstances(context.Background(), providers.Scope{Provider: fleet.GCP, Account: testProject, Region: region})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}

	list(regions[0])
	advance(3 * time.Minute) // past the two seconds a listing used to live
	list(regions[1])
	if got := pages(); got != 1 {
		t.Fatalf("two regions of one scan, 3 minutes apart: %d aggregatedList pages, want 1", got)
	}
	// The re-check of a region already served reads the project again, and
	// the region not read yet shares the new listing.
	if got := list(regions[0]); len(got) != 10 {
		t.Fatalf("re-check: %d VMs, want 10", len(got))
	}
	list(regions[2])
	if got := pages(); got != 2 {
		t.Fatalf("after a re-check and a third region: %d pages, want 2", got)
	}
	// A listing older than listingMaxAge serves no region, not even one it
	// has not served.
	advance(listingMaxAge + time.Second)
	list(regions[1])
	if got := pages(); got != 3 {
		t.Fatalf("a region first asked for past listingMaxAge: %d pages, want 3", got)
	}
	// A new scan reads its own listing, even for a region the last one
	// has not served.
	if _, _, err := p.PartialScopes(context.Background()); err != nil {
		t.Fatal(err)
	}
	before := pages()
	list(regions[0])
	list(regions[2])
	if got := pages() - before; got != 1 {
		t.Fatalf("a new scan's two regions: %d pages, want 1", got)
	}
}
