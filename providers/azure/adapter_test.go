package azure

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/providers"
	"github.com/gpufinops/gpufinops/providers/azure/sim"
)

// runningFleet is n running VMs with GPU metrics in eastus.
func runningFleet(t testing.TB, n int) *fleet.Fleet {
	f := testFleet(t, n)
	for i := range f.Instances {
		in := &f.Instances[i]
		in.Region, in.Zone, in.State = "eastus", "eastus-1", fleet.Running
	}
	return f
}

func window() fleet.TimeRange {
	return fleet.TimeRange{Start: simNow.Add(-7 * 24 * time.Hour), End: simNow}
}

// TestMetricsRequestsGrowWithBatches counts metrics:getBatch calls: one per
// namespace (GPU custom metrics, Percentage CPU) per batch of VMs.
func TestMetricsRequestsGrowWithBatches(t *testing.T) {
	for _, tc := range []struct{ vms, batch int }{{10, 50}, {60, 50}, {120, 50}, {23, 7}} {
		t.Run(fmt.Sprintf("%d VMs, batch %d", tc.vms, tc.batch), func(t *testing.T) {
			srv, _ := testSim(t, runningFleet(t, tc.vms), sim.Options{})
			p := testProvider(t, srv.URL, providers.Options{Regions: []string{"eastus"},
				Adapter: providers.Values{OptSubscriptions: []string{subA}, OptMetricsBatch: tc.batch}})
			scope := providers.Scope{Provider: fleet.Azure, Account: subA, Region: "eastus"}
			listed, err := p.ListGPUInstances(context.Background(), scope)
			if err != nil {
				t.Fatal(err)
			}
			if len(listed) != tc.vms {
				t.Fatalf("listed %d VMs, want %d", len(listed), tc.vms)
			}
			before := simRequests(t, srv.URL)["monitor"]["MetricsBatch"]
			if _, err := p.ReadUtilization(context.Background(), scope, listed, window()); err != nil {
				t.Fatal(err)
			}
			got := simRequests(t, srv.URL)["monitor"]["MetricsBatch"] - before
			want := 2 * int(math.Ceil(float64(tc.vms)/float64(tc.batch)))
			if got != want {
				t.Errorf("%d metrics:getBatch calls, want 2 × ⌈%d/%d⌉ = %d", got, tc.vms, tc.batch, want)
			}
			read := 0
			for _, in := range listed {
				if in.Utilization != nil {
					read++
				}
			}
			if read == 0 {
				t.Error("no VM's utilization was read")
			}
		})
	}
}

// TestThrottlingWaitsForRetryAfter: a 429 with Retry-After: 1 is retried
// after a second, and the call succeeds.
func TestThrottlingWaitsForRetryAfter(t *testing.T) {
	var calls atomic.Int32
	srv, _ := testSim(t, testFleet(t, 6), sim.Options{RetryAfter: time.Second, Fault: func(service, op, scope string) (int, string) {
		if op == "GetSubscription" && calls.Add(1) == 1 {
			return 429, "TooManyRequests"
		}
		return 0, ""
	}})
	p := testProvider(t, srv.URL, providers.Options{Regions: []string{"eastus"}, RetryMaxBackoff: -1})
	p.plain.Retry.MaxRetryDelay = 0
	start := time.Now()
	if _, err := p.Scopes(context.Background()); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < time.Second {
		t.Errorf("retried after %s; Retry-After said 1 s", d)
	}
	if n := simRequests(t, srv.URL)["subscriptions"]["GetSubscription"]; n != 2 {
		t.Errorf("%d GetSubscription calls, want 2 (one throttled, one retried)", n)
	}
}

// TestGraphPagesWithSkipToken lists 40 VMs 7 rows a page.
func TestGraphPagesWithSkipToken(t *testing.T) {
	f := runningFleet(t, 40)
	srv, _ := testSim(t, f, sim.Options{})
	p := testProvider(t, srv.URL, providers.Options{Regions: []string{"eastus"}, Adapter: providers.Values{OptSubscriptions: []string{subA}, OptPageSize: 7}})
	res, err := providers.Collect(context.Background(), p, providers.CollectOptions{SkipPrices: true})
	if err != nil || len(res.Failures) > 0 {
		t.Fatal(err, res.Failures)
	}
	if len(res.Fleet.Instances) != 40 {
		t.Fatalf("%d VMs, want 40", len(res.Fleet.Instances))
	}
	if n := simRequests(t, srv.URL)["resourcegraph"]["Resources"]; n != 7 {
		t.Errorf("%d Resource Graph calls, want ⌈40/7⌉ = 6 of Resources and 1 of ComputeResources", n)
	}
}

