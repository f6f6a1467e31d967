package gcp

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"time"

	"cloud.google.com/go/compute/apiv1/computepb"
	"google.golang.org/api/iterator"
	"google.golang.org/protobuf/proto"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing/catalog"
	"github.com/gpufinops/gpufinops/providers"
)

// pageSize is the aggregated listing's page: the most Compute Engine allows.
const pageSize = 500

// A project's aggregated listing serves each of its regions once: the
// region scopes of one scan share it however far apart they start, and a
// region asked for again (idle-stop's re-check right before a stop, the
// next scan) gets a new listing, with the VMs' current state and labels.
// listingMaxAge bounds how long it waits for regions not asked for yet; a
// stop drops it.
const listingMaxAge = 5 * time.Minute

// listing is one project's aggregated instance listing, shared by the
// project's region scopes: one aggregatedList pass per project, not one
// per region.
type listing struct {
	done      chan struct{}
	at        time.Time
	instances []*computepb.Instance
	// unreachable are the zones (zones/NAME) the listing could not read.
	unreachable []string
	err         error
	// taken are the regions it has served (guarded by Provider.listMu).
	taken map[string]bool
}

func regionsRequest(project string) *computepb.ListRegionsRequest {
	return &computepb.ListRegionsRequest{Project: project, MaxResults: proto.Uint32(pageSize)}
}

// projectListing returns the project's listing for region: the one in
// flight or done that has not served region yet (and is younger than
// listingMaxAge), else a new one.
func (p *Provider) projectListing(ctx context.Context, project, region string) (*listing, error) {
	p.listMu.Lock()
	l := p.lists[project]
	if l != nil && l.taken[region] {
		l = nil
	}
	if l != nil {
		select {
		case <-l.done:
			if l.err != nil || p.opts.Now().Sub(l.at) > listingMaxAge {
				l = nil
			}
		default:
		}
	}
	mine := l == nil
	if mine {
		l = &listing{done: make(chan struct{}), taken: map[string]bool{}}
		p.lists[project] = l
	}
	l.taken[region] = true
	p.listMu.Unlock()
	if mine {
		l.instances, l.unreachable, l.err = p.aggregatedList(ctx, project, "")
		l.at = p.opts.Now()
		close(l.done)
	}
	select {
	case <-l.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if l.err != nil {
		if !mine && ctx.Err() == nil && (errors.Is(l.err, context.Canceled) || errors.Is(l.err, context.DeadlineExceeded)) {
			return p.projectListing(ctx, project, region) // another caller's context ended
		}
		return nil, l.err
	}
	return l, nil
}

// forget drops a project's listing (after a stop).
func (p *Provider) forget(project string) {
	p.listMu.Lock()
	delete(p.lists, project)
	p.listMu.Unlock()
}

// aggregatedList reads every zone of a project, page by page.
func (p *Provider) aggregatedList(ctx context.Context, project, filter string) ([]*computepb.Instance, []string, error) {
	req := &computepb.AggregatedListInstancesRequest{Project: project, MaxResults: proto.Uint32(pageSize)}
	if filter != "" {
		req.Filter = proto.String(filter)
	}
	ctx, done := p.withCall(ctx)
	defer done()
	it := p.instances.AggregatedList(ctx, req)
	var out []*computepb.Instance
	unreachable := map[string]bool{}
	var lastPage any
	for {
		pair, err := it.Next()
		if errors.Is(err, iterator.Done) {
			break
		}
		if err != nil {
			return nil, nil, callError(ctx, err)
		}
		if it.Response != lastPage {
			lastPage = it.Response
			if r, ok := it.Response.(*computepb.InstanceAggregatedList); ok {
				for _, u := range r.GetUnreachables() {
					unreachable[u] = true
				}
			}
		}
		out = append(out, pair.Value.GetInstances()...)
	}
	// The iterator keeps the last page's response when that page is empty.
	if r, ok := it.Response.(*computepb.InstanceAggregatedList); ok {
		for _, u := range r.GetUnreachables() {
			unreachable[u] = true
		}
	}
	var un []string
	for u := range unreachable {
		un = append(un, u)
	}
	sort.Strings(un)
	return out, un, nil
}

// ListGPUInstances lists the GPU VMs of a project in one region, from the
// project's aggregated listing. A zone of the region that the listing could
// not reach makes the region fail (its VMs are unknown, not absent); the
// project's other regions are kept. GPUs come from guestAccelerators, else
// from the machine type's bundled accelerators (a2, a3, a4, g2, g4).
// Lifecycle: SPOT or preemptible is spot, the rest (STANDARD, FLEX_START,
// RESERVATION_BOUND) on-demand: a committed use discount covers ordinary
// STANDARD VMs in billing and shows on no VM. State: only RUNNING is running.
// ManagedBy is read from the labels and the created-by metadata,
// InstanceStoreGB from the local SSDs (SCRATCH disks), PlacementGroups and
// ResourcePolicies from the attached resource policies (placement).
func (p *Provider) ListGPUInstances(ctx context.Context, scope providers.Scope) ([]fleet.Instance, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	l, err := p.projectListing(ctx, scope.Account, scope.Region)
	if err != nil {
		return nil, fmt.Errorf("instances.aggregatedList: %w", err)
	}
	var lost []string
	for _, u := range l.unreachable {
		if z := path.Base(u); regionOf(z) == scope.Region {
			lost = append(lost, z)
		}
	}
	if len(lost) > 0 {
		return nil, fmt.Errorf("instances.aggregatedList: zones %s unreachable: the region's VMs are unknown", strings.Join(lost, ", "))
	}
	out := []fleet.Instance{}
	for _, inst := range l.instances {
		zone := path.Base(inst.GetZone())
		if regionOf(zone) != scope.Region {
			continue
		}
		in, ok, err := p.toInstance(ctx, scope, inst)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, in)
		}
	}
	if p.managedAI() {
		p.joinWorkbench(ctx, scope, out)
		out = append(out, p.listVertex(ctx, scope)...)
	}
	sortItems(out)
	return out, nil
}

