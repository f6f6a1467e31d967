package fleet

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"sync"
	"time"
	"unsafe"
)

// HoursPerMonth is the number of hours in a billing month: 8,760 / 12.
const HoursPerMonth = 730.0

// HoursPerWeek is the number of hours in a week.
const HoursPerWeek = 168.0

// PerGPU holds one value per GPU. In a file it may be a single number (one GPU)
// or a list.
type PerGPU []float64

// UnmarshalJSON accepts a number or an array of numbers.
func (p *PerGPU) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '[' {
		var v []float64
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		*p = v
		return nil
	}
	var v float64
	if err := json.Unmarshal(b, &v); err != nil {
		return fmt.Errorf("want a number or a list of numbers, one per GPU")
	}
	*p = PerGPU{v}
	return nil
}

// Max returns the largest value; ok is false when there is none.
func (p PerGPU) Max() (max float64, ok bool) {
	for i, v := range p {
		if i == 0 || v > max {
			max = v
		}
	}
	return max, len(p) > 0
}

// Summary is the utilization the engine decides on, whether it came from
// summary statistics or from samples.
type Summary struct {
	// Source is "samples" or "aggregate".
	Source string
	// WindowHours is the length of the observed window.
	WindowHours float64
	// SampleCount is the number of samples behind the figures (0 for aggregate).
	SampleCount int
	GPU         *Stats
	GPUMemory   *Stats
	CPU         *Stats
	Memory      *Stats
}

// Summarize turns the utilization into statistics. Samples, when present, win
// over the aggregate figures. It returns nil when there is no GPU data at all.
func (u *Utilization) Summarize() *Summary {
	if u == nil {
		return nil
	}
	if len(u.Samples) > 0 {
		return u.summarizeSamples()
	}
	if u.GPU == nil {
		return nil
	}
	s := &Summary{Source: "aggregate", GPU: u.GPU, GPUMemory: u.GPUMemory, CPU: u.CPU, Memory: u.Memory}
	if u.Window != nil {
		s.WindowHours = u.Window.Hours()
	}
	return s
}

func (u *Utilization) summarizeSamples() *Summary {
	samples := u.Samples
	if !slices.IsSortedFunc(samples, func(a, b Sample) int { return a.Time.Compare(b.Time) }) {
		samples = append([]Sample(nil), u.Samples...)
		sort.SliceStable(samples, func(i, j int) bool { return samples[i].Time.Before(samples[j].Time) })
	}
	gpu := make([]float64, 0, len(samples))
	var mem, cpu, host []float64
	for _, s := range samples {
		if v, ok := s.GPU.Max(); ok {
			gpu = append(gpu, v)
		}
		if v, ok := s.GPUMemory.Max(); ok {
			mem = append(mem, v)
		}
		if s.CPU != nil {
			cpu = append(cpu, *s.CPU)
		}
		if s.Memory != nil {
			host = append(host, *s.Memory)
		}
	}
	if len(gpu) == 0 {
		return nil
	}
	sum := &Summary{
		Source:      "samples",
		SampleCount: len(gpu),
		GPU:         statsOfOwned(gpu),
		GPUMemory:   statsOfOwned(mem),
		CPU:         statsOfOwned(cpu),
		Memory:      statsOfOwned(host),
	}
	if u.Window != nil {
		sum.WindowHours = u.Window.Hours()
	} else {
		sum.WindowHours = SampleWindow(samples).Hours()
	}
	return sum
}

// SampleWindow is the range the samples cover: from the first sample to the
// last one plus the typical sampling interval (the median gap).
func SampleWindow(sorted []Sample) TimeRange {
	if len(sorted) == 0 {
		return TimeRange{}
	}
	first, last := sorted[0].Time, sorted[len(sorted)-1].Time
	return TimeRange{Start: first, End: last.Add(SampleStep(sorted))}
}

// SampleStep is the median gap between consecutive samples (time-sorted), or
// one hour when there is a single sample.
func SampleStep(sorted []Sample) time.Duration {
	if len(sorted) < 2 {
		return time.Hour
	}
	gaps := make([]float64, 0, len(sorted)-1)
	for i := 1; i < len(sorted); i++ {
		gaps = append(gaps, float64(sorted[i].Time.Sub(sorted[i-1].Time)))
	}
	sort.Float64s(gaps)
	return time.Duration(gaps[len(gaps)/2])
}

// StatsOf computes mean, 95th percentile and maximum; nil for no values.
func StatsOf(values []float64) *Stats {
	if len(values) == 0 {
		return nil
	}
	return statsOfOwned(append([]float64(nil), values...))
}

// statsOfOwned is StatsOf on values the caller gives up: it sorts them in
// place instead of a copy.
func statsOfOwned(sorted []float64) *Stats {
	if len(sorted) == 0 {
		return nil
	}
	sort.Float64s(sorted)
	var total float64
	for _, v := range sorted {
		total += v
	}
	return &Stats{
		Avg: round2(total / float64(len(sorted))),
		P95: round2(Percentile(sorted, 95)),
		Max: sorted[len(sorted)-1],
	}
}

// Percentile returns the p-th percentile (0–100) of sorted values by linear
// interpolation between closest ranks (the method of numpy's default).
func Percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	rank := p / 100 * float64(len(sorted)-1)
	lo := int(math.Floor(rank))
	hi := int(math.Ceil(rank))
	frac := rank - float64(lo)
	return sorted[lo] + (sorted[hi]-sorted[lo])*frac
}

