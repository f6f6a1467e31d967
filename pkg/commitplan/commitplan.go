// Package commitplan chooses how much steady GPU capacity to commit to (savings
// plans, reserved instances, committed use discounts) from hourly usage.
//
// Instances are grouped by provider, region and family: the scope of an AWS
// Savings Plan or RI (instance family in a region), an Azure reservation (VM
// series in a region) and a GCP committed use discount (machine family in a
// region). Each group's usage becomes an hourly curve over a representative
// week (longer when samples allow), in on-demand dollars per hour: the unit a
// Compute Savings Plan commits to. For each term the optimizer picks the
// commitment c that minimises
//
//	cost(c) = c·(1−d)·H + Σ_h excess_h(c)
//
// where excess_h(c) is the usage above c in hour h at its price (on-demand, or
// spot for spot-eligible work), which for on-demand usage is the level exceeded
// in a share (1−d) of the hours. The package is pure: items and discounts in, a
// Plan out (Build); Allocate splits each group's saving over its instances.
// docs/commit-plan.md explains the model.
package commitplan

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/envelope"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	exact "github.com/gpufinops/gpufinops/pkg/money"
)

// The commitment terms gpufinops knows, and the recommendation for none.
const (
	Term1y = "1y"
	Term3y = "3y"
	None   = "none"
)

// The layers of a group's capacity: committed base, spot burst, on-demand reserve.
const (
	LayerBase    = "base"
	LayerBurst   = "burst"
	LayerReserve = "reserve"
)

// Winners of a spot check.
const (
	WinnerSpot       = "spot"
	WinnerCommitment = "commitment"
)

// Item is one instance as the plan leaves it: what it costs on demand, when it
// runs, and whether a commitment may cover it.
type Item struct {
	ID       string         `json:"id"`
	Provider fleet.Provider `json:"provider"`
	Region   string         `json:"region"`
	// Family is the commitment scope inside a region: AWS instance family
	// ("g5"), Azure VM series, GCP machine family.
	Family       string `json:"family"`
	InstanceType string `json:"instanceType,omitempty"`
	// OnDemandHourly is the on-demand price of the instance, USD per hour.
	OnDemandHourly decimal.Decimal `json:"onDemandHourly"`
	// MonthlyHours are the hours a month it runs (730 = always).
	MonthlyHours float64 `json:"monthlyHours"`
	// Schedule places its hours exactly, when known.
	Schedule *fleet.Schedule `json:"schedule,omitempty"`
	// Samples mark the hours it ran (a sample = it was on), used when there is
	// no schedule and they cover at least a week.
	Samples []fleet.Sample `json:"-"`
	// Window is the time the samples were collected over; nil means from the
	// first sample to the last (plus one sampling step). An hour inside it
	// without a sample is an hour the instance was off.
	Window *fleet.TimeRange `json:"-"`
	// Eligible is true when a new commitment may cover it: running, priced,
	// on demand, with utilization data.
	Eligible bool `json:"eligible"`
	// Reason says why it is not eligible.
	Reason string `json:"reason,omitempty"`
	// SpotEligible is true for interruptible work that may run on spot. An
	// eligible one is priced at SpotHourly above the commitment; one that is
	// not eligible (already on spot) is the burst layer.
	SpotEligible bool `json:"spotEligible,omitempty"`
	// SpotHourly is its spot price, USD per hour; zero when unknown.
	SpotHourly decimal.Decimal `json:"spotHourly,omitzero"`
	// Discounts are its own commitment discounts per term, from the rate of
	// its type in its region; nil takes its provider's from Build. A group
	// commits at the lowest discount of its items, so no item is promised
	// more than its own rate.
	Discounts Terms `json:"discounts,omitempty"`
	// PerInstance is true when the commitment is bought as whole instances
	// (an Azure reservation, a GCP CUD) rather than as USD per hour.
	PerInstance bool `json:"perInstance,omitempty"`
	// Rates are the public commitment rates of its type per term, USD per
	// instance-hour, where known (not for a configured discount). A group
	// bought as whole instances is priced at its unit type's rate: what
	// the purchase costs, whatever the instances pay on demand.
	Rates map[string]decimal.Decimal `json:"rates,omitempty"`
	// Units, when set, makes the item a count of one resource (vCPUs, GiB
	// of memory, GPUs of a model) rather than an instance: a GCP
	// resource-based CUD buys these. OnDemandHourly and Rates are then for
	// all its units, InstanceType names the unit ("vCPU", "GiB", "L4"),
	// and a group of such items is bought in single units.
	Units float64 `json:"units,omitempty"`
}

// Terms maps a commitment term ("1y", "3y") to its discount, a fraction of the
// on-demand price (0.35 = 35 % off).
type Terms map[string]float64

