// Package coverage works out which running instance-hours the commitments a
// fleet already holds (fleet.Fleet.Commitments) pay for, by each cloud's
// rules, and what each commitment leaves unused. It is pure: the same
// fleet, catalog and clock give the same allocation.
//
// Commitments apply hour by hour, as the clouds bill them, over the 168
// UTC hours of a week (hourly.go): an instance with a schedule runs its
// scheduled hours, one running part of the time with a week of utilization
// samples the hours they were taken in; any other runs its monthly hours
// spread evenly over every hour (365 h a month is half of each hour), so
// two such instances share one reservation as they would over the month;
// docs/commitments.md says why.
package coverage

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
)

// Input is what an allocation reads.
type Input struct {
	Fleet   *fleet.Fleet
	Catalog pricing.Catalog
	// Now is the report's clock: a commitment counts when Now lies
	// between its start and end. Zero counts every commitment, with a note.
	Now time.Time
	// FallbackDiscount, when set, gives the discount (0–1) to assume for a
	// savings plan or spend-based commitment on a type whose rate under it
	// the catalog lacks (the policy's configured discount).
	FallbackDiscount func(p fleet.Provider, term string) (float64, bool)
	// ISF is Microsoft's instance size flexibility table, when given: a
	// size-flexible reservation covers the other sizes of its group by
	// their ratios. Nil derives the groups of GPU sizes (DerivedISF).
	ISF *ISF
	// Summary, when set, gives an instance's utilization summary already
	// worked out (the engine has one per instance); nil summarizes here.
	Summary func(*fleet.Instance) *fleet.Summary
}

// Result is the allocation of a fleet's commitments to its instances.
type Result struct {
	// Instances are the instances any commitment covers, by instance ID.
	Instances map[string]*Covered
	// Commitments are the fleet's commitments in fleet order, each with
	// what it pays and what of it is used.
	Commitments []Usage
	// CoveredOnDemandMonthly and OnDemandMonthly are the on-demand value
	// of the covered usage and of all running usage with an on-demand
	// price; Coverage is their ratio (0–1).
	CoveredOnDemandMonthly decimal.Decimal
	OnDemandMonthly        decimal.Decimal
	Coverage               float64
}

// Covered is the part of one instance's usage commitments pay for.
type Covered struct {
	InstanceID string
	// Share is the part (0–1) of the instance's monthly usage covered.
	Share float64
	// Parts are the commitments covering it, in the order they applied.
	Parts []Part
}

// Part is one commitment's share of one instance.
type Part struct {
	CommitmentID string
	Kind         string
	// Share is the part (0–1) of the instance's usage it covers.
	Share float64
	// Monthly is what the commitment charges a month for that part (its
	// paid amount × the part of its capacity used); Priced is false when
	// the commitment's price is unknown (Monthly is then zero).
	Monthly decimal.Decimal
	Priced  bool
	// Hourly is Monthly per running hour of the instance: what stopping or
	// shrinking the instance frees of the commitment each hour.
	Hourly decimal.Decimal
	// Fixed is false for a capacity reservation's part on usage no
	// discount covers: billed at the reservation's rate, it is paid
	// whether used or not, like the rest.
	Fixed bool
	// units, on a size-flexible commitment's part, are the units of it an
	// instance-hour of a type uses, and whether it covers the type.
	units func(typ string) (float64, bool)
}

// Resized is how many hours of type to the part's commitment covers for
// each hour of type from it covers: the ratio of their units where the
// commitment is size-flexible and covers both (an RI in normalization
// factors, an Azure reservation by its flexibility group's ratios, either
// way within the one family or group); false where it covers only the type
// it covered, or not to.
func (p Part) Resized(from, to string) (float64, bool) {
	if p.units == nil {
		return 0, false
	}
	a, ok := p.units(from)
	b, ok2 := p.units(to)
	if !ok || !ok2 || !(a > 0) || !(b > 0) {
		return 0, false
	}
	return a / b, true
}

// Usage is one commitment: what it pays a month and how much of it is used.
type Usage struct {
	ID       string
	Provider fleet.Provider
	Kind     string
	Region   string
	// Active is false when the report's clock lies outside its term: it is
	// then neither paid nor applied.
	Active bool
	// Priced is false when neither the fleet nor the catalog gives its
	// price; PaidMonthly, UsedMonthly and UnusedMonthly are then zero.
	Priced bool
	// PaidMonthly is what it costs a month, used or not.
	PaidMonthly   decimal.Decimal
	UsedMonthly   decimal.Decimal
	UnusedMonthly decimal.Decimal
	// Utilization is the part (0–1) of its capacity used.
	Utilization float64
	// Capacity says what it buys, e.g. "2 × p5.48xlarge (768 normalized units)".
	Capacity string
	// Covers are the instances it covers, in allocation order.
	Covers []string
	// Notes say how it was priced or matched where that was not exact.
	Notes []string
	// Candidates are uncovered running instances it could cover (same
	// provider, scope and kind of usage), for its unused part: the first
	// maxCandidates of CandidateCount.
	Candidates     []string
	CandidateCount int
}

// maxCandidates bounds Usage.Candidates.
const maxCandidates = 20

