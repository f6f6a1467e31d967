package fleet

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// referenceClock is parseClock as the fleet schema reads a clock: its
// pattern decides what is a time of day, the digits give the minutes.
func referenceClock(s string) (int, error) {
	if !clockPattern.MatchString(s) {
		return 0, fmt.Errorf("%q is not a time of day", s)
	}
	h, _ := strconv.Atoi(s[:2])
	m, _ := strconv.Atoi(s[3:])
	return h*60 + m, nil
}

func sameClock(t *testing.T, s string) {
	t.Helper()
	got, gerr := parseClock(s)
	want, werr := referenceClock(s)
	if got != want || (gerr == nil) != (werr == nil) {
		t.Fatalf("parseClock(%q) = %d, %v; the schema's reading %d, %v", s, got, gerr, want, werr)
	}
	if gerr != nil && strings.ContainsAny(gerr.Error(), "\n\r") {
		t.Fatalf("parseClock(%q): error %q spans lines", s, gerr)
	}
}

// TestParseClockIsSchema: every HH:MM of two-digit numbers, and random
// strings of three to six bytes of digits, colons, signs and white space
// (what a scanf-style reader would let by as a clock), read as the schema's
// pattern reads them.
func TestParseClockIsSchema(t *testing.T) {
	for h := range 100 {
		for m := range 100 {
			sameClock(t, fmt.Sprintf("%02d:%02d", h, m))
		}
	}
	alphabet := []byte("0123456789:+- x\n\t")
	rng := rand.New(rand.NewPCG(2, 6))
	for range 20000 {
		b := make([]byte, 3+rng.IntN(4))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		sameClock(t, string(b))
	}
}

// TestParseClockRefusesScanfForms: the forms fmt.Sscanf("%d:%d") reads as a
// clock that the schema refuses (the reader before 2026-12-06 took them).
func TestParseClockRefusesScanfForms(t *testing.T) {
	for _, s := range []string{"+1:00", "-0:00", " 1:00", "1:000", "00:0\n", "00:0 ", "0:00 ", "\t0:00", "+0:+0", "1:1\x00\x00", "00:00\n", "٠٠:٠٠", "0x:10", "24:00:00", "8:00", "24:01", "99:99"} {
		if m, err := parseClock(s); err == nil {
			t.Errorf("parseClock(%q) = %d, want an error", s, m)
		}
	}
}

func FuzzParseClock(f *testing.F) {
	for _, s := range []string{"08:30", "24:00", "+1:30", "1:030", " 1:30", "-0:00", "23:60", "9:5", "00:0\n"} {
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