// Options tune Build; the zero value gives the defaults.
type Options struct {
	// MaxWeeks caps the usage axis when samples span several weeks (default 4).
	MaxWeeks int
	// TrendPercent is the change of the last week's mean usage against the
	// weeks before that counts as a trend (default 20): the commitment is
	// then sized on the last week alone.
	TrendPercent float64
	// CurvePoints is the number of steps of each term's cost curve (default 24).
	CurvePoints int
	// Term is the term the policy buys (policy.commitment.term): a group's
	// Recommended is that term where it saves money, else none, and every
	// term is still planned for comparison. Empty recommends the term that
	// saves most. analyze and commit-plan read Recommended, so both give
	// the one answer this decides.
	Term string
}

// Plan is the commitments the engine proposes for a fleet.
type Plan struct {
	// Hours is the length of the usage axis: 168 × weeks.
	Hours int `json:"hours"`
	// Start is the hour (UTC) the axis begins at, when samples date it: the
	// start of the earliest sampling window.
	Start *time.Time `json:"start,omitempty"`
	// Groups are the commitment scopes, by provider, region and family.
	Groups []GroupPlan `json:"groups"`
	// SavingsMonthly is the sum of the recommended terms' savings.
	SavingsMonthly decimal.Decimal `json:"savingsMonthly"`
	// Assumptions list what the plan assumed where the data was silent.
	Assumptions []string `json:"assumptions"`
}

// GroupPlan is one commitment scope: its usage and the plan for each term.
type GroupPlan struct {
	Provider fleet.Provider `json:"provider"`
	Region   string         `json:"region"`
	Family   string         `json:"family"`
	// Kind is the commitment kind the group is planned in, where its
	// planner chose one of several (an Azure savings plan or reservation);
	// empty when it is the policy's for the provider.
	Kind string `json:"kind,omitempty"`
	// KindNote says how that choice was made: what each kind saves.
	KindNote string `json:"kindNote,omitempty"`
	// Items are the instances in the usage curve (the committable ones).
	Items []string `json:"items"`
	// SpotItems already run on spot: the burst layer, outside the curve.
	SpotItems []string `json:"spotItems,omitempty"`
	// Excluded are the other instances of the group, with the reason.
	Excluded []Exclusion `json:"excluded,omitempty"`
	// PlacementAssumed lists items whose hours were known only as a count and
	// were placed where they make usage least steady.
	PlacementAssumed []string `json:"placementAssumed,omitempty"`
	// HourlyUsage is the curve: committable usage in on-demand USD per hour,
	// one value per hour of the axis.
	HourlyUsage []float64 `json:"hourlyUsage"`
	// Usage summarises the curve.
	Usage UsageSummary `json:"usage"`
	// AllOnDemandMonthly is what the group would cost with every instance in
	// it (spot ones too) on demand.
	AllOnDemandMonthly decimal.Decimal `json:"allOnDemandMonthly"`
	// Terms is the plan per term, shortest first.
	Terms []TermPlan `json:"terms"`
	// Recommended is the term to buy (Options.Term where it saves, else
	// the term that saves most), or "none".
	Recommended string `json:"recommended"`
	// Trend, when set, says usage rose or fell materially within the window;
	// the terms are then sized on the last week only.
	Trend *Trend `json:"trend,omitempty"`
}

// Trend is a material change of a group's usage within the window.
type Trend struct {
	// Direction is "fell" or "rose".
	Direction string `json:"direction"`
	// EarlierMean and RecentMean are the mean usage (on-demand USD per hour)
	// before the last week and in it.
	EarlierMean float64 `json:"earlierMean"`
	RecentMean  float64 `json:"recentMean"`
	// ChangePercent is 100 × (recent − earlier) / earlier.
	ChangePercent float64 `json:"changePercent"`
	// SizedOnHours is the span the commitment was sized on (the last week).
	SizedOnHours int `json:"sizedOnHours"`
}

// Trend directions.
const (
	TrendFell = "fell"
	TrendRose = "rose"
)

// Exclusion is an instance left out of a group's curve.
type Exclusion struct {
	ID     string `json:"id"`
	Reason string `json:"reason"`
}

// UsageSummary describes a usage curve in on-demand USD per hour.
type UsageSummary struct {
	Min  float64 `json:"min"`
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	Max  float64 `json:"max"`
	// RunningShare is the share of hours with any usage.
	RunningShare float64 `json:"runningShare"`
}

