package governance

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/envelope"
	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// ViolationKind is what is wrong with a tag.
type ViolationKind string

// The violation kinds. Missing and invalid values make an instance
// non-compliant; a case mismatch is reported but does not.
const (
	// KindMissing: the tag is absent or its value is empty.
	KindMissing ViolationKind = "missing"
	// KindInvalidValue: the value is not one of the policy's allowed values.
	KindInvalidValue ViolationKind = "invalid-value"
	// KindCaseMismatch: the key or value differs from the policy's spelling only
	// in case or in '-', '_' and spaces ("team" for Team, "production" for
	// Production). gpufinops counts the tag, but AWS and Azure cost reports
	// show each spelling apart. Never reported on GCP, whose labels are
	// lower-case by rule.
	KindCaseMismatch ViolationKind = "case-mismatch"
)

// Violation is one problem with one tag of one instance.
type Violation struct {
	Kind ViolationKind `json:"kind"`
	// Tag is the policy's key, e.g. "Environment".
	Tag string `json:"tag"`
	// Key is the key as found on the instance, when it is there.
	Key string `json:"key,omitempty"`
	// Value is the value found, for invalid values and case mismatches.
	Value string `json:"value,omitempty"`
	// Allowed lists the values the policy allows, for invalid values.
	Allowed []string `json:"allowed,omitempty"`
	// Suggestion is a value to set, when the snapshot or the allowed values
	// point to one: the fleet's model for ModelName, its workload type for
	// WorkloadType, or the allowed value an invalid one abbreviates.
	Suggestion string `json:"suggestion,omitempty"`
	// Message says what is wrong, in a sentence.
	Message string `json:"message"`
}

// InstanceViolations is everything the audit found on one instance, with the
// monthly spend its missing or invalid tags leave unattributed. It is shaped
// to become one tagging recommendation (saving 0, action Action).
type InstanceViolations struct {
	ResourceID   string         `json:"resourceId"`
	Provider     fleet.Provider `json:"provider"`
	Account      string         `json:"account,omitempty"`
	Region       string         `json:"region"`
	InstanceType string         `json:"instanceType"`
	// MonthlyCost is the instance's current monthly cost.
	MonthlyCost Money `json:"monthlyCost"`
	Priced      bool  `json:"priced"`
	// Compliant is true when nothing is missing or invalid (case mismatches
	// only).
	Compliant bool `json:"compliant"`
	// Missing lists the tags to add, in policy order.
	Missing []string `json:"missing,omitempty"`
	// Invalid lists the tags whose values to change, in policy order.
	Invalid []string `json:"invalid,omitempty"`
	// CaseMismatch lists the tags spelt other than the policy spells them.
	CaseMismatch []string    `json:"caseMismatch,omitempty"`
	Violations   []Violation `json:"violations"`
	// Action says what to do and what it costs not to, in a sentence, e.g.
	// "Add tags Team, Project: $884.76/month is unattributed".
	Action string `json:"action"`
}

// TagSummary counts one tag's violations across the fleet.
type TagSummary struct {
	Tag          string `json:"tag"`
	Required     bool   `json:"required"`
	Missing      int    `json:"missing"`
	Invalid      int    `json:"invalid"`
	CaseMismatch int    `json:"caseMismatch"`
	// MonthlyCost is the spend of the instances where the tag is missing or
	// invalid.
	MonthlyCost Money `json:"monthlyCost"`
}

// Audit is the tag audit of a fleet.
type Audit struct {
	Policy Policy `json:"policy"`
	// InstanceCount is the number of instances audited; CompliantCount those
	// with nothing missing or invalid; UnpricedCount those without a price,
	// whose spend counts as 0.
	InstanceCount  int `json:"instanceCount"`
	CompliantCount int `json:"compliantCount"`
	UnpricedCount  int `json:"unpricedCount"`
	// MonthlyCost is the fleet's current monthly cost.
	MonthlyCost Money `json:"monthlyCost"`
	// NonCompliantMonthlyCost is the untagged spend: the monthly cost of the
	// instances with a missing or invalid tag, each instance counted once
	// however many tags it lacks.
	NonCompliantMonthlyCost Money `json:"nonCompliantMonthlyCost"`
	// CompliancePercentByInstances is CompliantCount / InstanceCount × 100 and
	// CompliancePercentBySpend the compliant share of MonthlyCost, both rounded
	// to one decimal; 100 when there is nothing to count.
	CompliancePercentByInstances float64 `json:"compliancePercentByInstances"`
	CompliancePercentBySpend     float64 `json:"compliancePercentBySpend"`
	// Tags counts the violations per tag, required tags first in policy order.
	Tags []TagSummary `json:"tags"`
	// Violations are the instances with at least one violation, costliest
	// first.
	Violations []InstanceViolations `json:"violations"`
}

