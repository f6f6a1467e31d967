package contract_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers/azure/sim"
	"github.com/gpufinops/gpufinops/providers/azure/sim/contract"
)

const sub = "11111111-1111-1111-1111-111111111111"

var now = time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)

// testFleet has 60 standalone VMs (two pages of a VM list), one spot VM and
// a Uniform scale set of three.
func testFleet() *fleet.Fleet {
	f := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind}
	add := func(id string, life fleet.Lifecycle, tags map[string]string) {
		f.Instances = append(f.Instances, fleet.Instance{ID: id, Provider: fleet.Azure, Account: sub, Region: "eastus", Zone: "eastus-1",
			InstanceType: "Standard_NC24ads_A100_v4", Lifecycle: life, State: fleet.Running, GPU: fleet.GPU{Model: "A100-80GB", Count: 1}, Tags: tags})
	}
	for i := range 60 {
		add(fmt.Sprintf("vm-%03d", i), fleet.OnDemand, nil)
	}
	add("spot-000", fleet.Spot, nil)
	for i := range 3 {
		add(fmt.Sprintf("node-%d", i), fleet.OnDemand, map[string]string{"virtualMachineScaleSet": "gpu-pool"})
	}
	f.Commitments = testCommitments()
	f.Instances = append(f.Instances, testAML()...)
	return f
}

// amlWS is the Azure ML workspace of testAML.
const amlWS = "/subscriptions/" + sub + "/resourceGroups/ml-rg/providers/Microsoft.MachineLearningServices/workspaces/ws-ml"

// testAML is an Azure ML workspace: an endpoint with two managed online
// deployments (one autoscaled), three compute instances and a compute
// cluster, so that the compute list has two pages at testOptions' AMLPage.
func testAML() []fleet.Instance {
	week := &fleet.TimeRange{Start: now.Add(-7 * 24 * time.Hour), End: now}
	util := &fleet.Utilization{Window: week, GPU: &fleet.Stats{Avg: 5, P95: 9, Max: 14}, GPUMemory: &fleet.Stats{Avg: 30, P95: 31, Max: 31}}
	n := func(v float64) *float64 { return &v }
	i := func(v int) *int { return &v }
	item := func(id, size string, m fleet.Managed) fleet.Instance {
		return fleet.Instance{ID: amlWS + id, Provider: fleet.Azure, Account: sub, Region: "eastus", InstanceType: size, State: fleet.Running,
			GPU: fleet.GPU{Model: "A100-80GB", Count: 1}, Utilization: util, Tags: map[string]string{"team": "ml"}, Managed: &m}
	}
	return []fleet.Instance{
		item("/onlineEndpoints/scorer/deployments/blue", "Standard_NC24ads_A100_v4", fleet.Managed{Service: fleet.AzureML, Kind: fleet.KindEndpoint,
			Workspace: "ws-ml", Endpoint: "scorer", Deployment: "blue", Replicas: &fleet.Replicas{Current: 3}, Requests: n(604800)}),
		item("/onlineEndpoints/scorer/deployments/green", "Standard_NC24ads_A100_v4", fleet.Managed{Service: fleet.AzureML, Kind: fleet.KindEndpoint,
			Workspace: "ws-ml", Endpoint: "scorer", Deployment: "green", Replicas: &fleet.Replicas{Current: 1, Min: i(1), Max: i(4)}}),
		item("/computes/ci-0", "Standard_NC4as_T4_v3", fleet.Managed{Service: fleet.AzureML, Kind: fleet.KindNotebook, Workspace: "ws-ml"}),
		item("/computes/ci-1", "Standard_NC4as_T4_v3", fleet.Managed{Service: fleet.AzureML, Kind: fleet.KindNotebook, Workspace: "ws-ml"}),
		item("/computes/ci-2", "Standard_NC4as_T4_v3", fleet.Managed{Service: fleet.AzureML, Kind: fleet.KindNotebook, Workspace: "ws-ml"}),
		item("/computes/gpu-cluster", "Standard_NC24ads_A100_v4", fleet.Managed{Service: fleet.AzureML, Kind: fleet.KindComputeCluster, Workspace: "ws-ml",
			Replicas: &fleet.Replicas{Current: 2, Min: i(0), Max: i(8)}, IdleShutdownMinutes: n(30), Jobs: n(0)}),
	}
}

