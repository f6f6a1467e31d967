package commitplan

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

var awsTerms = map[fleet.Provider]Terms{fleet.AWS: {Term1y: 0.35, Term3y: 0.55}}

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func item(id, price string, hours float64, mods ...func(*Item)) Item {
	it := Item{ID: id, Provider: fleet.AWS, Region: "us-east-1", Family: "g5", OnDemandHourly: dec(price), MonthlyHours: hours, Eligible: true}
	for _, m := range mods {
		m(&it)
	}
	return it
}

func withSchedule(tz string, days []string, start, end string) func(*Item) {
	return func(it *Item) {
		it.Schedule = &fleet.Schedule{Timezone: tz, Windows: []fleet.Window{{Days: days, Start: start, End: end}}}
	}
}

var everyDay = []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}

func mustBuild(t *testing.T, items []Item, terms map[fleet.Provider]Terms) Plan {
	t.Helper()
	p, err := Build(items, terms, Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkIdentities(t, p)
	return p
}

// checkIdentities holds for every plan: the money adds up, savings are never
// negative, allocations add up to the saving to the cent.
func checkIdentities(t *testing.T, p Plan) {
	t.Helper()
	sum := decimal.Zero
	for _, g := range p.Groups {
		if len(g.HourlyUsage) != p.Hours {
			t.Errorf("%s: %d hourly values on a %d-hour axis", g.Family, len(g.HourlyUsage), p.Hours)
		}
		for _, tp := range g.Terms {
			name := fmt.Sprintf("%s/%s/%s %s", g.Provider, g.Region, g.Family, tp.Term)
			if !tp.TotalMonthly.Equal(tp.CommittedMonthly.Add(tp.OnDemandMonthly).Add(tp.SpotMonthly)) {
				t.Errorf("%s: total %s ≠ committed %s + on-demand %s + spot %s", name, tp.TotalMonthly, tp.CommittedMonthly, tp.OnDemandMonthly, tp.SpotMonthly)
			}
			if !tp.SavingsMonthly.Equal(tp.BaselineMonthly.Sub(tp.TotalMonthly)) || tp.SavingsMonthly.IsNegative() {
				t.Errorf("%s: saving %s, baseline %s, total %s", name, tp.SavingsMonthly, tp.BaselineMonthly, tp.TotalMonthly)
			}
			if tp.CommitHourly.IsZero() && !tp.SavingsMonthly.IsZero() {
				t.Errorf("%s: no commitment but a saving of %s", name, tp.SavingsMonthly)
			}
			alloc := decimal.Zero
			for _, a := range tp.Allocations {
				alloc = alloc.Add(a.SavingsMonthly)
				if !a.SavingsMonthly.Equal(a.SavingsMonthly.Round(2)) {
					t.Errorf("%s: allocation %s to %s is not in cents", name, a.SavingsMonthly, a.ID)
				}
			}
			if tp.SavingsMonthly.IsPositive() && !alloc.Equal(tp.SavingsMonthly) {
				t.Errorf("%s: allocations add up to %s, the saving is %s", name, alloc, tp.SavingsMonthly)
			}
			l := tp.Layers
			if !l.Base.CostMonthly.Add(l.Burst.CostMonthly).Add(l.Reserve.CostMonthly).Equal(tp.TotalMonthly) {
				t.Errorf("%s: layers cost %s + %s + %s ≠ total %s", name, l.Base.CostMonthly, l.Burst.CostMonthly, l.Reserve.CostMonthly, tp.TotalMonthly)
			}
			if tp.Term == g.Recommended {
				sum = sum.Add(tp.SavingsMonthly)
			}
		}
	}
	if !sum.Equal(p.SavingsMonthly) {
		t.Errorf("plan saving %s, groups' recommended savings add up to %s", p.SavingsMonthly, sum)
	}
	all := decimal.Zero
	for _, v := range Allocate(p) {
		all = all.Add(v)
	}
	if !all.Equal(p.SavingsMonthly) {
		t.Errorf("Allocate adds up to %s, the plan saves %s", all, p.SavingsMonthly)
	}
}

func TestBuildHandComputed(t *testing.T) {
	// base: $4/h on demand, 24/7. day: $2/h, every day 00:00–12:00 (84 h a
	// week, 365 h a month). Usage is 6 in half the hours, 4 in the other half.
	//
	// 1y, d = 0.35: the band 4–6 is used 50 % of hours < 65 % → c = 4.
	//   committed 4 × 0.65 × 730 = 1898.00; on demand 2 × 84 × 730/168 = 730.00;
	//   total 2628.00; baseline 4 × 730 + 2 × 365 = 3650.00; saving 1022.00.
	// 3y, d = 0.55: 50 % > 45 % → c = 6.
	//   committed 6 × 0.45 × 730 = 1971.00; total 1971.00; saving 1679.00;
	//   utilisation (6·84 + 4·84)/(6·168) = 0.8333.
	// 3y saves more: recommended. Its saving splits by usage in the band:
	//   base 4·168 = 672, day 2·84 = 168 → 80 % / 20 % → 1343.20 / 335.80.
	items := []Item{
		item("base", "4", 730),
		item("day", "2", 365, withSchedule("", everyDay, "00:00", "12:00")),
	}
	p := mustBuild(t, items, awsTerms)
	if len(p.Groups) != 1 || p.Hours != 168 || p.Start != nil {
		t.Fatalf("groups %d, hours %d, start %v", len(p.Groups), p.Hours, p.Start)
	}
	g := p.Groups[0]
	want := []struct {
		term                                       string
		commit, committed, od, total, base, saving string
		util, exceed                               float64
	}{
		{"1y", "4", "1898", "730", "2628", "3650", "1022", 1, 1},
		{"3y", "6", "1971", "0", "1971", "3650", "1679", 0.8333, 0.5},
	}
	for i, w := range want {
		tp := g.Terms[i]
		got := []string{tp.Term, tp.CommitHourly.String(), tp.CommittedMonthly.String(), tp.OnDemandMonthly.String(), tp.TotalMonthly.String(), tp.BaselineMonthly.String(), tp.SavingsMonthly.String()}
		exp := []string{w.term, w.commit, w.committed, w.od, w.total, w.base, w.saving}
		if strings.Join(got, " ") != strings.Join(exp, " ") {
			t.Errorf("term %s: got %v, want %v", w.term, got, exp)
		}
		if tp.Utilization != w.util || tp.ExceedShare != w.exceed {
			t.Errorf("term %s: utilisation %v exceed %v, want %v %v", w.term, tp.Utilization, tp.ExceedShare, w.util, w.exceed)
		}
	}
	if g.Recommended != Term3y || !p.SavingsMonthly.Equal(dec("1679")) {
		t.Errorf("recommended %s saving %s", g.Recommended, p.SavingsMonthly)
	}
	alloc := Allocate(p)
	if !alloc["base"].Equal(dec("1343.2")) || !alloc["day"].Equal(dec("335.8")) || len(alloc) != 2 {
		t.Errorf("allocation %v", alloc)
	}
	// In the 1-year plan the band is [0, 4]. In the 84 hours both run (6 in
	// all) the commitment covers 4/6 of each, pro rata: base 84·4·4/6 = 224,
	// day 84·2·4/6 = 112; in the other 84 hours base alone, 336. Shares
	// 560/672 and 112/672 of 1022.00: 851.666… and 170.333… → 851.67 + 170.33.
	if a := g.Terms[0].Allocations; len(a) != 2 || a[0].ID != "base" || !a[0].SavingsMonthly.Equal(dec("851.67")) ||
		a[1].ID != "day" || !a[1].SavingsMonthly.Equal(dec("170.33")) || a[0].BandShare != 0.8333 {
		t.Errorf("1y allocations %+v", a)
	}
	l := g.Terms[0].Layers
	if !l.Base.UsageMonthly.Equal(dec("2920")) || !l.Reserve.UsageMonthly.Equal(dec("730")) || !l.Burst.UsageMonthly.IsZero() || l.Base.Share != 0.8 {
		t.Errorf("layers %+v", l)
	}
	if g.Terms[0].BreakEven != 0.65 || g.Terms[1].BreakEven != 0.45 {
		t.Errorf("break-even %v %v", g.Terms[0].BreakEven, g.Terms[1].BreakEven)
	}
}

func TestBuildNeverPays(t *testing.T) {
	// Notebooks on weekdays 08:00–18:00: 50 h of 168 (30 %) < 45 %: no term pays.
	items := []Item{
		item("nb-1", "0.526", 217.26, withSchedule("UTC", everyDay[:5], "08:00", "18:00")),
		item("nb-2", "0.526", 217.26, withSchedule("UTC", everyDay[:5], "08:00", "18:00")),
	}
	p := mustBuild(t, items, awsTerms)
	g := p.Groups[0]
	if g.Recommended != None || !p.SavingsMonthly.IsZero() {
		t.Errorf("recommended %s, saving %s", g.Recommended, p.SavingsMonthly)
	}
	for _, tp := range g.Terms {
		if !tp.CommitHourly.IsZero() || len(tp.Allocations) != 0 || !tp.TotalMonthly.Equal(tp.BaselineMonthly) {
			t.Errorf("%s: %+v", tp.Term, tp)
		}
	}
	if g.Usage.RunningShare != round(50.0/168, 4) || g.Usage.Max != 1.052 {
		t.Errorf("usage %+v", g.Usage)
	}
}

func TestBuildGroupsAndExclusions(t *testing.T) {
	items := []Item{
		item("z-gcp", "1", 730, func(it *Item) { it.Provider, it.Region, it.Family = fleet.GCP, "us-central1", "g2-standard" }),
		item("b-g4dn", "0.526", 730, func(it *Item) { it.Family = "g4dn" }),
		item("a-g5", "1.006", 730),
		item("stopped", "1.006", 0, func(it *Item) { it.Eligible, it.Reason = false, "stopped" }),
		item("spot", "1.006", 175, func(it *Item) {
			it.Eligible, it.Reason, it.SpotEligible, it.SpotHourly = false, "runs on spot", true, dec("0.41246")
		}),
		item("az", "3", 730, func(it *Item) { it.Provider, it.Region, it.Family = fleet.Azure, "eastus", "NCads_A100_v4" }),
	}
	terms := map[fleet.Provider]Terms{fleet.AWS: {Term1y: 0.35}, fleet.GCP: {Term1y: 0.37, Term3y: 0.55}}
	p := mustBuild(t, items, terms)
	var got []string
	for _, g := range p.Groups {
		got = append(got, fmt.Sprintf("%s/%s/%s:%v:%v:%v:%s", g.Provider, g.Region, g.Family, g.Items, g.SpotItems, g.Excluded, g.Recommended))
	}
	want := []string{
		"aws/us-east-1/g4dn:[b-g4dn]:[]:[]:1y",
		"aws/us-east-1/g5:[a-g5]:[spot]:[{stopped stopped}]:1y",
		"azure/eastus/NCads_A100_v4:[az]:[]:[]:none",
		"gcp/us-central1/g2-standard:[z-gcp]:[]:[]:3y",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("groups:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(strings.Join(p.Assumptions, "\n"), "no commitment discounts are set for azure") {
		t.Errorf("assumptions %q", p.Assumptions)
	}
	// The spot instance is the burst layer: its cost is in every term's spot
	// money, the same with or without the commitment.
	g5 := p.Groups[1].Terms[0]
	spotCost := dec("0.41246").Mul(decimal.NewFromInt(175)).Round(2) // 72.18
	if !g5.SpotMonthly.Equal(spotCost) || !g5.Layers.Burst.CostMonthly.Equal(spotCost) {
		t.Errorf("spot %s, burst %+v", g5.SpotMonthly, g5.Layers.Burst)
	}
	if !g5.SavingsMonthly.Equal(dec("1.006").Mul(dec("730")).Mul(dec("0.35")).Round(2)) {
		t.Errorf("saving %s", g5.SavingsMonthly)
	}
}

func TestSpotChecks(t *testing.T) {
	// p4d on spot 60 h a week: s = 1 − 7.246022/21.957642 = 0.67. A 1-year
	// commitment (0.65) beats spot only above 0.65/0.33 = 197 % of hours:
	// never. The 24/7 A100 on spot with checkpoint overhead (741.2 h): s =
	// 1 − 1.80385/3.6734 = 0.509; 3-year (0.45): 0.45/0.491 = 91.6 % < 101.5 %:
	// the commitment wins. 1-year at 37 % off: 0.63/0.491 = 128 %: spot wins.
	items := []Item{
		item("p4d", "21.957642", 261.69, func(it *Item) {
			it.Family, it.Eligible, it.SpotEligible, it.SpotHourly = "p4d", false, true, dec("7.246022")
		}),
		item("a100", "3.6734", 741.2, func(it *Item) {
			it.Provider, it.Region, it.Family = fleet.GCP, "us-central1", "a2-highgpu"
			it.Eligible, it.SpotEligible, it.SpotHourly = false, true, dec("1.80385")
		}),
	}
	terms := map[fleet.Provider]Terms{fleet.AWS: {Term1y: 0.35, Term3y: 0.55}, fleet.GCP: {Term1y: 0.37, Term3y: 0.55}}
	p := mustBuild(t, items, terms)
	var got []string
	for _, g := range p.Groups {
		for _, tp := range g.Terms {
			for _, sc := range tp.Spot {
				got = append(got, fmt.Sprintf("%s %s s=%v f=%v be=%v %s", sc.ID, tp.Term, sc.SpotDiscount, sc.HoursShare, sc.BreakEven, sc.Winner))
			}
			if !tp.CommitHourly.IsZero() {
				t.Errorf("%s %s: spot instances are not committed: %s", g.Family, tp.Term, tp.CommitHourly)
			}
		}
	}
	want := []string{
		"p4d 1y s=0.67 f=0.3585 be=1.9697 spot",
		"p4d 3y s=0.67 f=0.3585 be=1.3636 spot",
		"a100 1y s=0.5089 f=1.0153 be=1.2829 spot",
		"a100 3y s=0.5089 f=1.0153 be=0.9164 commitment",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("spot checks:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestSpotEligibleOnTopOfTheStack(t *testing.T) {
	// od: $2/h 24/7 must run on demand; job: $3/h 24/7, spot-eligible at 60 %
	// off. Committing the job costs 0.65 against 0.40 on spot: only od is
	// committed. Baseline: 2·730 + 3·0.4·730 = 1460 + 876 = 2336.
	items := []Item{
		item("od", "2", 730),
		item("job", "3", 730, func(it *Item) { it.SpotEligible, it.SpotHourly = true, dec("1.2") }),
	}
	p := mustBuild(t, items, map[fleet.Provider]Terms{fleet.AWS: {Term1y: 0.35}})
	tp := p.Groups[0].Terms[0]
	if !tp.CommitHourly.Equal(dec("2")) || !tp.BaselineMonthly.Equal(dec("2336")) || !tp.SpotMonthly.Equal(dec("876")) ||
		!tp.CommittedMonthly.Equal(dec("949")) || !tp.OnDemandMonthly.IsZero() {
		t.Errorf("%+v", tp)
	}
	if len(tp.Allocations) != 1 || tp.Allocations[0].ID != "od" {
		t.Errorf("allocations %+v", tp.Allocations)
	}
}

func TestPlacementAssumed(t *testing.T) {
	// known runs Mon–Fri 08:00–20:00 (60 h a week). guess runs 60 h a week,
	// nobody knows when: it goes on known's hours, so usage is 2 in 60 hours
	// and 0 elsewhere, the least steady it could be.
	perWeek := func(h float64) float64 { return h * fleet.HoursPerMonth / fleet.HoursPerWeek }
	items := []Item{
		item("known", "1", perWeek(60), withSchedule("UTC", everyDay[:5], "08:00", "20:00")),
		item("guess", "1", perWeek(60)),
	}
	p := mustBuild(t, items, awsTerms)
	g := p.Groups[0]
	if fmt.Sprint(g.PlacementAssumed) != "[guess]" || !strings.Contains(strings.Join(p.Assumptions, "\n"), "guess: only its hours are known") {
		t.Errorf("placement assumed %v, assumptions %q", g.PlacementAssumed, p.Assumptions)
	}
	for h, u := range g.HourlyUsage {
		in := h/24 < 5 && h%24 >= 8 && h%24 < 20
		if want := 2 * b2f(in); u != want {
			t.Fatalf("hour %d: usage %v, want %v", h, u, want)
		}
	}
	// Alone, an hour count is a block from Monday 00:00, its last hour partial:
	// 100 h a month = 23.0137 h a week.
	p = mustBuild(t, []Item{item("alone", "1", 100)}, awsTerms)
	u := p.Groups[0].HourlyUsage
	if u[0] != 1 || u[22] != 1 || u[23] != round(100*168.0/730-23, 6) || u[24] != 0 {
		t.Errorf("block: %v", u[:26])
	}
}

func TestSamplesPlaceHours(t *testing.T) {
	// Samples every hour on weekdays 09:00–17:00 of the week of 2026-11-23
	// (a Monday); the window says the monitoring ran all week.
	start := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	var samples []fleet.Sample
	for d := range 5 {
		for h := 9; h < 17; h++ {
			samples = append(samples, fleet.Sample{Time: start.Add(time.Duration(d*24+h) * time.Hour)})
		}
	}
	window := &fleet.TimeRange{Start: start, End: start.Add(week)}
	it := item("sampled", "1", 40*fleet.HoursPerMonth/fleet.HoursPerWeek, func(it *Item) { it.Samples, it.Window = samples, window })
	p := mustBuild(t, []Item{it}, awsTerms)
	if p.Start == nil || !p.Start.Equal(start) || p.Hours != 168 {
		t.Fatalf("axis start %v hours %d", p.Start, p.Hours)
	}
	u := p.Groups[0].HourlyUsage
	for h := range u {
		if want := b2f(h/24 < 5 && h%24 >= 9 && h%24 < 17); u[h] != want {
			t.Fatalf("hour %d: %v, want %v", h, u[h], want)
		}
	}
	if len(p.Groups[0].PlacementAssumed) != 0 || len(p.Assumptions) != 0 {
		t.Errorf("assumptions %q", p.Assumptions)
	}
	// Without the window the samples span 4 days 8 h, less than a week: the
	// hours are placed by assumption, and said so.
	it.Window = nil
	p = mustBuild(t, []Item{it}, awsTerms)
	if fmt.Sprint(p.Groups[0].PlacementAssumed) != "[sampled]" || !strings.Contains(strings.Join(p.Assumptions, "\n"), "samples cover less than a week") {
		t.Errorf("placement %v, assumptions %q", p.Groups[0].PlacementAssumed, p.Assumptions)
	}
}

func TestSamplesNeverStretched(t *testing.T) {
	// A week of hourly samples 12:00–14:00 from Wednesday 2026-11-25 10:00:
	// the axis starts at the first hour of the window, not the Monday before,
	// so no hour is filled in from another week.
	first := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	var samples []fleet.Sample
	for h := range 168 {
		if t := first.Add(time.Duration(h) * time.Hour); t.Hour() >= 12 && t.Hour() < 14 {
			samples = append(samples, fleet.Sample{Time: t})
		}
	}
	window := &fleet.TimeRange{Start: first, End: first.Add(week)}
	it := item("mid", "1", 14*fleet.HoursPerMonth/fleet.HoursPerWeek, func(it *Item) { it.Samples, it.Window = samples, window })
	p := mustBuild(t, []Item{it}, awsTerms)
	if p.Hours != 168 || !p.Start.Equal(first) {
		t.Fatalf("hours %d start %v", p.Hours, p.Start)
	}
	for h, u := range p.Groups[0].HourlyUsage {
		if want := b2f((h+10)%24 >= 12 && (h+10)%24 < 14); u != want {
			t.Fatalf("hour %d: %v, want %v", h, u, want)
		}
	}
	// A second machine watched for two weeks stretches the axis; the first
	// one's hours outside its own window stay 0 (it is not stretched over the
	// week it was not seen in).
	var long []fleet.Sample
	for h := range 336 {
		long = append(long, fleet.Sample{Time: first.Add(time.Duration(h) * time.Hour)})
	}
	steady := item("steady", "1", fleet.HoursPerMonth, func(it *Item) { it.Samples = long })
	p = mustBuild(t, []Item{it, steady}, awsTerms)
	if p.Hours != 336 {
		t.Fatalf("hours %d", p.Hours)
	}
	for h, u := range p.Groups[0].HourlyUsage {
		want := 1.0
		if h < 168 && (h+10)%24 >= 12 && (h+10)%24 < 14 {
			want = 2
		}
		if u != want {
			t.Fatalf("hour %d: %v, want %v", h, u, want)
		}
	}
}

func TestScheduleTimeZones(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skip("no time zone data:", err)
	}
	_ = berlin
	// The reference week is in January: Berlin is UTC+1, so Monday 09:00–17:00
	// there is 08:00–16:00 UTC. Kolkata is UTC+5:30: 09:00–10:00 there is
	// 03:30–04:30 UTC, half of hour 3 and half of hour 4.
	for _, tc := range []struct {
		tz   string
		from string
		to   string
		want map[int]float64
	}{
		{"Europe/Berlin", "09:00", "17:00", map[int]float64{8: 1, 9: 1, 10: 1, 11: 1, 12: 1, 13: 1, 14: 1, 15: 1}},
		{"Asia/Kolkata", "09:00", "10:00", map[int]float64{3: 0.5, 4: 0.5}},
	} {
		p := mustBuild(t, []Item{item("x", "1", 8*fleet.HoursPerMonth/fleet.HoursPerWeek, withSchedule(tc.tz, []string{"mon"}, tc.from, tc.to))}, awsTerms)
		for h, u := range p.Groups[0].HourlyUsage {
			if u != tc.want[h] {
				t.Errorf("%s: hour %d: %v, want %v", tc.tz, h, u, tc.want[h])
			}
		}
	}
}

func TestBuildErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		items []Item
		terms map[fleet.Provider]Terms
		want  string
	}{
		{"discount 1", nil, map[fleet.Provider]Terms{fleet.AWS: {Term1y: 1}}, "aws 1y discount 1 is not a fraction in [0, 1)"},
		{"negative discount", nil, map[fleet.Provider]Terms{fleet.GCP: {Term3y: -0.1}}, "gcp 3y discount -0.1 is not a fraction in [0, 1)"},
		{"NaN discount", nil, map[fleet.Provider]Terms{fleet.GCP: {Term3y: math.NaN()}}, "is not a fraction"},
		{"duplicate", []Item{item("a", "1", 730), item("a", "1", 730)}, awsTerms, "item a appears twice"},
		{"no id", []Item{item("", "1", 730)}, awsTerms, "an item has no ID"},
		{"negative price", []Item{item("a", "-1", 730)}, awsTerms, "item a: negative price"},
		{"negative hours", []Item{item("a", "1", -1)}, awsTerms, "item a: monthly hours -1"},
		{"bad day", []Item{item("a", "1", 10, withSchedule("", []string{"monday"}, "08:00", "10:00"))}, awsTerms, `item a: schedule windows[0].days[0]: "monday" is not one of`},
		{"bad clock", []Item{item("a", "1", 10, withSchedule("", []string{"mon"}, "8:00", "10:00"))}, awsTerms, `item a: schedule windows[0].start: "8:00" is not a time of day`},
		{"backwards", []Item{item("a", "1", 10, withSchedule("", []string{"mon"}, "10:00", "08:00"))}, awsTerms, "end 08:00 is not after start 10:00"},
		{"bad zone", []Item{item("a", "1", 10, withSchedule("Mars/Olympus", []string{"mon"}, "08:00", "10:00"))}, awsTerms, `"Mars/Olympus" is not a known time zone`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Build(tc.items, tc.terms, Options{})
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %v, want one line with %q", err, tc.want)
			}
		})
	}
}

