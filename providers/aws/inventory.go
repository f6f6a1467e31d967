package aws

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers"
)

// AcceleratorFamilies are the EC2 instance families with GPUs or other ML
// accelerators. They only narrow DescribeInstances server-side (as
// "family.*" wildcards); whether a type really has accelerators is decided
// by DescribeInstanceTypes (GpuInfo or NeuronInfo), so a family listed here
// by mistake costs nothing and a new family only needs a line here.
var AcceleratorFamilies = []string{
	"p2", "p3", "p3dn", "p4d", "p4de", "p5", "p5e", "p5en",
	"p6-b200", "p6-b300", "p6e-gb200",
	"g3", "g3s", "g4dn", "g4ad", "g5", "g5g", "g6", "g6e", "g6f", "gr6", "gr6f", "g7e",
	"inf1", "inf2", "trn1", "trn1n", "trn2",
	"dl1", "dl2q",
}

// acceleratorPrefixes are the letters every accelerator family's name
// starts with: as "p*", "g*", … wildcards beside AcceleratorFamilies they
// let DescribeInstances find a family launched after this list was written
// (whose types the catalog lacks too); DescribeInstanceTypes still decides
// what has accelerators.
var acceleratorPrefixes = []string{"p", "g", "inf", "trn", "dl"}

// gpuModelAliases turns the accelerator names DescribeInstanceTypes reports
// into the catalog's model names where the two differ. AWS names the GPU
// only ("A100"); the catalog tells the memory variants apart. A row applies
// when the name matches (case-insensitively) and the reported memory per
// device is at least minMiB.
var gpuModelAliases = []struct {
	awsName string
	minMiB  int
	model   string
}{
	{"A100", 81920, "A100-80GB"}, // p4de.24xlarge
	{"V100", 32768, "V100-32GB"}, // p3dn.24xlarge
}

// catalogModel maps an AWS accelerator name and per-device memory to the
// catalog's GPU model name.
func catalogModel(name string, memMiB int) string {
	for _, a := range gpuModelAliases {
		if strings.EqualFold(name, a.awsName) && memMiB >= a.minMiB {
			return a.model
		}
	}
	return name
}

// liveStates are the DescribeInstances states the inventory keeps: a
// terminated instance no longer costs anything, and shutting-down is on its
// way there.
var liveStates = []string{"pending", "running", "stopping", "stopped"}

// describeTypesBatch is how many explicit type names go into one
// DescribeInstanceTypes call.
const describeTypesBatch = 100

// ListGPUInstances lists the scope's GPU and accelerator instances that are
// pending, running, stopping or stopped. Lifecycle: instanceLifecycle "spot"
// is spot; "capacity-block" and "scheduled" are prepaid for a fixed term and
// map to committed (stopping them early saves nothing, which is what the
// engine assumes of committed capacity); everything else, including
// interruptible capacity reservations, is on-demand. State: pending and
// running are running, stopping and stopped are stopped. ManagedBy is read
// from the owner tags, InstanceStoreGB from the type's InstanceStorageInfo,
// Hibernation from HibernationOptions, PlacementGroups from
// Placement.GroupId (GroupName when no ID is given), and a spot instance's SpotInterruption from its
// request (spotInterruptions). SageMaker's GPU items of the scope, read
// at the same time, follow the EC2 instances (sageMakerItems).
func (p *Provider) ListGPUInstances(ctx context.Context, scope providers.Scope) ([]fleet.Instance, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c, err := p.ec2Client(scope)
	if err != nil {
		return nil, err
	}
	// SageMaker is read beside EC2, not after it.
	var managed []fleet.Instance
	var managedErr error
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		managed, managedErr = p.sageMakerItems(sctx, scope)
	}()
	vms, err := p.listGPUInstances(ctx, c, scope)
	if err != nil {
		cancel() // the scope failed: SageMaker's reads are moot
		<-done
		return nil, err
	}
	<-done
	if managedErr != nil {
		return nil, managedErr
	}
	return append(vms, managed...), nil
}

// inventoryAPI is the part of the EC2 client the inventory uses.
type inventoryAPI interface {
	ec2.DescribeInstancesAPIClient
	ec2.DescribeInstanceTypesAPIClient
	ec2.DescribeSpotInstanceRequestsAPIClient
}

