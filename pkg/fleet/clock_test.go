package fleet

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// referenceClock is parseClock as fmt.Sscanf alone reads a clock.
func referenceClock(s string) (int, error) {
	var h, m int
	if n, err := fmt.Sscanf(s, "%d:%d", &h, &m); err != nil || n != 2 || len(s) != 5 {
		return 0, fmt.Errorf("%q is not a time of day in HH:MM form", s)
	}
	if h < 0 || m < 0 || m > 59 || h > 24 || (h == 24 && m != 0) {
		return 0, fmt.Errorf("%q is not a time of day between 00:00 and 24:00", s)
	}
	return h*60 + m, nil
}

func sameClock(t *testing.T, s string) {
	t.Helper()
	got, gerr := parseClock(s)
	want, werr := referenceClock(s)
	if got != want || fmt.Sprint(gerr) != fmt.Sprint(werr) {
		t.Fatalf("parseClock(%q) = %d, %v; Sscanf's reading %d, %v", s, got, gerr, want, werr)
	}
}

// TestParseClockIsSscanf: every HH:MM of two-digit numbers, and random
// five-byte strings of digits, colons, signs and spaces, read as Sscanf
// reads them.
func TestParseClockIsSscanf(t *testing.T) {
	for h := range 100 {
		for m := range 100 {
			sameClock(t, fmt.Sprintf("%02d:%02d", h, m))
		}
	}
	alphabet := []byte("0123456789:+- x")
	rng := rand.New(rand.NewPCG(2, 6))
	for range 20000 {
		b := make([]byte, 3+rng.IntN(4))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		sameClock(t, string(b))
	}
}

func FuzzParseClock(f *testing.F) {
	for _, s := range []string{"08:30", "24:00", "+1:30", "1:030", " 1:30", "-0:00", "23:60", "9:5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { sameClock(t, s) })
}

// TestHoursPerWeekIsCount: HoursPerWeek is the number of distinct minutes
// of the week the windows cover, for random schedules of overlapping
// windows.
func TestHoursPerWeekIsCount(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 3))
	days := []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}
	for range 2000 {
		s := &Schedule{}
		for range 1 + rng.IntN(4) {
			start := rng.IntN(24*60 - 1)
			end := start + 1 + rng.IntN(24*60-start)
			w := Window{Start: fmt.Sprintf("%02d:%02d", start/60, start%60), End: fmt.Sprintf("%02d:%02d", end/60, end%60)}
			for _, d := range days {
				if rng.IntN(2) == 0 {
					w.Days = append(w.Days, d)
				}
			}
			s.Windows = append(s.Windows, w)
		}
		on := map[int]bool{} // minute of the week
		for _, w := range s.Windows {
			start, _ := referenceClock(w.Start)
			end, _ := referenceClock(w.End)
			for _, d := range w.Days {
				for m := start; m < end; m++ {
					on[int(Weekdays[d])*24*60+m] = true
				}
			}
		}
		minutes := len(on)
		got, err := s.HoursPerWeek()
		if err != nil || got != float64(minutes)/60 {
			t.Fatalf("%+v: HoursPerWeek %v, %v; want %v", s.Windows, got, err, float64(minutes)/60)
		}
	}
}
