package commitplan

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

var updatePlans = flag.Bool("update-plans", false, "rewrite testdata/plans.sha256 from the current Build")

// randomZones mix daylight-saving time, half-hour and 45-minute offsets,
// a zone whose change is two hours (Troll) and one with Ramadan changes.
var randomZones = []string{"", "UTC", "Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Asia/Kathmandu",
	"America/St_Johns", "Antarctica/Troll", "Africa/Casablanca", "Pacific/Chatham", "Asia/Kabul", "America/Santiago"}

// randomStarts put sample windows across changes of offset, off the hour.
var randomStarts = []time.Time{
	time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC),
	time.Date(2026, 3, 23, 7, 0, 0, 0, time.UTC),
	time.Date(2026, 10, 19, 0, 17, 0, 0, time.UTC),
	time.Date(2026, 9, 28, 13, 30, 0, 0, time.UTC),
	time.Date(2026, 11, 16, 0, 0, 0, 0, time.UTC),
}

func randomSchedule(r *rand.Rand) *fleet.Schedule {
	days := []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}
	s := &fleet.Schedule{Timezone: randomZones[r.IntN(len(randomZones))]}
	for range 1 + r.IntN(3) {
		a := r.IntN(24*60 - 1)
		if r.IntN(2) == 0 {
			a -= a % 60
		}
		b := a + 1 + r.IntN(24*60-a)
		w := fleet.Window{Start: clock(a), End: clock(b)}
		for _, d := range days {
			if r.IntN(3) > 0 {
				w.Days = append(w.Days, d)
			}
		}
		s.Windows = append(s.Windows, w)
	}
	return s
}

func copySchedule(s *fleet.Schedule) *fleet.Schedule {
	c := &fleet.Schedule{Timezone: s.Timezone}
	for _, w := range s.Windows {
		c.Windows = append(c.Windows, fleet.Window{Days: append([]string(nil), w.Days...), Start: w.Start, End: w.End})
	}
	return c
}

