package governance

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/shopspring/decimal"
)

// The governance report as it was computed before the one-pass builders:
// decimal arithmetic item by item, a lookup per tag read. The builders must
// give the same report (TestBuildIsReference, FuzzBuildIsReference).

func refBuildEach(items []Item, p Policy, each func(*InstanceViolations)) Report {
	return Report{
		Audit:      refAuditTagsEach(items, p, each),
		Allocation: refAllocate(items, p),
		Metrics:    refComputeMetrics(items),
	}
}

func refAllocate(items []Item, p Policy) Allocation {
	cur, opt := decimal.Zero, decimal.Zero
	for _, it := range items {
		c, o := refCosts(it)
		cur, opt = cur.Add(c), opt.Add(o)
	}
	a := Allocation{MonthlyCost: NewMoney(cur), OptimizedMonthlyCost: NewMoney(opt)}
	a.ByTeam = refSplit(items, cur, func(it Item) string { return refAttribute(it, p).Team })
	a.ByProject = refSplit(items, cur, func(it Item) string { return refAttribute(it, p).Project })
	a.ByWorkloadType = refSplit(items, cur, func(it Item) string { return refAttribute(it, p).WorkloadType })
	a.ByEnvironment = refSplit(items, cur, func(it Item) string { return refAttribute(it, p).Environment })
	a.ByProvider = refSplit(items, cur, func(it Item) string { return string(it.Provider) })
	return a
}

func refCosts(it Item) (decimal.Decimal, decimal.Decimal) {
	if !it.Priced {
		return decimal.Zero, decimal.Zero
	}
	return it.MonthlyCost.Round(2), it.OptimizedCost.Round(2)
}

func refShare(part, whole decimal.Decimal) float64 {
	if whole.IsZero() {
		return 0
	}
	return percent(part, whole)
}

func refSplit(items []Item, total decimal.Decimal, key func(Item) string) []Bucket {
	type acc struct {
		// first is the group's first spelling in sorted order: its key.
		first    string
		n        int
		cur, opt decimal.Decimal
	}
	groups := map[string]*acc{}
	for _, it := range items {
		k := key(it)
		id := strings.ToLower(k)
		if k == "" {
			k, id = Untagged, "\x00untagged"
		}
		g := groups[id]
		if g == nil {
			g = &acc{first: k}
			groups[id] = g
		}
		g.first = min(g.first, k)
		g.n++
		c, o := refCosts(it)
		g.cur, g.opt = g.cur.Add(c), g.opt.Add(o)
	}
	out := make([]Bucket, 0, len(groups))
	for _, g := range groups {
		out = append(out, Bucket{
			Key:                  g.first,
			Instances:            g.n,
			MonthlyCost:          NewMoney(g.cur),
			OptimizedMonthlyCost: NewMoney(g.opt),
			SharePercent:         refShare(g.cur, total),
		})
	}
	sort.Slice(out, func(i, j int) bool {
		ui, uj := out[i].Key == Untagged, out[j].Key == Untagged
		if ui != uj {
			return uj
		}
		if !out[i].MonthlyCost.Equal(out[j].MonthlyCost.Decimal) {
			return out[i].MonthlyCost.GreaterThan(out[j].MonthlyCost.Decimal)
		}
		return out[i].Key < out[j].Key
	})
	return out
}

