package e2e

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/internal/fleetgen"
	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing/catalog"
	"github.com/gpufinops/gpufinops/providers/simkit"
)

// TestThrottledScanSameReportAtOneClock: with the simulators' clock and
// gpufinops's fixed at one hour, a three-cloud scan of a generated mixed
// fleet (three accounts per cloud, AWS through AssumeRole) gives the clean
// scan's report when 10 % (two fault seeds) and 30 % of the requests are throttled (-short: 10 %, one seed): the
// retries read every page, price and series the clean scan read. A scan an
// hour later reads another utilization window, which is why the bench
// compares only scans of one hour (internal/bench sameHour).
func TestThrottledScanSameReportAtOneClock(t *testing.T) {
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	// The SDKs' retry back-off, not the fleet, sets the time: -short
	// scans fewer instances once throttled.
	n := 400
	faults := []struct {
		rate float64
		seed int64
	}{{0.1, 1}, {0.1, 2}, {0.3, 1}}
	if testing.Short() {
		n, faults = 150, faults[:1]
	}
	f, err := fleetgen.Mixed(fleetgen.MixedOptions{Instances: n, Seed: 3, RegionCount: 10, Accounts: 3}, cat)
	if err != nil {
		t.Fatal(err)
	}
	served, _ := gcpServed(t, cloudFleet(t, f, fleet.AWS, fleet.Azure, fleet.GCP))
	now := time.Date(2026, 12, 2, 14, 30, 0, 0, time.UTC)
	args := append([]string{"analyze", "--provider", "aws,azure,gcp", "-o", "json"}, roleARNs(served)...)

	scan := func(rate float64, seed int64) (outcome, int) {
		t.Helper()
		kit := simkit.MustNew(simkit.Options{ThrottleRate: rate, Seed: seed})
		var sims []simkit.Sim
		for _, reg := range simkit.Registered() {
			s, err := reg.Build(served, simkit.Env{Kit: kit, Now: func() time.Time { return now }})
			if err != nil {
				t.Fatal(err)
			}
			sims = append(sims, s)
		}
		allCloudsEnv(t, h2cServer(t, simkit.Mux(kit, sims...)), nil)
		code, out, stderr := gpufinopsAt(t, now, args...)
		if code != cmdutil.ExitOK {
			t.Fatalf("%g throttled (seed %d): exit %d: %s", rate, seed, code, lastLines(stderr, 3))
		}
		return reportOutcome(t, out), simkit.Total(kit.Counts())
	}
	clean, cleanReqs := scan(0, 1)
	if len(clean.instances) < n*9/10 || len(clean.recs) == 0 {
		t.Fatalf("the clean scan reported %d of %d instances and %d recommendations: not the fleet this test is about", len(clean.instances), n, len(clean.recs))
	}
	for _, c := range faults {
		got, reqs := scan(c.rate, c.seed)
		if reqs <= cleanReqs {
			t.Errorf("%g throttled (seed %d): %d requests, clean %d: nothing was throttled", c.rate, c.seed, reqs, cleanReqs)
		}
		if d := got.diff(clean); d != "" {
			t.Errorf("%g throttled (seed %d): the report differs from the clean scan's: %s", c.rate, c.seed, d)
		}
	}
}

// roleARNs are --role-arn flags for every AWS account of f but the one the
// AWS simulator's plain credentials act in (the most instances, the
// smallest ID on a tie).
func roleARNs(f *fleet.Fleet) []string {
	count := map[string]int{}
	for _, in := range f.Instances {
		if in.Provider == fleet.AWS && in.Account != "" {
			count[in.Account]++
		}
	}
	base := ""
	for a, c := range count {
		if base == "" || c > count[base] || (c == count[base] && a < base) {
			base = a
		}
	}
	var others []string
	for a := range count {
		if a != base {
			others = append(others, a)
		}
	}
	sort.Strings(others)
	var out []string
	for _, a := range others {
		out = append(out, "--role-arn", "arn:aws:iam::"+a+":role/gpufinops-e2e")
	}
	return out
}

// diff says how o differs from want, "" when it does not.
func (o outcome) diff(want outcome) string {
	var d []string
	if o.current != want.current || o.savings != want.savings {
		d = append(d, fmt.Sprintf("current %s saving %s, want %s and %s", o.current, o.savings, want.current, want.savings))
	}
	if got, w := strings.Join(o.recs, "\n"), strings.Join(want.recs, "\n"); got != w {
		d = append(d, fmt.Sprintf("%d recommendations, want %d, or other ones", len(o.recs), len(want.recs)))
	}
	for id, c := range want.instances {
		if got, ok := o.instances[id]; !ok || got != c {
			d = append(d, fmt.Sprintf("instance %s: %q, want %q", id, got, c))
			break
		}
	}
	if len(o.instances) != len(want.instances) {
		d = append(d, fmt.Sprintf("%d instances, want %d", len(o.instances), len(want.instances)))
	}
	return strings.Join(d, "; ")
}

// lastLines is the last n lines of s.
func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, "\n")
}