// AuditTags checks every item's tags against the policy.
func AuditTags(items []Item, p Policy) Audit { return AuditTagsEach(items, p, nil) }

// AuditTagsEach is AuditTags handing each instance's violations, whole, to
// each (when not nil) before the audit keeps them: each may use the detail
// and leave the audit only what it needs (the counts and costs are taken
// before). Instances come in the items' order. Instances with the same
// findings share their Violations, Missing, Invalid and CaseMismatch: they
// are read, never written.
func AuditTagsEach(items []Item, p Policy, each func(*InstanceViolations)) Audit {
	au := newAuditor(p, len(items), each)
	ps := newPass(p, au.memo.keys)
	for i := range items {
		v := ps.read(&items[i])
		au.add(&items[i], &v)
	}
	return au.finish()
}

// auditor audits items one by one for AuditTagsEach.
type auditor struct {
	a    Audit
	each func(*InstanceViolations)
	memo *auditMemo
	// cost sums the spend where each of memo.keys is missing or invalid.
	cost       []sum
	total, bad sum
	// found holds the instances with violations in chunks, in the order
	// found, until finish sorts them by order into Audit.Violations.
	found [][]InstanceViolations
	order []violationOrder
}

// chunk is the number of instances in each of auditor.found.
const chunk = 1024

// violationOrder is what Audit.Violations are sorted by: costliest first,
// then by id, then in the order found.
type violationOrder struct {
	cost cents
	id   string
	i    int
}

func newAuditor(p Policy, n int, each func(*InstanceViolations)) *auditor {
	au := &auditor{a: Audit{Policy: p, InstanceCount: n, Tags: []TagSummary{}, Violations: []InstanceViolations{}}, each: each, memo: newAuditMemo(p)}
	// The summaries are the memo's keys: the required tags in policy order,
	// then the other tags with allowed values, once per folded spelling.
	for i, k := range au.memo.keys {
		au.a.Tags = append(au.a.Tags, TagSummary{Tag: k, Required: au.memo.required[i]})
	}
	au.cost = make([]sum, len(au.memo.keys))
	au.order = make([]violationOrder, 0, n)
	return au
}

// add audits the item v views.
func (au *auditor) add(it *Item, v *view) {
	if !it.Priced {
		au.a.UnpricedCount++
	}
	au.total.add(v.cur)
	iv, f := au.memo.auditWith(it, v.tags[:len(au.memo.keys)], v.class, v.cur)
	for j, vi := range f.violations {
		s := &au.a.Tags[f.tagIndex[j]]
		switch vi.Kind {
		case KindMissing:
			s.Missing++
		case KindInvalidValue:
			s.Invalid++
		case KindCaseMismatch:
			s.CaseMismatch++
		}
	}
	for _, k := range f.costIndex {
		au.cost[k].add(v.cur)
	}
	if iv.Compliant {
		au.a.CompliantCount++
	} else {
		au.bad.add(v.cur)
	}
	if len(iv.Violations) > 0 {
		if au.each != nil {
			au.each(&iv)
		}
		au.order = append(au.order, violationOrder{cost: orderCents(iv.MonthlyCost.Decimal), id: iv.ResourceID, i: len(au.order)})
		if len(au.found) == 0 || len(au.found[len(au.found)-1]) == chunk {
			au.found = append(au.found, make([]InstanceViolations, 0, min(chunk, au.a.InstanceCount)))
		}
		last := &au.found[len(au.found)-1]
		*last = append(*last, iv)
	}
}

