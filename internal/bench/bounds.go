// Package bench measures a three-cloud scan against the local simulators
// (`make bench`): it generates a fleet, serves it with cloudsim, runs the real
// gpufinops binary, reads the simulators' request counters and prints one
// table with the requests, wall, CPU and peak memory of each run beside the
// lower bounds the clouds' API limits allow (docs/performance.md derives
// them).
package bench

import (
	"sort"
	"strings"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// The API limits the bounds are computed from (docs/performance.md cites
// each; the adapters and simulators use the same numbers).
const (
	// DescribeInstances returns at most 1,000 instances a page.
	ec2InstancesPage = 1000
	// A DescribeSpotInstanceRequests filter names up to 200 request IDs
	// (one page: a call answers at most 1,000).
	spotRequestBatch = 200
	// ListMetrics returns 500 metrics a page.
	listMetricsPage = 500
	// GetMetricData takes 500 queries and returns 100,800 datapoints a call.
	metricDataQueries = 500
	metricDataPoints  = 100800
	// SageMaker's List calls return at most 100 items a page.
	sageMakerPage = 100
	// GetProducts pages hold 100 products; DescribeSpotPriceHistory and
	// DescribeSavingsPlansOfferingRates pages 1,000 rows.
	productsPage = 100
	spotPage     = 1000
	ratesPage    = 1000
	// A Resource Graph query names up to 1,000 subscriptions and returns
	// up to 1,000 rows a page.
	graphSubscriptions = 1000
	graphPage          = 1000
	// metrics:getBatch reads up to 50 resources of one subscription and
	// region, for one metric namespace, a call.
	azureMetricsBatch = 50
	// Vertex AI's endpoints.list and customJobs.list and Workbench's
	// instances.list return up to 1,000 items a page (pageSize; 100 when
	// unset).
	vertexPage = 1000
	// The Retail Prices API returns 1,000 rows a page.
	retailPage = 1000
	// Compute Engine's aggregatedList returns up to 500 instances a page.
	gcpInstancesPage = 500
	// ListTimeSeries returns up to 100,000 points a page (view FULL).
	timeSeriesPage = 100000
	// The Billing Catalog returns up to 5,000 SKUs a page; the Compute
	// Engine service has fewer, so one page holds every price.
	skuPage = 5000
)

// Rows each price API returns per instance type and region for the prices
// the engine uses: one Linux on-demand product; the latest spot price in
// each zone (at most 6 zones); the 1- and 3-year Savings Plans rates; the
// Retail Prices rows of a size (consumption, spot, low priority, 1- and
// 3-year reservations, Windows and DevTest variants: at most 10).
const (
	productRowsPerType = 1
	spotRowsPerType    = 6
	rateRowsPerType    = 2
	retailRowsPerType  = 10
)

// azureNamespaces are the metrics:getBatch namespaces read per batch of
// VMs: Telegraf's nvidia_smi (GPU utilization and memory in one call, up to
// 20 metric names) and the VM platform's (Percentage CPU).
const azureNamespaces = 2

// DefaultSteps is the number of hourly periods a 14-day lookback reads
// (the default --lookback-days at the 3,600 s period every cloud's
// adapter uses for it).
const DefaultSteps = 14 * 24

// Scope is one account and region of one cloud, as the bounds count it.
type Scope struct {
	Cloud   fleet.Provider
	Account string
	Region  string
	// Instances are the GPU instances listed there; Metered the ones the
	// adapters read metrics of: not stopped, with GPU utilization in the
	// fleet (an agent publishes it).
	Instances, Metered int
	// Running are the GPU instances not stopped: Azure's metrics are asked
	// of each, since nothing short of asking says which VMs an agent
	// publishes GPU metrics for.
	Running int
	// GPUs are the metered instances' GPUs with a utilization series and
	// MemGPUs those with a GPU memory series (a fractional GPU is one);
	// CPU and Memory the metered instances with a host CPU and a host
	// memory series.
	GPUs, MemGPUs, CPU, Memory int
	// Spot are the spot GPU instances listed there, stopped ones
	// included: the AWS adapter reads each one's spot request.
	Spot int
	// Types are the distinct instance types listed there, Azure ML sizes
	// included (priced as the VMs of the size).
	Types map[string]bool
	// SageMaker are the scope's SageMaker items (AWS).
	SageMaker SageMakerShape
	// AzureML are the scope's Azure ML items (Azure).
	AzureML AzureMLShape
	// Vertex are the scope's Vertex AI endpoints and custom jobs (GCP); a
	// Workbench instance is a Compute Engine VM, counted as one.
	Vertex VertexShape
}

// AzureMLShape counts one scope's Azure ML items as the Azure adapter
// reads them: the workspaces (each lists its online endpoints and its
// computes), the online endpoints (each lists its deployments), the
// deployments and computes, and the running ones whose metrics are asked
// for: deployments (their namespace), their endpoints (requests) and the
// workspaces of running computes (the workspace namespace, split by
// compute).
type AzureMLShape struct {
	Workspaces, Endpoints, Deployments, Computes int
	// Metered are the resources of each namespace the metrics are asked of.
	MeteredDeployments, MeteredEndpoints, MeteredWorkspaces int
}

// VertexShape counts one scope's Vertex AI items: endpoints (one listing
// entry each, with their deployed models), deployed models, running
// custom jobs, and the series the metrics hold: deployed models with a
// duty cycle, a prediction count and accelerator memory, jobs with
// training utilization.
type VertexShape struct {
	Endpoints, DeployedModels, Jobs     int
	Duty, Predictions, Memory, Training int
}

// SageMakerShape counts one scope's SageMaker items as the AWS adapter
// reads them: endpoints (each described with its configuration), their
// metered variants, notebook instances, Studio apps, running training and
// processing jobs and their hosts.
type SageMakerShape struct {
	Endpoints, Variants, Notebooks, Apps, Training, Processing int
	// Hosts are the metered jobs' instances (one series each).
	Hosts int
}

// metrics says which series a metered instance has.
type metrics struct{ gpu, gpuMemory, cpu, memory bool }

func metricsOf(u *fleet.Utilization) metrics {
	if u == nil {
		return metrics{}
	}
	return metrics{gpu: u.GPU != nil, gpuMemory: u.GPUMemory != nil, cpu: u.CPU != nil, memory: u.Memory != nil}
}

// Shape is what the bounds need of a fleet: its scopes per cloud.
type Shape struct {
	Scopes []Scope
}

// ShapeOf counts a fleet's scopes. GPU counts and memory are the
// instances' GPU (pricing.Complete fills them in from the catalog); a
// fractional GPU counts as one series.
func ShapeOf(f *fleet.Fleet) Shape {
	var b shapeBuilder
	for _, in := range f.Instances {
		if b.managed(in) {
			continue
		}
		b.add(in.Provider, in.Account, in.Region, in.InstanceType, in.GPU, in.Lifecycle == fleet.Spot, in.State == fleet.Stopped, metricsOf(in.Utilization))
	}
	return b.shape()
}

// shapeBuilder counts scopes one instance at a time.
type shapeBuilder struct {
	idx map[[3]string]int
	sh  Shape
	// smEndpoints are the SageMaker endpoints counted (account, region,
	// name).
	smEndpoints map[[3]string]bool
	// seen are the Azure ML workspaces and endpoints and Vertex AI
	// endpoints counted, and those counted as metered, by a key naming
	// what and which.
	seen map[string]bool
	// amlRegion is each Azure ML workspace's region.
	amlRegion map[string]string
}

// once reports whether key is new, marking it seen.
func (b *shapeBuilder) once(key string) bool {
	if b.seen == nil {
		b.seen = map[string]bool{}
	}
	if b.seen[key] {
		return false
	}
	b.seen[key] = true
	return true
}

// managed counts a managed AI item read through its service's own calls
// and reports whether it did; a Workbench instance is a Compute Engine VM
// and is left to add.
func (b *shapeBuilder) managed(in fleet.Instance) bool {
	if in.Managed == nil {
		return false
	}
	switch in.Managed.Service {
	case fleet.SageMaker:
		b.sageMaker(in)
	case fleet.AzureML:
		b.azureML(in)
	case fleet.VertexAI:
		if in.Managed.Kind == fleet.KindNotebook {
			return false
		}
		b.vertex(in)
	default:
		return false
	}
	return true
}

// amlWorkspace is the workspace an Azure ML item's ARM ID names
// (lowercase), or its subscription and managed.workspace.
func amlWorkspace(in fleet.Instance) string {
	id := strings.ToLower(in.ID)
	for _, sep := range []string{"/onlineendpoints/", "/computes/"} {
		if ws, _, ok := strings.Cut(id, sep); ok {
			return ws
		}
	}
	return strings.ToLower(in.Account + "/" + in.Managed.Workspace)
}

// azureML counts one Azure ML item: not in Resource Graph, read through
// the workspace's lists and the Azure ML metric namespaces; priced as the
// VM of its size.
func (b *shapeBuilder) azureML(in fleet.Instance) {
	ws := amlWorkspace(in)
	// A workspace is in one region: the first of its items names it (as
	// the simulator, serving a fleet, takes it), and its items are read
	// and metered in that region's scope.
	if b.amlRegion == nil {
		b.amlRegion = map[string]string{}
	}
	region, ok := b.amlRegion[ws]
	if !ok {
		region = in.Region
		b.amlRegion[ws] = region
	}
	s := b.scope(in.Provider, in.Account, region)
	a := &s.AzureML
	s.Types[in.InstanceType] = true
	if b.once("aml-ws\x00" + ws) {
		a.Workspaces++
	}
	running := in.State != fleet.Stopped
	switch in.Managed.Kind {
	case fleet.KindEndpoint:
		ep := ws + "/onlineendpoints/" + strings.ToLower(in.Managed.Endpoint)
		if b.once("aml-ep\x00" + ep) {
			a.Endpoints++
		}
		a.Deployments++
		if running {
			a.MeteredDeployments++
			if b.once("aml-ep-metered\x00" + ep) {
				a.MeteredEndpoints++
			}
		}
	default:
		a.Computes++
		if running && b.once("aml-ws-metered\x00"+ws) {
			a.MeteredWorkspaces++
		}
	}
}

// vertex counts one Vertex AI endpoint deployment or custom job: not in
// Compute Engine's listing, read through Vertex AI's lists and metric
// types.
func (b *shapeBuilder) vertex(in fleet.Instance) {
	s := b.scope(in.Provider, in.Account, in.Region)
	v := &s.Vertex
	u := in.Utilization
	metered := in.State != fleet.Stopped && u != nil && u.GPU != nil
	switch in.Managed.Kind {
	case fleet.KindEndpoint:
		if b.once("vertex-ep\x00" + in.Account + "\x00" + in.Region + "\x00" + in.Managed.Endpoint) {
			v.Endpoints++
		}
		v.DeployedModels++
		if metered {
			v.Duty++
			if u.GPUMemory != nil {
				v.Memory++
			}
		}
		if in.State != fleet.Stopped && in.Managed.Requests != nil {
			v.Predictions++
		}
	case fleet.KindTrainingJob:
		if in.State == fleet.Stopped {
			return // customJobs.list asks for the running ones
		}
		v.Jobs++
		if metered {
			v.Training++
		}
	}
}

// add counts one instance. An accelerator without memory in the catalog
// (AWS's f2 FPGAs, which the catalog prices beside the GPUs) is no GPU:
// the AWS adapter leaves such instances out, and the bounds read no
// metrics or spot requests of them.
func (b *shapeBuilder) add(p fleet.Provider, account, region, typ string, gpu fleet.GPU, spot, stopped bool, m metrics) {
	if b.idx == nil {
		b.idx = map[[3]string]int{}
	}
	k := [3]string{string(p), account, region}
	i, ok := b.idx[k]
	if !ok {
		i = len(b.sh.Scopes)
		b.idx[k] = i
		b.sh.Scopes = append(b.sh.Scopes, Scope{Cloud: p, Account: account, Region: region, Types: map[string]bool{}})
	}
	s := &b.sh.Scopes[i]
	s.Instances++
	s.Types[typ] = true
	if spot && gpu.MemoryGiB > 0 {
		s.Spot++
	}
	if stopped || gpu.MemoryGiB <= 0 {
		return
	}
	s.Running++
	if !m.gpu {
		return
	}
	n := max(1, int(gpu.Count+0.999))
	s.Metered++
	s.GPUs += n
	if m.gpuMemory {
		s.MemGPUs += n
	}
	if m.cpu {
		s.CPU++
	}
	if m.memory {
		s.Memory++
	}
}

// scope returns the index of a scope, adding it when new.
func (b *shapeBuilder) scope(p fleet.Provider, account, region string) *Scope {
	if b.idx == nil {
		b.idx = map[[3]string]int{}
	}
	k := [3]string{string(p), account, region}
	i, ok := b.idx[k]
	if !ok {
		i = len(b.sh.Scopes)
		b.idx[k] = i
		b.sh.Scopes = append(b.sh.Scopes, Scope{Cloud: p, Account: account, Region: region, Types: map[string]bool{}})
	}
	return &b.sh.Scopes[i]
}

// sageMaker counts one SageMaker item: not an EC2 instance (no
// DescribeInstances, agent metrics or spot request), read through
// SageMaker's own List and Describe calls and metrics.
func (b *shapeBuilder) sageMaker(in fleet.Instance) {
	s := b.scope(in.Provider, in.Account, in.Region)
	sm := &s.SageMaker
	metered := in.State != fleet.Stopped && in.Utilization != nil && in.Utilization.GPU != nil
	switch in.Managed.Kind {
	case fleet.KindEndpoint:
		if b.smEndpoints == nil {
			b.smEndpoints = map[[3]string]bool{}
		}
		if k := [3]string{in.Account, in.Region, in.Managed.Endpoint}; !b.smEndpoints[k] {
			b.smEndpoints[k] = true
			sm.Endpoints++
		}
		if in.State != fleet.Stopped {
			sm.Variants++
		}
	case fleet.KindNotebook:
		sm.Notebooks++
	case fleet.KindStudioApp:
		sm.Apps++
	case fleet.KindTrainingJob, fleet.KindProcessingJob:
		if in.Managed.Kind == fleet.KindTrainingJob {
			sm.Training++
		} else {
			sm.Processing++
		}
		if metered {
			sm.Hosts += max(in.Managed.CurrentReplicas(), 1)
		}
	}
}

func (b *shapeBuilder) shape() Shape {
	sh := b.sh
	sort.Slice(sh.Scopes, func(i, j int) bool {
		a, b := sh.Scopes[i], sh.Scopes[j]
		if a.Cloud != b.Cloud {
			return a.Cloud < b.Cloud
		}
		if a.Account != b.Account {
			return a.Account < b.Account
		}
		return a.Region < b.Region
	})
	return sh
}

// Bound is one cloud's lower bounds: the fewest requests per operation that
// fetch what the engine needs, and the longest chain of requests that must
// follow one another (each needs the answer of the one before).
type Bound struct {
	Cloud fleet.Provider
	// Requests is operation ("service.Op", as the simulators count them)
	// → fewest requests.
	Requests map[string]int
	// Chain is the critical path in requests: with every independent
	// request in parallel, the scan takes at least Chain round trips.
	Chain int
}

// Total is the sum of Requests.
func (b Bound) Total() int {
	n := 0
	for _, v := range b.Requests {
		n += v
	}
	return n
}

// CriticalPath is the chain times the latency of one request.
func (b Bound) CriticalPath(latency time.Duration) time.Duration {
	return time.Duration(b.Chain) * latency
}

func ceilDiv(a, b int) int {
	if a <= 0 {
		return 0
	}
	return (a + b - 1) / b
}

// pages is the requests of a listing of n items at page size: at least one,
// since an empty answer is an answer too.
func pages(n, page int) int { return max(1, ceilDiv(n, page)) }

// Bounds computes each cloud's bounds for the shape at steps periods per
// series (DefaultSteps for a 14-day hourly read). Clouds without instances
// are left out.
func Bounds(sh Shape, steps int) []Bound {
	steps = max(1, steps)
	var out []Bound
	for _, c := range []fleet.Provider{fleet.AWS, fleet.Azure, fleet.GCP} {
		var scopes []Scope
		for _, s := range sh.Scopes {
			if s.Cloud == c {
				scopes = append(scopes, s)
			}
		}
		if len(scopes) == 0 {
			continue
		}
		switch c {
		case fleet.AWS:
			out = append(out, awsBound(scopes, steps))
		case fleet.Azure:
			out = append(out, azureBound(scopes, steps))
		case fleet.GCP:
			out = append(out, gcpBound(scopes, steps))
		}
	}
	return out
}

// regionTypes is the distinct types per region over every account.
func regionTypes(scopes []Scope) map[string]int {
	types := map[string]map[string]bool{}
	for _, s := range scopes {
		if types[s.Region] == nil {
			types[s.Region] = map[string]bool{}
		}
		for t := range s.Types {
			types[s.Region][t] = true
		}
	}
	out := map[string]int{}
	for r, ts := range types {
		out[r] = len(ts)
	}
	return out
}

func accountsOf(scopes []Scope) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range scopes {
		if !seen[s.Account] {
			seen[s.Account] = true
			out = append(out, s.Account)
		}
	}
	return out
}