// workloadKeys are the workload tags read from metadata too.
var workloadKeys = map[string]bool{
	fleet.TagWorkloadType: true, fleet.TagModelName: true, fleet.TagModelParams: true,
	fleet.TagModelPrecision: true, fleet.TagCheckpoints: true, fleet.TagTrainingRun: true,
}

// regionOf is a zone's region: us-central1-a → us-central1.
func regionOf(zone string) string {
	if i := strings.LastIndexByte(zone, '-'); i > 0 {
		return zone[:i]
	}
	return zone
}

// toInstance maps a VM; ok is false for a VM without GPUs.
func (p *Provider) toInstance(ctx context.Context, scope providers.Scope, inst *computepb.Instance) (fleet.Instance, bool, error) {
	zone := path.Base(inst.GetZone())
	mt := path.Base(inst.GetMachineType())
	model, count, memGiB := attachedGPUs(inst.GetGuestAccelerators())
	var info machineInfo
	if count > 0 || bundlesGPUs(mt) {
		var err error
		if info, err = p.machineType(ctx, scope.Account, zone, mt); err != nil {
			if !errors.Is(err, providers.ErrNotFound) {
				return fleet.Instance{}, false, err
			}
			// A machine type machineTypes.get does not describe: the VM is
			// kept with what it says itself (its attached GPUs), and the
			// scan warns of what is missing.
			info = machineInfo{}
		}
	}
	if count == 0 {
		model, count, memGiB = info.gpuModel, info.gpuCount, info.gpuMemoryGiB
	}
	if count == 0 && !bundlesGPUs(mt) {
		return fleet.Instance{}, false, nil
	}
	if m, ok := gpuMemory[model]; ok {
		memGiB = m
	}
	out := fleet.Instance{
		ID:           inst.GetName(),
		Provider:     fleet.GCP,
		Account:      scope.Account,
		Region:       scope.Region,
		Zone:         zone,
		InstanceType: mt,
		GPU:          fleet.GPU{Model: model, Count: count, MemoryGiB: memGiB},
		VCPUs:        info.vcpus,
		MemoryGiB:    info.memoryGiB,
		Lifecycle:    lifecycleOf(inst.GetScheduling()),
		State:        stateOf(inst.GetStatus()),
	}
	if out.Lifecycle == fleet.Spot {
		out.SpotInterruption = spotInterruptionOf(inst.GetScheduling())
	}
	if id := inst.GetId(); id != 0 {
		p.idMu.Lock()
		p.ids[scope.Account+"/"+out.ID] = strconv.FormatUint(id, 10)
		p.idMu.Unlock()
	}
	for _, ts := range []string{inst.GetLastStartTimestamp(), inst.GetCreationTimestamp()} {
		if t, err := time.Parse(time.RFC3339Nano, ts); err == nil {
			t = t.UTC()
			out.LaunchTime = &t
			break
		}
	}
	tags := map[string]string{}
	for k, v := range inst.GetLabels() {
		tags[k] = v
	}
	// Workload keys may be labels or, where a label value cannot hold them
	// (model names with dots), metadata items.
	work := map[string]string{}
	for _, item := range inst.GetMetadata().GetItems() {
		switch k := item.GetKey(); {
		case k == "created-by":
			tags[k] = item.GetValue()
		case workloadKeys[k]:
			work[k] = item.GetValue()
		}
	}
	if len(tags) > 0 {
		out.Tags = tags
	}
	for k, v := range tags {
		if _, ok := work[k]; !ok {
			work[k] = v
		}
	}
	out.Workload = fleet.WorkloadFromTags(work)
	out.ManagedBy = fleet.DetectOwner(out.ID, out.Tags)
	var ssd int64
	for _, d := range inst.GetDisks() {
		if d.GetType() == "SCRATCH" {
			ssd += d.GetDiskSizeGb()
		}
	}
	if ssd > 0 {
		out.InstanceStoreGB = float64(ssd)
	}
	var err error
	if out.PlacementGroups, out.ResourcePolicies, err = p.placement(ctx, scope.Account, inst.GetResourcePolicies()); err != nil {
		return fleet.Instance{}, false, err
	}
	return out, true, nil
}