func TestBuildEmpty(t *testing.T) {
	p := mustBuild(t, nil, nil)
	if p.Hours != 168 || len(p.Groups) != 0 || !p.SavingsMonthly.IsZero() {
		t.Errorf("%+v", p)
	}
	// A group with nothing committable still reports, with no commitment.
	p = mustBuild(t, []Item{item("gone", "1", 0, func(it *Item) { it.Eligible, it.Reason = false, "stopped" })}, awsTerms)
	if g := p.Groups[0]; g.Recommended != None || len(g.Items) != 0 || g.Terms[0].CommitHourly.Sign() != 0 {
		t.Errorf("%+v", g)
	}
}

func TestSplitCents(t *testing.T) {
	for _, tc := range []struct {
		total   string
		ids     []string
		weights []float64
		want    string
	}{
		// 10 cents over three equal weights: 3 each, the extra cent to the first ID.
		{"0.10", []string{"b", "a", "c"}, []float64{1, 1, 1}, "[0.03 0.04 0.03]"},
		{"100", []string{"x", "y"}, []float64{2, 1}, "[66.67 33.33]"},
		{"0.01", []string{"x", "y", "z"}, []float64{1, 5, 1}, "[0 0.01 0]"},
		{"5", []string{"x"}, []float64{0}, "[0]"},
	} {
		got := splitCents(dec(tc.total), tc.ids, tc.weights)
		if fmt.Sprint(got) != tc.want {
			t.Errorf("split %s over %v: %v, want %s", tc.total, tc.weights, got, tc.want)
		}
	}
}

