package recommend

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/commitplan"
	"github.com/gpufinops/gpufinops/pkg/coverage"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/money"
	"github.com/gpufinops/gpufinops/pkg/protect"
	"github.com/gpufinops/gpufinops/pkg/sharing"
	"github.com/gpufinops/gpufinops/pricing"
)

var hoursPerMonth = decimal.NewFromFloat(fleet.HoursPerMonth)

// state is an instance as the planner has changed it so far.
type state struct {
	inst *fleet.Instance
	// typ is shared with every state of the same type; read, never written.
	typ       *pricing.InstanceType
	typeKnown bool
	// typ0 is the name of the type the fleet has it on.
	typ0      string
	price     pricing.Price
	hours     float64
	lifecycle fleet.Lifecycle
	summary   *fleet.Summary
	// schedule is the weekly schedule it runs on (the fleet's or one derived), in UTC.
	schedule *fleet.Schedule
	// last is the ID of the last recommendation applied, for After.
	last    string
	stopped bool
	// priced is false when no price was found; unpriced instances get no advice.
	priced bool
	// noGPU is true when neither the fleet nor the catalog gives the
	// instance's GPU model and count (an unknown type): no savings advice.
	noGPU bool
	// override is the monthly cost set by a group's commitment share.
	override *decimal.Decimal
	// hours0, monthly0 and hourly0 are the billed hours, monthly cost and
	// price as the fleet has the instance (see initialCost).
	hours0   float64
	monthly0 decimal.Decimal
	hourly0  *pricing.Price
	// basis is the InstanceCost.PriceBasis: "" without a bill.
	basis string
	// fixed is what commitments charge the instance a month whatever is
	// done with it (see held.go); coveredHours are the hours of its type
	// they cover, billed in fixed rather than at price; cov is its part of
	// the fleet's commitments, nil for an implicit one.
	fixed        decimal.Decimal
	coveredHours float64
	coveredType  string
	cov          *coverage.Covered
}

// initialCost is what the instance costs as the fleet has it, before any
// change: rebuilt from the instance rather than held beside it.
func (s *state) initialCost() InstanceCost {
	in := s.inst
	ic := InstanceCost{
		ResourceID:   in.ID,
		Provider:     in.Provider,
		Account:      in.Account,
		Region:       in.Region,
		InstanceType: in.InstanceType,
		GPUModel:     in.GPU.Model,
		GPUCount:     in.GPU.Count,
		Lifecycle:    in.Lifecycle,
		State:        in.State,
		MonthlyHours: s.hours0,
		Priced:       s.priced,
		PriceBasis:   s.basis,
	}
	if u := in.Utilization; u != nil {
		ic.UtilizationSource, ic.UtilizationCoverage = u.Source, u.Coverage
	}
	if s.summary != nil && s.summary.GPU != nil {
		p95 := s.summary.GPU.P95
		ic.GPUUtilP95 = &p95
	}
	if s.priced {
		ic.Hourly, ic.MonthlyCost, ic.OptimizedCost = s.hourly0, s.monthly0, s.monthly0
	}
	return ic
}

func (s *state) cost() decimal.Decimal {
	if s.override != nil {
		return s.fixed.Add(*s.override)
	}
	if s.fixed.IsZero() && s.coveredHours == 0 {
		return monthly(s.price.Hourly, s.hours)
	}
	return s.fixed.Add(monthly(s.price.Hourly, s.billedHours()))
}

// variable is the part of the cost a change can save: all of it but what
// commitments charge.
func (s *state) variable() decimal.Decimal { return s.cost().Sub(s.fixed) }

// billedHours are the monthly hours billed at the state's price: those no
// commitment covers. A commitment covers its instance's type on demand; on
// spot, or on another type, every hour is billed, but for the hours a
// size-flexible commitment still covers of another size of its family.
func (s *state) billedHours() float64 { return s.billedAs(s.typ.Name) }