// TermPlan is the best commitment for one term and what it costs. Money is USD
// per month rounded to cents; TotalMonthly = Committed + OnDemand + Spot, and
// SavingsMonthly = BaselineMonthly − TotalMonthly.
type TermPlan struct {
	Term string `json:"term"`
	// Discount is the commitment's discount off on-demand.
	Discount float64 `json:"discount"`
	// CommitHourly is the commitment c: the on-demand USD per hour it covers.
	CommitHourly decimal.Decimal `json:"commitHourly"`
	// Quantity, UnitType and UnitHourly are set for a group bought as whole
	// instances: UnitHourly is the on-demand price of UnitType (the group's
	// smallest type). UnitRate, when its public commitment rate is known,
	// is that rate: PayHourly is then Quantity × UnitRate exactly, and
	// CommitHourly is Quantity × UnitRate/(1−d), the on-demand usage the
	// units cover; else CommitHourly is Quantity × UnitHourly.
	Quantity   int             `json:"quantity,omitempty"`
	UnitType   string          `json:"unitType,omitempty"`
	UnitHourly decimal.Decimal `json:"unitHourly,omitzero"`
	UnitRate   decimal.Decimal `json:"unitRate,omitzero"`
	// PayHourly is what the commitment costs per hour, c·(1−d): the figure a
	// Savings Plan's hourly commitment is stated in.
	PayHourly decimal.Decimal `json:"payHourly"`
	// CommittedMonthly is c·(1−d)·730, paid whether used or not.
	CommittedMonthly decimal.Decimal `json:"committedMonthly"`
	// OnDemandMonthly is usage above c that runs on demand (the reserve).
	OnDemandMonthly decimal.Decimal `json:"onDemandMonthly"`
	// SpotMonthly is usage on spot (the burst): spot-eligible usage above c
	// and the instances already on spot.
	SpotMonthly  decimal.Decimal `json:"spotMonthly"`
	TotalMonthly decimal.Decimal `json:"totalMonthly"`
	// BaselineMonthly is the cost with no commitment: spot-eligible usage on
	// spot, the rest on demand. It equals AllOnDemandMonthly without spot.
	BaselineMonthly decimal.Decimal `json:"baselineMonthly"`
	// SavingsMonthly is what the commitment saves over the baseline.
	SavingsMonthly decimal.Decimal `json:"savingsMonthly"`
	// Utilization is the share of the committed dollars actually used.
	Utilization float64 `json:"utilization"`
	// BreakEven is 1−d: a commitment at a level pays when usage exceeds that
	// level in more than this share of hours.
	BreakEven float64 `json:"breakEven"`
	// ExceedShare is the share of hours usage reaches c (the commitment is
	// fully used).
	ExceedShare float64 `json:"exceedShare"`
	// Layers splits the group's usage into base, burst and reserve.
	Layers Layers `json:"layers"`
	// Spot compares committing with spot for each spot-eligible instance.
	Spot []SpotCheck `json:"spot,omitempty"`
	// Allocations split SavingsMonthly over the instances that use the
	// commitment; they add up to it exactly.
	Allocations []Allocation `json:"allocations,omitempty"`
	// Curve is the total monthly cost at commitment levels from 0 to the peak.
	Curve []CurvePoint `json:"curve"`
}

// Layers is the base + burst + reserve split of a group's usage.
type Layers struct {
	Base    Layer `json:"base"`
	Burst   Layer `json:"burst"`
	Reserve Layer `json:"reserve"`
}

// Layer is the usage one layer carries and what it costs.
type Layer struct {
	// UsageMonthly is the usage it carries, in on-demand USD a month.
	UsageMonthly decimal.Decimal `json:"usageMonthly"`
	// CostMonthly is what it costs (for the base: the whole commitment).
	CostMonthly decimal.Decimal `json:"costMonthly"`
	// Share is its part of the group's usage.
	Share float64 `json:"share"`
}

// SpotCheck compares a commitment with spot for one spot-eligible instance: a
// commitment sized to it costs OD·(1−d)·730 a month, spot costs
// OD·(1−s)·hours, so the commitment wins only when it runs more than
// (1−d)/(1−s) of the month's hours.
type SpotCheck struct {
	ID string `json:"id"`
	// SpotDiscount is s = 1 − spot/on-demand.
	SpotDiscount float64 `json:"spotDiscount"`
	// HoursShare is its monthly hours / 730 (above 1 with checkpoint overhead).
	HoursShare float64 `json:"hoursShare"`
	// BreakEven is (1−d)/(1−s): at or above 1 spot wins at any usage.
	BreakEven float64 `json:"breakEven"`
	// SpotMonthly is its cost on spot, spot price × monthly hours.
	SpotMonthly decimal.Decimal `json:"spotMonthly"`
	// CommitMonthly is a commitment sized to it, on-demand × (1−d) × 730.
	CommitMonthly decimal.Decimal `json:"commitMonthly"`
	// Winner is the cheaper: "spot" (ties too) or "commitment".
	Winner string `json:"winner"`
	// AlreadyOnSpot is true for an instance the plan runs on spot.
	AlreadyOnSpot bool `json:"alreadyOnSpot"`
	// SavingsMonthly is how much the winner saves over the other.
	SavingsMonthly decimal.Decimal `json:"savingsMonthly"`
}

