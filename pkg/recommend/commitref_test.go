package recommend

// The commitment rule as it was before its caches: the reference
// TestCommitmentRuleMatchesReference holds the rule to.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/internal/fleetgen"
	"github.com/gpufinops/gpufinops/internal/purchasetest"
	"github.com/gpufinops/gpufinops/pkg/commitplan"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
)

// commitRates finds the commitment rate of a type in a region for each term,
// in the policy's plan kind and payment option. A configured discount
// replaces the catalog's rate; otherwise a type and region without a rate
// has none (no assumed percentage).
func (e *engine) refCommitRates(p fleet.Provider, region, typ string, onDemand decimal.Decimal) map[string]commitRate {
	pol := e.policy.Commitment
	out := map[string]commitRate{}
	if e.planKind(p) == "" {
		return out
	}
	for _, term := range commitTerms {
		conf := pol.Discounts1y
		if term == commitplan.Term3y {
			conf = pol.Discounts3y
		}
		if d, ok := conf[string(p)]; ok {
			out[term] = commitRate{discount: d, configured: true}
			continue
		}
		r, ok := pricing.LookupCommitment(e.cat, pricing.CommitmentQuery{
			Provider: p, Region: region, InstanceType: typ, Kind: e.planKind(p), Term: term, Payment: pol.Payments[string(p)],
		})
		if !ok {
			continue
		}
		// The public rate against what the instance pays on demand.
		if !onDemand.IsPositive() {
			continue
		}
		d := 1 - r.Hourly.Div(onDemand).InexactFloat64()
		if !(d > 0 && d < 1) {
			continue
		}
		out[term] = commitRate{discount: d, rate: &r}
	}
	return out
}

