// Package reportdiff compares two gpufinops reports: the change in current
// cost, optimized cost and savings, the instances added, removed and changed,
// and the recommendations new, resolved and changed. It is pure: the same two
// reports give the same Diff, in a stable order, byte for byte once printed.
//
// Like the report it computes no prices; it subtracts the reports' own
// figures, in decimal.
package reportdiff

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/envelope"
	"github.com/gpufinops/gpufinops/pkg/report"
)

// Version is the version of the diff's JSON form, "major.minor". Additive
// changes bump the minor; removals and renames bump the major.
const Version = "1.1"

// Kind names the diff's JSON document.
const Kind = "ReportDiff"

// Diff is what changed from an old report to a new one.
type Diff struct {
	// Header is the version of this JSON form ("major.minor", Version) and
	// its kind, ReportDiff, as every gpufinops document starts (since 1.1).
	envelope.Header
	// DiffVersion is the version of this JSON form, "major.minor"; the same
	// as schemaVersion, kept for readers of 1.0.
	DiffVersion string `json:"diffVersion"`
	// Currency of every amount.
	Currency string `json:"currency"`
	// Old describes the older report.
	Old Side `json:"old"`
	// New describes the newer report.
	New Side `json:"new"`
	// Summary is the change in the reports' totals.
	Summary Summary `json:"summary"`
	// Instances are the instances added, removed and changed.
	Instances Instances `json:"instances"`
	// Recommendations are the recommendations new, resolved and changed.
	Recommendations Recommendations `json:"recommendations"`
}

// Side names one of the two reports.
type Side struct {
	// File is the path the report was read from, as given.
	File string `json:"file"`
	// Fleet is the report's fleet name.
	Fleet string `json:"fleet"`
	// GeneratedAt is when the report was made (RFC 3339, UTC).
	GeneratedAt string `json:"generatedAt"`
	// SchemaVersion is the report's schema version.
	SchemaVersion string `json:"schemaVersion"`
}

// Summary is the change in the reports' totals.
type Summary struct {
	// CurrentMonthlyCost is the change in what the priced instances cost a month.
	CurrentMonthlyCost MoneyDelta `json:"currentMonthlyCost"`
	// OptimizedMonthlyCost is the change in the cost after every recommendation.
	OptimizedMonthlyCost MoneyDelta `json:"optimizedMonthlyCost"`
	// MonthlySavings is the change in the savings found.
	MonthlySavings MoneyDelta `json:"monthlySavings"`
	// SavingsPercent is the change in savings ÷ current cost, in points.
	SavingsPercent NumberDelta `json:"savingsPercent"`
	// InstanceCount is the change in the number of instances.
	InstanceCount IntDelta `json:"instanceCount"`
	// RecommendationCount is the change in the number of recommendations.
	RecommendationCount IntDelta `json:"recommendationCount"`
}

// MoneyDelta is a monthly amount in both reports and new minus old.
type MoneyDelta struct {
	Old    report.Money `json:"old"`
	New    report.Money `json:"new"`
	Change report.Money `json:"change"`
}

// NumberDelta is a number in both reports and new minus old.
type NumberDelta struct {
	Old    report.Number `json:"old"`
	New    report.Number `json:"new"`
	Change report.Number `json:"change"`
}

// IntDelta is a count in both reports and new minus old.
type IntDelta struct {
	Old    int `json:"old"`
	New    int `json:"new"`
	Change int `json:"change"`
}

// Instances are the instances added, removed and changed, each list sorted
// by resource ID, then provider.
type Instances struct {
	// Added are in the new report only.
	Added []Instance `json:"added"`
	// Removed are in the old report only.
	Removed []Instance `json:"removed"`
	// Changed are in both with a different type, lifecycle, state or cost.
	Changed []InstanceChange `json:"changed"`
}

// Instance is an instance added or removed.
type Instance struct {
	ResourceID   string `json:"resourceId"`
	Provider     string `json:"provider"`
	Region       string `json:"region"`
	InstanceType string `json:"instanceType"`
	Lifecycle    string `json:"lifecycle"`
	State        string `json:"state"`
	// CurrentMonthlyCost is absent when the instance has no price.
	CurrentMonthlyCost *report.Money `json:"currentMonthlyCost,omitempty"`
}

// InstanceChange is an instance in both reports that changed.
type InstanceChange struct {
	ResourceID string `json:"resourceId"`
	Provider   string `json:"provider"`
	Region     string `json:"region"`
	// Fields lists what changed among instanceType, lifecycle and state, in
	// that order.
	Fields []FieldChange `json:"fields"`
	// CurrentMonthlyCost is present when the cost changed and both reports
	// price the instance.
	CurrentMonthlyCost *MoneyDelta `json:"currentMonthlyCost,omitempty"`
	// Priced is present when the instance gained or lost its price.
	Priced *BoolChange `json:"priced,omitempty"`
}

