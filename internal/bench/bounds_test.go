package bench

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

func types(ts ...string) map[string]bool {
	m := map[string]bool{}
	for _, t := range ts {
		m[t] = true
	}
	return m
}

func boundOf(t *testing.T, sh Shape, c fleet.Provider) Bound {
	t.Helper()
	for _, b := range Bounds(sh, DefaultSteps) {
		if b.Cloud == c {
			return b
		}
	}
	t.Fatalf("no %s bound", c)
	return Bound{}
}

// TestAWSBound: two accounts, two regions, worked by hand (docs/performance.md).
func TestAWSBound(t *testing.T) {
	sh := Shape{Scopes: []Scope{
		{Cloud: fleet.AWS, Account: "a1", Region: "r1", Instances: 1500, Metered: 1000, GPUs: 4000, MemGPUs: 4000, CPU: 1000, Memory: 1000, Spot: 450, Types: types("t1", "t2")},
		{Cloud: fleet.AWS, Account: "a2", Region: "r2", Instances: 10, Metered: 10, GPUs: 10, MemGPUs: 10, CPU: 10, Memory: 10, Spot: 1, Types: types("t1")},
	}}
	b := boundOf(t, sh, fleet.AWS)
	want := map[string]int{
		"sts.GetCallerIdentity": 1, "sts.AssumeRole": 1, "ec2.DescribeRegions": 2,
		// a1/r1 2 pages, and one page for each of a1/r2, a2/r1, a2/r2.
		"ec2.DescribeInstances": 5,
		// Spot requests, 200 IDs a call: ⌈450/200⌉ = 3, ⌈1/200⌉ = 1.
		"ec2.DescribeSpotInstanceRequests": 4,
		// Agent series: GPU utilization, memory used and total per GPU, host
		// memory: ⌈(4000 + 2×4000 + 1000)/500⌉ = 26, ⌈(10 + 20 + 10)/500⌉ = 1.
		"monitoring.ListMetrics": 27,
		// Those and CPU, 300 series a call (100,800 / 336 points):
		// ⌈14,000/300⌉ = 47, ⌈50/300⌉ = 1.
		"monitoring.GetMetricData": 48,
		"pricing.GetProducts":      2, "ec2.DescribeSpotPriceHistory": 2, "savingsplans.DescribeSavingsPlansOfferingRates": 2,
		// Commitments held: reservations and capacity reservations per
		// account and region (2 × 2 each), Savings Plans per account.
		"ec2.DescribeReservedInstances": 4, "ec2.DescribeCapacityReservations": 4, "savingsplans.DescribeSavingsPlans": 2,
		// SageMaker's five lists, one empty page per account and region.
		"sagemaker.ListEndpoints": 4, "sagemaker.ListNotebookInstances": 4, "sagemaker.ListApps": 4,
		"sagemaker.ListTrainingJobs": 4, "sagemaker.ListProcessingJobs": 4,
	}
	if diff := cmp.Diff(want, b.Requests); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	if b.Total() != 124 {
		t.Errorf("total %d, want 124", b.Total())
	}
	// a1/r1: identity, regions, 2 instance pages, 3 spot request calls,
	// 26 listing pages, 1 read.
	if b.Chain != 34 {
		t.Errorf("chain %d, want 34", b.Chain)
	}
	if got := b.CriticalPath(50 * time.Millisecond); got != 1700*time.Millisecond {
		t.Errorf("critical path %s, want 1.7s", got)
	}
	// Without spot instances, no spot request is read.
	for i := range sh.Scopes {
		sh.Scopes[i].Spot = 0
	}
	if b := boundOf(t, sh, fleet.AWS); b.Requests["ec2.DescribeSpotInstanceRequests"] != 0 || b.Chain != 31 {
		t.Errorf("no spot: %d spot request calls, chain %d; want 0 and 31", b.Requests["ec2.DescribeSpotInstanceRequests"], b.Chain)
	}
}

// TestAzureBound: two subscriptions in one region.
func TestAzureBound(t *testing.T) {
	sh := Shape{Scopes: []Scope{
		{Cloud: fleet.Azure, Account: "s1", Region: "r1", Instances: 2500, Metered: 120, Running: 120, GPUs: 500, Types: types("x", "y")},
		{Cloud: fleet.Azure, Account: "s2", Region: "r1", Instances: 10, Types: types("x")},
	}}
	b := boundOf(t, sh, fleet.Azure)
	want := map[string]int{
		"subscriptions.ListSubscriptions": 1,
		// One query for both subscriptions, ⌈2,510/1,000⌉ pages.
		"resourcegraph.Resources": 3,
		// Two namespaces × ⌈120/50⌉ batches; s2 has no metered VM.
		"monitor.MetricsBatch": 6,
		// 2 sizes × 10 rows on one page.
		"prices.RetailPrices": 1,
		// The region's local NVMe disks, for both subscriptions.
		"compute.ListSKUs": 1,
		// The tenant's reservations and savings plans, one list each.
		"capacity.ListReservations": 1, "billingbenefits.ListSavingsPlans": 1,
		// Each subscription's Azure ML workspaces, one list each.
		"machinelearning.ListWorkspaces": 2,
	}
	if diff := cmp.Diff(want, b.Requests); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	// ListSubscriptions, 3 graph pages, the region's Resource SKUs, one
	// round of metrics.
	if b.Chain != 6 {
		t.Errorf("chain %d, want 6", b.Chain)
	}
}