// billedAs are the monthly hours billed were the instance of type typ.
func (s *state) billedAs(typ string) float64 {
	if s.coveredHours == 0 || s.stopped || s.lifecycle == fleet.Spot {
		return s.hours
	}
	if typ == s.coveredType {
		return max(0, s.hours-s.coveredHours)
	}
	if s.cov == nil {
		return s.hours
	}
	covered := 0.0
	for _, p := range s.cov.Parts {
		if r, ok := p.Resized(s.coveredType, typ); ok {
			covered += s.hours0 * p.Share * r
		}
	}
	return max(0, s.hours-covered)
}

// monthly is hourly × hours, rounded to cents.
func monthly(hourly decimal.Decimal, hours float64) decimal.Decimal {
	if c, ok := monthlyCents(hourly, hours); ok {
		return decimal.New(c, -2)
	}
	return hourly.Mul(hoursDecimal(hours)).Round(2)
}

// monthlyCents is monthly's amount in cents, when it fits an int64 (ok).
func monthlyCents(hourly decimal.Decimal, hours float64) (int64, bool) {
	return money.MulRoundCoefficient(hourly, hoursDecimal(hours), 2)
}

// hoursDecimals caches decimal.NewFromFloat of the monthly hours seen: a
// fleet's instances bill a few distinct hours (730, a schedule's), and the
// conversion is most of monthly's work. A decimal is immutable, so one copy
// serves every caller.
var (
	hoursDecimals    sync.Map // float64 → decimal.Decimal
	hoursDecimalsLen atomic.Int32
)

// maxHoursDecimals bounds the cache; hours past it are converted each time.
const maxHoursDecimals = 4096

func hoursDecimal(h float64) decimal.Decimal {
	if d, ok := hoursDecimals.Load(h); ok {
		return d.(decimal.Decimal)
	}
	d := decimal.NewFromFloat(h)
	if h == h && hoursDecimalsLen.Load() < maxHoursDecimals { // NaN is never found again
		if _, loaded := hoursDecimals.LoadOrStore(h, d); !loaded {
			hoursDecimalsLen.Add(1)
		}
	}
	return d
}

// rule proposes at most one change to one instance; nil when it has nothing
// to say. It may add warnings.
type rule func(e *engine, s *state) *change

// groupRule looks at every active instance at once (replicas of one model,
// notebooks that can share a GPU, a family's steady usage) and proposes at
// most one change per instance.
type groupRule func(e *engine, active []*state) map[*state]*change

// phase is one step of the planner: a rule for each instance, or for all.
type phase struct {
	each  rule
	group groupRule
}

// change is a proposed new state with its explanation.
type change struct {
	kind      Kind
	action    string
	short     string
	target    string
	typ       *pricing.InstanceType
	price     pricing.Price
	hours     float64
	lifecycle fleet.Lifecycle
	schedule  *fleet.Schedule
	stop      bool
	// keep records a recommendation without changing the instance (tagging).
	keep bool
	// projected, when set, is the monthly cost after the change (a share of
	// a group's commitment saving) instead of price × hours.
	projected  *decimal.Decimal
	confidence Level
	risk       Level
	riskNotes  []string
	rationale  string
	evidence   Evidence
	// protected says a protection holds the change back (see guard).
	protected *Protected
	// managed is the change to a managed AI item (managed.go).
	managed *fleet.ManagedChange
}

type engine struct {
	cat      pricing.Catalog
	policy   Policy
	opts     Options
	warnings []Warning
	sharing  sharing.Plan
	commits  commitplan.Plan
	// all is every instance's state, for group rules that report on the
	// instances they leave out too.
	all []*state
	// prices holds one copy of each price instances are costed at (see shared).
	prices map[pricing.Price]*pricing.Price
	// amounts holds one copy of each monthly amount the plan keeps (see
	// amount); priceLists one evidence list per single price (see
	// priceListOf).
	amounts    map[amountKey]decimal.Decimal
	priceLists map[pricing.Price][]pricing.Price
	// types holds one copy of each catalog instance type (see instanceType).
	types memo[typeKey, *pricing.InstanceType]
	// recs are the recommendations in the order they are made.
	recs []Recommendation
	// offers holds the catalog's offers of each provider and region (see
	// offersIn); offer one offer of each type looked up (see offer).
	offers map[regionKey][]pricing.Offer
	// live memoizes livePrice's base lookups per offer and option.
	live    map[liveKey]liveEntry
	offerOf memo[offerKey, pricing.Offer]
	// spotQuotes holds the spot quote of each type and region (see
	// spotQuote).
	spotQuotes memo[offerKey, spotQuote]
	// held is the allocation of the fleet's commitments (held.go);
	// unattributed the unused commitment no instance carries.
	held         coverage.Result
	heldWarnings []Warning
	uncovered    map[familyKey]*idList
	heldByID     map[string]*coverage.Usage
	unattributed decimal.Decimal
	// heldNow is the clock commitments were allocated at; reallocations
	// what the plan frees of them would cover of other instances.
	heldNow       time.Time
	reallocations []Reallocation
	// unsaved are the changes held back as covered-no-saving.
	unsaved []pendingChange
	fleet   *fleet.Fleet
	// fleetAsOf dates the prices the fleet file states (fleetPriceDate).
	fleetAsOf, fleetSource string
	// guards is the protection decision's state (see guard).
	guards *guards
}

