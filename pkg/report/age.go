package report

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/gpufinops/gpufinops/pkg/recommend"
	"github.com/gpufinops/gpufinops/pricing"
)

// WarnStalePrice is the warning code for prices older than the policy's
// age limit (policy.prices.max_spot_age_days, max_list_age_days).
const WarnStalePrice = "stale-price"

// staleKey groups the stale prices of one kind, source and date.
type staleKey struct {
	spot bool
	// commitment: a reservation or savings plan rate, judged by the list limit.
	commitment bool
	source     string
	asOf       string
}

// stalePriceWarnings warns, once per source and date, about every price the
// plan used (the instances' current prices and the prices in the
// recommendations' evidence) whose as-of date is older than the policy's
// limit on today, the report's date. Prices with no date (a fleet file's
// hourlyPrice) are not judged; a limit of 0 checks nothing.
func stalePriceWarnings(plan recommend.Plan, today time.Time) []Warning {
	lim := plan.Policy.Prices
	uses := map[staleKey]map[string]bool{} // → resources that use it
	age := map[staleKey]int{}
	note := func(p pricing.Price, resource string) {
		limit := pricing.MaxAgeDays(p.Option, lim.MaxSpotAgeDays, lim.MaxListAgeDays)
		days, ok := pricing.AgeDays(p.AsOf, today)
		if !ok || limit <= 0 || days <= limit {
			return
		}
		k := staleKey{spot: p.Option == pricing.Spot, commitment: p.Option != pricing.Spot && p.Option != pricing.OnDemand, source: sourceName(p.Source), asOf: p.AsOf}
		if uses[k] == nil {
			uses[k] = map[string]bool{}
		}
		uses[k][resource] = true
		age[k] = days
	}
	for _, ic := range plan.Instances {
		if ic.Hourly != nil {
			note(*ic.Hourly, ic.ResourceID)
		}
	}
	for _, rec := range plan.Recommendations {
		for _, p := range rec.Evidence.Prices {
			note(p, rec.ResourceID)
		}
	}
	keys := make([]staleKey, 0, len(uses))
	for k := range uses {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.asOf != b.asOf {
			return a.asOf < b.asOf
		}
		if a.spot != b.spot {
			return a.spot
		}
		return a.source < b.source
	})
	out := make([]Warning, 0, len(keys))
	for _, k := range keys {
		kind, limit, key := "list", lim.MaxListAgeDays, "policy.prices.max_list_age_days"
		if k.commitment {
			kind = "commitment"
		}
		if k.spot {
			kind, limit, key = "spot", lim.MaxSpotAgeDays, "policy.prices.max_spot_age_days"
		}
		n := len(uses[k])
		out = append(out, Warning{Code: WarnStalePrice, Message: fmt.Sprintf(
			"%s prices from %s as of %s are %d days old, over the %d-day limit (%s); %s priced with them: "+staleAdvice,
			kind, k.source, k.asOf, age[k], limit, key, plural(n, "instance")),
			InstanceCount: n,
			StalePrice:    &StalePrice{Kind: kind, Source: dataSet(k.source), AsOf: k.asOf, AgeDays: age[k], LimitDays: limit, PolicyKey: key}})
	}
	return out
}

// staleAdvice ends every stale-price warning.
const staleAdvice = "check current prices before acting"

// sourceName is a price source without the sentence the engine may wrap it
// in ("on-demand price less the AWS spot advisor typical spot saving of
// 52% (as of …)" → "the AWS spot advisor's typical saving").
func sourceName(s string) string {
	if rest, ok := strings.CutPrefix(s, "on-demand price less the "); ok {
		if name, _, ok := strings.Cut(rest, " typical spot saving"); ok {
			return name + " (typical spot saving)"
		}
	}
	if name, _, ok := strings.Cut(s, ";"); ok {
		return name
	}
	return s
}
