package recommend

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/coverage"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/money"
)

// WarnCommitmentReallocation: the plan's changes free commitment that
// uncovered running instances in its scope would take; the message names
// them and the USD a month that is realisable once they do, which the
// savings do not count.
const WarnCommitmentReallocation = "commitment-reallocation"

// Reallocation is what one held commitment, freed by the plan's changes,
// would cover of other instances once commitments are allocated again over
// the projected fleet by the same rules (pkg/coverage). It is advice, not
// a saving of the plan: Monthly is not in the summary.
type Reallocation struct {
	CommitmentID string
	// FreedBy are the changes whose instances use less of it, as
	// recommendation IDs (kind:instance), held-back ones (covered-no-saving)
	// included.
	FreedBy []string
	// FreedMonthly is what the commitment charged the freeing instances'
	// parts it no longer covers; TakenMonthly what it charges the
	// receivers' new parts. TakenMonthly ≤ FreedMonthly + what it left
	// unused before: only capacity paid and not used in the plan is taken
	// (a GCP CUD's idle vCPUs can be usable only once GPUs are freed).
	FreedMonthly, TakenMonthly decimal.Decimal
	Receivers                  []Receiver
	// Monthly is the receivers' on-demand hours the commitment would pay
	// for, at their rates: what the reallocation saves once it happens.
	Monthly decimal.Decimal
}

// Receiver is one instance's part of a reallocation.
type Receiver struct {
	ResourceID string
	// Hours are the monthly hours newly covered, billed on demand in the
	// plan; Monthly their cost at its rate.
	Hours   float64
	Monthly decimal.Decimal
	// Buys is true when the plan advises a new commitment for it too.
	Buys bool
}

