package azure

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/providers"
	"github.com/gpufinops/gpufinops/providers/azure/sim"
)

// TestCatalogSizesReadResourceSKUsForNVMeOnly: a region whose sizes the
// embedded catalog has reads Resource SKUs once, for the local NVMe disks
// only, and lists the same instances (GPU count, vCPUs, memory, NVMe) as
// when Resource SKUs says everything.
func TestCatalogSizesReadResourceSKUsForNVMeOnly(t *testing.T) {
	f := testFleet(t, 30)
	srv, _ := testSim(t, f, sim.Options{})
	p := testProvider(t, srv.URL, providers.Options{Regions: []string{"eastus", "westus2"}})
	got, err := providers.Collect(context.Background(), p, providers.CollectOptions{SkipPrices: true})
	if err != nil || len(got.Failures) > 0 {
		t.Fatal(err, got.Failures)
	}
	if n := simRequests(t, srv.URL)["compute"]["ListSKUs"]; n != 2 {
		t.Errorf("%d Resource SKUs calls, want one per region (2)", n)
	}
	// The same scan with every size's facts from Resource SKUs.
	ref := testProvider(t, srv.URL, providers.Options{Regions: []string{"eastus", "westus2"}})
	var want []fleet.Instance
	for _, r := range []string{"eastus", "westus2"} {
		scope := providers.Scope{Provider: fleet.Azure, Account: subA, Region: r}
		rows, err := ref.regionRows(context.Background(), scope)
		if err != nil {
			t.Fatal(err)
		}
		skus, err := ref.skusOf(context.Background(), scope)
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range rows {
			if in, ok := instanceOf(row, skus[strings.ToLower(row.Size)], scope); ok {
				want = append(want, in)
			}
		}
	}
	if len(want) != len(got.Fleet.Instances) {
		t.Fatalf("%d instances, %d through Resource SKUs", len(got.Fleet.Instances), len(want))
	}
	byID := map[string]fleet.Instance{}
	for _, in := range want {
		byID[in.ID] = in
	}
	for _, in := range got.Fleet.Instances {
		w := byID[in.ID]
		if in.GPU != w.GPU || in.VCPUs != w.VCPUs || in.MemoryGiB != w.MemoryGiB || in.InstanceStoreGB != w.InstanceStoreGB {
			a, _ := json.Marshal(in)
			b, _ := json.Marshal(w)
			t.Errorf("%s: from the catalog %s\n through Resource SKUs %s", in.ID, a, b)
		}
	}
}

// TestSizeOutsideTheCatalogReadsResourceSKUs: a GPU size the catalog does
// not have is read from Resource SKUs, once per region.
func TestSizeOutsideTheCatalogReadsResourceSKUs(t *testing.T) {
	f := runningFleet(t, 6)
	f.Instances[0].InstanceType = "Standard_NC8ads_A100_v4"
	f.Instances[0].GPU = fleet.GPU{Model: "A100-80GB", Count: 3, MemoryGiB: 80}
	f.Instances[0].VCPUs, f.Instances[0].MemoryGiB = 999, 1234
	srv, _ := testSim(t, f, sim.Options{})
	p := testProvider(t, srv.URL, providers.Options{Regions: []string{"eastus"}})
	for range 2 {
		res, err := providers.Collect(context.Background(), p, providers.CollectOptions{SkipPrices: true})
		if err != nil || len(res.Failures) > 0 {
			t.Fatal(err, res.Failures)
		}
		found := false
		for _, in := range res.Fleet.Instances {
			if in.InstanceType == "Standard_NC8ads_A100_v4" {
				found = in.GPU.Count == 3 && in.VCPUs == 999 && in.MemoryGiB == 1234
			}
		}
		if !found || len(res.Fleet.Instances) != 6 {
			t.Fatalf("%d instances; the size outside the catalog with Resource SKUs' facts: %v", len(res.Fleet.Instances), found)
		}
	}
	if n := simRequests(t, srv.URL)["compute"]["ListSKUs"]; n != 1 {
		t.Errorf("%d Resource SKUs calls, want 1 for the region", n)
	}
}

// TestCatalogAgreesWithTheSizeTableOnFractions: a size of a fraction of a
// GPU in the catalog has that fraction in sizes.csv too, so the count is
// the same whether the catalog or Resource SKUs (which says 1) is read.
func TestCatalogAgreesWithTheSizeTableOnFractions(t *testing.T) {
	for _, o := range testCatalog(t).Offers(pricing.Query{Provider: fleet.Azure}) {
		info, known := LookupSize(o.Type.Name)
		if known && o.Type.GPUCount > 0 && o.Type.GPUCount < 1 && info.GPUs != o.Type.GPUCount {
			t.Errorf("%s: %g GPUs in the catalog, %g in sizes.csv", o.Type.Name, o.Type.GPUCount, info.GPUs)
		}
	}
}