func refComputeMetrics(items []Item) Metrics {
	m := Metrics{Instances: make([]InstanceMetrics, 0, len(items)), TrainingRuns: []TrainingRun{}}
	var paid, measured, busy, busyCost, busyHours decimal.Decimal
	var tokens, tokenCost, pricedTokens, requests, requestCost, pricedRequests decimal.Decimal
	for _, it := range items {
		im, x := refInstanceMetrics(it)
		m.Instances = append(m.Instances, im)
		paid = paid.Add(x.paid)
		if x.busy != nil {
			measured = measured.Add(x.paid)
			busy = busy.Add(*x.busy)
			if it.Priced && x.paid.IsPositive() {
				busyCost = busyCost.Add(x.cost)
				busyHours = busyHours.Add(*x.busy)
			}
		}
		if x.tokens != nil {
			tokens = tokens.Add(*x.tokens)
			if it.Priced {
				tokenCost = tokenCost.Add(x.cost)
				pricedTokens = pricedTokens.Add(*x.tokens)
			}
		}
		if x.requests != nil {
			requests = requests.Add(*x.requests)
			if it.Priced {
				requestCost = requestCost.Add(x.cost)
				pricedRequests = pricedRequests.Add(*x.requests)
			}
		}
	}
	f := &m.Fleet
	f.PaidGPUHours, f.MeasuredGPUHours, f.BusyGPUHours = round2(paid), round2(measured), round2(busy)
	if measured.IsPositive() {
		f.EfficiencyPercent = ptr(busy.Mul(hundred).Div(measured).Round(1).InexactFloat64())
	}
	if busyHours.IsPositive() {
		f.CostPerBusyGPUHour = ptr(NewMoney(busyCost.Div(busyHours)))
	}
	f.MonthlyOutputTokens = tokens.Round(0).InexactFloat64()
	f.MonthlyRequests = requests.Round(0).InexactFloat64()
	if pricedTokens.IsPositive() {
		f.CostPerMillionTokens = ptr(NewUnitCost(tokenCost.Mul(million).Div(pricedTokens)))
	}
	if pricedRequests.IsPositive() {
		f.CostPerThousandRequests = ptr(NewUnitCost(requestCost.Mul(thousand).Div(pricedRequests)))
	}
	m.TrainingRuns = refTrainingRuns(items)
	return m
}

// exact holds an instance's figures before rounding, for the fleet's sums.
type exact struct {
	cost, paid       decimal.Decimal
	busy             *decimal.Decimal
	tokens, requests *decimal.Decimal
}

func refInstanceMetrics(it Item) (InstanceMetrics, exact) {
	cost, _ := refCosts(it)
	hours := dec(it.MonthlyHours)
	x := exact{cost: cost, paid: dec(it.GPUCount).Mul(hours)}
	im := InstanceMetrics{
		ResourceID:   it.ID,
		Model:        modelOf(it),
		GPUCount:     it.GPUCount,
		MonthlyHours: round2(hours),
		MonthlyCost:  NewMoney(cost),
		Priced:       it.Priced,
		PaidGPUHours: round2(x.paid),
		TrainingRun:  runOf(it),
	}
	if it.Priced && x.paid.IsPositive() {
		im.CostPerGPUHour = ptr(NewMoney(cost.Div(x.paid)))
	}
	if it.GPUUtilAvg != nil && x.paid.IsPositive() {
		u := *it.GPUUtilAvg
		b := dec(u).Mul(x.paid).Div(hundred)
		x.busy = &b
		im.GPUUtilAvg = ptr(u)
		im.BusyGPUHours = ptr(round2(b))
		im.EfficiencyPercent = ptr(b.Mul(hundred).Div(x.paid).Round(1).InexactFloat64())
		if it.Priced && b.IsPositive() {
			im.CostPerBusyGPUHour = ptr(NewMoney(cost.Div(b)))
		}
	}
	if w := it.Workload; w != nil && hours.IsPositive() {
		if w.TokensPerSecond > 0 {
			t := dec(w.TokensPerSecond).Mul(secondsPerHour).Mul(hours)
			x.tokens = &t
			im.TokensPerSecond = ptr(w.TokensPerSecond)
			im.MonthlyOutputTokens = ptr(t.Round(0).InexactFloat64())
			if it.Priced {
				im.CostPerMillionTokens = ptr(NewUnitCost(cost.Mul(million).Div(t)))
			}
		}
		if w.RequestsPerSecond > 0 {
			r := dec(w.RequestsPerSecond).Mul(secondsPerHour).Mul(hours)
			x.requests = &r
			im.RequestsPerSecond = ptr(w.RequestsPerSecond)
			im.MonthlyRequests = ptr(r.Round(0).InexactFloat64())
			if it.Priced {
				im.CostPerThousandRequests = ptr(NewUnitCost(cost.Mul(thousand).Div(r)))
			}
		}
	}
	return im, x
}

