package azure

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers"
	"github.com/gpufinops/gpufinops/providers/azure/sim"
	"github.com/gpufinops/gpufinops/providers/providertest"
)

// commitmentsFleet is testdata/fleets/commitments.yaml.
func commitmentsFleet(t testing.TB) *fleet.Fleet {
	return providertest.ReadFleet(t, "../../testdata/fleets/commitments.yaml")
}

// activeAzure is what a scan must read back: the file's Azure
// commitments in force at simNow, with their API, sorted as Collect does.
func activeAzure(f *fleet.Fleet) []fleet.Held {
	var out []fleet.Held
	for _, h := range f.Commitments {
		if h.Provider != fleet.Azure || (h.End != nil && !simNow.Before(*h.End)) {
			continue
		}
		h.Source = apiReservations
		if h.Kind == kindAzureSavingsPlan {
			h.Source = apiSavingsPlans
		}
		out = append(out, h)
	}
	return providers.SortHeld(out)
}

func heldJSON(hs []fleet.Held) string {
	var out []string
	for _, h := range hs {
		b, _ := json.Marshal(h)
		out = append(out, string(b))
	}
	return strings.Join(out, "\n")
}

// TestSimCommitments: the reservations (applied scope Shared, Single
// subscription, resource group; instance size flexibility; term, billing
// plan, dates) and savings plans of a fleet file come back from a scan
// through azcore's ARM pipeline and the simulator exactly, one page per
// commitment, and the expired reservation is left out.
func TestSimCommitments(t *testing.T) {
	f := commitmentsFleet(t)
	srv, s := testSim(t, f, sim.Options{CommitmentPage: 1, Subscription: "0b1f6471-1bf0-4dda-aec3-cb9272f09590"})
	p := testProvider(t, srv.URL, providers.Options{Adapter: providers.Values{OptSubscriptions: []string{"0b1f6471-1bf0-4dda-aec3-cb9272f09590"}}})
	res, err := providers.Collect(context.Background(), p, providers.CollectOptions{SkipPrices: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Failures) > 0 {
		t.Fatalf("failures: %v", res.Failures)
	}
	want := activeAzure(f)
	if len(want) != 4 {
		t.Fatalf("the fixture has %d active Azure commitments, want 4", len(want))
	}
	if got, exp := heldJSON(res.Fleet.Commitments), heldJSON(want); got != exp {
		t.Errorf("commitments:\n got %s\nwant %s", got, exp)
	}
	if n := s.Counts()["capacity"]["ListReservations"]; n != 4 {
		t.Errorf("ListReservations called %d times, want a page per reservation, the expired one included (4)", n)
	}
}

// TestSimCommitmentsDenied: credentials without the Reservations Reader
// role lose the reservations alone: a commitments failure naming the API,
// the VMs and the savings plans kept.
func TestSimCommitmentsDenied(t *testing.T) {
	f := commitmentsFleet(t)
	srv, _ := testSim(t, f, sim.Options{Subscription: "0b1f6471-1bf0-4dda-aec3-cb9272f09590",
		DenyActions: []string{"Microsoft.Capacity/reservationOrders/reservations/read"}})
	p := testProvider(t, srv.URL, providers.Options{Adapter: providers.Values{OptSubscriptions: []string{"0b1f6471-1bf0-4dda-aec3-cb9272f09590"}}})
	failed, kept := providertest.CollectDenied(t, p, 1)
	if len(failed) != 1 || !strings.HasSuffix(failed[0], " "+apiReservations) {
		t.Errorf("failures %v, want the reservations listing's", failed)
	}
	if len(kept) != 1 || !strings.HasSuffix(kept[0], " "+kindAzureSavingsPlan) {
		t.Errorf("kept %v, want the savings plan", kept)
	}
}

// TestDoctorCommitments: doctor reads one page of each commitment list; a
// role without Reservations Reader is a warning naming the role
// assignment, the savings plans check passes.
func TestDoctorCommitments(t *testing.T) {
	f := commitmentsFleet(t)
	sub := "0b1f6471-1bf0-4dda-aec3-cb9272f09590"
	srv, _ := testSim(t, f, sim.Options{Subscription: sub, DenyActions: []string{"Microsoft.Capacity/reservationOrders/reservations/read"}})
	p := testProvider(t, srv.URL, providers.Options{Adapter: providers.Values{OptSubscriptions: []string{sub}}})
	got := map[string]providers.Check{}
	for _, c := range p.CheckPermissions(context.Background(), providers.Scope{Provider: fleet.Azure, Account: sub}) {
		got[c.Action] = c
	}
	res := got[RoleCommitments[0].Action]
	if res.Status != providers.CheckWarn || !strings.Contains(res.Fix, `"Reservations Reader"`) || !strings.Contains(res.Fix, "/providers/Microsoft.Capacity") {
		t.Errorf("reservations check %+v, want a warning with the role assignment", res)
	}
	if sp := got[RoleCommitments[1].Action]; sp.Status != providers.CheckOK {
		t.Errorf("savings plans check %+v, want ok", sp)
	}
}