// testCommitments are three reservations and three savings plans, one of
// each expired, in every applied scope the simulator words: two pages of
// each list at testOptions' CommitmentPage.
func testCommitments() []fleet.Held {
	at := func(y int, m time.Month) *time.Time { t := time.Date(y, m, 1, 0, 0, 0, 0, time.UTC); return &t }
	rg := "/subscriptions/" + sub + "/resourceGroups/rg-gpu-eastus"
	rsv := func(n int, scope fleet.HeldScope, term, pay string, start, end *time.Time) fleet.Held {
		return fleet.Held{ID: fmt.Sprintf("/providers/Microsoft.Capacity/reservationOrders/11111111-0000-4000-8000-00000000000%d/reservations/22222222-0000-4000-8000-00000000000%d", n, n),
			Provider: fleet.Azure, Account: sub, Kind: "reservation", Scope: scope, Term: term, Payment: pay, Start: start, End: end,
			InstanceType: "Standard_NC24ads_A100_v4", Count: 2, SizeFlexible: n%2 == 1}
	}
	sp := func(n int, scope fleet.HeldScope, term, pay, hourly string, start, end *time.Time) fleet.Held {
		d := decimal.RequireFromString(hourly)
		return fleet.Held{ID: fmt.Sprintf("/providers/Microsoft.BillingBenefits/savingsPlanOrders/33333333-0000-4000-8000-00000000000%d/savingsPlans/44444444-0000-4000-8000-00000000000%d", n, n),
			Provider: fleet.Azure, Account: sub, Kind: "savings-plan", Scope: scope, Term: term, Payment: pay, Start: start, End: end, HourlyCommitment: &d}
	}
	return []fleet.Held{
		rsv(1, fleet.HeldScope{Level: "shared", Region: "eastus"}, "1y", "monthly", at(2026, 1), at(2027, 1)),
		rsv(2, fleet.HeldScope{Level: "account", Region: "eastus", Accounts: []string{sub}}, "3y", "all-upfront", at(2025, 3), at(2028, 3)),
		rsv(3, fleet.HeldScope{Level: "resource-group", Region: "eastus", Accounts: []string{rg}}, "1y", "all-upfront", at(2025, 1), at(2026, 1)),
		sp(1, fleet.HeldScope{Level: "shared"}, "1y", "monthly", "12.5", at(2026, 2), at(2027, 2)),
		sp(2, fleet.HeldScope{Level: "management-group", Accounts: []string{"/providers/Microsoft.Management/managementGroups/ml"}}, "3y", "all-upfront", "4.25", at(2025, 6), at(2028, 6)),
		sp(3, fleet.HeldScope{Level: "account", Accounts: []string{sub}}, "1y", "all-upfront", "2", at(2024, 6), at(2025, 6)),
	}
}

func testOptions() sim.Options {
	o := sim.Options{Subscription: sub, Now: func() time.Time { return now }, CommitmentPage: 2, AMLPage: 2,
		Sizes: []sim.Size{{Name: "Standard_NC24ads_A100_v4", GPUs: 1, VCPUs: 24, Mem: 220}}}
	for i := range 200 {
		o.Prices = append(o.Prices, sim.PriceRow{Region: "eastus", Size: fmt.Sprintf("Standard_NC%dads_A100_v4", i), OnDemand: "3.67", Spot: "0.9",
			Reservation1y: "20000", Reservation3y: "50000", SavingsPlan1y: "2.5", SavingsPlan3y: "1.8"})
	}
	return o
}

// strictSim is a simulator in strict mode.
func strictSim(t *testing.T, o sim.Options) (*httptest.Server, *sim.Server) {
	t.Helper()
	o.Contract = contract.New()
	s := sim.New(testFleet(), o)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv, s
}

type answer struct {
	req    *http.Request
	body   []byte // the request's
	status int
	header http.Header
	data   []byte
}

func (a answer) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(a.data, &m); err != nil {
		t.Fatalf("%s %s: %v: %s", a.req.Method, a.req.URL, err, a.data)
	}
	return m
}