// awsBound: every account is an identity (GetCallerIdentity for the base
// one, AssumeRole for each other) and a DescribeRegions; every account
// lists every region of the fleet (the regions are enabled in each), so a
// region without instances still costs one DescribeInstances. Metrics are
// per account and region: one ListMetrics listing of the agent's namespace
// finds the per-GPU and memory series' dimension sets, and GetMetricData
// reads them, as many series a call as 500 queries and 100,800 datapoints
// allow. Prices are per region, the same for every account: GetProducts,
// DescribeSpotPriceHistory and DescribeSavingsPlansOfferingRates at their
// page sizes for the region's types. The spot instances' requests are
// read after the listing, 200 request IDs a DescribeSpotInstanceRequests
// call, one call after another. The commitments held are one
// DescribeReservedInstances and one DescribeCapacityReservations per
// account and region and one DescribeSavingsPlans per account, read beside
// the listing (after DescribeRegions). GPU facts per type come from the
// embedded catalog, which knows every type of a generated fleet: no
// DescribeInstanceTypes is needed.
func awsBound(scopes []Scope, steps int) Bound {
	accounts := accountsOf(scopes)
	rt := regionTypes(scopes)
	req := map[string]int{
		"sts.GetCallerIdentity":             1,
		"sts.AssumeRole":                    len(accounts) - 1,
		"ec2.DescribeRegions":               len(accounts),
		"savingsplans.DescribeSavingsPlans": len(accounts),
	}
	byScope := map[[2]string]Scope{}
	for _, s := range scopes {
		byScope[[2]string{s.Account, s.Region}] = s
	}
	perCall := min(metricDataQueries, max(1, metricDataPoints/steps))
	chain := 0
	for _, a := range accounts {
		for r, t := range rt {
			s := byScope[[2]string{a, r}]
			inv := pages(s.Instances, ec2InstancesPage)
			req["ec2.DescribeInstances"] += inv
			req["ec2.DescribeReservedInstances"]++
			req["ec2.DescribeCapacityReservations"]++
			spot := ceilDiv(s.Spot, spotRequestBatch)
			req["ec2.DescribeSpotInstanceRequests"] += spot
			agent := s.GPUs + 2*s.MemGPUs + s.Memory
			listed := ceilDiv(agent, listMetricsPage)
			read := ceilDiv(agent+s.CPU, perCall)
			req["monitoring.ListMetrics"] += listed
			req["monitoring.GetMetricData"] += read
			// identity → regions → instance pages → spot request
			// batches → (metric listing pages → one round of
			// GetMetricData) or the price pages.
			metrics := listed + min(read, 1)
			prices := 0
			if s.Instances > 0 {
				prices = max(pages(productRowsPerType*t, productsPage), pages(spotRowsPerType*t, spotPage), pages(rateRowsPerType*t, ratesPage))
			}
			// SageMaker, beside EC2's listing: its five lists (100 a
			// page), a DescribeEndpoint and DescribeEndpointConfig per
			// endpoint, a Describe per running job, a ListTags per
			// resource; its metrics join GetMetricData's queries
			// (variants: GPU, GPU memory and Invocations; job hosts: GPU
			// and GPU memory).
			sm := s.SageMaker
			lists := map[string]int{"sagemaker.ListEndpoints": sm.Endpoints, "sagemaker.ListNotebookInstances": sm.Notebooks,
				"sagemaker.ListApps": sm.Apps, "sagemaker.ListTrainingJobs": sm.Training, "sagemaker.ListProcessingJobs": sm.Processing}
			for op, n := range lists {
				req[op] += pages(n, sageMakerPage)
			}
			req["sagemaker.DescribeEndpoint"] += sm.Endpoints
			req["sagemaker.DescribeEndpointConfig"] += sm.Endpoints
			req["sagemaker.DescribeTrainingJob"] += sm.Training
			req["sagemaker.DescribeProcessingJob"] += sm.Processing
			tagged := sm.Endpoints + sm.Notebooks + sm.Apps + sm.Training + sm.Processing
			req["sagemaker.ListTags"] += tagged
			smRead := 0
			if q := 3*sm.Variants + 2*sm.Hosts; q > 0 {
				// SageMaker's queries fill what the agent's leave of
				// the last call.
				smRead = max(0, ceilDiv(agent+s.CPU+q, perCall)-read)
				req["monitoring.GetMetricData"] += smRead
			}
			smChain := max(pages(sm.Endpoints, sageMakerPage)+2*min(sm.Endpoints, 1), pages(sm.Notebooks, sageMakerPage), pages(sm.Apps, sageMakerPage),
				pages(sm.Training, sageMakerPage)+min(sm.Training, 1), pages(sm.Processing, sageMakerPage)+min(sm.Processing, 1)) + min(tagged, 1)
			// The commitment reads (identity → regions → one call)
			// are never longer.
			chain = max(chain, 1+1+max(inv+spot, smChain)+max(metrics+min(smRead, 1), prices), 1+1+1)
		}
	}
	for _, t := range rt {
		req["pricing.GetProducts"] += pages(productRowsPerType*t, productsPage)
		req["ec2.DescribeSpotPriceHistory"] += pages(spotRowsPerType*t, spotPage)
		req["savingsplans.DescribeSavingsPlansOfferingRates"] += pages(rateRowsPerType*t, ratesPage)
	}
	return Bound{Cloud: fleet.AWS, Requests: drop0(req), Chain: chain}
}

