package idlestop

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/providers"
)

var now = time.Date(2025, 6, 2, 14, 30, 0, 0, time.UTC)

// samples returns one sample a minute over the 30 minutes before now, every
// GPU at gpu[i] percent.
func samples(n int, gpu ...float64) []fleet.Sample {
	var out []fleet.Sample
	for i := range n {
		out = append(out, fleet.Sample{Time: now.Add(-time.Duration(n-i) * time.Minute), GPU: append(fleet.PerGPU(nil), gpu...)})
	}
	return out
}

// cand is an idle, running, on-demand machine launched a day ago, priced at
// $1.006 an hour.
func cand(id string, mods ...func(*Candidate)) Candidate {
	launched := now.Add(-24 * time.Hour)
	c := Candidate{
		Instance: fleet.Instance{
			ID: id, Provider: fleet.AWS, Account: "123456789012", Region: "us-east-1",
			InstanceType: "g5.xlarge", Lifecycle: fleet.OnDemand, State: fleet.Running,
			LaunchTime: &launched,
			Tags:       map[string]string{"Team": "ml"},
			Utilization: &fleet.Utilization{
				Window:  &fleet.TimeRange{Start: now.Add(-30 * time.Minute), End: now},
				Samples: samples(30, 2, 3),
			},
		},
		Scope:  providers.Scope{Provider: fleet.AWS, Account: "123456789012", Region: "us-east-1"},
		Hourly: &pricing.Price{Hourly: decimal.RequireFromString("1.006")},
	}
	for _, m := range mods {
		m(&c)
	}
	return c
}

func withTag(k, v string) func(*Candidate) {
	return func(c *Candidate) { c.Instance.Tags[k] = v }
}

