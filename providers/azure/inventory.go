package azure

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v7"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/resourcegraph/armresourcegraph"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing/catalog"
	"github.com/gpufinops/gpufinops/providers"
)

// maxGraphSubscriptions is the most subscriptions one Resource Graph query
// names; Azure takes at most 1,000, gpufinops keeps batches under 300.
const maxGraphSubscriptions = 250

// Resource types of the VMs gpufinops lists.
const (
	typeVM     = "microsoft.compute/virtualmachines"
	typeVMSS   = "microsoft.compute/virtualmachinescalesets"
	typeVMSSVM = "microsoft.compute/virtualmachinescalesets/virtualmachines"
)

// graphQuery is the Resource Graph query of a region's standalone and
// Flexible scale-set VMs and of its scale sets (whose priority their
// Uniform members take), N-series sizes only (a pre-filter; the size table
// and Resource SKUs decide what has a GPU). Uniform scale-set members are
// not in the Resources table: membersQuery reads them.
func graphQuery(region string) string {
	return `Resources
| where type in~ ('` + typeVM + `', '` + typeVMSS + `')
| where location =~ '` + strings.ReplaceAll(region, "'", "") + `'
| extend size = tostring(coalesce(properties.hardwareProfile.vmSize, sku.name)), priority = tostring(coalesce(properties.priority, properties.virtualMachineProfile.priority)), eviction = tostring(coalesce(properties.evictionPolicy, properties.virtualMachineProfile.evictionPolicy)), power = tostring(properties.extended.instanceView.powerState.code), created = tostring(properties.timeCreated), vmss = tostring(properties.virtualMachineScaleSet.id), ppg = tostring(properties.proximityPlacementGroup.id)
| where size startswith 'Standard_N'
| project id, name, type, subscriptionId, resourceGroup, location, zones, tags, size, priority, eviction, power, created, vmss, ppg
| order by id asc`
}

// membersQuery is the Resource Graph query of a region's Uniform scale-set
// members (AKS node pools among them), which Azure keeps in the
// ComputeResources table only, with their size in sku.name.
func membersQuery(region string) string {
	return `ComputeResources
| where type =~ '` + typeVMSSVM + `'
| where location =~ '` + strings.ReplaceAll(region, "'", "") + `'
| extend size = tostring(sku.name), power = tostring(properties.extended.instanceView.powerState.code), created = tostring(properties.timeCreated)
| where size startswith 'Standard_N'
| project id, name, type, subscriptionId, resourceGroup, location, zones, tags, size, power, created
| order by id asc`
}

// regionsQuery finds the regions where subscriptions have N-series VMs or
// scale sets (a Uniform set's members are where the set is).
const regionsQuery = `Resources
| where type in~ ('` + typeVM + `', '` + typeVMSS + `')
| extend size = tostring(coalesce(properties.hardwareProfile.vmSize, sku.name))
| where size startswith 'Standard_N'
| summarize count() by subscriptionId, location`

// vmRow is one VM as the queries project it (and as the ARM fallback
// fills it in).
type vmRow struct {
	ID             string            `json:"id"`
	Name           string            `json:"name"`
	Type           string            `json:"type"`
	SubscriptionID string            `json:"subscriptionId"`
	ResourceGroup  string            `json:"resourceGroup"`
	Location       string            `json:"location"`
	Zones          []string          `json:"zones"`
	Tags           map[string]string `json:"tags"`
	Size           string            `json:"size"`
	Priority       string            `json:"priority"`
	Eviction       string            `json:"eviction"`
	Power          string            `json:"power"`
	Created        string            `json:"created"`
	VMSS           string            `json:"vmss"`
	// PPG is the VM's (or a scale set's) proximity placement group ID.
	PPG string `json:"ppg"`
}

// regionListing is one Resource Graph read of a region for every
// subscription of the scan, shared by the scopes of that region: each scope
// takes its subscription's rows once, and a later listing of the same scope
// reads again.
type regionListing struct {
	once  sync.Once
	subs  []string
	taken map[string]bool
	rows  map[string][]vmRow // lower-case subscription → rows
	err   error
}

