package report

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/money"
)

// randomReport builds a USD report that adds up (Verify), with chains of
// recommendations per instance, some saving all that is left (projected
// 0.00), tiny amounts where rounding bites, and allocation buckets that
// cost nothing once optimized.
func randomReport(rng *rand.Rand) *Report {
	r := &Report{SchemaVersion: SchemaVersion, Currency: "USD", Summary: Summary{SavingsByKind: map[string]Money{}}}
	kinds := []string{"idle-stop", "rightsize", "spot", "share", "commitment"}
	n := 1 + rng.Intn(12)
	byKind := map[string]decimal.Decimal{}
	type alloc struct{ cur, opt decimal.Decimal }
	buckets := make([][]alloc, 5)
	keys := make([][]string, 5)
	for d := range buckets {
		buckets[d] = make([]alloc, 1+rng.Intn(3))
		for b := range buckets[d] {
			keys[d] = append(keys[d], fmt.Sprintf("k%d", b))
		}
	}
	counts := make([][]int, 5)
	for d := range counts {
		counts[d] = make([]int, len(buckets[d]))
	}
	current, savings := decimal.Zero, decimal.Zero
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("i-%d", i)
		var cur decimal.Decimal
		switch rng.Intn(4) {
		case 0:
			cur = decimal.New(rng.Int63n(10), -2) // a few cents
		case 1:
			cur = decimal.New(rng.Int63n(100_000_000), -2)
		default:
			cur = decimal.New(rng.Int63n(1_000_000), -2)
		}
		left, saved := cur, decimal.Zero
		after := ""
		for j, kind := range kinds {
			if rng.Intn(3) == 0 {
				continue
			}
			var sav decimal.Decimal
			switch rng.Intn(3) {
			case 0:
				sav = left // saves all that is left
			default:
				if c := left.Mul(decimal.NewFromInt(100)).IntPart(); c > 0 {
					sav = decimal.New(rng.Int63n(c+1), -2)
				}
			}
			rec := Recommendation{ID: fmt.Sprintf("%s:%s:%d", kind, id, j), ResourceID: id, Kind: kind, After: after,
				CurrentMonthlyCost: NewMoney(left), MonthlySavings: NewMoney(sav), ProjectedMonthlyCost: NewMoney(left.Sub(sav))}
			r.Recommendations = append(r.Recommendations, rec)
			after = rec.ID
			left, saved = left.Sub(sav), saved.Add(sav)
			byKind[kind] = byKind[kind].Add(sav)
			if left.IsZero() {
				break
			}
		}
		c, sv, opt := NewMoney(cur), NewMoney(saved), NewMoney(left)
		r.Instances = append(r.Instances, Instance{ResourceID: id, Priced: true, CurrentMonthlyCost: &c, MonthlySavings: &sv, OptimizedMonthlyCost: &opt})
		current, savings = current.Add(cur), savings.Add(saved)
		for d := range buckets {
			b := rng.Intn(len(buckets[d]))
			buckets[d][b].cur, buckets[d][b].opt = buckets[d][b].cur.Add(cur), buckets[d][b].opt.Add(left)
			counts[d][b]++
		}
	}
	s := &r.Summary
	s.CurrentMonthlyCost, s.MonthlySavings, s.OptimizedMonthlyCost = NewMoney(current), NewMoney(savings), NewMoney(current.Sub(savings))
	s.InstanceCount = n
	for k, v := range byKind {
		s.SavingsByKind[k] = NewMoney(v)
	}
	s.SavingsPercent = NewNumber(decimal.Zero)
	if !current.IsZero() {
		s.SavingsPercent = NewNumber(savings.Mul(decimal.NewFromInt(100)).Div(current).Round(1))
	}
	a := &Allocation{CurrentMonthlyCost: s.CurrentMonthlyCost, OptimizedMonthlyCost: s.OptimizedMonthlyCost}
	dims := []*[]CostBucket{&a.ByTeam, &a.ByProject, &a.ByWorkloadType, &a.ByEnvironment, &a.ByProvider}
	for d, dim := range dims {
		for b, v := range buckets[d] {
			*dim = append(*dim, CostBucket{Key: keys[d][b], Instances: counts[d][b], CurrentMonthlyCost: NewMoney(v.cur), OptimizedMonthlyCost: NewMoney(v.opt)})
		}
	}
	r.Allocation = a
	return r
}

