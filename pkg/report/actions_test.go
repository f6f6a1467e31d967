package report

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/recommend"
	"github.com/gpufinops/gpufinops/pkg/testutil"
)

// checkRank holds the ranked view to the report: every machine with a
// counted saving once, its steps in plan order, largest saving first, the
// savings adding up to the summary's, the confidence the lowest and the risk
// the highest of its steps, and every recommendation accounted for.
func checkRank(t *testing.T, r *Report) actionPlan {
	t.Helper()
	p := rank(r)
	sum := decimal.Zero
	seen := map[string]bool{}
	steps := 0
	for i, m := range p.machines {
		if seen[m.resource] {
			t.Errorf("%s ranked twice", m.resource)
		}
		seen[m.resource] = true
		if i > 0 && p.machines[i-1].savings.d.LessThan(m.savings.d) {
			t.Errorf("%s (%s) ranked below %s (%s)", m.resource, m.savings, p.machines[i-1].resource, p.machines[i-1].savings)
		}
		stepSum := decimal.Zero
		last := -1
		for _, s := range m.steps {
			if s.ResourceID != m.resource {
				t.Errorf("%s holds a step of %s", m.resource, s.ResourceID)
			}
			k := slices.Index(recommend.Kinds, recommend.Kind(s.Kind))
			if k < last {
				t.Errorf("%s: %s after a later strategy", m.resource, s.Kind)
			}
			last = k
			stepSum = stepSum.Add(s.MonthlySavings.d)
			if level(s.Confidence) < level(m.confidence) || level(s.Risk) > level(m.risk) {
				t.Errorf("%s: confidence %s, risk %s; a step has %s, %s", m.resource, m.confidence, m.risk, s.Confidence, s.Risk)
			}
		}
		if !stepSum.Equal(m.savings.d) || !m.current.d.Sub(m.optimized.d).Equal(m.savings.d) || !m.savings.d.IsPositive() {
			t.Errorf("%s: current %s, optimized %s, savings %s, steps %s", m.resource, m.current, m.optimized, m.savings, stepSum)
		}
		steps += len(m.steps)
		sum = sum.Add(m.savings.d)
	}
	if !sum.Equal(r.Summary.MonthlySavings.d) {
		t.Errorf("machines save %s, the summary %s", sum, r.Summary.MonthlySavings)
	}
	tagging := 0
	for _, rec := range r.Recommendations {
		if rec.Kind == string(recommend.KindTagging) {
			tagging++
		}
	}
	if got := steps + len(p.protected) + tagging + p.other; got != len(r.Recommendations) {
		t.Errorf("%d steps, %d protected, %d tagging, %d other: %d of %d recommendations", steps, len(p.protected), tagging, p.other, got, len(r.Recommendations))
	}
	return p
}

func TestRank(t *testing.T) {
	p := checkRank(t, testReport())
	var got []string
	for _, m := range p.machines {
		got = append(got, m.resource+": "+m.shortText()+" "+m.confidence+"/"+m.risk)
	}
	want := []string{
		"gpu-train-01: schedule Mon–Fri 07–19 + spot $1.234/h, ckpt 20 min medium/high",
		"i-0a1b2c3d4e5f60001: Stop the instance high/low",
		"/subscriptions/0000-1111/resourceGroups/ml/providers/Microsoft.Compute/virtualMachines/infer-a100-01: rightsize → Standard_NC8as_T4_v3 + 1y reservation $2.10/h, 1×Standard_NC24ads_A100_v4 medium/medium",
		"infer-a100-02: quantize → g2-standard-8 + 1y CUD $0.445/h, 1×g2-standard-8 medium/medium",
		"nb-t4-2: → share nb-t4-1 high/medium",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if p.tagged != 1 || p.idleStops != 2 {
		t.Errorf("tagged %d, idle stops %d", p.tagged, p.idleStops)
	}
}

// Two projects may name an instance alike: the ranked view keeps them apart
// by provider, account and region, each with its own saving.
func TestRankSameNameTwoAccounts(t *testing.T) {
	r := testReport()
	r.Recommendations = nil
	for i, acct := range []string{"proj-a", "proj-b", "proj-a"} {
		r.Recommendations = append(r.Recommendations, Recommendation{ID: fmt.Sprintf("s%d", i), ResourceID: "trainer",
			Provider: "gcp", Account: acct, Region: "us-central1", Kind: string(recommend.KindIdleStop),
			CurrentMonthlyCost: NewMoney(dec("100")), MonthlySavings: NewMoney(dec("40")), Confidence: "high", Risk: "low"})
	}
	p := rank(r)
	if len(p.machines) != 2 {
		t.Fatalf("%d machines, want 2 (one per project)", len(p.machines))
	}
	if a, b := p.machines[0], p.machines[1]; a.account != "proj-a" || !a.savings.d.Equal(dec("80")) || b.account != "proj-b" || !b.savings.d.Equal(dec("40")) {
		t.Errorf("machines %s %s and %s %s, want proj-a 80 and proj-b 40", a.account, a.savings.d, b.account, b.savings.d)
	}
}

// The ranked view adds up on generated fleets of several sizes, protected
// machines among them.
func TestRankGenerated(t *testing.T) {
	for _, n := range []int{50, 300} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			checkRank(t, generatedReport(t, n))
		})
	}
}