func TestDecideReasonsInOrder(t *testing.T) {
	p := DefaultPolicy()
	p.Selectors = map[string]string{"team": "ML"}
	optIn := DefaultPolicy()
	optIn.RequireOptIn = true
	cases := []struct {
		name string
		c    Candidate
		p    Policy
		want Reason
	}{
		{"idle", cand("i-1"), p, ReasonIdle},
		// Each case also fails every later check, so the order is what is tested.
		{"stopped", cand("i-1", func(c *Candidate) {
			c.Instance.State = fleet.Stopped
			c.Instance.Tags = nil
			c.Instance.Utilization = nil
		}), p, ReasonAlreadyStopped},
		{"stopping", cand("i-1", func(c *Candidate) { c.Instance.State = "stopping" }), p, ReasonAlreadyStopped},
		{"not selected", cand("i-1", withTag("Team", "web"), withTag("auto-shutdown-exempt", "true")), p, ReasonNotSelected},
		{"selector key missing", cand("i-1", func(c *Candidate) { c.Instance.Tags = map[string]string{"auto-shutdown-exempt": "true"} }), p, ReasonNotSelected},
		{"exempt", cand("i-1", withTag("Auto-Shutdown-Exempt", "TRUE"), withTag("AutoShutdown", "false")), p, ReasonExempt},
		{"exempt false is not exempt", cand("i-1", withTag("auto-shutdown-exempt", "false")), p, ReasonIdle},
		{"opted out", cand("i-1", withTag("autoshutdown", "False"), withTag("Environment", "Production")), p, ReasonOptedOut},
		{"opted out under opt-in", cand("i-1", withTag("AutoShutdown", "false")), optIn, ReasonOptedOut},
		{"not opted in", cand("i-1", withTag("Environment", "Production")), optIn, ReasonNotOptedIn},
		{"opted in", cand("i-1", withTag("AutoShutdown", "true")), optIn, ReasonIdle},
		{"production", cand("i-1", withTag("environment", "production"), func(c *Candidate) { c.Instance.Lifecycle = fleet.Spot }), p, ReasonProduction},
		{"prod", cand("i-1", withTag("Environment", "Prod")), p, ReasonProduction},
		{"spot", cand("i-1", func(c *Candidate) {
			c.Instance.Lifecycle = fleet.Spot
			l := now.Add(-time.Minute)
			c.Instance.LaunchTime = &l
		}), p, ReasonSpotNotStoppable},
		{"spot deleted on eviction", cand("i-1", func(c *Candidate) {
			c.Instance.Lifecycle, c.Instance.SpotInterruption = fleet.Spot, fleet.SpotDelete
		}), p, ReasonSpotNotStoppable},
		{"spot terminated", cand("i-1", func(c *Candidate) {
			c.Instance.Lifecycle, c.Instance.SpotInterruption = fleet.Spot, fleet.SpotTerminate
		}), p, ReasonSpotNotStoppable},
		{"spot with an unknown interruption", cand("i-1", func(c *Candidate) {
			c.Instance.Lifecycle, c.Instance.SpotInterruption = fleet.Spot, "hibernate"
		}), p, ReasonSpotNotStoppable},
		{"azure spot deallocated on eviction", cand("i-1", func(c *Candidate) {
			c.Instance.Lifecycle, c.Instance.SpotInterruption = fleet.Spot, fleet.SpotDeallocate
		}), p, ReasonIdle},
		{"gcp spot stopped on termination", cand("i-1", func(c *Candidate) {
			c.Instance.Lifecycle, c.Instance.SpotInterruption = fleet.Spot, fleet.SpotStop
		}), p, ReasonIdle},
		{"stoppable spot still production", cand("i-1", withTag("Environment", "Prod"), func(c *Candidate) {
			c.Instance.Lifecycle, c.Instance.SpotInterruption = fleet.Spot, fleet.SpotDeallocate
		}), p, ReasonProduction},
		{"just launched", cand("i-1", func(c *Candidate) {
			l := now.Add(-59 * time.Minute)
			c.Instance.LaunchTime = &l
			c.Instance.Utilization = nil
		}), p, ReasonJustLaunched},
		{"unknown launch time", cand("i-1", func(c *Candidate) { c.Instance.LaunchTime = nil }), p, ReasonLaunchUnknown},
		{"no utilization", cand("i-1", func(c *Candidate) { c.Instance.Utilization = nil }), p, ReasonNoMetrics},
		{"summary only", cand("i-1", func(c *Candidate) {
			c.Instance.Utilization = &fleet.Utilization{GPU: &fleet.Stats{Avg: 1, P95: 1, Max: 1}}
		}), p, ReasonNoMetrics},
		{"samples without GPU", cand("i-1", func(c *Candidate) {
			cpu := 3.0
			c.Instance.Utilization.Samples = []fleet.Sample{{Time: now.Add(-time.Minute), CPU: &cpu}}
		}), p, ReasonNoMetrics},
		{"partial", cand("i-1", func(c *Candidate) { c.Instance.Utilization.Samples = samples(20, 99) }), p, ReasonPartialMetrics},
		{"samples only before the window", cand("i-1", func(c *Candidate) {
			c.Instance.Utilization.Samples = []fleet.Sample{{Time: now.Add(-2 * time.Hour), GPU: fleet.PerGPU{1}}}
		}), p, ReasonPartialMetrics},
		{"stale", cand("i-1", func(c *Candidate) {
			s := samples(30, 99)
			c.Instance.Utilization.Samples = s[:25] // 24 minutes of 30 (80%), latest 6 minutes ago...
			c.Instance.Utilization.Window.End = now.Add(5 * time.Minute)
		}), func() Policy { q := p; q.MinCoverage = 0.5; return q }(), ReasonStaleMetrics},
		{"busy", cand("i-1", func(c *Candidate) { c.Instance.Utilization.Samples[7].GPU = fleet.PerGPU{1, 15} }), p, ReasonBusy},
		{"just below", cand("i-1", func(c *Candidate) { c.Instance.Utilization.Samples[7].GPU = fleet.PerGPU{1, 14.999} }), p, ReasonIdle},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ds := Decide([]Candidate{tc.c}, now, tc.p)
			if len(ds) != 1 {
				t.Fatalf("got %d decisions", len(ds))
			}
			d := ds[0]
			if d.Reason != tc.want {
				t.Fatalf("reason %q (%s), want %q", d.Reason, d.Message, tc.want)
			}
			wantAction := Skip
			if tc.want == ReasonIdle {
				wantAction = Stop
			}
			if d.Decision != wantAction || d.Message == "" {
				t.Fatalf("decision %q message %q", d.Decision, d.Message)
			}
		})
	}
}