// TestAzureBoundReadsBothTables: a fleet on one Resource Graph page still
// takes two queries, one of Resources (VMs) and one of ComputeResources
// (Uniform scale-set members).
func TestAzureBoundReadsBothTables(t *testing.T) {
	b := boundOf(t, Shape{Scopes: []Scope{{Cloud: fleet.Azure, Account: "s1", Region: "r1", Instances: 10, Types: types("x")}}}, fleet.Azure)
	if n := b.Requests["resourcegraph.Resources"]; n != 2 {
		t.Errorf("%d Resource Graph queries, want 2", n)
	}
}

// TestGCPBound: a project in two regions and a project with one unmetered VM.
func TestGCPBound(t *testing.T) {
	sh := Shape{Scopes: []Scope{
		{Cloud: fleet.GCP, Account: "p1", Region: "r1", Instances: 600, Metered: 100, GPUs: 400, MemGPUs: 400, CPU: 100, Memory: 100, Types: types("a2")},
		{Cloud: fleet.GCP, Account: "p1", Region: "r2", Instances: 100, Metered: 50, GPUs: 50, MemGPUs: 50, CPU: 50, Memory: 50, Types: types("g2")},
		{Cloud: fleet.GCP, Account: "p2", Region: "r1", Instances: 1, Types: types("a2")},
	}}
	b := boundOf(t, sh, fleet.GCP)
	want := map[string]int{
		"cloudresourcemanager.projects.search": 1, "cloudbilling.services.skus.list": 1,
		// ⌈700/500⌉ + 1.
		"compute.instances.aggregatedList": 3,
		// p1: GPU utilization ⌈450×336/100,000⌉ = 2, GPU memory ⌈900×336/100,000⌉ = 4,
		// CPU and host memory ⌈150×336/100,000⌉ = 1 each; p2 nothing to read.
		"monitoring.ListTimeSeries": 8,
		// Commitments and reservations held, one aggregated list per project.
		"compute.regionCommitments.aggregatedList": 2, "compute.reservations.aggregatedList": 2,
		// Vertex AI: two lists per region scope, Workbench one per project.
		"aiplatform.projects.locations.endpoints.list": 3, "aiplatform.projects.locations.customJobs.list": 3,
		"notebooks.projects.locations.instances.list": 2,
	}
	if diff := cmp.Diff(want, b.Requests); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	// p1: search, 2 listing pages, the Workbench listing and a region's two
	// Vertex AI lists, r1's GPU memory pages (⌈800×336/100,000⌉ = 3).
	if b.Chain != 9 {
		t.Errorf("chain %d, want 9", b.Chain)
	}
}

