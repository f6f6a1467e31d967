package pricing

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// Commitment terms, the keys of Offer.Commitments.
const (
	Term1y = "1y"
	Term3y = "3y"
)

// CommitmentTerm returns the term ("1y", "3y") a commitment option prices,
// and false for on-demand, spot and unknown options.
func CommitmentTerm(o Option) (string, bool) {
	switch o {
	case SavingsPlan1y:
		return Term1y, true
	case SavingsPlan3y:
		return Term3y, true
	}
	return "", false
}

// Overlay returns a Catalog that answers like base, with live prices laid
// over it: an offer's OnDemand and Spot are replaced by the live price of
// the same provider, region and type where there is one, and its
// Commitments are filled from live commitment prices (savings-plan-1y/3y).
// Everything else (hardware, spot advice, corrections, offers without live
// prices, the prices live data lacks) comes from base unchanged. A live price
// for a region base does not list makes an offer there if base knows the
// type's hardware. Sources adds one entry per provider, e.g. "AWS live prices",
// dated with the newest live price.
//
// Live prices that are not hourly USD prices, or not positive, are ignored.
// When several live prices fit one slot (several accounts read the same
// region), the newest wins, then the cheapest. Each price keeps its Source,
// so a report can say which price came from where.
func Overlay(base Catalog, live []Price) Catalog {
	return OverlayFrom(base, live, scanTime)
}

// OverlaySource names where an overlay's prices come from, in its Sources
// entries: Label follows the cloud's name ("AWS live prices"), Origin
// says how they were read.
type OverlaySource struct {
	Label  string
	Origin string
}

// scanTime is the source of the prices a scan reads.
var scanTime = OverlaySource{Label: "live prices", Origin: "the cloud's price APIs, read at scan time (each price names its API)"}

// OverlayFrom is Overlay with the Sources entries named by src, e.g. for
// prices read earlier and kept in a file (gpufinops catalog update).
func OverlayFrom(base Catalog, live []Price, src OverlaySource) Catalog {
	if base == nil {
		base = emptyCatalog{}
	}
	o := &overlay{Catalog: base, live: map[liveKey]*liveSlot{}, src: src}
	for i := range live {
		p := live[i]
		if !usableLive(p) {
			continue
		}
		if p.Resource != "" {
			if o.resources == nil {
				o.resources = map[resourceKey]*Price{}
			}
			k := resourceKeyOf(p.Provider, p.Region, p.Resource, p.InstanceType, p.Option)
			o.resources[k] = pick(o.resources[k], p)
			continue
		}
		k := liveKey{p.Provider, strings.ToLower(p.Region), strings.ToLower(p.InstanceType)}
		s := o.live[k]
		if s == nil {
			s = &liveSlot{region: p.Region, typ: p.InstanceType}
			o.live[k] = s
		}
		switch p.Option {
		case OnDemand:
			s.onDemand = pick(s.onDemand, p)
		case Spot:
			s.spot = pick(s.spot, p)
		default:
			term, ok := CommitmentTerm(p.Option)
			if !ok {
				continue
			}
			if s.commitments == nil {
				s.commitments = map[string]*Price{}
			}
			if p.Commitment != "" {
				if s.byKind == nil {
					s.byKind = map[kindTerm]*Price{}
				}
				k := kindTerm{p.Commitment, term}
				s.byKind[k] = pick(s.byKind[k], p)
			}
			switch held := s.commitments[term]; {
			case held != nil && held.Commitment != p.Commitment && (held.Commitment == AzureSavingsPlan) != (p.Commitment == AzureSavingsPlan):
				// A reservation's rate before a savings plan's, whatever
				// the order they come in.
				if held.Commitment == AzureSavingsPlan {
					s.commitments[term] = &p
				}
			default:
				s.commitments[term] = pick(held, p)
			}
		}
		o.count(p)
	}
	if len(o.stats) == 0 && len(o.resources) == 0 {
		return base
	}
	// Offers base lacks: live prices in a region base does not list.
	for k, s := range o.live {
		if _, ok := base.Offer(k.provider, s.region, s.typ); ok {
			continue
		}
		t, ok := base.InstanceType(k.provider, s.typ)
		if !ok {
			continue
		}
		o.added = append(o.added, Offer{Type: t, Region: s.region})
	}
	slices.SortFunc(o.added, compareOffers)
	return o
}