// Protected recommendations are one line, their saving not counted.
func TestProtectedLine(t *testing.T) {
	r := testReport()
	for i, reason := range []string{"production", "exempt", "production"} {
		r.Recommendations = append(r.Recommendations, Recommendation{ID: fmt.Sprintf("p%d", i), ResourceID: fmt.Sprintf("prod-%d", i%2),
			Kind: string(recommend.KindIdleStop), MonthlySavings: NewMoney(decimal.Zero),
			Protected: &Protected{Reason: reason, PotentialMonthlySavings: NewMoney(dec("100.50"))}})
	}
	p := checkRank(t, r)
	if got, want := p.protectedLine(perMonthFunc(true)), "Protected: 2 machines kept from stopping (production 2, exempt 1), $301.50/mo not counted; --include-protected counts it"; got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	out := write(t, r, "table", PrintOptions{TTY: true, Width: 200})
	if strings.Contains(out, "prod-0") || !strings.Contains(out, "Protected: 2 machines") {
		t.Errorf("protected machines are rows, or the line is missing:\n%s", out)
	}
}

// --limit and --all: the rows shown, the line for the rest and its saving,
// and what to run next; the pipe ranks and limits the same way.
func TestActionsLimit(t *testing.T) {
	r := testReport()
	for _, tc := range []struct {
		opts PrintOptions
		rows int
		more string
	}{
		{PrintOptions{}, 5, ""},
		{PrintOptions{Limit: 2}, 2, "3 more machines not shown, saving 4727.60 USD/mo together (--all lists them)"},
		{PrintOptions{Limit: 4, TTY: true, Width: 200}, 4, "1 more machine not shown, saving $114.14/mo together (--all lists them)"},
		{PrintOptions{Limit: 99}, 5, ""},
		{PrintOptions{All: true}, 5, ""},
	} {
		out := write(t, r, "table", tc.opts)
		rows := 0
		if tc.opts.TTY {
			rows = len(testutil.TableCells(out, "RESOURCE"))
		} else {
			in := false
			for _, l := range strings.Split(out, "\n") {
				switch {
				case strings.HasPrefix(l, "resource\t"):
					in = true
				case l == "":
					in = false
				case in:
					rows++
				}
			}
		}
		if rows != tc.rows {
			t.Errorf("%+v: %d rows, want %d:\n%s", tc.opts, rows, tc.rows, out)
		}
		if tc.more != "" && !strings.Contains(out, tc.more) || tc.more == "" && strings.Contains(out, "not shown") {
			t.Errorf("%+v: want %q:\n%s", tc.opts, tc.more, out)
		}
		if hidden := tc.more != ""; hidden != strings.Contains(out, "--all for every machine") {
			t.Errorf("%+v: --all suggested %v", tc.opts, !hidden)
		}
	}
}

// On a terminal of known height the default view shows as many machines as
// keep the total on the first screen, the warnings a line each if need be;
// --limit and --all are taken as given.
func TestActionsFitHeight(t *testing.T) {
	r := generatedReport(t, 300)
	for _, h := range []int{40, 60} {
		for _, w := range []int{80, 120, 200} {
			out := write(t, r, "table", PrintOptions{TTY: true, Width: w, Height: h})
			if n := linesToTotal(out); n > h {
				t.Errorf("%dx%d: the total ends on line %d", w, h, n)
			}
			if rows := len(testutil.TableCells(out, "RESOURCE")); rows < 5 {
				t.Errorf("%dx%d: %d machines", w, h, rows)
			}
		}
	}
	out := write(t, r, "table", PrintOptions{TTY: true, Width: 80, Height: 24, Limit: 30})
	if rows := len(testutil.TableCells(out, "RESOURCE")); rows != 30 {
		t.Errorf("--limit 30 on 24 lines: %d machines", rows)
	}
}

