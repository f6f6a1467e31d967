// Package fleetgen generates realistic, valid fleets from a seed, for property
// tests, benchmarks and memory tests: mixed providers, regions, instance types,
// lifecycles, states, workloads, tags, usage (hours, weekly schedules in every
// time zone) and utilization (summary statistics or samples).
package fleetgen

import (
	_ "embed"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// Options says what to generate.
type Options struct {
	// Instances is the fleet's size.
	Instances int
	// Seed makes the fleet reproducible.
	Seed uint64
	// SampleShare is the share (0–1) of instances whose utilization is raw
	// samples rather than summary statistics.
	SampleShare float64
	// MaxSamples caps the samples of one instance (hourly over up to two weeks
	// when 0).
	MaxSamples int
	// Hostile draws the edge cases too: schedules at any minute, 24:00 ends,
	// overlapping windows, every time zone, samples sparse, dense, out of
	// order, duplicated, at DST changes, empty utilization.
	Hostile bool
	// Now is the end of the utilization windows (default 2026-11-30T00:00Z).
	Now time.Time
}

type shape struct {
	provider fleet.Provider
	typ      string
	model    string
	gpus     float64
	memGiB   float64
	regions  []string
}

var shapes = []shape{
	{fleet.AWS, "g4dn.xlarge", "T4", 1, 16, []string{"us-east-1", "us-west-2", "eu-west-1"}},
	{fleet.AWS, "g5.2xlarge", "A10G", 1, 24, []string{"us-east-1", "us-west-2", "eu-central-1"}},
	{fleet.AWS, "g5.12xlarge", "A10G", 4, 24, []string{"us-east-1", "us-west-2"}},
	{fleet.AWS, "g6.xlarge", "L4", 1, 24, []string{"us-east-1", "us-east-2"}},
	{fleet.AWS, "p4d.24xlarge", "A100", 8, 40, []string{"us-east-1", "us-west-2"}},
	{fleet.AWS, "p5.48xlarge", "H100", 8, 80, []string{"us-east-1", "us-east-2"}},
	{fleet.Azure, "Standard_NC4as_T4_v3", "T4", 1, 16, []string{"eastus", "westeurope"}},
	{fleet.Azure, "Standard_NC24ads_A100_v4", "A100-80GB", 1, 80, []string{"eastus", "westus2"}},
	{fleet.Azure, "Standard_ND96asr_v4", "A100", 8, 40, []string{"eastus"}},
	{fleet.Azure, "Standard_NV36ads_A10_v5", "A10", 1, 24, []string{"eastus", "westeurope"}},
	{fleet.GCP, "a2-highgpu-1g", "A100", 1, 40, []string{"us-central1", "europe-west4"}},
	{fleet.GCP, "g2-standard-4", "L4", 1, 24, []string{"us-central1", "asia-southeast1"}},
	{fleet.GCP, "a3-highgpu-8g", "H100", 8, 80, []string{"us-central1"}},
}

// Zones are time zones a schedule is drawn in: UTC offsets of whole, half and
// three-quarter hours, both hemispheres' daylight-saving time, Lord Howe's
// half-hour shift and Apia's skipped day.
var Zones = []string{
	"UTC", "", "Europe/Berlin", "Europe/London", "America/New_York", "America/Los_Angeles",
	"America/St_Johns", "America/Sao_Paulo", "America/Santiago", "Asia/Kolkata", "Asia/Kathmandu",
	"Asia/Tehran", "Asia/Kabul", "Asia/Tokyo", "Australia/Adelaide", "Australia/Eucla",
	"Australia/Lord_Howe", "Australia/Sydney", "Pacific/Apia", "Pacific/Chatham", "Pacific/Kiritimati",
	"Pacific/Marquesas", "Pacific/Honolulu", "Africa/Casablanca", "Asia/Gaza", "Antarctica/Troll",
	"Etc/GMT+12", "Etc/GMT-14",
}

var days = []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}

// Generate returns a fleet that passes fleet.Validate.
func Generate(o Options) *fleet.Fleet {
	r := rand.New(rand.NewPCG(o.Seed, o.Seed^0x9e3779b97f4a7c15))
	now := o.Now
	if now.IsZero() {
		now = time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	}
	f := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind, Metadata: fleet.Metadata{Name: fmt.Sprintf("generated-%d", o.Seed)}}
	f.Instances = make([]fleet.Instance, o.Instances)
	runs := []string{"llm-pretrain", "vision-ft", "rl-sweep"}
	for i := range f.Instances {
		g := gen{r: r, o: o, now: now}
		f.Instances[i] = g.instance(i, runs)
	}
	return f
}

type gen struct {
	r   *rand.Rand
	o   Options
	now time.Time
}

func (g *gen) pick(n int) int { return g.r.IntN(n) }

func (g *gen) chance(p float64) bool { return g.r.Float64() < p }