// usage is one instance as the allocation sees it, hour by hour over a
// week (hourly.go).
type usage struct {
	in *fleet.Instance
	// hours are its monthly hours; on its instance-hours in each hour of the
	// week, from its schedule; nil when it has none, and it runs flat in
	// each hour (hours ÷ 730); onSum is its instance-hours a week.
	hours float64
	on    *week
	flat  float64
	onSum float64
	typ   pricing.InstanceType
	known bool
	// onDemand is its uncovered hourly price.
	onDemand decimal.Decimal
	hasOD    bool
	// cov are the instance-hours discounts cover in each hour (covSum a
	// week); matched those capacity reservations match; held those they
	// bill that no discount covers (heldSum a week).
	cov     *week
	covSum  float64
	matched *week
	held    *week
	heldSum float64
	// res are the instance-hours of each committed resource (resourceKey)
	// that resource-based CUDs cover, by hour, where its value is split by
	// resource price (weights).
	res map[string]*week
	// weights are the parts of its on-demand value each of its resources
	// is; nil when a resource's unit price is unknown. weighed is true once
	// worked out.
	weights map[string]float64
	weighed bool
	named   string
	out     *Covered
}

// maxShare is the share past which an instance counts as fully covered
// (float rounding).
const maxShare = 1 - 1e-9

// Allocate allocates every active commitment of the fleet, cloud by cloud,
// in the order the clouds apply them: AWS zonal then regional reserved
// instances and capacity blocks, EC2 Instance Savings Plans, Compute
// Savings Plans; Azure reservations, then savings plans; GCP resource-based
// CUDs, then spend-based CUDs. Capacity reservations (AWS, Azure) and GCP
// reservations come last: no discount, but paid whether used or not.
func Allocate(in Input) Result {
	res := Result{Instances: map[string]*Covered{}}
	f := in.Fleet
	if f == nil {
		return res
	}
	us := make([]*usage, 0, len(f.Instances))
	prof := &profiles{at: in.Now}
	for i := range f.Instances {
		inst := &f.Instances[i]
		u := &usage{in: inst, hours: inst.MonthlyHours()}
		if inst.StoppedAllocated {
			u.hours = inst.Usage.MonthlyHours()
		}
		if !(u.hours > 0) || math.IsInf(u.hours, 0) || u.hours > 1e6 {
			u.hours = 0
		}
		if u.hours > 0 {
			if u.on = prof.of(inst.Usage); u.on == nil && inst.Utilization != nil {
				u.on = fromSamples(inst.Utilization.Samples, u.hours/weekToMonth)
			}
			if u.on != nil {
				for _, v := range u.on {
					u.onSum += v
				}
			} else {
				u.flat = u.hours / fleet.HoursPerMonth
				u.onSum = u.flat * hoursInWeek
			}
		}
		if inst.Commitment != nil {
			u.named = inst.Commitment.ID
		}
		if in.Catalog != nil {
			u.typ, u.known = in.Catalog.InstanceType(inst.Provider, pricing.TypeNameOf(in.Catalog, inst))
			u.onDemand, u.hasOD = onDemand(in.Catalog, inst)
		}
		us = append(us, u)
	}
	// Commitments go in the clouds' order, then by ID, and they cover the
	// busiest instances first (GPU p95; no data counts as busy), then by
	// ID: the order of a file or of a scan does not change the allocation,
	// and an idle instance beside a busy one of the same kind is the one
	// left uncovered, as its stop then saves what the busy one would
	// otherwise pay on demand.
	busy := make(map[*usage]float64, len(us))
	for _, u := range us {
		busy[u] = math.Inf(1)
		var sm *fleet.Summary
		if in.Summary != nil {
			sm = in.Summary(u.in)
		} else {
			sm = u.in.Utilization.Summarize()
		}
		if sm != nil && sm.GPU != nil && !math.IsNaN(sm.GPU.P95) {
			busy[u] = sm.GPU.P95
		}
	}
	slices.SortStableFunc(us, func(x, y *usage) int {
		return cmp.Or(cmp.Compare(busy[y], busy[x]), cmp.Compare(x.in.ID, y.in.ID))
	})
	order := make([]int, len(f.Commitments))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return cmp.Or(cmp.Compare(rank(&f.Commitments[a]), rank(&f.Commitments[b])), cmp.Compare(f.Commitments[a].ID, f.Commitments[b].ID))
	})
	res.Commitments = make([]Usage, len(f.Commitments))
	a := &allocator{in: in, us: us}
	for _, i := range order {
		res.Commitments[i] = a.apply(&f.Commitments[i])
	}
	for _, u := range us {
		if u.out != nil {
			u.out.Share = min(1, u.share()+u.heldShare())
			res.Instances[u.in.ID] = u.out
		}
		if u.hours > 0 && u.hasOD {
			od := u.onDemand.Mul(decimal.NewFromFloat(u.hours))
			res.OnDemandMonthly = res.OnDemandMonthly.Add(od)
			res.CoveredOnDemandMonthly = res.CoveredOnDemandMonthly.Add(od.Mul(decimal.NewFromFloat(min(1, u.share()+u.heldShare()))))
		}
	}
	res.OnDemandMonthly = res.OnDemandMonthly.Round(2)
	res.CoveredOnDemandMonthly = res.CoveredOnDemandMonthly.Round(2)
	if res.OnDemandMonthly.IsPositive() {
		res.Coverage = res.CoveredOnDemandMonthly.Div(res.OnDemandMonthly).InexactFloat64()
	}
	for i := range res.Commitments {
		c := &res.Commitments[i]
		if c.Active && c.Utilization < 1 {
			c.Candidates, c.CandidateCount = a.candidates(&f.Commitments[i])
		}
	}
	return res
}

