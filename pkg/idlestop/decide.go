package idlestop

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/providers"
)

// Candidate is one machine to decide on.
type Candidate struct {
	// Instance carries the state, tags, launch time and Utilization.Samples
	// over the window (Utilization.Window, when set, gives its end).
	Instance fleet.Instance
	// Scope is where the instance lives and how it is stopped.
	Scope providers.Scope
	// Hourly is the instance's hourly price; nil when unpriced.
	Hourly *pricing.Price
	// Period is the sampling period of the samples; zero infers it from the
	// smallest gap between samples (60s with a single sample).
	Period time.Duration
}

// Action is what Decide chose for a machine.
type Action string

// The two decisions.
const (
	Stop Action = "stop"
	Skip Action = "skip"
)

// Reason is a stable, machine-readable code for a decision.
type Reason string

// The reasons, in the order Decide checks them, then the reasons Execute adds.
const (
	ReasonAlreadyStopped   Reason = "already-stopped"
	ReasonNotSelected      Reason = "not-selected"
	ReasonExempt           Reason = "exempt"
	ReasonOptedOut         Reason = "opted-out"
	ReasonNotOptedIn       Reason = "not-opted-in"
	ReasonProduction       Reason = "production"
	ReasonSpotNotStoppable Reason = "spot-not-stoppable"
	ReasonJustLaunched     Reason = "just-launched"
	ReasonNoMetrics        Reason = "no-metrics"
	ReasonPartialMetrics   Reason = "partial-metrics"
	ReasonStaleMetrics     Reason = "stale-metrics"
	ReasonBusy             Reason = "busy"
	ReasonIdle             Reason = "idle"
	// ReasonGone: the re-check no longer found the machine.
	ReasonGone Reason = "gone"
	// ReasonRecheckFailed: the re-check failed, so nothing was stopped.
	ReasonRecheckFailed Reason = "recheck-failed"
)

// The tags Decide reads besides the policy's exemption tag and selectors.
const (
	TagAutoShutdown = "AutoShutdown"
	TagEnvironment  = "Environment"
)

// Metrics are the figures a decision was made on.
type Metrics struct {
	// GPUMaxPercent is the busiest GPU's highest utilization in the window;
	// GPUAvgPercent the busiest GPU's average over the samples.
	GPUMaxPercent float64 `json:"gpuMaxPercent"`
	GPUAvgPercent float64 `json:"gpuAvgPercent"`
	// Samples is the number of samples with GPU values in the window.
	Samples int `json:"samples"`
	// Coverage is the share (0–1) of the window the samples cover.
	Coverage float64 `json:"coverage"`
	// Latest is the time of the latest GPU sample, if any.
	Latest      *time.Time `json:"latest,omitempty"`
	WindowStart time.Time  `json:"windowStart"`
	WindowEnd   time.Time  `json:"windowEnd"`
}

// Decision is the outcome for one machine: stop or skip, why, and after
// Execute what happened.
type Decision struct {
	Time         time.Time         `json:"time"`
	Provider     fleet.Provider    `json:"provider"`
	Account      string            `json:"account,omitempty"`
	Region       string            `json:"region,omitempty"`
	ResourceID   string            `json:"resourceId"`
	Name         string            `json:"name,omitempty"`
	InstanceType string            `json:"instanceType,omitempty"`
	Tags         map[string]string `json:"tags,omitempty"`
	Metrics      Metrics           `json:"metrics"`
	Decision     Action            `json:"decision"`
	Reason       Reason            `json:"reason"`
	// Message says the reason in a sentence.
	Message string `json:"message"`
	// HourlySavings and MonthlySavings (hourly × 730) are what stopping saves;
	// zero for skips and unpriced machines.
	HourlySavings  Amount `json:"hourlySavings"`
	MonthlySavings Amount `json:"monthlySavings"`
	// Executed is true when a real stop was sent.
	Executed bool `json:"executed"`
	// Result is the stop's outcome (see the Result* constants); empty for
	// skips.
	Result string `json:"result,omitempty"`
	// Error is the error a stop (or the run) ended with.
	Error string `json:"error,omitempty"`
	// Scope is where the machine is stopped; not logged (Provider, Account
	// and Region are).
	Scope providers.Scope `json:"-"`
}

// Decide makes exactly one Decision per candidate, in input order. It is pure
// and deterministic: the same candidates, now and policy give the same
// decisions. The checks run in this order and the first that applies skips
// the machine: not running, selectors, exemption, AutoShutdown opt-out (or
// missing opt-in), production, spot, uptime, no metrics, partial metrics,
// stale metrics, busy; a machine that passes all of them is stopped as idle.
// Tag keys and values compare case-insensitively.
func Decide(in []Candidate, now time.Time, p Policy) []Decision {
	out := make([]Decision, 0, len(in))
	for _, c := range in {
		out = append(out, decide(c, now, p))
	}
	return out
}