type offerKey struct {
	provider     fleet.Provider
	region, name string
}

// offer is the catalog's offer of a type in a region, looked up once: the
// catalog copies an offer's prices on every lookup, and the engine only
// reads them.
func (e *engine) offer(p fleet.Provider, region, name string) (pricing.Offer, bool) {
	return e.offerOf.get(offerKey{p, region, name}, func() (pricing.Offer, bool) { return e.cat.Offer(p, region, name) })
}

// memo holds what a lookup found (or that it found nothing) for up to
// maxSharedPrices keys; past that it looks up again each time.
type memo[K comparable, V any] struct {
	m map[K]memoEntry[V]
}

type memoEntry[V any] struct {
	v  V
	ok bool
}

func (c *memo[K, V]) get(k K, lookup func() (V, bool)) (V, bool) {
	if e, ok := c.m[k]; ok {
		return e.v, e.ok
	}
	v, ok := lookup()
	if c.m == nil {
		c.m = map[K]memoEntry[V]{}
	}
	if len(c.m) < maxSharedPrices {
		c.m[k] = memoEntry[V]{v, ok}
	}
	return v, ok
}

type regionKey struct {
	provider fleet.Provider
	region   string
}

// offersIn is the catalog's offers in a provider's region, read once per run
// (the rightsizing and quantization rules look for a fit for every
// instance); callers must not change them.
func (e *engine) offersIn(p fleet.Provider, region string) []pricing.Offer {
	k := regionKey{p, region}
	if o, ok := e.offers[k]; ok {
		return o
	}
	if e.offers == nil {
		e.offers = map[regionKey][]pricing.Offer{}
	}
	o := e.cat.Offers(pricing.Query{Provider: p, Region: region})
	e.offers[k] = o
	return o
}

type typeKey struct {
	provider fleet.Provider
	name     string
}

// instanceType is the catalog's type, one copy shared by every instance of
// it; known is false when the catalog lacks it.
func (e *engine) instanceType(p fleet.Provider, name string) (t *pricing.InstanceType, known bool) {
	return e.types.get(typeKey{p, name}, func() (*pricing.InstanceType, bool) {
		v, known := e.cat.InstanceType(p, name)
		return &v, known
	})
}

// amountKey is an amount that fits in 64 bits: its coefficient and exponent.
type amountKey struct {
	coef int64
	exp  int32
}

// maxSharedAmounts bounds the amounts shared: most of a fleet's instances
// cost what others of their type, region and hours cost.
const maxSharedAmounts = 1 << 16

// amount is d, sharing its digits with every equal amount (same coefficient
// and exponent) the plan already holds: a decimal is immutable, and each of
// the plan's own would otherwise cost two allocations.
func (e *engine) amount(d decimal.Decimal) decimal.Decimal {
	if d.NumDigits() > 18 {
		return d
	}
	k := amountKey{d.CoefficientInt64(), d.Exponent()}
	if v, ok := e.amounts[k]; ok {
		return v
	}
	e.share(k, d)
	return d
}

// amountOf is coef×10^exp, shared as amount shares it, made only when the
// plan holds no equal amount yet.
func (e *engine) amountOf(coef int64, exp int32) decimal.Decimal {
	k := amountKey{coef, exp}
	if v, ok := e.amounts[k]; ok {
		return v
	}
	d := decimal.New(coef, exp)
	e.share(k, d)
	return d
}