// Allocation is one instance's part of a group's commitment saving.
type Allocation struct {
	ID string `json:"id"`
	// BandShare is its share of the usage inside the committed band.
	BandShare      float64         `json:"bandShare"`
	SavingsMonthly decimal.Decimal `json:"savingsMonthly"`
}

// CurvePoint is the group's total monthly cost at one commitment level.
type CurvePoint struct {
	// CommitHourly is the level, on-demand USD per hour.
	CommitHourly float64         `json:"commitHourly"`
	TotalMonthly decimal.Decimal `json:"totalMonthly"`
}

var (
	hoursPerMonth = decimal.NewFromFloat(fleet.HoursPerMonth)
	hundred       = decimal.NewFromInt(100)
)

// Build plans commitments for the items, with the discounts per provider. It
// is pure and deterministic; it fails only on invalid input (a discount
// outside [0, 1), a negative price or hour count, a duplicate ID, a schedule
// it cannot read).
func Build(items []Item, discounts map[fleet.Provider]Terms, opts Options) (Plan, error) {
	if opts.MaxWeeks <= 0 {
		opts.MaxWeeks = 4
	}
	if opts.CurvePoints <= 0 {
		opts.CurvePoints = 24
	}
	if opts.TrendPercent <= 0 || math.IsNaN(opts.TrendPercent) {
		opts.TrendPercent = 20
	}
	b := newBuilder()
	if err := validate(items, discounts, b); err != nil {
		return Plan{}, err
	}
	ax, notes := newAxis(items, opts.MaxWeeks, b.spans)
	b.ax = ax
	plan := Plan{Hours: ax.hours, Groups: []GroupPlan{}, Assumptions: append([]string{}, notes...)}
	if ax.dated {
		s := ax.start
		plan.Start = &s
	}
	for _, p := range providersOf(items) {
		if len(discounts[p]) == 0 && hasEligible(items, p) {
			plan.Assumptions = append(plan.Assumptions, fmt.Sprintf("no commitment discounts are set for %s: its groups get no commitment", p))
		}
	}
	groups := groupItems(items)
	plan.Groups = make([]GroupPlan, 0, len(groups))
	for _, g := range groups {
		gp, gnotes, err := b.buildGroup(g, discounts[g[0].Provider], opts)
		if err != nil {
			return Plan{}, err
		}
		plan.Groups = append(plan.Groups, gp)
		plan.Assumptions = append(plan.Assumptions, gnotes...)
		for _, t := range gp.Terms {
			if t.Term == gp.Recommended {
				plan.SavingsMonthly = plan.SavingsMonthly.Add(t.SavingsMonthly)
			}
		}
	}
	return plan, nil
}

func validate(items []Item, discounts map[fleet.Provider]Terms, b *builder) error {
	for _, p := range slices.Sorted(mapKeys(discounts)) {
		for _, term := range slices.Sorted(mapKeys(discounts[p])) {
			if d := discounts[p][term]; !(d >= 0 && d < 1) {
				return fmt.Errorf("commitplan: %s %s discount %v is not a fraction in [0, 1)", p, term, d)
			}
		}
	}
	seen := make(map[string]struct{}, len(items))
	for i := range items {
		it := &items[i]
		_, dup := seen[it.ID]
		switch {
		case it.ID == "":
			return fmt.Errorf("commitplan: an item has no ID")
		case dup:
			return fmt.Errorf("commitplan: item %s appears twice", it.ID)
		case it.OnDemandHourly.IsNegative() || it.SpotHourly.IsNegative():
			return fmt.Errorf("commitplan: item %s: negative price", it.ID)
		case it.MonthlyHours < 0 || math.IsNaN(it.MonthlyHours) || math.IsInf(it.MonthlyHours, 0):
			return fmt.Errorf("commitplan: item %s: monthly hours %v are not a non-negative number", it.ID, it.MonthlyHours)
		}
		if !fractions(it.Discounts) {
			for _, term := range slices.Sorted(mapKeys(it.Discounts)) {
				if d := it.Discounts[term]; !(d >= 0 && d < 1) {
					return fmt.Errorf("commitplan: item %s: %s discount %v is not a fraction in [0, 1)", it.ID, term, d)
				}
			}
		}
		seen[it.ID] = struct{}{}
		if it.Eligible && it.Schedule != nil {
			if err := b.check(it.Schedule); err != nil {
				return fmt.Errorf("commitplan: item %s: schedule %w", it.ID, err)
			}
		}
	}
	return nil
}

// fractions reports whether every discount is in [0, 1).
func fractions(t Terms) bool {
	for _, d := range t {
		if !(d >= 0 && d < 1) {
			return false
		}
	}
	return true
}

func mapKeys[K cmp.Ordered, V any](m map[K]V) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func providersOf(items []Item) []fleet.Provider {
	var ps []fleet.Provider
	for _, it := range items {
		if !slices.Contains(ps, it.Provider) {
			ps = append(ps, it.Provider)
		}
	}
	slices.SortFunc(ps, compareProviders)
	return ps
}

