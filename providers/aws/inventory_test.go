package aws

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/smithy-go"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers"
)

// fakeEC2 is an in-memory EC2 for the unit tests: DescribeInstances pages
// (MaxResults per page), DescribeInstanceTypes of explicit names, and
// StopInstances with DryRun.
type fakeEC2 struct {
	mu        sync.Mutex
	instances []ec2Instance
	types     map[string]types.InstanceTypeInfo
	err       error // returned by every call when set

	describeCalls, typeCalls, stopCalls, dryRuns int
	lastFilters                                  []types.Filter
	lastMaxResults                               int32
	typeNames                                    [][]string

	// stop behaviour
	denyStop    bool            // UnauthorizedOperation on the dry run
	oneTimeSpot map[string]bool // UnsupportedOperation on the real stop

	// spot requests: DescribeSpotInstanceRequests answers these by the
	// spot-instance-request-id filter, or spotErr.
	spotRequests []types.SpotInstanceRequest
	spotErr      error
	spotBatches  [][]string
}

func (f *fakeEC2) DescribeSpotInstanceRequests(ctx context.Context, in *ec2.DescribeSpotInstanceRequestsInput, _ ...func(*ec2.Options)) (*ec2.DescribeSpotInstanceRequestsOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.spotErr != nil {
		return nil, f.spotErr
	}
	var ids []string
	for _, fl := range in.Filters {
		if aws.ToString(fl.Name) == "spot-instance-request-id" {
			ids = fl.Values
		}
	}
	f.spotBatches = append(f.spotBatches, ids)
	out := &ec2.DescribeSpotInstanceRequestsOutput{}
	for _, r := range f.spotRequests {
		if slices.Contains(ids, aws.ToString(r.SpotInstanceRequestId)) {
			out.SpotInstanceRequests = append(out.SpotInstanceRequests, r)
		}
	}
	return out, nil
}

func (f *fakeEC2) DescribeInstances(ctx context.Context, in *ec2.DescribeInstancesInput, _ ...func(*ec2.Options)) (*ec2.DescribeInstancesOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.describeCalls++
	if f.err != nil {
		return nil, f.err
	}
	if len(in.InstanceIds) > 0 {
		out := &ec2.DescribeInstancesOutput{}
		for _, r := range f.instances {
			if slices.Contains(in.InstanceIds, aws.ToString(r.inst.InstanceId)) {
				out.Reservations = append(out.Reservations, types.Reservation{OwnerId: aws.String(r.owner), Instances: []types.Instance{r.inst}})
			}
		}
		if len(out.Reservations) == 0 {
			return nil, &smithy.GenericAPIError{Code: "InvalidInstanceID.NotFound", Message: "The instance ID '" + in.InstanceIds[0] + "' does not exist"}
		}
		return out, nil
	}
	f.lastFilters = in.Filters
	f.lastMaxResults = aws.ToInt32(in.MaxResults)
	start, _ := strconv.Atoi(aws.ToString(in.NextToken))
	size := int(aws.ToInt32(in.MaxResults))
	if size == 0 {
		size = 1000
	}
	end := min(start+size, len(f.instances))
	out := &ec2.DescribeInstancesOutput{}
	for _, r := range f.instances[start:end] {
		out.Reservations = append(out.Reservations, types.Reservation{OwnerId: aws.String(r.owner), Instances: []types.Instance{r.inst}})
	}
	if end < len(f.instances) {
		out.NextToken = aws.String(strconv.Itoa(end))
	}
	return out, nil
}

func (f *fakeEC2) DescribeInstanceTypes(ctx context.Context, in *ec2.DescribeInstanceTypesInput, _ ...func(*ec2.Options)) (*ec2.DescribeInstanceTypesOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.typeCalls++
	if f.err != nil {
		return nil, f.err
	}
	var names []string
	out := &ec2.DescribeInstanceTypesOutput{}
	for _, n := range in.InstanceTypes {
		names = append(names, string(n))
		if t, ok := f.types[string(n)]; ok {
			out.InstanceTypes = append(out.InstanceTypes, t)
		}
	}
	f.typeNames = append(f.typeNames, names)
	return out, nil
}

