package report

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/money"
	"github.com/gpufinops/gpufinops/pkg/recommend"
	"github.com/gpufinops/gpufinops/pricing"
)

// Conversion states a currency to print a report in and the rate to convert
// the USD amounts at.
type Conversion struct {
	// Currency is an ISO 4217 code, e.g. "EUR".
	Currency string
	// Rate is the units of Currency one USD buys, e.g. 0.92.
	Rate decimal.Decimal
	// Source says where the rate came from, e.g. "--exchange-rate" or
	// "config file ~/.config/gpufinops/config.yaml".
	Source string
}

// ParseCurrency upper-cases code and checks it is an ISO 4217 currency
// (money.Parse).
func ParseCurrency(code string) (string, error) { return money.Parse(code) }

// Convert returns a copy of r, a USD report, with every amount in c.Currency;
// r is left as it is. The hourly prices in the evidence, the instances'
// hourly prices and the commitments' hourly commitment stay USD, as their
// source quotes them; so do the amounts quoted inside the engine's sentences
// (actions, rationales, notes).
//
// Each monthly amount is converted and rounded to cents, and every total is
// then the sum of its converted parts, so that the converted report adds up
// (Verify) exactly as the USD one does:
//   - a recommendation's current cost and savings are converted, its projected
//     cost is their difference; one priced after another starts from that
//     one's converted projected cost;
//   - an instance's savings are the sum of its recommendations', its
//     optimized cost its converted current cost minus them;
//   - the summary re-sums the instances and recommendations;
//   - where a section's parts must add up to a total that is itself a sum
//     (allocation buckets, sharing groups, commitment groups at the policy's
//     term), the parts are converted and the cents that rounding leaves over
//     go one by one to the parts that rounding cut most (largest remainder).
func Convert(r *Report, c Conversion) (*Report, error) {
	if c.Currency == pricing.Currency && c.Rate.Equal(decimal.NewFromInt(1)) {
		return r, nil
	}
	if r.Currency != pricing.Currency {
		return nil, fmt.Errorf("the report is in %s; only a USD report converts", r.Currency)
	}
	if !c.Rate.IsPositive() {
		return nil, fmt.Errorf("exchange rate %s for %s: must be above zero", c.Rate, c.Currency)
	}
	out, err := clone(r)
	if err != nil {
		return nil, err
	}
	k := c.Rate
	mk := func(d decimal.Decimal) Money { return NewMoneyIn(d, c.Currency) }
	conv := func(m Money) Money { return mk(m.d.Mul(k)) }

	// Recommendations, in order: a recommendation priced after another
	// starts from that one's converted projected cost.
	projected := map[string]Money{}
	byResource := map[string]decimal.Decimal{}
	byKind := map[string]decimal.Decimal{}
	savings := decimal.Zero
	for i := range out.Recommendations {
		rec := &out.Recommendations[i]
		cur := conv(rec.CurrentMonthlyCost)
		if p, ok := projected[rec.After]; ok && rec.After != "" && r.projectedOf(rec.After).Equal(rec.CurrentMonthlyCost.d) {
			cur = p
		}
		rec.CurrentMonthlyCost = cur
		sav := conv(rec.MonthlySavings)
		// Rounding never takes a projected cost below zero, nor makes one
		// that is zero in USD a cent off: the saving gives way.
		if usdProjected := rec.ProjectedMonthlyCost.d; !usdProjected.IsNegative() {
			if usdProjected.IsZero() || sav.d.GreaterThan(cur.d) {
				sav = cur
			}
			if !rec.MonthlySavings.d.IsNegative() && sav.d.IsNegative() {
				sav = mk(decimal.Zero)
			}
		}
		rec.MonthlySavings = sav
		rec.ProjectedMonthlyCost = mk(cur.d.Sub(sav.d))
		if p := rec.Protected; p != nil {
			q := *p
			q.PotentialMonthlySavings = conv(p.PotentialMonthlySavings)
			rec.Protected = &q
		}
		projected[rec.ID] = rec.ProjectedMonthlyCost
		byResource[rec.ResourceID] = byResource[rec.ResourceID].Add(rec.MonthlySavings.d)
		byKind[rec.Kind] = byKind[rec.Kind].Add(rec.MonthlySavings.d)
		savings = savings.Add(rec.MonthlySavings.d)
	}

	current := decimal.Zero
	for i := range out.Instances {
		in := &out.Instances[i]
		if in.CurrentMonthlyCost == nil {
			continue
		}
		cur := conv(*in.CurrentMonthlyCost)
		if in.CommitmentMonthlyCost != nil {
			c := conv(*in.CommitmentMonthlyCost)
			in.CommitmentMonthlyCost = &c
		}
		sav := mk(byResource[in.ResourceID])
		opt := mk(cur.d.Sub(sav.d))
		in.CurrentMonthlyCost, in.MonthlySavings, in.OptimizedMonthlyCost = &cur, &sav, &opt
		if in.Priced {
			current = current.Add(cur.d)
		}
	}

	s := &out.Summary
	if u := s.UnusedCommitmentMonthlyCost; u != nil {
		c := conv(*u)
		s.UnusedCommitmentMonthlyCost = &c
		current = current.Add(c.d)
	}
	s.CurrentMonthlyCost = mk(current)
	s.MonthlySavings = mk(savings)
	s.OptimizedMonthlyCost = mk(current.Sub(savings))
	for kind := range s.SavingsByKind {
		s.SavingsByKind[kind] = mk(byKind[kind])
	}
	for kind, v := range byKind {
		s.SavingsByKind[kind] = mk(v)
	}
	s.SavingsPercent = NewNumber(decimal.Zero)
	if !current.IsZero() {
		s.SavingsPercent = NewNumber(savings.Mul(decimal.NewFromInt(100)).Div(current).Round(1))
	}

	out.convertSections(k, conv, mk, money.Minor(c.Currency))
	out.Currency = c.Currency
	rate := NewNumber(k)
	out.ExchangeRate = &rate
	out.ExchangeRateSource = c.Source
	out.tagCurrency()
	return out, nil
}

