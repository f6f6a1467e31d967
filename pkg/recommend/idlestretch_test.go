package recommend

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// sampleWeek builds hourly (or finer) samples over a week from busy(t).
func sampleWeek(step time.Duration, busy func(time.Time) (float64, bool)) []fleet.Sample {
	start := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	var out []fleet.Sample
	for t := start; t.Before(start.Add(7 * 24 * time.Hour)); t = t.Add(step) {
		v, ok := busy(t)
		s := fleet.Sample{Time: t}
		if ok {
			s.GPU = fleet.PerGPU{v}
		}
		out = append(out, s)
	}
	return out
}

func TestIdleStretches(t *testing.T) {
	weekdays := func(t time.Time) (float64, bool) {
		if wd := t.Weekday(); wd != time.Saturday && wd != time.Sunday && t.Hour() >= 9 && t.Hour() < 18 {
			return 60, true
		}
		return 1, true
	}
	for _, c := range []struct {
		name        string
		samples     []fleet.Sample
		delay       float64
		saved, span float64
	}{
		// The week starts Monday 2026-11-23. Busy Mon–Fri 09–18: idle runs
		// are Mon 00–09 (9 h), four nights 18–09 (15 h each) and Fri
		// 18–Sun 24 (54 h); one hour of each run is the delay.
		{"weekdays hourly", sampleWeek(time.Hour, weekdays), 1, 8 + 4*14 + 53, 168},
		{"weekdays quarter-hourly", sampleWeek(15*time.Minute, weekdays), 1, 8 + 4*14 + 53, 168},
		{"delay longer than every night", sampleWeek(time.Hour, weekdays), 16, 54 - 16, 168},
		{"always busy", sampleWeek(time.Hour, func(time.Time) (float64, bool) { return 50, true }), 1, 0, 168},
		{"always idle", sampleWeek(time.Hour, func(time.Time) (float64, bool) { return 0, true }), 1, 167, 168},
		// A sample with no GPU value is not idle: it ends the run.
		// Runs: Mon 00–12 (12 h), six of 13–12 next day (23 h), Sun 13–24 (11 h).
		{"gaps break runs", sampleWeek(time.Hour, func(t time.Time) (float64, bool) { return 0, t.Hour() != 12 }), 1, 11 + 6*22 + 10, 168},
	} {
		t.Run(c.name, func(t *testing.T) {
			saved, span := idleStretches(c.samples, 5, c.delay)
			if math.Abs(saved-c.saved) > 1e-9 || math.Abs(span-c.span) > 1e-9 {
				t.Errorf("saved %v of %v h, want %v of %v", saved, span, c.saved, c.span)
			}
			// The order of the samples does not matter.
			shuffled := append([]fleet.Sample(nil), c.samples...)
			rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
			if s2, sp2 := idleStretches(shuffled, 5, c.delay); s2 != saved || sp2 != span {
				t.Errorf("shuffled: %v of %v, want %v of %v", s2, sp2, saved, span)
			}
		})
	}
}

// Random sample sets: the idle shutdown never saves more than the idle
// time, never more than the sampled span, and a longer delay never saves
// more.
func TestIdleStretchesProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 35))
	for range 300 {
		p := r.Float64()
		samples := sampleWeek(time.Duration(15+r.IntN(4)*15)*time.Minute, func(time.Time) (float64, bool) {
			if r.Float64() < 0.05 {
				return 0, false
			}
			if r.Float64() < p {
				return 1, true
			}
			return 70, true
		})
		prev := math.Inf(1)
		for _, d := range []float64{0, 0.5, 1, 2, 6} {
			saved, span := idleStretches(samples, 5, d)
			if saved < 0 || saved > span+1e-9 || saved > prev+1e-9 {
				t.Fatalf("delay %v: saved %v of %v (shorter delay saved %v)", d, saved, span, prev)
			}
			prev = saved
		}
	}
}

// A SageMaker notebook used on weekdays and idle the rest, idle shutdown
// off: the shutdown is advised with the saving of its idle stretches; with
// the shutdown on, nothing; tagged production, protected.
func TestIdleShutdownSavesIdleStretches(t *testing.T) {
	nb := func(shutdown *float64, tags map[string]string) fleet.Instance {
		samples := sampleWeek(time.Hour, func(t time.Time) (float64, bool) {
			if wd := t.Weekday(); wd != time.Saturday && wd != time.Sunday && t.Hour() >= 9 && t.Hour() < 18 {
				return 60, true
			}
			return 1, true
		})
		w := fleet.TimeRange{Start: samples[0].Time, End: samples[0].Time.Add(168 * time.Hour)}
		return fleet.Instance{ID: "nb", Name: "nb", Provider: fleet.AWS, Region: "us-east-1", InstanceType: "ml.g5.xlarge",
			GPU: fleet.GPU{Model: "A10G", Count: 1, MemoryGiB: 24}, Lifecycle: fleet.OnDemand, State: fleet.Running, Tags: tags,
			Utilization: &fleet.Utilization{Window: &w, Samples: samples},
			Managed:     &fleet.Managed{Service: fleet.SageMaker, Kind: fleet.KindNotebook, IdleShutdownMinutes: shutdown}}
	}
	off, on := 0.0, 30.0
	for _, c := range []struct {
		name      string
		in        fleet.Instance
		wantShare float64 // of the cost saved; 0: no saving counted
	}{
		{"off", nb(&off, nil), (8 + 4*14 + 53) / 168.0},
		{"unknown", nb(nil, nil), (8 + 4*14 + 53) / 168.0},
		{"already on", nb(&on, nil), 0},
		{"production", nb(&off, map[string]string{"environment": "production"}), 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind, Instances: []fleet.Instance{c.in}}
			p := RunWith(f, fixtureCatalog(), DefaultPolicy(), Options{})
			cost, _ := p.Instances[0].MonthlyCost.Float64()
			saved, _ := p.Summary.MonthlySavings.Float64()
			if math.Abs(saved-cost*c.wantShare) > 0.01 {
				t.Errorf("saved %.2f of %.2f, want %.2f", saved, cost, cost*c.wantShare)
			}
		})
	}
}