// orderCents is d as cents for sorting, without rounding it: each may have
// changed an instance's cost.
func orderCents(d decimal.Decimal) cents {
	if d.IsZero() {
		return noCents
	}
	if d.Exponent() == -2 && d.Cmp(maxCents) <= 0 && d.Cmp(minCents) >= 0 {
		return cents{d: d, n: d.CoefficientInt64(), small: true}
	}
	return cents{d: d}
}

func (au *auditor) finish() Audit {
	a := &au.a
	for i := range a.Tags {
		a.Tags[i].MonthlyCost = NewMoney(au.cost[i].value())
	}
	slices.SortFunc(au.order, func(x, y violationOrder) int {
		if c := compareCents(y.cost, x.cost); c != 0 {
			return c
		}
		if c := strings.Compare(x.id, y.id); c != 0 {
			return c
		}
		return cmp.Compare(x.i, y.i)
	})
	a.Violations = make([]InstanceViolations, len(au.order))
	for k, o := range au.order {
		a.Violations[k] = au.found[o.i/chunk][o.i%chunk]
	}
	au.found = nil
	total, bad := au.total.value(), au.bad.value()
	a.MonthlyCost = NewMoney(total)
	a.NonCompliantMonthlyCost = NewMoney(bad)
	a.CompliancePercentByInstances = percent(decimal.NewFromInt(int64(a.CompliantCount)), decimal.NewFromInt(int64(a.InstanceCount)))
	a.CompliancePercentBySpend = percent(total.Sub(bad), total)
	return *a
}

// auditItem checks one item: each required tag, then the allowed values of
// tags that are present but not required.
func auditItem(it Item, p Policy) InstanceViolations { return newAuditMemo(p).audit(it) }

// auditMemo audits items against one policy, holding each distinct finding
// once: most instances of a large fleet carry the same few tag sets, and
// the findings (violations, messages, the action's sentence) are a function
// of an item's auditInputs, not of the instance.
type auditMemo struct {
	p Policy
	// keys are the policy's tags in the order they are checked, once per
	// folded spelling.
	keys []string
	// required says which of keys are required (the others have allowed
	// values only).
	required []bool
	// allowed are the allowed values of each of keys, nil for any.
	allowed [][]string
	byIn    map[string]*auditFinding
	// actions are the actions' sentences made, by finding and cost, and
	// dollarTexts the costs written, by cents.
	actions     map[actionKey]string
	dollarTexts map[int64]string
	// key and tags are audit's buffers, reused item after item.
	key  []byte
	tags []tag
}

// actionKey is what an action's sentence depends on beyond its finding.
type actionKey struct {
	f      *auditFinding
	cents  int64
	priced bool
}

// maxActions bounds auditMemo.actions and dollarTexts: each is emptied when
// full. Tests lower it.
var maxActions = 1 << 16

// auditFinding is what auditItem finds from an item's inputs.
type auditFinding struct {
	violations                     []Violation
	missing, invalid, caseMismatch []string
	// head is the action's sentence before its cost clause.
	head string
	// tagIndex is the index in the memo's keys of each violation's tag, and
	// costIndex of each missing, then each invalid, tag.
	tagIndex, costIndex []int
	// compliant: nothing is missing or invalid; attributes: a missing or
	// invalid tag is one spend is attributed to.
	compliant, attributes bool
}

func newAuditMemo(p Policy) *auditMemo {
	m := &auditMemo{p: p, byIn: map[string]*auditFinding{}, actions: map[actionKey]string{}, dollarTexts: map[int64]string{}}
	var seen []string
	add := func(k string, required bool) {
		if strings.TrimSpace(k) == "" || slices.Contains(seen, fold(k)) {
			return
		}
		seen = append(seen, fold(k))
		m.keys = append(m.keys, k)
		m.required = append(m.required, required)
		m.allowed = append(m.allowed, p.allowed(k))
	}
	for _, k := range p.RequiredTags {
		add(k, true)
	}
	for _, av := range p.AllowedValues {
		add(av.Tag, false)
	}
	return m
}

// auditInputs is everything of an item its findings depend on.
type auditInputs struct {
	lax      bool
	class    string
	workload *fleet.Workload
	// tags are the policy's keys (auditMemo.keys) as found on the item.
	tags []tag
}