func refTrainingRuns(items []Item) []TrainingRun {
	byID := map[string][]Item{}
	var ids []string
	for _, it := range items {
		id := runOf(it)
		if id == "" {
			continue
		}
		if _, ok := byID[id]; !ok {
			ids = append(ids, id)
		}
		byID[id] = append(byID[id], it)
	}
	sort.Strings(ids)
	runs := make([]TrainingRun, 0, len(ids))
	for _, id := range ids {
		run := TrainingRun{ID: id, Priced: true}
		monthly := decimal.Zero
		var expected float64
		for _, it := range byID[id] {
			run.Instances = append(run.Instances, it.ID)
			run.GPUCount += it.GPUCount
			c, _ := refCosts(it)
			monthly = monthly.Add(c)
			if !it.Priced {
				run.Priced = false
			}
			if it.Workload != nil {
				expected = max(expected, it.Workload.TrainingRunHours)
			}
		}
		run.MonthlyCost = NewMoney(monthly)
		if expected > 0 {
			run.ExpectedHours = ptr(expected)
			if run.Priced {
				total := decimal.Zero
				for _, it := range byID[id] {
					h := expected
					if it.Workload != nil && it.Workload.TrainingRunHours > 0 {
						h = it.Workload.TrainingRunHours
					}
					total = total.Add(hourly(it).Mul(dec(h)))
				}
				run.RunCost = ptr(NewMoney(total))
			}
		}
		runs = append(runs, run)
	}
	return runs
}

func refAuditTagsEach(items []Item, p Policy, each func(*InstanceViolations)) Audit {
	a := Audit{Policy: p, InstanceCount: len(items), Tags: []TagSummary{}, Violations: []InstanceViolations{}}
	summaries := map[string]*TagSummary{}
	var order []string
	addSummary := func(t string, required bool) {
		if strings.TrimSpace(t) == "" {
			return
		}
		if _, ok := summaries[fold(t)]; !ok {
			summaries[fold(t)] = &TagSummary{Tag: t, Required: required}
			order = append(order, fold(t))
		}
	}
	for _, t := range p.RequiredTags {
		addSummary(t, true)
	}
	for _, av := range p.AllowedValues {
		addSummary(av.Tag, false)
	}

	total, bad := decimal.Zero, decimal.Zero
	// Most instances of a large fleet lack the same tags: their findings are
	// made and held once.
	memo := newAuditMemo(p)
	for _, it := range items {
		cost, _ := refCosts(it)
		if !it.Priced {
			a.UnpricedCount++
		}
		total = total.Add(cost)
		iv := refAudit(memo, it)
		for _, v := range iv.Violations {
			s := summaries[fold(v.Tag)]
			switch v.Kind {
			case KindMissing:
				s.Missing++
			case KindInvalidValue:
				s.Invalid++
			case KindCaseMismatch:
				s.CaseMismatch++
			}
		}
		for _, t := range append(append([]string{}, iv.Missing...), iv.Invalid...) {
			s := summaries[fold(t)]
			s.MonthlyCost = NewMoney(s.MonthlyCost.Add(cost))
		}
		if iv.Compliant {
			a.CompliantCount++
		} else {
			bad = bad.Add(cost)
		}
		if len(iv.Violations) > 0 {
			if each != nil {
				each(&iv)
			}
			a.Violations = append(a.Violations, iv)
		}
	}
	for _, k := range order {
		a.Tags = append(a.Tags, *summaries[k])
	}
	sort.SliceStable(a.Violations, func(i, j int) bool {
		ci, cj := a.Violations[i].MonthlyCost, a.Violations[j].MonthlyCost
		if !ci.Equal(cj.Decimal) {
			return ci.GreaterThan(cj.Decimal)
		}
		return a.Violations[i].ResourceID < a.Violations[j].ResourceID
	})
	a.MonthlyCost = NewMoney(total)
	a.NonCompliantMonthlyCost = NewMoney(bad)
	a.CompliancePercentByInstances = percent(decimal.NewFromInt(int64(a.CompliantCount)), decimal.NewFromInt(int64(a.InstanceCount)))
	a.CompliancePercentBySpend = percent(total.Sub(bad), total)
	return a
}