// FieldChange is one field's old and new value.
type FieldChange struct {
	Field string `json:"field"`
	Old   string `json:"old"`
	New   string `json:"new"`
}

// BoolChange is a flag's old and new value.
type BoolChange struct {
	Old bool `json:"old"`
	New bool `json:"new"`
}

// Recommendations are the recommendations new, resolved and changed, each
// list sorted by ID.
type Recommendations struct {
	// New are in the new report only.
	New []Recommendation `json:"new"`
	// Resolved are in the old report only: done, or no longer worth doing.
	Resolved []Recommendation `json:"resolved"`
	// Changed are in both with a different saving, action or target.
	Changed []RecommendationChange `json:"changed"`
}

// Recommendation is a recommendation new or resolved.
type Recommendation struct {
	ID             string       `json:"id"`
	ResourceID     string       `json:"resourceId"`
	Kind           string       `json:"kind"`
	Action         string       `json:"action"`
	Target         string       `json:"target,omitempty"`
	MonthlySavings report.Money `json:"monthlySavings"`
	Confidence     string       `json:"confidence"`
}

// RecommendationChange is a recommendation in both reports that changed.
type RecommendationChange struct {
	ID         string `json:"id"`
	ResourceID string `json:"resourceId"`
	Kind       string `json:"kind"`
	// MonthlySavings is the old and new saving.
	MonthlySavings MoneyDelta `json:"monthlySavings"`
	// Fields lists what changed among action, target and confidence.
	Fields []FieldChange `json:"fields"`
}

// Compare returns what changed from old to new. oldFile and newFile name the
// reports in the result. Reports in different currencies cannot be compared.
func Compare(old, new *report.Report, oldFile, newFile string) (*Diff, error) {
	if old.Currency != new.Currency {
		return nil, fmt.Errorf("%s is in %s and %s in %s: compare reports in one currency", oldFile, old.Currency, newFile, new.Currency)
	}
	os, ns := old.Summary, new.Summary
	d := &Diff{
		Header:      envelope.New(Kind, Version),
		DiffVersion: Version,
		Currency:    new.Currency,
		Old:         side(old, oldFile),
		New:         side(new, newFile),
		Summary: Summary{
			CurrentMonthlyCost:   moneyDelta(os.CurrentMonthlyCost, ns.CurrentMonthlyCost),
			OptimizedMonthlyCost: moneyDelta(os.OptimizedMonthlyCost, ns.OptimizedMonthlyCost),
			MonthlySavings:       moneyDelta(os.MonthlySavings, ns.MonthlySavings),
			SavingsPercent: NumberDelta{Old: os.SavingsPercent, New: ns.SavingsPercent,
				Change: report.NewNumber(ns.SavingsPercent.Decimal().Sub(os.SavingsPercent.Decimal()))},
			InstanceCount:       IntDelta{os.InstanceCount, ns.InstanceCount, ns.InstanceCount - os.InstanceCount},
			RecommendationCount: IntDelta{len(old.Recommendations), len(new.Recommendations), len(new.Recommendations) - len(old.Recommendations)},
		},
		Instances:       compareInstances(old.Instances, new.Instances),
		Recommendations: compareRecommendations(old.Recommendations, new.Recommendations),
	}
	return d, nil
}

func side(r *report.Report, file string) Side {
	return Side{File: file, Fleet: r.Source.Fleet, GeneratedAt: r.GeneratedAt.UTC().Format("2006-01-02T15:04:05Z"), SchemaVersion: r.SchemaVersion}
}

func moneyDelta(old, new report.Money) MoneyDelta {
	return MoneyDelta{Old: old, New: new, Change: report.NewMoneyIn(new.Decimal().Sub(old.Decimal()), new.Currency())}
}

// instanceKey identifies an instance across reports: the same resource ID
// may exist in two clouds.
type instanceKey struct{ provider, id string }

