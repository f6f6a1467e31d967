package recommend

import (
	"fmt"
	"math"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
)

// spotDisagreePoints is how far, in points of saving, the advisor's typical
// saving and the market price may differ before the evidence says so and
// confidence drops.
const spotDisagreePoints = 20

// spotQuote is the spot price the engine plans with, for machines already
// on spot and for advice to move to spot alike, and how it was reached.
type spotQuote struct {
	// price is the price planned with: the higher of the market price and
	// the advisor-based estimate.
	price pricing.Price
	// market is the observed market price (median over zones and the
	// history window when live; the cheapest zone in the catalog snapshot).
	market pricing.Price
	// advice is the cloud's spot advice, when it publishes one.
	advice    pricing.SpotAdvice
	hasAdvice bool
	// estimate is true when the market price is no market data but a fixed
	// fraction of on-demand (a formula), or when only the advisor's estimate
	// is left.
	estimate bool
	// disagree is true when the advisor's saving and the market's differ by
	// more than spotDisagreePoints.
	disagree bool
	// marketSavingPercent is the market price's saving over on-demand; -1
	// when there is no on-demand price.
	marketSavingPercent float64
	notes               []string
}

// spotQuote prices a type on spot conservatively: the higher (less rosy) of
// the market price and the price the advisor's typical saving gives. It is
// false when the catalog has no spot price for the type in the region.
func (e *engine) spotQuote(p fleet.Provider, region, typ string) (spotQuote, bool) {
	return e.spotQuotes.get(offerKey{p, region, typ}, func() (spotQuote, bool) { return e.quoteSpot(p, region, typ) })
}

// quoteSpot is spotQuote without the memo: a quote depends on the catalog
// alone, so the engine makes one per type and region, and its users copy
// its notes before adding to them.
func (e *engine) quoteSpot(p fleet.Provider, region, typ string) (spotQuote, bool) {
	offer, ok := e.offer(p, region, typ)
	if !ok || offer.Spot == nil || !offer.Spot.Hourly.IsPositive() {
		return spotQuote{}, false
	}
	q := spotQuote{market: *offer.Spot, marketSavingPercent: -1}
	live := false
	if h := offer.Spot.History; h != nil && h.Median.IsPositive() {
		live = true
		q.market.Hourly = h.Median
		zones := "the zones"
		if h.Zones > 0 {
			zones = fmt.Sprintf("%d zones", h.Zones)
		}
		q.notes = append(q.notes, fmt.Sprintf("market spot price: the median over %s and %s – %s, $%s/h (cheapest zone now $%s/h)",
			zones, h.Since, h.Until, h.Median.String(), offer.Spot.Hourly.String()))
	} else {
		q.notes = append(q.notes, fmt.Sprintf("market spot price: the cheapest zone's at catalog time, $%s/h%s (%s, as of %s)",
			q.market.Hourly.String(), zoneText(q.market.Zone), q.market.Source, q.market.AsOf))
	}
	od := offer.OnDemand
	if od != nil && od.Hourly.IsPositive() {
		q.marketSavingPercent = savingPercent(q.market.Hourly, od.Hourly)
		if !live {
			if frac, ok := fixedFraction(q.market.Hourly, od.Hourly); ok {
				q.estimate = true
				q.notes = append(q.notes, fmt.Sprintf("the catalog's spot price is exactly %d %% of on-demand: a formula, not market data; treated as an estimate", frac))
			}
		}
		if !q.market.Hourly.LessThan(od.Hourly) {
			q.notes = append(q.notes, "the market spot price is not below on-demand: the market offers no spot discount here")
		}
	}
	q.price = q.market
	q.advice, q.hasAdvice = e.cat.SpotAdvice(p, region, typ)
	if q.hasAdvice && od != nil && od.Hourly.IsPositive() {
		est := *od
		est.Option = pricing.Spot
		est.Zone = ""
		est.History = nil
		est.Hourly = od.Hourly.Mul(decimal.NewFromInt(int64(100 - q.advice.SavingsPercent))).Div(decimal.NewFromInt(100)).Round(6)
		est.Source = fmt.Sprintf("on-demand price less the %s typical spot saving of %d %% (as of %s)", q.advice.Source, q.advice.SavingsPercent, q.advice.AsOf)
		est.AsOf = q.advice.AsOf
		gap := q.marketSavingPercent - float64(q.advice.SavingsPercent)
		if gap > spotDisagreePoints || gap < -spotDisagreePoints {
			q.disagree = true
			q.notes = append(q.notes, fmt.Sprintf("the advisor's typical saving (%d %%) and the market's (%s %%) disagree by %s points (more than %d): the higher price is used and confidence is lowered",
				q.advice.SavingsPercent, pct(q.marketSavingPercent), pct(math.Abs(gap)), spotDisagreePoints))
		}
		if est.Hourly.GreaterThan(q.market.Hourly) {
			q.price = est
			q.notes = append(q.notes, fmt.Sprintf("planned at the advisor's estimate, $%s/h, the higher of the two", est.Hourly.String()))
		} else {
			q.notes = append(q.notes, fmt.Sprintf("planned at the market price, the higher of it and the advisor's estimate ($%s/h)", est.Hourly.String()))
		}
	}
	return q, true
}

// confidence lowers c for what the quote's evidence lacks: one level when
// the advisor and the market disagree, to low when the price is an estimate.
func (q spotQuote) confidence(c Level) Level {
	if q.estimate && q.price.Source == q.market.Source && q.price.Hourly.Equal(q.market.Hourly) {
		return Low
	}
	if q.disagree {
		if c == High {
			return Medium
		}
		return Low
	}
	return c
}

// savingPercent is 100 × (1 − price/onDemand).
func savingPercent(price, onDemand decimal.Decimal) float64 {
	f, _ := decimal.NewFromInt(1).Sub(price.Div(onDemand)).Mul(decimal.NewFromInt(100)).Float64()
	return f
}

// fixedFraction reports whether spot is a whole percentage of onDemand (to
// the catalog's six decimals): what a price computed by formula looks like,
// e.g. Azure snapshot prices of exactly 11 % of on-demand. A price equal to
// on-demand is not a fraction (it is "no discount").
func fixedFraction(spot, onDemand decimal.Decimal) (int, bool) {
	if !spot.LessThan(onDemand) || !onDemand.IsPositive() {
		return 0, false
	}
	p := spot.Mul(decimal.NewFromInt(100)).Div(onDemand).Round(0)
	if p.LessThan(decimal.NewFromInt(1)) {
		return 0, false
	}
	if onDemand.Mul(p).Div(decimal.NewFromInt(100)).Sub(spot).Abs().GreaterThan(decimal.New(5, -7)) {
		return 0, false
	}
	return int(p.IntPart()), true
}

func zoneText(z string) string {
	if z == "" {
		return ""
	}
	return " in " + z
}
