package recommend

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/internal/fleetgen"
	"github.com/gpufinops/gpufinops/internal/purchasetest"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
)

// Every recommendation of a generated fleet has a short action of at most 48
// characters; spot and commitment ones name an hourly price, schedules their
// hours, rightsizing its target type.
func TestShortActions(t *testing.T) {
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	fl := fleetgen.Generate(fleetgen.Options{Instances: 300, Seed: 1, SampleShare: 0.3})
	if err := pricing.Complete(fl, cat); err != nil {
		t.Fatal(err)
	}
	plan := Run(fl, cat, DefaultPolicy().WithPurchases(purchasetest.Purchases()))
	price := regexp.MustCompile(`\$[0-9]+\.[0-9]{2,3}/h`)
	hours := regexp.MustCompile(`[0-9]{2}–[0-9]{2}`)
	seen := map[Kind]int{}
	for _, rec := range plan.Recommendations {
		seen[rec.Kind]++
		s := rec.ShortAction
		if s == "" || len([]rune(s)) > 48 && rec.Kind != KindTagging {
			t.Errorf("%s: short action %q", rec.ID, s)
			continue
		}
		if rec.Protected != nil && !rec.Protected.Counted {
			if s != "protected: "+rec.Protected.Reason {
				t.Errorf("%s: protected (%s) with short action %q", rec.ID, rec.Protected.Reason, s)
			}
			continue
		}
		switch rec.Kind {
		case KindSpot, KindCommitment:
			if !price.MatchString(s) {
				t.Errorf("%s: no hourly price in %q", rec.ID, s)
			}
		case KindSchedule:
			if !strings.HasPrefix(s, "schedule ") || !hours.MatchString(s) {
				t.Errorf("%s: no hours in %q", rec.ID, s)
			}
		case KindRightsize:
			if s != "→ "+rec.Target {
				t.Errorf("%s: %q for target %q", rec.ID, s, rec.Target)
			}
		}
	}
	for _, k := range []Kind{KindSpot, KindCommitment, KindSchedule, KindRightsize, KindIdleStop} {
		if seen[k] == 0 {
			t.Errorf("no %s recommendation in the generated fleet: %v", k, seen)
		}
	}
}

func TestShortFormats(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{minutesShort(16.6), "17 min"},
		{minutesShort(400), "6.7 h"},
		{minutesShort(1008), "17 h"},
		{scheduleShort([]scheduleWindow{{days: []time.Weekday{time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday}, start: 8, end: 18}}), "Mon–Fri 08–18"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q want %q", tc.got, tc.want)
		}
	}
}