func hasEligible(items []Item, p fleet.Provider) bool {
	for i := range items {
		it := &items[i]
		if it.Provider == p && it.Eligible && it.Discounts == nil && it.OnDemandHourly.IsPositive() && it.MonthlyHours > 0 {
			return true
		}
	}
	return false
}

// compareProviders orders the known clouds as fleet.Providers does, others after by name.
func compareProviders(a, b fleet.Provider) int {
	ia, ib := slices.Index(fleet.Providers, a), slices.Index(fleet.Providers, b)
	if ia < 0 {
		ia = len(fleet.Providers)
	}
	if ib < 0 {
		ib = len(fleet.Providers)
	}
	return cmp.Or(cmp.Compare(ia, ib), cmp.Compare(a, b))
}

// groupItems splits items by provider, region and family, in that order, each
// group's items by ID. The groups point into items, in one backing array.
func groupItems(items []Item) [][]*Item {
	type key struct {
		provider       fleet.Provider
		region, family string
	}
	index := map[key]int{}
	var keys []key
	var sizes []int
	of := make([]int, len(items))
	for i := range items {
		it := &items[i]
		k := key{it.Provider, it.Region, it.Family}
		g, ok := index[k]
		if !ok {
			g = len(keys)
			index[k] = g
			keys, sizes = append(keys, k), append(sizes, 0)
		}
		of[i] = g
		sizes[g]++
	}
	order := make([]int, len(keys))
	for g := range order {
		order[g] = g
	}
	slices.SortFunc(order, func(a, b int) int {
		x, y := keys[a], keys[b]
		return cmp.Or(compareProviders(x.provider, y.provider), cmp.Compare(x.region, y.region), cmp.Compare(x.family, y.family))
	})
	// start[g] is where group g begins in the backing array.
	start := make([]int, len(keys))
	at := 0
	for _, g := range order {
		start[g] = at
		at += sizes[g]
	}
	backing := make([]*Item, len(items))
	fill := slices.Clone(start)
	for i := range items {
		backing[fill[of[i]]] = &items[i]
		fill[of[i]]++
	}
	groups := make([][]*Item, 0, len(keys))
	for _, g := range order {
		grp := backing[start[g] : start[g]+sizes[g] : start[g]+sizes[g]]
		slices.SortFunc(grp, func(a, b *Item) int { return cmp.Compare(a.ID, b.ID) })
		groups = append(groups, grp)
	}
	return groups
}

// committable reports whether an item goes into the usage curve, and why not.
func committable(it *Item) (bool, string) {
	switch {
	case !it.Eligible:
		if it.Reason == "" {
			return false, "not eligible"
		}
		return false, it.Reason
	case !it.OnDemandHourly.IsPositive():
		return false, "no on-demand price"
	case it.MonthlyHours <= 0:
		return false, "runs no hours"
	}
	return true, ""
}

// onSpot reports whether an ineligible item is spot capacity: the burst layer.
func onSpot(it *Item) bool {
	return !it.Eligible && it.SpotEligible && it.SpotHourly.IsPositive()
}

// ReasonNoRate excludes an instance whose type and region have no known
// commitment rate: it gets no commitment rather than an assumed discount.
const ReasonNoRate = "no commitment rate for its type and region"

