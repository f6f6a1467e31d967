package commitplan

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// referenceFractions is fractions as it was first written: every minute of
// every hour converted to the schedule's zone on its own.
func referenceFractions(on *fleet.WeekMinutes, loc *time.Location, ax axis) []float64 {
	out := make([]float64, ax.hours)
	for h := range out {
		t := ax.start.Add(time.Duration(h) * time.Hour)
		n := 0
		for m := 0; m < 60; m++ {
			lt := t.Add(time.Duration(m) * time.Minute).In(loc)
			if on[int(lt.Weekday())*24*60+lt.Hour()*60+lt.Minute()] {
				n++
			}
		}
		out[h] = float64(n) / 60
	}
	return out
}

// TestFractionsMatchMinuteByMinute: the prefix sums give every hour the
// share the minute-by-minute reading gives, in zones with daylight-saving
// time, half-hour and 45-minute offsets and changes, offsets of seconds
// (local mean time before 1900), on axes that start off the hour and cross
// the changes.
func TestFractionsMatchMinuteByMinute(t *testing.T) {
	zones := []string{"UTC", "Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Asia/Kathmandu",
		"Pacific/Chatham", "America/St_Johns", "Africa/Casablanca", "Europe/Dublin", "Antarctica/Troll", "Europe/Amsterdam"}
	days := []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}
	starts := []time.Time{
		time.Date(2026, 3, 27, 0, 0, 0, 0, time.UTC),   // Europe's change to summer time
		time.Date(2026, 10, 30, 0, 0, 0, 0, time.UTC),  // and back
		time.Date(2026, 4, 3, 13, 17, 29, 0, time.UTC), // Lord Howe's half-hour change, off the hour
		time.Date(1891, 1, 1, 0, 0, 0, 0, time.UTC),    // local mean time
		time.Date(2026, 11, 16, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 10, 4, 10, 0, 0, 0, time.UTC), // Lord Howe's change at 15:30 UTC
	}
	r := rand.New(rand.NewPCG(16, 5))
	for i := range 300 {
		name := zones[i%len(zones)]
		loc, err := time.LoadLocation(name)
		if err != nil {
			t.Skipf("no zone data: %v", err)
		}
		s := &fleet.Schedule{Timezone: name}
		if i%2 == 0 {
			// A comb of short windows: any minute read in the wrong
			// offset changes an hour's share.
			tooth, gap := 1+r.IntN(5), 1+r.IntN(9)
			for a := r.IntN(gap); a+tooth <= 24*60; a += tooth + gap {
				s.Windows = append(s.Windows, fleet.Window{Days: days, Start: clock(a), End: clock(a + tooth)})
			}
		}
		for range 1 + r.IntN(3) {
			a := r.IntN(24*60 - 1)
			b := a + 1 + r.IntN(24*60-a)
			w := fleet.Window{Start: clock(a), End: clock(b)}
			for _, d := range days {
				if r.IntN(2) == 0 {
					w.Days = append(w.Days, d)
				}
			}
			s.Windows = append(s.Windows, w)
		}
		on, _, err := s.Week()
		if err != nil {
			t.Fatal(err)
		}
		sc, err := parseSchedule(s)
		if err != nil {
			t.Fatal(err)
		}
		ax := axis{start: starts[r.IntN(len(starts))].Add(time.Duration(r.IntN(48)) * time.Hour), hours: 1 + r.IntN(24*21)}
		if got, want := sc.fractions(ax), referenceFractions(on, loc, ax); !slices.Equal(got, want) {
			for h := range got {
				if got[h] != want[h] {
					t.Fatalf("%s %+v from %s: hour %d: %v, want %v", name, s.Windows, ax.start, h, got[h], want[h])
				}
			}
		}
	}
}

func clock(m int) string {
	if m == 24*60 {
		return "24:00"
	}
	return time.Date(0, 1, 1, m/60, m%60, 0, 0, time.UTC).Format("15:04")
}

// TestScheduleKeyIsContent: two schedules share a cache key only when they
// have the same zone and windows, whatever their strings hold (colons,
// digits and slashes that a plain concatenation would run together).
func TestScheduleKeyIsContent(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 6))
	alphabet := []string{"", "1", ":", "1:", "/", "mon", "0", "08:00"}
	str := func() string {
		var b []byte
		for range r.IntN(3) {
			b = append(b, alphabet[r.IntN(len(alphabet))]...)
		}
		return string(b)
	}
	random := func() *fleet.Schedule {
		s := &fleet.Schedule{Timezone: str()}
		for range r.IntN(3) {
			w := fleet.Window{Start: str(), End: str()}
			for range r.IntN(3) {
				w.Days = append(w.Days, str())
			}
			s.Windows = append(s.Windows, w)
		}
		return s
	}
	same := func(a, b *fleet.Schedule) bool {
		return a.Timezone == b.Timezone && slices.EqualFunc(a.Windows, b.Windows, func(x, y fleet.Window) bool {
			return x.Start == y.Start && x.End == y.End && slices.Equal(x.Days, y.Days)
		})
	}
	keys := map[string]*fleet.Schedule{}
	for range 20000 {
		s := random()
		k := scheduleKey(s)
		if o, ok := keys[k]; ok && !same(o, s) {
			t.Fatalf("%+v and %+v share the key %q", o, s, k)
		}
		keys[k] = s
	}
	if len(keys) < 1000 {
		t.Fatalf("only %d distinct keys", len(keys))
	}
}