type liveKey struct {
	provider fleet.Provider
	region   string // lower case
	typ      string // lower case
}

// liveSlot holds the live prices of one type in one region.
type liveSlot struct {
	region, typ    string
	onDemand, spot *Price
	// commitments are the offer's commitment price of each term: one that
	// names its kind other than a savings plan first where a term has
	// several (an Azure reservation before the savings plan). byKind holds
	// each kind's price of a term, for CommitmentRate.
	commitments map[string]*Price
	byKind      map[kindTerm]*Price
}

// kindTerm is a commitment kind and term.
type kindTerm struct {
	kind CommitmentKind
	term string
}

// liveStats counts what one provider's live prices cover, for Sources.
type liveStats struct {
	prices, cached int
	byOption       map[Option]int
	types, regions map[string]bool
	oldest, newest string
}

type overlay struct {
	Catalog
	live  map[liveKey]*liveSlot
	added []Offer // offers only live prices make, sorted
	stats map[fleet.Provider]*liveStats
	src   OverlaySource
	// resources are the live per-resource prices (Price.Resource).
	resources map[resourceKey]*Price
}

func usableLive(p Price) bool {
	return p.Provider != "" && p.Region != "" && p.InstanceType != "" &&
		p.Currency == Currency && p.Unit == UnitHour && p.Hourly.IsPositive()
}

// pick returns the better of the held price and a candidate: the newer,
// then the cheaper, then the first by zone and source (for a stable result).
func pick(held *Price, p Price) *Price {
	if held != nil {
		c := cmp.Or(
			cmp.Compare(p.AsOf, held.AsOf),
			-p.Hourly.Cmp(held.Hourly),
			-cmp.Compare(p.Zone, held.Zone),
			-cmp.Compare(p.Source, held.Source),
		)
		if c <= 0 {
			return held
		}
	}
	return &p
}

func (o *overlay) count(p Price) {
	if o.stats == nil {
		o.stats = map[fleet.Provider]*liveStats{}
	}
	s := o.stats[p.Provider]
	if s == nil {
		s = &liveStats{byOption: map[Option]int{}, types: map[string]bool{}, regions: map[string]bool{}}
		o.stats[p.Provider] = s
	}
	s.prices++
	if strings.Contains(p.Source, "(cached ") {
		s.cached++
	}
	s.byOption[p.Option]++
	s.types[strings.ToLower(p.InstanceType)] = true
	s.regions[strings.ToLower(p.Region)] = true
	if p.AsOf != "" && (s.oldest == "" || p.AsOf < s.oldest) {
		s.oldest = p.AsOf
	}
	if p.AsOf > s.newest {
		s.newest = p.AsOf
	}
}

// apply lays a slot's live prices over an offer, copying every price.
func (s *liveSlot) apply(off *Offer) {
	if s.onDemand != nil {
		p := *s.onDemand
		off.OnDemand = &p
	}
	if s.spot != nil {
		p := *s.spot
		off.Spot = &p
	}
	if len(s.commitments) > 0 {
		m := make(map[string]*Price, len(s.commitments)+len(off.Commitments))
		for term, p := range off.Commitments {
			m[term] = p
		}
		for term, p := range s.commitments {
			c := *p
			m[term] = &c
		}
		off.Commitments = m
	}
}

// Base is the catalog the live prices are laid over: what a price the
// overlay replaced was before, so that a live price can be compared with a
// catalog one on one basis (the engine's rightsizing does).
func (o *overlay) Base() Catalog { return o.Catalog }