func (g *gen) instance(i int, runs []string) fleet.Instance {
	sh := shapes[g.pick(len(shapes))]
	in := fleet.Instance{
		ID:           fmt.Sprintf("%s-%07d", sh.provider, i),
		Provider:     sh.provider,
		Region:       sh.regions[g.pick(len(sh.regions))],
		InstanceType: sh.typ,
		Lifecycle:    []fleet.Lifecycle{fleet.OnDemand, fleet.OnDemand, fleet.OnDemand, fleet.Spot, fleet.Committed}[g.pick(5)],
		State:        fleet.Running,
		Account:      fmt.Sprintf("acct-%d", g.pick(12)),
	}
	if g.chance(0.08) {
		in.State = fleet.Stopped
	}
	if g.chance(0.5) {
		in.Name = fmt.Sprintf("node-%d", i)
	}
	if sh.gpus > 0 && g.chance(0.7) {
		in.GPU = fleet.GPU{Model: sh.model, Count: sh.gpus, MemoryGiB: sh.memGiB}
	}
	if g.chance(0.6) {
		lt := g.now.Add(-time.Duration(1+g.pick(2000)) * time.Hour)
		in.LaunchTime = &lt
	}
	in.Tags = g.tags(i)
	switch g.pick(6) {
	case 0:
		h := math.Round(g.r.Float64()*fleet.MaxHoursPerMonth*10) / 10
		in.Usage.HoursPerMonth = &h
	case 1:
		h := float64(g.pick(169))
		in.Usage.HoursPerWeek = &h
	case 2:
		in.Usage.Schedule = g.schedule()
	}
	if g.chance(0.85) {
		in.Workload = g.workload(runs)
	}
	if g.chance(0.05) {
		p := decimal.NewFromFloat(math.Round(g.r.Float64()*3000) / 100)
		in.HourlyPrice = &p
	}
	in.Utilization = g.utilization(int(max(sh.gpus, 1)))
	return in
}

func (g *gen) tags(i int) map[string]string {
	t := map[string]string{}
	teams := []string{"ml-platform", "research", "search", "ads", "vision"}
	if g.chance(0.8) {
		t[[]string{"team", "Team", "TEAM", "owner-team"}[g.pick(4)]] = teams[g.pick(len(teams))]
	}
	if g.chance(0.7) {
		t[[]string{"env", "Environment", "stage"}[g.pick(3)]] = []string{"prod", "production", "dev", "staging", "Prod", "prd", "test"}[g.pick(7)]
	}
	if g.chance(0.5) {
		t["cost-center"] = fmt.Sprintf("cc-%03d", g.pick(40))
	}
	if g.chance(0.4) {
		t["owner"] = fmt.Sprintf("user%d@example.com", g.pick(300))
	}
	if g.chance(0.3) {
		t["project"] = fmt.Sprintf("proj-%d", g.pick(25))
	}
	if g.chance(0.1) {
		t["gpufinops:exempt"] = []string{"true", "yes", "1", "false"}[g.pick(4)]
	}
	if g.chance(0.05) {
		t["aws:autoscaling:groupName"] = fmt.Sprintf("asg-%d", i%7)
	}
	if len(t) == 0 {
		return nil
	}
	return t
}

func (g *gen) workload(runs []string) *fleet.Workload {
	w := &fleet.Workload{Type: fleet.WorkloadTypes[g.pick(len(fleet.WorkloadTypes))]}
	if g.chance(0.5) {
		w.ParamsBillions = []float64{0.35, 1.5, 7, 8, 13, 70, 405}[g.pick(7)]
		w.Precision = fleet.Precisions[g.pick(len(fleet.Precisions))]
		w.Model = fmt.Sprintf("model-%gb", w.ParamsBillions)
	}
	if g.chance(0.5) {
		b := g.chance(0.5)
		w.Checkpoints = &b
	}
	switch w.Type {
	case fleet.Inference:
		if g.chance(0.6) {
			w.TokensPerSecond = math.Round(g.r.Float64() * 5000)
			w.RequestsPerSecond = math.Round(g.r.Float64()*100) / 10
		}
	case fleet.Training:
		if g.chance(0.4) {
			w.TrainingRun = runs[g.pick(len(runs))]
			w.TrainingRunHours = float64(1 + g.pick(2000))
		}
	}
	return w
}

func (g *gen) clock(m int) string { return fmt.Sprintf("%02d:%02d", m/60, m%60) }

// schedule draws 1–4 windows. Hostile schedules start and end at any minute,
// end at 24:00 and overlap.
func (g *gen) schedule() *fleet.Schedule {
	s := &fleet.Schedule{Timezone: Zones[g.pick(len(Zones))]}
	if g.o.Hostile && g.chance(0.5) {
		s.Timezone = AllZones[g.pick(len(AllZones))]
	}
	n := 1 + g.pick(4)
	for range n {
		var start, end int
		if g.o.Hostile {
			start = g.pick(24 * 60)
			end = start + 1 + g.pick(24*60-start)
			if g.chance(0.3) {
				end = 24 * 60
			}
		} else {
			start = 60 * g.pick(12)
			end = start + 60*(1+g.pick(24-start/60))
		}
		w := fleet.Window{Start: g.clock(start), End: g.clock(end)}
		for _, d := range days {
			if g.chance(0.6) {
				w.Days = append(w.Days, d)
			}
		}
		if len(w.Days) == 0 {
			w.Days = []string{days[g.pick(7)]}
		}
		s.Windows = append(s.Windows, w)
	}
	return s
}

