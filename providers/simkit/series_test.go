package simkit

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

var keys = Keys{GPU: "gpu", GPUMemory: "gpumem", CPU: "cpu", Memory: "mem"}

var idle = fleet.Stats{Avg: 4, P95: 9, Max: 17}

// hourly reads a pattern's hourly values over [from, to) through Each, as a
// simulator serves them (a minute each, so an hour's 60 minutes).
func hourly(t *testing.T, values []float64, c Clock, from, to time.Time, v View) []float64 {
	t.Helper()
	sums := map[time.Time]float64{}
	mins := map[time.Time]int{}
	Each(values, c, from, to, v.Down, v.Loads, func(a, z time.Time, val float64) {
		for m := a; m.Before(z); m = m.Add(time.Minute) {
			h := m.Truncate(time.Hour)
			sums[h] += val
			mins[h]++
		}
	})
	var out []float64
	for h := from; h.Before(to); h = h.Add(time.Hour) {
		if mins[h] > 0 {
			out = append(out, sums[h]/float64(mins[h]))
		}
	}
	return out
}

func TestSynthesizedSeriesHaveTheFleetsFigures(t *testing.T) {
	hpw, hpm := 40.0, 365.0
	usages := []struct {
		name  string
		usage fleet.Usage
		hours int // a week
	}{
		{"always", fleet.Usage{}, 168},
		{"40 h a week", fleet.Usage{HoursPerWeek: &hpw}, 40},
		{"365 h a month", fleet.Usage{HoursPerMonth: &hpm}, 84},
		{"schedule in Berlin", fleet.Usage{Schedule: &fleet.Schedule{Timezone: "Europe/Berlin", Windows: []fleet.Window{{Days: []string{"mon", "tue", "wed", "thu", "fri"}, Start: "09:00", End: "18:00"}}}}, 45},
	}
	rng := rand.New(rand.NewPCG(5, 6))
	monday := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	checked := 0
	for i := range 200 {
		u := usages[i%len(usages)]
		top := math.Round(rng.Float64()*10000) / 100
		p95 := math.Round(rng.Float64()*top*100) / 100
		n := u.hours
		lo := math.Ceil(lowestMean(p95, top, n)*100) / 100
		if lo > p95 {
			continue
		}
		avg := math.Round((lo+rng.Float64()*(p95-lo))*100) / 100
		st := fleet.Stats{Avg: avg, P95: p95, Max: top}
		mem := fleet.Stats{Avg: roundCents(avg / 2), P95: roundCents(p95 / 2), Max: roundCents(top / 2)}
		in := fleet.Instance{ID: "i-" + u.name, Usage: u.usage, Utilization: &fleet.Utilization{GPU: &st, GPUMemory: &mem}}
		p := Synthesize(in, 4, keys, idle)
		if len(p.GPU) != 4 || p.CPU != nil || p.Memory != nil {
			t.Fatalf("%s: %d GPU series, cpu %v, memory %v: want 4 GPUs and nothing the file leaves out", u.name, len(p.GPU), p.CPU != nil, p.Memory != nil)
		}
		// Over one and over two whole weeks, from any hour on.
		start := monday.Add(time.Duration(i%168) * time.Hour)
		for _, weeks := range []int{1, 2} {
			end := start.Add(time.Duration(weeks) * 7 * 24 * time.Hour)
			for g := range p.GPU {
				vals := hourly(t, p.GPU[g], p.Clock, start, end, View{})
				if len(vals) != n*weeks {
					t.Fatalf("%s: %d running hours in %d weeks, want %d", u.name, len(vals), weeks, n*weeks)
				}
				if got := fileFigures(vals); got != st {
					t.Fatalf("%s GPU %d over %d weeks from %s: %+v, want %+v", u.name, g, weeks, start.Format("Mon 15:04"), got, st)
				}
			}
			if got := fileFigures(hourly(t, p.GPUMemory[0], p.Clock, start, end, View{})); got != mem {
				t.Fatalf("%s GPU memory: %+v, want %+v", u.name, got, mem)
			}
		}
		checked++
	}
	if checked < 100 {
		t.Fatalf("only %d possible figures", checked)
	}
}