func (p *Provider) listGPUInstances(ctx context.Context, c inventoryAPI, scope providers.Scope) ([]fleet.Instance, error) {
	raw, err := describeGPUInstances(ctx, c)
	if err != nil {
		return nil, err
	}
	if len(raw) == 0 {
		return []fleet.Instance{}, nil
	}
	seen := map[string]bool{}
	var names []string
	for _, r := range raw {
		if t := string(r.inst.InstanceType); !seen[t] {
			seen[t] = true
			names = append(names, t)
		}
	}
	infos, err := p.instanceTypes(ctx, c, scope.Region, names)
	if err != nil {
		return nil, err
	}
	out := make([]fleet.Instance, 0, len(raw))
	for _, r := range raw {
		info := infos[string(r.inst.InstanceType)]
		if !info.accelerator {
			continue
		}
		in, ok := toFleetInstance(r, info, scope)
		if ok {
			out = append(out, in)
		}
	}
	if err := p.spotInterruptions(ctx, c, scope, raw, out); err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// ec2Instance is an instance with the account that owns its reservation.
type ec2Instance struct {
	inst  types.Instance
	owner string
}

// describeGPUInstances pages through DescribeInstances with the accelerator
// family and live-state filters.
func describeGPUInstances(ctx context.Context, c ec2.DescribeInstancesAPIClient) ([]ec2Instance, error) {
	families := make([]string, 0, len(AcceleratorFamilies)+len(acceleratorPrefixes))
	for _, f := range AcceleratorFamilies {
		families = append(families, f+".*")
	}
	for _, p := range acceleratorPrefixes {
		families = append(families, p+"*")
	}
	in := &ec2.DescribeInstancesInput{
		MaxResults: aws.Int32(1000),
		Filters: []types.Filter{
			{Name: aws.String("instance-type"), Values: families},
			{Name: aws.String("instance-state-name"), Values: liveStates},
		},
	}
	var out []ec2Instance
	pg := ec2.NewDescribeInstancesPaginator(c, in)
	for pg.HasMorePages() {
		page, err := pg.NextPage(ctx)
		if err != nil {
			return nil, callError(ctx, "DescribeInstances", err)
		}
		for _, res := range page.Reservations {
			for _, inst := range res.Instances {
				out = append(out, ec2Instance{inst: inst, owner: aws.ToString(res.OwnerId)})
			}
		}
	}
	return out, nil
}

// typeEntry is one type's accelerator facts in one region, or the
// DescribeInstanceTypes call under way for it: the scopes of a region (one
// per account) start together, and each type is asked for once.
type typeEntry struct {
	// done is closed once info is set or the call for it failed.
	done  chan struct{}
	info  instanceTypeInfo
	known bool
}

// instanceTypes returns the accelerator facts of the named types in a
// region, asking DescribeInstanceTypes only for types neither cached nor
// being asked for by another scope of the region, whose answer it waits for
// instead. Types AWS does not describe are cached as having no accelerator.
// A call that fails leaves its types uncached, and a scope that waited for
// them asks again.
func (p *Provider) instanceTypes(ctx context.Context, c ec2.DescribeInstanceTypesAPIClient, region string, names []string) (map[string]instanceTypeInfo, error) {
	out := make(map[string]instanceTypeInfo, len(names))
	var mine, theirs []string
	entries := make(map[string]*typeEntry, len(names))
	p.typeMu.Lock()
	for _, n := range names {
		e := p.typeMap[region+"|"+n]
		if e == nil {
			e = &typeEntry{done: make(chan struct{})}
			p.typeMap[region+"|"+n] = e
			mine = append(mine, n)
		} else {
			theirs = append(theirs, n)
		}
		entries[n] = e
	}
	p.typeMu.Unlock()
	sort.Strings(mine)
	for start := 0; start < len(mine); start += describeTypesBatch {
		batch := mine[start:min(start+describeTypesBatch, len(mine))]
		got, err := describeTypes(ctx, c, batch)
		if err != nil {
			p.dropTypes(region, mine[start:], entries)
			return nil, err
		}
		p.typeMu.Lock()
		for _, n := range batch {
			e := entries[n]
			e.info, e.known = got[n], true // zero value: no accelerator
			close(e.done)
			out[n] = e.info
		}
		p.typeMu.Unlock()
	}
	var retry []string
	for _, n := range theirs {
		e := entries[n]
		select {
		case <-e.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if e.known {
			out[n] = e.info
		} else {
			retry = append(retry, n)
		}
	}
	if len(retry) > 0 {
		again, err := p.instanceTypes(ctx, c, region, retry)
		if err != nil {
			return nil, err
		}
		maps.Copy(out, again)
	}
	return out, nil
}

// dropTypes forgets the entries of types whose call failed, waking the
// scopes waiting for them.
func (p *Provider) dropTypes(region string, names []string, entries map[string]*typeEntry) {
	p.typeMu.Lock()
	defer p.typeMu.Unlock()
	for _, n := range names {
		delete(p.typeMap, region+"|"+n)
		close(entries[n].done)
	}
}

// describeTypes asks DescribeInstanceTypes for up to describeTypesBatch
// named types.
func describeTypes(ctx context.Context, c ec2.DescribeInstanceTypesAPIClient, names []string) (map[string]instanceTypeInfo, error) {
	got := map[string]instanceTypeInfo{}
	req := &ec2.DescribeInstanceTypesInput{InstanceTypes: make([]types.InstanceType, len(names))}
	for i, n := range names {
		req.InstanceTypes[i] = types.InstanceType(n)
	}
	pg := ec2.NewDescribeInstanceTypesPaginator(c, req)
	for pg.HasMorePages() {
		page, err := pg.NextPage(ctx)
		if err != nil {
			return nil, callError(ctx, "DescribeInstanceTypes", err)
		}
		for _, t := range page.InstanceTypes {
			got[string(t.InstanceType)] = typeInfoOf(t)
		}
	}
	return got, nil
}

// typeInfoOf reads a type's accelerators and host from DescribeInstanceTypes.
// GPU count is the sum over GPU entries, each counted as Count ×
// GpuPartitionSize when the GPU is partitioned (g6f: 1 × 0.125); memory is
// per device (per partition) as AWS reports it, else the total divided by the
// count. Neuron devices (Inferentia, Trainium) count as accelerators the same
// way.
func typeInfoOf(t types.InstanceTypeInfo) instanceTypeInfo {
	var info instanceTypeInfo
	if t.VCpuInfo != nil {
		info.vcpus = int(aws.ToInt32(t.VCpuInfo.DefaultVCpus))
	}
	if t.MemoryInfo != nil {
		info.memoryMiB = int(aws.ToInt64(t.MemoryInfo.SizeInMiB))
	}
	if st := t.InstanceStorageInfo; st != nil {
		info.instanceStoreGB = aws.ToInt64(st.TotalSizeInGB)
		if info.instanceStoreGB <= 0 {
			for _, d := range st.Disks {
				info.instanceStoreGB += aws.ToInt64(d.SizeInGB) * int64(max(aws.ToInt32(d.Count), 1))
			}
		}
	}
	type device struct {
		name   string
		count  float64
		memMiB int
	}
	var devices []device
	var totalMiB int
	if g := t.GpuInfo; g != nil {
		totalMiB = int(aws.ToInt32(g.TotalGpuMemoryInMiB))
		for _, d := range g.Gpus {
			n := float64(aws.ToInt32(d.Count))
			if part := aws.ToFloat64(d.GpuPartitionSize); part > 0 && part < 1 {
				if n == 0 {
					n = 1
				}
				n *= part
			}
			var mem int
			if d.MemoryInfo != nil {
				mem = int(aws.ToInt32(d.MemoryInfo.SizeInMiB))
			}
			devices = append(devices, device{aws.ToString(d.Name), n, mem})
		}
	}
	if len(devices) == 0 && t.NeuronInfo != nil {
		totalMiB = int(aws.ToInt32(t.NeuronInfo.TotalNeuronDeviceMemoryInMiB))
		for _, d := range t.NeuronInfo.NeuronDevices {
			var mem int
			if d.MemoryInfo != nil {
				mem = int(aws.ToInt32(d.MemoryInfo.SizeInMiB))
			}
			devices = append(devices, device{aws.ToString(d.Name), float64(aws.ToInt32(d.Count)), mem})
		}
	}
	for _, d := range devices {
		info.gpuCount += d.count
		if info.gpuModel == "" && d.name != "" {
			info.gpuModel = d.name
			info.gpuMemoryMiB = d.memMiB
		}
	}
	if info.gpuCount <= 0 || info.gpuModel == "" {
		return instanceTypeInfo{vcpus: info.vcpus, memoryMiB: info.memoryMiB, instanceStoreGB: info.instanceStoreGB}
	}
	if info.gpuMemoryMiB == 0 && totalMiB > 0 {
		info.gpuMemoryMiB = int(float64(totalMiB) / max(info.gpuCount, 1))
	}
	info.accelerator = true
	info.gpuModel = catalogModel(info.gpuModel, info.gpuMemoryMiB)
	return info
}

// toFleetInstance maps an EC2 instance; ok is false for states the inventory
// does not keep.
func toFleetInstance(r ec2Instance, info instanceTypeInfo, scope providers.Scope) (fleet.Instance, bool) {
	inst := r.inst
	var state fleet.State
	if inst.State != nil {
		switch inst.State.Name {
		case types.InstanceStateNamePending, types.InstanceStateNameRunning:
			state = fleet.Running
		case types.InstanceStateNameStopping, types.InstanceStateNameStopped:
			state = fleet.Stopped
		}
	}
	if state == "" {
		return fleet.Instance{}, false
	}
	account := scope.Account
	if account == "" {
		account = r.owner
	}
	out := fleet.Instance{
		ID:           aws.ToString(inst.InstanceId),
		Provider:     fleet.AWS,
		Account:      account,
		Region:       scope.Region,
		InstanceType: string(inst.InstanceType),
		GPU: fleet.GPU{
			Model:     info.gpuModel,
			Count:     info.gpuCount,
			MemoryGiB: float64(info.gpuMemoryMiB) / 1024,
		},
		VCPUs:     float64(info.vcpus),
		MemoryGiB: float64(info.memoryMiB) / 1024,
		Lifecycle: lifecycleOf(inst.InstanceLifecycle),
		State:     state,
	}
	if pl := inst.Placement; pl != nil {
		out.Zone = aws.ToString(pl.AvailabilityZone)
		// The group's ID is unique in the region and shown to every
		// account, while an instance of a group shared from another
		// account may show the ID only: the ID is the key, the name only
		// when no ID is given.
		if g := cmp.Or(strings.TrimSpace(aws.ToString(pl.GroupId)), strings.TrimSpace(aws.ToString(pl.GroupName))); g != "" {
			out.PlacementGroups = []string{g}
		}
	}
	if inst.LaunchTime != nil {
		t := inst.LaunchTime.UTC()
		out.LaunchTime = &t
	}
	if len(inst.Tags) > 0 {
		out.Tags = make(map[string]string, len(inst.Tags))
		for _, tag := range inst.Tags {
			k := aws.ToString(tag.Key)
			out.Tags[k] = aws.ToString(tag.Value)
			if k == "Name" {
				out.Name = aws.ToString(tag.Value)
			}
		}
	}
	// AWS knows nothing of workloads: the WorkloadType, ModelName,
	// ModelPrecision, Checkpoints and TrainingRun tags say it.
	out.Workload = fleet.WorkloadFromTags(out.Tags)
	// The services that own instances tag them (aws:autoscaling:groupName,
	// eks:nodegroup-name, karpenter.sh/nodepool, aws:ec2spot:fleet-request-id,
	// …; fleet.OwnerRules).
	out.ManagedBy = fleet.DetectOwner(out.ID, out.Tags)
	if info.instanceStoreGB > 0 {
		out.InstanceStoreGB = float64(info.instanceStoreGB)
	}
	if h := inst.HibernationOptions; h != nil && aws.ToBool(h.Configured) {
		out.Hibernation = true
	}
	return out, true
}

// lifecycleOf maps EC2's instanceLifecycle to the purchase option.
func lifecycleOf(l types.InstanceLifecycleType) fleet.Lifecycle {
	switch l {
	case types.InstanceLifecycleTypeSpot:
		return fleet.Spot
	case types.InstanceLifecycleTypeCapacityBlock, types.InstanceLifecycleTypeScheduled:
		return fleet.Committed
	}
	return fleet.OnDemand
}

// callError names the failed operation and maps the error to a sentinel; a
// cancelled or expired ctx is returned as ctx.Err() itself.
func callError(ctx context.Context, op string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	return fmt.Errorf("%s: %w", op, classify(err))
}