// rates are the currencies a report converts to, with plausible and
// awkward rates: every minor-unit scale (JPY 0, USD-like 2, KWD/BHD 3).
var rates = []struct{ code, rate string }{
	{"EUR", "0.92"}, {"EUR", "0.4"}, {"GBP", "0.79"}, {"CHF", "0.8765"}, {"JPY", "151.37"}, {"JPY", "0.5"},
	{"KRW", "1380.5"}, {"INR", "83.12"}, {"KWD", "0.3071"}, {"BHD", "0.376"}, {"SEK", "10.44"}, {"EUR", "1.0001"}, {"EUR", "0.0123"},
}

// Property: every currency with a rate × random reports gives a converted
// report that adds up, where no part is negative that was not negative in
// USD, a part that cost nothing in USD costs nothing converted, and every
// amount is at the currency's minor units.
func TestConvertPropertyNoNegativeParts(t *testing.T) {
	rng := rand.New(rand.NewSource(2026))
	n := 150
	if testing.Short() {
		n = 30
	}
	for i := 0; i < n; i++ {
		usd := randomReport(rng)
		if err := usd.Verify(); err != nil {
			t.Fatalf("generator: %v", err)
		}
		for _, rt := range rates {
			got, err := Convert(usd, Conversion{Currency: rt.code, Rate: dec(rt.rate)})
			if err != nil {
				t.Fatal(err)
			}
			if err := got.Verify(); err != nil {
				t.Fatalf("report %d in %s at %s: %v", i, rt.code, rt.rate, err)
			}
			scale := money.Scale(rt.code)
			check := func(what string, m, usdM Money) {
				t.Helper()
				if m.d.IsNegative() && !usdM.d.IsNegative() {
					t.Fatalf("report %d in %s at %s: %s is %s (USD %s)", i, rt.code, rt.rate, what, m, usdM)
				}
				if usdM.d.IsZero() && !m.d.IsZero() {
					t.Fatalf("report %d in %s at %s: %s is %s, but 0 in USD", i, rt.code, rt.rate, what, m)
				}
				if !m.d.Equal(m.d.Round(scale)) {
					t.Fatalf("%s %s has more than %d decimals", what, m.d, scale)
				}
			}
			for j, rec := range got.Recommendations {
				u := usd.Recommendations[j]
				check(rec.ID+" projected", rec.ProjectedMonthlyCost, u.ProjectedMonthlyCost)
				check(rec.ID+" savings", rec.MonthlySavings, u.MonthlySavings)
				check(rec.ID+" current", rec.CurrentMonthlyCost, u.CurrentMonthlyCost)
			}
			for j, in := range got.Instances {
				check(in.ResourceID+" optimized", *in.OptimizedMonthlyCost, *usd.Instances[j].OptimizedMonthlyCost)
			}
			check("summary optimized", got.Summary.OptimizedMonthlyCost, usd.Summary.OptimizedMonthlyCost)
			for d, dim := range [][]CostBucket{got.Allocation.ByTeam, got.Allocation.ByProject, got.Allocation.ByWorkloadType, got.Allocation.ByEnvironment, got.Allocation.ByProvider} {
				udim := [][]CostBucket{usd.Allocation.ByTeam, usd.Allocation.ByProject, usd.Allocation.ByWorkloadType, usd.Allocation.ByEnvironment, usd.Allocation.ByProvider}[d]
				for b := range dim {
					check(fmt.Sprintf("allocation %d/%s optimized", d, dim[b].Key), dim[b].OptimizedMonthlyCost, udim[b].OptimizedMonthlyCost)
					check(fmt.Sprintf("allocation %d/%s current", d, dim[b].Key), dim[b].CurrentMonthlyCost, udim[b].CurrentMonthlyCost)
				}
			}
		}
	}
}