// commitmentRule plans commitments per provider, region and family from the
// hourly usage that the rules before it left (stopped, scheduled, resized and
// spot capacity is never committed), at each type's own commitment rate,
// choosing the level that minimises the month's cost, and gives each
// instance its share of the saving.
func refCommitmentRule(e *engine, active []*state) map[*state]*change {
	anyAlt, noAlt := false, map[pricing.CommitmentKind]bool{}
	pol := e.policy.Commitment
	byID := map[string]*state{}
	for _, s := range active {
		byID[s.inst.ID] = s
	}
	var items []commitplan.Item
	rates := map[string]map[string]commitRate{}
	missing := map[string][]string{}   // group → types without a rate
	noKind := map[fleet.Provider]int{} // provider → eligible instances
	for _, s := range e.all {
		if !s.priced {
			continue
		}
		od := s.price.Hourly
		if s.inst.HourlyPrice == nil || s.lifecycle != fleet.OnDemand {
			offer, ok := e.cat.Offer(s.inst.Provider, s.inst.Region, s.typ.Name)
			if !ok || offer.OnDemand == nil {
				continue
			}
			od = offer.OnDemand.Hourly
		}
		it := commitplan.ItemFrom(s.inst, commitplan.Final{
			InstanceType: s.typ.Name, Family: s.typ.Family, Lifecycle: s.lifecycle, Priced: true,
			OnDemandHourly: od, Hourly: s.price.Hourly, MonthlyHours: s.hours, Schedule: s.schedule,
			Stopped: s.stopped,
		})
		if b, ok := e.opts.Billed[it.ID]; ok && it.Eligible && b.CommittedShare >= CommittedEnough {
			it.Eligible, it.Reason = false, commitplan.ReasonCommitted
		}
		if it.Eligible && e.planKind(it.Provider) == "" {
			noKind[it.Provider]++
			it.Eligible, it.Reason = false, "the policy names no commitment kind for its cloud"
		}
		if it.Eligible && e.planKind(it.Provider) == pricing.ResourceCUD {
			// Without unit rates (noUnitPrices) a series that mixes machine
			// types is bought per type.
			series, _ := pricing.CUDSeries(s.typ.Name)
			if e.mixedSeries()[regionType{it.Provider, it.Region, series}] {
				it.Family = it.InstanceType
			}
		}
		if it.Eligible {
			r := e.refCommitRates(it.Provider, it.Region, it.InstanceType, od)
			rates[it.ID] = r
			it.Discounts = commitplan.Terms{}
			for term, cr := range r {
				it.Discounts[term] = cr.discount
				if cr.rate != nil {
					if it.Rates == nil {
						it.Rates = map[string]decimal.Decimal{}
					}
					it.Rates[term] = cr.rate.Hourly
				}
			}
			it.PerInstance = !e.planKind(it.Provider).PerHour()
			if alt := altKinds[e.planKind(it.Provider)]; alt != "" {
				ar, _ := e.kindRates(alt, it.Provider, it.Region, it.InstanceType, od)
				_, conf := pol.Discounts1y[string(it.Provider)]
				if _, ok := ar[pol.Term]; ok {
					anyAlt = true
				} else if len(ar) == 0 && !conf {
					noAlt[alt] = true
				}
			}
			if _, ok := r[pol.Term]; !ok {
				key := fmt.Sprintf("%s %s %s", it.Provider, it.Region, it.Family)
				if !slices.Contains(missing[key], it.InstanceType) {
					missing[key] = append(missing[key], it.InstanceType)
				}
			}
		}
		items = append(items, it)
	}
	for _, p := range slices.Sorted(maps.Keys(noKind)) {
		e.warn("", WarnNoCommitmentKind, "%s: the policy names no commitment to buy (policy.commitment.plans.%s): no commitment advised for %d instance(s)", p, p, noKind[p])
	}
	keys := make([]string, 0, len(missing))
	for k := range missing {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p := fleet.Provider(strings.Fields(k)[0])
		e.warn("", WarnNoCommitmentRate, "%s: no %s %s rate for %s in the catalog's commitment data (docs/catalog.md): no commitment advised for it, and no discount assumed; set policy.commitment.discounts_%s.%s to your negotiated rate",
			k, pol.Term, e.planKind(p).Label(), strings.Join(missing[k], ", "), pol.Term, p)
	}
	plan, err := commitplan.Build(items, nil, commitplan.Options{TrendPercent: pol.TrendPercent, Term: pol.Term})
	if err != nil {
		e.warn("", "commitment-plan", "no commitment plan: %v", err)
		return nil
	}
	if !anyAlt {
		for _, alt := range slices.Sorted(maps.Keys(noAlt)) {
			e.offlineNote(&plan, alt)
		}
	}
	e.commits = plan
	out := map[*state]*change{}
	for _, g := range plan.Groups {
		if g.Trend != nil {
			e.warn("", WarnUsageTrend, "%s %s %s: usage %s %s %% in the last week against the weeks before ($%s/h → $%s/h on demand): commitments are sized on the last week, confidence lowered",
				g.Provider, g.Region, g.Family, g.Trend.Direction, pct(absf(g.Trend.ChangePercent)), fmt3(g.Trend.EarlierMean), fmt3(g.Trend.RecentMean))
		}
		for ti := range g.Terms {
			tp := &g.Terms[ti]
			if tp.Term != g.Recommended {
				continue
			}
			// The words of the advice are the engine's own; the reference
			// checks what is planned and who takes what.
			ta := e.termAdvice(g.Provider, &g, tp)
			ta.unitRate = unitRate(&g, tp, byID, rates)
			for _, a := range tp.Allocations {
				s := byID[a.ID]
				if s == nil || !a.SavingsMonthly.IsPositive() {
					continue
				}
				if c := e.commitmentChange(s, &g, tp, a, rates[a.ID][tp.Term], ta); c != nil {
					out[s] = c
				}
			}
		}
	}
	return out
}

// noListedOnDemand is a catalog whose commitment rates for some types state
// no on-demand price, so the discount is against each instance's own, and
// for some are paid otherwise than the rest of their family.
type noListedOnDemand struct{ pricing.Catalog }