func (e *engine) share(k amountKey, d decimal.Decimal) {
	if e.amounts == nil {
		e.amounts = map[amountKey]decimal.Decimal{}
	}
	if len(e.amounts) < maxSharedAmounts {
		e.amounts[k] = d
	}
}

// difference is e.amount(a.Sub(b)), made only when new.
func (e *engine) difference(a, b decimal.Decimal) decimal.Decimal {
	if c, exp, ok := money.SubParts(a, b); ok {
		return e.amountOf(c, exp)
	}
	return e.amount(a.Sub(b))
}

// costOf is e.amount(s.cost()), without making the decimal when the plan
// holds the amount already.
func (e *engine) costOf(s *state) decimal.Decimal {
	if s.override == nil && s.fixed.IsZero() && s.coveredHours == 0 {
		if c, ok := monthlyCents(s.price.Hourly, s.hours); ok {
			return e.amountOf(c, -2)
		}
	}
	return e.amount(s.cost())
}

// priceListOf is the evidence list of the single price p, the same slice for
// every recommendation priced at p alone. Evidence lists are read, never
// written.
func (e *engine) priceListOf(p pricing.Price) []pricing.Price {
	if l, ok := e.priceLists[p]; ok {
		return l
	}
	l := priceList(p)
	if e.priceLists == nil {
		e.priceLists = map[pricing.Price][]pricing.Price{}
	}
	if len(e.priceLists) < maxSharedPrices {
		e.priceLists[p] = l
	}
	return l
}

// maxSharedPrices bounds the prices shared: a fleet's catalog prices are a
// few hundred; prices of its own (hourlyPrice) may be one per instance.
const maxSharedPrices = 4096

// shared is a pointer to a copy of p, the same one for every instance costed
// at p (the same catalog price), so that a large fleet's instances do not
// each hold one. InstanceCost.Hourly is read, never written.
func (e *engine) shared(p pricing.Price) *pricing.Price {
	if sp, ok := e.prices[p]; ok {
		return sp
	}
	sp := &p
	if e.prices == nil {
		e.prices = map[pricing.Price]*pricing.Price{}
	}
	if len(e.prices) < maxSharedPrices {
		e.prices[p] = sp
	}
	return sp
}

func (e *engine) warn(id, code, format string, args ...any) {
	e.warnings = append(e.warnings, Warning{ResourceID: id, Code: code, Message: fmt.Sprintf(format, args...)})
}

// phases run in this order over the whole fleet; each sees what the ones
// before it left, so savings never double count: stop or schedule, then
// resize, then purchase option.
var phases = []phase{
	{each: idleRule},
	{each: rightsizeRule},
	{group: quantizeRule},
	{group: shareRule},
	{each: spotRule},
	{group: commitmentRule},
}

// Run plans the whole fleet. It is pure: the same fleet, catalog and policy
// give the same plan. The fleet must have been completed from the catalog
// (pricing.Complete) so that every instance has its GPU facts.
func Run(f *fleet.Fleet, cat pricing.Catalog, p Policy) Plan {
	return RunWith(f, cat, p, Options{})
}

// Options say how much of its working the plan keeps (AuditSummary never
// changes a decision, a figure or a recommendation) and what a bill says
// instances pay (Billed).
type Options struct {
	// AuditSummary keeps of each instance's tag audit only what a report
	// prints (the tags missing, invalid or spelt differently, and the cost),
	// not each violation's detail. The tagging recommendations carry that
	// detail already; for a large fleet a second copy is a large part of the
	// plan.
	AuditSummary bool
	// Now is the report's clock, against which commitments' start and end
	// are read; zero takes the fleet's generatedAt.
	Now time.Time
	// Billed are the rates a billing export says instances pay, by instance
	// id: such an instance is priced at its rate, the others at their list
	// price, and each says which (InstanceCost.PriceBasis). Nil prices every
	// instance as before.
	Billed map[string]BilledRate
	// Protection is the protection decision idle-stop applies (pkg/protect,
	// configured by idle_stop.*); every stop, schedule and deallocate advice
	// consults it. Nil is protect.DefaultPolicy().
	Protection *protect.Policy
	// IncludeProtected counts a protected machine's stop, schedule or
	// deallocate saving in the plan (analyze --include-protected); without
	// it the advice says what releasing it would save and saves nothing.
	IncludeProtected bool
	// ISF is Microsoft's instance size flexibility table for the fleet's
	// size-flexible Azure reservations; nil derives GPU sizes' groups.
	ISF *coverage.ISF
	// ManagedCommand spells a change to a managed AI item as the cloud's
	// command (providers.ManagedCommand); nil or "" leaves the change in
	// words only.
	ManagedCommand func(*fleet.Instance, fleet.ManagedChange) string
}

