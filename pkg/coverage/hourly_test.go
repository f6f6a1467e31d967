package coverage

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
)

func scheduled(id, typ, tz string, days []string, start, end string) fleet.Instance {
	in := inst(id, fleet.AWS, "us-east-1", typ)
	in.Usage.Schedule = &fleet.Schedule{Timezone: tz, Windows: []fleet.Window{{Days: days, Start: start, End: end}}}
	return in
}

var weekdays = []string{"mon", "tue", "wed", "thu", "fri"}

func ri(id, typ string, count float64, flexible bool) fleet.Held {
	return fleet.Held{ID: id, Provider: fleet.AWS, Kind: fleet.HeldStandardRI, Term: "1y", Scope: fleet.HeldScope{Level: "region", Region: "us-east-1"},
		InstanceType: typ, Count: count, SizeFlexible: flexible, HourlyRate: dec("3")}
}

func shareOf(r Result, id string) float64 {
	if c := r.Instances[id]; c != nil {
		return c.Share
	}
	return 0
}

// TestHourByHour: commitments apply hour by hour, as the clouds bill them.
// Machines on the same hours cannot share one reservation's hours, machines
// on other hours can, and a machine without a schedule runs its monthly
// hours spread evenly over the week.
func TestHourByHour(t *testing.T) {
	for _, tc := range []struct {
		name      string
		instances []fleet.Instance
		held      []fleet.Held
		want      map[string]float64
		used      float64
	}{
		{
			// Both 09–18 on weekdays (45 h a week, 195.5 h a month each): the
			// month's 391 h would fit one RI's 730, the hours do not.
			name: "same office hours overlap",
			instances: []fleet.Instance{scheduled("a", "g5.xlarge", "UTC", weekdays, "09:00", "18:00"),
				scheduled("b", "g5.xlarge", "UTC", weekdays, "09:00", "18:00")},
			held: []fleet.Held{ri("ri", "g5.xlarge", 1, false)},
			want: map[string]float64{"a": 1, "b": 0}, used: 45.0 / 168,
		},
		{
			name: "day and night shifts share",
			instances: []fleet.Instance{scheduled("day", "g5.xlarge", "UTC", weekdays, "08:00", "20:00"),
				scheduled("night", "g5.xlarge", "UTC", weekdays, "20:00", "24:00")},
			held: []fleet.Held{ri("ri", "g5.xlarge", 1, false)},
			want: map[string]float64{"day": 1, "night": 1}, used: 80.0 / 168,
		},
		{
			// 09–17 in Berlin (UTC+1 in December) is 08–16 UTC, in New York
			// (UTC−5) 14–22 UTC: they overlap 2 of their 8 hours.
			name: "time zones",
			instances: []fleet.Instance{scheduled("berlin", "g5.xlarge", "Europe/Berlin", weekdays, "09:00", "17:00"),
				scheduled("newyork", "g5.xlarge", "America/New_York", weekdays, "09:00", "17:00")},
			held: []fleet.Held{ri("ri", "g5.xlarge", 1, false)},
			want: map[string]float64{"berlin": 1, "newyork": 0.75}, used: 70.0 / 168,
		},
		{
			// The scheduled machine (by ID first) takes its 45 hours; the one
			// running 365 h a month, half of every hour, is covered the rest.
			name: "scheduled and spread evenly",
			instances: []fleet.Instance{scheduled("a-office", "g5.xlarge", "UTC", weekdays, "09:00", "18:00"),
				func() fleet.Instance {
					in := inst("b-half", fleet.AWS, "us-east-1", "g5.xlarge")
					in.Usage = hours(365)
					return in
				}()},
			held: []fleet.Held{ri("ri", "g5.xlarge", 1, false)},
			want: map[string]float64{"a-office": 1, "b-half": 123.0 / 168}, used: (45 + 0.5*123) / 168,
		},
		{
			// A size change within the family: a g5.24xlarge (192 units) on
			// office hours and a g5.12xlarge (96) at night under one
			// flexible g5.24xlarge RI: both in full.
			name: "size-flexible RI across sizes and hours",
			instances: []fleet.Instance{scheduled("big", "g5.24xlarge", "UTC", weekdays, "08:00", "20:00"),
				scheduled("small", "g5.12xlarge", "UTC", weekdays, "20:00", "24:00")},
			held: []fleet.Held{ri("ri", "g5.24xlarge", 1, true)},
			want: map[string]float64{"big": 1, "small": 1}, used: (60 + 20*0.5) / 168,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := allocate(t, &fleet.Fleet{Instances: tc.instances, Commitments: tc.held})
			for id, want := range tc.want {
				if got := shareOf(r, id); math.Abs(got-want) > 1e-9 {
					t.Errorf("%s covered %v, want %v", id, got, want)
				}
			}
			if u := r.Commitments[0]; math.Abs(u.Utilization-tc.used) > 1e-9 {
				t.Errorf("utilization %v, want %v", u.Utilization, tc.used)
			}
		})
	}
	t.Run("savings plan spends per hour", func(t *testing.T) {
		// $0.40/h at the g5.xlarge plan rate ($0.8048/h): half a machine
		// each hour; two machines on the same office hours share the half.
		f := &fleet.Fleet{Instances: []fleet.Instance{scheduled("a", "g5.xlarge", "UTC", weekdays, "09:00", "18:00"),
			scheduled("b", "g5.xlarge", "UTC", weekdays, "09:00", "18:00")},
			Commitments: []fleet.Held{{ID: "sp", Provider: fleet.AWS, Kind: fleet.HeldComputeSavingsPlan, Term: "1y", HourlyCommitment: dec("0.4024")}}}
		r := allocate(t, f)
		if a, b := shareOf(r, "a"), shareOf(r, "b"); math.Abs(a-0.5) > 1e-9 || b != 0 {
			t.Errorf("a %v b %v", a, b)
		}
		if u := r.Commitments[0]; math.Abs(u.Utilization-45.0/168) > 1e-9 {
			t.Errorf("utilization %v", u.Utilization)
		}
	})
	t.Run("capacity reservation per hour", func(t *testing.T) {
		f := &fleet.Fleet{Instances: []fleet.Instance{scheduled("a", "g5.xlarge", "UTC", weekdays, "09:00", "18:00"),
			scheduled("b", "g5.xlarge", "UTC", weekdays, "09:00", "18:00")},
			Commitments: []fleet.Held{{ID: "cr", Provider: fleet.AWS, Kind: fleet.HeldCapacityReservation, Scope: fleet.HeldScope{Region: "us-east-1"}, InstanceType: "g5.xlarge", Count: 1}}}
		r := allocate(t, f)
		if a, b := shareOf(r, "a"), shareOf(r, "b"); a != 1 || b != 0 {
			t.Errorf("a %v b %v", a, b)
		}
		// 45 of the week's 168 hours billed to a at $1.006/h: 195.54 h.
		if p := r.Instances["a"].Parts[0]; !p.Monthly.Equal(decimal.RequireFromString("196.71")) {
			t.Errorf("part %+v", p)
		}
	})
	t.Run("no schedule: the monthly model", func(t *testing.T) {
		a, b := inst("a", fleet.AWS, "us-east-1", "g5.xlarge"), inst("b", fleet.AWS, "us-east-1", "g5.xlarge")
		a.Usage, b.Usage = hours(365), hours(365)
		r := allocate(t, &fleet.Fleet{Instances: []fleet.Instance{a, b}, Commitments: []fleet.Held{ri("ri", "g5.xlarge", 1, false)}})
		if shareOf(r, "a") != 1 || shareOf(r, "b") != 1 || r.Commitments[0].Utilization != 1 {
			t.Errorf("%+v %+v", r.Instances, r.Commitments[0])
		}
	})
}

