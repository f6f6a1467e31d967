package catalog

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
)

// MoveThreshold is the relative price change, in percent, above which Diff
// reports a price as moved.
const MoveThreshold = 10

// TypeRef names an instance type of a provider.
type TypeRef struct {
	Provider     fleet.Provider `json:"provider"`
	InstanceType string         `json:"instanceType"`
}

// OfferRef names an offer: a type in a region.
type OfferRef struct {
	Provider     fleet.Provider `json:"provider"`
	Region       string         `json:"region"`
	InstanceType string         `json:"instanceType"`
}

// PriceMove is a price that moved by more than MoveThreshold percent, or
// that appeared or disappeared on an offer both snapshots have (Old or New
// is then nil).
type PriceMove struct {
	OfferRef
	Option pricing.Option   `json:"option"`
	Old    *decimal.Decimal `json:"old"`
	New    *decimal.Decimal `json:"new"`
	// Percent is (new − old) / old × 100, rounded to 1 place; 0 when either
	// side is missing.
	Percent float64 `json:"percent"`
}

// Changes is what changed between two catalog snapshots. Every list is
// sorted by provider, region (where it has one) and type.
type Changes struct {
	AddedTypes    []TypeRef   `json:"addedTypes"`
	RemovedTypes  []TypeRef   `json:"removedTypes"`
	AddedOffers   []OfferRef  `json:"addedOffers"`
	RemovedOffers []OfferRef  `json:"removedOffers"`
	Moved         []PriceMove `json:"moved"`
}

// Empty reports whether nothing changed.
func (c Changes) Empty() bool {
	return len(c.AddedTypes)+len(c.RemovedTypes)+len(c.AddedOffers)+len(c.RemovedOffers)+len(c.Moved) == 0
}

// Diff compares two catalogs offer by offer: types that one has and the
// other lacks, offers (type × region) added or removed, and on-demand and
// spot prices that moved by more than MoveThreshold percent (or appeared or
// vanished) on offers both have. Types and offers are matched by provider
// and name, ignoring case. It reads only the pricing.Catalog interface, so
// it compares the embedded snapshot, an overlay or any other catalog.
func Diff(old, new pricing.Catalog) Changes {
	oldOffers, oldTypes := index(old)
	newOffers, newTypes := index(new)
	// Empty lists, never nil: a JSON document lists nothing as [].
	ch := Changes{AddedTypes: []TypeRef{}, RemovedTypes: []TypeRef{}, AddedOffers: []OfferRef{}, RemovedOffers: []OfferRef{}, Moved: []PriceMove{}}
	for k, t := range newTypes {
		if _, ok := oldTypes[k]; !ok {
			ch.AddedTypes = append(ch.AddedTypes, t)
		}
	}
	for k, t := range oldTypes {
		if _, ok := newTypes[k]; !ok {
			ch.RemovedTypes = append(ch.RemovedTypes, t)
		}
	}
	for k, n := range newOffers {
		o, ok := oldOffers[k]
		if !ok {
			ch.AddedOffers = append(ch.AddedOffers, refOf(n))
			continue
		}
		ch.Moved = appendMove(ch.Moved, refOf(n), pricing.OnDemand, o.OnDemand, n.OnDemand)
		ch.Moved = appendMove(ch.Moved, refOf(n), pricing.Spot, o.Spot, n.Spot)
	}
	for k, o := range oldOffers {
		if _, ok := newOffers[k]; !ok {
			ch.RemovedOffers = append(ch.RemovedOffers, refOf(o))
		}
	}
	typeOrder := func(a, b TypeRef) int {
		return cmp.Or(cmp.Compare(a.Provider, b.Provider), cmp.Compare(a.InstanceType, b.InstanceType))
	}
	offerOrder := func(a, b OfferRef) int {
		return cmp.Or(cmp.Compare(a.Provider, b.Provider), cmp.Compare(a.Region, b.Region), cmp.Compare(a.InstanceType, b.InstanceType))
	}
	slices.SortFunc(ch.AddedTypes, typeOrder)
	slices.SortFunc(ch.RemovedTypes, typeOrder)
	slices.SortFunc(ch.AddedOffers, offerOrder)
	slices.SortFunc(ch.RemovedOffers, offerOrder)
	slices.SortFunc(ch.Moved, func(a, b PriceMove) int {
		return cmp.Or(offerOrder(a.OfferRef, b.OfferRef), cmp.Compare(a.Option, b.Option))
	})
	return ch
}

func index(c pricing.Catalog) (map[offerKey]pricing.Offer, map[typeKey]TypeRef) {
	offers := map[offerKey]pricing.Offer{}
	types := map[typeKey]TypeRef{}
	if c == nil {
		return offers, types
	}
	for _, o := range c.Offers(pricing.Query{}) {
		offers[offerKeyOf(o.Type.Provider, o.Region, o.Type.Name)] = o
		types[keyOf(o.Type.Provider, o.Type.Name)] = TypeRef{o.Type.Provider, o.Type.Name}
	}
	return offers, types
}