// BilledRate is what a bill says one instance pays per hour.
type BilledRate struct {
	// Price is the effective hourly rate (EffectiveCost ÷ hours consumed),
	// with the bill as its source.
	Price pricing.Price
	// CommittedShare is the share (0–1) of its hours that commitments
	// already bought covered.
	CommittedShare float64
}

// The price bases of InstanceCost.PriceBasis.
const (
	BasisBill = "bill"
	BasisList = "list"
)

// CommittedEnough is the share of an instance's billed hours that existing
// commitments must cover for no new commitment to be advised for it.
const CommittedEnough = 0.5

// pendingChange is a change a phase has found and not yet recorded.
type pendingChange struct {
	s *state
	c *change
}

// RunWith is Run with options.
func RunWith(f *fleet.Fleet, cat pricing.Catalog, p Policy, o Options) Plan {
	e := &engine{cat: cat, policy: p, opts: o}
	e.fleetAsOf, e.fleetSource = fleetPriceDate(f)
	plan := Plan{Policy: p, Recommendations: []Recommendation{}, Instances: []InstanceCost{}}
	states := make([]*state, len(f.Instances))
	for i := range f.Instances {
		states[i] = e.newState(&f.Instances[i])
	}
	e.all = states
	e.applyHeld(f, states)
	e.fleet = f
	e.managedPhase(states)
	for _, ph := range phases {
		active := make([]*state, 0, len(states))
		for _, s := range states {
			if s.advisable() && !s.stopped && s.inst.State != fleet.Stopped && !s.inst.IsManaged() {
				active = append(active, s)
			}
		}
		// A phase's changes are all known before any is recorded (a rule
		// reads only its own instance's state), so the list grows once per
		// phase, to its size, instead of by a quarter at a time: at 100,000
		// instances that copied 100 MB of recommendations.
		var pending []pendingChange
		if ph.each != nil {
			for _, s := range active {
				if c := ph.each(e, s); c != nil {
					pending = append(pending, pendingChange{s, c})
				}
			}
		} else {
			changes := ph.group(e, active)
			for _, s := range active {
				if c, ok := changes[s]; ok && c != nil {
					pending = append(pending, pendingChange{s, c})
				}
			}
		}
		e.recs = slices.Grow(e.recs, len(pending))
		for _, p := range pending {
			e.record(p.s, p.c)
		}
	}
	e.reallocate()
	// The tagging recommendations come last, at most one per instance that
	// runs priced: room for them all now, so that the list is not copied
	// while the plan is largest.
	taggable := 0
	for _, s := range states {
		if s.priced && !s.stopped && s.inst.State == fleet.Running {
			taggable++
		}
	}
	e.recs = slices.Grow(e.recs, taggable)
	gov := e.governanceReport(states)
	plan.Instances = make([]InstanceCost, 0, len(states))
	for i, s := range states {
		ic := s.initialCost()
		if ic.Priced {
			s.describeCoverage(&ic)
			ic.OptimizedCost = e.costOf(s)
			ic.MonthlySavings = e.difference(ic.MonthlyCost, ic.OptimizedCost)
			ic.Final = s.final()
		}
		ic.Managed = managedRef(s.inst)
		plan.Instances = append(plan.Instances, ic)
		// Merged: the state may go (e.all is the same slice).
		states[i] = nil
	}
	e.all = nil
	// The recommendations are in the order they were made, phase by phase
	// and within a kind in fleet order; the sort (by kind first, stable)
	// puts them as if merged instance by instance.
	plan.Recommendations, e.recs = e.recs, nil
	if plan.Recommendations == nil {
		plan.Recommendations = []Recommendation{}
	}
	sortRecommendations(plan.Recommendations)
	plan.Warnings = append(e.warnings, e.heldWarnings...)
	if plan.Warnings == nil {
		plan.Warnings = []Warning{}
	}
	plan.Summary = summarize(plan.Instances, plan.Recommendations)
	if e.unattributed.IsPositive() {
		plan.Summary.UnusedCommitmentMonthly = e.unattributed
		plan.Summary.CurrentMonthly = plan.Summary.CurrentMonthly.Add(e.unattributed)
		plan.Summary.OptimizedMonthly = plan.Summary.OptimizedMonthly.Add(e.unattributed)
		if plan.Summary.CurrentMonthly.IsPositive() {
			plan.Summary.SavingsPercent = plan.Summary.MonthlySavings.Mul(decimal.NewFromInt(100)).Div(plan.Summary.CurrentMonthly).Round(1)
		}
	}
	plan.Held = e.held.Commitments
	plan.HeldInstances = e.held.Instances
	plan.Reallocations = e.reallocations
	plan.HeldCoverage = HeldCoverage{Covered: e.held.CoveredOnDemandMonthly, OnDemand: e.held.OnDemandMonthly, Share: e.held.Coverage}
	plan.Sharing = e.sharing
	plan.Governance = gov
	plan.Commitments = e.commits
	return plan
}