// TestListedSubscriptionsAreNotReadAgain: without --subscription the
// listing names the enabled subscriptions and each is scanned without a
// Get; a configured one is read (Get) once.
func TestListedSubscriptionsAreNotReadAgain(t *testing.T) {
	f := testFleet(t, 12)
	srv, _ := testSim(t, f, sim.Options{})
	p := testProvider(t, srv.URL, providers.Options{Adapter: providers.Values{}})
	res, err := providers.Collect(context.Background(), p, providers.CollectOptions{SkipPrices: true})
	if err != nil || len(res.Failures) > 0 {
		t.Fatal(err, res.Failures)
	}
	if len(res.Fleet.Instances) != len(f.Instances) {
		t.Errorf("%d instances, want %d", len(res.Fleet.Instances), len(f.Instances))
	}
	subs := simRequests(t, srv.URL)["subscriptions"]
	if subs["ListSubscriptions"] != 1 || subs["GetSubscription"] != 0 {
		t.Errorf("%d ListSubscriptions and %d GetSubscription, want 1 and 0", subs["ListSubscriptions"], subs["GetSubscription"])
	}
	srv2, _ := testSim(t, f, sim.Options{})
	if _, err := providers.Collect(context.Background(), testProvider(t, srv2.URL, providers.Options{}), providers.CollectOptions{SkipPrices: true}); err != nil {
		t.Fatal(err)
	}
	subs = simRequests(t, srv2.URL)["subscriptions"]
	if subs["ListSubscriptions"] != 0 || subs["GetSubscription"] != 1 {
		t.Errorf("configured: %d ListSubscriptions and %d GetSubscription, want 0 and 1", subs["ListSubscriptions"], subs["GetSubscription"])
	}
}

// TestResourceSKUsReadOncePerRegion: the subscriptions of one region share
// its Resource SKUs read (a size's local disks do not depend on the
// subscription): one call per region however many subscriptions list it at
// once. When one subscription's read is denied, the others still read
// theirs and get the NVMe disks; the denied one's VMs are listed all the
// same, as before the read was shared.
func TestResourceSKUsReadOncePerRegion(t *testing.T) {
	subs := []string{subA, subB, "33333333-3333-3333-3333-333333333333", "44444444-4444-4444-4444-444444444444"}
	for _, deny := range []string{"", subA, subB} {
		for round := range 3 {
			f := testFleet(t, 60)
			for i := range f.Instances {
				f.Instances[i].Account = subs[i%len(subs)]
				if f.Instances[i].InstanceType == "Standard_ND96asr_v4" {
					f.Instances[i].InstanceStoreGB = 6000
				}
			}
			var fault func(service, op, scope string) (int, string)
			if deny != "" {
				fault = func(service, op, scope string) (int, string) {
					if op == "ListSKUs" && strings.EqualFold(scope, deny) {
						return http.StatusForbidden, "AuthorizationFailed"
					}
					return 0, ""
				}
			}
			srv, _ := testSim(t, f, sim.Options{Fault: fault})
			p := testProvider(t, srv.URL, providers.Options{Regions: []string{"eastus", "westus2"}, Adapter: providers.Values{OptSubscriptions: subs}})
			got, err := providers.Collect(context.Background(), p, providers.CollectOptions{SkipPrices: true})
			if err != nil || len(got.Failures) > 0 {
				t.Fatal(err, got.Failures)
			}
			if len(got.Fleet.Instances) != 60 {
				t.Fatalf("deny %q round %d: %d instances, want 60", deny, round, len(got.Fleet.Instances))
			}
			n := simRequests(t, srv.URL)["compute"]["ListSKUs"]
			switch {
			case deny == "" && n != 2:
				t.Errorf("round %d: %d Resource SKUs calls for 4 subscriptions, want one per region (2)", round, n)
			case deny != "" && (n < 2 || n > 4):
				t.Errorf("deny %q round %d: %d Resource SKUs calls, want 2 to 4 (the denied subscription's, then another's, per region)", deny, round, n)
			}
			for _, in := range got.Fleet.Instances {
				if strings.EqualFold(in.Account, deny) || in.InstanceType != "Standard_ND96asr_v4" {
					continue
				}
				if in.InstanceStoreGB <= 0 {
					t.Errorf("deny %q round %d: %s of %s has no NVMe though its subscription may read Resource SKUs", deny, round, in.ID, in.Account)
				}
			}
		}
	}
}
