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

// A managed replica set takes the row of the endpoint it lies under when it
// is that endpoint's only scanned child; two children leave the row unmatched;
// a resource billed under its own id (a notebook) matches it exactly.
func TestJoinManaged(t *testing.T) {
	res := func(p fleet.Provider, id, eff string) Resource {
		return Resource{Key: Key(p, id), ResourceID: id, Provider: p, EffectiveCost: decimal.RequireFromString(eff), Hours: decimal.NewFromInt(10)}
	}
	const sm = "arn:aws:sagemaker:us-east-1:1:"
	const ml = "/subscriptions/S/resourceGroups/RG/providers/Microsoft.MachineLearningServices/workspaces/w/"
	s := &Summary{Resources: []Resource{
		res(fleet.AWS, sm+"endpoint/one", "10"),
		res(fleet.AWS, sm+"endpoint/two", "20"),
		res(fleet.AWS, sm+"notebook-instance/nb", "3"),
		res(fleet.GCP, "//aiplatform.googleapis.com/projects/p/locations/us-central1/endpoints/42", "40"),
		res(fleet.Azure, ml+"onlineEndpoints/e", "50"),
		res(fleet.Azure, ml+"computes/ci", "5"),
	}}
	managed := &fleet.Managed{Kind: fleet.KindEndpoint}
	j := s.Join([]fleet.Instance{
		{ID: sm + "endpoint/one/variant/AllTraffic", Provider: fleet.AWS, Managed: managed},
		{ID: sm + "endpoint/two/variant/A", Provider: fleet.AWS, Managed: managed},
		{ID: sm + "endpoint/two/variant/B", Provider: fleet.AWS, Managed: managed},
		{ID: sm + "notebook-instance/nb", Provider: fleet.AWS, Managed: managed},
		{ID: "projects/p/locations/us-central1/endpoints/42/deployedModels/7", Provider: fleet.GCP, Managed: managed},
		{ID: ml + "onlineEndpoints/e/deployments/blue", Provider: fleet.Azure, Managed: managed},
		{ID: ml + "computes/ci", Provider: fleet.Azure, Managed: managed},
	})
	for id, want := range map[string]string{
		sm + "endpoint/one/variant/AllTraffic": "10", sm + "notebook-instance/nb": "3",
		"projects/p/locations/us-central1/endpoints/42/deployedModels/7": "40",
		ml + "onlineEndpoints/e/deployments/blue":                        "50", ml + "computes/ci": "5",
	} {
		if r := j.ByInstance[id]; r == nil || r.EffectiveCost.String() != want {
			t.Errorf("%s: %+v, want the row of %s", id, r, want)
		}
	}
	if len(j.ByInstance) != 5 || j.UnmatchedSum.String() != "20" {
		t.Errorf("matched %d, unmatched %s (want endpoint/two's 20: two variants share it)", len(j.ByInstance), j.UnmatchedSum)
	}
	keys := Keys([]fleet.Instance{{ID: sm + "endpoint/one/variant/AllTraffic", Provider: fleet.AWS, Managed: managed}})
	if !keys[Key(fleet.AWS, sm+"endpoint/one")] {
		t.Errorf("keys %v lack the endpoint", keys)
	}
}