// rank is a commitment's place in the order the clouds apply them.
func rank(h *fleet.Held) int {
	switch h.Kind {
	case fleet.HeldStandardRI, fleet.HeldConvertibleRI, fleet.HeldCapacityBlock:
		if h.Scope.Level == "zone" || h.Scope.Zone != "" {
			return 0
		}
		if !h.SizeFlexible {
			return 1
		}
		return 2
	case fleet.HeldReservation, fleet.HeldResourceCUD:
		return 1
	case fleet.HeldEC2SavingsPlan:
		return 3
	case fleet.HeldComputeSavingsPlan, fleet.HeldSavingsPlan, fleet.HeldSpendCUD, fleet.HeldSageMakerSavingsPlan:
		return 4
	}
	return 5 // capacity reservations, GCP reservations
}

type allocator struct {
	in Input
	us []*usage
	// byRegion and byProvider index us, in fleet order.
	byRegion   map[regionKey][]*usage
	byProvider map[fleet.Provider][]*usage
}

type regionKey struct {
	p      fleet.Provider
	region string
}

// inScope are the instances h's provider and region (when it names one)
// may hold: the rest of the scope is inScope's to check.
func (a *allocator) inScope(h *fleet.Held) []*usage {
	if a.byProvider == nil {
		a.byRegion, a.byProvider = map[regionKey][]*usage{}, map[fleet.Provider][]*usage{}
		for _, u := range a.us {
			k := regionKey{u.in.Provider, strings.ToLower(u.in.Region)}
			a.byRegion[k] = append(a.byRegion[k], u)
			a.byProvider[u.in.Provider] = append(a.byProvider[u.in.Provider], u)
		}
	}
	if h.Scope.Region != "" {
		return a.byRegion[regionKey{h.Provider, strings.ToLower(h.Scope.Region)}]
	}
	return a.byProvider[h.Provider]
}

func (a *allocator) apply(h *fleet.Held) Usage {
	out := Usage{ID: h.ID, Provider: h.Provider, Kind: h.Kind, Region: h.Scope.Region, Active: a.in.Now.IsZero() || h.Active(a.in.Now)}
	if a.in.Now.IsZero() && (h.Start != nil || h.End != nil) {
		out.Notes = append(out.Notes, "no report date: counted as active whatever its start and end")
	}
	if !out.Active {
		out.Notes = append(out.Notes, "outside its term at the report's date: not paid, not applied")
		return out
	}
	if h.End != nil && !a.in.Now.IsZero() && h.End.Sub(a.in.Now) < time.Duration(fleet.HoursPerMonth*float64(time.Hour)) {
		out.Notes = append(out.Notes, "ends "+h.End.Format("2006-01-02")+", within the month: counted for the whole month")
	}
	if why := insane(h); why != "" {
		out.Active = false
		out.Notes = append(out.Notes, "ignored: "+why)
		return out
	}
	switch {
	case h.Kind == fleet.HeldResourceCUD:
		a.resourceCUD(h, &out)
	case h.PerHour():
		a.spend(h, &out)
	case h.Kind == fleet.HeldCapacityReservation || h.Kind == fleet.HeldGCPReservation:
		a.capacity(h, &out)
	default:
		a.reserved(h, &out)
	}
	out.UnusedMonthly = out.PaidMonthly.Sub(out.UsedMonthly)
	if out.UnusedMonthly.IsNegative() {
		out.UnusedMonthly = decimal.Zero
	}
	return out
}

// insane says why a commitment cannot be allocated (a scan's, not checked
// as a fleet file is); "" when it can.
func insane(h *fleet.Held) string {
	bad := func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) || v < 0 }
	if bad(h.Count) || h.PerInstance() && !(h.Count > 0) {
		return "its count is not a positive number"
	}
	for _, r := range h.Resources {
		if bad(r.Amount) || !(r.Amount > 0) {
			return "a resource amount is not a positive number"
		}
	}
	for _, d := range []*decimal.Decimal{h.HourlyCommitment, h.HourlyRate} {
		if d != nil && (d.IsNegative() || d.GreaterThan(decimal.NewFromInt(fleet.MaxHourlyCommitment))) {
			return "an hourly amount is out of range"
		}
	}
	return ""
}

// eligible are the instances h may apply to, named ones first, then in
// fleet order.
func (a *allocator) eligible(h *fleet.Held, fits func(u *usage) bool) []*usage {
	var named, rest []*usage
	for _, u := range a.inScope(h) {
		if u.hours <= 0 || u.in.Lifecycle == fleet.Spot || !inScope(h, u.in) || !fits(u) {
			continue
		}
		if u.named == h.ID {
			named = append(named, u)
		} else {
			rest = append(rest, u)
		}
	}
	return append(named, rest...)
}

// inScope reports whether the instance lies in the commitment's scope:
// provider, region, zone and accounts.
func inScope(h *fleet.Held, in *fleet.Instance) bool {
	if in.Provider != h.Provider || !fleet.HeldCovers(h.Kind, in) {
		return false
	}
	if h.Scope.Region != "" && !strings.EqualFold(h.Scope.Region, in.Region) {
		return false
	}
	if h.Scope.Zone != "" && !strings.EqualFold(h.Scope.Zone, in.Zone) {
		return false
	}
	switch h.Scope.Level {
	case "account":
		if len(h.Scope.Accounts) > 0 {
			return slices.ContainsFunc(h.Scope.Accounts, func(a string) bool { return strings.EqualFold(a, in.Account) })
		}
		return h.Account == "" || strings.EqualFold(h.Account, in.Account)
	case "resource-group":
		rg := resourceGroup(in.ID)
		return slices.ContainsFunc(h.Scope.Accounts, func(a string) bool {
			return rg != "" && strings.EqualFold(a, rg) || strings.EqualFold(a, in.Account)
		})
	}
	return len(h.Scope.Accounts) == 0 || slices.ContainsFunc(h.Scope.Accounts, func(a string) bool { return strings.EqualFold(a, in.Account) })
}

