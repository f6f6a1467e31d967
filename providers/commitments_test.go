package providers

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// heldCloud is a fakeCloud that also holds commitments, one API of which
// fails.
type heldCloud struct {
	fakeCloud
	gotScopes []Scope
	skipped   bool
}

func (h *heldCloud) ListCommitments(_ context.Context, scopes []Scope) ([]fleet.Held, []*ScopeError) {
	h.gotScopes = scopes
	return []fleet.Held{
			{ID: "ri-2", Provider: fleet.AWS, Account: "1", Kind: "standard-reserved-instance", Scope: fleet.HeldScope{Level: "region", Region: "b"}},
			{ID: "ri-1", Provider: fleet.AWS, Account: "1", Kind: "standard-reserved-instance", Scope: fleet.HeldScope{Level: "region", Region: "a"}},
			{ID: "ri-1", Provider: fleet.AWS, Account: "1", Kind: "standard-reserved-instance", Scope: fleet.HeldScope{Level: "region", Region: "a"}},
		}, []*ScopeError{{Scope: Scope{Provider: fleet.AWS, Account: "1"}, Source: "savingsplans:DescribeSavingsPlans",
			Err: errors.New("permission denied")}, {Scope: Scope{Provider: fleet.AWS, Account: "1", Region: "c"}, Source: "ec2:DescribeReservedInstances",
			Err: errors.New("region outage")}}
}

// A scan puts the commitments held into the fleet (sorted, each once),
// and a commitment API that fails is a failure marked Commitments that
// keeps every instance.
func TestCollectCommitments(t *testing.T) {
	h := &heldCloud{fakeCloud: fakeCloud{
		scopes:    []Scope{{Provider: fleet.AWS, Account: "1", Region: "a"}, {Provider: fleet.AWS, Account: "1", Region: "b"}, {Provider: fleet.AWS, Account: "1", Region: "c"}},
		instances: map[string][]fleet.Instance{"a": {{ID: "i-a", Provider: fleet.AWS, Account: "1", Region: "a"}}},
		listErr:   map[string]error{"c": errors.New("region outage")},
	}}
	res, err := Collect(context.Background(), h, CollectOptions{SkipPrices: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.gotScopes) != 3 {
		t.Errorf("ListCommitments got %d scopes, want the scan's 3", len(h.gotScopes))
	}
	var ids []string
	for _, c := range res.Fleet.Commitments {
		ids = append(ids, c.ID)
	}
	if strings.Join(ids, ",") != "ri-1,ri-2" {
		t.Errorf("commitments %v, want ri-1,ri-2 (sorted by region, each once)", ids)
	}
	if len(res.Fleet.Instances) != 1 {
		t.Errorf("%d instances, want 1: a failed commitment read keeps the instances", len(res.Fleet.Instances))
	}
	// Region c's listing failed: its commitment read failing too is not
	// a second failure.
	if len(res.Failures) != 2 || res.Failures[0].Commitments || res.Failures[0].Scope.Region != "c" || !res.Failures[1].Commitments {
		t.Fatalf("failures %v, want c's listing and one commitments failure", res.Failures)
	}
	if msg := res.Failures[1].Error(); !strings.Contains(msg, "savingsplans:DescribeSavingsPlans") || !strings.Contains(msg, "savings on capacity already committed") {
		t.Errorf("failure %q does not name the API and what it means for the advice", msg)
	}

	h2 := &heldCloud{fakeCloud: h.fakeCloud}
	res, err = Collect(context.Background(), h2, CollectOptions{SkipPrices: true, SkipCommitments: true})
	if err != nil {
		t.Fatal(err)
	}
	if h2.gotScopes != nil || len(res.Fleet.Commitments) != 0 || len(res.Failures) != 1 {
		t.Errorf("SkipCommitments still read them: %v %v", res.Fleet.Commitments, res.Failures)
	}
}
