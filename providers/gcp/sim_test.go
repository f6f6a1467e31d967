package gcp

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
	"github.com/gpufinops/gpufinops/providers"
	"github.com/gpufinops/gpufinops/providers/file"
	"github.com/gpufinops/gpufinops/providers/gcp/sim"
	"github.com/gpufinops/gpufinops/providers/gcp/simcat"
	"github.com/gpufinops/gpufinops/providers/providertest"
)

// simNow is the simulator's clock in the tests.
var simNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// testProject owns the test fleet's VMs.
const testProject = "ml-research-eu"

// testFleet is testdata/fleets/gcp.yaml completed from the catalog.
func testFleet(t testing.TB) *fleet.Fleet {
	t.Helper()
	f, err := file.Load(filepath.Join("..", "..", "testdata", "fleets", "gcp.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	if err := pricing.Complete(f, cat); err != nil {
		t.Fatal(err)
	}
	return f
}

// startSim serves h over HTTP/1.1 and cleartext HTTP/2, as cmd/cloudsim
// does, and returns its URL.
func startSim(t testing.TB, h http.Handler) string {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetHTTP1(true)
	srv.Config.Protocols.SetUnencryptedHTTP2(true)
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL
}

// simOptions are the simulator's options for f at simNow.
func simOptions(t testing.TB, f *fleet.Fleet) sim.Options {
	t.Helper()
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	opts := simcat.Options(f, cat)
	opts.Now = func() time.Time { return simNow }
	// Strict mode: every request the adapter sends and every answer it
	// reads is checked against the discovery documents and the
	// monitoringpb descriptors; a violation fails the test.
	opts.Strict = func(service, op string, err error) {
		t.Errorf("%s:%s breaks the API model: %v", service, op, err)
	}
	return opts
}

// newProvider builds the adapter against url with fast retries.
func newProvider(t testing.TB, url string, regions []string, projects ...string) *Provider {
	t.Helper()
	if projects == nil {
		projects = []string{testProject}
	}
	p, err := New(context.Background(), providers.Options{
		Endpoint: url, Regions: regions, Adapter: providers.Values{OptProjects: projects},
		RetryMaxBackoff: time.Millisecond, Now: func() time.Time { return simNow },
	})
	if err != nil {
		t.Fatal(err)
	}
	return p.(*Provider)
}

// TestSimConformance runs the whole conformance suite against the
// simulator through the real clients; it may skip nothing.
func TestSimConformance(t *testing.T) {
	f := testFleet(t)
	// A committed VM is served STANDARD, as GCP serves it: its listing is an
	// on-demand VM's (commitments are the Commitments API's to tell).
	for i := range f.Instances {
		if f.Instances[i].Lifecycle == fleet.Committed {
			f.Instances[i].Lifecycle = fleet.OnDemand
		}
	}
	sum := providertest.Run(t, providertest.Harness{
		Provider: fleet.GCP,
		Fleet:    f,
		Regions:  []string{"asia-southeast1", "europe-west4", "us-central1"},
		Now:      simNow,
		New:      conformanceProvider,
		NotStoppable: func(in fleet.Instance) bool {
			return in.ManagedBy != nil && (in.ManagedBy.Kind == fleet.OwnerMIG || in.ManagedBy.Kind == fleet.OwnerGKENodePool)
		},
		UnknownID:  "vm-that-does-not-exist",
		PriceCache: true,
	})
	if len(sum.Skipped) > 0 {
		t.Errorf("the GCP adapter must pass every case; skipped: %q", sum.Skipped)
	}
}

// deniedProject is the second project of providertest.Faults.FailAccount.
const deniedProject = "gpufinops-denied"

// conformanceProvider is the harness's New: a simulator serving s.Fleet
// with the faults as simulator options and fault hooks, and the adapter
// pointed at it with fast retries.
func conformanceProvider(t *testing.T, s providertest.Setup) (providers.Provider, error) {
	ft := s.Faults
	opts := simOptions(t, s.Fleet)
	opts.ThrottleRate, opts.FailRegions, opts.Latency, opts.Regions, opts.Seed = ft.ThrottleRate, ft.FailRegions, ft.Latency, s.Regions, 3
	opts.Fault = func(service, op, scope string) (int, string) {
		switch {
		case service == "monitoring" && slices.Contains(ft.FailMetricsRegions, scope):
			return 500, "backendError"
		case ft.FailPrices && service == "cloudbilling":
			return 500, "backendError"
		case ft.DenyList && op == "instances.aggregatedList":
			return 403, "forbidden"
		case ft.DenyStop && (op == "instances.stop" || op == "instances.testIamPermissions"):
			return 403, "forbidden"
		case ft.FailAccount && op == "regions.list" && scope == deniedProject:
			return 403, "forbidden"
		}
		return 0, ""
	}
	url := providertest.Backend(t, sim.New(s.Fleet, opts), func(h http.Handler) string { return startSim(t, h) })
	if ft.NoCredentials {
		t.Setenv(TokenEnv, "")
	}
	now := simNow
	if !s.Now.IsZero() {
		now = s.Now
	}
	regions, projects := s.Regions, []string{testProject}
	if ft.FailAccount {
		regions, projects = nil, []string{testProject, deniedProject}
	}
	return New(context.Background(), providers.Options{
		Endpoint: url, Regions: regions, Adapter: providers.Values{OptProjects: projects}, CacheDir: s.CacheDir,
		RetryMaxBackoff: time.Millisecond, Now: func() time.Time { return now },
	})
}

// TestStopDiscardsLocalSSD: a VM with local SSD is stopped with
// discardLocalSsd (the simulator refuses the stop without it, as Compute
// Engine does), and the stop is visible to the next listing.
func TestStopDiscardsLocalSSD(t *testing.T) {
	f := testFleet(t)
	s := sim.New(f, simOptions(t, f))
	p := newProvider(t, startSim(t, s), []string{"us-central1"})
	scope := providers.Scope{Provider: fleet.GCP, Account: testProject, Region: "us-central1"}
	ctx := context.Background()
	listed, err := p.ListGPUInstances(ctx, scope)
	if err != nil {
		t.Fatal(err)
	}
	var ssd float64
	for _, in := range listed {
		if in.ID == "us-a2-reserved" {
			ssd = in.InstanceStoreGB
			// Committed in the file, served STANDARD as GCP does: the
			// listing alone cannot tell a commitment covers it.
			if in.Lifecycle != fleet.OnDemand {
				t.Errorf("a committed (STANDARD) VM is listed %s, want on-demand", in.Lifecycle)
			}
		}
	}
	if ssd != 375 {
		t.Fatalf("us-a2-reserved lists %v GB of local SSD, want 375", ssd)
	}
	res, err := p.Stop(ctx, scope, "us-a2-reserved", false)
	if err != nil || res.PreviousState != "RUNNING" || res.CurrentState != "TERMINATED" {
		t.Fatalf("stop = %+v, %v", res, err)
	}
	if got := providertest.ListedState(t, p, scope, "us-a2-reserved"); got != fleet.Stopped {
		t.Errorf("listed %s after the stop", got)
	}
	if _, err := p.Stop(ctx, scope, "us-a2-mig-1", true); !errors.Is(err, providers.ErrNotStoppable) {
		t.Errorf("dry run of a MIG member: %v, want ErrNotStoppable", err)
	}
	if n := s.Counts()["compute"]["instances.stop"]; n != 1 {
		t.Errorf("%d stop calls, want 1", n)
	}
}

// TestAttachedGPUs: an N1 VM's GPUs come from guestAccelerators, its host
// from machineTypes.get; a VM without GPUs is left out.
func TestAttachedGPUs(t *testing.T) {
	f := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind, Instances: []fleet.Instance{
		{ID: "n1-t4", Provider: fleet.GCP, Account: testProject, Region: "us-east1", Zone: "us-east1-c", InstanceType: "n1-standard-8",
			GPU: fleet.GPU{Model: "T4", Count: 2}, Lifecycle: fleet.Spot, State: fleet.Running},
		{ID: "n1-nogpu", Provider: fleet.GCP, Account: testProject, Region: "us-east1", Zone: "us-east1-c", InstanceType: "n1-standard-4",
			Lifecycle: fleet.OnDemand, State: fleet.Running},
	}}
	s := sim.New(f, simOptions(t, f))
	p := newProvider(t, startSim(t, s), []string{"us-east1"})
	got, err := p.ListGPUInstances(context.Background(), providers.Scope{Provider: fleet.GCP, Account: testProject, Region: "us-east1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("listed %d VMs, want the one with GPUs: %+v", len(got), got)
	}
	in := got[0]
	if in.ID != "n1-t4" || in.GPU.Model != "T4" || in.GPU.Count != 2 || in.GPU.MemoryGiB != 16 || in.VCPUs != 8 || in.MemoryGiB != 30 || in.Lifecycle != fleet.Spot || in.Zone != "us-east1-c" {
		t.Errorf("%+v", in)
	}
}

// TestMachineTypeReadOnce: a GPU type the catalog has is never read; one
// it lacks is read once however many scopes ask for it at once.
func TestMachineTypeReadOnce(t *testing.T) {
	f := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind, Instances: []fleet.Instance{
		{ID: "n1-t4", Provider: fleet.GCP, Account: testProject, Region: "us-east1", Zone: "us-east1-c", InstanceType: "n1-standard-8",
			GPU: fleet.GPU{Model: "T4", Count: 2}, Lifecycle: fleet.OnDemand, State: fleet.Running},
	}}
	s := sim.New(f, simOptions(t, f))
	p := newProvider(t, startSim(t, s), []string{"us-east1"})
	var wg sync.WaitGroup
	errs := make([]error, 16)
	infos := make([]machineInfo, 16)
	for i := range 16 {
		wg.Go(func() {
			name := "n1-standard-8"
			if i%2 == 1 {
				name = "a2-highgpu-2g"
			}
			infos[i], errs[i] = p.machineType(context.Background(), testProject, "us-east1-c", name)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("%d: %v", i, err)
		}
	}
	if infos[0].vcpus != 8 || infos[0].gpuCount != 0 || infos[1].gpuCount != 2 || infos[1].gpuModel != "A100" || infos[1].vcpus != 24 {
		t.Errorf("n1-standard-8 %+v, a2-highgpu-2g %+v", infos[0], infos[1])
	}
	if got := s.Counts()["compute"]["machineTypes.get"]; got != 1 {
		t.Errorf("%d machineTypes.get calls for one type the catalog lacks and one it has: %v", got, s.Counts())
	}
}

// TestSKUChoiceIgnoresListingOrder: services.skus.list has no documented
// order, so when two SKUs price the same part, option and region the
// adapter keeps the lower rate, whatever order the simulator lists the
// SKUs in (shuffled with several seeds).
func TestSKUChoiceIgnoresListingOrder(t *testing.T) {
	f := testFleet(t)
	base := simOptions(t, f)
	dup := -1
	for i, k := range base.SKUs {
		if k.ResourceGroup == "GPU" && k.UsageType == "OnDemand" && strings.Contains(k.Description, "A100") && !strings.Contains(k.Description, "80GB") && slices.Contains(k.Regions, "us-central1") {
			dup = i
			break
		}
	}
	if dup < 0 {
		t.Fatal("no on-demand A100 GPU SKU in us-central1 to duplicate")
	}
	premium := base.SKUs[dup]
	premium.ID, premium.Price = "0000-PREMIUM", "9.999"
	scope := providers.Scope{Provider: fleet.GCP, Account: testProject, Region: "us-central1"}
	read := func(skus []sim.SKU) string {
		opts := simOptions(t, f)
		opts.SKUs = skus
		p := newProvider(t, startSim(t, sim.New(f, opts)), []string{"us-central1"})
		got, err := p.ReadPrices(context.Background(), scope, []string{"a2-highgpu-1g"})
		if err != nil {
			t.Fatal(err)
		}
		for _, pr := range got {
			if pr.Option == pricing.OnDemand {
				return pr.Hourly.String()
			}
		}
		t.Fatal("no on-demand price for a2-highgpu-1g")
		return ""
	}
	want := read(base.SKUs)
	for seed := range uint64(6) {
		skus := append(append([]sim.SKU(nil), base.SKUs...), premium)
		rand.New(rand.NewPCG(seed, 7)).Shuffle(len(skus), func(i, j int) { skus[i], skus[j] = skus[j], skus[i] })
		if got := read(skus); got != want {
			t.Errorf("seed %d: on-demand %s, want %s (the lower of the two A100 rates)", seed, got, want)
		}
	}
}

// TestTPUSlicesFromCatalog: TPU slices are no Compute Engine machine types,
// so their chips come from the embedded catalog and machineTypes.get is
// never asked (it answered 404 once per slice type: 23 calls at 10,000
// instances); a GPU machine type the catalog lacks is still read.
func TestTPUSlicesFromCatalog(t *testing.T) {
	slices := []struct {
		typ   string
		model string
		chips float64
	}{{"tpu-v5p-8", "tpu-v5p", 4}, {"tpu-v6e-4", "tpu-v6e", 4}, {"tpu-v5litepod-16", "tpu-v5litepod", 16}, {"tpu-v3-32", "tpu-v3", 16}, {"tpu-v2-8", "tpu-v2", 4}}
	f := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind}
	for i, s := range slices {
		f.Instances = append(f.Instances, fleet.Instance{ID: fmt.Sprintf("tpu-%d", i), Provider: fleet.GCP, Account: testProject, Region: "us-east1", Zone: "us-east1-c",
			InstanceType: s.typ, GPU: fleet.GPU{Model: s.model, Count: s.chips}, Lifecycle: fleet.OnDemand, State: fleet.Running})
	}
	srv := sim.New(f, simOptions(t, f))
	p := newProvider(t, startSim(t, srv), []string{"us-east1"})
	got, err := p.ListGPUInstances(context.Background(), providers.Scope{Provider: fleet.GCP, Account: testProject, Region: "us-east1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(slices) {
		t.Fatalf("listed %d slices, want %d: %+v", len(got), len(slices), got)
	}
	for i, in := range got {
		if in.InstanceType != slices[i].typ || !strings.EqualFold(in.GPU.Model, slices[i].model) || in.GPU.Count != slices[i].chips {
			t.Errorf("%s: %+v", slices[i].typ, in.GPU)
		}
	}
	if n := srv.Counts()["compute"]["machineTypes.get"]; n != 0 {
		t.Errorf("%d machineTypes.get calls for TPU slices the catalog has", n)
	}
	for _, name := range []string{"tpu-v5p-8", " tpu-v6e-1", "TPU-V3-8", "Tpu-v5litepod-4"} {
		if !tpuSlice(name) {
			t.Errorf("tpuSlice(%q) = false", name)
		}
	}
	for _, name := range []string{"a3-highgpu-8g", "n1-standard-8", "ct5p-hightpu-4t", "tpu", ""} {
		if tpuSlice(name) {
			t.Errorf("tpuSlice(%q) = true", name)
		}
	}
	if _, ok := catalogMachine("tpu-v9-8"); ok {
		t.Error("a slice the catalog lacks answered from the catalog")
	}
	if _, ok := catalogMachine("n1-standard-8"); ok {
		t.Error("an N1 host (no GPUs in the catalog) answered from the catalog")
	}
}
