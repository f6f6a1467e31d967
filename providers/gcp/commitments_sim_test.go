package gcp

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/providers"
	"github.com/gpufinops/gpufinops/providers/gcp/sim"
	"github.com/gpufinops/gpufinops/providers/providertest"
)

// commitmentsFleet is testdata/fleets/commitments.yaml.
func commitmentsFleet(t testing.TB) *fleet.Fleet {
	return providertest.ReadFleet(t, "../../testdata/fleets/commitments.yaml")
}

// activeGCP is what a scan must read back: the file's GCP commitments in
// force at simNow, with the API each comes from, sorted as Collect does.
func activeGCP(f *fleet.Fleet) []fleet.Held {
	var out []fleet.Held
	for _, h := range f.Commitments {
		if h.Provider != fleet.GCP || (h.End != nil && !simNow.Before(*h.End)) || (h.Start != nil && simNow.Before(*h.Start)) {
			continue
		}
		h.Source = apiCommitments
		if h.Kind == kindGCPReservation {
			h.Source = apiReservations
		}
		out = append(out, h)
	}
	return providers.SortHeld(out)
}

func heldJSON(hs []fleet.Held) []string {
	var out []string
	for _, h := range hs {
		b, _ := json.Marshal(h)
		out = append(out, string(b))
	}
	return out
}

// TestSimCommitments: the resource-based CUDs (vCPUs, memory in GiB read
// from MB, GPUs by model) and specific reservations of a fleet file come
// back from a scan through the real compute client and the simulator
// exactly, a page per commitment, the expired CUD left out.
func TestSimCommitments(t *testing.T) {
	defer func(n uint32) { heldPage = n }(heldPage)
	heldPage = 1
	f := commitmentsFleet(t)
	s := sim.New(f, simOptions(t, f))
	p := newProvider(t, startSim(t, s), nil)
	res, err := providers.Collect(context.Background(), p, providers.CollectOptions{SkipPrices: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Failures) > 0 {
		t.Fatalf("failures: %v", res.Failures)
	}
	want := activeGCP(f)
	if len(want) != 3 {
		t.Fatalf("the fixture has %d active GCP commitments, want 3", len(want))
	}
	got, exp := heldJSON(res.Fleet.Commitments), heldJSON(want)
	if strings.Join(got, "\n") != strings.Join(exp, "\n") {
		t.Errorf("commitments:\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(exp, "\n     "))
	}
	if n := s.Counts()["compute"]["regionCommitments.aggregatedList"]; n < 3 {
		t.Errorf("regionCommitments.aggregatedList called %d times, want a page per commitment", n)
	}
}

// TestSimCommitmentsDenied: a project whose commitments may not be listed
// is a commitments failure naming the API; its VMs and reservations stay.
func TestSimCommitmentsDenied(t *testing.T) {
	f := commitmentsFleet(t)
	opts := simOptions(t, f)
	opts.Fault = func(service, op, scope string) (int, string) {
		if op == "regionCommitments.aggregatedList" {
			return http.StatusForbidden, "forbidden"
		}
		return 0, ""
	}
	p := newProvider(t, startSim(t, sim.New(f, opts)), nil)
	failed, kept := providertest.CollectDenied(t, p, 2)
	if len(failed) != 1 || !strings.HasSuffix(failed[0], " "+apiCommitments) {
		t.Errorf("failures %v, want the commitments listing's", failed)
	}
	if len(kept) != 1 || !strings.HasSuffix(kept[0], " "+kindGCPReservation) {
		t.Errorf("kept %v, want the reservation", kept)
	}
}

// TestDoctorCommitments: doctor lists one commitment and one reservation
// of the project, and names the permission a role lacks.
func TestDoctorCommitments(t *testing.T) {
	f := commitmentsFleet(t)
	opts := simOptions(t, f)
	opts.Fault = func(service, op, scope string) (int, string) {
		if op == "reservations.aggregatedList" {
			return http.StatusForbidden, "forbidden"
		}
		return 0, ""
	}
	p := newProvider(t, startSim(t, sim.New(f, opts)), nil)
	got := map[string]providers.Check{}
	for _, c := range p.CheckPermissions(context.Background(), providers.Scope{Provider: fleet.GCP, Account: testProject}) {
		got[c.Action] = c
	}
	if c := got["compute.commitments.list"]; c.Status != providers.CheckOK {
		t.Errorf("commitments check %+v, want ok", c)
	}
	if c := got["compute.reservations.list"]; c.Status != providers.CheckMissing {
		t.Errorf("reservations check %+v, want missing", c)
	}
}

// TestCommitmentSeries: each commitment type names the machine series whose
// vCPUs and memory it covers (compute v1 Commitment.type), and a type of no
// single series names none.
func TestCommitmentSeries(t *testing.T) {
	for typ, want := range map[string]string{
		"GRAPHICS_OPTIMIZED": "g2", "GRAPHICS_OPTIMIZED_G4": "g4", "ACCELERATOR_OPTIMIZED": "a2",
		"ACCELERATOR_OPTIMIZED_A3": "a3", "ACCELERATOR_OPTIMIZED_A3_MEGA": "a3-mega", "ACCELERATOR_OPTIMIZED_A3_ULTRA": "a3-ultra",
		"ACCELERATOR_OPTIMIZED_A4": "a4", "GENERAL_PURPOSE": "n1", "GENERAL_PURPOSE_N2": "n2", "COMPUTE_OPTIMIZED_C3": "c3",
		"MEMORY_OPTIMIZED": "", "MEMORY_OPTIMIZED_X4_16TB": "", "GRAPHICS_OPTIMIZED_G4_VGPU": "", "TYPE_UNSPECIFIED": "", "": "",
	} {
		if got := CommitmentSeries(typ); got != want {
			t.Errorf("CommitmentSeries(%q) = %q, want %q", typ, got, want)
		}
	}
}