func decide(c Candidate, now time.Time, p Policy) Decision {
	inst := c.Instance
	d := Decision{
		Time:         now,
		Provider:     inst.Provider,
		Account:      inst.Account,
		Region:       inst.Region,
		ResourceID:   inst.ID,
		Name:         inst.Name,
		InstanceType: inst.InstanceType,
		Tags:         copyTags(inst.Tags),
		Decision:     Skip,
		Scope:        c.Scope,
	}
	if d.Provider == "" {
		d.Provider = c.Scope.Provider
	}
	if d.Account == "" {
		d.Account = c.Scope.Account
	}
	if d.Region == "" {
		d.Region = c.Scope.Region
	}
	m, rawMax, latestAny, hasGPU, summaryOnly := measure(c, now, p)
	d.Metrics = m
	skip := func(r Reason, format string, args ...any) Decision {
		d.Reason, d.Message = r, fmt.Sprintf(format, args...)
		return d
	}

	if inst.State != fleet.Running {
		state := string(inst.State)
		if state == "" {
			state = "unknown"
		}
		return skip(ReasonAlreadyStopped, "the machine is %s, not running", state)
	}
	for _, k := range sortedKeys(p.Selectors) {
		want := p.Selectors[k]
		if v, ok := tag(inst.Tags, k); !ok || !strings.EqualFold(v, strings.TrimSpace(want)) {
			return skip(ReasonNotSelected, "the machine lacks the selector tag %s=%s", k, want)
		}
	}
	if v, ok := tag(inst.Tags, p.ExemptTag); ok && strings.EqualFold(v, strings.TrimSpace(p.ExemptValue)) {
		return skip(ReasonExempt, "the machine is tagged %s=%s", p.ExemptTag, v)
	}
	auto, hasAuto := tag(inst.Tags, TagAutoShutdown)
	if hasAuto && isFalse(auto) {
		return skip(ReasonOptedOut, "the machine is tagged %s=%s", TagAutoShutdown, auto)
	}
	if p.RequireOptIn && !(hasAuto && isTrue(auto)) {
		return skip(ReasonNotOptedIn, "opt-in is required and the machine is not tagged %s=true", TagAutoShutdown)
	}
	if env, ok := tag(inst.Tags, TagEnvironment); ok && isProduction(env) && !p.IncludeProduction {
		return skip(ReasonProduction, "the machine is tagged %s=%s and production is protected", TagEnvironment, env)
	}
	if inst.Lifecycle == fleet.Spot {
		return skip(ReasonSpotNotStoppable, "a spot instance is not stopped (a one-time spot instance can only be terminated)")
	}
	if inst.LaunchTime != nil && p.MinUptime > 0 {
		if up := now.Sub(*inst.LaunchTime); up < p.MinUptime {
			return skip(ReasonJustLaunched, "the machine was launched %s ago, less than the minimum uptime of %s", roundDur(up), p.MinUptime)
		}
	}
	if !hasGPU {
		if summaryOnly {
			return skip(ReasonNoMetrics, "the machine has only summary GPU statistics, no samples to judge the last %s on", p.Window)
		}
		return skip(ReasonNoMetrics, "the machine has no GPU metrics")
	}
	if m.Coverage < p.MinCoverage {
		return skip(ReasonPartialMetrics, "GPU samples cover %.0f%% of the last %s, less than the required %.0f%%", m.Coverage*100, p.Window, p.MinCoverage*100)
	}
	if age := m.WindowEnd.Sub(latestAny); age > p.StaleAfter {
		return skip(ReasonStaleMetrics, "the latest GPU sample is %s old, older than %s", roundDur(age), p.StaleAfter)
	}
	if rawMax >= p.GPUPercent {
		return skip(ReasonBusy, "the busiest GPU reached %.1f%% in the last %s (threshold %.4g%%)", m.GPUMaxPercent, p.Window, p.GPUPercent)
	}
	d.Decision, d.Reason = Stop, ReasonIdle
	d.Message = fmt.Sprintf("every GPU stayed below %.4g%% for the last %s (max %.1f%%, average %.1f%%)", p.GPUPercent, p.Window, m.GPUMaxPercent, m.GPUAvgPercent)
	if h, ok := hourly(c); ok {
		d.HourlySavings = Amount{h}
		d.MonthlySavings = Amount{h.Mul(decimal.NewFromFloat(fleet.HoursPerMonth)).Round(2)}
	}
	return d
}

// hourly is the machine's hourly price: the instance's own override first,
// else the candidate's price.
func hourly(c Candidate) (decimal.Decimal, bool) {
	if c.Instance.HourlyPrice != nil {
		return *c.Instance.HourlyPrice, true
	}
	if c.Hourly != nil {
		return c.Hourly.Hourly, true
	}
	return decimal.Zero, false
}