// TestARMFallback: with Resource Graph denied, the ARM lists give the same
// VMs, scale-set members marked as owned.
func TestARMFallback(t *testing.T) {
	f := testFleet(t, 30)
	srv, _ := testSim(t, f, sim.Options{})
	want, err := providers.Collect(context.Background(), testProvider(t, srv.URL, providers.Options{Regions: []string{"eastus", "westus2"}}), providers.CollectOptions{SkipPrices: true})
	if err != nil {
		t.Fatal(err)
	}
	srv2, _ := testSim(t, f, sim.Options{Fault: func(service, op, scope string) (int, string) {
		if service == "resourcegraph" {
			return 403, "AuthorizationFailed"
		}
		return 0, ""
	}})
	got, err := providers.Collect(context.Background(), testProvider(t, srv2.URL, providers.Options{Regions: []string{"eastus", "westus2"}}), providers.CollectOptions{SkipPrices: true})
	if err != nil || len(got.Failures) > 0 {
		t.Fatal(err, got.Failures)
	}
	a, _ := json.Marshal(want.Fleet.Instances)
	b, _ := json.Marshal(got.Fleet.Instances)
	if !bytes.Equal(a, b) {
		t.Errorf("the ARM fallback lists differently:\n graph %s\n arm   %s", a, b)
	}
	owned := 0
	for _, in := range got.Fleet.Instances {
		if in.ManagedBy != nil {
			owned++
		}
	}
	if owned == 0 || simRequests(t, srv2.URL)["compute"]["ListScaleSetVMs"] == 0 {
		t.Error("no scale-set member was listed through ARM")
	}
}

// TestStopRefusesScaleSetMembers: never deallocated one by one.
func TestStopRefusesScaleSetMembers(t *testing.T) {
	f := testFleet(t, 14)
	srv, s := testSim(t, f, sim.Options{})
	p := testProvider(t, srv.URL, providers.Options{Regions: []string{"eastus", "westus2"}})
	for _, in := range f.Instances {
		if in.Tags["aks-managed-poolName"] == "" {
			continue
		}
		scope := providers.Scope{Provider: fleet.Azure, Account: subA, Region: in.Region}
		if _, err := p.Stop(context.Background(), scope, in.ID, false); !errors.Is(err, providers.ErrNotStoppable) {
			t.Errorf("%s: %v, want ErrNotStoppable", in.ID, err)
		}
	}
	for _, st := range s.State() {
		if st.State != "running" && st.State != "stopped" {
			t.Errorf("%s is %s", st.ID, st.State)
		}
	}
	if n := s.Counts()["compute"]["Deallocate"] + s.Counts()["compute"]["PowerOff"]; n != 0 {
		t.Errorf("%d deallocate or power-off calls", n)
	}
}

// TestStoppedButAllocatedIsBilled: PowerState/stopped is listed running,
// with a note, and never idle for lack of data.
func TestStoppedButAllocatedIsBilled(t *testing.T) {
	if p := PowerOf("PowerState/stopped"); p.State != fleet.Running || !p.Allocated {
		t.Errorf("PowerState/stopped = %+v, want running (billed) and allocated", p)
	}
	if p := PowerOf("PowerState/deallocated"); p.State != fleet.Stopped || p.Allocated {
		t.Errorf("PowerState/deallocated = %+v", p)
	}
	if p := PowerOf("PowerState/mystery"); p.State != fleet.Running || p.Known {
		t.Errorf("an unknown code = %+v, want running and unknown", p)
	}
	f := testFleet(t, 3)
	srv, s := testSim(t, f, sim.Options{})
	p := testProvider(t, srv.URL, providers.Options{Regions: []string{"eastus"}})
	id := f.Instances[0].ID
	// Power off through the simulator's ARM: allocated, still billed.
	if _, err := p.Stop(context.Background(), providers.Scope{Provider: fleet.Azure, Account: subA, Region: "eastus"}, id, true); err != nil {
		t.Fatal(err)
	}
	s.PowerOff(id)
	scope := providers.Scope{Provider: fleet.Azure, Account: subA, Region: "eastus"}
	listed, err := p.ListGPUInstances(context.Background(), scope)
	if err != nil {
		t.Fatal(err)
	}
	notes, err := p.ReadUtilization(context.Background(), scope, listed, window())
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range listed {
		if in.ID == id && (in.State != fleet.Running || !in.StoppedAllocated) {
			t.Errorf("%s powered off but allocated is listed %s, stoppedAllocated %v", id, in.State, in.StoppedAllocated)
		}
		if in.ID != id && in.StoppedAllocated {
			t.Errorf("%s is listed stopped but allocated", in.ID)
		}
	}
	if !strings.Contains(strings.Join(notes, "\n"), id+": stopped but still allocated") {
		t.Errorf("no note says %s is billed while stopped: %q", id, notes)
	}
}

