package recommend

import (
	"fmt"
	"slices"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/coverage"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/money"
	"github.com/gpufinops/gpufinops/pricing"
)

// implicitCommitment names, in CoveredBy, the commitment an instance
// declares (lifecycle committed) without one in the fleet's commitments.
const implicitCommitment = "implicit"

// applyHeld applies the commitments the fleet holds before any rule runs:
// each covered instance carries what its commitments charge (fixed, paid
// whatever is done with it) and is billed at its price only for the hours
// they leave uncovered. A committed instance with no commitment in the fleet
// is covered by an implicit one of its own: every hour of its term is paid
// (a reservation bills 730 hours a month however few it runs), except a
// savings plan's, whose spend follows usage. Commitments no instance names
// and that are not used in full are findings (unused-commitment), their
// unused part a line of the summary.
func (e *engine) applyHeld(f *fleet.Fleet, states []*state) {
	now := e.opts.Now
	if now.IsZero() && f.Metadata.GeneratedAt != nil {
		now = *f.Metadata.GeneratedAt
	}
	e.heldNow = now
	held := map[string]bool{}
	if len(f.Commitments) > 0 {
		summaries := make(map[*fleet.Instance]*fleet.Summary, len(states))
		for _, s := range states {
			summaries[s.inst] = s.summary
		}
		e.held = coverage.Allocate(coverage.Input{Fleet: f, Catalog: e.cat, Now: now, FallbackDiscount: e.fallbackDiscount, ISF: e.opts.ISF,
			Summary: func(in *fleet.Instance) *fleet.Summary {
				if sm, ok := summaries[in]; ok {
					return sm
				}
				return in.Utilization.Summarize()
			}})
		e.heldByID = make(map[string]*coverage.Usage, len(e.held.Commitments))
		for i := range e.held.Commitments {
			u := &e.held.Commitments[i]
			e.heldByID[u.ID] = u
			held[u.ID] = true
		}
	}
	named := map[string][]*state{}
	repriced := map[*state]bool{}
	for _, s := range states {
		if !s.priced {
			continue
		}
		in := s.inst
		if _, billed := e.opts.Billed[in.ID]; billed {
			// The bill's effective rate already is what its commitments
			// leave it paying (RunWith's CommittedShare).
			continue
		}
		id := ""
		if in.Commitment != nil {
			id = in.Commitment.ID
		}
		switch c := e.held.Instances[in.ID]; {
		case c != nil || held[id]:
			if in.Lifecycle == fleet.Committed {
				// Its hours no commitment covers are billed on demand.
				if od, ok := e.onDemandOf(in); ok && in.HourlyPrice == nil {
					s.price, s.hourly0 = od, e.shared(od)
					repriced[s] = true
				}
			}
			if held[id] {
				named[id] = append(named[id], s)
			}
			if c == nil {
				continue
			}
			s.cov = c
			for _, p := range c.Parts {
				m := p.Monthly
				if !p.Priced {
					m = monthly(s.price.Hourly, s.hours0*p.Share)
				}
				s.fixed = s.fixed.Add(m)
			}
			s.coveredHours, s.coveredType = s.hours0*c.Share, s.typ.Name
		case in.Lifecycle == fleet.Committed:
			full := fleet.HoursPerMonth
			if cm := in.Commitment; cm != nil && (&fleet.Held{Kind: cm.Kind}).PerHour() {
				full = s.hours0
			}
			s.fixed = monthly(s.price.Hourly, full)
			s.coveredHours, s.coveredType = s.hours0, s.typ.Name
		}
	}
	for i := range e.held.Commitments {
		u := &e.held.Commitments[i]
		if !u.Active || !u.UnusedMonthly.IsPositive() {
			continue
		}
		owners := named[u.ID]
		if len(owners) == 0 {
			e.unattributed = e.unattributed.Add(u.UnusedMonthly)
			continue
		}
		// Split in cents; the first owner takes the remainder.
		n := decimal.NewFromInt(int64(len(owners)))
		each := u.UnusedMonthly.Div(n).RoundDown(2)
		for j, s := range owners {
			add := each
			if j == 0 {
				add = u.UnusedMonthly.Sub(each.Mul(n.Sub(decimal.NewFromInt(1))))
			}
			s.fixed = s.fixed.Add(add)
		}
	}
	for _, s := range states {
		if !s.priced || s.fixed.IsZero() && s.coveredHours == 0 && !repriced[s] {
			continue
		}
		s.monthly0 = e.costOf(s)
		if s.inst.State == fleet.Stopped && s.fixed.IsPositive() {
			by := s.coveredBy()
			is := "is"
			if len(by) > 1 {
				is = "are"
			}
			e.warn(s.inst.ID, WarnStoppedCommitted, "stopped, but %s %s still paid: $%s a month whether it runs or not; run usage on it, or sell or exchange it where the cloud allows",
				commitmentWords(by), is, money.Group(s.fixed, 2))
		}
	}
	e.unusedFindings()
}