// lifecycleOf maps the scheduling options to the purchase option. No
// provisioning model says a VM is committed: RESERVATION_BOUND binds a VM
// to a reservation's lifecycle, and a VM a commitment covers is STANDARD.
func lifecycleOf(s *computepb.Scheduling) fleet.Lifecycle {
	switch {
	case s.GetPreemptible(), s.GetProvisioningModel() == "SPOT":
		return fleet.Spot
	}
	return fleet.OnDemand
}

// spotInterruptionOf maps a Spot (or preemptible) VM's
// instanceTerminationAction: STOP keeps the VM and its disks, so it can be
// stopped like a standard VM; DELETE removes it. An action left out or
// unknown is unknown, which keeps the VM protected.
func spotInterruptionOf(s *computepb.Scheduling) fleet.SpotInterruption {
	switch strings.ToUpper(strings.TrimSpace(s.GetInstanceTerminationAction())) {
	case "STOP":
		return fleet.SpotStop
	case "DELETE":
		return fleet.SpotDelete
	}
	return ""
}

// stateOf maps a VM status: only RUNNING accrues VM-hours.
func stateOf(status string) fleet.State {
	if status == "RUNNING" {
		return fleet.Running
	}
	return fleet.Stopped
}

// attachedGPUs sums the guest accelerators; the model is the first's, and
// so is the memory per GPU its type's name gives (nvidia-h100-80gb: 80).
func attachedGPUs(accs []*computepb.AcceleratorConfig) (string, float64, float64) {
	var model string
	var n, mem float64
	for _, a := range accs {
		if a.GetAcceleratorCount() <= 0 {
			continue
		}
		if model == "" {
			name := path.Base(a.GetAcceleratorType())
			model, mem = GPUModel(name), memoryInName(name)
		}
		n += float64(a.GetAcceleratorCount())
	}
	return model, n, mem
}

var memorySuffix = regexp.MustCompile(`-(\d+)gb$`)

// memoryInName is the memory per GPU an accelerator type's name states
// (nvidia-a100-80gb: 80), zero when it states none.
func memoryInName(acceleratorType string) float64 {
	m := memorySuffix.FindStringSubmatch(strings.ToLower(acceleratorType))
	if m == nil {
		return 0
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return 0
	}
	return v
}

// bundledFamilies are the accelerator-optimized families whose machine
// types include their GPUs.
var bundledFamilies = []string{"a2", "a3", "a4", "a4x", "g2", "g4"}

// bundlesGPUs reports whether a machine type's family bundles GPUs.
func bundlesGPUs(machineType string) bool {
	family, _, _ := strings.Cut(machineType, "-")
	for _, f := range bundledFamilies {
		if family == f {
			return true
		}
	}
	return false
}

// machineInfo is what machineTypes.get says of a type.
type machineInfo struct {
	gpuModel     string
	gpuCount     float64
	gpuMemoryGiB float64
	vcpus        float64
	memoryGiB    float64
}

// machineType is a machine type's hardware: the embedded catalog's for the
// GPU types it has (a type's hardware does not change), else
// machineTypes.get's, read once per provider (types are the same in every
// zone that offers them) however many scopes ask at once.
func (p *Provider) machineType(ctx context.Context, project, zone, name string) (machineInfo, error) {
	p.typeMu.Lock()
	info, ok := p.types[name]
	p.typeMu.Unlock()
	if ok {
		return info, nil
	}
	if info, ok := catalogMachine(name); ok {
		p.typeMu.Lock()
		p.types[name] = info
		p.typeMu.Unlock()
		return info, nil
	}
	v, err, _ := p.typeReads.Do(name, func() (any, error) {
		mt, err := p.machineTypes.Get(ctx, &computepb.GetMachineTypeRequest{Project: project, Zone: zone, MachineType: name})
		if err != nil {
			return machineInfo{}, fmt.Errorf("machineTypes.get %s: %w", name, callError(ctx, err))
		}
		return p.remember(mt), nil
	})
	if err != nil {
		return machineInfo{}, err
	}
	return v.(machineInfo), nil
}