// measure reads the samples of the policy window [end-Window, end), where end
// is the utilization window's end or now. It returns the metrics, the latest
// the unrounded maximum, the latest GPU sample at or before end (any age),
// whether any GPU sample exists, and whether the utilization has summary
// statistics but no samples. Only samples that start inside the window count.
func measure(c Candidate, now time.Time, p Policy) (m Metrics, rawMax float64, latest time.Time, hasGPU, summaryOnly bool) {
	end := now
	u := c.Instance.Utilization
	if u != nil && u.Window != nil && !u.Window.End.IsZero() {
		end = u.Window.End
	}
	start := end.Add(-p.Window)
	m.WindowStart, m.WindowEnd = start, end
	if u == nil {
		return m, 0, latest, false, false
	}
	var times []time.Time
	var sum float64
	for _, s := range u.Samples {
		busiest, ok := maxFinite(s.GPU)
		if !ok || s.Time.After(end) {
			continue
		}
		if !hasGPU || s.Time.After(latest) {
			latest = s.Time
		}
		hasGPU = true
		if s.Time.Before(start) || !s.Time.Before(end) {
			continue
		}
		if m.Samples == 0 || busiest > rawMax {
			rawMax = busiest
		}
		sum += busiest
		m.Samples++
		times = append(times, s.Time)
	}
	if hasGPU {
		l := latest
		m.Latest = &l
	}
	summaryOnly = !hasGPU && u.GPU != nil
	if m.Samples > 0 {
		m.GPUAvgPercent = round2(sum / float64(m.Samples))
		m.GPUMaxPercent = round2(rawMax)
		m.Coverage = coverage(times, start, end, c.Period)
	}
	return m, rawMax, latest, hasGPU, summaryOnly
}

// coverage is the share of [start, end) covered by samples that each cover
// [t, t+period). The period, when not given, is the smallest gap between
// distinct sample times, or a minute with a single sample.
func coverage(times []time.Time, start, end time.Time, period time.Duration) float64 {
	sort.Slice(times, func(i, j int) bool { return times[i].Before(times[j]) })
	if period <= 0 {
		for i := 1; i < len(times); i++ {
			if g := times[i].Sub(times[i-1]); g > 0 && (period <= 0 || g < period) {
				period = g
			}
		}
		if period <= 0 {
			period = time.Minute
		}
	}
	var covered time.Duration
	var reach time.Time // covered up to here
	for _, t := range times {
		from, to := t, t.Add(period)
		if to.After(end) {
			to = end
		}
		if from.Before(reach) {
			from = reach
		}
		if to.After(from) {
			covered += to.Sub(from)
			reach = to
		}
	}
	total := end.Sub(start)
	if total <= 0 {
		return 0
	}
	return math.Min(1, round4(float64(covered)/float64(total)))
}

func maxFinite(v fleet.PerGPU) (float64, bool) {
	var best float64
	ok := false
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			continue
		}
		if !ok || x > best {
			best, ok = x, true
		}
	}
	return best, ok
}

// tag returns the value of key, compared case-insensitively, trimmed.
func tag(tags map[string]string, key string) (string, bool) {
	key = strings.TrimSpace(key)
	if v, ok := tags[key]; ok {
		return strings.TrimSpace(v), true
	}
	// Several keys differing only in case: the smallest wins, deterministically.
	found, best := false, ""
	for k := range tags {
		if strings.EqualFold(strings.TrimSpace(k), key) && (!found || k < best) {
			found, best = true, k
		}
	}
	if !found {
		return "", false
	}
	return strings.TrimSpace(tags[best]), true
}

// isTrue and isFalse read an AutoShutdown value; any other value is neither
// (not an opt-in, not an opt-out).
func isTrue(v string) bool {
	switch strings.ToLower(v) {
	case "true", "yes", "on", "1":
		return true
	}
	return false
}

func isFalse(v string) bool {
	switch strings.ToLower(v) {
	case "false", "no", "off", "0":
		return true
	}
	return false
}

// isProduction reads an Environment value: Production or Prod.
func isProduction(v string) bool {
	switch strings.ToLower(v) {
	case "production", "prod":
		return true
	}
	return false
}

func copyTags(t map[string]string) map[string]string {
	if len(t) == 0 {
		return nil
	}
	out := make(map[string]string, len(t))
	for k, v := range t {
		out[k] = v
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func roundDur(d time.Duration) time.Duration {
	if d > time.Minute {
		return d.Round(time.Second)
	}
	return d.Round(time.Millisecond)
}

func round2(v float64) float64 { return math.Round(v*100) / 100 }
func round4(v float64) float64 { return math.Round(v*10000) / 10000 }