// resourceGroup is the resource group an Azure resource ID names, or "".
func resourceGroup(id string) string {
	parts := strings.Split(id, "/")
	for i := 0; i+1 < len(parts); i++ {
		if strings.EqualFold(parts[i], "resourceGroups") {
			return parts[i+1]
		}
	}
	return ""
}

// cover records that h covers share of u at monthly.
func (u *usage) cover(h *fleet.Held, out *Usage, share float64, monthly decimal.Decimal, priced, fixed bool) {
	if share <= 0 {
		return
	}
	if u.out == nil {
		u.out = &Covered{InstanceID: u.in.ID}
	}
	p := Part{CommitmentID: h.ID, Kind: h.Kind, Share: share, Monthly: monthly, Priced: priced, Fixed: fixed}
	if u.hours > 0 {
		p.Hourly = monthly.Div(decimal.NewFromFloat(u.hours)).Round(6)
	}
	u.out.Parts = append(u.out.Parts, p)
	out.Covers = append(out.Covers, u.in.ID)
}

// part is paid × used / capacity, in cents.
func part(paid decimal.Decimal, used, capacity float64) decimal.Decimal {
	if !(capacity > 0) {
		return decimal.Zero
	}
	return paid.Mul(decimal.NewFromFloat(used / capacity)).Round(2)
}

var hoursPerMonth = decimal.NewFromFloat(fleet.HoursPerMonth)

// normalizes reports whether a size-flexible commitment of h's kind is
// counted in normalization factors across its family (reserved instances);
// the rule goes with the kind, as each cloud's kinds are its own.
func normalizes(h *fleet.Held) bool {
	return h.Kind == fleet.HeldStandardRI || h.Kind == fleet.HeldConvertibleRI
}

// reserved allocates a reserved instance, an Azure reservation or a capacity
// block: Count instances of one type, or, size-flexible (AWS regional RIs),
// Count × its normalization factor of units across its family.
func (a *allocator) reserved(h *fleet.Held, out *Usage) {
	unit := func(typ string) (float64, bool) { return 1, strings.EqualFold(typ, h.InstanceType) }
	flexible := h.SizeFlexible && normalizes(h) && h.Scope.Zone == "" && h.Scope.Level != "zone"
	heldNF := 1.0
	if flexible {
		nf, ok := NormalizationFactor(h.InstanceType)
		if !ok {
			flexible = false
			out.Notes = append(out.Notes, "size flexibility not applied: no normalization factor for "+h.InstanceType)
		} else {
			heldNF = nf
			fam := Family(h.InstanceType)
			unit = func(typ string) (float64, bool) {
				n, ok := NormalizationFactor(typ)
				return n, ok && Family(typ) == fam
			}
		}
	}
	isf := a.isfGroup(h)
	if isf != nil {
		// Kept by the parts it covers (Part.Resized): the table and the
		// size, not the allocator.
		tab, reserved := a.in.ISF, h.InstanceType
		unit = func(typ string) (float64, bool) {
			need, per, ok := tab.units(reserved, typ)
			return need / per, ok
		}
	} else if h.SizeFlexible && h.Kind == fleet.HeldReservation {
		out.Notes = append(out.Notes, "instance size flexibility not applied: no flexibility group is known for "+h.InstanceType+
			" (give Microsoft's ratio table, analyze.isf_ratios), so the reservation covers its own size only")
	}
	perHour := h.Count * heldNF
	capacity := perHour * hoursInWeek
	out.Capacity = fmt.Sprintf("%s × %s", num(h.Count), h.InstanceType)
	switch {
	case flexible:
		out.Capacity += fmt.Sprintf(" (%s normalized units, family %s)", num(h.Count*heldNF), Family(h.InstanceType))
	case isf != nil:
		out.Capacity += fmt.Sprintf(" (size-flexible across group %s)", isf.Group)
		if isf.Derived {
			out.Notes = append(out.Notes, "instance size flexibility by ratios derived from the sizes' vCPUs, not from Microsoft's table (analyze.isf_ratios overrides them)")
		}
	}
	rate, priced, note := a.perInstanceRate(h)
	if note != "" {
		out.Notes = append(out.Notes, note)
	}
	out.Priced = priced
	if priced {
		out.PaidMonthly = rate.Mul(decimal.NewFromFloat(h.Count)).Mul(hoursPerMonth).Round(2)
	}
	left, leftSum := fullWeek(perHour), capacity
	elig := a.eligible(h, func(u *usage) bool { _, ok := unit(u.in.InstanceType); return ok })
	if isf != nil {
		// Its own size first, then the group's other sizes.
		slices.SortStableFunc(elig, func(x, y *usage) int {
			return cmp.Compare(a.otherSize(h, x), a.otherSize(h, y))
		})
	}
	for _, u := range elig {
		if leftSum <= capacity*1e-12 {
			break
		}
		nf, _ := unit(u.in.InstanceType)
		if u.share() >= maxShare || !(nf > 0) {
			continue
		}
		got := u.take(left, &leftSum, nf)
		if got <= 0 {
			continue
		}
		u.cover(h, out, got/u.onSum, part(out.PaidMonthly, got*nf, capacity), priced, true)
		if flexible || isf != nil {
			u.out.Parts[len(u.out.Parts)-1].units = unit
		}
	}
	a.finish(out, capacity-leftSum, capacity)
}