// azureBound: one ListSubscriptions; Resource Graph queries over every
// subscription (1,000 a query) and region, paged at 1,000 rows: VMs are in
// the Resources table and Uniform scale-set members in ComputeResources, so
// at least one query of each table; per
// subscription and region, metrics:getBatch per 50 running VMs for each of
// the two namespaces (the VMs an agent publishes GPU metrics for are known
// only from the answers); per region, the Retail Prices rows of its types at
// 1,000 a page. The chain splits the inventory by region (each region's
// query pages in parallel with the others'), then the region's Resource
// SKUs (read once per region for the sizes' local NVMe disks, after the
// listing names the sizes), then metrics or prices. Sizes' GPU facts come
// from the embedded catalog. The commitments held are listed once for the
// tenant: one ListReservations (Reservation_ListAll) and one
// ListSavingsPlans (SavingsPlan_ListAll), beside the listing. Azure ML
// (on by default), which Resource Graph does not list: one
// ListWorkspaces per subscription; per workspace one ListOnlineEndpoints
// and one ListComputes, per endpoint one ListOnlineDeployments (a page
// each: at least one call, whatever the page size); metrics:getBatch per
// 50 running resources of each namespace (deployments, endpoints for the
// requests, workspaces split by compute). Its chain: subscriptions →
// workspaces → endpoints → deployments → one round of metrics.
func azureBound(scopes []Scope, steps int) Bound {
	_ = steps // getBatch has no datapoint limit below a 14-day hourly read
	subs := accountsOf(scopes)
	total := 0
	perRegion := map[string]int{}
	req := map[string]int{
		"subscriptions.ListSubscriptions":  1,
		"capacity.ListReservations":        1,
		"billingbenefits.ListSavingsPlans": 1,
	}
	metricsChain, amlChain := 0, 0
	for _, s := range scopes {
		total += s.Instances
		perRegion[s.Region] += s.Instances
		n := azureNamespaces * ceilDiv(s.Running, azureMetricsBatch)
		req["monitor.MetricsBatch"] += n
		metricsChain = max(metricsChain, min(n, 1))
		a := s.AzureML
		req["machinelearning.ListOnlineEndpoints"] += a.Workspaces
		req["machinelearning.ListComputes"] += a.Workspaces
		req["machinelearning.ListOnlineDeployments"] += a.Endpoints
		m := ceilDiv(a.MeteredDeployments, azureMetricsBatch) + ceilDiv(a.MeteredEndpoints, azureMetricsBatch) + ceilDiv(a.MeteredWorkspaces, azureMetricsBatch)
		req["monitor.MetricsBatch"] += m
		if a.Workspaces > 0 {
			amlChain = max(amlChain, 1+1+1+min(a.Endpoints, 1)+min(m, 1))
		}
	}
	req["resourcegraph.Resources"] = ceilDiv(len(subs), graphSubscriptions) * max(pages(total, graphPage), 2)
	req["machinelearning.ListWorkspaces"] = len(subs)
	rt := regionTypes(scopes)
	chain := 0
	for r, t := range rt {
		p := pages(retailRowsPerType*t, retailPage)
		req["prices.RetailPrices"] += p
		req["compute.ListSKUs"]++
		chain = max(chain, 1+pages(perRegion[r], graphPage)+1+max(metricsChain, p), amlChain)
	}
	return Bound{Cloud: fleet.Azure, Requests: drop0(req), Chain: chain}
}