func TestDecideMetricsAndSavings(t *testing.T) {
	c := cand("i-1", func(c *Candidate) { c.Instance.Utilization.Samples[0].GPU = fleet.PerGPU{12, 1} })
	d := Decide([]Candidate{c}, now, DefaultPolicy())[0]
	if d.Decision != Stop || d.Metrics.GPUMaxPercent != 12 || d.Metrics.Samples != 30 || d.Metrics.Coverage != 1 {
		t.Fatalf("%+v", d)
	}
	if d.Metrics.GPUAvgPercent != 3.3 { // (12 + 29*3) / 30
		t.Fatalf("avg %v", d.Metrics.GPUAvgPercent)
	}
	if !d.HourlySavings.Equal(decimal.RequireFromString("1.006")) || !d.MonthlySavings.Equal(decimal.RequireFromString("734.38")) {
		t.Fatalf("savings %s %s", d.HourlySavings, d.MonthlySavings)
	}
	if d.Metrics.Latest == nil || !d.Metrics.Latest.Equal(now.Add(-time.Minute)) || !d.Metrics.WindowStart.Equal(now.Add(-30*time.Minute)) {
		t.Fatalf("metrics %+v", d.Metrics)
	}
	if d.ResourceID != "i-1" || d.Provider != fleet.AWS || d.Region != "us-east-1" || d.Scope.Account != "123456789012" {
		t.Fatalf("%+v", d)
	}

	unpriced := cand("i-2", func(c *Candidate) { c.Hourly = nil })
	if d := Decide([]Candidate{unpriced}, now, DefaultPolicy())[0]; d.Decision != Stop || !d.HourlySavings.IsZero() || !d.MonthlySavings.IsZero() {
		t.Fatalf("unpriced %+v", d)
	}
	override := cand("i-3", func(c *Candidate) { h := decimal.RequireFromString("0.5"); c.Instance.HourlyPrice = &h })
	if d := Decide([]Candidate{override}, now, DefaultPolicy())[0]; !d.MonthlySavings.Equal(decimal.NewFromInt(365)) {
		t.Fatalf("override %s", d.MonthlySavings)
	}
	busy := cand("i-4", withTag("x", "y"), func(c *Candidate) { c.Instance.Utilization.Samples = samples(30, 90) })
	if d := Decide([]Candidate{busy}, now, DefaultPolicy())[0]; !d.MonthlySavings.IsZero() {
		t.Fatalf("a skip carries savings %s", d.MonthlySavings)
	}
}

func TestDecideProductionAndOptInFlags(t *testing.T) {
	p := DefaultPolicy()
	p.IncludeProduction = true
	prod := cand("i-1", withTag("Environment", "Production"))
	if d := Decide([]Candidate{prod}, now, p)[0]; d.Decision != Stop {
		t.Fatalf("include_production: %+v", d)
	}
	p.RequireOptIn = true
	if d := Decide([]Candidate{prod}, now, p)[0]; d.Reason != ReasonNotOptedIn {
		t.Fatalf("require_opt_in: %s", d.Reason)
	}
	prod.Instance.Tags["AUTOSHUTDOWN"] = "Yes"
	if d := Decide([]Candidate{prod}, now, p)[0]; d.Decision != Stop {
		t.Fatalf("opted in: %+v", d)
	}
}

func TestDecideSelectors(t *testing.T) {
	p := DefaultPolicy()
	p.Selectors = map[string]string{"team": "ml", "Stage": "dev"}
	cs := []Candidate{
		cand("i-both", withTag("stage", "DEV")),
		cand("i-one"),
		cand("i-wrong", withTag("Stage", "prod")),
	}
	got := Decide(cs, now, p)
	want := []Reason{ReasonIdle, ReasonNotSelected, ReasonNotSelected}
	for i, d := range got {
		if d.Reason != want[i] || d.ResourceID != cs[i].Instance.ID {
			t.Fatalf("%d: %s %s, want %s", i, d.ResourceID, d.Reason, want[i])
		}
	}
	if !strings.Contains(got[1].Message, "Stage=dev") {
		t.Fatalf("message %q", got[1].Message)
	}
}

