package aws

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/smithy-go"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers"
)

// TestSpotOfRequestFollowsTheUserGuide: "Stop and start Spot Instances"
// (Amazon EC2 User Guide) lets a user stop a spot instance only when its
// request is persistent, it is EBS-backed and the request has no launch
// group (nor is a Spot block); the interruption behaviour (stop, terminate,
// hibernate) is what AWS does when it reclaims the capacity and does not
// matter. Anything else can only be terminated; an unknown root device
// keeps a persistent request's instance unknown (protected).
func TestSpotOfRequestFollowsTheUserGuide(t *testing.T) {
	req := func(typ types.SpotInstanceType, behaviour types.InstanceInterruptionBehavior) types.SpotInstanceRequest {
		return types.SpotInstanceRequest{Type: typ, InstanceInterruptionBehavior: behaviour}
	}
	group := req(types.SpotInstanceTypePersistent, types.InstanceInterruptionBehaviorStop)
	group.LaunchGroup = aws.String("lg-1")
	block := req(types.SpotInstanceTypePersistent, types.InstanceInterruptionBehaviorStop)
	block.BlockDurationMinutes = aws.Int32(60)
	cases := []struct {
		name string
		r    types.SpotInstanceRequest
		root types.DeviceType
		want fleet.SpotInterruption
	}{
		{"persistent, stop", req(types.SpotInstanceTypePersistent, types.InstanceInterruptionBehaviorStop), types.DeviceTypeEbs, fleet.SpotStop},
		{"persistent, terminate", req(types.SpotInstanceTypePersistent, types.InstanceInterruptionBehaviorTerminate), types.DeviceTypeEbs, fleet.SpotStop},
		{"persistent, hibernate", req(types.SpotInstanceTypePersistent, types.InstanceInterruptionBehaviorHibernate), types.DeviceTypeEbs, fleet.SpotStop},
		{"persistent, no behaviour given", req(types.SpotInstanceTypePersistent, ""), types.DeviceTypeEbs, fleet.SpotStop},
		{"one-time, terminate", req(types.SpotInstanceTypeOneTime, types.InstanceInterruptionBehaviorTerminate), types.DeviceTypeEbs, fleet.SpotTerminate},
		{"one-time, stop", req(types.SpotInstanceTypeOneTime, types.InstanceInterruptionBehaviorStop), types.DeviceTypeEbs, fleet.SpotTerminate},
		{"no type", req("", types.InstanceInterruptionBehaviorStop), types.DeviceTypeEbs, fleet.SpotTerminate},
		{"persistent, launch group", group, types.DeviceTypeEbs, fleet.SpotTerminate},
		{"persistent, spot block", block, types.DeviceTypeEbs, fleet.SpotTerminate},
		{"persistent, instance store root", req(types.SpotInstanceTypePersistent, types.InstanceInterruptionBehaviorStop), types.DeviceTypeInstanceStore, fleet.SpotTerminate},
		{"persistent, root unknown", req(types.SpotInstanceTypePersistent, types.InstanceInterruptionBehaviorStop), "", ""},
	}
	for _, c := range cases {
		if got := SpotOfRequest(c.r, c.root); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestSpotRequestsInBatches: the requests of 450 spot instances are read
// 200 IDs a call; an instance whose request is missing stays unknown; a
// failed read lists the instances with their interruption unknown and
// notes it for the scan.
func TestSpotRequestsInBatches(t *testing.T) {
	f := &fakeEC2{types: map[string]types.InstanceTypeInfo{"g5.xlarge": gpuType("g5.xlarge", "A10G", 1, 22888, 4, 16384)}}
	for i := range 460 {
		in := testInstance("i-"+strconv.Itoa(100000+i), "g5.xlarge", "running", types.InstanceLifecycleTypeSpot, nil)
		in.inst.RootDeviceType = types.DeviceTypeEbs
		if i < 450 {
			id := "sir-" + strconv.Itoa(i)
			in.inst.SpotInstanceRequestId = aws.String(id)
			if i%10 != 0 { // every tenth request is gone
				typ := []types.SpotInstanceType{types.SpotInstanceTypePersistent, types.SpotInstanceTypeOneTime}[i%2]
				f.spotRequests = append(f.spotRequests, types.SpotInstanceRequest{SpotInstanceRequestId: aws.String(id), Type: typ,
					InstanceInterruptionBehavior: types.InstanceInterruptionBehaviorStop, InstanceId: in.inst.InstanceId})
			}
		}
		f.instances = append(f.instances, in)
	}
	f.instances = append(f.instances, testInstance("i-200000", "g5.xlarge", "running", "", nil))
	p := unitProvider()
	scope := providers.Scope{Provider: fleet.AWS, Account: "999988887777", Region: "us-east-1"}
	got, err := p.listGPUInstances(context.Background(), f, scope)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.spotBatches) != 3 || len(f.spotBatches[0]) != 200 || len(f.spotBatches[2]) != 50 {
		t.Errorf("batches of %v IDs, want 200, 200, 50", func() (n []int) {
			for _, b := range f.spotBatches {
				n = append(n, len(b))
			}
			return
		}())
	}
	count := map[fleet.SpotInterruption]int{}
	for _, in := range got {
		n, _ := strconv.Atoi(strings.TrimPrefix(in.ID, "i-"))
		i := n - 100000
		want := fleet.SpotInterruption("")
		switch {
		case in.Lifecycle != fleet.Spot || i >= 450 || i%10 == 0:
		case i%2 == 0:
			want = fleet.SpotStop
		default:
			want = fleet.SpotTerminate
		}
		if in.SpotInterruption != want {
			t.Fatalf("%s: %q, want %q", in.ID, in.SpotInterruption, want)
		}
		count[in.SpotInterruption]++
	}
	if count[fleet.SpotStop] == 0 || count[fleet.SpotTerminate] == 0 || len(p.TakeScanNotes()) != 0 {
		t.Errorf("%v, notes %v", count, p.TakeScanNotes())
	}

	f.spotErr = &smithy.GenericAPIError{Code: "UnauthorizedOperation", Message: "You are not authorized to perform this operation."}
	p = unitProvider()
	got, err = p.listGPUInstances(context.Background(), f, scope)
	if err != nil {
		t.Fatalf("a failed spot request read fails the scope: %v", err)
	}
	for _, in := range got {
		if in.SpotInterruption != "" {
			t.Fatalf("%s: %q after a failed read", in.ID, in.SpotInterruption)
		}
	}
	notes := p.TakeScanNotes()
	if len(notes) != 1 || !strings.Contains(notes[0], "DescribeSpotInstanceRequests") || !strings.Contains(notes[0], "450 spot instances") {
		t.Errorf("notes %q", notes)
	}
	if len(got) != 461 {
		t.Errorf("%d instances listed, want 461", len(got))
	}
}
