package recommend

import (
	"strings"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// An owned instance is never told "Stop it": the advice names its owner and
// how to scale that down, for every kind of owner.
func TestIdleOwnedInstanceScalesItsOwner(t *testing.T) {
	for _, tc := range []struct {
		tags map[string]string
		want string
	}{
		{map[string]string{"aws:autoscaling:groupName": "gpu-asg"}, "desired capacity"},
		{map[string]string{"eks:nodegroup-name": "gpu", "aws:autoscaling:groupName": "eks-gpu"}, "node pool"},
		{map[string]string{"karpenter.sh/nodepool": "gpu"}, "Karpenter"},
		{map[string]string{"aws:ec2spot:fleet-request-id": "sfr-1"}, "desired capacity"},
		{map[string]string{"AWSBatchServiceTag": "ce"}, "minimum vCPUs"},
		{map[string]string{"goog-gke-node": ""}, "node pool"},
	} {
		in := inst("a", "g4dn.xlarge", withUtil(agg(idle, idle, idle, idle)), func(in *fleet.Instance) {
			for k, v := range tc.tags {
				in.Tags[k] = v
			}
		})
		p := run(t, in)
		if len(p.Recommendations) != 1 {
			t.Fatalf("%v: %+v", tc.tags, p.Recommendations)
		}
		r := p.Recommendations[0]
		if strings.HasPrefix(r.Action, "Stop it") || !strings.Contains(r.Action, tc.want) || r.Risk != Medium {
			t.Errorf("%v: %s risk %s", tc.tags, r.Action, r.Risk)
		}
	}
	// A schedule for an owned notebook is a scheduled scale-down of its owner.
	in := inst("nb", "g4dn.xlarge", withWorkload(fleet.Development, nil), withUtil(&fleet.Utilization{Samples: notebook(weekdays, 9, 17)}),
		func(in *fleet.Instance) {
			in.ManagedBy = &fleet.ManagedBy{Kind: fleet.OwnerAutoScalingGroup, Name: "nb-asg"}
		})
	p := run(t, in)
	if len(p.Recommendations) != 1 || p.Recommendations[0].Kind != KindSchedule || !strings.Contains(p.Recommendations[0].Action, "scale-down policy") || !strings.Contains(p.Recommendations[0].Action, "nb-asg") {
		t.Errorf("schedule: %+v", p.Recommendations)
	}
}