// newState prices an instance as it is now.
func (e *engine) newState(in *fleet.Instance) *state {
	hours := in.MonthlyHours()
	s := &state{inst: in, hours: hours, hours0: hours, lifecycle: in.Lifecycle, summary: in.Utilization.Summarize(), schedule: in.Usage.Schedule}
	s.typ, s.typeKnown = e.instanceType(in.Provider, in.InstanceType)
	if !s.typeKnown {
		// The instance's own figures stand for the type the catalog lacks.
		s.typ = &pricing.InstanceType{Provider: in.Provider, Name: in.InstanceType, GPUModel: in.GPU.Model,
			GPUCount: in.GPU.Count, GPUMemoryGiB: in.GPU.MemoryGiB, VCPUs: in.VCPUs, MemoryGiB: in.MemoryGiB}
	}
	s.typ0 = s.typ.Name
	s.noGPU = strings.TrimSpace(cmp.Or(in.GPU.Model, s.typ.GPUModel)) == "" || !(in.GPU.Count > 0 || s.typ.GPUCount > 0)
	price, ok := e.currentPrice(in)
	if !ok {
		if in.State != fleet.Stopped {
			e.warn(in.ID, WarnUnpriced, "no %s price for %s %s in %s in the catalog and no hourlyPrice in the fleet: its cost is not counted and no saving is computed",
				in.Lifecycle, in.Provider, in.PriceKey(), in.Region)
		}
		return s
	}
	s.priced = true
	if s.noGPU && in.State != fleet.Stopped {
		e.warn(in.ID, WarnUnknownType, "neither the fleet nor the catalog gives the GPU model and count of %s %s: its cost is counted, but no saving is advised",
			in.Provider, in.InstanceType)
	}
	if e.opts.Billed != nil {
		s.basis = BasisList
		if _, ok := e.opts.Billed[in.ID]; ok {
			s.basis = BasisBill
		}
	}
	s.hourly0 = e.shared(price)
	s.price = price
	s.monthly0 = e.costOf(s)
	if in.State != fleet.Stopped && !in.StoppedAllocated && s.summary == nil {
		e.warn(in.ID, WarnNoUtilization, "no GPU utilization data: not judged idle, not rightsized and no commitment advised (confidence low); collect GPU metrics to decide")
	}
	return s
}

// advisable reports whether the planner may advise on the instance: it is
// priced and its GPUs are known.
func (s *state) advisable() bool { return s.priced && !s.noGPU }