// TestRandomPlans builds random fleets and checks the identities, and that
// each term's total is the brute-force minimum over all levels (to the cent).
func TestRandomPlans(t *testing.T) {
	rng := rand.New(rand.NewPCG(42, 1))
	days := [][]string{everyDay, everyDay[:5], {"mon", "wed", "fri"}, {"sat", "sun"}}
	for trial := range 60 {
		var items []Item
		for i := range 1 + rng.IntN(8) {
			price := fmt.Sprintf("%d.%03d", rng.IntN(4), rng.IntN(1000))
			id := fmt.Sprintf("i%02d", i)
			switch rng.IntN(4) {
			case 0:
				items = append(items, item(id, price, 730))
			case 1:
				from := rng.IntN(20)
				to := from + 1 + rng.IntN(24-from)
				it := item(id, price, 0, withSchedule("", days[rng.IntN(len(days))], fmt.Sprintf("%02d:00", from), fmt.Sprintf("%02d:30", to-1)))
				perWeek, _ := it.Schedule.HoursPerWeek()
				it.MonthlyHours = perWeek * fleet.HoursPerMonth / fleet.HoursPerWeek
				items = append(items, it)
			case 2:
				items = append(items, item(id, price, float64(rng.IntN(730))))
			default:
				items = append(items, item(id, price, 730, func(it *Item) {
					it.SpotEligible, it.SpotHourly = true, it.OnDemandHourly.Mul(dec("0.4")).Round(4)
				}))
			}
		}
		p := mustBuild(t, items, awsTerms)
		g := p.Groups[0]
		hasSpot := false
		for _, it := range items {
			hasSpot = hasSpot || it.SpotEligible
		}
		if hasSpot {
			continue
		}
		for _, tp := range g.Terms {
			prices, seg := onDemandOnly(g.HourlyUsage)
			best := math.Inf(1)
			for _, x := range candidates(prices, seg) {
				best = math.Min(best, bruteCost(prices, seg, tp.Discount, x)*fleet.HoursPerMonth/168)
			}
			if got := tp.TotalMonthly.InexactFloat64(); math.Abs(got-best) > 0.02 {
				t.Fatalf("trial %d %s: total %v, brute-force minimum %v", trial, tp.Term, got, best)
			}
		}
	}
}