func refOf(o pricing.Offer) OfferRef { return OfferRef{o.Type.Provider, o.Region, o.Type.Name} }

var hundred = decimal.NewFromInt(100)

func appendMove(moves []PriceMove, ref OfferRef, opt pricing.Option, old, new *pricing.Price) []PriceMove {
	switch {
	case old == nil && new == nil:
		return moves
	case old == nil:
		return append(moves, PriceMove{OfferRef: ref, Option: opt, New: &new.Hourly})
	case new == nil:
		return append(moves, PriceMove{OfferRef: ref, Option: opt, Old: &old.Hourly})
	}
	if old.Hourly.IsZero() {
		if new.Hourly.IsZero() {
			return moves
		}
		return append(moves, PriceMove{OfferRef: ref, Option: opt, Old: &old.Hourly, New: &new.Hourly})
	}
	pct := new.Hourly.Sub(old.Hourly).Div(old.Hourly).Mul(hundred)
	if pct.Abs().LessThanOrEqual(decimal.NewFromInt(MoveThreshold)) {
		return moves
	}
	o, n := old.Hourly, new.Hourly
	return append(moves, PriceMove{OfferRef: ref, Option: opt, Old: &o, New: &n, Percent: pct.Round(1).InexactFloat64()})
}

// WriteMarkdown writes the changes as a markdown report: a summary line,
// then one section per kind of change that has any.
func (c Changes) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Catalog changes\n\n%d types added, %d removed; %d offers added, %d removed; %d prices moved more than %d %%.\n",
		len(c.AddedTypes), len(c.RemovedTypes), len(c.AddedOffers), len(c.RemovedOffers), len(c.Moved), MoveThreshold)
	typeSection := func(title string, ts []TypeRef) {
		if len(ts) == 0 {
			return
		}
		fmt.Fprintf(&b, "\n## %s\n\n| provider | type |\n|---|---|\n", title)
		for _, t := range ts {
			fmt.Fprintf(&b, "| %s | %s |\n", t.Provider, mdCell(t.InstanceType))
		}
	}
	offerSection := func(title string, os []OfferRef) {
		if len(os) == 0 {
			return
		}
		fmt.Fprintf(&b, "\n## %s\n\n| provider | region | type |\n|---|---|---|\n", title)
		for _, o := range os {
			fmt.Fprintf(&b, "| %s | %s | %s |\n", o.Provider, mdCell(o.Region), mdCell(o.InstanceType))
		}
	}
	typeSection("Types added", c.AddedTypes)
	typeSection("Types removed", c.RemovedTypes)
	offerSection("Offers added", c.AddedOffers)
	offerSection("Offers removed", c.RemovedOffers)
	if len(c.Moved) > 0 {
		fmt.Fprintf(&b, "\n## Prices moved more than %d %%\n\n| provider | region | type | option | old USD/h | new USD/h | change |\n|---|---|---|---|---:|---:|---:|\n", MoveThreshold)
		for _, m := range c.Moved {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", m.Provider, mdCell(m.Region), mdCell(m.InstanceType), m.Option,
				decText(m.Old), decText(m.New), m.change())
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteText writes the changes as plain lines, one change a line, after a
// summary line: "+ type", "- type", "+ offer", "- offer", "~ price".
func (c Changes) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%d types added, %d removed; %d offers added, %d removed; %d prices moved more than %d %%\n",
		len(c.AddedTypes), len(c.RemovedTypes), len(c.AddedOffers), len(c.RemovedOffers), len(c.Moved), MoveThreshold)
	for _, t := range c.AddedTypes {
		fmt.Fprintf(&b, "+ type  %s %s\n", t.Provider, t.InstanceType)
	}
	for _, t := range c.RemovedTypes {
		fmt.Fprintf(&b, "- type  %s %s\n", t.Provider, t.InstanceType)
	}
	for _, o := range c.AddedOffers {
		fmt.Fprintf(&b, "+ offer %s %s %s\n", o.Provider, o.Region, o.InstanceType)
	}
	for _, o := range c.RemovedOffers {
		fmt.Fprintf(&b, "- offer %s %s %s\n", o.Provider, o.Region, o.InstanceType)
	}
	for _, m := range c.Moved {
		fmt.Fprintf(&b, "~ price %s %s %s %s: %s -> %s (%s)\n", m.Provider, m.Region, m.InstanceType, m.Option,
			decText(m.Old), decText(m.New), m.change())
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func (m PriceMove) change() string {
	switch {
	case m.Old == nil:
		return "new price"
	case m.New == nil:
		return "price removed"
	case m.Old.IsZero():
		return "was zero"
	}
	return fmt.Sprintf("%+.1f %%", m.Percent)
}

func decText(d *decimal.Decimal) string {
	if d == nil {
		return "—"
	}
	return d.String()
}

// mdCell keeps a table cell on one line and its pipes literal.
func mdCell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "\r", " ").Replace(s)
}