// TestShapeOf: scopes per cloud, account and region; only running
// instances with GPU utilization are metered, spot GPU instances count
// stopped or not (an FPGA one not), a fractional GPU is one series,
// an FPGA (no accelerator memory) is not metered, and each metric counts
// where the fleet has it.
func TestShapeOf(t *testing.T) {
	full := &fleet.Utilization{GPU: &fleet.Stats{}, GPUMemory: &fleet.Stats{}, CPU: &fleet.Stats{}, Memory: &fleet.Stats{}}
	gpuOnly := &fleet.Utilization{GPU: &fleet.Stats{}}
	hostOnly := &fleet.Utilization{CPU: &fleet.Stats{}}
	f := &fleet.Fleet{Instances: []fleet.Instance{
		{Provider: fleet.AWS, Account: "a", Region: "r", InstanceType: "p4d.24xlarge", GPU: fleet.GPU{Count: 8, MemoryGiB: 40}, Utilization: full},
		{Provider: fleet.AWS, Account: "a", Region: "r", InstanceType: "g6f.large", GPU: fleet.GPU{Count: 0.125, MemoryGiB: 2.8}, Utilization: gpuOnly},
		{Provider: fleet.AWS, Account: "a", Region: "r", InstanceType: "p4d.24xlarge", GPU: fleet.GPU{Count: 8, MemoryGiB: 40}, Lifecycle: fleet.Spot},
		{Provider: fleet.AWS, Account: "a", Region: "r", InstanceType: "p4d.24xlarge", GPU: fleet.GPU{Count: 8, MemoryGiB: 40}, Utilization: hostOnly},
		{Provider: fleet.AWS, Account: "a", Region: "r", InstanceType: "p5.48xlarge", GPU: fleet.GPU{Count: 8, MemoryGiB: 40}, State: fleet.Stopped, Lifecycle: fleet.Spot, Utilization: full},
		{Provider: fleet.GCP, Account: "p", Region: "r", InstanceType: "a2-highgpu-1g", GPU: fleet.GPU{Count: 1, MemoryGiB: 40}, Utilization: full},
		{Provider: fleet.AWS, Account: "a", Region: "r", InstanceType: "f2.48xlarge", GPU: fleet.GPU{Count: 8}, Lifecycle: fleet.Spot, Utilization: full},
	}}
	got := ShapeOf(f)
	want := Shape{Scopes: []Scope{
		{Cloud: fleet.AWS, Account: "a", Region: "r", Instances: 6, Metered: 2, Running: 4, GPUs: 9, MemGPUs: 8, CPU: 1, Memory: 1, Spot: 2, Types: types("p4d.24xlarge", "g6f.large", "p5.48xlarge", "f2.48xlarge")},
		{Cloud: fleet.GCP, Account: "p", Region: "r", Instances: 1, Metered: 1, Running: 1, GPUs: 1, MemGPUs: 1, CPU: 1, Memory: 1, Types: types("a2-highgpu-1g")},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("shape (-want +got):\n%s", diff)
	}
	if n := len(Bounds(got, DefaultSteps)); n != 2 {
		t.Errorf("%d bounds for two clouds", n)
	}
}

func TestCountsPlaceEveryOperation(t *testing.T) {
	c, err := countsOf(map[string]map[string]int{
		"monitoring": {"GetMetricData": 2, "ListTimeSeries": 3},
		"compute":    {"ListSKUs": 1, "instances.aggregatedList": 4, "resourcePolicies.aggregatedList": 2},
		"ec2":        {"DescribeInstances": 5, "DescribeSpotInstanceRequests": 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.Cloud(fleet.AWS) != 8 || c.Cloud(fleet.GCP) != 9 || c.Cloud(fleet.Azure) != 1 || c.Total() != 18 {
		t.Errorf("aws %d, gcp %d, azure %d, total %d", c.Cloud(fleet.AWS), c.Cloud(fleet.GCP), c.Cloud(fleet.Azure), c.Total())
	}
	if _, err := countsOf(map[string]map[string]int{"newservice": {"Op": 1}}); err == nil {
		t.Error("an operation of no known cloud was counted")
	}
}

func TestFmtInt(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 100000: "100,000", 1234567: "1,234,567", -1500: "-1,500"} {
		if got := fmtInt(n); got != want {
			t.Errorf("fmtInt(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestPrintPartialScanPassesNothing: a scan that exited 3 is printed with
// its figures and what failed, and no scan target passes on it.
func TestPrintPartialScanPassesNothing(t *testing.T) {
	b := Bound{Cloud: fleet.AWS, Requests: map[string]int{"ec2.DescribeInstances": 10}, Chain: 4}
	rows := []Row{{
		Name: "scan", N: 100, Latency: 50 * time.Millisecond, Live: true, Bounds: []Bound{b},
		Requests: Counts{{Cloud: fleet.AWS, Op: "ec2.DescribeInstances", N: 11}},
		Client:   Usage{Wall: time.Second, CPU: time.Second, PeakRSS: 1 << 20}, Sim: Usage{CPU: time.Second},
		Partial: "partial results (exit 3): ListTimeSeries timed out",
	}}
	var out strings.Builder
	Print(&out, rows, 100)
	s := out.String()
	if !strings.Contains(s, "ListTimeSeries timed out") || strings.Contains(s, "PASS  requests") || !strings.Contains(s, "FAIL  requests ≤ 1.2 × physical bound at 100: 11 vs 10") {
		t.Errorf("partial scan printed as:\n%s", s)
	}
}

// TestMedianUsage: an engine row shows the run of median CPU, the lower
// middle of an even count, with the highest peak of all its runs.
func TestMedianUsage(t *testing.T) {
	u := func(cpu, rss int) Usage {
		return Usage{Wall: time.Duration(cpu) * time.Second / 2, CPU: time.Duration(cpu) * time.Second, PeakRSS: int64(rss)}
	}
	for _, c := range []struct {
		runs []Usage
		want Usage
	}{
		{[]Usage{u(7, 10)}, u(7, 10)},
		{[]Usage{u(9, 10), u(6, 30), u(7, 20)}, Usage{Wall: u(7, 0).Wall, CPU: 7 * time.Second, PeakRSS: 30}},
		{[]Usage{u(9, 10), u(6, 5), u(7, 20), u(8, 1)}, Usage{Wall: u(7, 0).Wall, CPU: 7 * time.Second, PeakRSS: 20}},
	} {
		if got := medianUsage(c.runs); got != c.want {
			t.Errorf("medianUsage(%v) = %v, want %v", c.runs, got, c.want)
		}
	}
}