// TestReservationPriceIsHourly: the term price ÷ hours in the term, exactly.
func TestReservationPriceIsHourly(t *testing.T) {
	items := []RetailItem{
		{CurrencyCode: "USD", RetailPrice: "3.673", ARMRegionName: "eastus", ARMSkuName: "Standard_NC24ads_A100_v4", ProductName: "Virtual Machines NCads A100 v4 Series", SkuName: "NC24ads A100 v4", MeterName: "NC24ads A100 v4", UnitOfMeasure: "1 Hour", Type: "Consumption"},
		{CurrencyCode: "USD", RetailPrice: "4.4", ARMRegionName: "eastus", ARMSkuName: "Standard_NC24ads_A100_v4", ProductName: "Virtual Machines NCads A100 v4 Series Windows", SkuName: "NC24ads A100 v4", MeterName: "NC24ads A100 v4", UnitOfMeasure: "1 Hour", Type: "Consumption"},
		{CurrencyCode: "USD", RetailPrice: "1.1", ARMRegionName: "eastus", ARMSkuName: "Standard_NC24ads_A100_v4", ProductName: "Virtual Machines NCads A100 v4 Series", SkuName: "NC24ads A100 v4", MeterName: "NC24ads A100 v4", UnitOfMeasure: "1 Hour", Type: "DevTestConsumption"},
		{CurrencyCode: "USD", RetailPrice: "0.444433", ARMRegionName: "eastus", ARMSkuName: "Standard_NC24ads_A100_v4", ProductName: "Virtual Machines NCads A100 v4 Series", SkuName: "NC24ads A100 v4 Spot", MeterName: "NC24ads A100 v4 Spot", UnitOfMeasure: "1 Hour", Type: "Consumption"},
		{CurrencyCode: "USD", RetailPrice: "20148", ARMRegionName: "eastus", ARMSkuName: "Standard_NC24ads_A100_v4", SkuName: "NC24ads A100 v4", UnitOfMeasure: "1 Hour", Type: "Reservation", ReservationTerm: "1 Year"},
		{CurrencyCode: "USD", RetailPrice: "39420", ARMRegionName: "eastus", ARMSkuName: "Standard_NC24ads_A100_v4", SkuName: "NC24ads A100 v4", UnitOfMeasure: "1 Hour", Type: "Reservation", ReservationTerm: "3 Years"},
	}
	got := map[pricing.Option]string{}
	for _, pr := range PricesOf(items, "eastus", "Standard_NC24ads_A100_v4", simNow) {
		got[pr.Option] = pr.Hourly.String()
		if pr.Currency != "USD" || pr.Unit != pricing.UnitHour || pr.Source == "" || pr.AsOf != "2026-11-30" || pr.Region != "eastus" {
			t.Errorf("price %+v: region, unit, source and date must be set", pr)
		}
	}
	want := map[pricing.Option]string{pricing.OnDemand: "3.673", pricing.Spot: "0.444433", pricing.SavingsPlan1y: "2.3", pricing.SavingsPlan3y: "1.5"}
	for o, w := range want {
		if got[o] != w {
			t.Errorf("%s = %s, want %s", o, got[o], w)
		}
	}
}

// TestReservationConversionProperty: for any hourly rate with six
// decimals, the term total the API lists converts back exactly.
func TestReservationConversionProperty(t *testing.T) {
	for i := int64(1); i < 2000; i += 7 {
		hourly := decimal.New(i*1237, -6)
		for term, hours := range map[string]int64{"1 Year": 8760, "3 Years": 26280} {
			total := hourly.Mul(decimal.NewFromInt(hours))
			prs := PricesOf([]RetailItem{{CurrencyCode: "USD", RetailPrice: json.Number(total.String()), ARMRegionName: "r", ARMSkuName: "s", Type: "Reservation", ReservationTerm: term}}, "r", "s", simNow)
			if len(prs) != 1 || !prs[0].Hourly.Equal(hourly) {
				t.Fatalf("%s total %s: %+v, want hourly %s", term, total, prs, hourly)
			}
		}
	}
}