func compareInstances(old, new []report.Instance) Instances {
	out := Instances{Added: []Instance{}, Removed: []Instance{}, Changed: []InstanceChange{}}
	oldBy := map[instanceKey]report.Instance{}
	for _, in := range old {
		oldBy[instanceKey{in.Provider, in.ResourceID}] = in
	}
	seen := map[instanceKey]bool{}
	for _, n := range new {
		k := instanceKey{n.Provider, n.ResourceID}
		seen[k] = true
		o, ok := oldBy[k]
		if !ok {
			out.Added = append(out.Added, instance(n))
			continue
		}
		if c, changed := compareInstance(o, n); changed {
			out.Changed = append(out.Changed, c)
		}
	}
	for _, o := range old {
		if !seen[instanceKey{o.Provider, o.ResourceID}] {
			out.Removed = append(out.Removed, instance(o))
		}
	}
	byID := func(a, b Instance) int {
		return cmp.Or(cmp.Compare(a.ResourceID, b.ResourceID), cmp.Compare(a.Provider, b.Provider))
	}
	slices.SortStableFunc(out.Added, byID)
	slices.SortStableFunc(out.Removed, byID)
	slices.SortStableFunc(out.Changed, func(a, b InstanceChange) int {
		return cmp.Or(cmp.Compare(a.ResourceID, b.ResourceID), cmp.Compare(a.Provider, b.Provider))
	})
	return out
}

func instance(in report.Instance) Instance {
	return Instance{
		ResourceID: in.ResourceID, Provider: in.Provider, Region: in.Region, InstanceType: in.InstanceType,
		Lifecycle: in.Lifecycle, State: in.State, CurrentMonthlyCost: in.CurrentMonthlyCost,
	}
}

func compareInstance(o, n report.Instance) (InstanceChange, bool) {
	c := InstanceChange{ResourceID: n.ResourceID, Provider: n.Provider, Region: n.Region, Fields: []FieldChange{}}
	c.Fields = appendField(c.Fields, "region", o.Region, n.Region)
	c.Fields = appendField(c.Fields, "instanceType", o.InstanceType, n.InstanceType)
	c.Fields = appendField(c.Fields, "lifecycle", o.Lifecycle, n.Lifecycle)
	c.Fields = appendField(c.Fields, "state", o.State, n.State)
	switch {
	case o.Priced != n.Priced:
		c.Priced = &BoolChange{Old: o.Priced, New: n.Priced}
	case o.CurrentMonthlyCost != nil && n.CurrentMonthlyCost != nil &&
		!o.CurrentMonthlyCost.Decimal().Equal(n.CurrentMonthlyCost.Decimal()):
		d := moneyDelta(*o.CurrentMonthlyCost, *n.CurrentMonthlyCost)
		c.CurrentMonthlyCost = &d
	}
	return c, len(c.Fields) > 0 || c.Priced != nil || c.CurrentMonthlyCost != nil
}

func appendField(fs []FieldChange, name, old, new string) []FieldChange {
	if old == new {
		return fs
	}
	return append(fs, FieldChange{Field: name, Old: old, New: new})
}

func compareRecommendations(old, new []report.Recommendation) Recommendations {
	out := Recommendations{New: []Recommendation{}, Resolved: []Recommendation{}, Changed: []RecommendationChange{}}
	oldBy := map[string]report.Recommendation{}
	for _, r := range old {
		oldBy[r.ID] = r
	}
	seen := map[string]bool{}
	for _, n := range new {
		seen[n.ID] = true
		o, ok := oldBy[n.ID]
		if !ok {
			out.New = append(out.New, recommendation(n))
			continue
		}
		c := RecommendationChange{ID: n.ID, ResourceID: n.ResourceID, Kind: n.Kind,
			MonthlySavings: moneyDelta(o.MonthlySavings, n.MonthlySavings), Fields: []FieldChange{}}
		c.Fields = appendField(c.Fields, "action", o.Action, n.Action)
		c.Fields = appendField(c.Fields, "target", o.Target, n.Target)
		c.Fields = appendField(c.Fields, "confidence", o.Confidence, n.Confidence)
		if len(c.Fields) > 0 || !c.MonthlySavings.Change.Decimal().IsZero() {
			out.Changed = append(out.Changed, c)
		}
	}
	for _, o := range old {
		if !seen[o.ID] {
			out.Resolved = append(out.Resolved, recommendation(o))
		}
	}
	slices.SortStableFunc(out.New, func(a, b Recommendation) int { return cmp.Compare(a.ID, b.ID) })
	slices.SortStableFunc(out.Resolved, func(a, b Recommendation) int { return cmp.Compare(a.ID, b.ID) })
	slices.SortStableFunc(out.Changed, func(a, b RecommendationChange) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

func recommendation(r report.Recommendation) Recommendation {
	return Recommendation{ID: r.ID, ResourceID: r.ResourceID, Kind: r.Kind, Action: r.Action, Target: r.Target,
		MonthlySavings: r.MonthlySavings, Confidence: r.Confidence}
}

// sum adds the recommendations' savings.
func sum(recs []Recommendation) report.Money {
	total, cur := decimal.Zero, ""
	for _, r := range recs {
		total, cur = total.Add(r.MonthlySavings.Decimal()), r.MonthlySavings.Currency()
	}
	return report.NewMoneyIn(total, cur)
}