// g2Prices lays per-unit on-demand prices of G2 vCPUs, memory and L4s, and
// of A2 and A3 with A100 and H100 GPUs, over the test catalog (as a live
// scan reads them from the Billing Catalog).
func g2Prices(withGPU bool) pricing.Catalog {
	base := testCatalog()
	for _, o := range []struct {
		typ, reg, od, gpu string
		n, v, m           float64
	}{
		{"a2-highgpu-1g", "us-central1", "3.67", "A100", 1, 12, 85},
		{"a2-highgpu-4g", "us-central1", "14.69", "A100", 4, 48, 340},
		{"a3-highgpu-8g", "us-central1", "88.25", "H100", 8, 208, 1872},
	} {
		base.AddOffer(pricing.InstanceType{Provider: fleet.GCP, Name: o.typ, GPUModel: o.gpu, GPUCount: o.n, VCPUs: o.v, MemoryGiB: o.m}, o.reg, o.od, "")
	}
	mk := func(region, name, resource, v string) pricing.Price {
		return pricing.Price{Provider: fleet.GCP, Region: region, InstanceType: name, Resource: resource, Option: pricing.OnDemand, Hourly: decimal.RequireFromString(v),
			Currency: pricing.Currency, Unit: pricing.UnitHour, Source: "test SKUs", AsOf: "2026-11-30"}
	}
	live := []pricing.Price{
		mk("europe-west4", "g2", pricing.ResourceVCPU, "0.03"), mk("europe-west4", "g2", pricing.ResourceMemory, "0.004"),
		mk("us-central1", "a2", pricing.ResourceVCPU, "0.0319"), mk("us-central1", "a2", pricing.ResourceMemory, "0.0043"),
		mk("us-central1", "a3", pricing.ResourceVCPU, "0.0350"), mk("us-central1", "a3", pricing.ResourceMemory, "0.0047"),
		mk("us-central1", "A100", pricing.ResourceGPU, "2.933"), mk("us-central1", "H100", pricing.ResourceGPU, "9.796"),
	}
	if withGPU {
		live = append(live, mk("europe-west4", "L4", pricing.ResourceGPU, "0.6"))
	}
	return pricing.Overlay(base, live)
}