func round2(v float64) float64 { return math.Round(v*100) / 100 }

// MonthlyHours is how many machine-hours a month the instance is billed
// for: 0 when stopped, else from its usage (hours per month, hours per week ×
// 730/168, or its weekly schedule), else all 730, times the replicas that
// bill for a managed item (ReplicaCount).
func (in *Instance) MonthlyHours() float64 {
	if in.State == Stopped {
		return 0
	}
	return in.Usage.MonthlyHours() * in.ReplicaCount()
}

// MonthlyHours converts the usage into billed hours per month.
func (u Usage) MonthlyHours() float64 {
	switch {
	case u.HoursPerMonth != nil:
		return *u.HoursPerMonth
	case u.HoursPerWeek != nil:
		return *u.HoursPerWeek * HoursPerMonth / HoursPerWeek
	case u.Schedule != nil:
		h, err := u.Schedule.HoursPerWeek()
		if err != nil {
			return HoursPerMonth
		}
		return h * HoursPerMonth / HoursPerWeek
	}
	return HoursPerMonth
}

// Weekdays maps the accepted day names to time.Weekday.
var Weekdays = map[string]time.Weekday{
	"sun": time.Sunday, "mon": time.Monday, "tue": time.Tuesday, "wed": time.Wednesday,
	"thu": time.Thursday, "fri": time.Friday, "sat": time.Saturday,
}

// MinutesPerWeek is the resolution of a weekly schedule.
const MinutesPerWeek = 7 * 24 * 60

// WeekMinutes marks the minutes of a week, Sunday 00:00 first, that a
// schedule keeps an instance on, in the schedule's own time zone.
type WeekMinutes [MinutesPerWeek]bool

// Week reads the schedule once for every user of it: the minutes it is on and
// its time zone (UTC when none). Overlapping windows count once. Errors name
// the window and field.
func (s *Schedule) Week() (*WeekMinutes, *time.Location, error) {
	on := new(WeekMinutes)
	loc, err := s.fill(on)
	if err != nil {
		return nil, nil, err
	}
	return on, loc, nil
}

// fill marks the schedule's minutes in on, which the caller may keep on its
// stack (10 KiB: a large fleet's schedules are read many times).
func (s *Schedule) fill(on *WeekMinutes) (*time.Location, error) {
	loc := time.UTC
	if s.Timezone != "" {
		l, err := loadLocation(s.Timezone)
		if err != nil {
			return nil, fmt.Errorf("timezone: %q is not a known time zone such as Europe/Berlin or UTC", s.Timezone)
		}
		loc = l
	}
	for i, w := range s.Windows {
		start, err := parseClock(w.Start)
		if err != nil {
			return nil, fmt.Errorf("windows[%d].start: %w", i, err)
		}
		end, err := parseClock(w.End)
		if err != nil {
			return nil, fmt.Errorf("windows[%d].end: %w", i, err)
		}
		if end <= start {
			return nil, fmt.Errorf("windows[%d]: end %s is not after start %s", i, w.End, w.Start) // both passed parseClock: HH:MM
		}
		for j, d := range w.Days {
			wd, ok := Weekdays[d]
			if !ok {
				return nil, fmt.Errorf("windows[%d].days[%d]: %q is not one of mon, tue, wed, thu, fri, sat, sun", i, j, d)
			}
			copy(on[int(wd)*24*60+start:], allDay[:end-start])
		}
	}
	return loc, nil
}

// HoursPerWeek is the number of hours a week the schedule keeps the instance on.
// Overlapping windows count once.
func (s *Schedule) HoursPerWeek() (float64, error) {
	var on WeekMinutes
	if _, err := s.fill(&on); err != nil {
		return 0, err
	}
	// A bool is one byte, 1 when true: count them as bytes.
	minutes := bytes.Count(unsafe.Slice((*byte)(unsafe.Pointer(&on[0])), len(on)), []byte{1})
	return float64(minutes) / 60, nil
}

// allDay is a day of minutes on, copied into a week by fill.
var allDay = func() (d [24 * 60]bool) {
	for i := range d {
		d[i] = true
	}
	return d
}()

// locations caches time.LoadLocation, which reads and parses the zone's file
// on every call: a large fleet reads the same few zones for every schedule.
var locations sync.Map // name → *time.Location

func loadLocation(name string) (*time.Location, error) {
	if l, ok := locations.Load(name); ok {
		return l.(*time.Location), nil
	}
	l, err := time.LoadLocation(name)
	if err != nil {
		return nil, err
	}
	if name != "Local" { // follows $TZ, which may change
		locations.Store(name, l)
	}
	return l, nil
}

func parseClock(s string) (int, error) {
	// Exactly HH:MM, two digits each, as the schema's pattern says: no sign,
	// space, third digit or trailing byte that a scanf-style reader lets by.
	if len(s) != 5 || !isDigit(s[0]) || !isDigit(s[1]) || s[2] != ':' || !isDigit(s[3]) || !isDigit(s[4]) {
		return 0, fmt.Errorf("%q is not a time of day in HH:MM form", s)
	}
	h, m := int(s[0]-'0')*10+int(s[1]-'0'), int(s[3]-'0')*10+int(s[4]-'0')
	if m > 59 || h > 24 || (h == 24 && m != 0) {
		return 0, fmt.Errorf("%q is not a time of day between 00:00 and 24:00", s)
	}
	return h*60 + m, nil
}