func (c noListedOnDemand) CommitmentRate(q pricing.CommitmentQuery) (pricing.CommitmentRate, bool) {
	r, ok := pricing.LookupCommitment(c.Catalog, q)
	if ok && len(q.InstanceType)%2 == 0 {
		r.OnDemandHourly, r.DiscountPercent = decimal.Zero, 0
	}
	if ok && strings.Contains(q.InstanceType, "12") {
		r.Payment = pricing.PayMonthly
	}
	return r, ok
}

// noUnitPrices is a catalog without per-resource prices (whose commitment
// rates it keeps).
type noUnitPrices struct{ pricing.Catalog }

func (c noUnitPrices) CommitmentRate(q pricing.CommitmentQuery) (pricing.CommitmentRate, bool) {
	return pricing.LookupCommitment(c.Catalog, q)
}

// TestCommitmentRuleMatchesReference: on generated fleets (every cloud,
// schedules in every zone, samples, hostile edge cases), with configured
// discounts, a cloud with no commitment kind, billed commitments and rates
// with no on-demand price of their own, the engine's plan is the one the
// reference rule gives, byte for byte.
func TestCommitmentRuleMatchesReference(t *testing.T) {
	embedded, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	last := len(phases) - 1
	rule := phases[last]
	defer func() { phases[last] = rule }()
	for seed := range uint64(8) {
		// The reference buys a series that mixes machine types per type:
		// it holds the rule to a catalog without GCP unit prices.
		var cat pricing.Catalog = noUnitPrices{embedded}
		if seed%2 == 1 {
			cat = noListedOnDemand{cat}
		}
		pol := DefaultPolicy().WithPurchases(purchasetest.Purchases())
		switch seed % 4 {
		case 1:
			pol.Commitment.Term = commitplan.Term3y
		case 2:
			pol.Commitment.Discounts1y = map[string]float64{string(fleet.GCP): 0.3}
			pol.Commitment.Discounts3y = map[string]float64{string(fleet.AWS): 0.5}
		case 3:
			pol.Commitment.Plans = maps.Clone(pol.Commitment.Plans)
			delete(pol.Commitment.Plans, string(fleet.Azure))
		}
		run := func(group func(*engine, []*state) map[*state]*change) []byte {
			f := fleetgen.Generate(fleetgen.Options{Instances: 600, Seed: seed, SampleShare: 0.2, MaxSamples: 400, Hostile: seed%3 == 0})
			if err := pricing.Complete(f, cat); err != nil {
				t.Fatal(err)
			}
			for i := range f.Instances {
				// Instances of one type that pay different prices.
				if in := &f.Instances[i]; in.HourlyPrice != nil && i%5 > 0 {
					h := in.HourlyPrice.Mul(decimal.New(int64(100+i%5), -2))
					in.HourlyPrice = &h
				}
			}
			billed := map[string]BilledRate{}
			for i, in := range f.Instances {
				if i%7 == 0 && in.HourlyPrice != nil {
					billed[in.ID] = BilledRate{Price: pricing.Price{Provider: in.Provider, Region: in.Region, InstanceType: in.InstanceType,
						Option: pricing.Option(fleet.OnDemand), Hourly: *in.HourlyPrice, Currency: pricing.Currency, Unit: pricing.UnitHour, Source: "bill"},
						CommittedShare: float64(i%3) / 2}
				}
			}
			phases[last] = phase{group: group}
			b, err := json.Marshal(RunWith(f, cat, pol, Options{Billed: billed}))
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
		want, got := run(refCommitmentRule), run(commitmentRule)
		if !bytes.Equal(got, want) {
			i := 0
			for i < min(len(got), len(want)) && got[i] == want[i] {
				i++
			}
			t.Fatalf("fleet %d: plans differ at byte %d: …%s… against the reference's …%s…", seed, i,
				got[max(0, i-200):min(len(got), i+200)], want[max(0, i-200):min(len(want), i+200)])
		}
		if !bytes.Contains(got, []byte(`"kind":"commitment"`)) {
			t.Fatalf("fleet %d: no commitment recommended", seed)
		}
	}
}