func (b *builder) buildGroup(items []*Item, providerTerms Terms, opts Options) (GroupPlan, []string, error) {
	ax := b.ax
	first := items[0]
	gp := GroupPlan{Provider: first.Provider, Region: first.Region, Family: first.Family, Items: []string{}, Terms: []TermPlan{}, Recommended: None}
	var curveItems, spotItems []*Item
	allOD := decimal.Zero
	var terms Terms
	for _, it := range items {
		if onSpot(it) {
			spotItems = append(spotItems, it)
			gp.SpotItems = append(gp.SpotItems, it.ID)
			allOD = allOD.Add(monthly(it.OnDemandHourly, it.MonthlyHours))
			continue
		}
		ok, why := committable(it)
		own := it.Discounts
		if own == nil {
			own = providerTerms
		}
		if ok && it.Discounts != nil && len(own) == 0 {
			ok, why = false, ReasonNoRate
		}
		if !ok {
			gp.Excluded = append(gp.Excluded, Exclusion{ID: it.ID, Reason: why})
			continue
		}
		terms = intersectTerms(terms, own, len(curveItems) == 0)
		if curveItems == nil {
			curveItems = make([]*Item, 0, len(items))
			gp.Items = make([]string, 0, len(items))
		}
		curveItems = append(curveItems, it)
		gp.Items = append(gp.Items, it.ID)
		allOD = allOD.Add(monthly(it.OnDemandHourly, it.MonthlyHours))
	}
	if len(curveItems) == 0 {
		terms = providerTerms
	}
	gp.AllOnDemandMonthly = allOD
	c, notes, err := b.buildCurve(curveItems)
	if err != nil {
		return GroupPlan{}, nil, err
	}
	gp.PlacementAssumed = c.assumed
	gp.HourlyUsage = make([]float64, ax.hours)
	for h := range gp.HourlyUsage {
		gp.HourlyUsage[h] = round(c.top(h), 6)
	}
	gp.Usage = summarize(gp.HourlyUsage)
	sized := c
	if tr := trendOf(gp.HourlyUsage, opts.TrendPercent); tr != nil {
		gp.Trend = tr
		sized = c.tail(tr.SizedOnHours)
		notes = append(notes, fmt.Sprintf("%s %s %s: usage %s %s %% within the window (mean $%s/h before the last week, $%s/h in it); the commitment is sized on the last week",
			gp.Provider, gp.Region, gp.Family, tr.Direction, num(math.Abs(tr.ChangePercent)),
			strconv.FormatFloat(tr.EarlierMean, 'f', 3, 64), strconv.FormatFloat(tr.RecentMean, 'f', 3, 64)))
	}
	var unit unitOf
	if len(curveItems) > 0 {
		unit.perInstance = true
		for _, it := range curveItems {
			unit.perInstance = unit.perInstance && it.PerInstance
			hourly, rates := it.OnDemandHourly, it.Rates
			if it.Units > 0 {
				hourly, rates = perUnit(hourly, it.Units), make(map[string]decimal.Decimal, len(it.Rates))
				for term, r := range it.Rates {
					rates[term] = perUnit(r, it.Units)
				}
			}
			if unit.hourly.IsZero() || hourly.LessThan(unit.hourly) || (hourly.Equal(unit.hourly) && it.InstanceType < unit.typ) {
				unit.hourly, unit.typ, unit.rates = hourly, it.InstanceType, rates
			}
		}
	}

	spot := spotOf(spotItems, curveItems)
	for _, term := range sortedTerms(terms) {
		gp.Terms = append(gp.Terms, planTerm(sized, term, terms[term], spot, unit, opts))
	}
	gp.Recommended = recommended(gp.Terms, opts.Term)
	return gp, notes, nil
}

// perUnit is an amount for n units, per unit.
func perUnit(v decimal.Decimal, n float64) decimal.Decimal {
	return v.DivRound(decimal.NewFromFloat(n), 9)
}

// recommended is the term to buy: the policy's term where it saves money,
// else none; with no policy term, the term that saves most (the shorter on
// a tie).
func recommended(terms []TermPlan, policy string) string {
	best, rec := decimal.Zero, None
	for _, t := range terms {
		if (policy == "" || t.Term == policy) && t.SavingsMonthly.GreaterThan(best) {
			best, rec = t.SavingsMonthly, t.Term
		}
	}
	return rec
}

// unitOf is what a group bought as whole instances is counted in.
type unitOf struct {
	perInstance bool
	typ         string
	hourly      decimal.Decimal
	// rates are the unit type's public commitment rates by term.
	rates map[string]decimal.Decimal
}

// intersectTerms keeps the terms both have, at the lower discount; the
// first item's terms start the set (a copy). Later calls change have in place.
func intersectTerms(have, add Terms, first bool) Terms {
	if first {
		out := make(Terms, len(add))
		for k, v := range add {
			out[k] = v
		}
		return out
	}
	for k, v := range have {
		if w, ok := add[k]; ok {
			have[k] = math.Min(v, w)
		} else {
			delete(have, k)
		}
	}
	return have
}

// trendOf compares the last week's mean usage with the mean of the weeks
// before it; a change of at least pct percent is a trend. A curve shorter
// than two weeks has no trend (a single week's shape is its weekly pattern).
func trendOf(u []float64, pct float64) *Trend {
	wk := int(fleet.HoursPerWeek)
	if len(u) < 2*wk {
		return nil
	}
	n := len(u) - wk
	earlier, recent := sumOf(u[:n])/float64(n), sumOf(u[n:])/float64(wk)
	var change float64
	switch {
	case earlier > 0:
		change = 100 * (recent - earlier) / earlier
	case recent > 0:
		change = 100
	default:
		return nil
	}
	if math.Abs(change) < pct {
		return nil
	}
	t := &Trend{Direction: TrendRose, EarlierMean: round(earlier, 6), RecentMean: round(recent, 6), ChangePercent: round(change, 1), SizedOnHours: wk}
	if change < 0 {
		t.Direction = TrendFell
	}
	return t
}

// sortedTerms orders terms by length ("1y" before "3y"), others by name.
func sortedTerms(terms Terms) []string {
	out := slices.Collect(mapKeys(terms))
	sort.Slice(out, func(i, j int) bool {
		if len(out[i]) != len(out[j]) {
			return len(out[i]) < len(out[j])
		}
		return out[i] < out[j]
	})
	return out
}