func cud(id, region, series string, commit string, res ...fleet.HeldResource) fleet.Held {
	return fleet.Held{ID: id, Provider: fleet.GCP, Kind: fleet.HeldResourceCUD, Term: "1y", Scope: fleet.HeldScope{Region: region}, InstanceFamily: series,
		Resources: res, HourlyCommitment: dec(commit)}
}

// allocateWith allocates a valid test fleet over cat and checks the
// invariants.
func allocateWith(t *testing.T, cat pricing.Catalog, f *fleet.Fleet) Result {
	t.Helper()
	f.APIVersion, f.Kind = fleet.APIVersion, fleet.Kind
	if err := f.Validate(); err != nil {
		t.Fatalf("test fleet invalid: %v", err)
	}
	r := Allocate(Input{Fleet: f, Catalog: cat, Now: now})
	checkInvariants(t, f, r)
	return r
}

// TestCUDShareByPrice: where the catalog prices each resource, a machine's
// share of a resource-based CUD is the part of its on-demand value the
// resources it commits are: g2-standard-4 is 4 × 0.03 + 16 × 0.004 + 0.6 =
// $0.784/h, its L4 $0.60 of it; g2-standard-48 is 1.44 + 0.768 + 2.4 =
// $4.608/h.
func TestCUDShareByPrice(t *testing.T) {
	g2 := func(id, typ string) fleet.Instance { return inst(id, fleet.GCP, "europe-west4", typ) }
	vcpu := func(n float64) fleet.HeldResource { return fleet.HeldResource{Type: "vcpu", Amount: n} }
	mem := func(n float64) fleet.HeldResource { return fleet.HeldResource{Type: "memory", Amount: n} }
	gpu := func(m string, n float64) fleet.HeldResource {
		return fleet.HeldResource{Type: "gpu", GPUModel: m, Amount: n}
	}
	for _, tc := range []struct {
		name      string
		cat       pricing.Catalog
		instances []fleet.Instance
		held      []fleet.Held
		want      map[string]float64
		note      string
	}{
		{
			// vCPUs and memory only: the hosts are covered, the L4s are not.
			name: "host only, mixed g2", cat: g2Prices(true),
			instances: []fleet.Instance{g2("big", "g2-standard-48"), g2("small", "g2-standard-4")},
			held:      []fleet.Held{cud("cud", "europe-west4", "g2", "1", vcpu(52), mem(208))},
			want:      map[string]float64{"big": 2.208 / 4.608, "small": 0.184 / 0.784},
		},
		{
			// 5 L4 and 50 vCPUs, no memory: big takes 4 L4 and 48 vCPUs,
			// small its L4 and the 2 vCPUs left.
			name: "GPUs and vCPUs, mixed g2", cat: g2Prices(true),
			instances: []fleet.Instance{g2("big", "g2-standard-48"), g2("small", "g2-standard-4")},
			held:      []fleet.Held{cud("cud", "europe-west4", "g2", "3", gpu("nvidia-l4", 5), vcpu(50))},
			want:      map[string]float64{"big": 3.84 / 4.608, "small": 0.66 / 0.784},
		},
		{
			// No L4 price: the scarcest committed resource's share, the
			// conservative rule, with a note.
			name: "a unit price unknown", cat: g2Prices(false),
			instances: []fleet.Instance{g2("big", "g2-standard-48"), g2("small", "g2-standard-4")},
			held:      []fleet.Held{cud("cud", "europe-west4", "g2", "1", vcpu(52), mem(208))},
			want:      map[string]float64{"big": 1, "small": 1}, note: "2 machine(s) without a per-resource on-demand price",
		},
		{
			// An A2 CUD of A100s and vCPUs: the a2-highgpu-4g's GPUs and
			// vCPUs (4 × 2.933 + 48 × 0.0319 of 4 × 2.933 + 48 × 0.0319 +
			// 340 × 0.0043); the a3's H100s and a3 vCPUs are not its.
			name: "a2 and a3", cat: g2Prices(true),
			instances: []fleet.Instance{inst("a2", fleet.GCP, "us-central1", "a2-highgpu-4g"), inst("a3", fleet.GCP, "us-central1", "a3-highgpu-8g")},
			held:      []fleet.Held{cud("cud", "us-central1", "a2", "12", gpu("A100", 4), vcpu(48))},
			want:      map[string]float64{"a2": (4*2.933 + 48*0.0319) / (4*2.933 + 48*0.0319 + 340*0.0043), "a3": 0},
		},
		{
			// An A3 CUD of 8 H100 alone covers the GPUs of the a3-highgpu-8g
			// and half of... nothing else: the A2 has no H100.
			name: "a3 GPUs only", cat: g2Prices(true),
			instances: []fleet.Instance{inst("a2", fleet.GCP, "us-central1", "a2-highgpu-1g"), inst("a3", fleet.GCP, "us-central1", "a3-highgpu-8g")},
			held:      []fleet.Held{cud("cud", "us-central1", "a3", "50", gpu("H100", 8))},
			want:      map[string]float64{"a2": 0, "a3": 8 * 9.796 / (8*9.796 + 208*0.035 + 1872*0.0047)},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := allocateWith(t, tc.cat, &fleet.Fleet{Instances: tc.instances, Commitments: tc.held})
			for id, want := range tc.want {
				if got := shareOf(r, id); math.Abs(got-want) > 1e-9 {
					t.Errorf("%s covered %v, want %v", id, got, want)
				}
			}
			notes := strings.Join(r.Commitments[0].Notes, "; ")
			if tc.note != "" && !strings.Contains(notes, tc.note) || tc.note == "" && strings.Contains(notes, "per-resource") {
				t.Errorf("notes %q, want %q", notes, tc.note)
			}
		})
	}
	t.Run("two CUDs, host and GPUs, make one machine", func(t *testing.T) {
		r := allocateWith(t, g2Prices(true), &fleet.Fleet{Instances: []fleet.Instance{g2("small", "g2-standard-4")},
			Commitments: []fleet.Held{cud("host", "europe-west4", "g2", "1", vcpu(4), mem(16)), cud("gpus", "europe-west4", "", "1", gpu("L4", 1))}})
		c := r.Instances["small"]
		if c == nil || math.Abs(c.Share-1) > 1e-9 || len(c.Parts) != 2 || math.Abs(c.Parts[0].Share-0.6/0.784) > 1e-9 {
			t.Errorf("%+v", c)
		}
	})
}