// gcpBound: one projects.search; per project one aggregatedList over every
// zone at 500 VMs a page; per project, one ListTimeSeries per metric (GPU
// utilization, GPU memory, CPU, host memory) over every region, paged at
// 100,000 points; one Billing Catalog page for every price; per project
// one regionCommitments.aggregatedList and one reservations.aggregatedList
// (every region at once) for the commitments held, beside the listing.
// The chain splits the metric reads by region (in parallel). Vertex AI
// (providers.gcp.managed_ai, on by default), which has no aggregated
// listing and whose items are not in Compute Engine's: per region scope
// endpoints.list and customJobs.list (running jobs) at 1,000 a page, per
// project one Workbench instances.list over every zone (its instances are
// Compute Engine VMs, counted with them); per project one ListTimeSeries
// per Vertex metric type some item has series of (duty cycle, prediction
// count, accelerator memory, training utilization), paged at 100,000
// points. Its chain: projects.search, then the longest of the region's
// lists' pages and of a metric type's pages (neither needs the other).
func gcpBound(scopes []Scope, steps int) Bound {
	projects := map[string]*Scope{}
	req := map[string]int{"cloudresourcemanager.projects.search": 1, "cloudbilling.services.skus.list": 1}
	metricPages := func(s Scope) []int {
		return []int{
			ceilDiv(s.GPUs*steps, timeSeriesPage),
			ceilDiv(2*s.MemGPUs*steps, timeSeriesPage),
			ceilDiv(s.CPU*steps, timeSeriesPage),
			ceilDiv(s.Memory*steps, timeSeriesPage),
		}
	}
	longest := map[string]int{}
	vertexChain := map[string]int{}
	vertex := map[string]VertexShape{}
	for _, s := range scopes {
		p := projects[s.Account]
		if p == nil {
			p = &Scope{}
			projects[s.Account] = p
		}
		v := s.Vertex
		eps, jobs := pages(v.Endpoints, vertexPage), pages(v.Jobs, vertexPage)
		req["aiplatform.projects.locations.endpoints.list"] += eps
		req["aiplatform.projects.locations.customJobs.list"] += jobs
		vertexChain[s.Account] = max(vertexChain[s.Account], eps, jobs)
		pv := vertex[s.Account]
		pv.Duty += v.Duty
		pv.Predictions += v.Predictions
		pv.Memory += v.Memory
		pv.Training += v.Training
		vertex[s.Account] = pv
		p.Instances += s.Instances
		p.GPUs += s.GPUs
		p.MemGPUs += s.MemGPUs
		p.CPU += s.CPU
		p.Memory += s.Memory
		for _, k := range metricPages(s) {
			longest[s.Account] = max(longest[s.Account], k)
		}
	}
	chain := 0
	for name, p := range projects {
		inv := pages(p.Instances, gcpInstancesPage)
		req["compute.instances.aggregatedList"] += inv
		req["compute.regionCommitments.aggregatedList"]++
		req["compute.reservations.aggregatedList"]++
		req["notebooks.projects.locations.instances.list"]++
		for _, k := range metricPages(*p) {
			req["monitoring.ListTimeSeries"] += k
		}
		v := vertex[name]
		vm := 0
		for _, n := range []int{v.Duty, v.Predictions, v.Memory, v.Training} {
			k := ceilDiv(n*steps, timeSeriesPage)
			req["monitoring.ListTimeSeries"] += k
			vm = max(vm, k)
		}
		chain = max(chain, 1+inv+3+longest[name], pages(1, skuPage), 1+max(vertexChain[name], vm))
	}
	return Bound{Cloud: fleet.GCP, Requests: drop0(req), Chain: chain}
}

func drop0(m map[string]int) map[string]int {
	for k, v := range m {
		if v == 0 {
			delete(m, k)
		}
	}
	return m
}
