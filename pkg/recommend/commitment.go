package recommend

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/commitplan"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/money"
	"github.com/gpufinops/gpufinops/pricing"
)

// commitTerms are the terms the engine plans.
var commitTerms = []string{commitplan.Term1y, commitplan.Term3y}

// commitRate is one instance's commitment price for one term: the catalog's
// (or live) rate, or the policy's configured discount.
type commitRate struct {
	discount float64
	rate     *pricing.CommitmentRate
	// configured is true for a discount set in policy.commitment.discounts_*.
	configured bool
}

// commitRates finds the commitment rate of a type in a region for each term,
// in the policy's plan kind and payment option. A configured discount
// replaces the catalog's rate; otherwise a type and region without a rate
// has none (no assumed percentage).
func (e *engine) commitRates(p fleet.Provider, region, typ string, onDemand decimal.Decimal) map[string]commitRate {
	out, _ := e.commitRatesOf(p, region, typ, onDemand)
	return out
}

// commitRatesOf is commitRates, and whether the answer depends on onDemand
// (a rate that states no on-demand price of its own).
func (e *engine) commitRatesOf(p fleet.Provider, region, typ string, onDemand decimal.Decimal) (map[string]commitRate, bool) {
	return e.kindRates(e.planKind(p), p, region, typ, onDemand)
}

// kindRates is commitRatesOf for a kind of commitment. A kind other than
// the policy's is priced at catalog (or live) rates only: a configured
// discount is for the policy's kind, and no rate is assumed for another.
func (e *engine) kindRates(kind pricing.CommitmentKind, p fleet.Provider, region, typ string, onDemand decimal.Decimal) (map[string]commitRate, bool) {
	pol := e.policy.Commitment
	out := make(map[string]commitRate, len(commitTerms))
	byOD := false
	if kind == "" {
		return out, byOD
	}
	payment := pol.Payments[string(p)]
	if kind != e.planKind(p) {
		payment = ""
	}
	for _, term := range commitTerms {
		conf := pol.Discounts1y
		if term == commitplan.Term3y {
			conf = pol.Discounts3y
		}
		if d, ok := conf[string(p)]; ok {
			if kind == e.planKind(p) {
				out[term] = commitRate{discount: d, configured: true}
			}
			continue
		}
		r, ok := pricing.LookupCommitment(e.cat, pricing.CommitmentQuery{
			Provider: p, Region: region, InstanceType: typ, Kind: kind, Term: term, Payment: payment,
		})
		if !ok {
			continue
		}
		// The rate is the public price of the commitment; the discount is
		// against what the instance pays on demand (its own, negotiated,
		// price where the fleet states one), never the source's list
		// price: the purchase then costs the rate, and the saving is
		// measured on what is paid today.
		byOD = true
		if !onDemand.IsPositive() {
			continue
		}
		d := 1 - r.Hourly.Div(onDemand).InexactFloat64()
		if !(d > 0 && d < 1) {
			continue
		}
		out[term] = commitRate{discount: d, rate: &r}
	}
	return out, byOD
}

// regionType names an instance type in a provider's region.
type regionType struct {
	provider    fleet.Provider
	region, typ string
}

// pricedType is a type in a region at the on-demand price its instances pay.
type pricedType struct {
	regionType
	od string
}

// typeRates is what commitRatesOf answers for a type in a region at one
// on-demand price, with the discounts and public rates as an Item takes
// them; shared by the instances of that type paying that price.
type typeRates struct {
	rates     map[string]commitRate
	discounts commitplan.Terms
	hourly    map[string]decimal.Decimal
}

func newTypeRates(r map[string]commitRate) typeRates {
	t := typeRates{rates: r, discounts: make(commitplan.Terms, len(r))}
	for term, cr := range r {
		t.discounts[term] = cr.discount
		if cr.rate != nil {
			if t.hourly == nil {
				t.hourly = make(map[string]decimal.Decimal, len(r))
			}
			t.hourly[term] = cr.rate.Hourly
		}
	}
	return t
}

// onDemandOf is the catalog's on-demand price of a type in a region, looked
// up once per type and region.
type onDemandOf struct {
	hourly decimal.Decimal
	ok     bool
}

// planKind is the commitment kind the policy buys on a provider; empty when
// the policy names none (no commitment is then advised there).
func (e *engine) planKind(p fleet.Provider) pricing.CommitmentKind {
	return pricing.CommitmentKind(e.policy.Commitment.Plans[string(p)])
}