// sampled is an instance running hoursPerWeek whose utilization samples,
// every 30 minutes over the days given from Monday 16 November 2026, fall
// between from and to (UTC hours) on weekdays.
func sampled(id string, perWeek float64, days, from, to int) fleet.Instance {
	in := inst(id, fleet.AWS, "us-east-1", "g5.xlarge")
	in.Usage.HoursPerWeek = &perWeek
	start := time.Date(2026, 11, 16, 0, 0, 0, 0, time.UTC)
	var ss []fleet.Sample
	for t := start; t.Before(start.AddDate(0, 0, days)); t = t.Add(30 * time.Minute) {
		if wd := t.Weekday(); wd != time.Saturday && wd != time.Sunday && t.Hour() >= from && t.Hour() < to {
			ss = append(ss, fleet.Sample{Time: t, GPU: fleet.PerGPU{50}})
		}
	}
	in.Utilization = &fleet.Utilization{Samples: ss}
	return in
}

// TestHoursFromSamples: a machine without a schedule that runs part of the
// week is placed in the hours its utilization samples were taken in, once
// they span a week.
func TestHoursFromSamples(t *testing.T) {
	for _, tc := range []struct {
		name      string
		instances []fleet.Instance
		want      map[string]float64
	}{
		{"same sampled hours overlap", []fleet.Instance{sampled("a", 45, 14, 9, 18), sampled("b", 45, 14, 9, 18)}, map[string]float64{"a": 1, "b": 0}},
		{"day and night share", []fleet.Instance{sampled("a", 45, 14, 9, 18), sampled("b", 45, 14, 0, 9)}, map[string]float64{"a": 1, "b": 1}},
		// 60 h a week, samples in 45 of them: the other 15 spread over the
		// 123 unsampled hours, where b (sampled at night) is.
		{"more hours than samples", []fleet.Instance{sampled("a", 60, 14, 9, 18), sampled("b", 45, 14, 0, 9)}, map[string]float64{"a": 1, "b": 1 - 45*15.0/123/45}},
		{"under a week of samples: spread evenly", []fleet.Instance{sampled("a", 45, 5, 9, 18), sampled("b", 45, 5, 9, 18)}, map[string]float64{"a": 1, "b": 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := allocate(t, &fleet.Fleet{Instances: tc.instances, Commitments: []fleet.Held{ri("ri", "g5.xlarge", 1, false)}})
			for id, want := range tc.want {
				if got := shareOf(r, id); math.Abs(got-want) > 1e-6 {
					t.Errorf("%s covered %v, want %v", id, got, want)
				}
			}
		})
	}
}