// TestSizeTable checks the embedded size table and the fractional A10 sizes.
func TestSizeTable(t *testing.T) {
	for size, want := range map[string]SizeInfo{
		"Standard_NV6ads_A10_v5":    {Model: "A10", MemoryGiB: 4, GPUs: 0.166667},
		"Standard_NV12ads_A10_v5":   {Model: "A10", MemoryGiB: 8, GPUs: 0.333333},
		"Standard_NV18ads_A10_v5":   {Model: "A10", MemoryGiB: 12, GPUs: 0.5},
		"Standard_NV36ads_A10_v5":   {Model: "A10", MemoryGiB: 24, GPUs: 1},
		"standard_nd96asr_v4":       {Model: "A100", MemoryGiB: 40, GPUs: 8},
		"Standard_ND96isr_H100_v5":  {Model: "H100", MemoryGiB: 80, GPUs: 8},
		"Standard_NC24ads_A100_v4":  {Model: "A100-80GB", MemoryGiB: 80},
		"Standard_NC64as_T4_v3":     {Model: "T4", MemoryGiB: 16},
		"Standard_ND96amsr_A100_v4": {Model: "A100-80GB", MemoryGiB: 80, GPUs: 8},
	} {
		got, ok := LookupSize(size)
		if !ok || got != want {
			t.Errorf("%s = %+v, %v; want %+v", size, got, ok, want)
		}
	}
	for _, size := range []string{"Standard_D4s_v5", "Standard_NP10s", "", "Standard_NC"} {
		if got, ok := LookupSize(size); ok {
			t.Errorf("%s = %+v: not a GPU size", size, got)
		}
	}
	// A fraction wins over the SKU's whole count; else the SKU decides.
	if c := gpuCount(SizeInfo{GPUs: 0.5}, 1); c != 0.5 {
		t.Errorf("fractional count %v", c)
	}
	if c := gpuCount(SizeInfo{}, 4); c != 4 {
		t.Errorf("SKU count %v", c)
	}
}

// TestPolicyDocuments: docs/iam holds byte-identical copies, and the role
// grants exactly the permissions the registration lists.
func TestPolicyDocuments(t *testing.T) {
	pol := Policy()
	for _, idle := range []bool{false, true} {
		doc, err := pol.Document(idle)
		if err != nil {
			t.Fatal(err)
		}
		name := map[bool]string{false: "azure-analyze.json", true: "azure-idle-stop.json"}[idle]
		disk, err := os.ReadFile("../../docs/iam/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(doc, disk) {
			t.Errorf("docs/iam/%s differs from providers/azure/iam", name)
		}
		var role struct {
			Name             string
			IsCustom         bool
			Actions          []string
			AssignableScopes []string
		}
		if err := json.Unmarshal(doc, &role); err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, perm := range pol.Permissions(idle) {
			want = append(want, perm.Action)
		}
		sort.Strings(want)
		got := append([]string(nil), role.Actions...)
		sort.Strings(got)
		if strings.Join(got, ",") != strings.Join(want, ",") || !role.IsCustom || role.Name == "" || len(role.AssignableScopes) == 0 {
			t.Errorf("%s: actions %v, want %v", name, got, want)
		}
		if slices := strings.Join(got, ","); strings.Contains(strings.ToLower(slices), "poweroff") || strings.Contains(strings.ToLower(slices), "delete") {
			t.Errorf("%s grants power-off or delete", name)
		}
	}
}

// TestBadOptions: errors name the key and what was expected.
func TestBadOptions(t *testing.T) {
	ri := Registration()
	for _, tc := range []struct {
		v    providers.Values
		want string
	}{
		{providers.Values{OptSubscriptions: []string{"prod"}}, "providers.azure.subscriptions: \"prod\" is not a subscription ID"},
		{providers.Values{OptMetricsBatch: 0}, "providers.azure.metrics_batch_size: 0 is outside 1–50"},
		{providers.Values{OptPageSize: 5000}, "providers.azure.page_size: 5000 is outside 1–1000"},
		{providers.Values{OptMetricsNamespace: " "}, "providers.azure.metrics_namespace: empty"},
	} {
		err := ri.ValidateOptions(tc.v)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.v, err, tc.want)
		}
	}
}