// commitmentRule plans commitments per provider, region and family from the
// hourly usage that the rules before it left (stopped, scheduled, resized and
// spot capacity is never committed), at each type's own commitment rate,
// choosing the level that minimises the month's cost, and gives each
// instance its share of the saving.
func commitmentRule(e *engine, active []*state) map[*state]*change {
	pol := e.policy.Commitment
	byID := make(map[string]*state, len(active))
	for _, s := range active {
		byID[s.inst.ID] = s
	}
	// One item per priced instance at most: sized to that once, instead of
	// grown a quarter at a time (114 MB copied for a 21 MB list at 100,000
	// instances).
	priced := 0
	for _, s := range e.all {
		if s.priced {
			priced++
		}
	}
	items := make([]commitplan.Item, 0, priced)
	rates := map[string]map[string]commitRate{}
	missing := map[string][]string{}   // group → types without a rate
	noKind := map[fleet.Provider]int{} // provider → eligible instances
	offers := map[regionType]onDemandOf{}
	shared := map[pricedType]typeRates{}
	altShared := map[altKey]typeRates{}
	alts := map[int]altItem{}                  // item index → the item under the other kind
	noAlt := map[pricing.CommitmentKind]bool{} // other kinds some eligible type has no rate of
	resourceOf := map[string]*resourceSplit{}
	var mixed map[regionType]bool
	var splits []*resourceSplit
	for _, s := range e.all {
		// A managed AI item is never sized into a VM commitment (its
		// service bills its own usage: fleet.HeldCovers).
		if !s.advisable() || s.inst.IsManaged() {
			continue
		}
		od := s.price.Hourly
		if s.inst.HourlyPrice == nil || s.lifecycle != fleet.OnDemand {
			k := regionType{s.inst.Provider, s.inst.Region, s.typ.Name}
			o, seen := offers[k]
			if !seen {
				if offer, ok := e.offer(k.provider, k.region, k.typ); ok && offer.OnDemand != nil {
					o = onDemandOf{offer.OnDemand.Hourly, true}
				}
				offers[k] = o
			}
			if !o.ok {
				continue
			}
			od = o.hourly
		}
		it := commitplan.ItemFrom(s.inst, commitplan.Final{
			InstanceType: s.typ.Name, Family: s.typ.Family, Lifecycle: s.lifecycle, Priced: true,
			OnDemandHourly: od, Hourly: s.price.Hourly, MonthlyHours: s.hours, Schedule: s.schedule,
			Stopped: s.stopped,
		})
		if b, ok := e.opts.Billed[it.ID]; ok && it.Eligible && b.CommittedShare >= CommittedEnough {
			it.Eligible, it.Reason = false, commitplan.ReasonCommitted
		}
		if it.Eligible && s.cov != nil {
			// Net of what is held: usage commitments cover is not bought again.
			if sh := s.cov.Share; sh >= CommittedEnough {
				it.Eligible, it.Reason = false, commitplan.ReasonCommitted+" ("+strings.Join(s.coveredBy(), ", ")+")"
			} else {
				it.OnDemandHourly = it.OnDemandHourly.Mul(decimal.NewFromFloat(1 - sh)).Round(6)
			}
		}
		if it.Eligible && !s.typ.MoveTarget() {
			it.Eligible, it.Reason = false, "a retired, retiring or promotional size: no commitment is bought for it"
		}
		if it.Eligible && e.planKind(it.Provider) == "" {
			noKind[it.Provider]++
			it.Eligible, it.Reason = false, "the policy names no commitment kind for its cloud"
		}
		if it.Eligible && e.planKind(it.Provider) == pricing.ResourceCUD {
			if mixed == nil {
				mixed = e.mixedSeries()
			}
			// With one machine type in the series, its machines' resources
			// are the same purchase, sized alike: only a mix is split.
			series, _ := pricing.CUDSeries(s.typ.Name)
			isMixed := mixed[regionType{it.Provider, it.Region, series}]
			sp := e.splitIfMixed(isMixed, it, s, od)
			if sp == nil && isMixed {
				// No unit rates (none derived for the region): each machine type is its own
				// group, bought in machines of that type at its own rate,
				// so no resource is bought beyond what its machines use.
				it.Family = it.InstanceType
			}
			if sp != nil {
				// Bought per resource: the instance's vCPUs, memory and
				// GPUs join their resources' groups instead of its own.
				for i := range sp.items {
					resourceOf[sp.items[i].ID] = sp
				}
				items = append(items, sp.items...)
				splits = append(splits, sp)
				continue
			}
		}
		if it.Eligible {
			k := pricedType{regionType{it.Provider, it.Region, it.InstanceType}, od.String()}
			t, ok := shared[k]
			if !ok {
				r, _ := e.commitRatesOf(it.Provider, it.Region, it.InstanceType, od)
				t = newTypeRates(r)
				shared[k] = t
			}
			r := t.rates
			rates[it.ID] = r
			it.Discounts, it.Rates = t.discounts, t.hourly
			it.PerInstance = !e.planKind(it.Provider).PerHour()
			if alt := altKinds[e.planKind(it.Provider)]; alt != "" {
				ak := altKey{alt, k}
				at, ok := altShared[ak]
				if !ok {
					ar, _ := e.kindRates(alt, it.Provider, it.Region, it.InstanceType, od)
					at = newTypeRates(ar)
					altShared[ak] = at
				}
				if _, ok := at.rates[pol.Term]; ok {
					a := it
					a.Discounts, a.Rates, a.PerInstance = at.discounts, at.hourly, !alt.PerHour()
					alts[len(items)] = altItem{kind: alt, item: a, rates: at.rates}
				} else if _, conf := pol.Discounts1y[string(it.Provider)]; len(at.rates) == 0 && !conf {
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
	plan, err := e.buildPlan(items, alts, rates, missing)
	if err != nil {
		e.warn("", "commitment-plan", "no commitment plan: %v", err)
		return nil
	}
	if len(alts) == 0 {
		for _, alt := range slices.Sorted(maps.Keys(noAlt)) {
			e.offlineNote(&plan, alt)
		}
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
			var ta *termAdvice
			for _, a := range tp.Allocations {
				if sp := resourceOf[a.ID]; sp != nil {
					sp.take(a, &g, tp)
					continue
				}
				s := byID[a.ID]
				if s == nil || !a.SavingsMonthly.IsPositive() {
					continue
				}
				if ta == nil {
					ta = e.termAdvice(s.inst.Provider, &g, tp)
					ta.unitRate = unitRate(&g, tp, byID, rates)
				}
				if c := e.commitmentChange(s, &g, tp, a, rates[a.ID][tp.Term], ta); c != nil {
					out[s] = c
				}
			}
		}
	}
	if len(splits) > 0 {
		purchases := resourcePurchases(plan)
		for _, sp := range splits {
			if byID[sp.s.inst.ID] == nil {
				continue
			}
			if c := e.resourceChange(sp, purchases); c != nil {
				out[sp.s] = c
			}
		}
	}
	return out
}

func absf(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}

func fmt3(v float64) string { return decimal.NewFromFloat(v).StringFixed(3) }

// Purchase is what a commitment recommendation buys, in the cloud's own unit.
type Purchase struct {
	// Kind is the commitment kind (pricing.CommitmentKind); Name its label.
	Kind string `json:"kind"`
	Name string `json:"name"`
	Term string `json:"term"`
	// Payment is the payment option the rate is for.
	Payment string `json:"payment,omitempty"`
	Region  string `json:"region"`
	// Scope is the family (AWS instance family, Azure VM series, GCP machine
	// family) the group's usage is in.
	Scope string `json:"scope"`
	// CommitmentHourly is what the commitment costs per hour, paid whether
	// used or not: for a Savings Plan, the hourly commitment as AWS defines
	// it (the discounted spend).
	CommitmentHourly decimal.Decimal `json:"commitmentHourly"`
	// CoversOnDemandHourly is the on-demand spend per hour it covers.
	CoversOnDemandHourly decimal.Decimal `json:"coversOnDemandHourly"`
	// DiscountPercent is the discount off on-demand the saving uses.
	DiscountPercent float64 `json:"discountPercent"`
	// BreakEvenUtilizationPercent: the commitment pays when it is used more
	// than this share of its hours (100 − discount).
	BreakEvenUtilizationPercent float64 `json:"breakEvenUtilizationPercent"`
	// Quantity and InstanceType are set for a commitment bought as whole
	// instances (a reservation, a CUD); VCPUs, MemoryGiB and GPUs are the
	// resources they add up to (a GCP resource-based CUD is bought in these).
	Quantity     int     `json:"quantity,omitempty"`
	InstanceType string  `json:"instanceType,omitempty"`
	VCPUs        float64 `json:"vcpus,omitempty"`
	MemoryGiB    float64 `json:"memoryGiB,omitempty"`
	GPUs         float64 `json:"gpus,omitempty"`
	GPUModel     string  `json:"gpuModel,omitempty"`
	// RateSource, RateOrigin and RateAsOf say where the rate comes from.
	RateSource string `json:"rateSource"`
	RateOrigin string `json:"rateOrigin,omitempty"`
	RateAsOf   string `json:"rateAsOf,omitempty"`
	// Live is true for a rate read from the cloud on this run.
	Live bool `json:"live,omitempty"`
	// Approximation says the rate stands in for the kind bought, when it does.
	Approximation string `json:"approximation,omitempty"`
}

// termAdvice is what the changes for one group's term share: the words and
// figures that do not depend on the instance.
type termAdvice struct {
	term, target, short, rationale, groupNote string
	kind                                      pricing.CommitmentKind
	dPct                                      float64
	// unit is the catalog's unit type of a term bought as whole instances.
	unit *pricing.InstanceType
	// unitRate is the public rate of the unit bought, where known: the
	// rate the purchase is priced at and cites.
	unitRate *pricing.CommitmentRate
	// buys holds the titled purchase sentence by payment option.
	buys map[string]string
	// sources holds committed.Source by catalog rate.
	sources map[*pricing.CommitmentRate]string
}

// unitRate is the public commitment rate of a term's unit type, read from
// an instance of that type in the group.
func unitRate(g *commitplan.GroupPlan, tp *commitplan.TermPlan, byID map[string]*state, rates map[string]map[string]commitRate) *pricing.CommitmentRate {
	if tp.Quantity <= 0 || !tp.UnitRate.IsPositive() {
		return nil
	}
	for _, id := range g.Items {
		if s := byID[id]; s != nil && s.typ.Name == tp.UnitType {
			if r := rates[id][tp.Term].rate; r != nil && r.Hourly.Equal(tp.UnitRate) {
				return r
			}
		}
	}
	return nil
}

func (e *engine) termAdvice(p fleet.Provider, g *commitplan.GroupPlan, tp *commitplan.TermPlan) *termAdvice {
	kind := e.planKind(p)
	if g.Kind != "" {
		kind = pricing.CommitmentKind(g.Kind)
	}
	ta := &termAdvice{term: termName(tp.Term), kind: kind, dPct: round2(tp.Discount * 100), buys: map[string]string{}, sources: map[*pricing.CommitmentRate]string{}}
	ta.target = ta.term + " " + ta.kind.Label()
	ta.short = tp.Term + " " + commitmentShort(ta.kind) + " " + hourlyShort(tp.PayHourly)
	if tp.Quantity > 0 {
		ta.short += fmt.Sprintf(", %d×%s", tp.Quantity, tp.UnitType)
		if t, ok := e.cat.InstanceType(p, tp.UnitType); ok {
			ta.unit = &t
		}
	}
	ta.rationale = fmt.Sprintf("The %s family in %s runs at least $%s/h of on-demand usage in %s %% of the hours; committing up to the level exceeded in 1 − d = %s %% of hours minimises the month's cost (docs/commit-plan.md).",
		g.Family, g.Region, tp.CommitHourly.StringFixed(3), pct(tp.ExceedShare*100), pct((1-tp.Discount)*100))
	ta.groupNote = fmt.Sprintf("the %s group saves $%s a month with this term; see 'gpufinops commit-plan' for both terms, the layers and the cost curve", g.Family, money.Group(tp.SavingsMonthly, 2))
	if g.KindNote != "" {
		ta.groupNote += "; " + g.KindNote
	}
	for _, o := range g.Terms {
		if o.Term != tp.Term && o.SavingsMonthly.GreaterThan(tp.SavingsMonthly) {
			ta.groupNote += fmt.Sprintf("; %s: $%s (policy.commitment.term is %s)", o.Term, money.Group(o.SavingsMonthly, 2), tp.Term)
		}
	}
	return ta
}

// termName is a term as the advice words it ("1-year").
func termName(t string) string {
	switch t {
	case commitplan.Term1y:
		return "1-year"
	case commitplan.Term3y:
		return "3-year"
	}
	return ""
}

// buy is the titled purchase sentence, once per payment option.
func (ta *termAdvice) buy(g *commitplan.GroupPlan, tp *commitplan.TermPlan, pu *Purchase) string {
	if b, ok := ta.buys[pu.Payment]; ok {
		return b
	}
	term, kind, dPct := ta.term, ta.kind, ta.dPct
	var buy string
	if tp.Quantity > 0 {
		buy = fmt.Sprintf("buy a %s %s for %d × %s in %s", term, kind.Label(), tp.Quantity, tp.UnitType, g.Region)
		if kind == pricing.ResourceCUD && pu.VCPUs > 0 {
			buy += fmt.Sprintf(" (%s vCPUs, %s GiB memory, %s × %s GPUs)", num(pu.VCPUs), num(pu.MemoryGiB), num(pu.GPUs), pu.GPUModel)
		}
		if tp.UnitRate.IsPositive() {
			buy += fmt.Sprintf(", $%s/h = %d × $%s/h (%s %% off on-demand $%s/h)",
				tp.PayHourly.StringFixed(3), tp.Quantity, tp.UnitRate.String(), pct(dPct), tp.CommitHourly.StringFixed(3))
		} else {
			buy += fmt.Sprintf(", $%s/h (%s %% off on-demand $%s/h)", tp.PayHourly.StringFixed(3), pct(dPct), tp.CommitHourly.StringFixed(3))
		}
	} else {
		pay := ""
		if pu.Payment != "" {
			pay = ", " + paymentLabel(pu.Payment)
		}
		buy = fmt.Sprintf("buy a %s %s%s with a commitment of $%s/h: it covers $%s/h of on-demand %s usage in %s at %s %% off",
			term, kind.Label(), pay, tp.PayHourly.StringFixed(3), tp.CommitHourly.StringFixed(3), g.Family, g.Region, pct(dPct))
	}
	b := titleCase(buy)
	ta.buys[pu.Payment] = b
	return b
}

func (e *engine) commitmentChange(s *state, g *commitplan.GroupPlan, tp *commitplan.TermPlan, a commitplan.Allocation, cr commitRate, ta *termAdvice) *change {
	term, kind, dPct := ta.term, ta.kind, ta.dPct
	projected := s.variable().Sub(a.SavingsMonthly)
	if projected.IsNegative() {
		// The plan caps every instance's usage at its billed hours, so this
		// cannot happen; never promise a negative cost if it does.
		return nil
	}
	committed := s.price
	committed.Option = pricing.Option(fleet.Committed)
	committed.Hourly = s.price.Hourly.Mul(decimal.NewFromFloat(1 - tp.Discount)).Round(6)
	pu := &Purchase{
		Kind: string(kind), Name: kind.Label(), Term: tp.Term, Payment: e.policy.Commitment.Payments[string(s.inst.Provider)],
		Region: g.Region, Scope: g.Family, CommitmentHourly: tp.PayHourly, CoversOnDemandHourly: tp.CommitHourly,
		DiscountPercent: dPct, BreakEvenUtilizationPercent: round2(tp.BreakEven * 100),
	}
	var notes []string
	switch {
	case cr.configured:
		pu.RateSource = fmt.Sprintf("policy.commitment.discounts_%s.%s (configured)", tp.Term, s.inst.Provider)
		committed.Source = fmt.Sprintf("%s, less the configured %s discount of %s %%", s.price.Source, term, pct(dPct))
	case cr.rate != nil:
		r := cr.rate
		if ta.unitRate != nil {
			r = ta.unitRate
		}
		pu.Payment, pu.RateSource, pu.RateOrigin, pu.RateAsOf, pu.Live, pu.Approximation = r.Payment, r.Source, r.Origin, r.AsOf, r.Live, r.Approximation
		src, ok := ta.sources[r]
		if !ok {
			src = fmt.Sprintf("%s %s %s rate $%s/h (%s, as of %s)", kind.Label(), tp.Term, r.Payment, r.Hourly.String(), r.Source, r.AsOf)
			ta.sources[r] = src
		}
		committed.Source = src
		committed.AsOf = r.AsOf
		if r.Live {
			notes = append(notes, "live "+kind.Label()+" rate read on this scan ("+r.Source+")")
		}
		if tp.UnitType != s.typ.Name && r != cr.rate {
			notes = append(notes, fmt.Sprintf("bought as %s, priced at its public rate $%s/h; this instance's own %s rate is $%s/h", tp.UnitType, r.Hourly.String(), s.typ.Name, cr.rate.Hourly.String()))
		}
		if r.Approximation != "" {
			notes = append(notes, r.Approximation)
		}
	}
	if d := tp.Discount; cr.discount > d+1e-9 {
		notes = append(notes, fmt.Sprintf("this type's own rate is %s %% off; the group commits at its lowest type's %s %% so no usage is promised more than its rate", pct(cr.discount*100), pct(d*100)))
	}
	if tp.Quantity > 0 {
		pu.Quantity, pu.InstanceType = tp.Quantity, tp.UnitType
		if t := ta.unit; t != nil {
			q := float64(tp.Quantity)
			pu.VCPUs, pu.MemoryGiB, pu.GPUs, pu.GPUModel = t.VCPUs*q, t.MemoryGiB*q, t.GPUCount*q, t.GPUModel
		}
	}
	metrics := make(map[string]float64, 10+len(g.Terms))
	metrics["groupCommitHourly"] = tp.CommitHourly.InexactFloat64()
	metrics["commitmentHourly"] = tp.PayHourly.InexactFloat64()
	metrics["discountPercent"] = dPct
	metrics["groupUtilizationPercent"] = round2(tp.Utilization * 100)
	metrics["groupRunningSharePercent"] = round2(g.Usage.RunningShare * 100)
	metrics["bandSharePercent"] = round2(a.BandShare * 100)
	metrics["breakEvenPercent"] = round2(tp.BreakEven * 100)
	metrics["breakEvenUtilizationPercent"] = round2(tp.BreakEven * 100)
	c := &change{
		kind:       KindCommitment,
		target:     ta.target,
		short:      ta.short,
		lifecycle:  fleet.Committed,
		price:      committed,
		hours:      s.hours,
		projected:  &projected,
		confidence: e.confidenceFor(s),
		risk:       Low,
		action:     ta.buy(g, tp, pu) + "; this instance takes " + pct(a.BandShare*100) + " % of it",
		rationale:  ta.rationale,
		evidence: Evidence{
			Metrics:    metrics,
			Thresholds: map[string]float64{"discount": tp.Discount},
			Prices:     priceList(s.price, committed),
			Formula:    "choose c minimising c·(1−d)·H + Σ max(u_h − c, 0) over the family's hourly on-demand usage, each instance's usage capped at its billed hours; this instance's saving is its share of the group's, at most d × its cost",
			Notes:      append(notes, ta.groupNote),
			Purchase:   pu,
		},
	}
	if tp.Quantity > 0 {
		c.evidence.Metrics["quantity"] = float64(tp.Quantity)
	}
	for _, other := range g.Terms {
		c.evidence.Metrics["groupSavings"+other.Term] = other.SavingsMonthly.InexactFloat64()
	}
	if tr := g.Trend; tr != nil {
		c.confidence = lower(c.confidence)
		c.evidence.Metrics["trendChangePercent"] = tr.ChangePercent
		c.riskNotes = append(c.riskNotes, fmt.Sprintf("usage %s %s %% in the last week against the weeks before: the commitment is sized on the last week; check the trend holds before buying", tr.Direction, pct(absf(tr.ChangePercent))))
	}
	if s.lifecycle == fleet.Spot {
		c.riskNotes = append(c.riskNotes, "it runs on spot today; at its hours a commitment costs less than spot")
	}
	if tp.Term == "3y" {
		c.risk = Medium
	}
	c.riskNotes = append(c.riskNotes, "a commitment is paid whether or not the capacity is used: commit only what you are sure to keep running")
	return c
}

// paymentLabel is a payment option as the consoles write it ("No Upfront").
func paymentLabel(p string) string {
	words := strings.Split(p, "-")
	for i, w := range words {
		words[i] = titleCase(w)
	}
	return strings.Join(words, " ")
}

// lower is one confidence level down.
func lower(l Level) Level {
	switch l {
	case High:
		return Medium
	default:
		return Low
	}
}

// committedPrice prices an instance already on a commitment whose rate the
// fleet does not state: at the catalog's rate for the commitment it names
// (or, naming none, the policy's plan and term), flagged "rate unknown";
// with no such rate, at on-demand, an upper bound, flagged too.
func (e *engine) committedPrice(in *fleet.Instance, offer pricing.Offer) (pricing.Price, bool) {
	if offer.OnDemand == nil {
		return pricing.Price{}, false
	}
	kind, term, payment := e.planKind(in.Provider), e.policy.Commitment.Term, e.policy.Commitment.Payments[string(in.Provider)]
	if cm := in.Commitment; cm != nil {
		if k := pricing.CommitmentKind(cm.Kind); k.Valid() {
			kind, payment = k, cm.Payment
		}
		if cm.Term != "" {
			term = cm.Term
		}
	}
	p := *offer.OnDemand
	p.Option = pricing.Option(fleet.Committed)
	if r, ok := pricing.LookupCommitment(e.cat, pricing.CommitmentQuery{Provider: in.Provider, Region: in.Region, InstanceType: in.InstanceType, Kind: kind, Term: term, Payment: payment}); ok {
		d := r.DiscountPercent / 100
		if !r.OnDemandHourly.IsPositive() {
			d = 1 - r.Hourly.Div(p.Hourly).InexactFloat64()
		}
		if d > 0 && d < 1 {
			p.Hourly = p.Hourly.Mul(decimal.NewFromFloat(1 - d)).Round(6)
			p.Source = fmt.Sprintf("rate unknown: %s, less the %s %s %s discount of %s %% (%s, as of %s)", offer.OnDemand.Source, term, kind.Label(), r.Payment, pct(d*100), r.Source, r.AsOf)
			p.AsOf = r.AsOf
			e.warn(in.ID, WarnCommitmentRateUnknown, "committed, but the fleet has no commitment.hourlyRate: priced at the catalog's %s %s rate (%s %% off on-demand); set commitment.hourlyRate to what it pays", term, kind.Label(), pct(d*100))
			return p, true
		}
	}
	p.Source = fmt.Sprintf("rate unknown: %s (on-demand, an upper bound)", offer.OnDemand.Source)
	e.warn(in.ID, WarnCommitmentRateUnknown, "committed, but neither the fleet (commitment.hourlyRate) nor the catalog has its rate: priced at on-demand, an upper bound; set commitment.hourlyRate to what it pays")
	return p, true
}

// fleetPriceDate dates the prices a fleet file states (an instance's
// hourlyPrice or commitment.hourlyRate): the day of the file's
// metadata.generatedAt, when the snapshot was taken; without it the date is
// unknown, and the price's source says so.
func fleetPriceDate(f *fleet.Fleet) (asOf, sourceNote string) {
	if t := f.Metadata.GeneratedAt; t != nil && !t.IsZero() {
		return t.UTC().Format(time.DateOnly), ""
	}
	return "", ", date unknown"
}

// resourceSplit is an instance whose commitment is bought per resource (a
// GCP resource-based CUD): one plan item per resource, each a share of what
// the instance pays on demand in proportion to the resource's public
// on-demand price, and what the plan gives those items.
type resourceSplit struct {
	s               *state
	series, cudType string
	gpuModel        string
	items           []commitplan.Item
	// onDemand and rates are the public unit prices of each resource
	// (pricing.ResourceVCPU, …), rates by term.
	onDemand map[string]pricing.Price
	rates    map[string]map[string]pricing.Price
	// savings and term are what the plan's recommended terms give it.
	savings decimal.Decimal
	term    string
}

// cudResources are the resources a resource-based CUD buys, in the order
// the advice names them.
var cudResources = []string{pricing.ResourceVCPU, pricing.ResourceMemory, pricing.ResourceGPU}

// splitResources splits an eligible instance into its vCPUs, memory and
// GPUs when the catalog has each one's public on-demand price and a
// commitment rate for at least one term (the Billing Catalog's unit SKUs,
// read live, else the embedded catalog's derived unit rates); nil
// otherwise, and the instance is planned as a whole.
func (e *engine) splitResources(it commitplan.Item, s *state, od decimal.Decimal) *resourceSplit {
	t := s.typ
	if t.VCPUs <= 0 || t.MemoryGiB <= 0 || t.GPUCount < 1 || t.GPUModel == "" || !od.IsPositive() {
		return nil
	}
	family, _, _ := strings.Cut(t.Name, "-")
	sp := &resourceSplit{s: s, gpuModel: t.GPUModel, onDemand: map[string]pricing.Price{}, rates: map[string]map[string]pricing.Price{}}
	sp.series, sp.cudType = pricing.CUDSeries(t.Name)
	units := map[string]float64{pricing.ResourceVCPU: t.VCPUs, pricing.ResourceMemory: t.MemoryGiB, pricing.ResourceGPU: t.GPUCount}
	names := map[string]string{pricing.ResourceVCPU: family, pricing.ResourceMemory: family, pricing.ResourceGPU: t.GPUModel}
	total := decimal.Zero
	for _, r := range cudResources {
		q := pricing.ResourceQuery{Provider: it.Provider, Region: it.Region, Resource: r, Name: names[r], Option: pricing.OnDemand}
		p, ok := pricing.LookupResource(e.cat, q)
		if !ok {
			return nil
		}
		sp.onDemand[r] = p
		total = total.Add(p.Hourly.Mul(decimal.NewFromFloat(units[r])))
		sp.rates[r] = map[string]pricing.Price{}
		for _, term := range commitTerms {
			q.Option = pricing.SavingsPlan1y
			if term == commitplan.Term3y {
				q.Option = pricing.SavingsPlan3y
			}
			if c, ok := pricing.LookupResource(e.cat, q); ok && c.Commitment == pricing.ResourceCUD {
				sp.rates[r][term] = c
			}
		}
	}
	if !total.IsPositive() {
		return nil
	}
	left := od
	for i, r := range cudResources {
		ri := it
		n := decimal.NewFromFloat(units[r])
		share := left
		if i < len(cudResources)-1 {
			share = od.Mul(sp.onDemand[r].Hourly).Mul(n).DivRound(total, 6)
			left = left.Sub(share)
		}
		ri.ID, ri.Family, ri.InstanceType, ri.Units, ri.PerInstance = it.ID+"#"+r, resourceGroup(sp, r), resourceUnit(sp, r), units[r], true
		ri.OnDemandHourly = share
		ri.Discounts, ri.Rates = commitplan.Terms{}, map[string]decimal.Decimal{}
		for term, c := range sp.rates[r] {
			rate := c.Hourly.Mul(n)
			if d := 1 - rate.Div(share).InexactFloat64(); share.IsPositive() && d > 0 && d < 1 {
				ri.Discounts[term], ri.Rates[term] = d, rate
			}
		}
		sp.items = append(sp.items, ri)
	}
	return sp
}

// mixedSeries are the provider, region and CUD series (regionType.typ)
// where the advisable instances run more than one machine type: there a
// purchase counted in machines of one type buys the wrong amount of some
// resource, and each resource is sized apart.
func (e *engine) mixedSeries() map[regionType]bool {
	first := map[regionType]string{}
	out := map[regionType]bool{}
	for _, s := range e.all {
		if !s.advisable() || s.inst.IsManaged() || s.stopped || s.inst.State == fleet.Stopped || s.lifecycle != fleet.OnDemand || e.planKind(s.inst.Provider) != pricing.ResourceCUD {
			continue
		}
		series, _ := pricing.CUDSeries(s.typ.Name)
		k := regionType{s.inst.Provider, s.inst.Region, series}
		if t, ok := first[k]; !ok {
			first[k] = s.typ.Name
		} else if t != s.typ.Name {
			out[k] = true
		}
	}
	return out
}

// splitIfMixed is splitResources for an instance of a mixed series, else nil.
func (e *engine) splitIfMixed(mixed bool, it commitplan.Item, s *state, od decimal.Decimal) *resourceSplit {
	if !mixed {
		return nil
	}
	return e.splitResources(it, s, od)
}

// resourceGroup is the plan group of a resource: a series' vCPUs or memory,
// or a GPU model, in the instance's region.
func resourceGroup(sp *resourceSplit, r string) string {
	switch r {
	case pricing.ResourceVCPU:
		return sp.series + " vCPU"
	case pricing.ResourceMemory:
		return sp.series + " memory"
	}
	return sp.gpuModel + " GPU"
}

// resourceUnit names one unit of a resource.
func resourceUnit(sp *resourceSplit, r string) string {
	switch r {
	case pricing.ResourceVCPU:
		return "vCPU"
	case pricing.ResourceMemory:
		return "GiB"
	}
	return sp.gpuModel
}

// take adds one of the split's allocations.
func (sp *resourceSplit) take(a commitplan.Allocation, _ *commitplan.GroupPlan, tp *commitplan.TermPlan) {
	sp.savings = sp.savings.Add(a.SavingsMonthly)
	sp.term = tp.Term
}

// resourcePurchase is the recommended term of one resource group.
type resourceKey struct {
	provider       fleet.Provider
	region, family string
}

// resourcePurchases are the recommended term plans of a plan's groups.
func resourcePurchases(p commitplan.Plan) map[resourceKey]*commitplan.TermPlan {
	out := map[resourceKey]*commitplan.TermPlan{}
	for gi := range p.Groups {
		g := &p.Groups[gi]
		for ti := range g.Terms {
			if tp := &g.Terms[ti]; tp.Term == g.Recommended && tp.Quantity > 0 {
				out[resourceKey{g.Provider, g.Region, g.Family}] = tp
			}
		}
	}
	return out
}

// resourceChange is the advice for an instance bought per resource: the
// region's purchase for its series and GPU model (each resource sized on
// its own usage and priced at its own public rate), and its share of the
// saving.
func (e *engine) resourceChange(sp *resourceSplit, purchases map[resourceKey]*commitplan.TermPlan) *change {
	s := sp.s
	if !sp.savings.IsPositive() {
		return nil
	}
	cost := s.cost()
	projected := cost.Sub(sp.savings)
	if projected.IsNegative() || !cost.IsPositive() {
		return nil
	}
	kind := pricing.ResourceCUD
	pu := &Purchase{Kind: string(kind), Name: kind.Label(), Term: sp.term, Payment: pricing.PayMonthly, Region: s.inst.Region, Scope: sp.series,
		CommitmentHourly: decimal.Zero, CoversOnDemandHourly: decimal.Zero, GPUModel: sp.gpuModel, Live: true}
	var parts, flags, prices, accel []string
	asOf := ""
	for _, r := range cudResources {
		tp := purchases[resourceKey{s.inst.Provider, s.inst.Region, resourceGroup(sp, r)}]
		if tp == nil || tp.Term != sp.term {
			continue
		}
		rate := sp.rates[r][tp.Term]
		pu.CommitmentHourly = pu.CommitmentHourly.Add(tp.PayHourly)
		pu.CoversOnDemandHourly = pu.CoversOnDemandHourly.Add(tp.CommitHourly)
		prices = append(prices, fmt.Sprintf("%d × $%s", tp.Quantity, tp.UnitRate.String()))
		if rate.AsOf > asOf {
			asOf = rate.AsOf
		}
		pu.RateSource = rate.Source
		// Derived offline from machine prices, not read from the cloud.
		pu.Live = pu.Live && !strings.HasPrefix(rate.Source, pricing.DerivedSource)
		switch r {
		case pricing.ResourceVCPU:
			pu.VCPUs = float64(tp.Quantity)
			parts = append(parts, fmt.Sprintf("%d vCPUs", tp.Quantity))
			flags = append(flags, fmt.Sprintf("vcpu=%d", tp.Quantity))
		case pricing.ResourceMemory:
			pu.MemoryGiB = float64(tp.Quantity)
			parts = append(parts, fmt.Sprintf("%d GiB memory", tp.Quantity))
			flags = append(flags, fmt.Sprintf("memory=%dGB", tp.Quantity))
		case pricing.ResourceGPU:
			pu.GPUs = float64(tp.Quantity)
			parts = append(parts, fmt.Sprintf("%d × %s GPUs", tp.Quantity, sp.gpuModel))
			accel = append(accel, fmt.Sprintf(" --resources-accelerator=type=%s,count=%d", pricing.CUDAccelerator(sp.gpuModel), tp.Quantity))
		}
	}
	if len(parts) == 0 || !pu.CoversOnDemandHourly.IsPositive() {
		return nil
	}
	pu.RateAsOf = asOf
	d := 1 - pu.CommitmentHourly.Div(pu.CoversOnDemandHourly).InexactFloat64()
	pu.DiscountPercent, pu.BreakEvenUtilizationPercent = round2(d*100), round2((1-d)*100)
	term := termName(sp.term)
	plan := map[string]string{commitplan.Term1y: "12-month", commitplan.Term3y: "36-month"}[sp.term]
	cmd := fmt.Sprintf("gcloud compute commitments create gpufinops-%s-%s --region=%s --plan=%s", sp.series, s.inst.Region, s.inst.Region, plan)
	if sp.cudType != "" {
		cmd += " --type=" + sp.cudType
	}
	if len(flags) > 0 {
		cmd += " --resources=" + strings.Join(flags, ",")
	}
	cmd += strings.Join(accel, "")
	committed := s.price
	committed.Option = pricing.Option(fleet.Committed)
	committed.Hourly = s.price.Hourly.Mul(projected).DivRound(cost, 6)
	committed.Source = fmt.Sprintf("%s %s at the public per-resource rates (%s, as of %s)", term, kind.Label(), pu.RateSource, asOf)
	committed.AsOf = asOf
	var notes []string
	for _, r := range cudResources {
		if c, ok := sp.rates[r][sp.term]; ok {
			notes = append(notes, fmt.Sprintf("%s %s: $%s/h committed, $%s/h on demand (%s)", resourceGroup(sp, r), resourceUnit(sp, r), c.Hourly, sp.onDemand[r].Hourly, c.Source))
		}
	}
	c := &change{
		kind:       KindCommitment,
		target:     term + " " + kind.Label(),
		short:      sp.term + " CUD " + hourlyShort(pu.CommitmentHourly) + ", " + strings.Join(parts, ", "),
		lifecycle:  fleet.Committed,
		price:      committed,
		hours:      s.hours,
		projected:  &projected,
		confidence: e.confidenceFor(s),
		risk:       Low,
		action: titleCase(fmt.Sprintf("buy a %s %s in %s for %s: %s; $%s/h at the public rates (%s), covering $%s/h of on-demand usage (%s %% off); this instance's share saves $%s a month",
			term, kind.Label(), s.inst.Region, strings.Join(parts, ", "), cmd, pu.CommitmentHourly.StringFixed(3), strings.Join(prices, " + "),
			pu.CoversOnDemandHourly.StringFixed(3), pct(pu.DiscountPercent), money.Group(sp.savings, 2))),
		rationale: fmt.Sprintf("A resource-based CUD buys vCPUs and memory of the %s series and GPUs of a model in a region, whatever machine types use them: each resource is sized on its own hourly usage, at its own rate, so mixing machine types buys no more of a resource than is used (docs/commitments.md).", sp.series),
		evidence: Evidence{
			Metrics: map[string]float64{
				"commitmentHourly": pu.CommitmentHourly.InexactFloat64(), "groupCommitHourly": pu.CoversOnDemandHourly.InexactFloat64(),
				"discountPercent": pu.DiscountPercent, "vcpus": pu.VCPUs, "memoryGiB": pu.MemoryGiB, "gpus": pu.GPUs,
			},
			Thresholds: map[string]float64{"discount": d},
			Prices:     priceList(s.price, committed),
			Formula:    "per resource r (vCPUs, GiB, GPUs): choose k_r units minimising k_r·rate_r·H + Σ max(u_r,h − k_r, 0)·price_r over the region's hourly usage in units; each instance's usage of r is valued at its share of what it pays; its saving is the sum of its resources' shares",
			Notes:      notes,
			Purchase:   pu,
		},
	}
	if sp.term == commitplan.Term3y {
		c.risk = Medium
	}
	if pu.GPUs > 0 {
		c.riskNotes = append(c.riskNotes, "a GPU commitment needs a reservation of those GPUs attached to it (Compute Engine: purchase commitments with attached reservations)")
	}
	c.riskNotes = append(c.riskNotes, "a commitment is paid whether or not the capacity is used: commit only what you are sure to keep running")
	return c
}
