package commitplan

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// benchItems is a fleet shaped like the 100,000-instance one the engine is
// timed on: about half eligible, one in ten on a schedule (a few hundred
// distinct ones), one in a hundred sampled over two weeks, the rest always on
// or known by their hours, in a few hundred groups.
func benchItems(n int) []Item {
	r := rand.New(rand.NewPCG(1, 2))
	pool := make([]*fleet.Schedule, max(1, n/30))
	for i := range pool {
		pool[i] = randomSchedule(r)
	}
	start := time.Date(2026, 11, 16, 0, 0, 0, 0, time.UTC)
	providers := []fleet.Provider{fleet.AWS, fleet.Azure, fleet.GCP}
	items := make([]Item, n)
	for i := range items {
		it := Item{
			ID:             fmt.Sprintf("i-%07d", r.IntN(1<<30)*n+i),
			Provider:       providers[r.IntN(3)],
			Region:         fmt.Sprint("region-", r.IntN(10)),
			Family:         fmt.Sprint("f", r.IntN(9)),
			InstanceType:   fmt.Sprint("t", r.IntN(4)),
			OnDemandHourly: decimal.New(int64(50+r.IntN(4000)), -2),
			MonthlyHours:   fleet.HoursPerMonth,
			Eligible:       r.IntN(2) == 0,
			Discounts:      Terms{Term1y: 0.3 + 0.01*float64(r.IntN(10)), Term3y: 0.5 + 0.01*float64(r.IntN(10))},
		}
		it.PerInstance = it.Provider != fleet.AWS
		switch k := r.IntN(100); {
		case k < 10:
			it.Schedule = copySchedule(pool[r.IntN(len(pool))])
			h, _ := it.Schedule.HoursPerWeek()
			it.MonthlyHours = h * fleet.HoursPerMonth / fleet.HoursPerWeek
		case k < 11:
			for h := range 336 {
				if r.IntN(3) > 0 {
					it.Samples = append(it.Samples, fleet.Sample{Time: start.Add(time.Duration(h) * time.Hour)})
				}
			}
			it.Window = &fleet.TimeRange{Start: start, End: start.Add(336 * time.Hour)}
		case k < 30:
			it.MonthlyHours = float64(r.IntN(730))
		case k < 35:
			it.Eligible, it.Reason, it.SpotEligible = false, ReasonSpot, true
			it.SpotHourly = it.OnDemandHourly.Mul(decimal.New(3, -1)).Round(4)
		}
		if !it.Eligible && it.Reason == "" {
			it.Reason = ReasonStopped
		}
		items[i] = it
	}
	return items
}

// BenchmarkBuild plans a 20,000-instance fleet.
func BenchmarkBuild(b *testing.B) {
	items := benchItems(20000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Build(items, nil, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