// ListGPUInstances lists the GPU VMs of one subscription and region.
func (p *Provider) ListGPUInstances(ctx context.Context, scope providers.Scope) ([]fleet.Instance, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rows, err := p.regionRows(ctx, scope)
	if err != nil && ctx.Err() == nil && isPermission(err) {
		// Without Resource Graph, the ARM lists of the subscription.
		rows, err = p.armRows(ctx, scope)
	}
	if err != nil {
		return nil, err
	}
	out, err := p.instances(ctx, scope, rows)
	if err != nil || !p.az.managedAI {
		return out, err
	}
	return append(out, p.amlInstances(ctx, scope)...), nil
}

func isPermission(err error) bool {
	return err != nil && strings.Contains(err.Error(), providers.ErrPermission.Error())
}

// regionRows returns the scope's rows of its region's shared listing: the
// first scope of a region reads every subscription of the scan at once.
// A scope whose subscription the listing does not cover, or whose listing
// ended with another caller's context, reads its own.
func (p *Provider) regionRows(ctx context.Context, scope providers.Scope) ([]vmRow, error) {
	sub := strings.ToLower(scope.Account)
	p.mu.Lock()
	l := p.pending[scope.Region]
	if l == nil || l.taken[sub] {
		l = &regionListing{taken: map[string]bool{}}
		p.pending[scope.Region] = l
	}
	l.taken[sub] = true
	if l.subs == nil {
		l.subs = p.subscriptionsForLocked(scope)
	}
	subs := l.subs
	p.mu.Unlock()
	l.once.Do(func() { l.rows, l.err = p.queryRegion(ctx, subs, scope.Region) })
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !containsFold(subs, sub) || (l.err != nil && (errors.Is(l.err, context.Canceled) || errors.Is(l.err, context.DeadlineExceeded))) {
		rows, err := p.queryRegion(ctx, []string{scope.Account}, scope.Region)
		return rows[sub], err
	}
	return l.rows[sub], l.err
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// queryRegion reads a region's GPU VMs for subscriptions, in batches under
// 300 subscriptions, each query paged with the skip token: the Resources
// rows (VMs and scale sets) and the ComputeResources rows (Uniform
// scale-set members, which take their set's priority and eviction policy).
func (p *Provider) queryRegion(ctx context.Context, subs []string, region string) (map[string][]vmRow, error) {
	out := map[string][]vmRow{}
	for start := 0; start < len(subs); start += maxGraphSubscriptions {
		batch := subs[start:min(start+maxGraphSubscriptions, len(subs))]
		rows, err := p.queryRows(ctx, batch, graphQuery(region))
		if err != nil {
			return nil, err
		}
		members, err := p.queryRows(ctx, batch, membersQuery(region))
		if err != nil {
			return nil, err
		}
		sets := map[string]vmRow{}
		for _, row := range rows {
			if strings.EqualFold(row.Type, typeVMSS) {
				sets[strings.ToLower(row.ID)] = row
				continue
			}
			k := strings.ToLower(row.SubscriptionID)
			out[k] = append(out[k], row)
		}
		for _, row := range members {
			set := scaleSetOf(row.ID)
			row.VMSS = set
			if s, ok := sets[strings.ToLower(set)]; ok {
				row.Priority, row.Eviction = s.Priority, s.Eviction
			}
			k := strings.ToLower(row.SubscriptionID)
			out[k] = append(out[k], row)
		}
	}
	for k := range out {
		sort.Slice(out[k], func(i, j int) bool { return out[k][i].ID < out[k][j].ID })
	}
	return out, nil
}

// queryRows runs q over subs and decodes its rows.
func (p *Provider) queryRows(ctx context.Context, subs []string, q string) ([]vmRow, error) {
	raw, err := p.query(ctx, subs, q)
	if err != nil {
		return nil, err
	}
	out := make([]vmRow, 0, len(raw))
	for _, r := range raw {
		var row vmRow
		if err := json.Unmarshal(r, &row); err != nil {
			return nil, fmt.Errorf("resource graph: a row: %w", err)
		}
		out = append(out, row)
	}
	return out, nil
}

// scaleSetOf is the scale set ID of a member's ID
// (…/virtualMachineScaleSets/{set}/virtualMachines/{instance}).
func scaleSetOf(id string) string {
	if i := strings.LastIndex(strings.ToLower(id), "/virtualmachines/"); i > 0 {
		return id[:i]
	}
	return ""
}

// query runs one Resource Graph query over subs to its last page, waiting
// when the user quota headers say the quota is spent.
func (p *Provider) query(ctx context.Context, subs []string, q string) ([]json.RawMessage, error) {
	req := armresourcegraph.QueryRequest{
		Query:         to.Ptr(q),
		Subscriptions: to.SliceOfPtrs(subs...),
		Options:       &armresourcegraph.QueryRequestOptions{ResultFormat: to.Ptr(armresourcegraph.ResultFormatObjectArray), Top: to.Ptr(int32(p.az.pageSize))},
	}
	var out []json.RawMessage
	for pages := 0; ; pages++ {
		if pages > 10000 {
			return nil, fmt.Errorf("resource graph: more than 10,000 pages; the skip token does not end")
		}
		var raw *http.Response
		resp, err := p.graph.Resources(runtime.WithCaptureResponse(ctx, &raw), req, nil)
		if err != nil {
			return nil, fmt.Errorf("resource graph: %w", classify(err))
		}
		data, err := json.Marshal(resp.Data)
		if err != nil {
			return nil, err
		}
		var rows []json.RawMessage
		if err := json.Unmarshal(data, &rows); err != nil {
			return nil, fmt.Errorf("resource graph: data is not an object array: %w", err)
		}
		out = append(out, rows...)
		if resp.SkipToken == nil || *resp.SkipToken == "" {
			return out, nil
		}
		if err := waitQuota(ctx, raw); err != nil {
			return nil, err
		}
		req.Options.SkipToken = resp.SkipToken
	}
}

// waitQuota waits until Resource Graph's user quota resets when a response
// says none is left (x-ms-user-quota-remaining: 0, resets after hh:mm:ss),
// at most a minute.
func waitQuota(ctx context.Context, resp *http.Response) error {
	if resp == nil || resp.Header.Get("x-ms-user-quota-remaining") != "0" {
		return nil
	}
	d, ok := parseQuotaReset(resp.Header.Get("x-ms-user-quota-resets-after"))
	if !ok {
		d = 5 * time.Second
	}
	d = min(d, time.Minute)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// parseQuotaReset reads a quota reset time, hh:mm:ss.
func parseQuotaReset(s string) (time.Duration, bool) {
	parts := strings.Split(strings.TrimSpace(s), ":")
	if len(parts) != 3 {
		return 0, false
	}
	var d time.Duration
	for i, unit := range []time.Duration{time.Hour, time.Minute, time.Second} {
		n, err := strconv.Atoi(parts[i])
		// Resource Graph's window is seconds long: a reset over a day away
		// is a malformed header (and would overflow), not a wait.
		if err != nil || n < 0 || (i > 0 && n > 59) || (i == 0 && n > 24) {
			return 0, false
		}
		d += time.Duration(n) * unit
	}
	return d, true
}

// regionsWithVMs is one query (per batch) for the regions of every
// subscription's N-series VMs.
func (p *Provider) regionsWithVMs(ctx context.Context, subs []string) (map[string][]string, error) {
	out := map[string][]string{}
	for start := 0; start < len(subs); start += maxGraphSubscriptions {
		batch := subs[start:min(start+maxGraphSubscriptions, len(subs))]
		rows, err := p.query(ctx, batch, regionsQuery)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			var row struct {
				SubscriptionID string `json:"subscriptionId"`
				Location       string `json:"location"`
			}
			if err := json.Unmarshal(r, &row); err != nil {
				return nil, fmt.Errorf("resource graph: a row: %w", err)
			}
			for _, s := range batch {
				if strings.EqualFold(s, row.SubscriptionID) {
					out[s] = append(out[s], strings.ToLower(row.Location))
				}
			}
		}
	}
	for s := range out {
		sort.Strings(out[s])
	}
	return out, nil
}

// armRows lists the scope's VMs and scale-set VMs through ARM: the
// subscription's VMs with their status, and the members of its scale sets
// in the region.
func (p *Provider) armRows(ctx context.Context, scope providers.Scope) ([]vmRow, error) {
	f, err := p.compute(scope.Account)
	if err != nil {
		return nil, err
	}
	var out []vmRow
	pager := f.NewVirtualMachinesClient().NewListAllPager(&armcompute.VirtualMachinesClientListAllOptions{StatusOnly: to.Ptr("true")})
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("listing VMs: %w", classify(err))
		}
		for _, vm := range page.Value {
			if vm == nil || !strings.EqualFold(deref(vm.Location), scope.Region) {
				continue
			}
			out = append(out, rowOfVM(vm))
		}
	}
	sets := f.NewVirtualMachineScaleSetsClient().NewListAllPager(nil)
	for sets.More() {
		page, err := sets.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("listing scale sets: %w", classify(err))
		}
		for _, set := range page.Value {
			if set == nil || !strings.EqualFold(deref(set.Location), scope.Region) || set.SKU == nil || !strings.HasPrefix(deref(set.SKU.Name), "Standard_N") {
				continue
			}
			rg := resourceGroupOf(deref(set.ID))
			members := f.NewVirtualMachineScaleSetVMsClient().NewListPager(rg, deref(set.Name), &armcompute.VirtualMachineScaleSetVMsClientListOptions{Expand: to.Ptr("instanceView")})
			for members.More() {
				mp, err := members.NextPage(ctx)
				if err != nil {
					return nil, fmt.Errorf("listing the VMs of scale set %s: %w", deref(set.Name), classify(err))
				}
				for _, m := range mp.Value {
					if m != nil {
						out = append(out, rowOfSetVM(scope.Account, set, m))
					}
				}
			}
		}
	}
	return out, nil
}