// audit is auditItem, reusing the findings of an earlier item with the same
// inputs.
func (m *auditMemo) audit(it Item) InstanceViolations {
	m.tags = m.tags[:0]
	for _, k := range m.keys {
		m.tags = append(m.tags, lookup(it.Tags, k))
	}
	c := noCents
	if it.Priced {
		c = centsOf(it.MonthlyCost)
	}
	iv, _ := m.auditWith(&it, m.tags, m.p.classOf(it), c)
	return iv
}

// auditWith is audit of an item whose tags (the memo's keys as found on
// it), workload class and monthly cost are known. It returns the finding
// too.
func (m *auditMemo) auditWith(it *Item, tags []tag, class string, cost cents) (InstanceViolations, *auditFinding) {
	in := auditInputs{lax: lowerCaseLabels(it.Provider), class: class, workload: it.Workload, tags: tags}
	m.key = m.appendKey(m.key[:0], in)
	f, ok := m.byIn[string(m.key)]
	if !ok {
		f = m.find(in)
		m.byIn[string(m.key)] = f
	}
	iv := InstanceViolations{
		ResourceID:   it.ID,
		Provider:     it.Provider,
		Account:      it.Account,
		Region:       it.Region,
		InstanceType: it.InstanceType,
		Priced:       it.Priced,
		Compliant:    f.compliant,
		Violations:   f.violations,
		Missing:      f.missing,
		Invalid:      f.invalid,
		CaseMismatch: f.caseMismatch,
	}
	if it.Priced {
		iv.MonthlyCost = Money{cost.d}
	}
	iv.Action = m.action(f, iv, cost)
	return iv, f
}

// action is actionOf the finding's head for iv, which costs cost, made
// once per finding and cost.
func (m *auditMemo) action(f *auditFinding, iv InstanceViolations, cost cents) string {
	if f.head == "" || !cost.small {
		return m.actionOf(f.head, f, iv, cost)
	}
	k := actionKey{f: f, cents: cost.n, priced: iv.Priced}
	if s, ok := m.actions[k]; ok {
		return s
	}
	s := m.actionOf(f.head, f, iv, cost)
	if len(m.actions) >= maxActions {
		clear(m.actions)
	}
	m.actions[k] = s
	return s
}

// appendKey appends a key that two inputs share only when their findings
// are equal, each string prefixed by its length. A tag's value is left out
// where only its presence counts: a tag without allowed values, spelt as the
// policy spells it (or on a cloud whose labels are lower case), so that
// owners, projects and cost centres do not make each instance's key unique.
func (m *auditMemo) appendKey(b []byte, in auditInputs) []byte {
	str := func(s string) {
		b = strconv.AppendInt(b, int64(len(s)), 10)
		b = append(b, ':')
		b = append(b, s...)
	}
	flag := func(v bool) {
		if v {
			b = append(b, '1')
		} else {
			b = append(b, '0')
		}
	}
	flag(in.lax)
	str(in.class)
	flag(in.workload != nil)
	if in.workload != nil {
		str(in.workload.Model)
		str(string(in.workload.Type))
	}
	for i, t := range in.tags {
		flag(t.found)
		flag(t.exact)
		str(t.key)
		if m.allowed[i] == nil && (t.exact || in.lax) && strings.TrimSpace(t.value) != "" {
			b = append(b, 'v')
			continue
		}
		str(t.value)
	}
	return b
}