// isfGroup is the flexibility group of a size-flexible reservation of
// instance size flexibility (Azure's), nil when h is not one or its size
// has no known group.
func (a *allocator) isfGroup(h *fleet.Held) *ISFSize {
	if !h.SizeFlexible || h.Kind != fleet.HeldReservation {
		return nil
	}
	g, ok := a.in.ISF.Lookup(h.InstanceType)
	if !ok {
		return nil
	}
	return &g
}

// otherSize orders h's eligible instances: those h names first (0), then
// its own size (1), then other sizes (2).
func (a *allocator) otherSize(h *fleet.Held, u *usage) int {
	switch {
	case u.named == h.ID:
		return 0
	case strings.EqualFold(u.in.InstanceType, h.InstanceType):
		return 1
	}
	return 2
}

func (a *allocator) finish(out *Usage, used, capacity float64) {
	if capacity > 0 {
		out.Utilization = min(1, used/capacity)
	}
	out.UsedMonthly = part(out.PaidMonthly, used, capacity)
}

// perInstanceRate is the USD per instance-hour of h's type: the fleet's
// hourlyRate, else the catalog's rate of its kind, term and payment.
func (a *allocator) perInstanceRate(h *fleet.Held) (decimal.Decimal, bool, string) {
	if h.HourlyRate != nil {
		return *h.HourlyRate, true, ""
	}
	if a.in.Catalog != nil {
		q := pricing.CommitmentQuery{Provider: h.Provider, Region: h.Scope.Region, InstanceType: h.InstanceType,
			Kind: pricing.CommitmentKind(h.Kind), Term: h.Term, Payment: h.Payment}
		if h.Kind == fleet.HeldCapacityReservation || h.Kind == fleet.HeldGCPReservation {
			if o, ok := a.in.Catalog.Offer(h.Provider, h.Scope.Region, h.InstanceType); ok && o.OnDemand != nil {
				return o.OnDemand.Hourly, true, "priced at the on-demand rate of " + h.InstanceType + " (no hourlyRate in the fleet)"
			}
		} else if r, ok := pricing.LookupCommitment(a.in.Catalog, q); ok {
			return r.Hourly, true, fmt.Sprintf("priced at the catalog's %s %s rate %s/h (%s), no hourlyRate in the fleet", h.Term, h.Kind, r.Hourly, r.Source)
		}
	}
	return decimal.Zero, false, "unpriced: no hourlyRate in the fleet and no catalog rate for " + h.InstanceType
}

// capacity allocates a capacity reservation or a GCP reservation: Count
// instances of one type, paid at its rate whether used or not, with no
// discount. Usage a discount already covers still fills it.
func (a *allocator) capacity(h *fleet.Held, out *Usage) {
	capacity := h.Count * hoursInWeek
	out.Capacity = fmt.Sprintf("%s × %s", num(h.Count), h.InstanceType)
	rate, priced, note := a.perInstanceRate(h)
	if note != "" {
		out.Notes = append(out.Notes, note)
	}
	out.Priced = priced
	if priced {
		out.PaidMonthly = rate.Mul(decimal.NewFromFloat(h.Count)).Mul(hoursPerMonth).Round(2)
	}
	left, leftSum := fullWeek(h.Count), capacity
	for _, u := range a.eligible(h, func(u *usage) bool { return strings.EqualFold(u.in.InstanceType, h.InstanceType) }) {
		if leftSum <= capacity*1e-12 {
			break
		}
		matched, held := weekOf(&u.matched), weekOf(&u.held)
		used, free := 0.0, 0.0
		for hr := range left {
			need := u.at(hr) - matched[hr]
			if need <= 0 || left[hr] <= 0 {
				continue
			}
			use := min(need, left[hr])
			left[hr] -= use
			matched[hr] += use
			used += use
			// The part no discount covers is billed at the reservation's rate.
			covered := held[hr]
			if u.cov != nil {
				covered += u.cov[hr]
			}
			f := max(0, min(use, u.at(hr)-covered))
			held[hr] += f
			free += f
		}
		if used <= 0 {
			continue
		}
		leftSum -= used
		u.heldSum += free
		var m decimal.Decimal
		if priced {
			m = rate.Mul(decimal.NewFromFloat(free * weekToMonth)).Round(2)
		}
		if free > 0 {
			u.cover(h, out, free/u.onSum, m, priced, true)
		} else {
			out.Covers = append(out.Covers, u.in.ID)
		}
	}
	a.finish(out, capacity-leftSum, capacity)
}

// GCP's documented spend-based (flexible) committed use discounts.
var spendCUDDiscount = map[string]float64{"1y": 0.28, "3y": 0.46}