// catalogMachine is the embedded catalog's hardware of a GPU machine type,
// or of a TPU slice: a slice (tpu-v5p-8) is a Cloud TPU accelerator type,
// not a Compute Engine machine type, so machineTypes.get cannot describe
// it and the catalog, which gives its chips but no host vCPUs or memory,
// is its only source.
func catalogMachine(name string) (machineInfo, bool) {
	cat, err := catalog.Embedded()
	if err != nil {
		return machineInfo{}, false
	}
	t, ok := cat.InstanceType(fleet.GCP, name)
	if !ok || t.GPUCount <= 0 || t.GPUModel == "" || (t.VCPUs <= 0 && !tpuSlice(name)) {
		return machineInfo{}, false
	}
	return machineInfo{gpuModel: t.GPUModel, gpuCount: t.GPUCount, gpuMemoryGiB: t.GPUMemoryGiB, vcpus: t.VCPUs, memoryGiB: t.MemoryGiB}, true
}

// tpuSlice says whether a type is a Cloud TPU slice (tpu-v6e-4, TPU-V5P-8).
func tpuSlice(name string) bool {
	return strings.HasPrefix(strings.ToLower(strings.TrimSpace(name)), "tpu-")
}

// remember keeps what a machine type says of its hardware.
func (p *Provider) remember(mt *computepb.MachineType) machineInfo {
	info := machineInfo{vcpus: float64(mt.GetGuestCpus()), memoryGiB: math.Round(float64(mt.GetMemoryMb())/1024*100) / 100}
	for _, a := range mt.GetAccelerators() {
		if info.gpuModel == "" {
			info.gpuModel = GPUModel(a.GetGuestAcceleratorType())
			info.gpuMemoryGiB = memoryInName(a.GetGuestAcceleratorType())
		}
		info.gpuCount += float64(a.GetGuestAcceleratorCount())
	}
	name := mt.GetName()
	p.typeMu.Lock()
	p.types[name] = info
	p.typeMu.Unlock()
	return info
}

// accelerators maps Compute Engine's accelerator type names to the
// catalog's GPU models.
var accelerators = map[string]string{
	"nvidia-tesla-t4":       "T4",
	"nvidia-tesla-v100":     "V100",
	"nvidia-tesla-p100":     "P100",
	"nvidia-tesla-p4":       "P4",
	"nvidia-tesla-k80":      "K80",
	"nvidia-tesla-a100":     "A100",
	"nvidia-a100-80gb":      "A100-80GB",
	"nvidia-h100-80gb":      "H100",
	"nvidia-h100-mega-80gb": "H100-MEGA",
	"nvidia-h200-141gb":     "H200",
	"nvidia-b200":           "B200",
	"nvidia-gb200":          "GB200",
	"nvidia-l4":             "L4",
	"nvidia-rtx-pro-6000":   "RTX PRO Server 6000",
}

// GPUModel is the catalog's model for an accelerator type name; an unknown
// name is kept, upper-cased without its nvidia- and tesla- prefixes.
func GPUModel(acceleratorType string) string {
	acceleratorType = strings.ToLower(strings.TrimSpace(acceleratorType))
	if m, ok := accelerators[acceleratorType]; ok {
		return m
	}
	s := strings.TrimPrefix(strings.TrimPrefix(acceleratorType, "nvidia-"), "tesla-")
	if s == "" {
		return "GPU"
	}
	return strings.ToUpper(s)
}

// gpuMemory is the memory per GPU of each model, in GiB.
var gpuMemory = map[string]float64{
	"T4": 16, "V100": 16, "P100": 16, "P4": 8, "K80": 12, "A100": 40, "A100-80GB": 80,
	"H100": 80, "H100-MEGA": 80, "H200": 141, "B200": 180, "GB200": 186, "L4": 24, "RTX PRO Server 6000": 96,
}

// policiesOf are the resource policies attached to an instance, each as its
// "projects/P/regions/R/resourcePolicies/N" path (the same whatever API
// version's URL named it). The URL does not say a policy's kind: placement
// reads it.
func policiesOf(urls []string) []string {
	var out []string
	for _, u := range urls {
		if i := strings.Index(u, "projects/"); i >= 0 {
			u = u[i:]
		}
		if u = strings.TrimSpace(u); u != "" {
			out = append(out, u)
		}
	}
	return out
}