// find checks each of the policy's keys on the item the inputs came from.
func (m *auditMemo) find(in auditInputs) *auditFinding {
	p := m.p
	var iv InstanceViolations
	var tagIndex []int
	it := Item{Workload: in.workload}
	for i, key := range m.keys {
		t := in.tags[i]
		required := m.required[i]
		if !t.found || strings.TrimSpace(t.value) == "" {
			if !required || (fold(key) == fold(TagModelName) && !p.needsModelName(in.class)) {
				continue
			}
			v := Violation{Kind: KindMissing, Tag: key, Suggestion: suggestMissing(it, key, in.class)}
			switch {
			case t.found:
				v.Key = t.key
				v.Message = fmt.Sprintf("%s is set but empty", t.key)
			case fold(key) == fold(TagModelName):
				v.Message = fmt.Sprintf("%s is missing; it is required for %s workloads", key, in.class)
			default:
				v.Message = fmt.Sprintf("%s is missing", key)
			}
			if v.Suggestion != "" {
				v.Message += fmt.Sprintf(" (the snapshot suggests %s)", v.Suggestion)
			}
			iv.add(v)
			tagIndex = append(tagIndex, i)
			continue
		}
		if !t.exact && !in.lax {
			iv.add(Violation{Kind: KindCaseMismatch, Tag: key, Key: t.key, Value: t.value,
				Message: fmt.Sprintf("key %q is spelt differently from %q; cost reports list the two apart", t.key, key)})
			tagIndex = append(tagIndex, i)
		}
		allowed := m.allowed[i]
		if allowed == nil {
			continue
		}
		value := strings.TrimSpace(t.value)
		c, exact, ok := canonical(value, allowed)
		switch {
		case !ok:
			v := Violation{Kind: KindInvalidValue, Tag: key, Key: t.key, Value: t.value, Allowed: allowed,
				Suggestion: suggestValue(it, key, value, allowed)}
			v.Message = fmt.Sprintf("%s %q is not one of %s", key, t.value, strings.Join(allowed, ", "))
			if v.Suggestion != "" {
				v.Message += fmt.Sprintf(" (did you mean %s?)", v.Suggestion)
			}
			iv.add(v)
			tagIndex = append(tagIndex, i)
		case !exact && !in.lax && t.exact:
			// A misspelt key already has its note; one per tag is enough.
			iv.add(Violation{Kind: KindCaseMismatch, Tag: key, Key: t.key, Value: t.value, Suggestion: c,
				Message: fmt.Sprintf("%s %q is spelt differently from %q; cost reports list the two apart", key, t.value, c)})
			tagIndex = append(tagIndex, i)
		}
	}
	f := &auditFinding{violations: iv.Violations, missing: iv.Missing, invalid: iv.Invalid, caseMismatch: iv.CaseMismatch, head: actionHead(iv.Violations), tagIndex: tagIndex}
	if f.violations == nil {
		f.violations = []Violation{}
	}
	for j, v := range f.violations {
		if v.Kind == KindMissing {
			f.costIndex = append(f.costIndex, tagIndex[j])
		}
	}
	for j, v := range f.violations {
		if v.Kind == KindInvalidValue {
			f.costIndex = append(f.costIndex, tagIndex[j])
		}
	}
	f.compliant = len(f.missing) == 0 && len(f.invalid) == 0
	f.attributes = attributes(f.missing) || attributes(f.invalid)
	// Instances share these: an append must not write into another's.
	f.violations, f.missing, f.invalid, f.caseMismatch = slices.Clip(f.violations), slices.Clip(f.missing), slices.Clip(f.invalid), slices.Clip(f.caseMismatch)
	return f
}

func (iv *InstanceViolations) add(v Violation) {
	iv.Violations = append(iv.Violations, v)
	switch v.Kind {
	case KindMissing:
		iv.Missing = append(iv.Missing, v.Tag)
	case KindInvalidValue:
		iv.Invalid = append(iv.Invalid, v.Tag)
	case KindCaseMismatch:
		iv.CaseMismatch = append(iv.CaseMismatch, v.Tag)
	}
}

// suggestMissing proposes a value for a missing tag from the snapshot: the
// fleet's model for ModelName, its workload class for WorkloadType.
func suggestMissing(it Item, key, class string) string {
	switch fold(key) {
	case fold(TagModelName):
		if it.Workload != nil {
			return it.Workload.Model
		}
	case fold(TagWorkloadType):
		if it.Workload != nil {
			return WorkloadClass(it.Workload.Type)
		}
	}
	return ""
}

// suggestValue proposes an allowed value for an invalid one: for WorkloadType
// the class of the fleet's workload type; otherwise the one allowed value the
// given value abbreviates ("prod" → Production), if exactly one does.
func suggestValue(it Item, key, value string, allowed []string) string {
	if fold(key) == fold(TagWorkloadType) && it.Workload != nil {
		if c, _, ok := canonical(WorkloadClass(it.Workload.Type), allowed); ok {
			return c
		}
	}
	v := fold(value)
	if len(v) < 3 {
		return ""
	}
	var hits []string
	for _, a := range allowed {
		if strings.HasPrefix(fold(a), v) {
			hits = append(hits, a)
		}
	}
	if len(hits) == 1 {
		return hits[0]
	}
	return ""
}

