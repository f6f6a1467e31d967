package fleet

import (
	"regexp"
	"strings"
	"testing"
)

// clockPattern is the fleet schema's pattern for a window's start and end.
var clockPattern = regexp.MustCompile(`^(([01][0-9]|2[0-3]):[0-5][0-9]|24:00)$`)

// FuzzScheduleWeek: any time zone, days and clock strings either give a clear
// error or a week whose minutes are exactly the windows' (the last minute of
// Saturday included), and never panic.
func FuzzScheduleWeek(f *testing.F) {
	for _, seed := range []struct{ tz, days, start, end string }{
		{"UTC", "sat", "23:29", "24:00"},
		{"", "mon,tue,wed,thu,fri,sat,sun", "00:00", "24:00"},
		{"Australia/Lord_Howe", "sun", "01:30", "02:30"},
		{"Pacific/Apia", "fri,sat", "00:00", "23:59"},
		{"Asia/Kathmandu", "wed", "09:45", "17:15"},
		{"America/St_Johns", "sat,sun", "22:00", "02:00"},
		{"Local", "sun", "24:00", "24:00"},
		{"../etc/passwd", "mon", "9:00", "17:00"},
		{"UTC", "Mon", "+1:00", "-1:00"},
		{"UTC", "", "00:00", "00:01"},
	} {
		f.Add(seed.tz, seed.days, seed.start, seed.end)
	}
	f.Fuzz(func(t *testing.T, tz, days, start, end string) {
		s := &Schedule{Timezone: tz, Windows: []Window{{Days: strings.Split(days, ","), Start: start, End: end}}}
		on, loc, err := s.Week()
		if err != nil {
			if strings.Contains(err.Error(), "\n") || on != nil {
				t.Fatalf("error %q with week %v", err, on != nil)
			}
			return
		}
		if loc == nil {
			t.Fatal("no location")
		}
		if !clockPattern.MatchString(start) || !clockPattern.MatchString(end) {
			t.Fatalf("accepted %q–%q, which the schema's HH:MM pattern refuses", start, end)
		}
		a, _ := parseClock(start)
		b, _ := parseClock(end)
		want := map[int]bool{}
		for _, d := range s.Windows[0].Days {
			for m := a; m < b; m++ {
				want[int(Weekdays[d])*24*60+m] = true
			}
		}
		n := 0
		for m, v := range on {
			if v != want[m] {
				t.Fatalf("minute %d: %v, want %v", m, v, want[m])
			}
			if v {
				n++
			}
		}
		h, err := s.HoursPerWeek()
		if err != nil || h != float64(n)/60 || h < 0 || h > HoursPerWeek {
			t.Fatalf("HoursPerWeek = %v, %v; %d minutes", h, err, n)
		}
	})
}