func rowOfVM(vm *armcompute.VirtualMachine) vmRow {
	r := vmRow{ID: deref(vm.ID), Name: deref(vm.Name), Type: typeVM, SubscriptionID: subscriptionOf(deref(vm.ID)),
		ResourceGroup: resourceGroupOf(deref(vm.ID)), Location: deref(vm.Location), Tags: tagsOf(vm.Tags)}
	for _, z := range vm.Zones {
		r.Zones = append(r.Zones, deref(z))
	}
	if pr := vm.Properties; pr != nil {
		if pr.HardwareProfile != nil && pr.HardwareProfile.VMSize != nil {
			r.Size = string(*pr.HardwareProfile.VMSize)
		}
		if pr.Priority != nil {
			r.Priority = string(*pr.Priority)
		}
		if pr.EvictionPolicy != nil {
			r.Eviction = string(*pr.EvictionPolicy)
		}
		if pr.TimeCreated != nil {
			r.Created = pr.TimeCreated.UTC().Format(time.RFC3339)
		}
		if pr.VirtualMachineScaleSet != nil {
			r.VMSS = deref(pr.VirtualMachineScaleSet.ID)
		}
		if pr.ProximityPlacementGroup != nil {
			r.PPG = deref(pr.ProximityPlacementGroup.ID)
		}
		if pr.InstanceView != nil {
			r.Power = powerCode(pr.InstanceView.Statuses)
		}
	}
	return r
}