// record applies a change to a state and writes its recommendation; a
// change that saves nothing because commitments pay for the instance is a
// warning instead (coveredWithoutSaving).
func (e *engine) record(s *state, c *change) {
	if e.coveredWithoutSaving(s, c) {
		return
	}
	in := s.inst
	before := e.costOf(s)
	hoursBefore := s.hours
	s.apply(c)
	after := e.costOf(s)
	rec := Recommendation{
		ID:               string(c.kind) + ":" + in.ID,
		ResourceID:       in.ID,
		Provider:         in.Provider,
		Account:          in.Account,
		Region:           in.Region,
		InstanceType:     in.InstanceType,
		Kind:             c.kind,
		Action:           c.action,
		ShortAction:      c.short,
		Target:           c.target,
		CurrentMonthly:   before,
		ProjectedMonthly: after,
		MonthlySavings:   e.difference(before, after),
		Confidence:       c.confidence,
		Risk:             c.risk,
		RiskNotes:        c.riskNotes,
		Rationale:        c.rationale,
		Evidence:         c.evidence,
		After:            s.last,
		Protected:        c.protected,
	}
	if c.managed != nil {
		rec.Change = changeOf(*c.managed)
		if e.opts.ManagedCommand != nil && (c.protected == nil || c.protected.Counted) {
			rec.Command = e.opts.ManagedCommand(in, *c.managed)
		}
	}
	if s.covered() && c.kind != KindCommitment && !c.keep {
		note := e.heldNote(s)
		rec.Evidence.Notes = append(slices.Clip(rec.Evidence.Notes), note)
		rec.Action += " (" + e.freesText(s) + ")"
	}
	rec.Evidence.HoursBefore = round2(hoursBefore)
	rec.Evidence.HoursAfter = round2(s.hours)
	s.last = rec.ID
	e.recs = append(e.recs, rec)
}

// final is the instance as the plan leaves it.
func (s *state) final() *FinalState {
	return &FinalState{
		InstanceType: s.typ.Name,
		GPUModel:     s.typ.GPUModel,
		GPUCount:     s.typ.GPUCount,
		Lifecycle:    s.lifecycle,
		Hourly:       s.price,
		MonthlyHours: s.hours,
		Stopped:      s.stopped,
		Schedule:     s.schedule,
	}
}

func (s *state) apply(c *change) {
	if c.keep {
		return
	}
	s.override = c.projected
	if c.stop {
		s.stopped = true
		s.hours = 0
		return
	}
	if c.typ != nil {
		s.typ = c.typ
		s.typeKnown = true
	}
	if c.lifecycle != "" {
		s.lifecycle = c.lifecycle
	}
	if c.schedule != nil {
		s.schedule = c.schedule
	}
	s.price = c.price
	s.hours = c.hours
}

// currentPrice is what the instance pays per hour now: the bill's rate when
// one is given for it, else the fleet's or the catalog's.
func (e *engine) currentPrice(in *fleet.Instance) (pricing.Price, bool) {
	if b, ok := e.opts.Billed[in.ID]; ok {
		return b.Price, true
	}
	if in.HourlyPrice == nil && in.Lifecycle == fleet.Committed && in.Commitment != nil && in.Commitment.HourlyRate != nil {
		return pricing.Price{
			Provider: in.Provider, Region: in.Region, InstanceType: in.InstanceType,
			Option: pricing.Option(fleet.Committed), Hourly: *in.Commitment.HourlyRate,
			Currency: pricing.Currency, Unit: pricing.UnitHour,
			Source: "fleet file (commitment.hourlyRate)" + e.fleetSource, AsOf: e.fleetAsOf,
		}, true
	}
	if in.HourlyPrice != nil {
		return pricing.Price{
			Provider: in.Provider, Region: in.Region, InstanceType: in.InstanceType,
			Option: pricing.Option(in.Lifecycle), Hourly: *in.HourlyPrice,
			Currency: pricing.Currency, Unit: pricing.UnitHour,
			Source: "fleet file (hourlyPrice)" + e.fleetSource, AsOf: e.fleetAsOf,
		}, true
	}
	name := pricing.TypeNameOf(e.cat, in)
	if in.IsManaged() {
		// A service's own price (ml.*, vertex-ai/…), never a VM's in its stead.
		name = in.PriceKey()
	}
	offer, ok := e.offer(in.Provider, in.Region, name)
	if !ok {
		return pricing.Price{}, false
	}
	switch in.Lifecycle {
	case fleet.Spot:
		// The same basis as advice to move to spot: never the cheapest
		// zone's price for one and the advisor's saving for the other.
		q, ok := e.spotQuote(in.Provider, in.Region, in.PriceKey())
		if !ok {
			return pricing.Price{}, false
		}
		return q.price, true
	case fleet.Committed:
		return e.committedPrice(in, offer)
	default:
		if offer.OnDemand == nil {
			return pricing.Price{}, false
		}
		return *offer.OnDemand, true
	}
}