func planTerm(c *curve, term string, d float64, spot groupSpot, unit unitOf, opts Options) TermPlan {
	spotFixed := spot.fixed
	opt := round(c.optimum(d), 6)
	level := opt
	tp := TermPlan{Term: term, Discount: d, BreakEven: round(1-d, 6)}
	whole := unit.perInstance && unit.hourly.IsPositive()
	qty := 0
	rate := unit.rates[term]
	cover := unit.hourly
	if whole && rate.IsPositive() && d < 1 {
		// A unit costs its public rate and covers the usage that rate
		// buys at the group's discount.
		cover = rate.Div(oneMinus(d))
	}
	if whole {
		// Bought in whole instances: the best whole number of the unit is
		// next to the optimum, below or above it (the cost is convex).
		u := cover.InexactFloat64()
		lo := math.Floor(opt/u + 1e-9)
		qty, level = int(lo), round(lo*u, 6)
		if hi := round((lo+1)*u, 6); level < opt && c.monthly(hi, d, spotFixed).total.LessThan(c.monthly(level, d, spotFixed).total) {
			qty, level = qty+1, hi
		}
	}
	cost := c.monthly(level, d, spotFixed)
	base := c.monthly(0, d, spotFixed)
	if !cost.total.LessThan(base.total) {
		// Committing never pays (or saves less than a cent): commit nothing.
		level, cost, qty = 0, base, 0
	}
	tp.CommitHourly = decimal.NewFromFloat(level)
	tp.PayHourly = tp.CommitHourly.Mul(oneMinus(d)).Round(6)
	if whole {
		tp.Quantity, tp.UnitType, tp.UnitHourly = qty, unit.typ, unit.hourly
		if rate.IsPositive() {
			tp.UnitRate = rate
			tp.PayHourly = rate.Mul(decimal.NewFromInt(int64(qty)))
		}
	}
	tp.CommittedMonthly, tp.OnDemandMonthly, tp.SpotMonthly, tp.TotalMonthly = cost.committed, cost.onDemand, cost.spot, cost.total
	tp.BaselineMonthly = base.total
	tp.SavingsMonthly = base.total.Sub(cost.total)
	if level > 0 {
		tp.Utilization = round(cost.use.covered/(level*float64(c.hours)), 4)
		tp.ExceedShare = round(float64(c.reaching(level))/float64(c.hours), 4)
	}
	tp.Layers = c.layers(level, cost, spot.onDemand)
	tp.Spot = spotChecks(d, spot.checks)
	tp.Allocations = c.allocate(level, tp.SavingsMonthly)
	tp.Curve = c.costCurve(level, d, spotFixed, opts.CurvePoints)
	return tp
}

// monthly is hourly × hours, rounded to cents, as the engine prices an instance.
func monthly(hourly decimal.Decimal, hours float64) decimal.Decimal {
	return exact.MulRound(hourly, decimal.NewFromFloat(hours), 2)
}

func oneMinus(d float64) decimal.Decimal { return decimal.NewFromInt(1).Sub(decimal.NewFromFloat(d)) }

// pow10[n] is math.Pow(10, n), which is exact for these n.
var pow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9}

func round(v float64, places int) float64 {
	var p float64
	if places >= 0 && places < len(pow10) {
		p = pow10[places]
	} else {
		p = math.Pow(10, float64(places))
	}
	r := math.Round(v*p) / p
	if r == 0 {
		return 0 // no negative zero
	}
	return r
}

func summarize(u []float64) UsageSummary {
	if len(u) == 0 {
		return UsageSummary{}
	}
	s := slices.Clone(u)
	slices.Sort(s)
	var sum float64
	running := 0
	for _, v := range s {
		sum += v
		if v > 0 {
			running++
		}
	}
	return UsageSummary{
		Min:          s[0],
		Mean:         round(sum/float64(len(s)), 6),
		P50:          round(fleet.Percentile(s, 50), 6),
		Max:          s[len(s)-1],
		RunningShare: round(float64(running)/float64(len(s)), 4),
	}
}

// groupSpot is what a group's terms share of its spot capacity: the monthly
// cost of the instances already on spot, at spot and at on-demand prices,
// and the term-free part of each spot check, by ID.
type groupSpot struct {
	fixed, onDemand decimal.Decimal
	checks          []spotBase
}

// spotBase is a spot check without the term's discount.
type spotBase struct {
	it *Item
	s  float64
	sc SpotCheck
}