func rowOfSetVM(sub string, set *armcompute.VirtualMachineScaleSet, m *armcompute.VirtualMachineScaleSetVM) vmRow {
	r := vmRow{ID: deref(m.ID), Name: deref(m.Name), Type: typeVMSSVM, SubscriptionID: sub, ResourceGroup: resourceGroupOf(deref(m.ID)),
		Location: deref(m.Location), Tags: tagsOf(m.Tags), VMSS: deref(set.ID)}
	for _, z := range m.Zones {
		r.Zones = append(r.Zones, deref(z))
	}
	if m.SKU != nil {
		r.Size = deref(m.SKU.Name)
	}
	if sp := set.Properties; sp != nil && sp.VirtualMachineProfile != nil {
		if sp.VirtualMachineProfile.Priority != nil {
			r.Priority = string(*sp.VirtualMachineProfile.Priority)
		}
		if sp.VirtualMachineProfile.EvictionPolicy != nil {
			r.Eviction = string(*sp.VirtualMachineProfile.EvictionPolicy)
		}
	}
	if pr := m.Properties; pr != nil {
		if pr.TimeCreated != nil {
			r.Created = pr.TimeCreated.UTC().Format(time.RFC3339)
		}
		if pr.InstanceView != nil {
			r.Power = powerCode(pr.InstanceView.Statuses)
		}
	}
	return r
}