// projectedOf is the projected cost of the recommendation with the ID, or
// -1 when there is none.
func (r *Report) projectedOf(id string) decimal.Decimal {
	for _, rec := range r.Recommendations {
		if rec.ID == id {
			return rec.ProjectedMonthlyCost.d
		}
	}
	return decimal.NewFromInt(-1)
}

// convertSections converts the sections added in 1.1, after the
// recommendations and the summary.
func (r *Report) convertSections(k decimal.Decimal, conv func(Money) Money, mk func(decimal.Decimal) Money, unit decimal.Decimal) {
	convPtr := func(m *Money) *Money {
		if m == nil {
			return nil
		}
		v := conv(*m)
		return &v
	}
	convNum := func(n *Number) *Number {
		if n == nil {
			return nil
		}
		places := max(-n.d.Exponent(), 2)
		v := NewNumber(n.d.Mul(k).Round(places))
		return &v
	}
	if a := r.Allocation; a != nil {
		a.CurrentMonthlyCost, a.OptimizedMonthlyCost = r.Summary.CurrentMonthlyCost, r.Summary.OptimizedMonthlyCost
		if u := r.Summary.UnusedCommitmentMonthlyCost; u != nil {
			// The allocation splits the instances' costs only.
			a.CurrentMonthlyCost = Money{d: a.CurrentMonthlyCost.d.Sub(u.d), cur: a.CurrentMonthlyCost.cur}
			a.OptimizedMonthlyCost = Money{d: a.OptimizedMonthlyCost.d.Sub(u.d), cur: a.OptimizedMonthlyCost.cur}
		}
		for _, dim := range []*[]CostBucket{&a.ByTeam, &a.ByProject, &a.ByWorkloadType, &a.ByEnvironment, &a.ByProvider} {
			b := *dim
			cur, opt := make([]decimal.Decimal, len(b)), make([]decimal.Decimal, len(b))
			for i := range b {
				cur[i], opt[i] = b[i].CurrentMonthlyCost.d, b[i].OptimizedMonthlyCost.d
			}
			cur, opt = apportion(cur, k, a.CurrentMonthlyCost.d, unit), apportion(opt, k, a.OptimizedMonthlyCost.d, unit)
			for i := range b {
				b[i].CurrentMonthlyCost, b[i].OptimizedMonthlyCost = mk(cur[i]), mk(opt[i])
			}
		}
	}
	if m := r.AIMetrics; m != nil {
		f := &m.Fleet
		f.CostPerBusyGPUHour = convPtr(f.CostPerBusyGPUHour)
		f.CostPerMillionTokens, f.CostPerThousandRequests = convNum(f.CostPerMillionTokens), convNum(f.CostPerThousandRequests)
		for i := range m.Instances {
			in := &m.Instances[i]
			in.MonthlyCost, in.CostPerGPUHour, in.CostPerBusyGPUHour = convPtr(in.MonthlyCost), convPtr(in.CostPerGPUHour), convPtr(in.CostPerBusyGPUHour)
			in.CostPerMillionTokens, in.CostPerThousandRequests = convNum(in.CostPerMillionTokens), convNum(in.CostPerThousandRequests)
		}
		for i := range m.TrainingRuns {
			tr := &m.TrainingRuns[i]
			tr.MonthlyCost, tr.RunCost = conv(tr.MonthlyCost), convPtr(tr.RunCost)
		}
	}
	if a := r.TagAudit; a != nil {
		untagged := decimal.Zero
		for i := range a.Violations {
			v := &a.Violations[i]
			v.MonthlyCost = convPtr(v.MonthlyCost)
			if !v.Compliant && v.MonthlyCost != nil {
				untagged = untagged.Add(v.MonthlyCost.d)
			}
		}
		a.UntaggedMonthlyCost = mk(untagged)
		for i := range a.Tags {
			a.Tags[i].MonthlyCost = conv(a.Tags[i].MonthlyCost)
		}
	}
	if sh := r.Sharing; sh != nil {
		freed := make([]decimal.Decimal, len(sh.Groups))
		for i, g := range sh.Groups {
			freed[i] = g.FreedMonthlyCost.d
		}
		target := r.savingsOf(recommend.KindShare)
		freed = apportion(freed, k, target, unit)
		for i := range sh.Groups {
			sh.Groups[i].FreedMonthlyCost = mk(freed[i])
		}
		sh.FreedMonthlyCost = mk(target)
	}
	r.CommitmentsHeld.convert(k, conv)
	if c := r.Commitments; c != nil {
		// The groups' savings at the policy's term add up to the commitment
		// recommendations'; the other terms are converted one by one.
		var atTerm []*CommitmentTerm
		var usd []decimal.Decimal
		recommended := decimal.Zero
		for gi := range c.Groups {
			g := &c.Groups[gi]
			for ti := range g.Terms {
				t := &g.Terms[ti]
				t.CommittedMonthlyCost, t.TotalMonthlyCost = conv(t.CommittedMonthlyCost), conv(t.TotalMonthlyCost)
				if t.Term == c.Term {
					atTerm, usd = append(atTerm, t), append(usd, t.MonthlySavings.d)
				} else {
					t.MonthlySavings = conv(t.MonthlySavings)
				}
			}
		}
		for i, v := range apportion(usd, k, r.savingsOf(recommend.KindCommitment), unit) {
			atTerm[i].MonthlySavings = mk(v)
		}
		for _, g := range c.Groups {
			for _, t := range g.Terms {
				if t.Term == g.RecommendedTerm {
					recommended = recommended.Add(t.MonthlySavings.d)
				}
			}
		}
		c.RecommendedMonthlySavings = mk(recommended)
	}
}