func do(t *testing.T, method, rawURL string, body any) answer {
	t.Helper()
	var b []byte
	if body != nil {
		b, _ = json.Marshal(body)
	}
	req, err := http.NewRequest(method, rawURL, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer x")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	check, _ := http.NewRequest(method, rawURL, nil) // what the checker sees: the URL as sent
	check.Host = req.URL.Host
	return answer{req: check, body: b, status: resp.StatusCode, header: resp.Header, data: data}
}

// A call is one request of the contract test, with the simulator operation
// it exercises.
type call struct {
	op, method, path string
	query            url.Values
	body             any
	status           int
}

const (
	vmPath  = "/subscriptions/" + sub + "/resourceGroups/rg-gpu-eastus/providers/Microsoft.Compute/virtualMachines/"
	vmID    = vmPath + "vm-001"
	cpuName = "Percentage CPU"
)

func q(kv ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return v
}

func calls() []call {
	span := now.Add(-3*time.Hour).Format(time.RFC3339) + "/" + now.Format(time.RFC3339)
	graph := map[string]any{"query": "Resources | where type =~ 'microsoft.compute/virtualmachines' | project id, name, location",
		"subscriptions": []string{sub}, "options": map[string]any{"$top": 25, "resultFormat": "objectArray"}}
	return []call{
		{op: "subscriptions:ListSubscriptions", method: "GET", path: "/subscriptions", query: q("api-version", "2022-12-01")},
		{op: "subscriptions:GetSubscription", method: "GET", path: "/subscriptions/" + sub, query: q("api-version", "2022-12-01")},
		{op: "subscriptions:GetSubscription", method: "GET", path: "/subscriptions/22222222-2222-2222-2222-222222222222", query: q("api-version", "2022-12-01"), status: 404},
		{op: "subscriptions:ListLocations", method: "GET", path: "/subscriptions/" + sub + "/locations", query: q("api-version", "2022-12-01")},
		{op: "resourcegraph:Resources", method: "POST", path: "/providers/Microsoft.ResourceGraph/resources", query: q("api-version", "2024-04-01"), body: graph},
		{op: "resourcegraph:Resources", method: "POST", path: "/providers/Microsoft.ResourceGraph/resources", query: q("api-version", "2024-04-01"),
			body: map[string]any{"query": "Resources | frobnicate", "subscriptions": []string{sub}}, status: 400},
		{op: "compute:ListAllVMs", method: "GET", path: "/subscriptions/" + sub + "/providers/Microsoft.Compute/virtualMachines", query: q("api-version", "2025-04-01")},
		{op: "compute:ListAllVMs", method: "GET", path: "/subscriptions/" + sub + "/providers/Microsoft.Compute/virtualMachines", query: q("api-version", "2025-04-01", "statusOnly", "true")},
		{op: "compute:ListAllScaleSets", method: "GET", path: "/subscriptions/" + sub + "/providers/Microsoft.Compute/virtualMachineScaleSets", query: q("api-version", "2025-04-01")},
		{op: "compute:ListScaleSetVMs", method: "GET", path: "/subscriptions/" + sub + "/resourceGroups/rg-gpu-eastus/providers/Microsoft.Compute/virtualMachineScaleSets/gpu-pool/virtualMachines",
			query: q("api-version", "2025-04-01", "$expand", "instanceView")},
		{op: "compute:ListSKUs", method: "GET", path: "/subscriptions/" + sub + "/providers/Microsoft.Compute/skus", query: q("api-version", "2021-07-01", "$filter", "location eq 'eastus'")},
		{op: "compute:GetVM", method: "GET", path: vmID, query: q("api-version", "2025-04-01", "$expand", "instanceView")},
		{op: "compute:GetVM", method: "GET", path: vmPath + "no-such-vm", query: q("api-version", "2025-04-01"), status: 404},
		{op: "compute:InstanceView", method: "GET", path: vmID + "/instanceView", query: q("api-version", "2025-04-01")},
		{op: "compute:Deallocate", method: "POST", path: vmPath + "vm-002/deallocate", query: q("api-version", "2025-04-01"), status: 202},
		{op: "compute:PowerOff", method: "POST", path: vmPath + "vm-003/powerOff", query: q("api-version", "2025-04-01"), status: 202},
		{op: "monitor:Metrics", method: "GET", path: vmID + "/providers/Microsoft.Insights/metrics", query: q("api-version", "2023-10-01",
			"metricnamespace", "Microsoft.Compute/virtualMachines", "metricnames", cpuName, "timespan", span, "interval", "PT1H", "aggregation", "average")},
		{op: "monitor:MetricsBatch", method: "POST", path: "/subscriptions/" + sub + "/metrics:getBatch", query: q("api-version", "2024-02-01",
			"metricnamespace", "Microsoft.Compute/virtualMachines", "metricnames", cpuName, "starttime", now.Add(-3*time.Hour).Format(time.RFC3339),
			"endtime", now.Format(time.RFC3339), "interval", "PT1H", "aggregation", "average"),
			body: map[string]any{"resourceids": []string{vmID, vmPath + "vm-004"}}},
		{op: "authorization:ListPermissions", method: "GET", path: "/subscriptions/" + sub + "/providers/Microsoft.Authorization/permissions", query: q("api-version", "2022-04-01")},
		{op: "authorization:ListPermissions", method: "GET", path: "/subscriptions/" + sub + "/resourcegroups/rg-gpu-eastus/providers/Microsoft.Authorization/permissions", query: q("api-version", "2022-04-01")},
		{op: "prices:RetailPrices", method: "GET", path: "/api/retail/prices", query: q("api-version", "2023-01-01-preview",
			"$filter", "serviceName eq 'Virtual Machines' and armRegionName eq 'eastus'")},
		// The commitment lists: the first page, whose nextLink the loop
		// follows, and a $skiptoken past the end (400).
		{op: "capacity:ListReservations", method: "GET", path: "/providers/Microsoft.Capacity/reservations", query: q("api-version", "2022-11-01")},
		{op: "capacity:ListReservations", method: "GET", path: "/providers/Microsoft.Capacity/reservations", query: q("api-version", "2022-11-01", "$skiptoken", "99"), status: 400},
		{op: "billingbenefits:ListSavingsPlans", method: "GET", path: "/providers/Microsoft.BillingBenefits/savingsPlans", query: q("api-version", "2022-11-01")},
		{op: "billingbenefits:ListSavingsPlans", method: "GET", path: "/providers/Microsoft.BillingBenefits/savingsPlans", query: q("api-version", "2022-11-01", "$skiptoken", "99"), status: 400},
		// Azure ML: the lists (the computes' two pages by nextLink), a
		// compute, a stop and its operation, and the refusals.
		{op: "machinelearning:ListWorkspaces", method: "GET", path: "/subscriptions/" + sub + "/providers/Microsoft.MachineLearningServices/workspaces", query: q("api-version", sim.AMLVersion)},
		{op: "machinelearning:ListOnlineEndpoints", method: "GET", path: amlWS + "/onlineEndpoints", query: q("api-version", sim.AMLVersion)},
		{op: "machinelearning:ListOnlineEndpoints", method: "GET", path: strings.Replace(amlWS, "ws-ml", "ws-none", 1) + "/onlineEndpoints", query: q("api-version", sim.AMLVersion), status: 404},
		{op: "machinelearning:ListOnlineDeployments", method: "GET", path: amlWS + "/onlineEndpoints/scorer/deployments", query: q("api-version", sim.AMLVersion)},
		{op: "machinelearning:ListOnlineDeployments", method: "GET", path: amlWS + "/onlineEndpoints/nothing/deployments", query: q("api-version", sim.AMLVersion), status: 404},
		{op: "machinelearning:ListComputes", method: "GET", path: amlWS + "/computes", query: q("api-version", sim.AMLVersion)},
		{op: "machinelearning:GetCompute", method: "GET", path: amlWS + "/computes/gpu-cluster", query: q("api-version", sim.AMLVersion)},
		{op: "machinelearning:GetCompute", method: "GET", path: amlWS + "/computes/no-such", query: q("api-version", sim.AMLVersion), status: 404},
		{op: "machinelearning:StopCompute", method: "POST", path: amlWS + "/computes/ci-1/stop", query: q("api-version", sim.AMLVersion), status: 202},
		{op: "machinelearning:StopCompute", method: "POST", path: amlWS + "/computes/gpu-cluster/stop", query: q("api-version", sim.AMLVersion), status: 400},
		{op: "monitor:MetricsBatch", method: "POST", path: "/subscriptions/" + sub + "/metrics:getBatch", query: q("api-version", "2024-02-01",
			"metricnamespace", sim.AMLDeploymentNamespace, "metricnames", "GpuUtilizationPercentage,GpuMemoryUtilizationPercentage", "starttime", now.Add(-3*time.Hour).Format(time.RFC3339),
			"endtime", now.Format(time.RFC3339), "interval", "PT1H", "aggregation", "average", "filter", "instanceId eq '*'"),
			body: map[string]any{"resourceids": []string{amlWS + "/onlineEndpoints/scorer/deployments/blue", amlWS + "/onlineEndpoints/scorer/deployments/green"}}},
		{op: "monitor:MetricsBatch", method: "POST", path: "/subscriptions/" + sub + "/metrics:getBatch", query: q("api-version", "2024-02-01",
			"metricnamespace", sim.AMLWorkspaceNamespace, "metricnames", "GpuUtilizationPercentage,Active Nodes", "starttime", now.Add(-3*time.Hour).Format(time.RFC3339),
			"endtime", now.Format(time.RFC3339), "interval", "PT1H", "aggregation", "average", "filter", "ComputeName eq '*'"),
			body: map[string]any{"resourceids": []string{amlWS}}},
	}
}

// follow is the URL of an answer's next page, its long-running operation
// or nothing.
func follow(t *testing.T, a answer) []string {
	t.Helper()
	var out []string
	if u := a.header.Get("Azure-AsyncOperation"); u != "" {
		out = append(out, u, a.header.Get("Location"))
	}
	if a.status != 200 || len(a.data) == 0 {
		return out
	}
	m := a.json(t)
	for _, k := range []string{"nextLink", "NextPageLink"} {
		if s, _ := m[k].(string); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// TestEveryOperationMeetsItsModel drives every operation the simulator
// serves, success and error answers, through the simulator's strict mode:
// each request and answer is checked against its model. Every operation
// of sim.Ops must have a call here, so a new route without a contract fails.
func TestEveryOperationMeetsItsModel(t *testing.T) {
	srv, s := strictSim(t, testOptions())
	checker := contract.New()
	seen := map[string]int{}
	requests := 0
	for _, c := range calls() {
		u := srv.URL + c.path + "?" + c.query.Encode()
		a := do(t, c.method, u, c.body)
		requests++
		want := c.status
		if want == 0 {
			want = 200
		}
		if a.status != want {
			t.Errorf("%s %s: %d, want %d: %s", c.method, c.path, a.status, want, a.data)
		}
		if got := checker.Operation(c.method, c.path); got != c.op {
			t.Errorf("%s %s: the models bind it to %q, the test to %q", c.method, c.path, got, c.op)
		}
		seen[c.op]++
		// Later pages, the operation status and its Location poll.
		pending := follow(t, a)
		for len(pending) > 0 {
			next := pending[0]
			pending = pending[1:]
			if next == "" {
				continue
			}
			pu, _ := url.Parse(next)
			op := checker.Operation(c.method, pu.Path)
			method := c.method
			if op == "" || c.op == "compute:Deallocate" || c.op == "compute:PowerOff" {
				method, op = "GET", checker.Operation("GET", pu.Path)
			}
			b := c.body
			if c.op == "resourcegraph:Resources" {
				continue
			}
			na := do(t, method, next, b)
			requests++
			seen[op]++
			pending = append(pending, follow(t, na)...)
		}
		if c.op == "resourcegraph:Resources" && a.status == 200 {
			requests += graphPages(t, srv.URL+c.path+"?"+c.query.Encode(), c.body.(map[string]any), a)
		}
	}
	for _, op := range []string{"capacity:ListReservations", "billingbenefits:ListSavingsPlans"} {
		if seen[op] < 3 { // the first page, the next one by nextLink, the 400
			t.Errorf("%s: %d requests, want its pages followed by nextLink", op, seen[op])
		}
	}
	for _, v := range s.Violations() {
		t.Error(v)
	}
	var ops []string
	for op := range seen {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	want := slices.Sorted(slices.Values(sim.Ops))
	if !slices.Equal(ops, want) {
		t.Errorf("operations with a contract call %q, the simulator serves %q", ops, want)
	}
	bound := map[string]bool{}
	for _, b := range checker.Spec().Bindings() {
		bound[b.Sim] = true
	}
	if len(bound) != len(sim.Ops) {
		t.Errorf("models/manifest.json binds %d operations, the simulator serves %d", len(bound), len(sim.Ops))
	}
	t.Logf("%d of %d simulated Azure operations checked against their models (%d requests, %d model bindings)", len(ops), len(sim.Ops), requests, len(checker.Spec().Bindings()))
}

// graphPages follows a Resource Graph query's $skipToken to the end and
// checks the pages add up to totalRecords without repeating a row.
func graphPages(t *testing.T, u string, body map[string]any, first answer) int {
	t.Helper()
	m := first.json(t)
	total := int(m["totalRecords"].(float64))
	ids := map[string]bool{}
	requests := 0
	for {
		for _, row := range m["data"].([]any) {
			id := row.(map[string]any)["id"].(string)
			if ids[id] {
				t.Errorf("Resource Graph paging repeats %s", id)
			}
			ids[id] = true
		}
		tok, _ := m["$skipToken"].(string)
		if tok == "" {
			break
		}
		opts := map[string]any{"$top": body["options"].(map[string]any)["$top"], "$skipToken": tok}
		a := do(t, "POST", u, map[string]any{"query": body["query"], "subscriptions": body["subscriptions"], "options": opts})
		requests++
		m = a.json(t)
	}
	if len(ids) != total {
		t.Errorf("Resource Graph pages hold %d rows, totalRecords %d", len(ids), total)
	}
	return requests
}

// TestThrottledAnswersMeetTheirDialect: each service's 429, with the
// simulator's default Retry-After, passes the strict mode's checks.
func TestThrottledAnswersMeetTheirDialect(t *testing.T) {
	o := testOptions()
	o.ThrottleRate = 1
	srv, s := strictSim(t, o)
	n := 0
	for _, c := range calls() {
		a := do(t, c.method, srv.URL+c.path+"?"+c.query.Encode(), c.body)
		if a.status != 429 {
			t.Errorf("%s %s: %d, want 429", c.method, c.path, a.status)
		}
		n++
	}
	for _, v := range s.Violations() {
		t.Error(v)
	}
	t.Logf("%d throttled answers checked", n)
}

func TestModelsResolve(t *testing.T) {
	spec, err := contract.Models()
	if err != nil {
		t.Fatal(err)
	}
	all, unresolved := spec.Refs()
	if len(unresolved) > 0 {
		t.Errorf("references that resolve nowhere and are neither pruned nor absent: %q", unresolved)
	}
	for _, r := range append(append([]string{}, spec.Manifest.Prune...), spec.Manifest.Absent...) {
		if !slices.Contains(all, r) {
			t.Errorf("manifest lists %s, which no kept model refers to", r)
		}
	}
	t.Logf("%d references, %d pruned, %d absent from the published models", len(all), len(spec.Manifest.Prune), len(spec.Manifest.Absent))
}

// mutate decodes an answer, changes it and encodes it again.
func mutate(t *testing.T, data []byte, f func(m map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	f(m)
	b, _ := json.Marshal(m)
	return b
}

func first(m map[string]any, key string) map[string]any {
	return m[key].([]any)[0].(map[string]any)
}

func props(m map[string]any) map[string]any { return m["properties"].(map[string]any) }

// TestCorruptedAnswersFail: a genuine answer of each operation passes, and
// each corruption of it (an unknown field where the model is closed, a
// wrong type, a value outside a closed enum, a missing required field, a
// bad date, a null, a bad page link or count, an ARM error without its
// code, a 429 without its headers, a body the model does not have, a
// definition the trimmed copy left out) fails. An extensible enum's new
// value passes.
func TestCorruptedAnswersFail(t *testing.T) {
	o := testOptions()
	srv := httptest.NewServer(sim.New(testFleet(), o))
	t.Cleanup(srv.Close)
	o.ThrottleRate = 1
	throttled := httptest.NewServer(sim.New(testFleet(), o))
	t.Cleanup(throttled.Close)
	byOp := map[string]call{}
	for _, c := range calls() {
		if _, ok := byOp[c.op]; !ok && c.status/100 != 4 {
			byOp[c.op] = c
		}
	}
	get := func(base, op string) answer {
		c := byOp[op]
		return do(t, c.method, base+c.path+"?"+c.query.Encode(), c.body)
	}
	notFound := do(t, "GET", srv.URL+vmPath+"no-such-vm?api-version=2025-04-01", nil)
	cases := []struct {
		name, op string
		base     string
		pass     bool
		src      *answer
		change   func(a *answer)
	}{
		{name: "unknown VM property", op: "compute:ListAllVMs", change: func(a *answer) {
			a.data = mutate(t, a.data, func(m map[string]any) { props(first(m, "value"))["gpuCount"] = 1 })
		}},
		{name: "location a number", op: "compute:ListAllVMs", change: func(a *answer) {
			a.data = mutate(t, a.data, func(m map[string]any) { first(m, "value")["location"] = 5 })
		}},
		{name: "name null", op: "compute:ListAllVMs", change: func(a *answer) {
			a.data = mutate(t, a.data, func(m map[string]any) { first(m, "value")["name"] = nil })
		}},
		{name: "timeCreated not a date-time", op: "compute:ListAllVMs", change: func(a *answer) {
			a.data = mutate(t, a.data, func(m map[string]any) { props(first(m, "value"))["timeCreated"] = "yesterday" })
		}},
		{name: "extensible priority value", op: "compute:ListAllVMs", pass: true, change: func(a *answer) {
			a.data = mutate(t, a.data, func(m map[string]any) { props(first(m, "value"))["priority"] = "Turbo" })
		}},
		{name: "savings plans rolled up in summary", op: "billingbenefits:ListSavingsPlans", change: func(a *answer) {
			a.data = mutate(t, a.data, func(m map[string]any) {
				m["summary"] = map[string]any{"succeededCount": 1}
				delete(m, "additionalProperties")
			})
		}},
		{name: "savings plan without its sku", op: "billingbenefits:ListSavingsPlans", change: func(a *answer) {
			a.data = mutate(t, a.data, func(m map[string]any) { delete(first(m, "value"), "sku") })
		}},
		{name: "savings plan commitment amount a string", op: "billingbenefits:ListSavingsPlans", change: func(a *answer) {
			a.data = mutate(t, a.data, func(m map[string]any) {
				props(first(m, "value"))["commitment"].(map[string]any)["amount"] = "12.5"
			})
		}},
		{name: "reservation kind outside its closed enum", op: "capacity:ListReservations", change: func(a *answer) {
			a.data = mutate(t, a.data, func(m map[string]any) { first(m, "value")["kind"] = "Microsoft.Sql" })
		}},
		{name: "reservation quantity a fraction", op: "capacity:ListReservations", change: func(a *answer) {
			a.data = mutate(t, a.data, func(m map[string]any) { props(first(m, "value"))["quantity"] = 1.5 })
		}},
		{name: "reservation expiryDateTime not a date-time", op: "capacity:ListReservations", change: func(a *answer) {
			a.data = mutate(t, a.data, func(m map[string]any) { props(first(m, "value"))["expiryDateTime"] = "2027-01-01" })
		}},
		{name: "reservations summary with an unknown count", op: "capacity:ListReservations", change: func(a *answer) {
			a.data = mutate(t, a.data, func(m map[string]any) { m["summary"].(map[string]any)["archivedCount"] = 0 })
		}},
		{name: "a definition the trimmed copy leaves out", op: "compute:ListAllVMs", change: func(a *answer) {
			a.data = mutate(t, a.data, func(m map[string]any) { props(first(m, "value"))["storageProfile"] = map[string]any{} })
		}},
		{name: "value missing", op: "compute:ListAllScaleSets", change: func(a *answer) {
			a.data = mutate(t, a.data, func(m map[string]any) { delete(m, "value") })
		}},
		{name: "nextLink relative", op: "compute:ListAllVMs", change: func(a *answer) {
			a.data = mutate(t, a.data, func(m map[string]any) {
				u, _ := url.Parse(m["nextLink"].(string))
				m["nextLink"] = u.RequestURI()
			})
		}},
		{name: "nextLink to another list", op: "compute:ListAllVMs", change: func(a *answer) {
			a.data = mutate(t, a.data, func(m map[string]any) {
				m["nextLink"] = strings.Replace(m["nextLink"].(string), "virtualMachines", "disks", 1)
			})
		}},
		{name: "nextLink without api-version", op: "compute:ListAllVMs", change: func(a *answer) {
			a.data = mutate(t, a.data, func(m map[string]any) {
				m["nextLink"] = strings.Replace(m["nextLink"].(string), "api-version=", "x=", 1)
			})
		}},
		{name: "closed enum level", op: "compute:InstanceView", change: func(a *answer) {
			a.data = mutate(t, a.data, func(m map[string]any) { first(m, "statuses")["level"] = "Loud" })
		}},
		{name: "scale-set VM sku a string", op: "compute:ListScaleSetVMs", change: func(a *answer) {
			a.data = mutate(t, a.data, func(m map[string]any) { first(m, "value")["sku"] = "Standard_NC24ads_A100_v4" })
		}},
		{name: "closed enum restriction type", op: "compute:ListSKUs", change: func(a *answer) {
			a.data = mutate(t, a.data, func(m map[string]any) {
				first(m, "value")["restrictions"] = []any{map[string]any{"type": "Planet", "values": []any{"eastus"}}}
			})
		}},
		{name: "totalRecords missing", op: "resourcegraph:Resources", change: func(a *answer) {
			a.data = mutate(t, a.data, func(m map[string]any) { delete(m, "totalRecords") })
		}},
		{name: "resultTruncated outside its closed enum", op: "resourcegraph:Resources", change: func(a *answer) {
			a.data = mutate(t, a.data, func(m map[string]any) { m["resultTruncated"] = "maybe" })
		}},
		{name: "count not the page's rows", op: "resourcegraph:Resources", change: func(a *answer) {
			a.data = mutate(t, a.data, func(m map[string]any) { m["count"] = 7 })
		}},
		{name: "$skipToken on an empty page", op: "resourcegraph:Resources", change: func(a *answer) {
			a.data = mutate(t, a.data, func(m map[string]any) { m["data"], m["count"], m["$skipToken"] = []any{}, 0, "abc" })
		}},
		{name: "facet of no subtype", op: "resourcegraph:Resources", change: func(a *answer) {
			a.data = mutate(t, a.data, func(m map[string]any) {
				m["facets"] = []any{map[string]any{"expression": "location", "resultType": "FacetGuess"}}
			})
		}},
		{name: "batch item without starttime", op: "monitor:MetricsBatch", change: func(a *answer) {
			a.data = mutate(t, a.data, func(m map[string]any) { delete(first(m, "values"), "starttime") })
		}},
		{name: "metric without unit", op: "monitor:Metrics", change: func(a *answer) {
			a.data = mutate(t, a.data, func(m map[string]any) { delete(first(m, "value"), "unit") })
		}},
		{name: "single answer with a batch field", op: "monitor:Metrics", change: func(a *answer) {
			a.data = mutate(t, a.data, func(m map[string]any) { m["resourceid"] = vmID })
		}},
		{name: "subscription state outside its closed enum", op: "subscriptions:GetSubscription", change: func(a *answer) {
			a.data = mutate(t, a.data, func(m map[string]any) { m["state"] = "Sleeping" })
		}},
		{name: "location type outside its closed enum", op: "subscriptions:ListLocations", change: func(a *answer) {
			a.data = mutate(t, a.data, func(m map[string]any) { first(m, "value")["type"] = "Galaxy" })
		}},
		{name: "permission actions a string", op: "authorization:ListPermissions", change: func(a *answer) {
			a.data = mutate(t, a.data, func(m map[string]any) { first(m, "value")["actions"] = "*" })
		}},
		{name: "retail Count not the page's items", op: "prices:RetailPrices", change: func(a *answer) {
			a.data = mutate(t, a.data, func(m map[string]any) { m["Count"] = 3 })
		}},
		{name: "retail NextPageLink relative", op: "prices:RetailPrices", change: func(a *answer) {
			a.data = mutate(t, a.data, func(m map[string]any) { m["NextPageLink"] = "/api/retail/prices?$skip=1000" })
		}},
		{name: "retail item without armSkuName", op: "prices:RetailPrices", change: func(a *answer) {
			a.data = mutate(t, a.data, func(m map[string]any) { delete(first(m, "Items"), "armSkuName") })
		}},
		{name: "deallocation 202 without its operation URLs", op: "compute:Deallocate", change: func(a *answer) {
			a.header = a.header.Clone()
			a.header.Del("Azure-AsyncOperation")
			a.header.Del("Location")
		}},
		{name: "deallocation 202 with a body", op: "compute:Deallocate", change: func(a *answer) { a.data = []byte(`{"status":"Accepted"}`) }},
		{name: "a status the model does not have", op: "compute:GetVM", change: func(a *answer) { a.status = 201 }},
		{name: "ARM error without error.code", op: "compute:GetVM", src: &notFound, change: func(a *answer) {
			a.data = mutate(t, a.data, func(m map[string]any) { delete(m["error"].(map[string]any), "code") })
		}},
		{name: "ARM error not wrapped in error", op: "compute:GetVM", src: &notFound, change: func(a *answer) {
			a.data = []byte(`{"code":"ResourceNotFound","message":"gone"}`)
		}},
		{name: "429 without Retry-After", op: "subscriptions:GetSubscription", base: "throttled", change: func(a *answer) {
			a.header = a.header.Clone()
			a.header.Del("Retry-After")
			a.header.Del("retry-after-ms")
		}},
		{name: "429 with Retry-After 0", op: "subscriptions:ListLocations", base: "throttled", change: func(a *answer) {
			a.header = a.header.Clone()
			a.header.Set("Retry-After", "0")
		}},
		{name: "Resource Graph 429 without its quota headers", op: "resourcegraph:Resources", base: "throttled", change: func(a *answer) {
			a.header = a.header.Clone()
			a.header.Del("x-ms-user-quota-remaining")
			a.header.Del("x-ms-user-quota-resets-after")
		}},
		{name: "Compute 429 without its policy headers", op: "compute:ListAllVMs", base: "throttled", change: func(a *answer) {
			a.header = a.header.Clone()
			a.header.Del("x-ms-ratelimit-remaining-resource")
		}},
		{name: "Resource Graph 429 error without code", op: "resourcegraph:Resources", base: "throttled", change: func(a *answer) {
			a.data = mutate(t, a.data, func(m map[string]any) { delete(m["error"].(map[string]any), "code") })
		}},
	}
	checker := contract.New()
	kinds := map[string]bool{}
	for _, tc := range cases {
		base := srv.URL
		if tc.base == "throttled" {
			base = throttled.URL
		}
		var a answer
		if tc.src != nil {
			a = *tc.src
		} else {
			a = get(base, tc.op)
		}
		if err := checker.CheckResponse(a.req, a.body, a.status, a.header, a.data); err != nil {
			t.Errorf("%s: the genuine answer fails: %v", tc.name, err)
			continue
		}
		tc.change(&a)
		err := checker.CheckResponse(a.req, a.body, a.status, a.header, a.data)
		switch {
		case tc.pass && err != nil:
			t.Errorf("%s: want it accepted: %v", tc.name, err)
		case !tc.pass && err == nil:
			t.Errorf("%s: the corrupted answer passes", tc.name)
		case err != nil:
			kinds[tc.op] = true
		}
	}
	t.Logf("%d corrupted answers of %d operations refused", len(cases)-1, len(kinds))
}

// TestCorruptedRequestsFail: a genuine request of each kind the adapter
// sends passes, and each that departs from the model (a limit, a closed
// enum, a type, a missing required parameter, an unknown parameter or body
// property, a read-only property, another api-version, a body the
// operation does not take, a path no operation has) fails.
func TestCorruptedRequestsFail(t *testing.T) {
	graph := func(opts map[string]any) map[string]any {
		return map[string]any{"query": "Resources | project id", "subscriptions": []string{sub}, "options": opts}
	}
	batchIDs := func(n int) map[string]any {
		ids := make([]string, n)
		for i := range ids {
			ids[i] = fmt.Sprintf("%svm-%03d", vmPath, i)
		}
		return map[string]any{"resourceids": ids}
	}
	batch := "/subscriptions/" + sub + "/metrics:getBatch?api-version=2024-02-01&metricnamespace=Microsoft.Compute%2FvirtualMachines&metricnames=Percentage+CPU,Available+Memory+Bytes&interval=PT1H"
	list := "/subscriptions/" + sub + "/providers/Microsoft.Compute/virtualMachines?api-version=2025-04-01"
	cases := []struct {
		name, method, target string
		body                 any
		pass                 bool
	}{
		{"graph query", "POST", "/providers/Microsoft.ResourceGraph/resources?api-version=2024-04-01", graph(map[string]any{"$top": 1000, "resultFormat": "objectArray"}), true},
		{"graph $top over 1,000", "POST", "/providers/Microsoft.ResourceGraph/resources?api-version=2024-04-01", graph(map[string]any{"$top": 5000}), false},
		{"graph resultFormat outside its enum", "POST", "/providers/Microsoft.ResourceGraph/resources?api-version=2024-04-01", graph(map[string]any{"resultFormat": "csv"}), false},
		{"graph $top a string", "POST", "/providers/Microsoft.ResourceGraph/resources?api-version=2024-04-01", graph(map[string]any{"$top": "100"}), false},
		{"graph body without query", "POST", "/providers/Microsoft.ResourceGraph/resources?api-version=2024-04-01", map[string]any{"subscriptions": []string{sub}}, false},
		{"graph body with an unknown property", "POST", "/providers/Microsoft.ResourceGraph/resources?api-version=2024-04-01", map[string]any{"query": "Resources", "tables": []string{"Resources"}}, false},
		{"graph without a body", "POST", "/providers/Microsoft.ResourceGraph/resources?api-version=2024-04-01", nil, false},
		{"graph without api-version", "POST", "/providers/Microsoft.ResourceGraph/resources", graph(nil), false},
		{"getBatch of 50", "POST", batch, batchIDs(50), true},
		{"getBatch of 51", "POST", batch, batchIDs(51), false},
		{"getBatch without metricnamespace", "POST", strings.Replace(batch, "metricnamespace=", "namespace=", 1), batchIDs(2), false},
		{"getBatch with an id that is no ARM id", "POST", batch, map[string]any{"resourceids": []string{"vm-001"}}, false},
		{"getBatch with top not an integer", "POST", batch + "&top=ten", batchIDs(2), false},
		{"VM list", "GET", list + "&statusOnly=true", nil, true},
		{"VM list with an unknown parameter", "GET", list + "&$top=10", nil, false},
		{"VM list of another api-version", "GET", strings.Replace(list, "2025-04-01", "2024-07-01", 1), nil, false},
		{"VM list with a body", "GET", list, map[string]any{"filter": "x"}, false},
		{"VM get $expand outside its closed enum", "GET", vmID + "?api-version=2025-04-01&$expand=everything", nil, false},
		{"deallocate hibernate not a boolean", "POST", vmPath + "vm-002/deallocate?api-version=2025-04-01&hibernate=maybe", nil, false},
		{"subscription id not a UUID", "GET", "/subscriptions/my-sub?api-version=2022-12-01", nil, false},
		{"resource group name over 90 characters", "GET", "/subscriptions/" + sub + "/resourcegroups/" + strings.Repeat("r", 91) + "/providers/Microsoft.Authorization/permissions?api-version=2022-04-01", nil, false},
		{"retail prices of the model's version", "GET", "/api/retail/prices?api-version=2023-01-01-preview&$filter=serviceName+eq+%27Virtual+Machines%27", nil, true},
		{"retail prices of another version", "GET", "/api/retail/prices?api-version=2021-10-01-preview", nil, false},
		{"reservations page by number", "GET", "/providers/Microsoft.Capacity/reservations?api-version=2022-11-01&$skiptoken=2", nil, true},
		{"reservations $skiptoken not a number", "GET", "/providers/Microsoft.Capacity/reservations?api-version=2022-11-01&$skiptoken=b2Zmc2V0OjI", nil, false},
		{"reservations of another version", "GET", "/providers/Microsoft.Capacity/reservations?api-version=2022-03-01", nil, false},
		{"savings plans page by number", "GET", "/providers/Microsoft.BillingBenefits/savingsPlans?api-version=2022-11-01&$skiptoken=2", nil, true},
		{"savings plans $skiptoken not a number", "GET", "/providers/Microsoft.BillingBenefits/savingsPlans?api-version=2022-11-01&$skiptoken=b2Zmc2V0OjI", nil, false},
		{"savings plans without api-version", "GET", "/providers/Microsoft.BillingBenefits/savingsPlans", nil, false},
		{"a path no operation has", "GET", "/subscriptions/" + sub + "/providers/Microsoft.Compute/disks?api-version=2025-04-01", nil, false},
	}
	checker := contract.New()
	refused := 0
	for _, tc := range cases {
		var b []byte
		if tc.body != nil {
			b, _ = json.Marshal(tc.body)
		}
		r := httptest.NewRequest(tc.method, "https://management.azure.com"+tc.target, bytes.NewReader(b))
		err := checker.CheckRequest(r, b)
		if tc.pass && err != nil {
			t.Errorf("%s: want it accepted: %v", tc.name, err)
		}
		if !tc.pass && err == nil {
			t.Errorf("%s: the request passes", tc.name)
		}
		if err != nil {
			refused++
		}
	}
	t.Logf("%d requests checked, %d departing from the models refused", len(cases), refused)
}