// reallocate allocates the fleet's commitments again over the projected
// fleet — the plan's changes applied, and those held back because
// commitments pay for them (covered-no-saving, idle-committed) too:
// stopped instances gone,
// moved or spot ones billed in full as the plan bills them, scheduled ones
// on their new hours — and reports, per commitment, which uncovered
// instances would take what those changes free (commitment-reallocation).
// Only an instance left running on demand on its own type can receive, and
// only the hours the plan still bills it at its rate: its own advice comes
// first. Nothing is reported when the projected allocation would take
// coverage from an instance the plan still counts covered. It is advice:
// the summary does not count it.
func (e *engine) reallocate() {
	f, states := e.fleet, e.all
	if f == nil || len(f.Commitments) == 0 || len(e.held.Commitments) == 0 {
		return
	}
	proj := make(map[*state]*state, len(e.unsaved))
	held := map[*state][]string{}
	for _, p := range e.unsaved {
		t := proj[p.s]
		if t == nil {
			c := *p.s
			t = &c
			proj[p.s] = t
		}
		t.apply(p.c)
		held[p.s] = append(held[p.s], string(p.c.kind)+":"+p.s.inst.ID)
	}
	after := func(s *state) *state {
		if t := proj[s]; t != nil {
			return t
		}
		return s
	}
	changed := false
	pf := *f
	pf.Instances = make([]fleet.Instance, len(f.Instances))
	byInst := make(map[*fleet.Instance]*state, len(states))
	for _, s := range states {
		byInst[s.inst] = s
	}
	summaries := make(map[string]*fleet.Summary, len(states))
	for i := range f.Instances {
		in := f.Instances[i]
		if s := byInst[&f.Instances[i]]; s != nil {
			summaries[in.ID] = s.summary
			t := after(s)
			switch {
			case t.stopped || t.typ.Name != s.typ0 || t.lifecycle == fleet.Spot && in.Lifecycle != fleet.Spot:
				// Stopped, or on a type or lifecycle the plan bills in full:
				// it takes nothing of the commitments.
				changed = changed || s.cov != nil
				in.State, in.StoppedAllocated = fleet.Stopped, false
			case t.hours != s.hours0:
				changed = changed || s.cov != nil
				h := t.hours
				in.Usage = fleet.Usage{HoursPerMonth: &h, Schedule: t.schedule}
			}
		}
		pf.Instances[i] = in
	}
	if !changed {
		return
	}
	res := coverage.Allocate(coverage.Input{Fleet: &pf, Catalog: e.cat, Now: e.heldNow, FallbackDiscount: e.fallbackDiscount,
		Summary: func(in *fleet.Instance) *fleet.Summary {
			if sm, ok := summaries[in.ID]; ok {
				return sm
			}
			return in.Utilization.Summarize()
		}})
	type gain struct {
		s     *state
		hours float64
		parts map[string]float64 // commitment → share of the hours gained
	}
	var gains []gain
	freedBy := map[string][]string{}
	freed := map[string]decimal.Decimal{}
	taken := map[string]decimal.Decimal{}
	for _, s := range states {
		if s.cov == nil && s.coveredHours > 0 {
			continue // an implicit commitment of its own: nothing to move
		}
		t := after(s)
		nc := res.Instances[s.inst.ID]
		oldParts, newParts := partsOf(s.cov), partsOf(nc)
		shrunk := t.stopped || t.hours < s.hours0 || t.typ.Name != s.typ0 || t.lifecycle == fleet.Spot && s.inst.Lifecycle != fleet.Spot
		// What the instance stops using of each commitment: freed by its
		// own change, or handed over because another freed commitment
		// now covers it (displaced).
		var moved []string
		for _, id := range slices.Sorted(maps.Keys(newParts)) {
			if newParts[id].share*t.hours > oldParts[id].share*s.hours0+1e-6 {
				moved = append(moved, id)
			}
		}
		for _, id := range slices.Sorted(maps.Keys(oldParts)) {
			op, np := oldParts[id], newParts[id]
			if np.share*t.hours >= op.share*s.hours0-1e-6 {
				continue
			}
			by := held[s]
			switch {
			case !shrunk:
				by = []string{s.inst.ID + " (then covered by " + strings.Join(moved, ", ") + ")"}
			case len(by) == 0 && s.last != "":
				by = []string{s.last}
			}
			for _, b := range by {
				if !slices.Contains(freedBy[id], b) {
					freedBy[id] = append(freedBy[id], b)
				}
			}
			freed[id] = freed[id].Add(op.monthly.Sub(np.monthly))
		}
		if !s.priced || shrunk || s.inst.State != fleet.Running || s.inst.StoppedAllocated {
			continue
		}
		newHours := 0.0
		if nc != nil {
			newHours = nc.Share * t.hours
		}
		if newHours < min(t.hours, s.coveredHours)-1e-6 {
			// The projected allocation would take coverage the plan still
			// counts: not sound to report.
			return
		}
		if s.inst.Lifecycle != fleet.OnDemand || s.override != nil && s.lifecycle != fleet.Committed || e.hasBill(s) {
			continue
		}
		h := min(newHours-s.coveredHours, s.billedHours())
		if !(h > 1e-6) {
			continue
		}
		g := gain{s: s, hours: h, parts: map[string]float64{}}
		for id, np := range newParts {
			if d := np.share - oldParts[id].share; d > 1e-9 {
				g.parts[id] = d
				taken[id] = taken[id].Add(np.monthly.Sub(oldParts[id].monthly))
			}
		}
		gains = append(gains, g)
	}
	byID := map[string]*Reallocation{}
	for _, g := range gains {
		total := 0.0
		for _, d := range g.parts {
			total += d
		}
		for _, id := range slices.Sorted(maps.Keys(g.parts)) {
			if len(freedBy[id]) == 0 {
				continue // not capacity the plan freed
			}
			m := monthly(g.s.price.Hourly, g.hours*g.parts[id]/total)
			if !m.IsPositive() {
				continue
			}
			r := byID[id]
			if r == nil {
				r = &Reallocation{CommitmentID: id, FreedBy: freedBy[id], FreedMonthly: freed[id].Round(2), TakenMonthly: taken[id].Round(2)}
				byID[id] = r
			}
			r.Receivers = append(r.Receivers, Receiver{ResourceID: g.s.inst.ID, Hours: g.hours * g.parts[id] / total, Monthly: m, Buys: g.s.lifecycle == fleet.Committed})
			r.Monthly = r.Monthly.Add(m)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(byID)) {
		r := byID[id]
		slices.SortFunc(r.Receivers, func(a, b Receiver) int {
			if c := b.Monthly.Cmp(a.Monthly); c != 0 {
				return c
			}
			return strings.Compare(a.ResourceID, b.ResourceID)
		})
		e.reallocations = append(e.reallocations, *r)
		var who []string
		buys := false
		for _, rc := range r.Receivers {
			who = append(who, fmt.Sprintf("%s (%s h, $%s)", rc.ResourceID, fmtHours(rc.Hours), money.Group(rc.Monthly, 2)))
			buys = buys || rc.Buys
		}
		msg := fmt.Sprintf("%s frees $%s a month of commitment %s; allocated again over the plan's fleet by the same rules, it would cover %s: $%s a month below the optimized cost once they run on it, not counted in the savings",
			listSome(r.FreedBy, 3), money.Group(r.FreedMonthly, 2), id, listSome(who, 5), money.Group(r.Monthly, 2))
		if buys {
			msg += "; the new commitment advised for them is then not needed for those hours"
		}
		e.heldWarnings = append(e.heldWarnings, Warning{ResourceID: id, Code: WarnCommitmentReallocation, Message: msg})
	}
}

// heldPart is one commitment's part of an instance.
type heldPart struct {
	share   float64
	monthly decimal.Decimal
}

func partsOf(c *coverage.Covered) map[string]heldPart {
	out := map[string]heldPart{}
	if c == nil {
		return out
	}
	for _, p := range c.Parts {
		h := out[p.CommitmentID]
		h.share += p.Share
		h.monthly = h.monthly.Add(p.Monthly)
		out[p.CommitmentID] = h
	}
	return out
}

func (e *engine) hasBill(s *state) bool {
	_, ok := e.opts.Billed[s.inst.ID]
	return ok
}

// fmtHours writes hours with at most one decimal.
func fmtHours(h float64) string {
	if h == math.Trunc(h) {
		return fmt.Sprintf("%.0f", h)
	}
	return fmt.Sprintf("%.1f", h)
}
