package recommend

import (
	"os"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

func TestReallocation(t *testing.T) {
	busyUtil := withUtil(agg(busy, memHigh, hostMid, hostMid))
	t.Run("an idle reserved machine's stop lets its RI cover an uncovered twin", func(t *testing.T) {
		a := inst("a", "p4d.24xlarge", withUtil(agg(idle, idle, idle, idle)), func(in *fleet.Instance) {
			in.Lifecycle, in.Commitment = fleet.Committed, &fleet.Commitment{ID: "ri-1"}
		})
		p := runHeld(t, []fleet.Held{ri("ri-1", "p4d.24xlarge", 1, "13.5", false)}, a, inst("b", "p4d.24xlarge", busyUtil))
		checkReallocations(t, p)
		if len(p.Reallocations) != 1 {
			t.Fatalf("reallocations %+v", p.Reallocations)
		}
		r := p.Reallocations[0]
		// b's plan buys a 1-year Compute SP (35 % off 21.957642 = 14.2725/h);
		// ri-1 covering it saves what the plan still bills: 14.2725 × 730.
		if r.CommitmentID != "ri-1" || strings.Join(r.FreedBy, ",") != "idle-stop:a" || !r.FreedMonthly.Equal(decimal.NewFromInt(9855)) ||
			len(r.Receivers) != 1 || r.Receivers[0].ResourceID != "b" || r.Receivers[0].Hours != 730 || !r.Monthly.Equal(decimal.RequireFromString("10418.90")) || !r.Receivers[0].Buys {
			t.Errorf("reallocation %+v", r)
		}
		w := warningsOf(p, WarnCommitmentReallocation)
		if len(w) != 1 || w[0].ResourceID != "ri-1" || !strings.Contains(w[0].Message, "idle-stop:a frees $9,855.00 a month of commitment ri-1") ||
			!strings.Contains(w[0].Message, "b (730 h, $10,418.90): $10,418.90 a month below the optimized cost") || !strings.Contains(w[0].Message, "not counted in the savings") {
			t.Fatalf("warnings %+v", w)
		}
		// docs/commitments.md quotes it word for word.
		doc, err := os.ReadFile("../../docs/commitments.md")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(strings.Join(strings.Fields(string(doc)), " "), w[0].Message) {
			t.Errorf("docs/commitments.md does not quote %q", w[0].Message)
		}
	})
	t.Run("a spot move frees savings-plan spend another family takes, at its own rate", func(t *testing.T) {
		sp := fleet.Held{ID: "sp-1", Provider: fleet.AWS, Kind: fleet.HeldComputeSavingsPlan, Term: "1y", HourlyCommitment: heldDec("5")}
		a := inst("a", "p4d.24xlarge", busyUtil, withWorkload(fleet.Training, yes()))
		b := inst("b", "g5.xlarge", withUtil(agg(memHigh, memHigh, hostMid, hostMid)), withWorkload(fleet.Inference, nil))
		p := runHeld(t, []fleet.Held{sp}, a, b)
		checkReallocations(t, p)
		if len(p.Reallocations) != 1 {
			t.Fatalf("reallocations %+v", p.Reallocations)
		}
		// The plan's $5/h is 3,650 a month; b's hours at the SP rate
		// (1.006 × 0.65 = 0.6539/h) take 477.35 of it, and that is what the
		// plan still bills b for them.
		for _, rec := range p.Recommendations {
			if rec.ID == "spot:a" && !strings.Contains(rec.Action, "frees $5.000/h of commitment sp-1 (it could cover b)") {
				t.Errorf("a savings plan's spend follows usage across families: %s", rec.Action)
			}
		}
		r := p.Reallocations[0]
		if strings.Join(r.FreedBy, ",") != "spot:a" || !r.FreedMonthly.Equal(decimal.NewFromInt(3650)) || !r.TakenMonthly.Equal(decimal.RequireFromString("477.35")) ||
			!r.Monthly.Equal(decimal.RequireFromString("477.35")) {
			t.Errorf("reallocation %+v", r)
		}
	})
	t.Run("nothing is reported when nothing in scope could take it", func(t *testing.T) {
		a := inst("a", "p4d.24xlarge", withUtil(agg(idle, idle, idle, idle)), func(in *fleet.Instance) {
			in.Lifecycle, in.Commitment = fleet.Committed, &fleet.Commitment{ID: "ri-1"}
		})
		p := runHeld(t, []fleet.Held{ri("ri-1", "p4d.24xlarge", 1, "13.5", false)}, a, inst("b", "g5.xlarge", busyUtil))
		checkReallocations(t, p)
		if len(p.Reallocations) != 0 || len(warningsOf(p, WarnCommitmentReallocation)) != 0 {
			t.Errorf("reallocations %+v", p.Reallocations)
		}
	})
	t.Run("the headline does not count it", func(t *testing.T) {
		a := inst("a", "p4d.24xlarge", withUtil(agg(idle, idle, idle, idle)), func(in *fleet.Instance) {
			in.Lifecycle, in.Commitment = fleet.Committed, &fleet.Commitment{ID: "ri-1"}
		})
		with := runHeld(t, []fleet.Held{ri("ri-1", "p4d.24xlarge", 1, "13.5", false)}, a, inst("b", "p4d.24xlarge", busyUtil))
		alone := runHeld(t, []fleet.Held{ri("ri-1", "p4d.24xlarge", 1, "13.5", false)}, a)
		solo := run(t, inst("b", "p4d.24xlarge", busyUtil))
		if !with.Summary.MonthlySavings.Equal(alone.Summary.MonthlySavings.Add(solo.Summary.MonthlySavings)) {
			t.Errorf("savings %s, want %s + %s", with.Summary.MonthlySavings, alone.Summary.MonthlySavings, solo.Summary.MonthlySavings)
		}
	})
}

// checkReallocations: a reallocation takes only the capacity the plan's
// changes free or that was unused (in what the commitment charges), its saving is what its
// receivers' newly covered hours cost at the rate the plan still bills
// them, no receiver saves more than the plan leaves it paying outside its
// commitments, and the summary does not count it.
func checkReallocations(t *testing.T, p Plan) int {
	t.Helper()
	ics := map[string]InstanceCost{}
	for _, ic := range p.Instances {
		ics[ic.ResourceID] = ic
	}
	cent := decimal.New(1, -2)
	byReceiver := map[string]decimal.Decimal{}
	n := 0
	unused := map[string]decimal.Decimal{}
	for _, u := range p.Held {
		unused[u.ID] = u.UnusedMonthly
	}
	for _, r := range p.Reallocations {
		if len(r.FreedBy) == 0 || len(r.Receivers) == 0 || !r.Monthly.IsPositive() {
			t.Errorf("%s: empty reallocation %+v", r.CommitmentID, r)
		}
		if r.TakenMonthly.GreaterThan(r.FreedMonthly.Add(unused[r.CommitmentID]).Add(cent)) {
			t.Errorf("%s: takes %s of the %s freed and %s unused", r.CommitmentID, r.TakenMonthly, r.FreedMonthly, unused[r.CommitmentID])
		}
		sum := decimal.Zero
		for _, rc := range r.Receivers {
			sum = sum.Add(rc.Monthly)
			ic := ics[rc.ResourceID]
			if ic.Final == nil || ic.Final.Stopped || !ic.MonthlyCost.GreaterThan(ic.CommitmentMonthly) || !(rc.Hours > 0) || rc.Hours > ic.Final.MonthlyHours+1e-6 {
				t.Errorf("%s: receiver %+v is not a running, uncovered instance: %+v", r.CommitmentID, rc, ic)
				continue
			}
			// Its hours at the rate it is left paying, never above it.
			if want := monthly(ic.Final.Hourly.Hourly, rc.Hours); rc.Monthly.Sub(want).Abs().GreaterThan(cent) {
				t.Errorf("%s: %s saves %s for %v h at %s/h", r.CommitmentID, rc.ResourceID, rc.Monthly, rc.Hours, ic.Final.Hourly.Hourly)
			}
			byReceiver[rc.ResourceID] = byReceiver[rc.ResourceID].Add(rc.Monthly)
		}
		if !sum.Equal(r.Monthly) {
			t.Errorf("%s: receivers sum to %s, total %s", r.CommitmentID, sum, r.Monthly)
		}
		n++
	}
	slack := decimal.New(int64(len(p.Reallocations)+1), -2)
	for id, m := range byReceiver {
		ic := ics[id]
		if m.GreaterThan(ic.OptimizedCost.Sub(ic.CommitmentMonthly).Add(slack)) {
			t.Errorf("%s: reallocations save %s of the %s it is left paying outside its commitments", id, m, ic.OptimizedCost.Sub(ic.CommitmentMonthly))
		}
	}
	if len(warningsOf(p, WarnCommitmentReallocation)) != len(p.Reallocations) {
		t.Errorf("%d reallocation warnings for %d reallocations", len(warningsOf(p, WarnCommitmentReallocation)), len(p.Reallocations))
	}
	return n
}
