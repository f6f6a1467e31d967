package azure

import (
	"context"
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/providers"
	"github.com/gpufinops/gpufinops/providers/azure/sim"
)

// TestScanProperty: random fleets over two subscriptions and three regions,
// read with random page and batch sizes, list every VM once with the state,
// lifecycle and owner served, and take 2 × ⌈running VMs / batch⌉ metrics
// calls per scope.
func TestScanProperty(t *testing.T) {
	sizes := []string{"Standard_NC24ads_A100_v4", "Standard_ND96asr_v4", "Standard_NC4as_T4_v3", "Standard_NV36ads_A10_v5", "Standard_NC48ads_A100_v4", "Standard_NC64as_T4_v3"}
	regions := []string{"eastus", "westus2", "southcentralus"}
	for seed := int64(1); seed <= 6; seed++ {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			rng := rand.New(rand.NewSource(seed))
			f := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind}
			n := 1 + rng.Intn(70)
			for i := range n {
				in := fleet.Instance{ID: fmt.Sprintf("vm-%d-%03d", seed, i), Provider: fleet.Azure, Account: []string{subA, subB}[rng.Intn(2)],
					Region: regions[rng.Intn(len(regions))], InstanceType: sizes[rng.Intn(len(sizes))], Lifecycle: fleet.OnDemand, State: fleet.Running,
					Tags: map[string]string{"team": "t"}}
				if rng.Intn(4) == 0 {
					in.Lifecycle = fleet.Spot
					in.SpotInterruption = []fleet.SpotInterruption{"", fleet.SpotDeallocate, fleet.SpotDelete}[rng.Intn(3)]
				}
				if rng.Intn(5) == 0 {
					in.State = fleet.Stopped
				}
				if rng.Intn(6) == 0 {
					in.Tags["aks-managed-poolName"] = "pool"
				}
				if rng.Intn(3) > 0 {
					a := rng.Float64() * 90
					in.Utilization = &fleet.Utilization{Window: &fleet.TimeRange{Start: simNow.AddDate(0, 0, -7), End: simNow}, GPU: &fleet.Stats{Avg: a, P95: a + 5, Max: a + 9}}
				}
				f.Instances = append(f.Instances, in)
			}
			if err := pricing.Complete(f, testCatalog(t)); err != nil {
				t.Fatal(err)
			}
			page, batch := 1+rng.Intn(20), 1+rng.Intn(MaxMetricsBatch)
			srv, _ := testSim(t, f, sim.Options{})
			p := testProvider(t, srv.URL, providers.Options{Regions: regions,
				Adapter: providers.Values{OptSubscriptions: []string{subA, subB}, OptPageSize: page, OptMetricsBatch: batch}})
			res, err := providers.Collect(context.Background(), withoutPrices{p, p}, providers.CollectOptions{Window: fleet.TimeRange{Start: simNow.Add(-7 * 24 * time.Hour), End: simNow}})
			if err != nil || len(res.Failures) > 0 {
				t.Fatal(err, res.Failures)
			}
			want := map[string]fleet.Instance{}
			running := map[string]int{}
			for _, in := range f.Instances {
				want[in.ID] = in
				if in.State == fleet.Running {
					running[in.Account+in.Region]++
				}
			}
			if len(res.Fleet.Instances) != n {
				t.Fatalf("%d VMs listed, %d served (page %d)", len(res.Fleet.Instances), n, page)
			}
			seen := map[string]bool{}
			for _, in := range res.Fleet.Instances {
				w := want[in.ID]
				if seen[in.ID] || in.State != w.State || in.Lifecycle != w.Lifecycle || in.Account != w.Account || in.Region != w.Region || in.GPU.Count != w.GPU.Count || in.GPU.Model != w.GPU.Model {
					t.Errorf("%s: %+v, served %+v", in.ID, in, w)
				}
				// A Spot VM's eviction policy is Deallocate unless the fleet
				// says Delete (Azure's default), for a pool member its set's.
				wantSpot := fleet.SpotInterruption("")
				if w.Lifecycle == fleet.Spot {
					wantSpot = fleet.SpotDeallocate
					if w.SpotInterruption == fleet.SpotDelete {
						wantSpot = fleet.SpotDelete
					}
				}
				if in.SpotInterruption != wantSpot {
					t.Errorf("%s (%s, pool %q): spot interruption %q, want %q", in.ID, in.Lifecycle, w.Tags["aks-managed-poolName"], in.SpotInterruption, wantSpot)
				}
				if (w.Tags["aks-managed-poolName"] != "") != (in.ManagedBy != nil) {
					t.Errorf("%s: owner %+v", in.ID, in.ManagedBy)
				}
				if w.State == fleet.Stopped && in.Utilization != nil {
					t.Errorf("%s: deallocated with utilization", in.ID)
				}
				seen[in.ID] = true
			}
			calls := 0
			for _, c := range running {
				calls += 2 * ((c + batch - 1) / batch)
			}
			if got := simRequests(t, srv.URL)["monitor"]["MetricsBatch"]; got != calls {
				t.Errorf("%d metrics calls, want %d (batch %d)", got, calls, batch)
			}
		})
	}
}

// withoutPrices hides the live prices from a scan: inventory and
// utilization only.
type withoutPrices struct {
	providers.Provider
	providers.UtilizationReader
}