// The demo-like case behind the −0.01 € bug: a share saves all that a
// schedule left, and the rounding of the two conversions crossed.
func TestConvertNeverShowsMinusOneCent(t *testing.T) {
	usd := &Report{SchemaVersion: SchemaVersion, Currency: "USD", Summary: Summary{SavingsByKind: map[string]Money{}}}
	cur, s1, s2 := dec("0.11"), dec("0.04"), dec("0.07")
	usd.Recommendations = []Recommendation{
		{ID: "schedule:a", ResourceID: "a", Kind: "schedule", CurrentMonthlyCost: NewMoney(cur), MonthlySavings: NewMoney(s1), ProjectedMonthlyCost: NewMoney(cur.Sub(s1))},
		{ID: "share:a", ResourceID: "a", Kind: "share", After: "schedule:a", CurrentMonthlyCost: NewMoney(cur.Sub(s1)), MonthlySavings: NewMoney(s2), ProjectedMonthlyCost: NewMoney(decimal.Zero)},
	}
	c, sv, opt := NewMoney(cur), NewMoney(s1.Add(s2)), NewMoney(decimal.Zero)
	usd.Instances = []Instance{{ResourceID: "a", Priced: true, CurrentMonthlyCost: &c, MonthlySavings: &sv, OptimizedMonthlyCost: &opt}}
	usd.Summary.CurrentMonthlyCost, usd.Summary.MonthlySavings, usd.Summary.OptimizedMonthlyCost = c, sv, opt
	usd.Summary.InstanceCount = 1
	usd.Summary.SavingsByKind = map[string]Money{"schedule": NewMoney(s1), "share": NewMoney(s2)}
	usd.Summary.SavingsPercent = NewNumber(dec("100"))
	if err := usd.Verify(); err != nil {
		t.Fatal(err)
	}
	// 0.11 × 0.4 = 0.044 → 0.04; 0.04 × 0.4 = 0.016 → 0.02; so 0.02 is left,
	// while the share's 0.07 × 0.4 = 0.028 → 0.03 would make it −0.01.
	got, err := Convert(usd, Conversion{Currency: "EUR", Rate: dec("0.4")})
	if err != nil {
		t.Fatal(err)
	}
	if err := got.Verify(); err != nil {
		t.Fatal(err)
	}
	share := got.Recommendations[1]
	if !share.ProjectedMonthlyCost.d.IsZero() || share.MonthlySavings.String() != "0.02" {
		t.Errorf("share: projected %s, savings %s; want 0.00 and 0.02", share.ProjectedMonthlyCost, share.MonthlySavings)
	}
	table := write(t, got, "table", PrintOptions{TTY: true})
	if strings.Contains(table, "-€0.01") {
		t.Errorf("the table shows −0.01 €:\n%s", table)
	}
}

func TestConvertMinorUnits(t *testing.T) {
	usd := testReport()
	for code, decimals := range map[string]int{"JPY": 0, "KWD": 3, "EUR": 2} {
		got, err := Convert(usd, Conversion{Currency: code, Rate: dec("3.3337")})
		if err != nil {
			t.Fatal(err)
		}
		if err := got.Verify(); err != nil {
			t.Fatalf("%s: %v", code, err)
		}
		doc := write(t, got, "json", PrintOptions{})
		want := `"currentMonthlyCost": ` + money.Plain(got.Summary.CurrentMonthlyCost.d, code) + ","
		if !strings.Contains(doc, want) {
			t.Errorf("%s JSON lacks %s", code, want)
		}
		s := got.Summary.CurrentMonthlyCost.String()
		if _, frac, _ := strings.Cut(s, "."); len(frac) != decimals {
			t.Errorf("%s amount %q: %d decimals, want %d", code, s, len(frac), decimals)
		}
		loaded, err := Load(strings.NewReader(doc))
		if err != nil {
			t.Fatal(err)
		}
		if err := loaded.Verify(); err != nil {
			t.Fatalf("%s loaded: %v", code, err)
		}
		if again := write(t, loaded, "json", PrintOptions{}); again != doc {
			t.Errorf("%s report writes differently once loaded", code)
		}
	}
}