// No action is cut at any width: read back from the terminal table, wrapped
// lines joined, every machine's action is whole.
func TestActionsNeverCut(t *testing.T) {
	for _, r := range []*Report{testReport(), generatedReport(t, 300)} {
		p := rank(r)
		for _, w := range []int{60, 80, 100, 120, 200} {
			out := write(t, r, "table", PrintOptions{TTY: true, Width: w, All: true})
			testutil.AssertFits(t, out, w)
			actions := testutil.TableCells(out, "ACTION")
			if len(actions) != len(p.machines) {
				t.Fatalf("width %d: %d actions for %d machines", w, len(actions), len(p.machines))
			}
			for i, m := range p.machines {
				if actions[i] != m.shortText() {
					t.Errorf("width %d: %s: %q, want %q", w, m.resource, actions[i], m.shortText())
				}
			}
		}
	}
}

// On a 1,000-instance fleet the terminal and the pipe stay a few screens
// long, hundreds of warnings grouped into a line or so each.
func TestActionsLargeFleetLines(t *testing.T) {
	r := generatedReport(t, 1000)
	groups := groupWarnings(r.Warnings)
	if len(r.Warnings) < 100 || len(groups) > 30 {
		t.Fatalf("%d warnings in %d groups: the fleet does not test the bound", len(r.Warnings), len(groups))
	}
	for _, opts := range []PrintOptions{{}, {TTY: true, Width: 80}, {TTY: true, Width: 80, Height: 40}, {TTY: true, Width: 200}} {
		out := write(t, r, "table", opts)
		lines := strings.Count(out, "\n")
		t.Logf("%+v: %d lines for %d machines, %d warnings", opts, lines, len(rank(r).machines), len(r.Warnings))
		if lines > 200 {
			t.Errorf("%+v: %d lines", opts, lines)
		}
		if !strings.Contains(out, "Total: ") || !strings.Contains(out, "Warnings (") {
			t.Errorf("%+v: no total or warnings", opts)
		}
	}
	md := write(t, r, "markdown", PrintOptions{MarkdownSummary: true})
	if n := strings.Count(md[strings.Index(md, "### Warnings"):], "\n- "); n > len(groups) {
		t.Errorf("markdown: %d warning items for %d groups", n, len(groups))
	}
}

// -o wide is a table on a terminal wide enough for it, else key: value
// records; either way every step's whole action and the full resource ID.
func TestActionsWideTableOrRecords(t *testing.T) {
	r := testReport()
	id := "/subscriptions/0000-1111/resourceGroups/ml/providers/Microsoft.Compute/virtualMachines/infer-a100-01"
	for _, tc := range []struct {
		width   int
		records bool
	}{{80, true}, {200, true}, {600, false}} {
		out := write(t, r, "wide", PrintOptions{TTY: true, Width: tc.width})
		testutil.AssertFits(t, out, tc.width)
		if got := strings.Contains(out, "\n1. gpu-train-01\n"); got != tc.records {
			t.Errorf("width %d: records %v, want %v:\n%s", tc.width, got, tc.records, out)
		}
		if !tc.records && !strings.Contains(out, "PROVIDER") {
			t.Errorf("width %d: no table:\n%s", tc.width, out)
		}
		joined := strings.Join(strings.Fields(out), "")
		for _, want := range []string{id, "Run on a schedule → Mon–Fri 07:00–19:00 UTC", "Buy a 1-year reservation → 1y reserved"} {
			if !strings.Contains(joined, strings.Join(strings.Fields(want), "")) {
				t.Errorf("width %d: %q missing", tc.width, want)
			}
		}
	}
}

// What to run next names idle-stop only when there is something to stop,
// and --all only when machines are hidden.
func TestActionsNext(t *testing.T) {
	r := testReport()
	var kept []Recommendation
	for _, rec := range r.Recommendations {
		if rec.Kind != string(recommend.KindIdleStop) && rec.Kind != string(recommend.KindSchedule) {
			kept = append(kept, rec)
		}
	}
	for _, tc := range []struct {
		recs          []Recommendation
		opts          PrintOptions
		idleStop, all bool
	}{
		{r.Recommendations, PrintOptions{}, true, false},
		{r.Recommendations, PrintOptions{Limit: 1}, true, true},
		{kept, PrintOptions{}, false, false},
	} {
		c := *r
		c.Recommendations = tc.recs
		out := write(t, &c, "table", tc.opts)
		next := out[strings.Index(out, "Next: "):]
		if got := strings.Contains(next, "gpufinops idle-stop"); got != tc.idleStop {
			t.Errorf("%d recommendations: idle-stop named %v:\n%s", len(tc.recs), got, next)
		}
		if got := strings.Contains(next, "--all"); got != tc.all {
			t.Errorf("%+v: --all named %v:\n%s", tc.opts, got, next)
		}
	}
}