func (g *gen) stats(lo, hi float64) *fleet.Stats {
	a := lo + g.r.Float64()*(hi-lo)
	p := a + g.r.Float64()*(100-a)
	m := p + g.r.Float64()*(100-p)
	return &fleet.Stats{Avg: math.Round(a*10) / 10, P95: math.Round(p*10) / 10, Max: math.Round(m*10) / 10}
}

func (g *gen) utilization(gpus int) *fleet.Utilization {
	if g.chance(0.07) {
		return nil
	}
	window := &fleet.TimeRange{Start: g.now.Add(-14 * 24 * time.Hour), End: g.now}
	if g.chance(0.3) {
		window.Start = g.now.Add(-30 * 24 * time.Hour)
	}
	u := &fleet.Utilization{Window: window}
	if g.chance(0.3) {
		u.Source = []string{"cloudwatch", "prometheus", "azure-monitor", "cloud-monitoring"}[g.pick(4)]
	}
	if g.chance(0.2) {
		c := math.Round(g.r.Float64()*100) / 100
		u.Coverage = &c
	}
	if !g.chance(g.o.SampleShare) {
		lo := []float64{0, 0, 5, 20, 50}[g.pick(5)]
		u.GPU = g.stats(lo, min(lo+30, 100))
		if g.chance(0.8) {
			u.GPUMemory = g.stats(0, 60)
		}
		if g.chance(0.7) {
			u.CPU = g.stats(0, 50)
		}
		if g.chance(0.6) {
			u.Memory = g.stats(0, 70)
		}
		return u
	}
	u.Samples = g.samples(window, gpus)
	if g.o.Hostile && g.chance(0.3) {
		u.Window = nil
	}
	return u
}

// samples draws hourly (or, hostile, irregular) samples inside the window.
func (g *gen) samples(w *fleet.TimeRange, gpus int) []fleet.Sample {
	limit := g.o.MaxSamples
	if limit <= 0 {
		limit = 14 * 24
	}
	hours := int(w.End.Sub(w.Start) / time.Hour)
	n := min(limit, hours)
	step := time.Hour
	start := w.End.Add(-time.Duration(n) * step)
	office := g.chance(0.4)
	var out []fleet.Sample
	add := func(t time.Time, busy bool) {
		s := fleet.Sample{Time: t}
		v := g.r.Float64() * 4
		if busy {
			v = 40 + g.r.Float64()*60
		}
		s.GPU = make(fleet.PerGPU, gpus)
		for k := range s.GPU {
			s.GPU[k] = math.Round(v*(0.6+0.4*g.r.Float64())*10) / 10
		}
		if g.chance(0.8) {
			s.GPUMemory = fleet.PerGPU{math.Round(g.r.Float64()*900) / 10}
		}
		if g.chance(0.7) {
			c := math.Round(g.r.Float64()*1000) / 10
			s.CPU = &c
		}
		if g.chance(0.5) {
			m := math.Round(g.r.Float64()*1000) / 10
			s.Memory = &m
		}
		out = append(out, s)
	}
	for k := range n {
		t := start.Add(time.Duration(k) * step)
		if g.o.Hostile && g.chance(0.2) {
			continue // sparse
		}
		busy := g.chance(0.3)
		if office {
			busy = t.Weekday() >= time.Monday && t.Weekday() <= time.Friday && t.Hour() >= 8 && t.Hour() < 18
		}
		add(t, busy)
	}
	if g.o.Hostile {
		for range g.pick(4) { // dense bursts, duplicates and DST-change instants
			var t time.Time
			switch g.pick(3) {
			case 0:
				t = start.Add(time.Duration(g.pick(max(n, 1)*60)) * time.Minute).Add(time.Duration(g.pick(60)) * time.Second)
			case 1:
				if len(out) > 0 {
					t = out[g.pick(len(out))].Time
				}
			default:
				t = dstChangeIn(w, Zones[2+g.pick(len(Zones)-2)])
			}
			if !t.IsZero() && !t.Before(w.Start) && t.Before(w.End) {
				add(t, g.chance(0.5))
			}
		}
		g.r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] }) // out of order
	}
	if len(out) == 0 {
		add(w.Start, false)
	}
	return slices.Clip(out)
}

// dstChangeIn is the first instant in w at which zone's UTC offset changes,
// or zero.
func dstChangeIn(w *fleet.TimeRange, zone string) time.Time {
	loc, err := time.LoadLocation(zone)
	if err != nil {
		return time.Time{}
	}
	_, off := w.Start.In(loc).Zone()
	for t := w.Start; t.Before(w.End); t = t.Add(time.Hour) {
		if _, o := t.In(loc).Zone(); o != off {
			return t.Truncate(time.Hour)
		}
	}
	return time.Time{}
}

//go:embed zones.txt
var zonesText string

// AllZones is every zone name of the tz database Go ships
// ($GOROOT/lib/time/zoneinfo.zip, listed in zones.txt).
var AllZones = strings.Fields(zonesText)
