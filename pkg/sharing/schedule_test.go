package sharing

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

func sched(tz string, windows ...fleet.Window) *fleet.Schedule {
	return &fleet.Schedule{Timezone: tz, Windows: windows}
}

func win(start, end string, days ...string) fleet.Window {
	return fleet.Window{Days: days, Start: start, End: end}
}

var allDays = []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}

// TestAvailabilityLastWord: minutes in the last, partial word of the week
// bitmap (Saturday 23:28–24:00) are kept, and a full week reads as always on.
func TestAvailabilityLastWord(t *testing.T) {
	if weekWords*64 < minutesPerWeek {
		t.Fatalf("%d words hold %d minutes, fewer than the %d of a week", weekWords, weekWords*64, minutesPerWeek)
	}
	for _, tc := range []struct {
		name   string
		s      *fleet.Schedule
		always bool
	}{
		{"every day all day", sched("UTC", win("00:00", "24:00", allDays...)), true},
		{"split windows cover the week", sched("", win("00:00", "12:00", allDays...), win("12:00", "24:00", allDays...)), true},
		{"overlapping windows cover the week", sched("Asia/Kolkata", win("00:00", "13:00", allDays...), win("11:59", "24:00", allDays...)), true},
		{"saturday evening only", sched("UTC", win("23:29", "24:00", "sat")), false},
		{"last minute of the week", sched("UTC", win("23:59", "24:00", "sat")), false},
		{"all but the last minute", sched("UTC", win("00:00", "24:00", "sun", "mon", "tue", "wed", "thu", "fri"), win("00:00", "23:59", "sat")), false},
		{"all but the first minute", sched("UTC", win("00:01", "24:00", "sun"), win("00:00", "24:00", "mon", "tue", "wed", "thu", "fri", "sat")), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := availabilityOf(Tenant{Schedule: tc.s, MonthlyHours: 100})
			if a.always != tc.always {
				t.Fatalf("always = %v, want %v", a.always, tc.always)
			}
			if !tc.always && !a.known {
				t.Fatal("a valid schedule reads as unknown")
			}
		})
	}
}

// TestAvailabilityMatchesWeek: for random schedules, the bitmap holds exactly
// the minutes fleet.Schedule.Week marks, and covers is minute-wise inclusion.
func TestAvailabilityMatchesWeek(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	clock := func(m int) string { return fmt.Sprintf("%02d:%02d", m/60, m%60) }
	random := func() *fleet.Schedule {
		s := sched("UTC")
		for range 1 + r.IntN(3) {
			start := r.IntN(24 * 60)
			end := start + 1 + r.IntN(24*60-start)
			w := win(clock(start), clock(end), allDays[r.IntN(7)])
			if r.IntN(2) == 0 {
				w.Days = append(w.Days, allDays[r.IntN(7)])
			}
			s.Windows = append(s.Windows, w)
		}
		return s
	}
	for i := range 300 {
		sa, sb := random(), random()
		a, b := availabilityOf(Tenant{Schedule: sa}), availabilityOf(Tenant{Schedule: sb})
		wa, _, err := sa.Week()
		if err != nil {
			t.Fatal(err)
		}
		wb, _, _ := sb.Week()
		inclusion := true
		for m := range minutesPerWeek {
			if got := a.on[m/64]&(1<<(m%64)) != 0; got != wa[m] && !a.always {
				t.Fatalf("case %d: minute %d: bitmap %v, Week %v", i, m, got, wa[m])
			}
			if wb[m] && !wa[m] {
				inclusion = false
			}
		}
		if got := a.covers(b); got != inclusion {
			t.Fatalf("case %d: covers = %v, want %v (%+v over %+v)", i, got, inclusion, sa, sb)
		}
	}
}