// spend allocates a savings plan or a spend-based CUD: a USD amount per hour
// at the commitment's rates, over eligible usage in descending order of
// discount (AWS EC2 Instance SP: its family in its region; Compute SP, Azure
// savings plan, GCP spend CUD: any type in scope).
func (a *allocator) spend(h *fleet.Held, out *Usage) {
	commit := decimal.Zero
	if h.HourlyCommitment != nil {
		commit = *h.HourlyCommitment
	}
	out.Capacity = "$" + commit.String() + "/h"
	out.Priced = true
	out.PaidMonthly = commit.Mul(hoursPerMonth).Round(2)
	perHour := commit.InexactFloat64()
	capacity := perHour * hoursInWeek
	type cand struct {
		u        *usage
		rate     float64 // commitment USD per instance-hour
		discount float64
	}
	var cands []cand
	var assumed []string
	for _, u := range a.eligible(h, func(u *usage) bool {
		return h.Kind != fleet.HeldEC2SavingsPlan || strings.EqualFold(Family(u.in.InstanceType), h.InstanceFamily)
	}) {
		if !u.hasOD || !u.onDemand.IsPositive() || u.share() >= maxShare {
			continue
		}
		od := u.onDemand.InexactFloat64()
		d, how, ok := a.discount(h, u)
		if !ok {
			continue
		}
		if how != "" {
			assumed = append(assumed, how)
		}
		cands = append(cands, cand{u, od * (1 - d), d})
	}
	slices.SortStableFunc(cands, func(x, y cand) int { return cmp.Compare(y.discount, x.discount) })
	left, leftSum := fullWeek(perHour), capacity
	for _, c := range cands {
		if leftSum <= capacity*1e-12 {
			break
		}
		if !(c.rate > 0) {
			continue
		}
		got := c.u.take(left, &leftSum, c.rate)
		if got <= 0 {
			continue
		}
		c.u.cover(h, out, got/c.u.onSum, part(out.PaidMonthly, got*c.rate, capacity), true, true)
	}
	slices.Sort(assumed)
	assumed = slices.Compact(assumed)
	out.Notes = append(out.Notes, assumed...)
	a.finish(out, capacity-leftSum, capacity)
}

// discount is the discount (0–1) h gives u's type, and how it was found
// when not from the catalog's rate for the kind.
func (a *allocator) discount(h *fleet.Held, u *usage) (float64, string, bool) {
	od := u.onDemand
	lookup := func(kind pricing.CommitmentKind) (float64, bool) {
		if a.in.Catalog == nil {
			return 0, false
		}
		r, ok := pricing.LookupCommitment(a.in.Catalog, pricing.CommitmentQuery{Provider: u.in.Provider, Region: u.in.Region,
			InstanceType: priceName(a.in.Catalog, u.in), Kind: kind, Term: h.Term, Payment: h.Payment})
		if !ok || !r.Hourly.IsPositive() || r.Hourly.GreaterThan(od) {
			return 0, false
		}
		return 1 - r.Hourly.Div(od).InexactFloat64(), true
	}
	switch h.Kind {
	case fleet.HeldSpendCUD:
		d, ok := spendCUDDiscount[h.Term]
		return d, fmt.Sprintf("GCP's published %s spend-based CUD discount of %s %%", h.Term, num(d*100)), ok
	case fleet.HeldSavingsPlan:
		if d, ok := lookup(pricing.Reservation); ok {
			return d, "Azure savings plan rates taken as the reservation rates of the same term (an upper bound of its discount: coverage is not understated)", true
		}
	default:
		if d, ok := lookup(pricing.CommitmentKind(h.Kind)); ok {
			return d, "", true
		}
	}
	if a.in.FallbackDiscount != nil {
		if d, ok := a.in.FallbackDiscount(h.Provider, h.Term); ok && d >= 0 && d < 1 {
			return d, fmt.Sprintf("no catalog rate for some types: the policy's %s discount of %s %% assumed", h.Term, num(d*100)), true
		}
	}
	return 0, "", false
}

// resourceCUD allocates a GCP resource-based CUD: per resource (vCPUs,
// memory GiB, GPUs of one model) in its region, hour by hour. Where the
// catalog prices each of a machine's resources (per-unit on-demand prices:
// the Billing Catalog's SKUs, read live, else the ones the embedded catalog
// derives from its machine prices), the machine is covered resource by resource, and its covered
// share is the part of its on-demand value the covered resources are: a CUD
// of vCPUs and memory alone covers a GPU machine's host, not its GPUs, whose
// price stays what stopping it saves. Where a unit price is unknown, the
// machine is covered in proportion to what the commitment has left of the
// scarcest committed resource it uses, resources the commitment does not
// name not limiting the share: no saving is claimed on its hours (noted).
func (a *allocator) resourceCUD(h *fleet.Held, out *Usage) {
	var names, shown []string
	var amounts []float64
	for _, r := range h.Resources {
		k := resourceKey(r.Type, r.GPUModel)
		shown = append(shown, num(r.Amount)+" "+k)
		i := slices.Index(names, k)
		if i < 0 {
			names, amounts = append(names, k), append(amounts, 0)
			i = len(names) - 1
		}
		amounts[i] += r.Amount
	}
	out.Capacity = strings.Join(shown, " + ")
	left := make([]*week, len(names))
	leftSum := make([]float64, len(names))
	for i, v := range amounts {
		left[i], leftSum[i] = fullWeek(v), v*hoursInWeek
	}
	if h.HourlyCommitment != nil {
		out.Priced = true
		out.PaidMonthly = h.HourlyCommitment.Mul(hoursPerMonth).Round(2)
	} else {
		out.Notes = append(out.Notes, "unpriced: the fleet gives no hourlyCommitment (the USD an hour the commitment bills)")
	}
	var ns []need
	used := make([]float64, len(names))
	usedFrac, unweighted := 0.0, 0
	for _, u := range a.eligible(h, func(u *usage) bool { ns = cudNeed(h, u, names, ns[:0]); return len(ns) > 0 }) {
		if u.share() >= maxShare {
			continue
		}
		if exhausted(leftSum, amounts) {
			break
		}
		ns = cudNeed(h, u, names, ns[:0])
		clear(used)
		cov := weekOf(&u.cov)
		got := 0.0
		if w := a.weights(u); w == nil {
			unweighted++
			for hr := range cov {
				s := u.at(hr) - cov[hr]
				for _, n := range ns {
					s = min(s, left[n.k][hr]/n.amount)
				}
				if s <= 0 {
					continue
				}
				for _, n := range ns {
					left[n.k][hr] -= n.amount * s
					used[n.k] += n.amount * s
				}
				cov[hr] += s
				got += s
			}
		} else {
			for _, n := range ns {
				wk, rw := w[names[n.k]], u.resWeek(names[n.k])
				for hr := range cov {
					f := min(u.at(hr)-rw[hr], left[n.k][hr]/n.amount)
					if f <= 0 {
						continue
					}
					rw[hr] += f
					left[n.k][hr] -= n.amount * f
					used[n.k] += n.amount * f
					cov[hr] += wk * f
					got += wk * f
				}
			}
		}
		frac := 0.0
		for k, v := range used {
			leftSum[k] -= v
			frac += v / (amounts[k] * hoursInWeek)
		}
		frac /= float64(len(names))
		usedFrac += frac
		if got <= 0 {
			continue
		}
		got = u.add(got)
		u.cover(h, out, got/u.onSum, part(out.PaidMonthly, frac, 1), out.Priced, true)
	}
	if unweighted > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("%d machine(s) without a per-resource on-demand price (vCPU, GiB, GPU) in the catalog: "+
			"each counted covered by the share of its scarcest committed resource, not by the price of what is committed (no saving claimed on its hours)", unweighted))
	}
	a.finish(out, usedFrac, 1)
}

