package report

import (
	"strings"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/recommend"
	"github.com/gpufinops/gpufinops/pricing"
)

func TestStalePriceWarnings(t *testing.T) {
	today := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	price := func(opt pricing.Option, src, asOf string) *pricing.Price {
		return &pricing.Price{Option: opt, Source: src, AsOf: asOf}
	}
	advisor := "on-demand price less the AWS spot advisor typical spot saving of 52% (as of 2025-06-28)"
	for _, tc := range []struct {
		name   string
		limits recommend.PricePolicy
		prices []*pricing.Price
		want   []string // one substring per warning, in order
	}{
		{"fresh prices", recommend.PricePolicy{MaxSpotAgeDays: 90, MaxListAgeDays: 365},
			[]*pricing.Price{price(pricing.OnDemand, "SkyPilot", "2026-11-30"), price(pricing.Spot, "SkyPilot", "2026-11-30")}, nil},
		{"the advisor is 521 days old", recommend.PricePolicy{MaxSpotAgeDays: 90, MaxListAgeDays: 365},
			[]*pricing.Price{price(pricing.Spot, advisor, "2025-06-28"), price(pricing.Spot, advisor, "2025-06-28")},
			[]string{"spot prices from AWS spot advisor (typical spot saving) as of 2025-06-28 are 521 days old, over the 90-day limit (policy.prices.max_spot_age_days); 2 instances priced"}},
		{"exactly at the limit is not stale", recommend.PricePolicy{MaxSpotAgeDays: 1, MaxListAgeDays: 1},
			[]*pricing.Price{price(pricing.OnDemand, "a", "2026-11-30"), price(pricing.Spot, "b", "2026-11-30")}, nil},
		{"a day past it is", recommend.PricePolicy{MaxSpotAgeDays: 1, MaxListAgeDays: 1},
			[]*pricing.Price{price(pricing.OnDemand, "a", "2026-11-29"), price(pricing.Spot, "b", "2026-11-29")},
			[]string{"spot prices from b as of 2026-11-29 are 2 days old, over the 1-day limit", "list prices from a as of 2026-11-29 are 2 days old, over the 1-day limit (policy.prices.max_list_age_days); 1 instance priced"}},
		{"list prices get the longer limit", recommend.PricePolicy{MaxSpotAgeDays: 90, MaxListAgeDays: 365},
			[]*pricing.Price{price(pricing.OnDemand, "list", "2026-01-01"), price(pricing.SavingsPlan1y, "AWS Savings Plans; live", "2025-01-01")},
			[]string{"commitment prices from AWS Savings Plans as of 2025-01-01 are 699 days old, over the 365-day limit"}},
		{"undated prices are not judged", recommend.PricePolicy{MaxSpotAgeDays: 1, MaxListAgeDays: 1},
			[]*pricing.Price{price(pricing.OnDemand, "fleet file (hourlyPrice)", ""), price(pricing.Spot, "x", "not a date")}, nil},
		{"no limits set checks nothing", recommend.PricePolicy{},
			[]*pricing.Price{price(pricing.OnDemand, "a", "2000-01-01")}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan := recommend.Plan{Policy: recommend.Policy{Prices: tc.limits}}
			for i, p := range tc.prices {
				plan.Instances = append(plan.Instances, recommend.InstanceCost{ResourceID: string(rune('a' + i)), Hourly: p})
			}
			got := stalePriceWarnings(plan, today)
			if len(got) != len(tc.want) {
				t.Fatalf("got %d warnings, want %d: %+v", len(got), len(tc.want), got)
			}
			for i, w := range got {
				if w.Code != WarnStalePrice || !strings.Contains(w.Message, tc.want[i]) || strings.Contains(w.Message, "\n") {
					t.Errorf("warning %d = %+v, want one line containing %q", i, w, tc.want[i])
				}
			}
		})
	}
}

// Evidence prices count as used too, and a resource counts once.
func TestStalePriceWarningsEvidence(t *testing.T) {
	old := pricing.Price{Option: pricing.Spot, Source: "s", AsOf: "2025-01-01"}
	plan := recommend.Plan{Policy: recommend.DefaultPolicy(),
		Instances:       []recommend.InstanceCost{{ResourceID: "a", Hourly: &old}},
		Recommendations: []recommend.Recommendation{{ResourceID: "a", Evidence: recommend.Evidence{Prices: []pricing.Price{old}}}, {ResourceID: "b", Evidence: recommend.Evidence{Prices: []pricing.Price{old}}}}}
	got := stalePriceWarnings(plan, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	if len(got) != 1 || !strings.Contains(got[0].Message, "2 instances priced") {
		t.Errorf("got %+v", got)
	}
}