func (f *fakeEC2) StopInstances(ctx context.Context, in *ec2.StopInstancesInput, _ ...func(*ec2.Options)) (*ec2.StopInstancesOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return nil, f.err
	}
	id := in.InstanceIds[0]
	var inst *types.Instance
	for i := range f.instances {
		if aws.ToString(f.instances[i].inst.InstanceId) == id {
			inst = &f.instances[i].inst
		}
	}
	if inst == nil {
		return nil, &smithy.GenericAPIError{Code: "InvalidInstanceID.NotFound", Message: "The instance ID '" + id + "' does not exist"}
	}
	if aws.ToBool(in.DryRun) {
		f.dryRuns++
		if f.denyStop {
			return nil, &smithy.GenericAPIError{Code: "UnauthorizedOperation", Message: "You are not authorized to perform this operation."}
		}
		return nil, &smithy.GenericAPIError{Code: "DryRunOperation", Message: "Request would have succeeded, but DryRun flag is set."}
	}
	f.stopCalls++
	if f.oneTimeSpot[id] {
		return nil, &smithy.GenericAPIError{Code: "UnsupportedOperation", Message: "The instance '" + id + "' is associated with a one-time Spot Instance request and cannot be stopped."}
	}
	prev := *inst.State
	inst.State = &types.InstanceState{Name: types.InstanceStateNameStopped, Code: aws.Int32(80)}
	return &ec2.StopInstancesOutput{StoppingInstances: []types.InstanceStateChange{{
		InstanceId: aws.String(id), PreviousState: &prev, CurrentState: &types.InstanceState{Name: types.InstanceStateNameStopping, Code: aws.Int32(64)},
	}}}, nil
}

func gpuType(name, gpu string, count int32, memMiB int32, vcpus int32, hostMiB int64) types.InstanceTypeInfo {
	return types.InstanceTypeInfo{
		InstanceType: types.InstanceType(name),
		VCpuInfo:     &types.VCpuInfo{DefaultVCpus: aws.Int32(vcpus)},
		MemoryInfo:   &types.MemoryInfo{SizeInMiB: aws.Int64(hostMiB)},
		GpuInfo: &types.GpuInfo{
			Gpus:                []types.GpuDeviceInfo{{Name: aws.String(gpu), Manufacturer: aws.String("NVIDIA"), Count: aws.Int32(count), MemoryInfo: &types.GpuDeviceMemoryInfo{SizeInMiB: aws.Int32(memMiB)}}},
			TotalGpuMemoryInMiB: aws.Int32(count * memMiB),
		},
	}
}

