package aws

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers"
)

// spotRequestBatch is how many request IDs one DescribeSpotInstanceRequests
// filter carries: EC2 takes up to 200 values in a filter.
const spotRequestBatch = 200

// spotInterruptions fills the SpotInterruption of the listed spot instances
// (out; raw is what DescribeInstances said of them) from their requests
// (DescribeSpotInstanceRequests, by spot-instance-request-id filter, 200 IDs
// a call, pages of 1,000): SpotOfRequest says what each allows. A spot
// instance whose request is not found keeps an unknown interruption (it is
// not stopped). A failed read is not the scope's failure: the instances are
// listed with their interruption unknown (protected) and the scan notes it.
func (p *Provider) spotInterruptions(ctx context.Context, c ec2.DescribeSpotInstanceRequestsAPIClient, scope providers.Scope, raw []ec2Instance, out []fleet.Instance) error {
	byID := map[string]types.Instance{}
	for _, r := range raw {
		byID[aws.ToString(r.inst.InstanceId)] = r.inst
	}
	var ids []string
	for _, in := range out {
		if in.Lifecycle != fleet.Spot {
			continue
		}
		if id := aws.ToString(byID[in.ID].SpotInstanceRequestId); id != "" {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	sort.Strings(ids)
	ids = slices.Compact(ids)
	requests := map[string]types.SpotInstanceRequest{}
	for start := 0; start < len(ids); start += spotRequestBatch {
		in := &ec2.DescribeSpotInstanceRequestsInput{
			MaxResults: aws.Int32(1000),
			Filters:    []types.Filter{{Name: aws.String("spot-instance-request-id"), Values: ids[start:min(start+spotRequestBatch, len(ids))]}},
		}
		pg := ec2.NewDescribeSpotInstanceRequestsPaginator(c, in)
		for pg.HasMorePages() {
			page, err := pg.NextPage(ctx)
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				p.note(fmt.Sprintf("%s: DescribeSpotInstanceRequests: %v; its %d spot instances are kept from being stopped (whether their requests allow a stop is unknown)",
					scope, classify(err), len(ids)))
				return nil
			}
			for _, r := range page.SpotInstanceRequests {
				requests[aws.ToString(r.SpotInstanceRequestId)] = r
			}
		}
	}
	for i := range out {
		in := &out[i]
		if in.Lifecycle != fleet.Spot {
			continue
		}
		inst := byID[in.ID]
		if r, ok := requests[aws.ToString(inst.SpotInstanceRequestId)]; ok {
			in.SpotInterruption = SpotOfRequest(r, inst.RootDeviceType)
		}
	}
	return nil
}

// SpotOfRequest says what a spot instance's request allows. AWS ("Stop and
// start Spot Instances", EC2 User Guide) lets a user stop a spot instance
// only when its request is persistent, the instance is EBS-backed and the
// request has no launch group (nor is a Spot block); an EC2 Fleet or Spot
// Fleet instance cannot be stopped either, but its fleet owns it (the owner
// tags protect it). Such a request is fleet.SpotStop, whatever its
// interruption behaviour (stop, terminate or hibernate: that is what AWS
// does when it reclaims capacity, not what a user may do; stopped, the
// request is disabled until the instance starts again). Any other request,
// a one-time one first, can only be terminated: fleet.SpotTerminate. A root
// device type other than ebs (instance-store) or an unknown one (empty)
// keeps a persistent request's instance from being called stoppable.
func SpotOfRequest(r types.SpotInstanceRequest, root types.DeviceType) fleet.SpotInterruption {
	switch {
	case r.Type != types.SpotInstanceTypePersistent:
		return fleet.SpotTerminate
	case aws.ToString(r.LaunchGroup) != "" || aws.ToInt32(r.BlockDurationMinutes) > 0:
		return fleet.SpotTerminate
	case root == types.DeviceTypeInstanceStore:
		return fleet.SpotTerminate
	case root != types.DeviceTypeEbs:
		return ""
	}
	return fleet.SpotStop
}