func refAudit(m *auditMemo, it Item) InstanceViolations {
	iv := InstanceViolations{
		ResourceID:   it.ID,
		Provider:     it.Provider,
		Account:      it.Account,
		Region:       it.Region,
		InstanceType: it.InstanceType,
		Priced:       it.Priced,
		Violations:   []Violation{},
	}
	if it.Priced {
		iv.MonthlyCost = NewMoney(it.MonthlyCost)
	}
	m.tags = m.tags[:0]
	for _, k := range m.keys {
		m.tags = append(m.tags, lookup(it.Tags, k))
	}
	in := auditInputs{lax: lowerCaseLabels(it.Provider), class: refClassOf(m.p, it), workload: it.Workload, tags: m.tags}
	m.key = m.appendKey(m.key[:0], in)
	f, ok := m.byIn[string(m.key)]
	if !ok {
		f = m.find(in)
		m.byIn[string(m.key)] = f
	}
	iv.Violations = append(iv.Violations, f.violations...)
	iv.Missing, iv.Invalid, iv.CaseMismatch = slices.Clone(f.missing), slices.Clone(f.invalid), slices.Clone(f.caseMismatch)
	iv.Compliant = len(iv.Missing) == 0 && len(iv.Invalid) == 0
	iv.Action = refActionOf(f.head, iv)
	return iv
}

func refActionOf(s string, iv InstanceViolations) string {
	if s == "" {
		return ""
	}
	switch {
	case iv.Compliant:
		return s + ": AWS and Azure cost reports list each spelling apart"
	case !iv.Priced:
		return s + ": its cost is unknown (no price)"
	case iv.MonthlyCost.IsZero():
		return s + ": it costs nothing this month (stopped)"
	case refAttributes(iv.Missing) || refAttributes(iv.Invalid):
		return fmt.Sprintf("%s: %s/month is unattributed", s, Dollars(iv.MonthlyCost.Decimal))
	}
	return fmt.Sprintf("%s: %s/month carries incomplete tags", s, Dollars(iv.MonthlyCost.Decimal))
}

func refAttributes(tags []string) bool {
	for _, t := range tags {
		switch fold(t) {
		case fold(TagTeam), fold(TagProject), fold(TagCostCenter):
			return true
		}
	}
	return false
}

func refAttribute(it Item, p Policy) Attribution {
	tagValue := func(key string) string {
		v := strings.TrimSpace(lookup(it.Tags, key).value)
		if allowed := p.allowed(key); allowed != nil {
			if c, _, ok := refCanonical(v, allowed); ok {
				return c
			}
		}
		return v
	}
	a := Attribution{Team: tagValue(TagTeam), Project: tagValue(TagProject), Environment: tagValue(TagEnvironment)}
	if a.WorkloadType = refClassOf(p, it); a.WorkloadType == "" {
		a.WorkloadType = strings.TrimSpace(lookup(it.Tags, TagWorkloadType).value)
	}
	return a
}

func refClassOf(p Policy, it Item) string {
	t := lookup(it.Tags, TagWorkloadType)
	value := strings.TrimSpace(t.value)
	allowed := p.allowed(TagWorkloadType)
	if value != "" && allowed != nil {
		if c, _, ok := refCanonical(value, allowed); ok {
			return c
		}
	}
	if it.Workload != nil {
		if c := WorkloadClass(it.Workload.Type); c != "" {
			return c
		}
	}
	if value != "" && allowed == nil {
		for _, c := range []string{WorkloadTraining, WorkloadInference, WorkloadFineTuning, WorkloadDevelopment} {
			if fold(value) == fold(c) {
				return c
			}
		}
		return value
	}
	return ""
}

func refCanonical(v string, allowed []string) (value string, exact, ok bool) {
	for _, a := range allowed {
		if v == a {
			return a, true, true
		}
	}
	for _, a := range allowed {
		if fold(v) == fold(a) {
			return a, false, true
		}
	}
	return "", false, false
}

// modelOf is the fleet's model name, else the ModelName tag.
func modelOf(it Item) string {
	if it.Workload != nil && strings.TrimSpace(it.Workload.Model) != "" {
		return strings.TrimSpace(it.Workload.Model)
	}
	return strings.TrimSpace(lookup(it.Tags, TagModelName).value)
}

// runOf is the fleet's training run, else the TrainingRun tag.
func runOf(it Item) string {
	if it.Workload != nil && strings.TrimSpace(it.Workload.TrainingRun) != "" {
		return strings.TrimSpace(it.Workload.TrainingRun)
	}
	return strings.TrimSpace(lookup(it.Tags, TagTrainingRun).value)
}