// TestFromSamplesKeepsHours: however the samples fall, the profile holds
// the instance's hours a week, no hour past a whole one.
func TestFromSamplesKeepsHours(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 33))
	for range 500 {
		start := now.Add(-time.Duration(r.IntN(1000)) * time.Hour)
		var ss []fleet.Sample
		for range 2 + r.IntN(400) {
			ss = append(ss, fleet.Sample{Time: start.Add(time.Duration(r.IntN(30*24*60)) * time.Minute)})
		}
		onSum := r.Float64() * hoursInWeek
		w := fromSamples(ss, onSum)
		if w == nil {
			continue
		}
		sum := 0.0
		for _, v := range w {
			if !(v >= 0 && v <= 1) {
				t.Fatalf("hour at %v", v)
			}
			sum += v
		}
		if math.Abs(sum-onSum) > 1e-9*hoursInWeek {
			t.Fatalf("%d samples, %v hours a week placed as %v", len(ss), onSum, sum)
		}
	}
}

// TestHourlyCapacity: over random fleets of g5 sizes on random schedules
// under one size-flexible RI, the normalized units covered never exceed the
// RI's units in the hours some machine runs: a reservation's idle hours
// cannot be lent to machines running in other hours (the monthly model
// did: it counted 168 hours a week for any schedule).
func TestHourlyCapacity(t *testing.T) {
	sizes := []string{"g5.xlarge", "g5.12xlarge", "g5.24xlarge"}
	zones := []string{"UTC", "Europe/Berlin", "America/New_York", "Asia/Kolkata"}
	days := [][]string{weekdays, {"sat", "sun"}, {"mon", "wed", "fri"}}
	for seed := range uint64(300) {
		r := rand.New(rand.NewPCG(seed, 168))
		f := &fleet.Fleet{}
		for i := range 2 + r.IntN(10) {
			start := r.IntN(23)
			end := start + 1 + r.IntN(24-start)
			f.Instances = append(f.Instances, scheduled(fmt.Sprintf("i%02d", i), sizes[r.IntN(len(sizes))], zones[r.IntN(len(zones))],
				days[r.IntN(len(days))], fmt.Sprintf("%02d:00", start), fmt.Sprintf("%02d:00", end)))
		}
		held := ri("ri", sizes[r.IntN(len(sizes))], float64(1+r.IntN(3)), true)
		f.Commitments = []fleet.Held{held}
		res := allocate(t, f)
		prof := &profiles{at: now}
		var union week
		units := 0.0
		for _, in := range f.Instances {
			w := prof.of(in.Usage)
			sum := 0.0
			for h, v := range w {
				union[h] = max(union[h], min(1, math.Ceil(v)))
				sum += v
			}
			nf, _ := NormalizationFactor(in.InstanceType)
			units += shareOf(res, in.ID) * sum * nf
		}
		hours := 0.0
		for _, v := range union {
			hours += v
		}
		heldNF, _ := NormalizationFactor(held.InstanceType)
		if bound := held.Count * heldNF * hours; units > bound*(1+1e-9) {
			t.Fatalf("seed %d: %v units covered, the RI has %v in the %v hours anything runs", seed, units, bound, hours)
		}
	}
}