func (o *overlay) slot(provider fleet.Provider, region, typ string) *liveSlot {
	return o.live[liveKey{provider, strings.ToLower(region), strings.ToLower(typ)}]
}

// Offer returns base's offer with the live prices laid over it.
func (o *overlay) Offer(provider fleet.Provider, region, instanceType string) (Offer, bool) {
	off, ok := o.Catalog.Offer(provider, region, instanceType)
	s := o.slot(provider, region, instanceType)
	if s == nil {
		return off, ok
	}
	if !ok {
		t, tok := o.Catalog.InstanceType(provider, instanceType)
		if !tok {
			return Offer{}, false
		}
		off = Offer{Type: t, Region: s.region}
	}
	s.apply(&off)
	return off, true
}

// Offers returns base's offers matching q with live prices laid over them,
// plus the offers only live prices make, in provider, region, type order.
func (o *overlay) Offers(q Query) []Offer {
	out := o.Catalog.Offers(q)
	for i := range out {
		if s := o.slot(out[i].Type.Provider, out[i].Region, out[i].Type.Name); s != nil {
			s.apply(&out[i])
		}
	}
	n := len(out)
	for _, a := range o.added {
		if q.Matches(a) {
			o.slot(a.Type.Provider, a.Region, a.Type.Name).apply(&a)
			out = append(out, a)
		}
	}
	if len(out) > n {
		slices.SortStableFunc(out, compareOffers)
	}
	return out
}

// Sources lists base's sources and one entry per provider with live prices.
func (o *overlay) Sources() []Source {
	out := o.Catalog.Sources()
	providers := make([]fleet.Provider, 0, len(o.stats))
	for p := range o.stats {
		providers = append(providers, p)
	}
	slices.Sort(providers)
	for _, p := range providers {
		s := o.stats[p]
		var parts []string
		for _, opt := range []Option{OnDemand, Spot, SavingsPlan1y, SavingsPlan3y} {
			if n := s.byOption[opt]; n > 0 {
				parts = append(parts, fmt.Sprintf("%s %d", opt, n))
			}
		}
		note := fmt.Sprintf("%d prices (%s) for %d types in %d regions", s.prices, strings.Join(parts, ", "), len(s.types), len(s.regions))
		if s.cached > 0 {
			note += fmt.Sprintf("; %d from the on-disk cache", s.cached)
		}
		if s.oldest != "" && s.oldest != s.newest {
			note += "; dated " + s.oldest + " to " + s.newest
		}
		out = append(out, Source{
			Name:     providerLabel(p) + " " + o.src.Label,
			Provider: string(p),
			Origin:   o.src.Origin,
			AsOf:     s.newest,
			Note:     note,
		})
	}
	return out
}

func providerLabel(p fleet.Provider) string {
	switch p {
	case fleet.AWS:
		return "AWS"
	case fleet.Azure:
		return "Azure"
	case fleet.GCP:
		return "GCP"
	}
	return string(p)
}

func compareOffers(a, b Offer) int {
	return cmp.Or(
		cmp.Compare(a.Type.Provider, b.Type.Provider),
		cmp.Compare(a.Region, b.Region),
		cmp.Compare(a.Type.Name, b.Type.Name),
	)
}

// emptyCatalog stands in for a missing base catalog.
type emptyCatalog struct{}

func (emptyCatalog) GPU(string) (GPUSpec, bool) { return GPUSpec{}, false }
func (emptyCatalog) InstanceType(fleet.Provider, string) (InstanceType, bool) {
	return InstanceType{}, false
}
func (emptyCatalog) Offer(fleet.Provider, string, string) (Offer, bool) { return Offer{}, false }
func (emptyCatalog) Offers(Query) []Offer                               { return nil }
func (emptyCatalog) SpotAdvice(fleet.Provider, string, string) (SpotAdvice, bool) {
	return SpotAdvice{}, false
}
func (emptyCatalog) Corrections() []Correction { return nil }
func (emptyCatalog) Sources() []Source         { return nil }