func TestSynthesizeWithoutUtilizationIsIdleCPU(t *testing.T) {
	hpw := 60.0
	p := Synthesize(fleet.Instance{ID: "i-idle", Usage: fleet.Usage{HoursPerWeek: &hpw}}, 8, keys, idle)
	if p.GPU != nil || p.GPUMemory != nil || p.Memory != nil {
		t.Fatal("an instance without utilization has GPU or memory series")
	}
	monday := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	vals := hourly(t, p.CPU, p.Clock, monday, monday.Add(7*24*time.Hour), View{})
	if len(vals) != 60 || fileFigures(vals) != idle {
		t.Errorf("%d hours, figures %+v; want 60 at %+v", len(vals), fileFigures(vals), idle)
	}
}

func TestSynthesizeReplaysSamples(t *testing.T) {
	start := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	win := fleet.TimeRange{Start: start, End: start.Add(48 * time.Hour)}
	cpu := 30.0
	var samples []fleet.Sample
	for h := range 48 {
		if h == 10 {
			continue // an hour without a sample
		}
		at := start.Add(time.Duration(h) * time.Hour)
		// Two samples in the hour: the hour is their mean. Three GPUs.
		samples = append(samples,
			fleet.Sample{Time: at.Add(5 * time.Minute), GPU: fleet.PerGPU{float64(h), 1, 2}, CPU: &cpu},
			fleet.Sample{Time: at.Add(35 * time.Minute), GPU: fleet.PerGPU{float64(h) + 2, 1, 2}})
	}
	in := fleet.Instance{ID: "i-s", Utilization: &fleet.Utilization{Window: &win, Samples: samples}}
	p := Synthesize(in, 1, keys, idle)
	if len(p.GPU) != 3 || p.Clock.Size() != 48 {
		t.Fatalf("%d GPUs, pattern of %d hours; want 3 and 48", len(p.GPU), p.Clock.Size())
	}
	// The last window is the samples; the one before repeats them.
	for _, off := range []time.Duration{0, -48 * time.Hour, 96 * time.Hour} {
		vals := hourly(t, p.GPU[0], p.Clock, start.Add(off), start.Add(off+48*time.Hour), View{})
		if len(vals) != 47 || vals[0] != 1 || vals[9] != 10 || vals[10] != 12 {
			t.Fatalf("offset %s: %d hours, %v…", off, len(vals), vals[:11])
		}
	}
	if v := hourly(t, p.GPU[2], p.Clock, start, start.Add(time.Hour), View{}); len(v) != 1 || v[0] != 2 {
		t.Errorf("GPU 2: %v", v)
	}
	if v := hourly(t, p.CPU, p.Clock, start, start.Add(time.Hour), View{}); len(v) != 1 || v[0] != 30 {
		t.Errorf("cpu: %v", v)
	}
	if p.GPUMemory[0] != nil || len(hourly(t, p.Memory, p.Clock, start, start.Add(48*time.Hour), View{})) != 0 {
		t.Error("series the samples do not have")
	}
}

func TestTimelineStopsAndLoads(t *testing.T) {
	tl := NewTimeline()
	tl.Add("i-1", false)
	tl.Add("i-off", true)
	values := make([]float64, WeekHours)
	for i := range values {
		values[i] = 50
	}
	c := Clock{Loc: time.UTC}
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)

	if err := tl.SetLoad("i-1", 101, t0); err == nil {
		t.Error("a load of 101 % was accepted")
	}
	if err := tl.SetLoad("nobody", 5, t0); err == nil {
		t.Error("a load for an unknown instance was accepted")
	}
	if err := tl.SetLoad("i-1", 90, t0.Add(30*time.Minute+20*time.Second)); err != nil {
		t.Fatal(err)
	}
	v := tl.Observe("i-1", true, t0.Add(2*time.Hour))
	got := hourly(t, values, c, t0, t0.Add(2*time.Hour), v)
	if len(got) != 2 || got[0] != 70 || got[1] != 90 { // 30 minutes at 50, 30 at 90
		t.Errorf("hourly with a load from 10:30: %v", got)
	}
	// Stopped at 12:00 (seen then), started at 14:00: 12 and 13 are gone.
	tl.Observe("i-1", false, t0.Add(2*time.Hour))
	v = tl.Observe("i-1", true, t0.Add(4*time.Hour))
	if got := hourly(t, values, c, t0, t0.Add(5*time.Hour), v); len(got) != 3 {
		t.Errorf("%d hours with data around a two-hour stop, want 3", len(got))
	}
	if !v.RanAfter(t0) || v.Stopped {
		t.Error("a running instance did not run")
	}
	off := tl.Observe("i-off", false, t0)
	if off.RanAfter(t0.Add(-1000*time.Hour)) || len(hourly(t, values, c, t0, t0.Add(3*time.Hour), off)) != 0 {
		t.Error("an instance stopped since ever has data")
	}
}