func spotOf(spotItems, curveItems []*Item) groupSpot {
	g := groupSpot{fixed: decimal.Zero, onDemand: decimal.Zero}
	for _, it := range spotItems {
		g.fixed = g.fixed.Add(monthly(it.SpotHourly, it.MonthlyHours))
	}
	for _, it := range spotItems {
		g.onDemand = g.onDemand.Add(monthly(it.OnDemandHourly, it.MonthlyHours))
	}
	add := func(it *Item, already bool) {
		if !it.SpotEligible || !it.SpotHourly.IsPositive() || !it.OnDemandHourly.IsPositive() || !it.SpotHourly.LessThan(it.OnDemandHourly) {
			return
		}
		s := 1 - it.SpotHourly.Div(it.OnDemandHourly).InexactFloat64()
		g.checks = append(g.checks, spotBase{it: it, s: s, sc: SpotCheck{
			ID:            it.ID,
			SpotDiscount:  round(s, 4),
			HoursShare:    round(it.MonthlyHours/fleet.HoursPerMonth, 4),
			SpotMonthly:   monthly(it.SpotHourly, it.MonthlyHours),
			AlreadyOnSpot: already,
		}})
	}
	for _, it := range curveItems {
		add(it, false)
	}
	for _, it := range spotItems {
		add(it, true)
	}
	slices.SortFunc(g.checks, func(a, b spotBase) int { return cmp.Compare(a.sc.ID, b.sc.ID) })
	return g
}

// spotChecks compares, for each spot-eligible instance of the group, a
// commitment sized to it with running it on spot.
func spotChecks(d float64, base []spotBase) []SpotCheck {
	if len(base) == 0 {
		return nil
	}
	out := make([]SpotCheck, len(base))
	for i, b := range base {
		sc := b.sc
		sc.BreakEven = round((1-d)/(1-b.s), 4)
		sc.CommitMonthly = b.it.OnDemandHourly.Mul(oneMinus(d)).Mul(hoursPerMonth).Round(2)
		sc.Winner = WinnerSpot
		if sc.CommitMonthly.LessThan(sc.SpotMonthly) {
			sc.Winner = WinnerCommitment
		}
		sc.SavingsMonthly = sc.SpotMonthly.Sub(sc.CommitMonthly).Abs()
		out[i] = sc
	}
	return out
}

// Allocate returns, for every group with a recommended term, each instance's
// part of that term's saving (TermPlan.Allocations): split in proportion to
// the instance's usage inside the committed band (valued at its price without
// the commitment), rounding remainders given a cent at a time to the largest
// fractions, then by ID, so each group's parts add up to its saving exactly.
// Instances that use no commitment are absent.
func Allocate(p Plan) map[string]decimal.Decimal {
	out := map[string]decimal.Decimal{}
	for _, g := range p.Groups {
		for _, t := range g.Terms {
			if t.Term != g.Recommended {
				continue
			}
			for _, a := range t.Allocations {
				out[a.ID] = a.SavingsMonthly
			}
		}
	}
	return out
}

// splitCents divides total (cents exact) over weights so the parts add up to
// it exactly: each part is floored to the cent, then the remaining cents go
// to the largest remainders, ties to the earlier ID.
func splitCents(total decimal.Decimal, ids []string, weights []float64) []decimal.Decimal {
	parts := make([]decimal.Decimal, len(ids))
	var wsum decimal.Decimal
	ws := make([]decimal.Decimal, len(ids))
	for i, w := range weights {
		ws[i] = decimal.NewFromFloat(w)
		wsum = wsum.Add(ws[i])
	}
	if !wsum.IsPositive() || !total.IsPositive() {
		for i := range parts {
			parts[i] = decimal.Zero
		}
		return parts
	}
	cents := total.Mul(hundred)
	type rem struct {
		i    int
		frac decimal.Decimal
	}
	rems := make([]rem, len(ids))
	given := decimal.Zero
	for i := range ids {
		raw := cents.Mul(ws[i]).DivRound(wsum, 16)
		fl := raw.Floor()
		parts[i] = fl
		given = given.Add(fl)
		rems[i] = rem{i, raw.Sub(fl)}
	}
	slices.SortStableFunc(rems, func(a, b rem) int {
		return cmp.Or(-a.frac.Cmp(b.frac), strings.Compare(ids[a.i], ids[b.i]))
	})
	left := cents.Sub(given).IntPart()
	for k := 0; k < int(left) && k < len(rems); k++ {
		parts[rems[k].i] = parts[rems[k].i].Add(decimal.NewFromInt(1))
	}
	for i := range parts {
		parts[i] = parts[i].Div(hundred)
	}
	return parts
}

// Kind and SchemaVersion head the JSON document of a plan.
const (
	Kind          = "CommitPlan"
	SchemaVersion = "1.0"
)

// Document is the JSON document of `gpufinops commit-plan -o json`: the
// header, then the plan.
type Document struct {
	envelope.Header
	Plan
}

// NewDocument is p's JSON document.
func NewDocument(p Plan) Document { return Document{envelope.New(Kind, SchemaVersion), p} }