// apportion converts parts at rate k, rounded to unit (the currency's
// minor unit), so that they add up to target: the units rounding leaves
// over go one by one to the parts rounding cut most (or, when rounding
// added too much, are taken from the parts it raised most); ties go to the
// earlier part. A part that is zero stays zero and none is taken below zero,
// so a bucket that costs nothing never shows −0.01.
func apportion(parts []decimal.Decimal, k, target, unit decimal.Decimal) []decimal.Decimal {
	out := make([]decimal.Decimal, len(parts))
	cut := make([]decimal.Decimal, len(parts))
	sum := decimal.Zero
	places := -unit.Exponent()
	for i, p := range parts {
		exact := p.Mul(k)
		out[i] = exact.Round(places)
		cut[i] = exact.Sub(out[i])
		sum = sum.Add(out[i])
	}
	left := target.Sub(sum).Div(unit).IntPart()
	if len(parts) == 0 || left == 0 {
		return out
	}
	order := make([]int, len(parts))
	for i := range order {
		order[i] = i
	}
	step := unit
	if left < 0 {
		step, left = unit.Neg(), -left
		sort.SliceStable(order, func(a, b int) bool { return cut[order[a]].LessThan(cut[order[b]]) })
	} else {
		sort.SliceStable(order, func(a, b int) bool { return cut[order[a]].GreaterThan(cut[order[b]]) })
	}
	takes := func(i int) bool {
		if parts[i].IsZero() {
			return false
		}
		next := out[i].Add(step)
		return !next.IsNegative() || parts[i].IsNegative()
	}
	for left > 0 {
		moved := false
		for _, i := range order {
			if left == 0 {
				break
			}
			if takes(i) {
				out[i] = out[i].Add(step)
				left--
				moved = true
			}
		}
		if !moved {
			break
		}
	}
	return out
}