// unusedFindings warns of each commitment paid for hours nothing uses.
func (e *engine) unusedFindings() {
	for i := range e.held.Commitments {
		u := &e.held.Commitments[i]
		if !u.Active || u.Utilization >= 1-1e-9 {
			continue
		}
		use := "no uncovered running usage in its scope could use it: sell it, exchange it (convertible RIs, Azure reservations) or let it expire"
		if len(u.Candidates) > 0 {
			use = "uncovered running usage in its scope could use it: " + listOf(u.Candidates, 5, u.CandidateCount)
		}
		if !u.Priced {
			e.warn(u.ID, WarnUnusedCommitment, "%s %s (%s) is %s %% used, at a price the fleet does not give (set hourlyRate or hourlyCommitment); %s",
				u.Kind, u.ID, u.Capacity, pct(u.Utilization*100), use)
			continue
		}
		e.warn(u.ID, WarnUnusedCommitment, "%s %s (%s) is %s %% used: $%s of the $%s it costs a month pays for nothing; %s",
			u.Kind, u.ID, u.Capacity, pct(u.Utilization*100), money.Group(u.UnusedMonthly, 2), money.Group(u.PaidMonthly, 2), use)
	}
}

// fallbackDiscount is the policy's configured discount of a provider and
// term, for a savings plan on a type the catalog has no rate for.
func (e *engine) fallbackDiscount(p fleet.Provider, term string) (float64, bool) {
	m := e.policy.Commitment.Discounts1y
	if term == "3y" {
		m = e.policy.Commitment.Discounts3y
	}
	d, ok := m[string(p)]
	return d, ok
}

// onDemandOf is the catalog's on-demand price of the instance's type.
func (e *engine) onDemandOf(in *fleet.Instance) (pricing.Price, bool) {
	o, ok := e.offer(in.Provider, in.Region, pricing.TypeNameOf(e.cat, in))
	if !ok || o.OnDemand == nil {
		return pricing.Price{}, false
	}
	return *o.OnDemand, true
}

// covered reports whether commitments pay for any of the state's cost.
func (s *state) covered() bool { return s.fixed.IsPositive() || s.coveredHours > 0 }

// coveredBy are the IDs of the commitments that pay for the instance.
func (s *state) coveredBy() []string {
	var ids []string
	if s.cov != nil {
		for _, p := range s.cov.Parts {
			if !slices.Contains(ids, p.CommitmentID) {
				ids = append(ids, p.CommitmentID)
			}
		}
	}
	if cm := s.inst.Commitment; cm != nil && cm.ID != "" && !slices.Contains(ids, cm.ID) && s.covered() {
		ids = append(ids, cm.ID)
	}
	if len(ids) == 0 && s.covered() {
		ids = append(ids, implicitCommitment)
	}
	return ids
}

// describeCoverage fills the instance's commitment figures.
func (s *state) describeCoverage(ic *InstanceCost) {
	if !s.covered() {
		return
	}
	ic.CommitmentMonthly = s.fixed
	if s.hours0 > 0 {
		ic.CoveredShare = round2(min(1, s.coveredHours/s.hours0))
	}
	ic.CoveredBy = s.coveredBy()
}

// coveredWithoutSaving reports whether a change to a covered instance saves
// nothing because commitments pay for what it would stop using; it is then
// not recorded, and a warning says what it would free.
func (e *engine) coveredWithoutSaving(s *state, c *change) bool {
	if c.keep || c.kind == KindCommitment || !s.covered() {
		return false
	}
	t := *s
	t.apply(c)
	if t.cost().LessThan(s.cost()) {
		return false
	}
	e.heldBack(s, c)
	// Kept apart and listed after the rules' warnings: a change is recorded
	// after its phase's rules have all run, so this comes in record order.
	e.heldWarnings = append(e.heldWarnings, Warning{ResourceID: s.inst.ID, Code: WarnCoveredNoSaving,
		Message: fmt.Sprintf("%q would save nothing: %s; it %s", c.short, e.paysText(s), e.freesText(s))})
	return true
}

