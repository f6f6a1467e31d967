package billing

import (
	"testing"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

func TestJoin(t *testing.T) {
	res := func(p fleet.Provider, id, account, region, eff string) Resource {
		return Resource{Key: Key(p, id), ResourceID: id, Provider: p, Account: account, Region: region,
			EffectiveCost: decimal.RequireFromString(eff), Hours: decimal.NewFromInt(10)}
	}
	s := &Summary{Resources: []Resource{
		res(fleet.AWS, "arn:aws:ec2:us-east-1:1:instance/i-1", "1", "us-east-1", "10"),
		res(fleet.Azure, "/subscriptions/s/resourcegroups/rg/providers/microsoft.compute/virtualmachines/vm1", "s", "eastus", "20"),
		res(fleet.GCP, "https://www.googleapis.com/compute/v1/projects/p/zones/z/instances/train-1", "p", "us-central1", "30"),
		res(fleet.AWS, "i-9", "2", "us-west-2", "4"),
		res(fleet.AWS, "i-8", "2", "us-west-2", "1"),
	}}
	j := s.Join([]fleet.Instance{
		{ID: "i-1", Provider: fleet.AWS},
		{ID: "/subscriptions/S/resourceGroups/RG/providers/Microsoft.Compute/virtualMachines/VM1", Provider: fleet.Azure},
		{ID: "train-1", Provider: fleet.GCP},
		{ID: "i-404", Provider: fleet.AWS},
	})
	if len(j.ByInstance) != 3 || j.ByInstance["i-1"] == nil || j.ByInstance["train-1"] == nil {
		t.Fatalf("matched %v", j.ByInstance)
	}
	if j.Matched.String() != "60" || j.UnmatchedSum.String() != "5" || len(j.Unmatched) != 1 || j.Unmatched[0].Resources != 2 || j.Unmatched[0].Region != "us-west-2" {
		t.Errorf("matched %s unmatched %s %+v", j.Matched, j.UnmatchedSum, j.Unmatched)
	}
}