// randomItems is a fleet of n items over several providers, regions and
// families, with prices and discounts that tie, schedules shared by content
// (never by pointer), samples across changes of offset that may show a
// trend, hour counts to place, spot capacity and excluded instances.
func randomItems(r *rand.Rand, n int) ([]Item, map[fleet.Provider]Terms, Options) {
	providers := []fleet.Provider{fleet.AWS, fleet.Azure, fleet.GCP, "oci"}
	pool := make([]*fleet.Schedule, 1+r.IntN(8))
	for i := range pool {
		pool[i] = randomSchedule(r)
		if i == 0 || r.IntN(2) == 0 {
			continue
		}
		// A near twin of an earlier one: another end, day or zone.
		s := copySchedule(pool[r.IntN(i)])
		w := &s.Windows[r.IntN(len(s.Windows))]
		switch r.IntN(3) {
		case 0:
			if w.End != "24:00" {
				w.End = "24:00"
			} else {
				w.End = "23:59"
			}
		case 1:
			w.Days = append(w.Days, "sun")
		default:
			s.Timezone = randomZones[r.IntN(len(randomZones))]
		}
		pool[i] = s
	}
	start := randomStarts[r.IntN(len(randomStarts))].Add(time.Duration(r.IntN(3*60)) * time.Minute)
	prices := []string{"0.5", "1.006", "1.006", "2.75", "3.1", "12.288", "0.0001"}
	discounts := []float64{0, 0.2, 0.35, 0.35, 0.4, 0.6, 0.72}
	terms := func() Terms {
		switch r.IntN(5) {
		case 0:
			return nil
		case 1:
			return Terms{}
		case 2:
			return Terms{Term1y: discounts[r.IntN(len(discounts))]}
		}
		return Terms{Term1y: discounts[r.IntN(len(discounts))], Term3y: discounts[r.IntN(len(discounts))]}
	}
	perm := r.Perm(n)
	var items []Item
	for i := range n {
		p := providers[r.IntN(len(providers))]
		it := Item{
			ID:             fmt.Sprintf("i-%04d", perm[i]),
			Provider:       p,
			Region:         []string{"r1", "r2", "eu-central-1"}[r.IntN(3)],
			Family:         []string{"g5", "p4", "nc"}[r.IntN(3)],
			InstanceType:   []string{"a", "b", "c", ""}[r.IntN(4)],
			OnDemandHourly: decimal.RequireFromString(prices[r.IntN(len(prices))]),
			MonthlyHours:   fleet.HoursPerMonth,
			Eligible:       true,
			Discounts:      terms(),
			PerInstance:    p != fleet.AWS && r.IntN(4) > 0,
		}
		switch k := r.IntN(12); {
		case k < 3:
			it.Schedule = copySchedule(pool[r.IntN(len(pool))])
			if h, err := it.Schedule.HoursPerWeek(); err == nil && r.IntN(3) > 0 {
				it.MonthlyHours = h * fleet.HoursPerMonth / fleet.HoursPerWeek
			} else {
				it.MonthlyHours = float64(r.IntN(800))
			}
		case k < 5:
			step := []time.Duration{time.Hour, 30 * time.Minute, 20 * time.Minute, 90 * time.Minute}[r.IntN(4)]
			from := start.Add(time.Duration(r.IntN(72)) * time.Hour)
			span := time.Duration(100+r.IntN(5*168)) * time.Hour
			rise := r.IntN(3)
			for t := from; t.Before(from.Add(span)); t = t.Add(step) {
				late := t.After(from.Add(span - week))
				if on := r.IntN(4); on < 2+rise*b2i(late) {
					it.Samples = append(it.Samples, fleet.Sample{Time: t})
				}
			}
			if r.IntN(3) == 0 {
				it.Window = &fleet.TimeRange{Start: from.Add(-time.Duration(r.IntN(90)) * time.Minute), End: from.Add(span + time.Duration(r.IntN(5))*time.Hour)}
			}
			r.Shuffle(len(it.Samples), func(a, b int) { it.Samples[a], it.Samples[b] = it.Samples[b], it.Samples[a] })
			it.MonthlyHours = float64(200 + r.IntN(600))
		case k < 7:
			it.MonthlyHours = float64(r.IntN(730)) + []float64{0, 0.25, 0.5}[r.IntN(3)]
		case k < 8:
			it.Eligible, it.Reason, it.SpotEligible = false, ReasonSpot, true
			it.SpotHourly = it.OnDemandHourly.Mul(decimal.RequireFromString("0.3")).Round(4)
			it.MonthlyHours = float64(r.IntN(731))
		case k < 9:
			it.SpotEligible = true
			it.SpotHourly = it.OnDemandHourly.Mul(decimal.RequireFromString([]string{"0.3", "0.45", "1.2"}[r.IntN(3)])).Round(4)
		case k < 10:
			it.Eligible = false
			it.Reason = []string{"", ReasonStopped, ReasonUnpriced}[r.IntN(3)]
		case k < 11:
			if r.IntN(2) == 0 {
				it.OnDemandHourly = decimal.Zero
			} else {
				it.MonthlyHours = 0
			}
		default:
			it.MonthlyHours = 800
		}
		items = append(items, it)
	}
	provider := map[fleet.Provider]Terms{fleet.AWS: {Term1y: 0.35, Term3y: 0.55}, fleet.GCP: {Term1y: 0.37}}
	if r.IntN(2) == 0 {
		provider[fleet.Azure] = Terms{Term1y: 0.35, Term3y: 0.35}
	}
	opts := Options{}
	if r.IntN(2) == 0 {
		opts = Options{MaxWeeks: 1 + r.IntN(4), TrendPercent: float64(5 + r.IntN(30)), CurvePoints: 3 + r.IntN(30)}
	}
	return items, provider, opts
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// planDigest is the SHA-256 of a plan's JSON, or of the error.
func planDigest(items []Item, provider map[fleet.Provider]Terms, opts Options) string {
	p, err := Build(items, provider, opts)
	var b []byte
	if err != nil {
		b = []byte("error: " + err.Error())
	} else {
		var merr error
		if b, merr = json.Marshal(p); merr != nil {
			panic(merr)
		}
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// TestBuildMatchesRecorded: Build gives every random fleet the plan it gave
// before its buffers and caches (testdata/plans.sha256, recorded with the
// plain implementation; -update-plans rewrites it).
func TestBuildMatchesRecorded(t *testing.T) {
	const fleets = 160
	path := filepath.Join("testdata", "plans.sha256")
	var got []string
	for seed := range fleets {
		r := rand.New(rand.NewPCG(uint64(seed), 77))
		items, provider, opts := randomItems(r, 1+r.IntN(250))
		if seed%20 == 19 {
			// A schedule Build refuses, on an eligible item.
			items[0].Eligible, items[0].Schedule = true, &fleet.Schedule{Windows: []fleet.Window{{Days: []string{"mon"}, Start: "9:00", End: "17:00"}}}
		}
		got = append(got, fmt.Sprintf("%d %s", seed, planDigest(items, provider, opts)))
	}
	if *updatePlans {
		if err := os.WriteFile(path, []byte(strings.Join(got, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var want []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		want = append(want, sc.Text())
	}
	if len(want) != len(got) {
		t.Fatalf("%d recorded plans, %d built", len(want), len(got))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("fleet %d: plan digest %s, recorded %s", i, got[i], want[i])
		}
	}
}