// TestRoleCoversEveryCall: every operation a scan, a utilization read and a
// deallocation make needs an action the idle-stop role grants.
func TestRoleCoversEveryCall(t *testing.T) {
	f := testFleet(t, 12)
	srv, s := testSim(t, f, sim.Options{})
	p := testProvider(t, srv.URL, providers.Options{})
	res, err := providers.Collect(context.Background(), p, providers.CollectOptions{Window: window()})
	if err != nil || len(res.Failures) > 0 {
		t.Fatal(err, res.Failures)
	}
	in := f.Instances[0]
	if _, err := p.Stop(context.Background(), providers.Scope{Provider: fleet.Azure, Account: subA, Region: in.Region}, in.ID, false); err != nil {
		t.Fatal(err)
	}
	granted := map[string]bool{}
	// The commitment reads are granted by built-in roles at the tenant's
	// billing scopes (Policy().Extra), not by the subscription's role.
	for _, perm := range append(Policy().Permissions(true), RoleCommitments...) {
		granted[perm.Action] = true
	}
	for _, ops := range s.Counts() {
		for op := range ops {
			if a, ok := sim.Actions[op]; ok && !granted[a] {
				t.Errorf("%s needs %s, which the role does not grant", op, a)
			}
		}
	}
}

// TestOneGraphQueryPerRegion: a scan of two subscriptions reads each region
// with one Resource Graph query of each table naming both.
func TestOneGraphQueryPerRegion(t *testing.T) {
	f := testFleet(t, 20)
	for i := range f.Instances {
		if i%2 == 1 {
			f.Instances[i].Account = subB
		}
	}
	srv, _ := testSim(t, f, sim.Options{})
	p := testProvider(t, srv.URL, providers.Options{Regions: []string{"eastus", "westus2"}, Adapter: providers.Values{OptSubscriptions: []string{subA, subB}}})
	res, err := providers.Collect(context.Background(), p, providers.CollectOptions{SkipPrices: true})
	if err != nil || len(res.Failures) > 0 {
		t.Fatal(err, res.Failures)
	}
	if len(res.Fleet.Instances) != 20 {
		t.Fatalf("%d VMs, want 20", len(res.Fleet.Instances))
	}
	for _, in := range res.Fleet.Instances {
		if want := f.Instances[0].Account; in.ID == f.Instances[1].ID && in.Account == want {
			t.Errorf("%s listed in %s, its subscription is %s", in.ID, in.Account, subB)
		}
	}
	if n := simRequests(t, srv.URL)["resourcegraph"]["Resources"]; n != 4 {
		t.Errorf("%d Resource Graph queries for 2 regions × 2 subscriptions, want 4 (Resources and ComputeResources per region)", n)
	}
}