func TestTypeInfoOf(t *testing.T) {
	g6f := gpuType("g6f.large", "L4", 1, 2861, 2, 8192)
	g6f.GpuInfo.Gpus[0].GpuPartitionSize = aws.Float64(0.125)
	noMem := gpuType("g5.xlarge", "A10G", 1, 0, 4, 16384)
	noMem.GpuInfo.Gpus[0].MemoryInfo = nil
	noMem.GpuInfo.TotalGpuMemoryInMiB = aws.Int32(22888)
	inf2 := types.InstanceTypeInfo{
		InstanceType: "inf2.24xlarge",
		VCpuInfo:     &types.VCpuInfo{DefaultVCpus: aws.Int32(96)},
		MemoryInfo:   &types.MemoryInfo{SizeInMiB: aws.Int64(393216)},
		NeuronInfo: &types.NeuronInfo{
			NeuronDevices:                []types.NeuronDeviceInfo{{Name: aws.String("Inferentia2"), Count: aws.Int32(6), MemoryInfo: &types.NeuronDeviceMemoryInfo{SizeInMiB: aws.Int32(32768)}}},
			TotalNeuronDeviceMemoryInMiB: aws.Int32(196608),
		},
	}
	plain := types.InstanceTypeInfo{InstanceType: "m5.large", VCpuInfo: &types.VCpuInfo{DefaultVCpus: aws.Int32(2)}, MemoryInfo: &types.MemoryInfo{SizeInMiB: aws.Int64(8192)}}
	tests := []struct {
		name  string
		in    types.InstanceTypeInfo
		want  instanceTypeInfo
		accel bool
	}{
		{"g5", gpuType("g5.2xlarge", "A10G", 1, 22888, 8, 32768), instanceTypeInfo{true, "A10G", 1, 22888, 8, 32768, 0}, true},
		{"p4d A100 40GB", gpuType("p4d.24xlarge", "A100", 8, 40960, 96, 1179648), instanceTypeInfo{true, "A100", 8, 40960, 96, 1179648, 0}, true},
		{"p4de A100 80GB is A100-80GB", gpuType("p4de.24xlarge", "A100", 8, 81920, 96, 1179648), instanceTypeInfo{true, "A100-80GB", 8, 81920, 96, 1179648, 0}, true},
		{"p3dn V100 32GB", gpuType("p3dn.24xlarge", "V100", 8, 32768, 96, 786432), instanceTypeInfo{true, "V100-32GB", 8, 32768, 96, 786432, 0}, true},
		{"g6f partition", g6f, instanceTypeInfo{true, "L4", 0.125, 2861, 2, 8192, 0}, true},
		{"memory from the total", noMem, instanceTypeInfo{true, "A10G", 1, 22888, 4, 16384, 0}, true},
		{"neuron", inf2, instanceTypeInfo{true, "Inferentia2", 6, 32768, 96, 393216, 0}, true},
		{"no accelerator", plain, instanceTypeInfo{vcpus: 2, memoryMiB: 8192}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := typeInfoOf(tt.in)
			if got != tt.want {
				t.Errorf("typeInfoOf = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestLifecycleOf(t *testing.T) {
	for in, want := range map[types.InstanceLifecycleType]fleet.Lifecycle{
		"":                                   fleet.OnDemand,
		"spot":                               fleet.Spot,
		"capacity-block":                     fleet.Committed,
		"scheduled":                          fleet.Committed,
		"interruptible-capacity-reservation": fleet.OnDemand,
	} {
		if got := lifecycleOf(in); got != want {
			t.Errorf("lifecycleOf(%q) = %s, want %s", in, got, want)
		}
	}
}

func testInstance(id, typ, state string, lifecycle types.InstanceLifecycleType, tags map[string]string) ec2Instance {
	launch := time.Date(2026, 6, 1, 9, 0, 0, 0, time.FixedZone("x", 3600))
	in := types.Instance{
		InstanceId:        aws.String(id),
		InstanceType:      types.InstanceType(typ),
		State:             &types.InstanceState{Name: types.InstanceStateName(state)},
		Placement:         &types.Placement{AvailabilityZone: aws.String("us-east-1b")},
		InstanceLifecycle: lifecycle,
		LaunchTime:        &launch,
	}
	for k, v := range tags {
		in.Tags = append(in.Tags, types.Tag{Key: aws.String(k), Value: aws.String(v)})
	}
	return ec2Instance{inst: in, owner: "111122223333"}
}

func unitProvider() *Provider {
	return &Provider{
		opts:    providers.Options{Lookback: DefaultLookback, Concurrency: 4, Now: time.Now},
		aws:     optionsFrom(nil),
		typeMap: map[string]*typeEntry{},
	}
}

func TestListGPUInstancesUnit(t *testing.T) {
	f := &fakeEC2{types: map[string]types.InstanceTypeInfo{
		"g5.xlarge":     gpuType("g5.xlarge", "A10G", 1, 22888, 4, 16384),
		"p4de.24xlarge": gpuType("p4de.24xlarge", "A100", 8, 81920, 96, 1179648),
		"g4dn.xlarge":   gpuType("g4dn.xlarge", "T4", 1, 16384, 4, 16384),
	}}
	// 2,500 instances over three pages; one type AWS does not describe as a GPU type.
	for i := range 2500 {
		typ := []string{"g5.xlarge", "p4de.24xlarge", "g4dn.xlarge", "g3.4xlarge"}[i%4]
		state := []string{"running", "pending", "stopping", "stopped"}[i%4]
		lc := []types.InstanceLifecycleType{"", "spot", "capacity-block", ""}[i%4]
		f.instances = append(f.instances, testInstance("i-"+strconv.Itoa(100000+i), typ, state, lc, map[string]string{"Name": "n" + strconv.Itoa(i), "Team": "t"}))
	}
	p := unitProvider()
	scope := providers.Scope{Provider: fleet.AWS, Account: "999988887777", Region: "us-east-1"}
	got, err := p.listGPUInstances(context.Background(), f, scope)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1875 {
		t.Fatalf("got %d instances, want 1875 (the g3.4xlarge ones dropped)", len(got))
	}
	if f.describeCalls != 3 || f.lastMaxResults != 1000 {
		t.Errorf("DescribeInstances calls = %d with MaxResults %d, want 3 pages of 1000", f.describeCalls, f.lastMaxResults)
	}
	var typeFilter, stateFilter []string
	for _, fl := range f.lastFilters {
		switch aws.ToString(fl.Name) {
		case "instance-type":
			typeFilter = fl.Values
		case "instance-state-name":
			stateFilter = fl.Values
		}
	}
	for _, v := range []string{"p4de.*", "g5.*", "p6-b200.*", "trn2.*", "dl2q.*"} {
		if !slices.Contains(typeFilter, v) {
			t.Errorf("instance-type filter %v lacks %s", typeFilter, v)
		}
	}
	if !slices.Equal(stateFilter, []string{"pending", "running", "stopping", "stopped"}) {
		t.Errorf("instance-state-name filter = %v", stateFilter)
	}
	if f.typeCalls != 1 || len(f.typeNames[0]) != 4 {
		t.Errorf("DescribeInstanceTypes calls = %d (%v), want one with the 4 types seen", f.typeCalls, f.typeNames)
	}
	byID := map[string]fleet.Instance{}
	for i, in := range got {
		byID[in.ID] = in
		if i > 0 && got[i-1].ID >= in.ID {
			t.Fatalf("instances not sorted by ID at %d", i)
		}
	}
	want := map[string]fleet.Instance{
		"i-100000": {ID: "i-100000", Name: "n0", Provider: fleet.AWS, Account: "999988887777", Region: "us-east-1", Zone: "us-east-1b", InstanceType: "g5.xlarge",
			GPU: fleet.GPU{Model: "A10G", Count: 1, MemoryGiB: 22888.0 / 1024}, VCPUs: 4, MemoryGiB: 16, Lifecycle: fleet.OnDemand, State: fleet.Running},
		"i-100001": {ID: "i-100001", Name: "n1", Provider: fleet.AWS, Account: "999988887777", Region: "us-east-1", Zone: "us-east-1b", InstanceType: "p4de.24xlarge",
			GPU: fleet.GPU{Model: "A100-80GB", Count: 8, MemoryGiB: 80}, VCPUs: 96, MemoryGiB: 1152, Lifecycle: fleet.Spot, State: fleet.Running},
		"i-100002": {ID: "i-100002", Name: "n2", Provider: fleet.AWS, Account: "999988887777", Region: "us-east-1", Zone: "us-east-1b", InstanceType: "g4dn.xlarge",
			GPU: fleet.GPU{Model: "T4", Count: 1, MemoryGiB: 16}, VCPUs: 4, MemoryGiB: 16, Lifecycle: fleet.Committed, State: fleet.Stopped},
	}
	for id, w := range want {
		g, ok := byID[id]
		if !ok {
			t.Errorf("%s missing", id)
			continue
		}
		if g.LaunchTime == nil || !g.LaunchTime.Equal(time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)) || g.LaunchTime.Location() != time.UTC {
			t.Errorf("%s launch time = %v, want 2026-06-01T08:00:00Z in UTC", id, g.LaunchTime)
		}
		if g.Tags["Team"] != "t" || g.Tags["Name"] != w.Name {
			t.Errorf("%s tags = %v", id, g.Tags)
		}
		g.LaunchTime, g.Tags = nil, nil
		if g.ID != w.ID || g.Name != w.Name || g.Account != w.Account || g.Region != w.Region || g.Zone != w.Zone || g.InstanceType != w.InstanceType ||
			g.GPU != w.GPU || g.VCPUs != w.VCPUs || g.MemoryGiB != w.MemoryGiB || g.Lifecycle != w.Lifecycle || g.State != w.State || g.Provider != w.Provider {
			t.Errorf("%s = %+v\nwant %+v", id, g, w)
		}
	}

	// A second scan of the region asks for no type again; the account falls
	// back to the reservation's owner.
	got, err = p.listGPUInstances(context.Background(), f, providers.Scope{Provider: fleet.AWS, Region: "us-east-1"})
	if err != nil {
		t.Fatal(err)
	}
	if f.typeCalls != 1 {
		t.Errorf("DescribeInstanceTypes calls after a second scan = %d, want 1 (cached)", f.typeCalls)
	}
	if got[0].Account != "111122223333" {
		t.Errorf("account = %q, want the owner 111122223333", got[0].Account)
	}
}

func TestListGPUInstancesManyTypesBatched(t *testing.T) {
	f := &fakeEC2{types: map[string]types.InstanceTypeInfo{}}
	for i := range 250 {
		name := "g5." + strconv.Itoa(i) + "xlarge"
		f.types[name] = gpuType(name, "A10G", 1, 22888, 4, 16384)
		f.instances = append(f.instances, testInstance("i-"+strconv.Itoa(i), name, "running", "", nil))
	}
	got, err := unitProvider().listGPUInstances(context.Background(), f, providers.Scope{Region: "eu-west-1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 250 || f.typeCalls != 3 {
		t.Errorf("got %d instances with %d DescribeInstanceTypes calls, want 250 with 3 (100 names a call)", len(got), f.typeCalls)
	}
}

func TestListGPUInstancesEmptyAndErrors(t *testing.T) {
	f := &fakeEC2{}
	got, err := unitProvider().listGPUInstances(context.Background(), f, providers.Scope{Region: "us-west-2"})
	if err != nil || got == nil || len(got) != 0 {
		t.Fatalf("empty region = %v, %v; want an empty slice and no error", got, err)
	}
	if f.typeCalls != 0 {
		t.Errorf("empty region asked DescribeInstanceTypes %d times", f.typeCalls)
	}
	for code, sentinel := range map[string]error{
		"UnauthorizedOperation": providers.ErrPermission,
		"AuthFailure":           providers.ErrCredentials,
		"RequestLimitExceeded":  providers.ErrThrottled,
	} {
		f := &fakeEC2{err: &smithy.GenericAPIError{Code: code, Message: "m"}}
		_, err := unitProvider().listGPUInstances(context.Background(), f, providers.Scope{Region: "us-west-2"})
		if !errors.Is(err, sentinel) || !strings.Contains(err.Error(), "DescribeInstances") {
			t.Errorf("%s: err = %v, want %v naming DescribeInstances", code, err, sentinel)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := unitProvider().ListGPUInstances(ctx, providers.Scope{Region: "us-west-2"}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err = %v", err)
	}
}