// paysText says what commitments pay for the instance.
func (e *engine) paysText(s *state) string {
	return fmt.Sprintf("%s %s $%s a month of its cost whatever is done with it", commitmentWords(s.coveredBy()), pays(len(s.coveredBy())), money.Group(s.fixed, 2))
}

func pays(n int) string {
	if n == 1 {
		return "pays"
	}
	return "pay"
}

// freesText says what stopping or shrinking the instance frees of its
// commitments, and what could use it.
func (e *engine) freesText(s *state) string {
	if s.cov == nil {
		return "frees nothing another instance can use: the commitment is its own"
	}
	var parts []string
	for _, p := range s.cov.Parts {
		if !p.Fixed {
			continue
		}
		h := "$" + p.Hourly.StringFixed(3) + "/h"
		if !p.Priced {
			h = pct(p.Share*100) + " % of its hours"
		}
		use := "nothing else in its scope could use it"
		if u := e.heldByID[p.CommitmentID]; u != nil {
			if c := slices.DeleteFunc(slices.Clone(u.Candidates), func(id string) bool { return id == s.inst.ID }); len(c) > 0 {
				use = "it could cover " + listSome(c, 3)
			} else if others, n := e.uncoveredLike(s, (&fleet.Held{Kind: p.Kind}).PerHour()); len(others) > 0 {
				shown := others[:min(3, len(others))]
				use = "it could cover " + strings.Join(shown, ", ")
				if n > len(shown) {
					use += fmt.Sprintf(" and %d more", n-len(shown))
				}
			}
		}
		parts = append(parts, fmt.Sprintf("frees %s of commitment %s (%s), which is still paid: it saves money only once other usage takes it", h, p.CommitmentID, use))
	}
	if len(parts) == 0 {
		return "frees nothing"
	}
	return strings.Join(parts, "; ")
}

// uncoveredLike are running instances of the same provider, region and
// type family as s (of the same provider only, for a savings plan's or
// spend-based commitment's spend, which follows usage across families)
// that no commitment fully covers (at most four, and how many in all),
// from an index built on first use.
func (e *engine) uncoveredLike(s *state, anyFamily bool) (ids []string, total int) {
	if e.uncovered == nil {
		e.uncovered = map[familyKey]*idList{}
		for _, o := range e.all {
			in := o.inst
			if in.State != fleet.Running || in.Lifecycle != fleet.OnDemand || o.cov != nil && o.cov.Share >= 1-1e-9 || in.IsManaged() {
				continue
			}
			for _, k := range []familyKey{{in.Provider, in.Region, coverage.Family(in.InstanceType)}, {provider: in.Provider}} {
				l := e.uncovered[k]
				if l == nil {
					l = &idList{}
					e.uncovered[k] = l
				}
				if len(l.ids) < 4 {
					l.ids = append(l.ids, in.ID)
				}
				l.n++
			}
		}
	}
	k := familyKey{s.inst.Provider, s.inst.Region, coverage.Family(s.inst.InstanceType)}
	if anyFamily {
		k = familyKey{provider: s.inst.Provider}
	}
	l := e.uncovered[k]
	if l == nil {
		return nil, 0
	}
	ids = slices.DeleteFunc(slices.Clone(l.ids), func(id string) bool { return id == s.inst.ID })
	total = l.n
	if len(ids) < len(l.ids) {
		total--
	}
	return ids, total
}

type familyKey struct {
	provider       fleet.Provider
	region, family string
}

// idList is a few IDs and how many there are in all.
type idList struct {
	ids []string
	n   int
}

// heldNote is what a change to a covered instance says of its commitments.
func (e *engine) heldNote(s *state) string {
	return "the saving is the uncovered part only: " + e.paysText(s) + "; this change " + e.freesText(s)
}

func commitmentWords(ids []string) string {
	if len(ids) == 1 {
		if ids[0] == implicitCommitment {
			return "its commitment"
		}
		return "commitment " + ids[0]
	}
	return "commitments " + strings.Join(ids, ", ")
}

// listSome lists up to n names, then how many more.
func listSome(names []string, n int) string { return listOf(names, n, len(names)) }

// listOf lists up to n of names, then how many more of total there are.
func listOf(names []string, n, total int) string {
	shown := names[:min(n, len(names))]
	if total <= len(shown) {
		return strings.Join(shown, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(shown, ", "), total-len(shown))
}

// heldBack keeps a change not made because commitments pay for the
// instance, for the reallocation of what it would free (reallocate).
func (e *engine) heldBack(s *state, c *change) {
	if s.cov != nil {
		e.unsaved = append(e.unsaved, pendingChange{s, c})
	}
}