// exhausted reports whether every committed resource is used up.
func exhausted(leftSum, amounts []float64) bool {
	for k, v := range leftSum {
		if v > amounts[k]*hoursInWeek*1e-12 {
			return false
		}
	}
	return true
}

// resWeek is the week of instance-hours of resource k resource-based CUDs
// cover on u, made on first use.
func (u *usage) resWeek(k string) *week {
	if u.res == nil {
		u.res = map[string]*week{}
	}
	w := u.res[k]
	if w == nil {
		w = new(week)
		u.res[k] = w
	}
	return w
}

// need is what a machine uses of one committed resource an instance-hour.
type need struct {
	k      int // index in the commitment's resources
	amount float64
}

// resources are the vCPUs, memory GiB, GPU model and GPU count of u's
// machine, from the fleet, else the catalog.
func (u *usage) resources() (vcpus, mem float64, model string, gpus float64) {
	vcpus, mem = u.in.VCPUs, u.in.MemoryGiB
	model, gpus = u.in.GPU.Model, u.in.GPU.Count
	if u.known {
		vcpus, mem = cmp.Or(vcpus, u.typ.VCPUs), cmp.Or(mem, u.typ.MemoryGiB)
		model, gpus = cmp.Or(model, u.typ.GPUModel), cmp.Or(gpus, u.typ.GPUCount)
	}
	return vcpus, mem, model, gpus
}

// cudNeed appends to ns what u uses of the resources a resource-based CUD
// commits to (names, resourceKey). A CUD's vCPUs and memory are of one
// machine series (InstanceFamily, from its type: GRAPHICS_OPTIMIZED is g2);
// they cover no other series' vCPUs and memory. Its GPUs cover that GPU
// model on any machine.
func cudNeed(h *fleet.Held, u *usage, names []string, ns []need) []need {
	vcpus, mem, model, gpus := u.resources()
	if h.InstanceFamily != "" && !strings.EqualFold(MachineSeries(u.in.InstanceType), h.InstanceFamily) {
		vcpus, mem = 0, 0
	}
	for k, name := range names {
		v := 0.0
		switch name {
		case "vcpu":
			v = vcpus
		case "memory":
			v = mem
		default:
			if model != "" && name == resourceKey("gpu", model) {
				v = gpus
			}
		}
		if v > 0 && !math.IsInf(v, 0) {
			ns = append(ns, need{k, v})
		}
	}
	return ns
}

// weights are the parts (0–1) of u's on-demand value each of its resources
// (vcpu, memory, gpu:MODEL) is, by the catalog's per-unit on-demand prices
// of its series and GPU model in its region; nil when one is unknown.
func (a *allocator) weights(u *usage) map[string]float64 {
	if u.weighed {
		return u.weights
	}
	u.weighed = true
	vcpus, mem, model, gpus := u.resources()
	if a.in.Catalog == nil || !(vcpus > 0) || !(mem > 0) {
		return nil
	}
	family, _, _ := strings.Cut(strings.ToLower(u.in.InstanceType), "-")
	price := func(resource, name string) (float64, bool) {
		for _, n := range []string{name, normModel(name)} {
			p, ok := pricing.LookupResource(a.in.Catalog, pricing.ResourceQuery{Provider: u.in.Provider, Region: u.in.Region, Resource: resource, Name: n, Option: pricing.OnDemand})
			if ok && p.Hourly.IsPositive() {
				return p.Hourly.InexactFloat64(), true
			}
		}
		return 0, false
	}
	parts := map[string]float64{}
	total := 0.0
	for _, r := range []struct {
		key, resource, name string
		n                   float64
	}{{"vcpu", pricing.ResourceVCPU, family, vcpus}, {"memory", pricing.ResourceMemory, family, mem}, {resourceKey("gpu", model), pricing.ResourceGPU, model, gpus}} {
		if !(r.n > 0) {
			continue
		}
		p, ok := price(r.resource, r.name)
		if !ok || math.IsInf(p*r.n, 0) {
			return nil
		}
		parts[r.key] += p * r.n
		total += p * r.n
	}
	if !(total > 0) {
		return nil
	}
	for k := range parts {
		parts[k] /= total
	}
	u.weights = parts
	return parts
}