// clone deep-copies a report through its JSON form.
func clone(r *Report) (*Report, error) {
	data, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	var out Report
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// tagCurrency marks every Money in the report with the report's currency,
// so the printers show its sign. Load calls it too.
func (r *Report) tagCurrency() {
	cur := r.Currency
	if cur == pricing.Currency {
		cur = ""
	}
	tagMoney(reflect.ValueOf(r).Elem(), cur)
}

var moneyType = reflect.TypeOf(Money{})

func tagMoney(v reflect.Value, cur string) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			tagMoney(v.Elem(), cur)
		}
	case reflect.Struct:
		if v.Type() == moneyType {
			v.Set(reflect.ValueOf(NewMoneyIn(v.Interface().(Money).d, cur)))
			return
		}
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				tagMoney(v.Field(i), cur)
			}
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			tagMoney(v.Index(i), cur)
		}
	case reflect.Map:
		if v.Type().Elem() == moneyType {
			for _, key := range v.MapKeys() {
				m := v.MapIndex(key).Interface().(Money)
				v.SetMapIndex(key, reflect.ValueOf(NewMoneyIn(m.d, cur)))
			}
		}
	}
}

// currencyCode is cur, or USD for "".
func currencyCodeOf(cur string) string {
	if cur == "" {
		return pricing.Currency
	}
	return cur
}

// currencyNote names the amounts' currency for the table's footnote.
func currencyNote(r *Report) string {
	if r.Currency == "" {
		return pricing.Currency
	}
	return r.Currency
}

// exchangeRateLine states the rate of a converted report under the table's
// headline: "Amounts in EUR at 0.92 per USD (--exchange-rate); prices in the
// evidence stay USD." It is empty for a USD report.
func exchangeRateLine(r *Report) string {
	if r.ExchangeRate == nil {
		return ""
	}
	line := fmt.Sprintf("Amounts in %s at %s per USD", r.Currency, r.ExchangeRate)
	if r.ExchangeRateSource != "" {
		line += " (" + r.ExchangeRateSource + ")"
	}
	return line + "; prices in the evidence stay USD."
}