func powerCode(statuses []*armcompute.InstanceViewStatus) string {
	for _, s := range statuses {
		if s != nil && strings.HasPrefix(deref(s.Code), "PowerState/") {
			return *s.Code
		}
	}
	return ""
}

func tagsOf(t map[string]*string) map[string]string {
	if len(t) == 0 {
		return nil
	}
	out := make(map[string]string, len(t))
	for k, v := range t {
		out[k] = deref(v)
	}
	return out
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// resourceGroupOf and subscriptionOf read an ARM resource ID.
func resourceGroupOf(id string) string { return idPart(id, "resourceGroups") }
func subscriptionOf(id string) string  { return idPart(id, "subscriptions") }

func idPart(id, key string) string {
	parts := strings.Split(strings.Trim(id, "/"), "/")
	for i := 0; i+1 < len(parts); i++ {
		if strings.EqualFold(parts[i], key) {
			return parts[i+1]
		}
	}
	return ""
}

// Power is what gpufinops makes of a VM's PowerState code.
type Power struct {
	State fleet.State
	// Allocated is true for a VM that is stopped but still allocated:
	// billed for compute as if it ran.
	Allocated bool
	// Known is false for a code gpufinops does not know (listed running:
	// never assumed stopped).
	Known bool
}

// PowerOf maps a PowerState code (PowerState/running, …) to a state.
// Stopped (powered off, allocated) and stopping are billed like running.
func PowerOf(code string) Power {
	switch strings.ToLower(strings.TrimPrefix(strings.TrimPrefix(code, "PowerState/"), "powerstate/")) {
	case "running", "starting":
		return Power{State: fleet.Running, Known: true}
	case "stopped", "stopping":
		return Power{State: fleet.Running, Allocated: true, Known: true}
	case "deallocated", "deallocating":
		return Power{State: fleet.Stopped, Known: true}
	}
	return Power{State: fleet.Running}
}

// Lifecycle maps a VM's priority: Spot and (legacy) Low are spot.
func Lifecycle(priority string) fleet.Lifecycle {
	switch strings.ToLower(priority) {
	case "spot", "low":
		return fleet.Spot
	}
	return fleet.OnDemand
}

// SpotInterruption maps a Spot VM's eviction policy (for a Uniform
// scale-set member, its set's virtualMachineProfile.evictionPolicy):
// Deallocate keeps the VM and its disks, so it can be stopped (deallocated)
// like a regular VM; Delete removes it. An empty or unknown policy is
// unknown, which keeps the VM protected; a regular VM has none.
func SpotInterruption(priority, eviction string) fleet.SpotInterruption {
	if Lifecycle(priority) != fleet.Spot {
		return ""
	}
	switch strings.ToLower(strings.TrimSpace(eviction)) {
	case "deallocate":
		return fleet.SpotDeallocate
	case "delete":
		return fleet.SpotDelete
	}
	return ""
}

// skuInfo is what Resource SKUs says of a size. nvmeGB is its local NVMe
// disk (capability NvmeDiskSizeInMiB, in GB), lost when the VM is
// deallocated.
type skuInfo struct {
	gpus, vcpus, memoryGiB float64
	nvmeGB                 float64
}

// instances turns rows into fleet instances with their GPU facts.
func (p *Provider) instances(ctx context.Context, scope providers.Scope, rows []vmRow) ([]fleet.Instance, error) {
	out := []fleet.Instance{}
	if len(rows) == 0 {
		return out, nil
	}
	skus, err := p.sizeFacts(ctx, scope, rows)
	if err != nil {
		return nil, err
	}
	names := map[string]int{}
	for _, r := range rows {
		names[strings.ToLower(r.Name)]++
	}
	for _, r := range rows {
		in, ok := instanceOf(r, skus[strings.ToLower(r.Size)], scope)
		if !ok {
			continue
		}
		if names[strings.ToLower(r.Name)] > 1 {
			in.ID = r.ResourceGroup + "/" + r.Name
		}
		p.mu.Lock()
		p.resourceIDs[key(scope.Account, in.ID)] = r.ID
		p.allocated[in.ID] = PowerOf(r.Power).Allocated
		p.mu.Unlock()
		out = append(out, in)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// instanceOf is one row as a fleet instance; false when the size has no GPU.
// A size the size table lacks is kept when Resource SKUs gives it GPUs: its
// count is the SKU's, and its model the GPU its name names (GPUOfName), else
// unknown (the catalog may know the size; else the scan warns that the model
// is missing).
func instanceOf(r vmRow, sku *skuInfo, scope providers.Scope) (fleet.Instance, bool) {
	info, known := LookupSize(r.Size)
	if !known {
		info.Model, info.MemoryGiB = GPUOfName(r.Size)
	}
	var skuGPUs float64
	if sku != nil {
		skuGPUs = sku.gpus
	}
	count := gpuCount(info, skuGPUs)
	if count <= 0 {
		return fleet.Instance{}, false
	}
	pw := PowerOf(r.Power)
	in := fleet.Instance{
		ID: r.Name, Name: r.Name, Provider: fleet.Azure, Account: scope.Account, Region: strings.ToLower(r.Location),
		InstanceType: r.Size, GPU: fleet.GPU{Model: info.Model, Count: count, MemoryGiB: info.MemoryGiB},
		Lifecycle: Lifecycle(r.Priority), SpotInterruption: SpotInterruption(r.Priority, r.Eviction),
		State: pw.State, StoppedAllocated: pw.Allocated, Tags: r.Tags,
	}
	if len(r.Zones) > 0 {
		in.Zone = in.Region + "-" + r.Zones[0]
	}
	if sku != nil {
		in.VCPUs, in.MemoryGiB = sku.vcpus, sku.memoryGiB
		in.InstanceStoreGB = sku.nvmeGB
	}
	if t, err := time.Parse(time.RFC3339, r.Created); err == nil {
		t = t.UTC()
		in.LaunchTime = &t
	}
	if g := strings.TrimSpace(r.PPG); g != "" {
		in.PlacementGroups = []string{g}
	}
	in.Workload = fleet.WorkloadFromTags(in.Tags)
	in.ManagedBy = fleet.DetectOwner(in.ID, in.Tags)
	if in.ManagedBy == nil && (r.VMSS != "" || strings.EqualFold(r.Type, typeVMSSVM)) {
		name := lastPart(r.VMSS)
		if name == "" {
			name, _, _ = strings.Cut(r.Name, "_")
		}
		in.ManagedBy = &fleet.ManagedBy{Kind: fleet.OwnerVMSS, Name: name}
	}
	return in, true
}

func lastPart(id string) string {
	if i := strings.LastIndex(id, "/"); i >= 0 {
		return id[i+1:]
	}
	return id
}

// sizeFacts are the GPU count, vCPUs and memory of the rows' sizes
// (lower-case name →): the embedded catalog's for the GPU sizes it has (a
// size's hardware does not change), and Resource SKUs' for the others (a
// size neither the size table nor the catalog knows included: its GPUs
// capability decides whether it has GPUs). The local NVMe disk of every
// size is Resource SKUs' (once per region): when they cannot be read and
// the catalog has every size, the listing goes on without it and the scan
// notes that a deallocation may lose data no warning names.
func (p *Provider) sizeFacts(ctx context.Context, scope providers.Scope, rows []vmRow) (map[string]*skuInfo, error) {
	cat, _ := catalog.Embedded() // without it, Resource SKUs says all
	out := map[string]*skuInfo{}
	lacking := false
	for _, r := range rows {
		k := strings.ToLower(r.Size)
		if _, done := out[k]; done {
			continue
		}
		if _, known := LookupSize(r.Size); !known && !strings.HasPrefix(k, "standard_n") {
			continue // not an N-series size (the ARM listing has every VM)
		}
		if cat != nil {
			if t, ok := cat.InstanceType(fleet.Azure, r.Size); ok && t.GPUCount > 0 {
				out[k] = &skuInfo{gpus: t.GPUCount, vcpus: t.VCPUs, memoryGiB: t.MemoryGiB}
				continue
			}
		}
		out[k] = nil
		lacking = true
	}
	skus, err := p.skusOf(ctx, scope)
	if err != nil && (lacking || ctx.Err() != nil) {
		return nil, err
	}
	if err != nil {
		p.mu.Lock()
		p.pendingNotes = append(p.pendingNotes, fmt.Sprintf("%s: %v: the local NVMe disks of its VM sizes are unknown, so a deallocation may lose data on them without a warning", scope, err))
		p.mu.Unlock()
		return out, nil
	}
	for k, v := range out {
		switch s := skus[k]; {
		case v == nil:
			out[k] = s
		case s != nil:
			v.nvmeGB = s.nvmeGB
		}
	}
	return out, nil
}

// skuRead is a region's Resource SKUs read in flight, which the
// subscriptions of that region wait for instead of asking again.
type skuRead struct {
	done chan struct{}
	out  map[string]*skuInfo
	err  error
}

// skusOf reads the GPU, vCPU and memory capabilities of a region's sizes
// (Resource SKUs, filtered by location), once per region for every
// subscription: a size's hardware and local disks do not depend on the
// subscription. A scope that finds the region's read in flight waits for
// it; when that read failed, the waiting scopes try again (one of them
// reads with its own subscription, the others wait for it), so a
// subscription that may read still gets the disks, and a failure is never
// kept.
func (p *Provider) skusOf(ctx context.Context, scope providers.Scope) (map[string]*skuInfo, error) {
	for {
		p.mu.Lock()
		if cached, ok := p.skus[scope.Region]; ok {
			p.mu.Unlock()
			return cached, nil
		}
		r := p.skuReads[scope.Region]
		if r == nil {
			r = &skuRead{done: make(chan struct{})}
			p.skuReads[scope.Region] = r
			p.mu.Unlock()
			r.out, r.err = p.readSKUs(ctx, scope)
			p.mu.Lock()
			delete(p.skuReads, scope.Region)
			p.mu.Unlock()
			close(r.done)
			return r.out, r.err
		}
		p.mu.Unlock()
		select {
		case <-r.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if r.err == nil {
			return r.out, nil
		}
		// Another subscription's read failed: try again, leading the
		// region's next read or waiting for it.
	}
}

// readSKUs is one Resource SKUs read of the scope's region with its
// subscription, kept for the region when it succeeds.
func (p *Provider) readSKUs(ctx context.Context, scope providers.Scope) (map[string]*skuInfo, error) {
	f, err := p.compute(scope.Account)
	if err != nil {
		return nil, err
	}
	out := map[string]*skuInfo{}
	pager := f.NewResourceSKUsClient().NewListPager(&armcompute.ResourceSKUsClientListOptions{Filter: to.Ptr("location eq '" + scope.Region + "'")})
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("resource SKUs: %w", classify(err))
		}
		for _, s := range page.Value {
			if s == nil || !strings.EqualFold(deref(s.ResourceType), "virtualMachines") {
				continue
			}
			info := &skuInfo{}
			for _, c := range s.Capabilities {
				if c == nil {
					continue
				}
				v, err := strconv.ParseFloat(deref(c.Value), 64)
				if err != nil {
					continue
				}
				switch deref(c.Name) {
				case "GPUs":
					info.gpus = v
				case "vCPUs":
					info.vcpus = v
				case "MemoryGB":
					info.memoryGiB = v
				case "NvmeDiskSizeInMiB":
					info.nvmeGB = math.Round(v*(1<<20)/1e9*10) / 10
				}
			}
			out[strings.ToLower(deref(s.Name))] = info
		}
	}
	p.mu.Lock()
	p.skus[scope.Region] = out
	p.mu.Unlock()
	return out, nil
}

// GPUOfName is the GPU a size's name names, by the embedded catalog's GPU
// specs: Azure names most GPU sizes after their GPU (Standard_NC8ads_B200_v6:
// B200). It returns the spec's name and memory, or nothing.
func GPUOfName(size string) (string, float64) {
	cat, err := catalog.Embedded()
	if err != nil {
		return "", 0
	}
	parts := strings.Split(size, "_")
	for _, part := range parts[min(1, len(parts)):] {
		if len(part) < 2 || strings.HasPrefix(strings.ToLower(part), "v") && strings.Trim(part[1:], "0123456789") == "" {
			continue // a version (v5), not a GPU
		}
		if g, ok := cat.GPU(part); ok {
			return g.Name, g.MemoryGiB
		}
	}
	return "", 0
}