// MachineSeries is the series of a machine type named series-class-size
// (g2-standard-8 is g2); the A3 Mega and Ultra types, which commitments of
// their own cover, are a3-mega and a3-ultra.
func MachineSeries(machineType string) string {
	t := strings.ToLower(machineType)
	if i := strings.IndexByte(t, '+'); i >= 0 {
		t = t[:i]
	}
	series, rest, _ := strings.Cut(t, "-")
	switch {
	case strings.HasPrefix(rest, "megagpu"):
		return series + "-mega"
	case strings.HasPrefix(rest, "ultragpu"):
		return series + "-ultra"
	}
	return series
}

// resourceKey names a committed resource: "vcpu", "memory", "gpu:L4".
func resourceKey(typ, model string) string {
	if typ != "gpu" {
		return typ
	}
	return "gpu:" + normModel(model)
}

func normModel(m string) string {
	m = strings.ToUpper(strings.TrimSpace(m))
	m = strings.TrimPrefix(m, "NVIDIA-")
	m = strings.TrimPrefix(m, "NVIDIA ")
	m = strings.TrimPrefix(m, "TESLA-")
	return strings.ReplaceAll(m, " ", "-")
}

// candidates are running instances in h's scope that no commitment fully
// covers and that h could cover: what its unused part could pay for.
func (a *allocator) candidates(h *fleet.Held) ([]string, int) {
	fam := Family(h.InstanceType)
	var out []string
	n := 0
	for _, u := range a.inScope(h) {
		if u.hours <= 0 || u.in.Lifecycle == fleet.Spot || u.share()+u.heldShare() >= maxShare || !inScope(h, u.in) {
			continue
		}
		ok := false
		switch {
		case h.Kind == fleet.HeldResourceCUD:
			names := make([]string, 0, len(h.Resources))
			for _, r := range h.Resources {
				names = append(names, resourceKey(r.Type, r.GPUModel))
			}
			ok = len(cudNeed(h, u, names, nil)) > 0
		case h.Kind == fleet.HeldEC2SavingsPlan:
			ok = strings.EqualFold(Family(u.in.InstanceType), h.InstanceFamily)
		case h.PerHour():
			ok = true
		case h.SizeFlexible && normalizes(h):
			ok = Family(u.in.InstanceType) == fam
		case a.isfGroup(h) != nil:
			_, _, ok = a.in.ISF.units(h.InstanceType, u.in.InstanceType)
		default:
			ok = strings.EqualFold(u.in.InstanceType, h.InstanceType)
		}
		if ok {
			if len(out) < maxCandidates {
				out = append(out, u.in.ID)
			}
			n++
		}
	}
	return out, n
}

// onDemand is the instance's uncovered hourly price: the fleet's hourlyPrice
// (a negotiated rate) for an instance not on a commitment, else the
// catalog's on-demand price.
func onDemand(cat pricing.Catalog, in *fleet.Instance) (decimal.Decimal, bool) {
	if in.HourlyPrice != nil && in.Lifecycle != fleet.Committed {
		return *in.HourlyPrice, true
	}
	o, ok := cat.Offer(in.Provider, in.Region, priceName(cat, in))
	if !ok || o.OnDemand == nil {
		return decimal.Zero, false
	}
	return o.OnDemand.Hourly, true
}

// Family is an AWS instance type's family ("p5" of "p5.48xlarge"); other
// names are their own family.
func Family(typ string) string {
	if f, _, ok := strings.Cut(typ, "."); ok {
		return strings.ToLower(f)
	}
	return strings.ToLower(typ)
}

// NormalizationFactor is AWS's normalization factor of an instance size
// (nano 0.25, micro 0.5, small 1, medium 2, large 4, xlarge 8, Nxlarge 8N:
// 48xlarge is 384), which size-flexible reserved instances are counted in.
// Metal sizes have a factor per family that this table does not know.
func NormalizationFactor(typ string) (float64, bool) {
	_, size, ok := strings.Cut(strings.ToLower(typ), ".")
	if !ok {
		return 0, false
	}
	switch size {
	case "nano":
		return 0.25, true
	case "micro":
		return 0.5, true
	case "small":
		return 1, true
	case "medium":
		return 2, true
	case "large":
		return 4, true
	case "xlarge":
		return 8, true
	}
	n, found := strings.CutSuffix(size, "xlarge")
	if !found {
		return 0, false
	}
	v, err := strconv.ParseFloat(n, 64)
	if err != nil || !(v >= 2) || v > 1024 || v != math.Trunc(v) {
		return 0, false
	}
	return 8 * v, true
}

func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// priceName is the name the instance is priced under: a managed AI item's
// price key (ml.*, vertex-ai/…), a VM's catalog type.
func priceName(cat pricing.Catalog, in *fleet.Instance) string {
	if in.IsManaged() {
		return in.PriceKey()
	}
	return pricing.TypeNameOf(cat, in)
}