// TestDeallocatePolledToTheEnd: the long-running operation is polled until
// it succeeds, and no longer than StopWait.
func TestDeallocatePolledToTheEnd(t *testing.T) {
	f := runningFleet(t, 2)
	scope := providers.Scope{Provider: fleet.Azure, Account: subA, Region: "eastus"}
	srv, s := testSim(t, f, sim.Options{OperationPolls: 2})
	p := testProvider(t, srv.URL, providers.Options{Regions: []string{"eastus"}})
	res, err := p.Stop(context.Background(), scope, f.Instances[0].ID, false)
	if err != nil || res.CurrentState != "deallocated" {
		t.Fatalf("stop = %+v, %v", res, err)
	}
	if st := s.State()[0].State; st != "stopped" {
		t.Errorf("state %s after the operation succeeded", st)
	}
	if n := s.Counts()["compute"]["GetOperation"]; n < 3 {
		t.Errorf("%d polls, want the two InProgress answers and the last", n)
	}

	srv, _ = testSim(t, f, sim.Options{OperationPolls: 1000})
	p = testProvider(t, srv.URL, providers.Options{Regions: []string{"eastus"}})
	old := StopWait
	StopWait = 1500 * time.Millisecond
	t.Cleanup(func() { StopWait = old })
	start := time.Now()
	res, err = p.Stop(context.Background(), scope, f.Instances[1].ID, false)
	if err == nil || !strings.Contains(err.Error(), "did not finish within") || res.CurrentState != "deallocating" {
		t.Errorf("an operation that never ends: %+v, %v", res, err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("waited %s, StopWait is %s", d, StopWait)
	}
}

// oldGraphQuery is the query gpufinops sent before it read ComputeResources:
// it looked for Uniform scale-set members in Resources, where Azure has none.
const oldGraphQuery = `Resources
| where type in~ ('microsoft.compute/virtualmachines', 'microsoft.compute/virtualmachinescalesets/virtualmachines')
| where location =~ 'eastus'
| extend size = tostring(coalesce(properties.hardwareProfile.vmSize, sku.name)), priority = tostring(properties.priority), eviction = tostring(properties.evictionPolicy), power = tostring(properties.extended.instanceView.powerState.code), created = tostring(properties.timeCreated), vmss = tostring(properties.virtualMachineScaleSet.id)
| where size startswith 'Standard_N'
| project id, name, type, subscriptionId, resourceGroup, location, zones, tags, size, priority, eviction, power, created, vmss
| order by id asc`

// TestUniformScaleSetMembersListed: AKS GPU nodes (Uniform scale-set
// members) are listed through Resource Graph, with no permission error and
// no ARM list, their spot priority taken from their scale set. Azure keeps
// them in ComputeResources only (providers/azure/sim/FACTS.md): the old
// query of Resources finds none of them.
func TestUniformScaleSetMembersListed(t *testing.T) {
	f := testFleet(t, 30)
	members := map[string]fleet.Lifecycle{}
	for _, in := range f.Instances {
		if in.Tags["aks-managed-poolName"] != "" && in.Region == "eastus" {
			members[in.ID] = in.Lifecycle
		}
	}
	if len(members) < 2 {
		t.Fatalf("the fleet has %d pool members in eastus; the test needs some", len(members))
	}
	srv, _ := testSim(t, f, sim.Options{})
	p := testProvider(t, srv.URL, providers.Options{Regions: []string{"eastus"}, Adapter: providers.Values{OptSubscriptions: []string{subA}}})
	got, err := p.ListGPUInstances(context.Background(), providers.Scope{Account: subA, Region: "eastus"})
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, in := range got {
		life, ok := members[in.ID]
		if !ok {
			continue
		}
		found++
		if in.ManagedBy == nil || in.Lifecycle != life {
			t.Errorf("%s: managed by %v, %s; want a pool owner and %s", in.ID, in.ManagedBy, in.Lifecycle, life)
		}
	}
	if found != len(members) {
		t.Errorf("%d of %d scale-set members listed", found, len(members))
	}
	counts := simRequests(t, srv.URL)["compute"]
	if counts["ListAllScaleSets"]+counts["ListScaleSetVMs"] > 0 {
		t.Errorf("the ARM lists were read (%v): members must come from Resource Graph", counts)
	}
	rows, err := p.query(context.Background(), []string{subA}, oldGraphQuery)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if strings.Contains(string(r), "virtualmachinescalesets/virtualmachines") {
			t.Errorf("Resources served a Uniform scale-set member: %s", r)
		}
	}
}

// TestRegionsOfScaleSetsAreFound: without --region, a region whose only GPU
// VMs are Uniform scale-set members (an AKS GPU pool) is scanned: the
// regions query finds their scale set in Resources, as the members are
// only in ComputeResources (providers/azure/sim/FACTS.md).
func TestRegionsOfScaleSetsAreFound(t *testing.T) {
	f := testFleet(t, 30)
	var kept []fleet.Instance
	for _, in := range f.Instances {
		if in.Region == "eastus" || in.Tags["aks-managed-poolName"] != "" {
			kept = append(kept, in)
		}
	}
	f.Instances = kept
	pool := 0
	for _, in := range f.Instances {
		if in.Region == "westus2" {
			pool++
		}
	}
	if pool == 0 {
		t.Fatal("the fleet has no pool member in westus2; the test needs one")
	}
	srv, _ := testSim(t, f, sim.Options{})
	p := testProvider(t, srv.URL, providers.Options{Adapter: providers.Values{OptSubscriptions: []string{subA}}})
	scopes, err := p.Scopes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var regions []string
	for _, s := range scopes {
		regions = append(regions, s.Region)
	}
	if !slices.Contains(regions, "westus2") {
		t.Errorf("scopes in %v: westus2, where only an AKS pool runs, is missing", regions)
	}
}