func TestDecideCoverageAndStaleness(t *testing.T) {
	p := DefaultPolicy()
	// 24 of 30 minutes covered: exactly 80 % is enough.
	c := cand("i-1", func(c *Candidate) { c.Instance.Utilization.Samples = samples(30, 1)[6:] })
	if d := Decide([]Candidate{c}, now, p)[0]; d.Decision != Stop || d.Metrics.Coverage != 0.8 {
		t.Fatalf("%s %v", d.Reason, d.Metrics.Coverage)
	}
	// A gap in the middle.
	c = cand("i-1", func(c *Candidate) {
		s := samples(30, 1)
		c.Instance.Utilization.Samples = append(s[:10:10], s[17:]...)
	})
	if d := Decide([]Candidate{c}, now, p)[0]; d.Reason != ReasonPartialMetrics || d.Metrics.Coverage != 0.7667 {
		t.Fatalf("%s %v", d.Reason, d.Metrics.Coverage)
	}
	// Five-minute samples with the period given: 6 samples cover the window.
	c = cand("i-1", func(c *Candidate) {
		c.Period = 5 * time.Minute
		var s []fleet.Sample
		for i := 6; i >= 1; i-- {
			s = append(s, fleet.Sample{Time: now.Add(-time.Duration(i) * 5 * time.Minute), GPU: fleet.PerGPU{1}})
		}
		c.Instance.Utilization.Samples = s
	})
	if d := Decide([]Candidate{c}, now, p)[0]; d.Decision != Stop || d.Metrics.Coverage != 1 {
		t.Fatalf("%s %v", d.Reason, d.Metrics.Coverage)
	}
	// A single sample with no period is one minute of the window.
	c.Instance.Utilization.Samples = c.Instance.Utilization.Samples[5:]
	c.Period = 0
	if d := Decide([]Candidate{c}, now, p)[0]; d.Reason != ReasonPartialMetrics {
		t.Fatalf("%s %v", d.Reason, d.Metrics.Coverage)
	}
	// Stale: full coverage but the latest sample 11 minutes old.
	p.MinCoverage = 0.5
	c = cand("i-1", func(c *Candidate) { c.Instance.Utilization.Samples = samples(30, 1)[:19] })
	d := Decide([]Candidate{c}, now, p)[0]
	if d.Reason != ReasonStaleMetrics || !strings.Contains(d.Message, "12m0s") {
		t.Fatalf("%s %q", d.Reason, d.Message)
	}
	// Exactly StaleAfter old is still fresh.
	c.Instance.Utilization.Samples = samples(30, 1)[:21]
	if d := Decide([]Candidate{c}, now, p)[0]; d.Decision != Stop {
		t.Fatalf("%s %q", d.Reason, d.Message)
	}
	// Samples after the window's end are ignored.
	c = cand("i-1", func(c *Candidate) {
		c.Instance.Utilization.Samples = append(c.Instance.Utilization.Samples, fleet.Sample{Time: now.Add(time.Minute), GPU: fleet.PerGPU{100}})
	})
	if d := Decide([]Candidate{c}, now, DefaultPolicy())[0]; d.Decision != Stop {
		t.Fatalf("%s", d.Reason)
	}
	// The window without Utilization.Window ends at now.
	c.Instance.Utilization.Window = nil
	if d := Decide([]Candidate{c}, now, DefaultPolicy())[0]; d.Decision != Stop || !d.Metrics.WindowEnd.Equal(now) {
		t.Fatalf("%s", d.Reason)
	}
}

func TestDecideDeterministicAndJSON(t *testing.T) {
	cs := []Candidate{cand("i-1"), cand("i-2", withTag("AutoShutdown", "false")), cand("i-3", withTag("a", "1"), withTag("A", "2"))}
	a := Decide(cs, now, DefaultPolicy())
	for range 20 {
		if b := Decide(cs, now, DefaultPolicy()); !reflect.DeepEqual(a, b) {
			t.Fatal("Decide is not deterministic")
		}
	}
	b, err := json.Marshal(a[0])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"resourceId", "provider", "decision", "reason", "executed", "message", "monthlySavings", "metrics", "time"} {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON lacks %q: %s", k, b)
		}
	}
	if m["resourceId"] != "i-1" || m["decision"] != "stop" || m["reason"] != "idle" || m["executed"] != false {
		t.Errorf("JSON %s", b)
	}
}

func TestPolicyValidate(t *testing.T) {
	if err := DefaultPolicy().Validate(); err != nil {
		t.Fatal(err)
	}
	bad := []struct {
		key string
		mod func(*Policy)
	}{
		{"idle_stop.gpu_percent", func(p *Policy) { p.GPUPercent = 0 }},
		{"idle_stop.gpu_percent", func(p *Policy) { p.GPUPercent = 101 }},
		{"idle_stop.window", func(p *Policy) { p.Window = 0 }},
		{"idle_stop.min_uptime", func(p *Policy) { p.MinUptime = -time.Second }},
		{"idle_stop.exempt_tag", func(p *Policy) { p.ExemptTag = " " }},
		{"idle_stop.exempt_value", func(p *Policy) { p.ExemptValue = "" }},
		{"idle_stop.max_stops", func(p *Policy) { p.MaxStops = 0 }},
		{"idle_stop.stale_after", func(p *Policy) { p.StaleAfter = 0 }},
		{"idle_stop.min_coverage", func(p *Policy) { p.MinCoverage = 1.5 }},
		{"idle_stop.selectors", func(p *Policy) { p.Selectors = map[string]string{"": "x"} }},
	}
	for _, b := range bad {
		p := DefaultPolicy()
		b.mod(&p)
		err := p.Validate()
		if err == nil || !strings.HasPrefix(err.Error(), b.key+":") {
			t.Errorf("%s: got %v", b.key, err)
		}
	}
}