// confidenceFor grades the utilization data behind a decision on s: by the
// window's length, then by its coverage (the share of the window with data):
// below 0.8 one level lower, below 0.5 low.
func (e *engine) confidenceFor(s *state) Level {
	sum := s.summary
	var l Level
	switch {
	case sum == nil:
		return Low
	case sum.WindowHours >= e.policy.MinWindowHours:
		l = High
	case sum.WindowHours >= 24:
		l = Medium
	default:
		l = Low
	}
	switch cov := s.inst.Utilization.EffectiveCoverage(gpuCount(s)); {
	case cov < 0.5:
		l = Low
	case cov < 0.8 && l == High:
		l = Medium
	case cov < 0.8:
		l = Low
	}
	return l
}

func summarize(instances []InstanceCost, recs []Recommendation) Summary {
	s := Summary{SavingsByKind: map[Kind]decimal.Decimal{}}
	for _, ic := range instances {
		s.InstanceCount++
		s.GPUCount += ic.GPUCount * float64(max(1, ic.Managed.replicas()))
		if !ic.Priced {
			s.UnpricedCount++
			continue
		}
		s.CurrentMonthly = money.Add(s.CurrentMonthly, ic.MonthlyCost)
	}
	for _, r := range recs {
		s.MonthlySavings = money.Add(s.MonthlySavings, r.MonthlySavings)
		s.SavingsByKind[r.Kind] = money.Add(s.SavingsByKind[r.Kind], r.MonthlySavings)
	}
	s.OptimizedMonthly = s.CurrentMonthly.Sub(s.MonthlySavings)
	if s.CurrentMonthly.IsPositive() {
		s.SavingsPercent = s.MonthlySavings.Mul(decimal.NewFromInt(100)).Div(s.CurrentMonthly).Round(1)
	}
	return s
}

var kindOrder = func() map[Kind]int {
	m := map[Kind]int{}
	for i, k := range Kinds {
		m[k] = i
	}
	return m
}()

// sortRecommendations orders by strategy, then savings (largest first), then
// resource ID, so output is stable. It sorts the keys, then moves each
// recommendation once.
func sortRecommendations(recs []Recommendation) {
	type key struct {
		kind    int
		savings float64 // exact savings decide only where these tie
		at      int
	}
	keys := make([]key, len(recs))
	for i := range recs {
		keys[i] = key{kindOrder[recs[i].Kind], recs[i].MonthlySavings.InexactFloat64(), i}
	}
	slices.SortStableFunc(keys, func(x, y key) int {
		if x.kind != y.kind {
			return cmp.Compare(x.kind, y.kind)
		}
		// The conversion to float64 keeps order (a < b gives a float no
		// larger), so unequal floats order as the decimals do.
		if x.savings != y.savings {
			return cmp.Compare(y.savings, x.savings)
		}
		a, b := &recs[x.at], &recs[y.at]
		if c := a.MonthlySavings.Cmp(b.MonthlySavings); c != 0 {
			return -c
		}
		return strings.Compare(a.ResourceID, b.ResourceID)
	})
	order := make([]int, len(keys))
	for i, k := range keys {
		order[i] = k.at
	}
	permute(recs, order)
}

// permute puts recs[order[i]] at i for every i, moving each element once;
// order is a permutation of the indexes, which it leaves changed.
func permute[T any](recs []T, order []int) {
	for start := range order {
		if order[start] < 0 {
			continue
		}
		held := recs[start]
		at := start
		for {
			from := order[at]
			order[at] = -1
			if from == start {
				recs[at] = held
				break
			}
			recs[at] = recs[from]
			at = from
		}
	}
}