// actionHead is the action's sentence for violations, before the clause on
// what the instance costs; "" when there is nothing to do.
func actionHead(violations []Violation) string {
	var parts []string
	var add []string
	for _, v := range violations {
		if v.Kind == KindMissing {
			if v.Suggestion != "" {
				add = append(add, v.Tag+"="+v.Suggestion)
			} else {
				add = append(add, v.Tag)
			}
		}
	}
	if len(add) == 1 {
		parts = append(parts, "Add tag "+add[0])
	} else if len(add) > 1 {
		parts = append(parts, "Add tags "+strings.Join(add, ", "))
	}
	for _, v := range violations {
		switch v.Kind {
		case KindInvalidValue:
			if v.Suggestion != "" {
				parts = append(parts, fmt.Sprintf("set %s to %s (not %q)", v.Tag, v.Suggestion, v.Value))
			} else {
				parts = append(parts, fmt.Sprintf("set %s to one of %s (not %q)", v.Tag, strings.Join(v.Allowed, ", "), v.Value))
			}
		case KindCaseMismatch:
			if v.Suggestion != "" {
				parts = append(parts, fmt.Sprintf("write %s as %s (not %q)", v.Tag, v.Suggestion, v.Value))
			} else {
				parts = append(parts, fmt.Sprintf("rename tag %s to %s", v.Key, v.Tag))
			}
		}
	}
	if len(parts) == 0 {
		return ""
	}
	s := strings.ToUpper(parts[0][:1]) + parts[0][1:]
	if len(parts) > 1 {
		s += "; " + strings.Join(parts[1:], "; ")
	}
	return s
}

// actionOf is the action's sentence: head and what iv, which costs cost a
// month, costs.
func (m *auditMemo) actionOf(s string, f *auditFinding, iv InstanceViolations, cost cents) string {
	if s == "" {
		return ""
	}
	switch {
	case iv.Compliant:
		return s + ": AWS and Azure cost reports list each spelling apart"
	case !iv.Priced:
		return s + ": its cost is unknown (no price)"
	case cost.d.IsZero():
		return s + ": it costs nothing this month (stopped)"
	case f.attributes:
		return s + ": " + m.dollars(cost) + "/month is unattributed"
	}
	return s + ": " + m.dollars(cost) + "/month carries incomplete tags"
}

// dollars is Dollars of cost, made once per amount.
func (m *auditMemo) dollars(cost cents) string {
	if !cost.small {
		return Dollars(cost.d)
	}
	if s, ok := m.dollarTexts[cost.n]; ok {
		return s
	}
	s := Dollars(cost.d)
	if len(m.dollarTexts) >= maxActions {
		clear(m.dollarTexts)
	}
	m.dollarTexts[cost.n] = s
	return s
}

// attributes says whether one of the tags is one that spend is attributed to
// (Team, Project, CostCenter).
func attributes(tags []string) bool {
	for _, t := range tags {
		switch fold(t) {
		case fold(TagTeam), fold(TagProject), fold(TagCostCenter):
			return true
		}
	}
	return false
}

// Kind and SchemaVersion head the JSON document of an audit.
const (
	Kind          = "TagsAudit"
	SchemaVersion = "1.0"
)

// Document is the JSON document of `gpufinops tags audit -o json`: the
// header, where the audit came from, then the report.
type Document struct {
	envelope.Header
	// GeneratedAt is when the audit ran (RFC 3339, UTC).
	GeneratedAt time.Time `json:"generatedAt"`
	// Currency of every amount: USD.
	Currency string `json:"currency"`
	// Fleet is the snapshot audited.
	Fleet DocumentFleet `json:"fleet"`
	Report
}

// DocumentFleet names the snapshot an audit read.
type DocumentFleet struct {
	Name   string `json:"name,omitempty"`
	Source string `json:"source"`
}

// NewDocument is r's JSON document, generated at now from the fleet named
// name read from source.
func NewDocument(r Report, now time.Time, name, source string) Document {
	return Document{
		Header:      envelope.New(Kind, SchemaVersion),
		GeneratedAt: now.UTC(),
		Currency:    "USD",
		Fleet:       DocumentFleet{Name: name, Source: source},
		Report:      r,
	}
}
