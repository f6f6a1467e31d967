package recommend

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/commitplan"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/money"
	"github.com/gpufinops/gpufinops/pricing"
)

// altKinds are, for a kind the policy buys, the other kind the planner
// weighs for the same usage: on Azure, a savings plan for compute against
// reservations. A reservation buys VMs of one size in one region, the
// deeper discount for steady usage; a savings plan buys $/h of spend that
// follows usage across sizes (and regions), so it keeps saving where usage
// moves between sizes. Each group of usage gets the one that saves more.
var altKinds = map[pricing.CommitmentKind]pricing.CommitmentKind{
	pricing.Reservation:      pricing.AzureSavingsPlan,
	pricing.AzureSavingsPlan: pricing.Reservation,
}

// offlineNames name a kind in the note that says its rates are missing.
var offlineNames = map[pricing.CommitmentKind]string{pricing.AzureSavingsPlan: "Azure savings-plan", pricing.Reservation: "Azure reservation"}

type groupKey struct {
	provider       fleet.Provider
	region, family string
}

type altKey struct {
	kind pricing.CommitmentKind
	pricedType
}

// altItem is an item planned under the other kind, at that kind's rates.
type altItem struct {
	kind  pricing.CommitmentKind
	item  commitplan.Item
	rates map[string]commitRate
}

// buildPlan plans the items; where some have rates under the other kind
// (alts, by item index), it plans them under that kind too and gives each
// group the kind whose recommended term saves more, its items and rates
// (a tie keeps the policy's kind). Both plans share one axis (the items'
// windows), so each group's figures are those the final plan gives it,
// and analyze and commit-plan, reading this one plan, buy the same.
func (e *engine) buildPlan(items []commitplan.Item, alts map[int]altItem, rates map[string]map[string]commitRate, missing map[string][]string) (commitplan.Plan, error) {
	pol := e.policy.Commitment
	opts := commitplan.Options{TrendPercent: pol.TrendPercent, Term: pol.Term}
	own, err := commitplan.Build(items, nil, opts)
	if err != nil || len(alts) == 0 {
		return own, err
	}
	keyOf := func(it *commitplan.Item) groupKey { return groupKey{it.Provider, it.Region, it.Family} }
	weighed := map[groupKey]pricing.CommitmentKind{}
	for i, a := range alts {
		weighed[keyOf(&items[i])] = a.kind
	}
	other := slices.Clone(items)
	for i := range other {
		it := &other[i]
		kind, ok := weighed[keyOf(it)]
		if !ok {
			continue
		}
		if a, ok := alts[i]; ok {
			*it = a.item
		} else if it.Eligible {
			it.Eligible, it.Reason = false, commitplan.ReasonNoRate+" ("+kind.Label()+")"
		}
	}
	alt, err := commitplan.Build(other, nil, opts)
	if err != nil {
		return own, nil
	}
	saving := func(p commitplan.Plan) map[groupKey]decimal.Decimal {
		out := map[groupKey]decimal.Decimal{}
		for _, g := range p.Groups {
			for _, t := range g.Terms {
				if t.Term == g.Recommended {
					out[groupKey{g.Provider, g.Region, g.Family}] = t.SavingsMonthly
				}
			}
		}
		return out
	}
	so, sa := saving(own), saving(alt)
	chosen := map[groupKey]bool{}
	notes := map[groupKey]string{}
	for _, k := range slices.SortedFunc(maps.Keys(weighed), compareGroupKeys) {
		kind, ownKind := weighed[k], e.planKind(k.provider)
		a, o := sa[k], so[k]
		if a.GreaterThan(o) {
			chosen[k] = true
			notes[k] = kindNote(kind, a, ownKind, o)
			key := fmt.Sprintf("%s %s %s", k.provider, k.region, k.family)
			delete(missing, key)
		} else if o.IsPositive() || a.IsPositive() {
			notes[k] = kindNote(ownKind, o, kind, a)
		}
	}
	plan := own
	if len(chosen) > 0 {
		for i := range items {
			if chosen[keyOf(&items[i])] {
				items[i] = other[i]
				if a, ok := alts[i]; ok {
					rates[items[i].ID] = a.rates
				}
			}
		}
		if plan, err = commitplan.Build(items, nil, opts); err != nil {
			return commitplan.Plan{}, err
		}
	}
	for i := range plan.Groups {
		g := &plan.Groups[i]
		k := groupKey{g.Provider, g.Region, g.Family}
		if _, ok := weighed[k]; !ok {
			continue
		}
		g.Kind, g.KindNote = string(e.planKind(k.provider)), notes[k]
		if chosen[k] {
			g.Kind = string(weighed[k])
		}
	}
	return plan, nil
}

func compareGroupKeys(a, b groupKey) int {
	return strings.Compare(string(a.provider)+"\x00"+a.region+"\x00"+a.family, string(b.provider)+"\x00"+b.region+"\x00"+b.family)
}

// offlineNote says, on the plan and its groups of the provider, that no
// rate of the other kind is known, so it is not weighed; no rate is
// assumed for it.
func (e *engine) offlineNote(plan *commitplan.Plan, alt pricing.CommitmentKind) {
	own := altKinds[alt]
	note := fmt.Sprintf("no %s rate offline: the catalog has none (a live scan reads them from the Retail Prices API), so only %s is weighed", offlineNames[alt], withArticle(own.Label()))
	plan.Assumptions = append(plan.Assumptions, note)
	for i := range plan.Groups {
		g := &plan.Groups[i]
		if e.planKind(g.Provider) == own && g.KindNote == "" && len(g.Items) > 0 {
			g.KindNote = note
		}
	}
}

// kindNote says what the kind bought and the other save on a group's usage.
func kindNote(bought pricing.CommitmentKind, saves decimal.Decimal, other pricing.CommitmentKind, otherSaves decimal.Decimal) string {
	what := "the " + bought.Label()
	if bought.PerHour() {
		what = "the savings plan"
	}
	return fmt.Sprintf("%s saves $%s a month on this usage, %s $%s: %s is bought", withArticle(bought.Label()), money.Group(saves, 2), withArticle(other.Label()), money.Group(otherSaves, 2), what)
}

func withArticle(s string) string {
	if s != "" && strings.ContainsRune("AEIOU", rune(s[0])) {
		return "an " + s
	}
	return "a " + s
}
